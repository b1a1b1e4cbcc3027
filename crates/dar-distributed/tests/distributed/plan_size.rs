//! The encoded plan is small per file: the spec once per worker, then one
//! task per file.

use dar_datafusion::register_delta_table;
use dar_io::StorageOptions;
use dar_scan::Table;

use crate::common::{coordinator, encoded_scans, start_workers, write_many_files};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn encoded_plan_bytes_per_file_are_small() {
    let dir = tempfile::tempdir().unwrap();
    let files = 300;
    let many = write_many_files(dir.path(), files, 2).await;
    let workers = start_workers(3, &StorageOptions::new()).await;
    let ctx = coordinator(&workers);
    register_delta_table(&ctx, "many", Table::open(&many).await.unwrap()).unwrap();
    let plan = ctx
        .sql("SELECT id, grp FROM many")
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let encoded = encoded_scans(&plan);
    assert_eq!(encoded.len(), 3, "one scan per worker");
    let total: usize = encoded.iter().map(Vec::len).sum();
    let per_file = total / files;
    eprintln!("encoded plan: {total} bytes for {files} files, {per_file} bytes per file");
    // Each task holds two paths (object key and add.path), a DV descriptor,
    // the partition value and counts; the spec is sent once per worker.
    assert!(per_file < 1024, "{per_file} bytes per file");
}
