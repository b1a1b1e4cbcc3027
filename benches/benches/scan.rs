//! dar-scan against the floor: the same Parquet files read with parquet's
//! own async reader and no Delta logic, measured in the same run.
//!
//! Scale (`DAR_BENCH_SCALE`): unset or `small` (the default, 10x below the
//! issue's sizes so it fits a shared 2-core machine) or `full` (the issue's
//! 20M-row, 200-file narrow table; the wide table 10x the small one).
//!
//! | table    | small                         | full                            |
//! |----------|-------------------------------|---------------------------------|
//! | `narrow` | 2M rows, 200 files x 10,000   | 20M rows, 200 files x 100,000   |
//! | `wide`   | 200k rows, 20 files x 10,000  | 2M rows, 200 files x 10,000     |
//!
//! * `narrow`: one row group per file, one deleted row per file (DVs in one
//!   shared DV file), a checkpoint. Columns `id` (long), `value` (double),
//!   `name`, `cat`.
//! * `wide`: 41 columns, row groups of 2,000 rows, pages of 200 rows with the
//!   page index; `id` ascending across files.
//!
//! The tables are written once by dar-testkit into
//! `<target dir>/dar-bench-tables/<table>-<scale>/` and reused by later runs
//! (a `.complete` marker holding the table's description says the write
//! finished; a missing or different marker means rewrite). The paths are
//! printed, so the same tables can be read by other engines (python
//! `deltalake`) in the same sitting.
//!
//! Cases (ratio = dar / floor, same run):
//!
//! * `limit1`: `LIMIT 1`, table open (log replay) included for dar; the
//!   floor opens the first data file and reads one row.
//! * `full2`: every row of `id, value` of `narrow` (dar applies the DVs);
//!   the floor decodes the same two columns of every file, as many files
//!   at once as dar (`default_files_in_flight`).
//! * `selective`: `id BETWEEN 100000 AND 100099` over `wide`, columns
//!   `id, c01`; the floor decodes both columns of every file (as many at
//!   once as dar) and filters with Arrow kernels.
//!
//! `cargo bench -p dar-benches --bench scan`
//! `DAR_BENCH_SCALE=full cargo bench -p dar-benches --bench scan`

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "bench setup"
)]

use std::hint::black_box;
use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use arrow_array::{Float64Array, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use dar_scan::{Table, default_files_in_flight};
use dar_testkit::{DvStorage, ParquetOptions, TableWriter};
use futures::{StreamExt, TryStreamExt};
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask};

const WIDE_COLUMNS: usize = 40;
/// Rows per file of the wide table at every scale (row groups of 2,000).
const WIDE_ROWS: usize = 10_000;

/// Table sizes for one `DAR_BENCH_SCALE`.
#[derive(Clone, Copy)]
struct Scale {
    /// Name used in cache directory names (`small`, `full`).
    name: &'static str,
    narrow_files: usize,
    /// Rows per narrow file (one row group each).
    narrow_rows: usize,
    wide_files: usize,
}

impl Scale {
    const SMALL: Scale = Scale {
        name: "small",
        narrow_files: 200,
        narrow_rows: 10_000,
        wide_files: 20,
    };
    const FULL: Scale = Scale {
        name: "full",
        narrow_files: 200,
        narrow_rows: 100_000,
        wide_files: 200,
    };

    fn from_env() -> Scale {
        match std::env::var("DAR_BENCH_SCALE").as_deref() {
            Ok("full") => Scale::FULL,
            Ok("small") | Err(_) => Scale::SMALL,
            Ok(other) => panic!("DAR_BENCH_SCALE={other}: expected `small` or `full`"),
        }
    }

    /// What the `narrow` table holds; stored in its cache marker.
    fn narrow_desc(self) -> String {
        format!(
            "narrow v1: {} files x {} rows, 1 DV row per file, checkpoint",
            self.narrow_files, self.narrow_rows
        )
    }

