//! The workloads of the benchmark plan (`../shared/docs/benchmarks.md`):
//! which table, which columns, which filter, which limit, and on which
//! storage each runs.

use serde::{Deserialize, Serialize};

/// What a reader does with the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Read rows (projection, filter, limit) into Arrow batches.
    Scan,
    /// Load the latest snapshot and list its active files with their
    /// `numRecords`.
    Files,
    /// Read the change data feed from a version to the latest.
    Changes,
    /// Load the latest snapshot and count its files and rows from the log
    /// (`numRecords` minus deletion-vector cardinalities), as `dar info`
    /// does: one row, `files` and `rows`.
    Count,
    /// Load the latest snapshot and plan a scan with the case's filter
    /// without reading data: one row, `files`, the files the plan keeps
    /// (pruned by the log's statistics).
    Plan,
}

/// One measured case: a workload on one table.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Case {
    /// `W5.grouped`.
    pub id: String,
    /// The fixture table it reads (a name in the manifest).
    pub table: String,
    /// Scan or list files.
    pub action: Action,
    /// Projected columns (logical names).
    pub columns: Vec<String>,
    /// SQL filter text every reader understands, or none.
    pub filter: Option<String>,
    /// Row limit.
    pub limit: Option<usize>,
    /// Whether the case also runs over S3 (W3-W5, W7).
    pub on_s3: bool,
    /// The first version of a change feed read ([`Action::Changes`]).
    pub changes_from: Option<u64>,
}

/// The W5 predicate (TPC-H Q6-like point lookup, about 90 rows at SF1).
pub const W5_FILTER: &str =
    "l_shipdate = DATE '1995-03-15' AND l_shipmode = 'AIR' AND l_linenumber IN (1)";

/// Columns W1 reads of its big table (28 of 40).
pub fn w1_columns() -> Vec<String> {
    (0..28).map(|i| format!("c{i:02}")).collect()
}

/// The W8 plan filter on a table of `files` files at its checkpoint (4 ids
/// a file, ascending): the ids of 0.1% of the files (at least one), from
/// the middle of the table.
pub fn w8_plan_filter(files: usize) -> String {
    let (lo, span) = (2 * files, 4 * (files / 1000).max(1));
    format!("id BETWEEN {lo} AND {}", lo + span - 1)
}

/// Every case, in plan order; `w6_300k` says whether the shared
/// `300k-add-files-100-col-partitioned` table is available, `sizes` the
/// scale's sizes (the W8 plan filters follow the tables' files).
pub fn cases(w6_300k: bool, sizes: &crate::scale::Sizes) -> Vec<Case> {
    let scan = |id: &str, table: &str, columns: Vec<String>| Case {
        id: id.into(),
        table: table.into(),
        action: Action::Scan,
        columns,
        filter: None,
        limit: None,
        on_s3: false,
        changes_from: None,
    };
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let w5_columns = crate::fixtures::w5_read_columns();
    let mut out = vec![
        scan("W1.big", "w1_big", w1_columns()),
        scan("W1.ref", "w1_ref", crate::fixtures::w1_ref_columns()),
        scan(
            "W2",
            "w2_text",
            names(&["id", "prose", "code", "meta", "title", "notes"]),
        ),
        Case {
            limit: Some(1),
            on_s3: true,
            ..scan("W3", "dv", names(&["id", "value"]))
        },
        Case {
            on_s3: true,
            ..scan("W4", "dv", names(&["id", "value"]))
        },
    ];
    for (id, table) in [
        ("W5.grouped", "w5_grouped"),
        ("W5.scattered", "w5_scattered"),
        ("W5.grouped-dv", "w5_grouped_dv"),
    ] {
        out.push(Case {
            filter: Some(W5_FILTER.into()),
            on_s3: true,
            ..scan(id, table, w5_columns.clone())
        });
    }
    let files = |id: &str, table: &str| Case {
        action: Action::Files,
        ..scan(id, table, names(&["num_records"]))
    };
    out.push(files("W6.checkpoint", "w6_checkpoint"));
    if w6_300k {
        out.push(files("W6.300k", "w6_300k"));
    }
    // Metadata at scale: log-only tables (no data files).
    // Counting also runs over S3: opening a table is what its latency hurts.
    let count = |id: &str, table: &str| Case {
        action: Action::Count,
        on_s3: true,
        ..scan(id, table, names(&["files", "rows"]))
    };
    for (shape, size) in crate::fixtures::W8Shape::tables() {
        let (id, table) = (shape.case(size), shape.table(size));
        out.push(files(&id, &table));
        out.push(count(&format!("{id}.count"), &table));
        out.push(Case {
            action: Action::Plan,
            filter: Some(w8_plan_filter(crate::fixtures::W8Shape::files(sizes, size))),
            ..scan(&format!("{id}.plan"), &table, names(&["files"]))
        });
    }
    // Every change of the table's history, version 0 on.
    out.push(Case {
        action: Action::Changes,
        on_s3: true,
        changes_from: Some(0),
        ..scan("W7", "w7_changes", crate::fixtures::w7_read_columns())
    });
    out
}

/// The workload id of a case (`W5` for `W5.grouped`).
pub fn workload_of(case_id: &str) -> &str {
    case_id.split('.').next().unwrap_or(case_id)
}

/// 1995-03-15, the W5 ship date, as days since the epoch.
pub const W5_DATE: i32 = 9_204;

/// The rows of `batch` that match [`W5_FILTER`] (it needs `l_shipdate`,
/// `l_shipmode` and `l_linenumber`, in any order, among its columns): the
/// one evaluation the fixtures, the arrow-rs floor and the network floor
/// share.
pub fn w5_matches(
    batch: &arrow_array::RecordBatch,
) -> Result<arrow_array::BooleanArray, arrow_schema::ArrowError> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Date32Type, Int32Type};
    let col = |name: &str| {
        batch.column_by_name(name).ok_or_else(|| {
            arrow_schema::ArrowError::SchemaError(format!("W5 filter: no column {name}"))
        })
    };
    let wrong = |name: &str| {
        arrow_schema::ArrowError::SchemaError(format!("W5 filter: {name} has an unexpected type"))
    };
    let date = col("l_shipdate")?
        .as_primitive_opt::<Date32Type>()
        .ok_or_else(|| wrong("l_shipdate"))?;
    let line = col("l_linenumber")?
        .as_primitive_opt::<Int32Type>()
        .ok_or_else(|| wrong("l_linenumber"))?;
    let mode = col("l_shipmode")?
        .as_string_opt::<i32>()
        .ok_or_else(|| wrong("l_shipmode"))?;
    Ok((0..batch.num_rows())
        .map(|i| Some(date.value(i) == W5_DATE && line.value(i) == 1 && mode.value(i) == "AIR"))
        .collect())
}
