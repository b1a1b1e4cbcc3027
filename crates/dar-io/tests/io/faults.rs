//! Injected faults: each is retried or surfaces as an error naming the
//! object; wrong bytes are never returned.

use std::sync::Arc;
use std::time::Duration;

use dar_io::testing::{Fault, FaultStore};
use dar_io::{ObjectClass, ParquetReader, RetryPolicy, StorageOptions, TableStore};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};

use crate::common::*;

const BLOB: &str = "t/blob.bin";

fn blob() -> Vec<u8> {
    (0..10_000u32).map(|i| (i % 251) as u8).collect()
}

async fn setup(policy: RetryPolicy) -> (Arc<FaultStore<InMemory>>, TableStore) {
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
        .with_retry(policy)
        .build()
        .unwrap();
    (faults, table)
}

fn fast() -> RetryPolicy {
    RetryPolicy::default()
        .with_max_attempts(3)
        .with_initial_backoff(Duration::from_millis(1))
        .with_attempt_timeout(Some(Duration::from_millis(300)))
}

async fn read(table: &TableStore) -> object_store::Result<bytes::Bytes> {
    table.store().get_range(&Path::from(BLOB), 100..4100).await
}

fn assert_right_bytes(b: &[u8]) {
    assert_eq!(b, &blob()[100..4100]);
}

#[tokio::test]
async fn each_transient_fault_is_retried_once_and_data_is_right() {
    let cases = [
        Fault::ConnectionReset,
        Fault::ServiceUnavailable,
        Fault::TruncatedBody { keep: 10 },
        Fault::ResetMidBody { keep: 1000 },
        Fault::Slow(Duration::from_secs(5)),
    ];
    for fault in cases {
        let (faults, table) = setup(fast()).await;
        faults.push_faults([fault.clone()]);
        let got = read(&table)
            .await
            .unwrap_or_else(|e| panic!("{fault:?}: {e}"));
        assert_right_bytes(&got);
        assert_eq!(faults.injected(), 1, "{fault:?}");
        assert_eq!(faults.calls(), 2, "{fault:?}: one retry");
        let s = table.metrics().snapshot();
        assert_eq!(s.class(ObjectClass::Other).requests, 2, "{fault:?}");
    }
}

#[tokio::test]
async fn persistent_faults_surface_naming_the_object() {
    let cases = [
        (Fault::ConnectionReset, "connection reset"),
        (Fault::ServiceUnavailable, "503"),
        (Fault::TruncatedBody { keep: 10 }, "truncated"),
        (Fault::ResetMidBody { keep: 10 }, "reset mid-body"),
        (Fault::Slow(Duration::from_secs(5)), "timed out"),
    ];
    for (fault, words) in cases {
        let (faults, table) = setup(fast()).await;
        faults.push_faults(vec![fault.clone(); 3]);
        let err = read(&table).await.unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(BLOB), "{fault:?}: {msg}");
        assert!(msg.contains("after 3 attempts"), "{fault:?}: {msg}");
        let chain = format!("{err:?}");
        assert!(
            chain.contains(words) || msg.contains(words),
            "{fault:?}: {chain}"
        );
        assert_eq!(faults.calls(), 3, "{fault:?}");
    }
}

#[tokio::test]
async fn not_found_is_not_retried() {
    let (faults, table) = setup(fast()).await;
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
async fn parquet_scan_survives_one_fault_of_each_kind() {
    let (faults, table) = setup(fast()).await;
    faults.push_faults([
        Fault::ServiceUnavailable,
        Fault::TruncatedBody { keep: 7 },
        Fault::ConnectionReset,
        Fault::ResetMidBody { keep: 3 },
        Fault::Slow(Duration::from_millis(20)),
    ]);
    let size = table
        .store()
        .head(&Path::from("t/part-0.parquet"))
        .await
        .unwrap()
        .size;
    let r = table.parquet_reader(table.child("part-0.parquet"), Some(size));
    assert_eq!(scan(r, None).await.unwrap(), full_result());
    assert_eq!(faults.injected(), 5);
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