    /// What the `wide` table holds; stored in its cache marker.
    fn wide_desc(self) -> String {
        format!(
            "wide v1: {} files x {WIDE_ROWS} rows x {} columns, page index",
            self.wide_files,
            WIDE_COLUMNS + 1
        )
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Where the bench tables are cached: `$CARGO_TARGET_DIR/dar-bench-tables`,
/// else the target dir holding this executable (`<target>/release/deps/scan-*`).
fn cache_root() -> PathBuf {
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(t) => PathBuf::from(t),
        None => std::env::current_exe()
            .unwrap()
            .ancestors()
            .nth(3)
            .unwrap()
            .to_path_buf(),
    };
    target.join("dar-bench-tables")
}

/// The table directory `<cache>/<dir_name>/table`, written by `write` unless
/// a previous run finished writing the same table (marker equals `desc`).
fn cached_table<F: Future<Output = ()>>(
    rt: &tokio::runtime::Runtime,
    dir_name: &str,
    desc: &str,
    write: impl FnOnce(PathBuf) -> F,
) -> PathBuf {
    let dir = cache_root().join(dir_name);
    let marker = dir.join(".complete");
    let table = dir.join("table");
    if std::fs::read_to_string(&marker).is_ok_and(|m| m == desc) {
        eprintln!("scan bench: reusing {} ({desc})", table.display());
        return table;
    }
    // A partial or outdated table: start over.
    if dir.exists() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    std::fs::create_dir_all(&dir).unwrap();
    eprintln!("scan bench: writing {} ({desc})", table.display());
    let started = std::time::Instant::now();
    rt.block_on(write(dir.clone()));
    std::fs::write(&marker, desc).unwrap();
    eprintln!(
        "scan bench: wrote {} in {:.1?}",
        table.display(),
        started.elapsed()
    );
    table
}

/// Writes the `narrow` table at `root/table`.
async fn write_narrow(root: PathBuf, scale: Scale) {
    let (files, rows_per_file) = (scale.narrow_files, scale.narrow_rows);
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(root).unwrap());
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("value", DataType::Float64, true),
        Field::new("name", DataType::Utf8, true),
        Field::new("cat", DataType::Utf8, true),
    ]));
    let mut w = TableWriter::builder(Arc::clone(&store), Path::from("table"), schema.clone())
        .with_deletion_vectors(true)
        .with_parquet_options(ParquetOptions::default().with_row_group_rows(rows_per_file))
        .create()
        .await
        .unwrap();
    for f in 0..files {
        let base = (f * rows_per_file) as i64;
        let ids: Vec<i64> = (0..rows_per_file as i64).map(|i| base + i).collect();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(ids.clone())),
                Arc::new(Float64Array::from_iter_values(
                    ids.iter().map(|i| *i as f64 * 0.5),
                )),
                Arc::new(StringArray::from_iter_values(
                    ids.iter().map(|i| format!("name-{}", i % 1000)),
                )),
                Arc::new(StringArray::from_iter_values(
                    ids.iter().map(|i| format!("cat-{}", i % 7)),
                )),
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

