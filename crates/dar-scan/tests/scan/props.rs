//! Randomized equivalence: random tables from dar-testkit (partitions, DVs,
//! nulls, several files and row groups, small pages, column mapping) with
//! random predicates and projections. dar's result must equal a
//! brute-force reference that reads every live Parquet file with arrow-rs,
//! drops the DV's rows, and evaluates the predicate row by row with its own
//! three-valued logic.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use dar_io::TableStore;
use dar_scan::{Table, TableOptions};
use dar_testkit::{ColumnMappingMode, DvStorage, ParquetOptions, TableWriter};
use futures::TryStreamExt;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use proptest::prelude::*;

/// One row of the reference: id, x, s, p (all nullable).
#[derive(Debug, Clone, PartialEq)]
struct Row {
    id: Option<i64>,
    x: Option<i32>,
    s: Option<String>,
    p: Option<String>,
}

#[derive(Debug, Clone)]
enum Pred {
    XLt(i32),
    XEq(i32),
    XNull(bool),
    XBetween(i32, i32),
    IdGt(i64),
    SEq(String),
    SGe(String),
    PEq(String),
    PNull(bool),
    And(Box<Pred>, Box<Pred>),
    Or(Box<Pred>, Box<Pred>),
    Not(Box<Pred>),
}

impl Pred {
    fn sql(&self) -> String {
        match self {
            Pred::XLt(v) => format!("x < {v}"),
            Pred::XEq(v) => format!("x = {v}"),
            Pred::XNull(neg) => format!("x IS {}NULL", if *neg { "NOT " } else { "" }),
            Pred::XBetween(a, b) => format!("x BETWEEN {a} AND {b}"),
            Pred::IdGt(v) => format!("id > {v}"),
            Pred::SEq(v) => format!("s = '{v}'"),
            Pred::SGe(v) => format!("s >= '{v}'"),
            Pred::PEq(v) => format!("p = '{v}'"),
            Pred::PNull(neg) => format!("p IS {}NULL", if *neg { "NOT " } else { "" }),
            Pred::And(a, b) => format!("({}) AND ({})", a.sql(), b.sql()),
            Pred::Or(a, b) => format!("({}) OR ({})", a.sql(), b.sql()),
            Pred::Not(a) => format!("NOT ({})", a.sql()),
        }
    }

    /// SQL three-valued logic, `None` = unknown.
    fn eval(&self, r: &Row) -> Option<bool> {
        match self {
            Pred::XLt(v) => r.x.map(|x| x < *v),
            Pred::XEq(v) => r.x.map(|x| x == *v),
            Pred::XNull(neg) => Some(r.x.is_none() != *neg),
            Pred::XBetween(a, b) => r.x.map(|x| *a <= x && x <= *b),
            Pred::IdGt(v) => r.id.map(|id| id > *v),
            Pred::SEq(v) => r.s.as_ref().map(|s| s == v),
            Pred::SGe(v) => r.s.as_ref().map(|s| s.as_str() >= v.as_str()),
            Pred::PEq(v) => r.p.as_ref().map(|p| p == v),
            Pred::PNull(neg) => Some(r.p.is_none() != *neg),
            Pred::And(a, b) => match (a.eval(r), b.eval(r)) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
            Pred::Or(a, b) => match (a.eval(r), b.eval(r)) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            },
            Pred::Not(a) => a.eval(r).map(|v| !v),
        }
    }
}

fn leaf() -> impl Strategy<Value = Pred> {
    let word = prop::sample::select(vec!["a", "b", "c", "d"]).prop_map(str::to_string);
    prop_oneof![
        (-5i32..25).prop_map(Pred::XLt),
        (-5i32..25).prop_map(Pred::XEq),
        any::<bool>().prop_map(Pred::XNull),
        (-5i32..25, -5i32..25).prop_map(|(a, b)| Pred::XBetween(a.min(b), a.max(b))),
        (-10i64..300).prop_map(Pred::IdGt),
        word.clone().prop_map(Pred::SEq),
        word.clone().prop_map(Pred::SGe),
        prop::sample::select(vec!["p0", "p1", "p2"]).prop_map(|s| Pred::PEq(s.to_string())),
        any::<bool>().prop_map(Pred::PNull),
    ]
}

fn predicate() -> impl Strategy<Value = Pred> {
    leaf().prop_recursive(2, 6, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Pred::And(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Pred::Or(Box::new(a), Box::new(b))),
            inner.prop_map(|a| Pred::Not(Box::new(a))),
        ]
    })
}

