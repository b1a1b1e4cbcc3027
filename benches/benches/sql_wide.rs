//! SQL on wide tables: `SELECT *` (and a selective `SELECT *`) planned and
//! run through dar's DataFusion provider on tables of 100, 400 and 1,600
//! long columns holding the same number of cells, against the same scan
//! through dar-scan directly, measured in the same run.
//!
//! | table           | columns | rows per file | files |
//! |-----------------|---------|---------------|-------|
//! | `sql-wide-100`  | 100     | 32,000        | 2     |
//! | `sql-wide-400`  | 400     | 8,000         | 2     |
//! | `sql-wide-1600` | 1,600   | 2,000         | 2     |
//!
//! Every table holds 6.4M cells, read in batches of 1,000 rows, so every
//! case decodes the same cells in the same number of column-batches
//! (batches x columns = 6,400): work that is linear in the columns, per
//! plan and per batch, costs the same at every width, and a time that
//! grows with the width is work that grows faster than the columns. (The
//! wider files also hold 16x the column chunks, each with its fixed decode
//! cost, which both engines pay: the SQL / scan ratio is the figure that
//! isolates the SQL path.) Column `c0` is the row's number in the table
//! (`c{j}` is `c0 * j`); the tables are plain (no column mapping), written
//! once by dar-testkit under `<target dir>/dar-bench-tables/sql-wide-<columns>/`
//! and reused.
//!
//! Cases (`<query>/<engine>/<columns>`):
//!
//! * `all`: `SELECT * FROM t`.
//! * `selective`: `SELECT * FROM t WHERE c0 >= 1000 AND c0 < 1100` (100
//!   rows, one file pruned by its statistics).
//! * engines: `sql` (a fresh `dar_datafusion::sql` plan over a registered
//!   `DeltaTableProvider`, collected) and `scan` (`Table::scan` with the
//!   same columns, predicate and batch size, collected). The table is
//!   opened once, outside the measured loop, for both.
//!
//! At the end the binary prints each case's median time relative to the
//! 100-column table (same cells: 1.00 is linear in the columns) and the
//! SQL / scan ratio, measured in that sitting.
//!
//! Issue 33 item 9, one 2-core sitting each (median of 9; sql/scan):
//!
//! | query       | 100 cols | 400 cols | 1,600 cols |
//! |-------------|----------|----------|------------|
//! | all, before | 1.05     | 0.98     | 3.31       |
//! | all, after  | 1.03     | 1.03     | 1.09       |
//! | selective, before | 1.19 | 1.33   | 8.05       |
//! | selective, after  | 1.08 | 1.12   | 1.08       |
//!
//! Before, planning `SELECT *` took 2 ms, 22 ms and 291 ms (DataFusion's
//! SQL planner deduplicating the expanded `*` pairwise); `dar_datafusion::sql`
//! now plans it in 0.5 ms, 0.7 ms and 1.6 ms.
//!
//! `cargo bench -p dar-benches --bench sql_wide` (add `-- --quick` for a
//! shorter sitting). With `DAR_BENCH_ONCE=<columns>` the binary runs each
//! SQL case on that table a few times and prints the time of its phases
//! (logical plan, physical plan, run), for `perf record`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "bench setup"
)]

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use criterion::{Criterion, SamplingMode};
use dar_datafusion::{DeltaTableProvider, QueryOptions};
use dar_scan::Table;
use dar_testkit::TableWriter;
use datafusion::prelude::{SessionConfig, SessionContext};
use futures::TryStreamExt;
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::path::Path;