/// Writes the `wide` table at `root/table`.
async fn write_wide(root: PathBuf, scale: Scale) {
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(root).unwrap());
    let mut fields = vec![Field::new("id", DataType::Int64, true)];
    for c in 1..=WIDE_COLUMNS {
        let t = if c % 2 == 0 {
            DataType::Int32
        } else {
            DataType::Float64
        };
        fields.push(Field::new(format!("c{c:02}"), t, true));
    }
    let schema = Arc::new(Schema::new(fields));
    let mut w = TableWriter::builder(Arc::clone(&store), Path::from("table"), schema.clone())
        .with_parquet_options(
            ParquetOptions::default()
                .with_row_group_rows(2_000)
                .with_page_rows(200)
                .with_page_index(true),
        )
        .create()
        .await
        .unwrap();
    for f in 0..scale.wide_files {
        let base = (f * WIDE_ROWS) as i64;
        let mut columns: Vec<Arc<dyn arrow_array::Array>> = vec![Arc::new(
            Int64Array::from_iter_values(base..base + WIDE_ROWS as i64),
        )];
        for c in 1..=WIDE_COLUMNS {
            if c % 2 == 0 {
                columns.push(Arc::new(Int32Array::from_iter_values(
                    (0..WIDE_ROWS as i32).map(|i| i * c as i32),
                )));
            } else {
                columns.push(Arc::new(Float64Array::from_iter_values(
                    (0..WIDE_ROWS).map(|i| (i * c) as f64),
                )));
            }
        }
        w.append(&RecordBatch::try_new(schema.clone(), columns).unwrap())
            .await
            .unwrap();
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
/// indexes) decoded, optionally filtered, no Delta logic. Files are read
/// `default_files_in_flight(false)` at a time, as dar reads them, except under a limit,
/// where the floor reads one file after another and stops once it has
/// `limit` rows (the cheapest a limit can be).
async fn floor(
    files: &[PathBuf],
    columns: &[usize],
    limit: Option<usize>,
    keep: Option<(i64, i64)>,
) -> usize {
    let at_once = if limit.is_some() {
        1
    } else {
        default_files_in_flight(false)
    };
    let mut counts = futures::stream::iter(files)
        .map(|f| floor_file(f, columns, limit, keep))
        .buffered(at_once);
    let mut rows = 0;
    while let Some(n) = counts.next().await {
        rows += n;
        if limit.is_some_and(|l| rows >= l) {
            break;
        }
    }
    rows
}

/// One file of the floor: the rows decoded (at most `limit`), or with
/// `keep = (lo, hi)` the rows whose first column is in `lo..=hi`.
async fn floor_file(
    f: &FsPath,
    columns: &[usize],
    limit: Option<usize>,
    keep: Option<(i64, i64)>,
) -> usize {
    let file = tokio::fs::File::open(f).await.unwrap();
    let builder = ParquetRecordBatchStreamBuilder::new(file).await.unwrap();
    let mask = ProjectionMask::roots(builder.parquet_schema(), columns.iter().copied());
    let mut builder = builder.with_projection(mask).with_batch_size(8192);
    if let Some(l) = limit {
        builder = builder.with_limit(l);
    }
    let batches: Vec<RecordBatch> = builder.build().unwrap().try_collect().await.unwrap();
    let mut rows = 0;
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
                arrow_select::filter::filter_record_batch(&b, &m)
                    .unwrap()
                    .num_rows()
            }
            None => b.num_rows(),
        };
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
    let scale = Scale::from_env();
    let narrow = cached_table(
        &rt,
        &format!("narrow-{}", scale.name),
        &scale.narrow_desc(),
        |d| write_narrow(d, scale),
    );
    let wide = cached_table(
        &rt,
        &format!("wide-{}", scale.name),
        &scale.wide_desc(),
        |d| write_wide(d, scale),
    );
    let (narrow_uri, wide_uri) = (narrow.to_str().unwrap(), wide.to_str().unwrap());
    let narrow_files = data_files(&narrow);
    let wide_files = data_files(&wide);

    // Sanity: both sides return what they should.
    assert_eq!(
        rt.block_on(dar(narrow_uri, &["id", "value"], None, None)),
        scale.narrow_files * (scale.narrow_rows - 1)
    );
    assert_eq!(
        rt.block_on(floor(&narrow_files, &[0, 1], None, None)),
        scale.narrow_files * scale.narrow_rows
    );
    let pred = "id BETWEEN 100000 AND 100099";
    assert_eq!(
        rt.block_on(dar(wide_uri, &["id", "c01"], Some(pred), None)),
        100
    );
    assert_eq!(
        rt.block_on(floor(&wide_files, &[0, 1], None, Some((100_000, 100_099)))),
        100
    );

    let mut g = c.benchmark_group(format!("scan-{}", scale.name));
    // Flat sampling: each sample runs the same few iterations, so a 1 s full
    // scan costs ~10 iterations rather than criterion's linear 1+2+..+10.
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10)
        .measurement_time(Duration::from_secs(8))
        .warm_up_time(Duration::from_secs(1));
    g.bench_function("limit1/dar", |b| {
        b.iter(|| black_box(rt.block_on(dar(narrow_uri, &["id", "value"], None, Some(1)))))
    });
    g.bench_function("limit1/floor", |b| {
        b.iter(|| black_box(rt.block_on(floor(&narrow_files, &[0, 1], Some(1), None))))
    });
    g.bench_function("full2/dar", |b| {
        b.iter(|| black_box(rt.block_on(dar(narrow_uri, &["id", "value"], None, None))))
    });
    g.bench_function("full2/floor", |b| {
        b.iter(|| black_box(rt.block_on(floor(&narrow_files, &[0, 1], None, None))))
    });
    g.bench_function("selective/dar", |b| {
        b.iter(|| black_box(rt.block_on(dar(wide_uri, &["id", "c01"], Some(pred), None))))
    });
    g.bench_function("selective/floor", |b| {
        b.iter(|| {
            black_box(rt.block_on(floor(&wide_files, &[0, 1], None, Some((100_000, 100_099)))))
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
