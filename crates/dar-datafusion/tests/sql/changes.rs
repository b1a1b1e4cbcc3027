//! `table_changes('uri', start [, end])`: the change data feed of every
//! kernel CDF table in SQL, row for row against `dar-scan` (whose rows its
//! own tests pin exactly), pushdown of filters on the change columns and
//! the table's, projection, and the refusals.

use arrow_array::RecordBatch;
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use dar_scan::ChangeBound;
use datafusion::prelude::SessionContext;

/// Sorted rows as text (columns in order, `_commit_timestamp` left out
/// by the queries).
fn rows(batches: &[RecordBatch]) -> Vec<String> {
    let opts = FormatOptions::default().with_null("NULL");
    let mut out = Vec::new();
    for b in batches {
        let fmts: Vec<ArrayFormatter<'_>> = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &opts).unwrap())
            .collect();
        for r in 0..b.num_rows() {
            let cells: Vec<String> = fmts.iter().map(|f| f.value(r).to_string()).collect();
            out.push(cells.join("|"));
        }
    }
    out.sort();
    out
}

fn context() -> SessionContext {
    let ctx = SessionContext::new();
    dar_datafusion::register_dar(&ctx);
    ctx
}

async fn query(ctx: &SessionContext, sql: &str) -> datafusion::common::Result<Vec<RecordBatch>> {
    ctx.sql(sql).await?.collect().await
}

