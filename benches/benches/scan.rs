//! dar-scan against the floor: the same Parquet files read with parquet's
//! own async reader and no Delta logic, measured in the same run.
//!
//! Tables (written once per run by dar-testkit into a temp dir; scaled down
//! 10x from the issue's 20M rows to fit a shared 2-core machine):
//!
//! * `narrow`: 2,000,000 rows in 200 files (10,000 rows, one row group
//!   each), one deleted row per file (DVs in one shared DV file), a
//!   checkpoint. Columns `id` (long), `value` (double), `name`, `cat`.
//! * `wide`: 200,000 rows in 20 files, 41 columns, row groups of 2,000 rows,
//!   pages of 200 rows with the page index; `id` ascending.
//!
//! Cases (ratio = dar / floor, same run):
//!
//! * `limit1`: `LIMIT 1`, table open (log replay) included for dar; the
//!   floor opens the first data file and reads one row.
//! * `full2`: every row of `id, value` of `narrow` (dar applies the DVs);
//!   the floor decodes the same two columns of every file.
//! * `selective`: `id BETWEEN 100000 AND 100099` over `wide`, columns
//!   `id, c01`; the floor decodes both columns of every file and filters
//!   with Arrow kernels.
//!
//! `cargo bench -p dar-benches --bench scan`

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "bench setup")]

use std::hint::black_box;
use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use arrow_array::{Float64Array, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use criterion::{Criterion, criterion_group, criterion_main};
use dar_scan::Table;
use dar_testkit::{DvStorage, ParquetOptions, TableWriter};
use futures::TryStreamExt;
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask};

const NARROW_FILES: usize = 200;
const NARROW_ROWS: usize = 10_000;
const WIDE_FILES: usize = 20;
const WIDE_ROWS: usize = 10_000;
const WIDE_COLUMNS: usize = 40;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

async fn write_narrow(root: &FsPath) {
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(root).unwrap());
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("value", DataType::Float64, true),
        Field::new("name", DataType::Utf8, true),
        Field::new("cat", DataType::Utf8, true),
    ]));
    let mut w = TableWriter::builder(Arc::clone(&store), Path::from("narrow"), schema.clone())
        .with_deletion_vectors(true)
        .with_parquet_options(ParquetOptions::default().with_row_group_rows(NARROW_ROWS))
        .create()
        .await
        .unwrap();
    for f in 0..NARROW_FILES {
        let base = (f * NARROW_ROWS) as i64;
        let ids: Vec<i64> = (0..NARROW_ROWS as i64).map(|i| base + i).collect();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(ids.clone())),
                Arc::new(Float64Array::from_iter_values(ids.iter().map(|i| *i as f64 * 0.5))),
                Arc::new(StringArray::from_iter_values(ids.iter().map(|i| format!("name-{}", i % 1000)))),
                Arc::new(StringArray::from_iter_values(ids.iter().map(|i| format!("cat-{}", i % 7)))),
            ],
        )
        .unwrap();
        w.append(&batch).await.unwrap();
    }
    let paths: Vec<String> = w.files().map(|f| f.path.clone()).collect();
    let rows = [5u64];
    let deletes: Vec<(&str, &[u64])> = paths.iter().map(|p| (p.as_str(), &rows[..])).collect();
    w.delete_rows_in(&deletes, DvStorage::File).await.unwrap();
    w.checkpoint().await.unwrap();
}

async fn write_wide(root: &FsPath) {
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(root).unwrap());
    let mut fields = vec![Field::new("id", DataType::Int64, true)];
    for c in 1..=WIDE_COLUMNS {
        let t = if c % 2 == 0 { DataType::Int32 } else { DataType::Float64 };
        fields.push(Field::new(format!("c{c:02}"), t, true));
    }
    let schema = Arc::new(Schema::new(fields));
    let mut w = TableWriter::builder(Arc::clone(&store), Path::from("wide"), schema.clone())
        .with_parquet_options(
            ParquetOptions::default().with_row_group_rows(2_000).with_page_rows(200).with_page_index(true),
        )
        .create()
        .await
        .unwrap();
    for f in 0..WIDE_FILES {
        let base = (f * WIDE_ROWS) as i64;
        let mut columns: Vec<Arc<dyn arrow_array::Array>> =
            vec![Arc::new(Int64Array::from_iter_values(base..base + WIDE_ROWS as i64))];
        for c in 1..=WIDE_COLUMNS {
            if c % 2 == 0 {
                columns.push(Arc::new(Int32Array::from_iter_values((0..WIDE_ROWS as i32).map(|i| i * c as i32))));
            } else {
                columns.push(Arc::new(Float64Array::from_iter_values((0..WIDE_ROWS).map(|i| (i * c) as f64))));
            }
        }
        w.append(&RecordBatch::try_new(schema.clone(), columns).unwrap()).await.unwrap();
    }
}