#[derive(Debug, Clone)]
struct Spec {
    partitioned: bool,
    mapping: u8,
    row_group_rows: usize,
    page_rows: usize,
    page_index: bool,
    /// Rows per append (one commit each).
    appends: Vec<Vec<Row>>,
    /// (file index, row indexes to delete, inline?).
    deletes: Vec<(usize, Vec<u64>, bool)>,
    predicate: Option<Pred>,
    /// Subset of ["id", "x", "s", "p"] in a random order.
    columns: Vec<&'static str>,
    checkpoint: bool,
}

fn row() -> impl Strategy<Value = Row> {
    let opt_word = prop::option::weighted(0.8, prop::sample::select(vec!["a", "b", "c", "d", "e"]));
    let opt_p = prop::option::weighted(0.8, prop::sample::select(vec!["p0", "p1", "p2"]));
    (
        prop::option::weighted(0.9, 0i64..300),
        prop::option::weighted(0.7, -5i32..25),
        opt_word,
        opt_p,
    )
        .prop_map(|(id, x, s, p)| Row {
            id,
            x,
            s: s.map(str::to_string),
            p: p.map(str::to_string),
        })
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        any::<bool>(),
        0u8..3,
        3usize..40,
        1usize..8,
        any::<bool>(),
        prop::collection::vec(prop::collection::vec(row(), 1..60), 1..4),
        prop::collection::vec(
            (
                0usize..8,
                prop::collection::vec(0u64..60, 1..6),
                any::<bool>(),
            ),
            0..3,
        ),
        prop::option::weighted(0.8, predicate()),
        prop::sample::subsequence(vec!["id", "x", "s", "p"], 0..=4).prop_shuffle(),
        any::<bool>(),
    )
        .prop_map(
            |(
                partitioned,
                mapping,
                row_group_rows,
                page_rows,
                page_index,
                appends,
                deletes,
                predicate,
                columns,
                checkpoint,
            )| Spec {
                partitioned,
                mapping,
                row_group_rows,
                page_rows,
                page_index,
                appends,
                deletes,
                predicate,
                columns,
                checkpoint,
            },
        )
}

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("x", DataType::Int32, true),
        Field::new("s", DataType::Utf8, true),
        Field::new("p", DataType::Utf8, true),
    ]))
}

fn batch_of(rows: &[Row]) -> RecordBatch {
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(
                rows.iter().map(|r| r.id).collect::<Vec<_>>(),
            )),
            Arc::new(Int32Array::from(
                rows.iter().map(|r| r.x).collect::<Vec<_>>(),
            )),
            Arc::new(StringArray::from(
                rows.iter().map(|r| r.s.clone()).collect::<Vec<_>>(),
            )),
            Arc::new(StringArray::from(
                rows.iter().map(|r| r.p.clone()).collect::<Vec<_>>(),
            )),
        ],
    )
    .unwrap()
}

fn render(row: &Row, columns: &[&str]) -> String {
    let show = |v: Option<String>| v.unwrap_or_else(|| "NULL".into());
    columns
        .iter()
        .map(|c| match *c {
            "id" => show(row.id.map(|v| v.to_string())),
            "x" => show(row.x.map(|v| v.to_string())),
            "s" => show(row.s.clone()),
            _ => show(row.p.clone()),
        })
        .collect::<Vec<_>>()
        .join("|")
}

