//! A custom engine embedding dar-scan: plan on one side, run the tasks on a
//! thread pool of its own on the other, with nothing but bytes between.
//!
//! ```text
//! cargo run -p dar-scan --example custom_engine -- [TABLE_URI] [FILTER]
//! ```
//!
//! 1. The planner opens the table, describes the scan, and serializes the
//!    spec (`ScanSpec::to_bytes`) and each task (`ScanTask::to_bytes`).
//! 2. Each worker thread runs its own single-threaded Tokio runtime. It
//!    decodes the spec once, opens the store from the spec's URI with its
//!    own storage options (`ScanRuntime::open`), pairs them
//!    (`ScanContext::new`), and executes the tasks it is handed
//!    (`ScanTask::execute`).
//! 3. The planner sums the rows and metrics the workers report, and checks
//!    them against the same plan executed in one process.
//!
//! The default table is the sample committed in `examples/data/sample`.

use std::sync::mpsc;
use std::thread;

use dar_io::StorageOptions;
use dar_scan::{MetricsSnapshot, ScanContext, ScanRuntime, ScanSpec, ScanTask, Table};
use futures::TryStreamExt;

/// Worker threads of the engine's own pool.
const WORKERS: usize = 2;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What one worker did: rows returned and its scan metrics.
struct Report {
    rows: usize,
    metrics: MetricsSnapshot,
}

/// One worker: decodes the spec, then runs every task it receives.
fn worker(spec: Vec<u8>, tasks: mpsc::Receiver<Vec<u8>>) -> Result<Report, BoxError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let spec = ScanSpec::from_bytes(&spec)?;
        // The worker's own credentials: here, the environment's.
        let scan_runtime = ScanRuntime::open(spec.table_uri(), StorageOptions::new())?;
        let context = ScanContext::new(spec, scan_runtime)?;
        let mut rows = 0;
        for bytes in tasks {
            let task = ScanTask::from_bytes(&bytes)?;
            let batches: Vec<_> = task.execute(&context).try_collect().await?;
            rows += batches.iter().map(|b| b.num_rows()).sum::<usize>();
        }
        Ok(Report {
            rows,
            metrics: context.metrics().snapshot(),
        })
    })
}

fn main() -> Result<(), BoxError> {
    let mut args = std::env::args().skip(1);
    let uri = args.next().unwrap_or_else(|| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/sample").to_string()
    });
    let filter = args.next();

    // 1. Plan.
    let planner = tokio::runtime::Runtime::new()?;
    let plan = planner.block_on(async {
        let table = Table::open(&uri).await?;
        let mut scan = table.scan();
        if let Some(f) = &filter {
            scan = scan.with_predicate_sql(f.as_str());
        }
        Ok::<_, BoxError>(scan.build()?)
    })?;
    let spec = plan.context().spec().to_bytes()?;
    let tasks = plan
        .tasks()
        .iter()
        .map(ScanTask::to_bytes)
        .collect::<Result<Vec<_>, _>>()?;
    println!(
        "planned {} task(s) of {} ({} spec bytes, {} task bytes)",
        tasks.len(),
        uri,
        spec.len(),
        tasks.iter().map(Vec::len).sum::<usize>()
    );

    // 2. Execute on the engine's own threads, tasks dealt round-robin.
    let mut senders = Vec::new();
    let mut handles = Vec::new();
    for _ in 0..WORKERS {
        let (tx, rx) = mpsc::channel();
        let spec = spec.clone();
        senders.push(tx);
        handles.push(thread::spawn(move || worker(spec, rx)));
    }
    for (i, task) in tasks.into_iter().enumerate() {
        senders[i % WORKERS].send(task)?;
    }
    drop(senders);
    let mut rows = 0;
    let mut files_read = 0;
    let mut row_groups_pruned = 0;
    let mut rows_deleted = 0;
    let mut requests = 0;
    for (i, h) in handles.into_iter().enumerate() {
        let report = h.join().map_err(|_| format!("worker {i} panicked"))??;
        println!(
            "worker {i}: {} rows, {} file(s) read, {} request(s)",
            report.rows,
            report.metrics.files_read,
            report.metrics.io.requests()
        );
        rows += report.rows;
        files_read += report.metrics.files_read;
        row_groups_pruned += report.metrics.row_groups_pruned;
        rows_deleted += report.metrics.rows_deleted_by_dv;
        requests += report.metrics.io.requests();
    }
    println!(
        "rows: {rows} (files read {files_read}, row groups pruned {row_groups_pruned}, \
         rows deleted by deletion vectors {rows_deleted}, requests {requests})"
    );

    // 3. The same plan in one process returns the same rows.
    let local: usize = planner.block_on(async {
        let batches = plan.collect().await?;
        Ok::<_, BoxError>(batches.iter().map(|b| b.num_rows()).sum())
    })?;
    if local != rows {
        return Err(format!("workers returned {rows} rows, the plan in-process {local}").into());
    }
    Ok(())
}