const RANGES: &[(&str, u64, Option<u64>)] = &[
    ("cdf-table", 0, None),
    ("cdf-table-simple", 0, Some(2)),
    ("cdf-table-partitioned", 0, Some(2)),
    ("cdf-table-non-partitioned", 0, None),
    ("cdf-table-update-ops", 0, Some(2)),
    ("cdf-table-data-change", 0, Some(1)),
    ("cdf-table-delete-unconditional", 0, None),
    ("cdf-table-delete-conditional-all-rows", 0, None),
    ("cdf-table-delete-conditional-two-rows", 0, None),
    ("cdf-table-with-dv", 0, None),
    ("cdf-table-with-cdc-and-dvs", 0, None),
    ("cdf-table-backtick-column-names", 0, None),
    ("cdf-column-mapping-id-mode", 1, None),
    ("cdf-column-mapping-name-mode", 1, None),
    ("cdf-column-mapping-name-mode-3-7", 1, None),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kernel_cdf_table_gives_the_library_rows() {
    let ctx = context();
    for (name, start, end) in RANGES {
        let Some(path) = dar_testdata::table(&format!("kernel/{name}")) else {
            return;
        };
        let uri = path.display();
        let end_arg = end.map(|e| format!(", {e}")).unwrap_or_default();
        let table = dar_scan::Table::open(&uri.to_string()).await.unwrap();
        let plan = table
            .changes(ChangeBound::Version(*start), end.map(ChangeBound::Version))
            .build()
            .await
            .unwrap();
        let columns: Vec<String> = plan
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .filter(|n| n != "_commit_timestamp")
            .map(|n| format!("\"{n}\""))
            .collect();
        let sql = format!(
            "SELECT {} FROM table_changes('{uri}', {start}{end_arg})",
            columns.join(", ")
        );
        let got = query(&ctx, &sql).await.unwrap();
        let want: Vec<RecordBatch> = plan
            .collect()
            .await
            .unwrap()
            .iter()
            .map(|b| {
                let keep: Vec<usize> = (0..b.num_columns())
                    .filter(|i| b.schema().field(*i).name() != "_commit_timestamp")
                    .collect();
                b.project(&keep).unwrap()
            })
            .collect();
        assert!(!want.is_empty(), "{name}");
        assert_eq!(rows(&got), rows(&want), "{sql}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_on_change_columns_are_pushed_down_and_exact() {
    let Some(path) = dar_testdata::table("kernel/cdf-table") else {
        return;
    };
    let ctx = context();
    let uri = path.display();
    let sql = format!(
        "SELECT id, _change_type, _commit_version FROM table_changes('{uri}', 0) \
         WHERE _commit_version = 2 AND _change_type = 'update_postimage'"
    );
    assert_eq!(
        rows(&query(&ctx, &sql).await.unwrap()),
        [
            "5|update_postimage|2",
            "6|update_postimage|2",
            "7|update_postimage|2"
        ]
    );
    // The version conjunct prunes files in the scan, with no FilterExec.
    let plan = query(&ctx, &format!("EXPLAIN {sql}")).await.unwrap();
    let text = arrow_cast::pretty::pretty_format_batches(&plan)
        .unwrap()
        .to_string();
    assert!(text.contains("DeltaScanExec"), "{text}");
    assert!(text.contains("17 pruned"), "{text}");
    assert!(!text.contains("FilterExec"), "{text}");
    // A time range by timestamps, end before start refused.
    let t = "2000-01-01T00:00:00Z";
    let sql = format!("SELECT count(*) FROM table_changes('{uri}', '{t}')");
    let n = query(&ctx, &sql).await.unwrap();
    assert_eq!(rows(&n), ["23"]);
    // The change columns are never null and typed as documented.
    let sql = format!("SELECT * FROM table_changes('{uri}', 1, 1) LIMIT 1");
    let batches = query(&ctx, &sql).await.unwrap();
    let schema = batches[0].schema();
    let types: Vec<String> = schema
        .fields()
        .iter()
        .skip(3)
        .map(|f| f.data_type().to_string())
        .collect();
    assert_eq!(types[1], "Int64");
    assert!(types[2].starts_with("Timestamp(µs"), "{types:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_and_bad_arguments() {
    let (Some(cdf), Some(simple)) = (
        dar_testdata::table("kernel/table-with-cdf"),
        dar_testdata::table("kernel/cdf-table-simple"),
    ) else {
        return;
    };
    let ctx = context();
    let cases = [
        (
            format!("SELECT * FROM table_changes('{}', 0, 2)", cdf.display()),
            "change data feed is not enabled at version 2",
        ),
        (
            format!("SELECT * FROM table_changes('{}', 3, 4)", cdf.display()),
            "column 'id' becomes non-nullable",
        ),
        (
            format!("SELECT * FROM table_changes('{}', 1, 0)", simple.display()),
            "start version 1 is after end version 0",
        ),
        (
            format!("SELECT * FROM table_changes('{}')", simple.display()),
            "takes 2 or 3 arguments, got 1",
        ),
        (
            format!("SELECT * FROM table_changes('{}', 1.5)", simple.display()),
            "the start must be a version",
        ),
        (
            format!(
                "SELECT * FROM table_changes('{}', 'soon')",
                simple.display()
            ),
            "neither RFC 3339",
        ),
    ];
    for (sql, message) in cases {
        let err = match query(&ctx, &sql).await {
            Ok(_) => panic!("{sql} succeeded"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains(message), "{sql}: {err}");
    }
}

fn find_scan(
    plan: &std::sync::Arc<dyn datafusion::physical_plan::ExecutionPlan>,
) -> Option<std::sync::Arc<dyn datafusion::physical_plan::ExecutionPlan>> {
    if plan.name() == "DeltaScanExec" {
        return Some(std::sync::Arc::clone(plan));
    }
    plan.children().into_iter().find_map(find_scan)
}

/// A change feed's `DeltaScanExec` as bytes (what dar-distributed ships to
/// workers): decoded with a store of its own, and split in two, it gives
/// the planner's rows, DV pairs and cdc files included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn encoded_change_scans_run_elsewhere_and_split() {
    use datafusion::physical_plan::collect;
    let Some(path) = dar_testdata::table("kernel/cdf-table-with-cdc-and-dvs") else {
        return;
    };
    let ctx = SessionContext::new_with_config(
        datafusion::prelude::SessionConfig::new().with_target_partitions(3),
    );
    dar_datafusion::register_dar(&ctx);
    let sql = format!(
        "SELECT id, comment, _change_type, _commit_version FROM table_changes('{}', 0)",
        path.display()
    );
    let plan = ctx
        .sql(&sql)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let expected = rows(
        &collect(std::sync::Arc::clone(&plan), ctx.task_ctx())
            .await
            .unwrap(),
    );
    assert_eq!(expected.len(), 43);
    let scan = find_scan(&plan).unwrap();
    let scan = scan
        .downcast_ref::<dar_datafusion::DeltaScanExec>()
        .unwrap();
    let bytes = scan.encode().unwrap();
    let decoded = dar_datafusion::DeltaScanExec::decode(&bytes, |spec| {
        let store =
            dar_io::TableStore::open(spec.table_uri(), dar_io::StorageOptions::new()).unwrap();
        Ok(dar_scan::ScanRuntime::new(store))
    })
    .unwrap();
    let got = collect(
        std::sync::Arc::new(decoded),
        SessionContext::new().task_ctx(),
    )
    .await
    .unwrap();
    assert_eq!(rows(&got), expected);
    let mut parts = Vec::new();
    for part in scan.split(2) {
        parts.extend(
            collect(std::sync::Arc::new(part), ctx.task_ctx())
                .await
                .unwrap(),
        );
    }
    assert_eq!(rows(&parts), expected);
}

/// `(version, _commit_timestamp in ms)` of every row, sorted.
fn commit_times(batches: &[RecordBatch]) -> Vec<(u64, i64)> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Int64Type, TimestampMicrosecondType};
    let mut out = Vec::new();
    for b in batches {
        let versions = b["_commit_version"].as_primitive::<Int64Type>();
        let times = b["_commit_timestamp"].as_primitive::<TimestampMicrosecondType>();
        for i in 0..b.num_rows() {
            out.push((versions.value(i) as u64, times.value(i) / 1000));
        }
    }
    out.sort();
    out
}

/// In-commit timestamps switched on at version 3 and off at 8: SQL gives
/// each commit the kind of timestamp in force at it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_commit_has_its_own_kind_of_timestamp() {
    let dir = tempfile::tempdir().unwrap();
    let expected = dar_testkit::write_ict_toggled_table(dir.path()).unwrap();
    let ctx = context();
    let uri = dir.path().display();
    for (start, end) in [(0, 9), (3, 8), (6, 9)] {
        let sql = format!(
            "SELECT _commit_version, _commit_timestamp FROM table_changes('{uri}', {start}, {end})"
        );
        let want: Vec<(u64, i64)> = expected
            .iter()
            .copied()
            .filter(|(v, _)| (start..=end).contains(v))
            .collect();
        assert_eq!(
            commit_times(&query(&ctx, &sql).await.unwrap()),
            want,
            "{sql}"
        );
    }
}

/// A change feed registered in SQL (a provider, or a view over
/// `table_changes`) keeps the versions its range resolved to: a commit
/// that widens a column afterwards changes neither its rows nor its
/// schema (an end resolved anew at each plan read the widened version
/// under the schema declared before).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registered_feed_keeps_its_range_and_schema() {
    use std::sync::Arc;

    use arrow_array::{Int32Array, Int64Array};
    use arrow_schema::{DataType, Field, Schema};
    use dar_testkit::HandTable;
    use dar_testkit::log_json::{
        add_file, cdf_and_widening_on, fields, id_field, metadata, protocol_with, widened_field,
    };

    let dir = tempfile::tempdir().unwrap();
    let mut t = HandTable::new(dir.path()).unwrap();
    let ints = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("id", DataType::Int32, true)])),
        vec![Arc::new(Int32Array::from(vec![1, 2]))],
    )
    .unwrap();
    let a = t.write_parquet("a.parquet", &ints).unwrap();
    t.commit(&[
        protocol_with(&["typeWidening"]),
        metadata(id_field(), &[], cdf_and_widening_on()),
        add_file("a.parquet", a),
    ])
    .unwrap();
    let ctx = context();
    let uri = dir.path().display().to_string();
    let table = dar_scan::Table::open(&uri).await.unwrap();
    let provider = dar_datafusion::DeltaTableProvider::changes(
        table,
        ChangeBound::Version(0),
        None,
        Default::default(),
    )
    .await
    .unwrap();
    ctx.register_table("feed", Arc::new(provider)).unwrap();
    query(
        &ctx,
        &format!("CREATE VIEW feed_view AS SELECT * FROM table_changes('{uri}', 0)"),
    )
    .await
    .unwrap();
    let read = |name: &'static str| {
        let ctx = ctx.clone();
        async move {
            let batches = query(
                &ctx,
                &format!("SELECT id, _change_type, _commit_version FROM {name}"),
            )
            .await
            .unwrap();
            for b in &batches {
                assert_eq!(b.schema().field(0).data_type(), &DataType::Int32, "{name}");
            }
            rows(&batches)
        }
    };
    let before = ["1|insert|0", "2|insert|0"];
    assert_eq!(read("feed").await, before);
    assert_eq!(read("feed_view").await, before);
    // `id` widened to long, then a file of longs.
    t.commit(&[metadata(
        fields([widened_field("id", "integer", "long")]),
        &[],
        cdf_and_widening_on(),
    )])
    .unwrap();
    let longs = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)])),
        vec![Arc::new(Int64Array::from(vec![5_000_000_000]))],
    )
    .unwrap();
    let b = t.write_parquet("b.parquet", &longs).unwrap();
    t.commit(&[add_file("b.parquet", b)]).unwrap();
    assert_eq!(read("feed").await, before);
    assert_eq!(read("feed_view").await, before);
    // A new call of the function reads the new range, widened.
    let now = query(
        &ctx,
        &format!("SELECT id, _commit_version FROM table_changes('{uri}', 0)"),
    )
    .await
    .unwrap();
    assert_eq!(now[0].schema().field(0).data_type(), &DataType::Int64);
    assert_eq!(rows(&now), ["1|0", "2|0", "5000000000|2"]);
}
