//! The per-batch path on a wide `id`-mapped table: 200 long columns with
//! column mapping by field id, two files of 50,000 rows, read whole in
//! batches of 1,024 rows (about 100 batches), so the cost that grows with
//! batches times columns (finding each column in each batch) shows.
//!
//! `cargo bench -p dar-benches --bench mapped`
//!
//! With `DAR_BENCH_ONCE=1` the binary scans the table once and prints the
//! batch count instead of benchmarking, for instruction counts under
//! `valgrind --tool=callgrind` (see docs/benchmarks.md).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "bench setup"
)]

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use criterion::{Criterion, SamplingMode};
use dar_scan::Table;
use dar_testkit::{ColumnMappingMode, ParquetOptions, TableWriter};
use futures::TryStreamExt;
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::path::Path;

const COLUMNS: usize = 200;
const FILES: usize = 2;
const ROWS: usize = 50_000;
const BATCH: usize = 1_024;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// The table, written once under the target dir and reused.
fn table_dir(rt: &tokio::runtime::Runtime) -> PathBuf {
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(t) => PathBuf::from(t),
        None => std::env::current_exe()
            .unwrap()
            .ancestors()
            .nth(3)
            .unwrap()
            .to_path_buf(),
    };
    let dir = target.join("dar-bench-tables").join("mapped200");
    let marker = dir.join(".complete");
    let desc = format!("{COLUMNS} columns, id mapping, {FILES} files x {ROWS} rows");
    if std::fs::read_to_string(&marker).is_ok_and(|m| m == desc) {
        return dir.join("table");
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    std::fs::create_dir_all(&dir).unwrap();
    rt.block_on(async {
        let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(&dir).unwrap());
        let schema = Arc::new(Schema::new(
            (0..COLUMNS)
                .map(|j| Field::new(format!("c{j:03}"), DataType::Int64, true))
                .collect::<Vec<_>>(),
        ));
        let mut w = TableWriter::builder(store, Path::from("table"), Arc::clone(&schema))
            .with_column_mapping(ColumnMappingMode::Id)
            .with_parquet_options(ParquetOptions::default().with_row_group_rows(ROWS))
            .create()
            .await
            .unwrap();
        for f in 0..FILES {
            let columns: Vec<ArrayRef> = (0..COLUMNS)
                .map(|j| {
                    Arc::new(Int64Array::from_iter_values(
                        (0..ROWS).map(|r| ((f * ROWS + r) * COLUMNS + j) as i64),
                    )) as ArrayRef
                })
                .collect();
            w.append(&RecordBatch::try_new(Arc::clone(&schema), columns).unwrap())
                .await
                .unwrap();
        }
    });
    std::fs::write(&marker, desc).unwrap();
    dir.join("table")
}

/// Scans every column; returns the number of batches.
async fn scan(uri: &str) -> usize {
    let table = Table::open(uri).await.unwrap();
    let plan = table.scan().with_batch_size(BATCH).build().unwrap();
    let batches: Vec<RecordBatch> = plan.execute().try_collect().await.unwrap();
    assert_eq!(
        batches.iter().map(|b| b.num_rows()).sum::<usize>(),
        FILES * ROWS
    );
    batches.len()
}

fn main() {
    let rt = runtime();
    let dir = table_dir(&rt);
    let uri = dir.to_str().unwrap().to_string();
    if std::env::var_os("DAR_BENCH_ONCE").is_some() {
        println!("batches: {}", rt.block_on(scan(&uri)));
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    let mut g = c.benchmark_group("mapped200");
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10)
        .measurement_time(Duration::from_secs(8))
        .warm_up_time(Duration::from_secs(1));
    g.bench_function("full/dar", |b| {
        b.iter(|| black_box(rt.block_on(scan(&uri))))
    });
    g.finish();
    c.final_summary();
}
