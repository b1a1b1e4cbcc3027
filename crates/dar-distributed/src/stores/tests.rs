#![allow(clippy::unwrap_used, reason = "tests")]

use std::sync::Arc;
use std::time::Duration;

use dar_io::StorageOptions;

use super::*;

fn uri(i: usize) -> String {
    format!("memory://worker-test/table-{i}")
}

/// The store a runtime reads through, to tell runtimes apart.
fn store_of(stores: &WorkerStores, uri: &str) -> Arc<dyn object_store::ObjectStore> {
    Arc::clone(stores.runtime(uri).unwrap().store().store())
}

#[test]
fn later_scans_of_a_table_share_its_runtime() {
    let stores = WorkerStores::new("w", StorageOptions::new());
    let first = store_of(&stores, &uri(0));
    assert!(Arc::ptr_eq(&first, &store_of(&stores, &uri(0))));
    assert!(!Arc::ptr_eq(&first, &store_of(&stores, &uri(1))));
    assert_eq!(stores.open_tables(), 2);
}

#[test]
fn a_worker_touching_more_tables_than_the_bound_keeps_only_the_bound() {
    let stores = WorkerStores::new("w", StorageOptions::new())
        .with_table_bounds(4, Duration::from_secs(3600));
    let kept = store_of(&stores, &uri(0));
    for i in 1..40 {
        stores.runtime(&uri(i)).unwrap();
        // The first table is in use throughout: it stays.
        assert!(Arc::ptr_eq(&kept, &store_of(&stores, &uri(0))), "table {i}");
        assert!(
            stores.open_tables() <= 4,
            "after {i}: {}",
            stores.open_tables()
        );
    }
    assert_eq!(stores.open_tables(), 4);
}

#[test]
fn idle_tables_are_closed() {
    let stores = WorkerStores::new("w", StorageOptions::new())
        .with_table_bounds(100, Duration::from_millis(50));
    let first = store_of(&stores, &uri(0));
    stores.runtime(&uri(1)).unwrap();
    assert_eq!(stores.open_tables(), 2);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(stores.open_tables(), 0);
    // Reopened on the next scan, with fresh caches.
    assert!(!Arc::ptr_eq(&first, &store_of(&stores, &uri(0))));
}

#[test]
fn a_store_that_cannot_be_opened_is_an_error_naming_the_table() {
    let stores = WorkerStores::new("w", StorageOptions::new());
    let err = stores.runtime("nope://x/y").unwrap_err().to_string();
    assert!(err.contains("nope://x/y"), "{err}");
    assert_eq!(stores.open_tables(), 0);
}
