//! A worker runs only plans whose storage access is dar's scan: a scan of
//! DataFusion's own (a CSV file the worker could read) is refused with an
//! error naming it, and no row of the file comes back.

use dar_distributed::{coordinator_state, worker_url};
use dar_io::StorageOptions;
use datafusion::prelude::{CsvReadOptions, SessionContext};
use datafusion_distributed::DistributedExt;

use crate::common::{config, is_distributed_leaf, start_workers};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_with_datafusions_file_source_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("secret.csv");
    let mut text = String::from("a,b\n");
    for i in 0..200 {
        text.push_str(&format!("{i},worker-local-{i}\n"));
    }
    std::fs::write(&csv, text).unwrap();

    let workers = start_workers(2, &StorageOptions::new()).await;
    let urls = workers
        .iter()
        .map(|w| worker_url(&w.address().to_string()).unwrap())
        .collect();
    // Small partitions, so that the CSV scan is spread over the workers.
    let state = coordinator_state(config(), urls)
        .with_distributed_file_scan_config_bytes_per_partition(64)
        .unwrap();
    let ctx = SessionContext::from(state);
    ctx.register_csv("c", csv.to_str().unwrap(), CsvReadOptions::new())
        .await
        .unwrap();
    let df = ctx.sql("SELECT a, b FROM c WHERE a >= 0").await.unwrap();
    let plan = df.clone().create_physical_plan().await.unwrap();
    assert!(
        is_distributed_leaf(&plan, "DataSourceExec"),
        "{}",
        datafusion_distributed::display_plan_ascii(plan.as_ref(), false)
    );
    let err = df
        .collect()
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.contains("refuses to run this plan: it holds DataFusion's own csv file source"),
        "{err}"
    );
    assert!(!err.contains("worker-local-"), "{err}");
}
