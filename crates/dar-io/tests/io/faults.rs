//! Injected faults over an in-process store: each surfaces at once as an
//! error naming the object (nothing in dar retries on top of object_store's
//! HTTP client, and an in-process store has nothing transient); wrong bytes
//! are never returned.

use std::sync::Arc;
use std::time::Duration;

use dar_io::testing::{Fault, FaultStore};
use dar_io::{ObjectClass, ParquetReader, StorageOptions, TableStore};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};

use crate::common::*;

const BLOB: &str = "t/blob.bin";

fn blob() -> Vec<u8> {
    (0..10_000u32).map(|i| (i % 251) as u8).collect()
}

async fn setup() -> (Arc<FaultStore<InMemory>>, TableStore) {
    let inner = InMemory::new();
    inner.put(&Path::from(BLOB), blob().into()).await.unwrap();
    inner
        .put(&Path::from("t/part-0.parquet"), parquet_file().into())
        .await
        .unwrap();
    let faults = Arc::new(FaultStore::new(inner));
    let table = TableStore::builder("memory://t")
        .with_options(StorageOptions::new())
        .with_store(Arc::clone(&faults) as Arc<dyn ObjectStore>)
        .build()
        .unwrap();
    (faults, table)
}

async fn read(table: &TableStore) -> object_store::Result<bytes::Bytes> {
    table.store().get_range(&Path::from(BLOB), 100..4100).await
}

#[tokio::test]
async fn each_fault_surfaces_once_naming_the_object() {
    let cases = [
        (Fault::ConnectionReset, "connection reset"),
        (Fault::ServiceUnavailable, "503"),
        (Fault::TruncatedBody { keep: 10 }, "truncated"),
        (Fault::ResetMidBody { keep: 10 }, "reset mid-body"),
    ];
    for (fault, words) in cases {
        let (faults, table) = setup().await;
        faults.push_faults([fault.clone(), fault.clone()]);
        let err = read(&table).await.unwrap_err();
        let chain = format!("{err} {err:?}");
        assert!(chain.contains(words), "{fault:?}: {chain}");
        if matches!(fault, Fault::TruncatedBody { .. }) {
            assert!(err.to_string().contains(BLOB), "{fault:?}: {err}");
        }
        assert_eq!(faults.calls(), 1, "{fault:?}: no retry on top");
        let s = table.metrics().snapshot();
        assert_eq!(s.class(ObjectClass::Other).requests, 1, "{fault:?}");
        // The next read is clean and right: a fault is never cached.
        faults.push_faults(Vec::new());
    }
}

#[tokio::test]
async fn a_slow_response_is_waited_for_not_retried() {
    let (faults, table) = setup().await;
    faults.push_faults([Fault::Slow(Duration::from_millis(50))]);
    assert_eq!(read(&table).await.unwrap(), blob()[100..4100]);
    assert_eq!(faults.calls(), 1);
}

#[tokio::test]
async fn not_found_is_not_retried() {
    let (faults, table) = setup().await;
    let err = table
        .store()
        .get(&Path::from("t/missing.bin"))
        .await
        .unwrap_err();
    assert!(matches!(err, object_store::Error::NotFound { .. }), "{err}");
    assert!(err.to_string().contains("t/missing.bin"), "{err}");
    assert_eq!(faults.calls(), 1);
}

#[tokio::test]
async fn reader_without_retry_layer_rejects_truncated_bodies() {
    // Straight over the faulty store: the reader's own length check.
    let inner = InMemory::new();
    let data = parquet_file();
    let size = data.len() as u64;
    inner
        .put(&Path::from("t/part-0.parquet"), data.into())
        .await
        .unwrap();
    let faults = Arc::new(FaultStore::new(inner).with_faults([Fault::TruncatedBody { keep: 100 }]));
    let reader = ParquetReader::new(faults, Path::from("t/part-0.parquet")).with_size(Some(size));
    let err = scan(reader, None).await.unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("t/part-0.parquet"), "{msg}");
    assert!(msg.contains("truncated"), "{msg}");
}

#[tokio::test]
async fn parquet_scan_with_a_short_body_fails_naming_the_file() {
    let (faults, table) = setup().await;
    let size = table
        .store()
        .head(&Path::from("t/part-0.parquet"))
        .await
        .unwrap()
        .size;
    faults.push_faults([Fault::TruncatedBody { keep: 7 }]);
    let r = table.parquet_reader(table.child("part-0.parquet"), Some(size));
    let err = scan(r, None).await.unwrap_err().to_string();
    assert!(err.contains("t/part-0.parquet"), "{err}");
    assert!(err.contains("truncated"), "{err}");
}

#[tokio::test]
async fn concurrency_limit_caps_requests_in_flight() {
    for limit in [1usize, 2, 4] {
        let inner = InMemory::new();
        inner.put(&Path::from(BLOB), blob().into()).await.unwrap();
        let faults = Arc::new(FaultStore::new(inner).with_faults(vec![
            Fault::Slow(
                Duration::from_millis(30)
            );
            8
        ]));
        let table = TableStore::builder("memory://t")
            .with_store(Arc::clone(&faults) as Arc<dyn ObjectStore>)
            .with_max_concurrency(limit)
            .build()
            .unwrap();
        let path = Path::from(BLOB);
        let reads = (0..8).map(|i| table.store().get_range(&path, i * 10..i * 10 + 10));
        let got = futures::future::try_join_all(reads).await.unwrap();
        assert_eq!(got.len(), 8);
        assert_eq!(faults.max_in_flight(), limit as u64, "limit {limit}");
    }
}

#[tokio::test]
async fn a_file_longer_than_its_given_size_is_named_with_both_sizes() {
    let inner = InMemory::new();
    // Another file took its place: bytes before the original ones, so the
    // end of the given size is not a footer.
    let original = parquet_file();
    let real = original.len() as u64;
    let mut data = b"inserted bytes".to_vec();
    data.extend_from_slice(&original);
    let longer = data.len() as u64;
    inner
        .put(&Path::from("t/part-0.parquet"), data.into())
        .await
        .unwrap();
    let reader = ParquetReader::new(Arc::new(inner), Path::from("t/part-0.parquet"))
        .with_size(Some(real))
        .with_whole_object_threshold(0);
    let err = scan(reader, None).await.unwrap_err().to_string();
    assert!(err.contains("t/part-0.parquet"), "{err}");
    assert!(
        err.contains(&format!("is {longer} bytes")) && err.contains(&real.to_string()),
        "{err}"
    );
}