fn data_files(dir: &FsPath) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    files.sort();
    files
}

/// The floor: parquet's async reader over each file, `columns` (root
/// indexes) decoded, optionally filtered, no Delta logic.
async fn floor(files: &[PathBuf], columns: &[usize], limit: Option<usize>, keep: Option<(i64, i64)>) -> usize {
    let mut rows = 0;
    for f in files {
        let file = tokio::fs::File::open(f).await.unwrap();
        let builder = ParquetRecordBatchStreamBuilder::new(file).await.unwrap();
        let mask = ProjectionMask::roots(builder.parquet_schema(), columns.iter().copied());
        let mut builder = builder.with_projection(mask).with_batch_size(8192);
        if let Some(l) = limit {
            builder = builder.with_limit(l);
        }
        let batches: Vec<RecordBatch> = builder.build().unwrap().try_collect().await.unwrap();
        for b in batches {
            rows += match keep {
                Some((lo, hi)) => {
                    let id = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
                    let lo = Int64Array::new_scalar(lo);
                    let hi = Int64Array::new_scalar(hi);
                    let m = arrow_arith::boolean::and(
                        &arrow_ord::cmp::gt_eq(id, &lo).unwrap(),
                        &arrow_ord::cmp::lt_eq(id, &hi).unwrap(),
                    )
                    .unwrap();
                    arrow_select::filter::filter_record_batch(&b, &m).unwrap().num_rows()
                }
                None => b.num_rows(),
            };
        }
        if limit.is_some_and(|l| rows >= l) {
            break;
        }
    }
    rows
}

async fn dar(uri: &str, columns: &[&str], predicate: Option<&str>, limit: Option<usize>) -> usize {
    let table = Table::open(uri).await.unwrap();
    let mut scan = table.scan().with_columns(columns.iter().copied());
    if let Some(p) = predicate {
        scan = scan.with_predicate_sql(p);
    }
    if let Some(l) = limit {
        scan = scan.with_limit(l);
    }
    let batches: Vec<RecordBatch> = scan.build().unwrap().execute().try_collect().await.unwrap();
    batches.iter().map(|b| b.num_rows()).sum()
}

fn bench(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().unwrap();
    rt.block_on(write_narrow(dir.path()));
    rt.block_on(write_wide(dir.path()));
    let narrow = dir.path().join("narrow");
    let wide = dir.path().join("wide");
    let (narrow_uri, wide_uri) = (narrow.to_str().unwrap(), wide.to_str().unwrap());
    let narrow_files = data_files(&narrow);
    let wide_files = data_files(&wide);

    // Sanity: both sides return what they should.
    assert_eq!(rt.block_on(dar(narrow_uri, &["id", "value"], None, None)), NARROW_FILES * (NARROW_ROWS - 1));
    assert_eq!(rt.block_on(floor(&narrow_files, &[0, 1], None, None)), NARROW_FILES * NARROW_ROWS);
    let pred = "id BETWEEN 100000 AND 100099";
    assert_eq!(rt.block_on(dar(wide_uri, &["id", "c01"], Some(pred), None)), 100);
    assert_eq!(rt.block_on(floor(&wide_files, &[0, 1], None, Some((100_000, 100_099)))), 100);

    let mut g = c.benchmark_group("scan");
    g.sample_size(10).measurement_time(Duration::from_secs(8)).warm_up_time(Duration::from_secs(1));
    g.bench_function("limit1/dar", |b| b.iter(|| black_box(rt.block_on(dar(narrow_uri, &["id", "value"], None, Some(1))))));
    g.bench_function("limit1/floor", |b| b.iter(|| black_box(rt.block_on(floor(&narrow_files, &[0, 1], Some(1), None)))));
    g.bench_function("full2/dar", |b| b.iter(|| black_box(rt.block_on(dar(narrow_uri, &["id", "value"], None, None)))));
    g.bench_function("full2/floor", |b| b.iter(|| black_box(rt.block_on(floor(&narrow_files, &[0, 1], None, None)))));
    g.bench_function("selective/dar", |b| {
        b.iter(|| black_box(rt.block_on(dar(wide_uri, &["id", "c01"], Some(pred), None))))
    });
    g.bench_function("selective/floor", |b| {
        b.iter(|| black_box(rt.block_on(floor(&wide_files, &[0, 1], None, Some((100_000, 100_099))))))
    });
    g.finish();
    if let Ok(path) = std::env::var("DAR_SCAN_BENCH_KEEP") {
        // Keep the tables for an outside comparison (python deltalake).
        let _ = std::fs::create_dir_all(&path);
        for (name, src) in [("narrow", &narrow), ("wide", &wide)] {
            let dst = FsPath::new(&path).join(name);
            let _ = std::process::Command::new("cp").arg("-r").arg(src).arg(&dst).status();
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
