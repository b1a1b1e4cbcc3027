//! The footer cache under concurrency: readers of one file at once fetch
//! its footer once, and a failed footer read is not kept.

use std::sync::Arc;
use std::time::Duration;

use dar_io::testing::{Fault, FaultStore};
use dar_io::{ObjectClass, TableStore};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

use crate::common::parquet_file;

async fn table(faults: &[Fault]) -> (TableStore, Arc<FaultStore<InMemory>>, Path, u64) {
    let data = parquet_file();
    let size = data.len() as u64;
    let inner = InMemory::new();
    let path = Path::from("t/part-0.parquet");
    inner.put(&path, PutPayload::from(data)).await.unwrap();
    let store = Arc::new(FaultStore::new(inner).with_faults(faults.iter().cloned()));
    let table = TableStore::builder("memory://cache-test/t")
        .with_store(Arc::clone(&store) as Arc<dyn ObjectStore>)
        .build()
        .unwrap();
    (table, store, path, size)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_readers_of_one_file_fetch_its_footer_once() {
    // The first request is slow, so every reader asks while it is in flight.
    let (table, store, path, size) = table(&[Fault::Slow(Duration::from_millis(100))]).await;
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let (table, path) = (table.clone(), path.clone());
            tokio::spawn(async move {
                table
                    .parquet_reader(path, Some(size))
                    .load_metadata(None)
                    .await
                    .unwrap()
            })
        })
        .collect();
    let footers = futures::future::try_join_all(tasks).await.unwrap();
    assert_eq!(store.calls(), 1);
    assert_eq!(
        table
            .metrics()
            .snapshot()
            .class(ObjectClass::Footer)
            .requests,
        1
    );
    assert!(footers.iter().all(|f| Arc::ptr_eq(f, &footers[0])));
    let c = table.metadata_cache().stats();
    assert_eq!((c.hits, c.misses, c.entries), (15, 1, 1));
}

#[tokio::test]
async fn a_failed_footer_read_is_not_kept() {
    let (table, store, path, size) = table(&[Fault::ConnectionReset]).await;
    let err = table
        .parquet_reader(path.clone(), Some(size))
        .load_metadata(None)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("part-0.parquet"), "{err}");
    assert_eq!(table.metadata_cache().stats().entries, 0);
    let footer_gets = || {
        table
            .metrics()
            .snapshot()
            .class(ObjectClass::Footer)
            .requests
    };
    assert_eq!(footer_gets(), 1);
    // The next reader reads the footer again, and that one is kept.
    table
        .parquet_reader(path.clone(), Some(size))
        .load_metadata(None)
        .await
        .unwrap();
    assert_eq!(footer_gets(), 2);
    let calls = store.calls();
    table
        .parquet_reader(path, Some(size))
        .load_metadata(None)
        .await
        .unwrap();
    assert_eq!((footer_gets(), store.calls()), (2, calls));
    let c = table.metadata_cache().stats();
    assert_eq!((c.hits, c.misses, c.entries), (1, 2, 1));
}