/// Cells per table (columns x rows).
const CELLS: usize = 6_400_000;
const FILES: usize = 2;
/// Rows per batch, for dar-scan and DataFusion alike.
const BATCH: usize = 1_000;
const WIDTHS: [usize; 3] = [100, 400, 1_600];
/// The selective predicate's rows: `c0` in `LO..LO + 100`.
const LO: usize = 1_000;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The table of `width` columns, written once under the target dir.
fn table_dir(rt: &tokio::runtime::Runtime, width: usize) -> PathBuf {
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(t) => PathBuf::from(t),
        None => std::env::current_exe()
            .unwrap()
            .ancestors()
            .nth(3)
            .unwrap()
            .to_path_buf(),
    };
    let dir = target
        .join("dar-bench-tables")
        .join(format!("sql-wide-{width}"));
    let marker = dir.join(".complete");
    let rows = CELLS / width / FILES;
    let desc = format!("sql-wide v1: {width} long columns, {FILES} files x {rows} rows");
    if std::fs::read_to_string(&marker).is_ok_and(|m| m == desc) {
        return dir.join("table");
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    std::fs::create_dir_all(&dir).unwrap();
    eprintln!("sql_wide bench: writing {} ({desc})", dir.display());
    rt.block_on(async {
        let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(&dir).unwrap());
        let schema = Arc::new(Schema::new(
            (0..width)
                .map(|j| Field::new(format!("c{j}"), DataType::Int64, true))
                .collect::<Vec<_>>(),
        ));
        let mut w = TableWriter::builder(store, Path::from("table"), Arc::clone(&schema))
            .create()
            .await
            .unwrap();
        for f in 0..FILES {
            let ids = (f * rows) as i64..((f + 1) * rows) as i64;
            let mut columns: Vec<ArrayRef> = (0..width)
                .map(|j| {
                    Arc::new(Int64Array::from_iter_values(
                        ids.clone().map(|r| r * j as i64),
                    )) as ArrayRef
                })
                .collect();
            columns[0] = Arc::new(Int64Array::from_iter_values(ids));
            w.append(&RecordBatch::try_new(Arc::clone(&schema), columns).unwrap())
                .await
                .unwrap();
        }
    });
    std::fs::write(&marker, desc).unwrap();
    dir.join("table")
}

/// One table opened once, with a SQL session it is registered in as `t`.
struct Case {
    width: usize,
    table: Table,
    ctx: SessionContext,
}

impl Case {
    async fn open(uri: &str, width: usize) -> Case {
        let table = Table::open(uri).await.unwrap();
        let config = SessionConfig::new()
            .with_batch_size(BATCH)
            .with_target_partitions(2);
        let ctx = SessionContext::new_with_config(config);
        let provider = DeltaTableProvider::new(table.clone());
        ctx.register_table("t", Arc::new(provider)).unwrap();
        Case { width, table, ctx }
    }

    /// Plans `query` afresh and collects it; returns the rows.
    async fn sql(&self, selective: bool) -> usize {
        let query = if selective {
            format!("SELECT * FROM t WHERE c0 >= {LO} AND c0 < {}", LO + 100)
        } else {
            "SELECT * FROM t".to_string()
        };
        let df = dar_datafusion::sql(&self.ctx, &query, QueryOptions::new())
            .await
            .unwrap();
        let batches = df.collect().await.unwrap();
        check(&batches, self.width);
        batches.iter().map(RecordBatch::num_rows).sum()
    }

    /// The same rows through dar-scan.
    async fn scan(&self, selective: bool) -> usize {
        let mut scan = self.table.scan().with_batch_size(BATCH);
        if selective {
            scan = scan.with_predicate_sql(format!("c0 >= {LO} AND c0 < {}", LO + 100));
        }
        let batches: Vec<RecordBatch> =
            scan.build().unwrap().execute().try_collect().await.unwrap();
        check(&batches, self.width);
        batches.iter().map(RecordBatch::num_rows).sum()
    }
}

/// Every batch has every column.
fn check(batches: &[RecordBatch], width: usize) {
    for b in batches {
        assert_eq!(b.num_columns(), width);
    }
}

