//! The Delta Acceptance Tests through SQL: every case and version read with
//! `delta_scan(uri, version)` gives exactly the rows Spark wrote to
//! `expected/vN/table_content.parquet` (order-independent, by column name).

use std::collections::BTreeMap;
use std::path::Path;

use arrow_array::RecordBatch;
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use dar_datafusion::register_dar;
use datafusion::prelude::SessionContext;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// Each row as `name=value` pairs in column-name order, rows sorted.
fn rows(batches: &[RecordBatch]) -> Vec<String> {
    let options = FormatOptions::default().with_null("NULL");
    let mut out = Vec::new();
    for b in batches {
        let schema = b.schema();
        let mut columns: Vec<(String, ArrayFormatter)> = schema
            .fields()
            .iter()
            .zip(b.columns())
            .map(|(f, c)| {
                (
                    f.name().clone(),
                    ArrayFormatter::try_new(c.as_ref(), &options).unwrap(),
                )
            })
            .collect();
        columns.sort_by(|a, b| a.0.cmp(&b.0));
        for i in 0..b.num_rows() {
            let row: Vec<String> = columns
                .iter()
                .map(|(n, f)| format!("{n}={}", f.value(i)))
                .collect();
            out.push(row.join(", "));
        }
    }
    out.sort();
    out
}

fn expected(dir: &Path) -> Vec<RecordBatch> {
    let file = std::fs::File::open(dir.join("table_content.parquet")).unwrap();
    ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dat_cases_match_spark_at_every_version() {
    let cases = [
        "basic_append",
        "basic_partitioned",
        "multi_partitioned",
        "with_schema_change",
    ];
    let ctx = SessionContext::new();
    register_dar(&ctx);
    let mut checked = BTreeMap::new();
    for case in cases {
        let Some(root) = dar_testdata::table(&format!("dat/{case}")) else {
            return;
        };
        let table = root.join("delta");
        for entry in std::fs::read_dir(root.join("expected")).unwrap() {
            let dir = entry.unwrap().path();
            let name = dir.file_name().unwrap().to_str().unwrap().to_string();
            let version = match name.strip_prefix('v') {
                Some(v) => format!(", {}", v.parse::<u64>().unwrap()),
                None => String::new(),
            };
            let sql = format!("SELECT * FROM delta_scan('{}'{version})", table.display());
            let got = ctx.sql(&sql).await.unwrap().collect().await.unwrap();
            assert_eq!(rows(&got), rows(&expected(&dir)), "{case} {name}");
            checked.insert(
                format!("{case}/{name}"),
                got.iter().map(RecordBatch::num_rows).sum::<usize>(),
            );
        }
    }
    // 4 cases, 12 snapshots (every version and `latest`).
    assert_eq!(checked.len(), 12, "{checked:?}");
}
