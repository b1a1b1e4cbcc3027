//! Change data feed: the kernel's Spark-written CDF tables row for row
//! (exact multisets), each refusal, hand-written tables for the rules (DV
//! replacement, column mapping with partitions and a rename, a feed
//! disabled then enabled, a cleaned-up commit), pruning, projection,
//! tasks as data, commit timestamps and what the feed reads.

mod io;
mod kernel;
mod refusals;
mod rules;
mod time;

use std::path::Path;

use arrow_array::{Int32Array, RecordBatch, StringArray};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::{DataType, Field, Schema};
use dar_scan::{ChangeBound, ScanError, ScanPlan};

use super::common::*;

/// One string per row, `|`-separated in output column order, without
/// `_commit_timestamp` (file times change when the tables are copied);
/// sorted.
pub fn change_rows(batches: &[RecordBatch]) -> Vec<String> {
    let opts = FormatOptions::default().with_null("NULL");
    let mut out = Vec::new();
    for b in batches {
        let schema = b.schema();
        let cols: Vec<usize> = (0..b.num_columns())
            .filter(|i| schema.field(*i).name() != "_commit_timestamp")
            .collect();
        let fmts: Vec<ArrayFormatter<'_>> = cols
            .iter()
            .map(|c| ArrayFormatter::try_new(b.column(*c).as_ref(), &opts).unwrap())
            .collect();
        for r in 0..b.num_rows() {
            let cells: Vec<String> = fmts.iter().map(|f| f.value(r).to_string()).collect();
            out.push(cells.join("|"));
        }
    }
    out.sort();
    out
}

fn v(n: u64) -> ChangeBound {
    ChangeBound::Version(n)
}

async fn plan_of(path: &Path, start: u64, end: Option<u64>) -> Result<ScanPlan, ScanError> {
    open(path).await.changes(v(start), end.map(v)).build().await
}

async fn rows_of(path: &Path, start: u64, end: Option<u64>) -> Vec<String> {
    let plan = plan_of(path, start, end).await.unwrap();
    change_rows(&collect(&plan).await)
}

/// `ids` as rows `id|kind|version`.
fn ids(ids: impl IntoIterator<Item = i64>, kind: &str, version: u64) -> Vec<String> {
    ids.into_iter()
        .map(|i| format!("{i}|{kind}|{version}"))
        .collect()
}

fn sorted(mut rows: Vec<String>) -> Vec<String> {
    rows.sort();
    rows
}

fn ids_batch(ids: &[i32]) -> RecordBatch {
    let schema = Schema::new(vec![Field::new("id", DataType::Int32, true)]);
    RecordBatch::try_new(
        std::sync::Arc::new(schema),
        vec![std::sync::Arc::new(Int32Array::from(ids.to_vec()))],
    )
    .unwrap()
}

/// A table written by dar-testkit's writer in a local directory, with the
/// feed on.
async fn writer_table(
    dir: &Path,
    ict: bool,
) -> (
    dar_testkit::TableWriter,
    std::sync::Arc<arrow_schema::Schema>,
) {
    let store: std::sync::Arc<dyn object_store::ObjectStore> =
        std::sync::Arc::new(object_store::local::LocalFileSystem::new_with_prefix(dir).unwrap());
    let schema = std::sync::Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("part", DataType::Utf8, true),
    ]));
    let t = dar_testkit::TableWriter::builder(
        store,
        object_store::path::Path::from("t"),
        schema.clone(),
    )
    .with_partition_columns(["part"])
    .with_deletion_vectors(true)
    .with_in_commit_timestamps(ict)
    .with_change_data_feed(true)
    .with_kept_rows(true)
    .create()
    .await
    .unwrap();
    (t, schema)
}

fn id_part(schema: &std::sync::Arc<Schema>, ids: &[i64], part: &str) -> RecordBatch {
    RecordBatch::try_new(
        schema.clone(),
        vec![
            std::sync::Arc::new(arrow_array::Int64Array::from(ids.to_vec())),
            std::sync::Arc::new(StringArray::from(vec![part; ids.len()])),
        ],
    )
    .unwrap()
}

/// One `ScanOptions` value drives a scan and a change feed alike: the same
/// projection, predicate, limit and batch size reach both plans.
#[tokio::test]
async fn one_options_value_drives_a_scan_and_a_feed() {
    let Some(path) = dar_testdata::table("kernel/cdf-table") else {
        return;
    };
    let table = open(&path).await;
    let options = dar_scan::ScanOptions::new()
        .with_columns(["id", "name"])
        .with_predicate_sql("id >= 3")
        .with_limit(2)
        .with_batch_size(1);
    let scan = table.scan().with_options(options.clone()).build().unwrap();
    let feed = table
        .changes(v(0), None)
        .with_options(options)
        .build()
        .await
        .unwrap();
    let names = |plan: &ScanPlan| -> Vec<String> {
        plan.schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    };
    assert_eq!(names(&scan), ["id", "name"]);
    assert_eq!(
        names(&feed),
        [
            "id",
            "name",
            "_change_type",
            "_commit_version",
            "_commit_timestamp"
        ]
    );
    for plan in [&scan, &feed] {
        let batches = collect(plan).await;
        assert!(batches.iter().all(|b| b.num_rows() == 1), "batch size 1");
        let ids: Vec<i64> = batches
            .iter()
            .flat_map(|b| {
                let c = arrow_cast::cast(b.column(0), &DataType::Int64).unwrap();
                arrow_array::cast::AsArray::as_primitive::<arrow_array::types::Int64Type>(&c)
                    .values()
                    .to_vec()
            })
            .collect();
        assert_eq!(ids.len(), 2, "limit 2");
        assert!(ids.iter().all(|i| *i >= 3), "{ids:?}");
    }
}