/// Runs each SQL case a few times on the table of `width` columns (for a
/// profiler) and prints the time of each phase: the logical plan
/// (`dar_datafusion::sql`), the physical plan, and running it.
fn once(rt: &tokio::runtime::Runtime, width: usize) {
    let dir = table_dir(rt, width);
    let case = rt.block_on(Case::open(dir.to_str().unwrap(), width));
    for selective in [false, true] {
        let query = if selective {
            format!("SELECT * FROM t WHERE c0 >= {LO} AND c0 < {}", LO + 100)
        } else {
            "SELECT * FROM t".to_string()
        };
        let runs = 5;
        let mut phases = [Duration::ZERO; 3];
        for _ in 0..runs {
            rt.block_on(async {
                let started = Instant::now();
                let df = dar_datafusion::sql(&case.ctx, &query, QueryOptions::new())
                    .await
                    .unwrap();
                let logical = Instant::now();
                let plan = df.create_physical_plan().await.unwrap();
                let physical = Instant::now();
                let batches = datafusion::physical_plan::collect(plan, case.ctx.task_ctx())
                    .await
                    .unwrap();
                black_box(batches);
                phases[0] += logical - started;
                phases[1] += physical - logical;
                phases[2] += physical.elapsed();
            });
        }
        let [l, p, r] = phases.map(|d| d / runs);
        eprintln!(
            "sql_wide once: {width} columns, selective={selective}: logical {l:.1?}, physical {p:.1?}, run {r:.1?}"
        );
    }
}

fn main() {
    let rt = runtime();
    if let Ok(w) = std::env::var("DAR_BENCH_ONCE") {
        once(&rt, w.parse().unwrap());
        return;
    }
    let cases: Vec<Case> = WIDTHS
        .iter()
        .map(|&w| {
            let dir = table_dir(&rt, w);
            rt.block_on(Case::open(dir.to_str().unwrap(), w))
        })
        .collect();
    // Sanity: both engines return every row, and the selective rows.
    for case in &cases {
        let all = CELLS / case.width;
        assert_eq!(rt.block_on(case.sql(false)), all);
        assert_eq!(rt.block_on(case.scan(false)), all);
        assert_eq!(rt.block_on(case.sql(true)), 100);
        assert_eq!(rt.block_on(case.scan(true)), 100);
    }

    let mut c = Criterion::default().configure_from_args();
    let mut g = c.benchmark_group("sql_wide");
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10)
        .measurement_time(Duration::from_secs(6))
        .warm_up_time(Duration::from_secs(1));
    for case in &cases {
        let w = case.width;
        for (query, selective) in [("all", false), ("selective", true)] {
            g.bench_function(format!("{query}/sql/{w}"), |b| {
                b.iter(|| black_box(rt.block_on(case.sql(selective))))
            });
            g.bench_function(format!("{query}/scan/{w}"), |b| {
                b.iter(|| black_box(rt.block_on(case.scan(selective))))
            });
        }
    }
    g.finish();
    c.final_summary();
    summary(&rt, &cases);
}

/// The median of `n` timed runs of `f`.
fn median(n: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..n)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed()
        })
        .collect();
    times.sort();
    times[n / 2]
}

/// Prints each case's time relative to the 100-column table (same cells,
/// so 1.00 is linear in the columns) and the SQL / scan ratio, measured
/// here in one sitting (criterion's own report is above).
fn summary(rt: &tokio::runtime::Runtime, cases: &[Case]) {
    println!("\nsql_wide: median of 9, relative to 100 columns (same cells; 1.00 = linear)");
    println!(
        "{:<10} {:>7} {:>10} {:>7} {:>10} {:>7} {:>9}",
        "query", "columns", "sql", "sql x", "scan", "scan x", "sql/scan"
    );
    for (query, selective) in [("all", false), ("selective", true)] {
        let mut base: Option<(Duration, Duration)> = None;
        for case in cases {
            let sql = median(9, || {
                black_box(rt.block_on(case.sql(selective)));
            });
            let scan = median(9, || {
                black_box(rt.block_on(case.scan(selective)));
            });
            let (sql0, scan0) = *base.get_or_insert((sql, scan));
            println!(
                "{query:<10} {:>7} {:>10.2?} {:>7.2} {:>10.2?} {:>7.2} {:>9.2}",
                case.width,
                sql,
                sql.as_secs_f64() / sql0.as_secs_f64(),
                scan,
                scan.as_secs_f64() / scan0.as_secs_f64(),
                sql.as_secs_f64() / scan.as_secs_f64(),
            );
        }
    }
}
