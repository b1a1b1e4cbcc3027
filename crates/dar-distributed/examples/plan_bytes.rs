//! Measures what dar's codec sends to workers: writes a table of N small
//! files with one deleted row each (default 20,000) in a temp dir, plans a
//! full scan of two columns for 3 workers, encodes each worker's scan as
//! `DeltaScanCodec` does, and prints bytes per file.
//!
//! `cargo run -p dar-distributed --example plan_bytes -- 20000`

use std::error::Error;
use std::sync::Arc;

use dar_datafusion::{DeltaScanExec, register_delta_table};
use dar_distributed::{WorkerHandle, coordinator_state, worker_url};
use dar_io::StorageOptions;
use dar_scan::Table;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_distributed::DistributedLeafExec;

fn scans(plan: &Arc<dyn ExecutionPlan>, out: &mut Vec<Arc<dyn ExecutionPlan>>) {
    if let Some(leaf) = plan.downcast_ref::<DistributedLeafExec>() {
        out.extend(leaf.variants().iter().cloned());
        return;
    }
    if plan.downcast_ref::<DeltaScanExec>().is_some() {
        out.push(Arc::clone(plan));
    }
    for child in plan.children() {
        scans(child, out);
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn Error>> {
    let files: usize = match std::env::args().nth(1) {
        Some(n) => n.parse()?,
        None => 20_000,
    };
    let dir = tempfile::tempdir()?;
    let store = Arc::new(object_store::local::LocalFileSystem::new_with_prefix(
        dir.path(),
    )?);
    dar_testkit::write_many_files(store, "t".into(), files, 2).await?;
    let uri = dir.path().join("t");

    let mut workers = Vec::new();
    let mut urls = Vec::new();
    for _ in 0..3 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let worker = WorkerHandle::start(listener, StorageOptions::new())?;
        urls.push(worker_url(&worker.address().to_string())?);
        workers.push(worker);
    }
    let ctx = SessionContext::from(coordinator_state(SessionConfig::new(), urls));
    let table = Table::open(uri.to_str().ok_or("temp dir is not UTF-8")?).await?;
    register_delta_table(&ctx, "t", table)?;
    let plan = ctx
        .sql("SELECT id, grp FROM t")
        .await?
        .create_physical_plan()
        .await?;
    let mut found = Vec::new();
    scans(&plan, &mut found);
    let mut total = 0;
    for scan in &found {
        let exec = scan
            .downcast_ref::<DeltaScanExec>()
            .ok_or("not a DeltaScanExec")?;
        let bytes = exec.encode()?;
        let spec = exec.scan_plan().context().spec().to_bytes()?;
        println!(
            "worker scan: {} files, {} bytes ({} of them the spec)",
            exec.scan_plan().tasks().len(),
            bytes.len(),
            spec.len()
        );
        total += bytes.len();
    }
    println!(
        "{files} files, {} worker scans: {total} bytes, {:.1} bytes per file",
        found.len(),
        total as f64 / files as f64
    );
    Ok(())
}
