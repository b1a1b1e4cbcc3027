//! Helpers: workers, coordinating and single-process sessions, a generated
//! many-file table with one deleted row per file, rows as sorted lines.

use std::path::Path;
use std::sync::Arc;

use arrow_array::RecordBatch;
use dar_datafusion::DeltaScanExec;
use dar_distributed::{
    ClientOptions, DeltaScanCodec, WorkerHandle, WorkerOptions, WorkerStores, coordinator_state,
    coordinator_state_with, worker_url,
};
use dar_io::StorageOptions;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_distributed::DistributedLeafExec;
use datafusion_proto::physical_plan::{DefaultPhysicalProtoConverter, PhysicalExtensionCodec};
use object_store::local::LocalFileSystem;

/// Partitions per scan in both sessions.
pub const PARTITIONS: usize = 2;

/// `n` workers on free 127.0.0.1 ports, opening tables with `storage`.
pub async fn start_workers(n: usize, storage: &StorageOptions) -> Vec<WorkerHandle> {
    start_workers_with(n, &WorkerOptions::new(storage.clone())).await
}

/// `n` workers on free 127.0.0.1 ports, with `options`.
pub async fn start_workers_with(n: usize, options: &WorkerOptions) -> Vec<WorkerHandle> {
    let mut workers = Vec::new();
    for _ in 0..n {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        workers.push(WorkerHandle::start_with(listener, options.clone()).unwrap());
    }
    workers
}

/// The session options of every test session.
pub fn config() -> SessionConfig {
    SessionConfig::new().with_target_partitions(PARTITIONS)
}

/// A session that runs its stages on `workers`.
pub fn coordinator(workers: &[WorkerHandle]) -> SessionContext {
    let urls = workers
        .iter()
        .map(|w| worker_url(&w.address().to_string()).unwrap())
        .collect();
    SessionContext::from(coordinator_state(config(), urls))
}

/// A session that runs its stages on `workers` at `scheme://address`,
/// calling them with `client`.
pub fn coordinator_with(
    workers: &[WorkerHandle],
    scheme: &str,
    client: ClientOptions,
) -> SessionContext {
    let urls = workers
        .iter()
        .map(|w| worker_url(&format!("{scheme}://{}", w.address())).unwrap())
        .collect();
    SessionContext::from(coordinator_state_with(config(), urls, client))
}

/// A plain single-process session with the same options.
pub fn single() -> SessionContext {
    SessionContext::new_with_config(config())
}

/// Rows as sorted display lines (exact comparison, any order).
pub fn lines(batches: &[RecordBatch]) -> Vec<String> {
    let text = arrow_cast::pretty::pretty_format_batches(batches)
        .unwrap()
        .to_string();
    let mut rows: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("| "))
        .skip(1)
        .map(str::to_string)
        .collect();
    rows.sort();
    rows
}

/// Whether `plan` runs anything on workers.
pub fn is_distributed(plan: &Arc<dyn ExecutionPlan>) -> bool {
    let text = datafusion_distributed::display_plan_ascii(plan.as_ref(), false);
    text.contains("DistributedExec") && text.contains("DeltaScanExec")
}

/// Writes `dar_testkit::write_many_files` (one deleted row per file)
/// under `dir`; returns the table's path.
pub async fn write_many_files(dir: &Path, files: usize, rows: usize) -> String {
    let store = Arc::new(LocalFileSystem::new_with_prefix(dir).unwrap());
    dar_testkit::write_many_files(store, "t".into(), files, rows)
        .await
        .unwrap();
    dir.join("t").to_str().unwrap().to_string()
}

/// The bytes dar's codec writes for every scan of `plan` that a worker
/// receives: each per-worker variant of a distributed leaf, or the scan.
pub fn encoded_scans(plan: &Arc<dyn ExecutionPlan>) -> Vec<Vec<u8>> {
    let codec = DeltaScanCodec::new(Arc::new(WorkerStores::new("test", StorageOptions::new())));
    let mut out = Vec::new();
    let mut stack = vec![Arc::clone(plan)];
    while let Some(node) = stack.pop() {
        if let Some(leaf) = node.downcast_ref::<DistributedLeafExec>() {
            stack.extend(leaf.variants().iter().cloned());
            continue;
        }
        if node.downcast_ref::<DeltaScanExec>().is_some() {
            let mut buf = Vec::new();
            codec
                .try_encode(
                    Arc::clone(&node),
                    &mut buf,
                    &DefaultPhysicalProtoConverter {},
                )
                .unwrap();
            out.push(buf);
        }
        stack.extend(node.children().into_iter().cloned());
    }
    out
}

/// Whether `plan` sends a leaf named `leaf` to the workers.
pub fn is_distributed_leaf(plan: &Arc<dyn ExecutionPlan>, leaf: &str) -> bool {
    let text = datafusion_distributed::display_plan_ascii(plan.as_ref(), false);
    text.contains("DistributedExec")
        && text.contains("DistributedLeafExec")
        && text.contains(&format!("t0: {leaf}"))
}