/// The reference: every live file read whole with arrow-rs.
async fn reference(writer: &TableWriter, store: &Arc<dyn ObjectStore>) -> Vec<Row> {
    let logical = writer.schema().clone();
    let physical = writer.physical_schema();
    let mut out = Vec::new();
    for file in writer.files() {
        let path = Path::from_url_path(format!("t/{}", file.path)).unwrap();
        let bytes = store.get(&path).await.unwrap().bytes().await.unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(bytes)
            .unwrap()
            .build()
            .unwrap();
        let deleted = file.deleted_rows();
        let p_value = file.partition_values.first().and_then(|(_, v)| v.clone());
        let mut index = 0u64;
        for b in reader {
            let b = b.unwrap();
            // Physical fields are the logical data fields, in order.
            let data: Vec<&String> = logical
                .fields()
                .iter()
                .map(|f| f.name())
                .filter(|n| physical.fields().len() == 4 || n.as_str() != "p")
                .collect();
            let col = |logical_name: &str| -> ArrayRef {
                let i = data
                    .iter()
                    .position(|n| n.as_str() == logical_name)
                    .unwrap();
                b.column_by_name(physical.field(i).name()).unwrap().clone()
            };
            let (id, x, s) = (col("id"), col("x"), col("s"));
            let p = (physical.fields().len() == 4).then(|| col("p"));
            for r in 0..b.num_rows() {
                let this = index;
                index += 1;
                if deleted.contains(&this) {
                    continue;
                }
                let id = id.as_primitive::<Int64Type>();
                let x = x.as_primitive::<Int32Type>();
                let s = s.as_string::<i32>();
                out.push(Row {
                    id: id.is_valid(r).then(|| id.value(r)),
                    x: x.is_valid(r).then(|| x.value(r)),
                    s: s.is_valid(r).then(|| s.value(r).to_string()),
                    p: match &p {
                        Some(p) => {
                            let p = p.as_string::<i32>();
                            p.is_valid(r).then(|| p.value(r).to_string())
                        }
                        None => p_value.clone(),
                    },
                });
            }
        }
    }
    out
}

async fn run(spec: Spec) {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let mapping = match spec.mapping {
        0 => ColumnMappingMode::None,
        1 => ColumnMappingMode::Name,
        _ => ColumnMappingMode::Id,
    };
    let mut builder = TableWriter::builder(Arc::clone(&store), Path::from("t"), schema())
        .with_column_mapping(mapping)
        .with_deletion_vectors(true)
        .with_parquet_options(
            ParquetOptions::default()
                .with_row_group_rows(spec.row_group_rows)
                .with_page_rows(spec.page_rows)
                .with_page_index(spec.page_index),
        );
    if spec.partitioned {
        builder = builder.with_partition_columns(["p"]);
    }
    let mut writer = builder.create().await.unwrap();
    for rows in &spec.appends {
        writer.append(&batch_of(rows)).await.unwrap();
    }
    let files: Vec<(String, u64)> = writer
        .files()
        .map(|f| (f.path.clone(), f.num_records))
        .collect();
    for (i, rows, inline) in &spec.deletes {
        let (path, n) = &files[i % files.len()];
        let rows: Vec<u64> = rows.iter().map(|r| r % n).collect();
        let storage = if *inline {
            DvStorage::Inline
        } else {
            DvStorage::File
        };
        writer.delete_rows(path, &rows, storage).await.unwrap();
    }
    if spec.checkpoint {
        writer.checkpoint().await.unwrap();
    }

    let mut expected: Vec<String> = reference(&writer, &store)
        .await
        .into_iter()
        .filter(|r| {
            spec.predicate
                .as_ref()
                .is_none_or(|p| p.eval(r) == Some(true))
        })
        .map(|r| render(&r, &spec.columns))
        .collect();
    expected.sort();

    let table_store = TableStore::builder("memory://t")
        .with_store(Arc::clone(&store))
        .build()
        .unwrap();
    let table = Table::from_store(table_store, TableOptions::new())
        .await
        .unwrap();
    let mut scan = table
        .scan()
        .with_columns(spec.columns.iter().copied())
        .with_batch_size(16);
    if let Some(p) = &spec.predicate {
        scan = scan.with_predicate_sql(p.sql());
    }
    let plan = scan.build().unwrap();
    let batches: Vec<RecordBatch> = plan.execute().try_collect().await.unwrap();
    let mut got = Vec::new();
    for b in &batches {
        for r in 0..b.num_rows() {
            let cell = |name: &str| -> Option<String> {
                let c = b.column_by_name(name)?;
                if c.is_null(r) {
                    return Some("NULL".into());
                }
                Some(match c.data_type() {
                    DataType::Int64 => c.as_primitive::<Int64Type>().value(r).to_string(),
                    DataType::Int32 => c.as_primitive::<Int32Type>().value(r).to_string(),
                    _ => c.as_string::<i32>().value(r).to_string(),
                })
            };
            got.push(
                spec.columns
                    .iter()
                    .map(|c| cell(c).unwrap())
                    .collect::<Vec<_>>()
                    .join("|"),
            );
        }
    }
    got.sort();
    assert_eq!(
        got,
        expected,
        "predicate {:?} spec {:?} metrics {:?}",
        spec.predicate.as_ref().map(Pred::sql),
        spec,
        plan.metrics().snapshot()
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn scan_equals_brute_force_reference(spec in spec()) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(run(spec));
    }
}
