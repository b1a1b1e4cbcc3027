use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use arrow_array::{Int64Array, RecordBatch};
use bytes::Bytes;
use parquet::arrow::ArrowWriter;
use parquet::file::metadata::ParquetMetaDataReader;

use super::*;

fn metadata(rows: i64) -> Arc<ParquetMetaData> {
    let batch =
        RecordBatch::try_from_iter([("x", Arc::new(Int64Array::from_iter_values(0..rows)) as _)])
            .unwrap();
    let mut buf = Vec::new();
    let mut w = ArrowWriter::try_new(&mut buf, batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    Arc::new(
        ParquetMetaDataReader::new()
            .parse_and_finish(&Bytes::from(buf))
            .unwrap(),
    )
}

fn key(path: &str, version: Option<&str>) -> ObjectId {
    ObjectId::new(crate::StoreId::new("s3 test b"), path)
        .with_size(Some(100))
        .with_version(version.map(|v| crate::ObjectVersion::Tag(v.to_string())))
}

fn entry(md: &Arc<ParquetMetaData>) -> CachedMetadata {
    CachedMetadata {
        metadata: Arc::clone(md),
        page_index_loaded: false,
    }
}

#[tokio::test]
async fn version_and_size_are_part_of_the_key() {
    let c = MetadataCache::default();
    let md = metadata(10);
    c.insert(key("a", Some("v1")), entry(&md)).await;
    assert!(c.get(&key("a", Some("v1"))).await.is_some());
    assert!(c.get(&key("a", Some("v2"))).await.is_none());
    assert!(c.get(&key("a", None)).await.is_none());
    let mut other_size = key("a", Some("v1"));
    other_size.size = Some(101);
    assert!(c.get(&other_size).await.is_none());
    let mut other_store = key("a", Some("v1"));
    other_store.store = crate::StoreId::new("s3 other-endpoint b");
    assert!(c.get(&other_store).await.is_none());
    let s = c.stats();
    assert_eq!((s.hits, s.misses, s.entries), (1, 4, 1));
}

#[tokio::test]
async fn least_recently_used_is_evicted_within_capacity() {
    let md = metadata(10);
    let one = md.memory_size() + 1;
    // Room for two entries (paths are one byte).
    let c = MetadataCache::new(2 * one);
    c.insert(key("a", None), entry(&md)).await;
    c.insert(key("b", None), entry(&md)).await;
    assert!(c.get(&key("a", None)).await.is_some()); // b is now least recent
    c.insert(key("c", None), entry(&md)).await;
    assert!(c.get(&key("b", None)).await.is_none());
    assert!(c.get(&key("a", None)).await.is_some());
    assert!(c.get(&key("c", None)).await.is_some());
    let s = c.stats();
    assert_eq!((s.entries, s.evictions, s.bytes), (2, 1, 2 * one));
    // Clones share entries.
    assert!(c.clone().get(&key("a", None)).await.is_some());
}

#[tokio::test]
async fn oversized_entries_are_not_kept() {
    let md = metadata(10);
    let c = MetadataCache::new(md.memory_size() / 2);
    c.insert(key("a", None), entry(&md)).await;
    assert_eq!(c.stats().entries, 0);
    assert!(c.get(&key("a", None)).await.is_none());
    // Nor when loaded.
    let loaded = c
        .get_or_try_load(key("b", None), || async { Ok::<_, ()>(entry(&md)) })
        .await
        .unwrap();
    assert!(Arc::ptr_eq(&loaded.metadata, &md));
    let s = c.stats();
    assert_eq!((s.entries, s.bytes, s.evictions), (0, 0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_budget_holds_after_every_insert() {
    let md = metadata(10);
    let one = md.memory_size() + 3;
    let c = MetadataCache::new(5 * one + one / 2);
    // Inserts and loads from many tasks at once, 200 distinct keys.
    let tasks: Vec<_> = (0..8)
        .map(|t| {
            let (c, md) = (c.clone(), Arc::clone(&md));
            tokio::spawn(async move {
                for i in 0..25 {
                    let k = key(&format!("{t}{i:02}"), None);
                    if i % 2 == 0 {
                        c.insert(k, entry(&md)).await;
                    } else {
                        let md = Arc::clone(&md);
                        c.get_or_try_load(k, || async move { Ok::<_, ()>(entry(&md)) })
                            .await
                            .unwrap();
                    }
                    let s = c.stats();
                    assert!(s.bytes <= c.capacity_bytes(), "{s:?}");
                    assert!(s.entries <= 5, "{s:?}");
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let s = c.stats();
    assert_eq!((s.entries, s.bytes), (5, 5 * one), "{s:?}");
    assert_eq!(s.evictions, 200 - 5, "{s:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_loads_of_one_key_run_one_load() {
    let md = metadata(10);
    let c = MetadataCache::default();
    let loads = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let (c, md, loads) = (c.clone(), Arc::clone(&md), Arc::clone(&loads));
            tokio::spawn(async move {
                c.get_or_try_load(key("a", None), || async move {
                    loads.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    Ok::<_, ()>(entry(&md))
                })
                .await
                .unwrap()
            })
        })
        .collect();
    let got = futures::future::try_join_all(tasks).await.unwrap();
    assert_eq!(loads.load(Ordering::SeqCst), 1);
    assert!(got.iter().all(|g| Arc::ptr_eq(&g.metadata, &md)));
    let s = c.stats();
    assert_eq!((s.hits, s.misses, s.entries), (15, 1, 1));
}

#[tokio::test]
async fn a_failed_load_is_not_kept() {
    let md = metadata(10);
    let c = MetadataCache::default();
    let err = c
        .get_or_try_load(key("a", None), || async {
            Err::<CachedMetadata, _>("boom")
        })
        .await
        .unwrap_err();
    assert_eq!(err, "boom");
    assert_eq!(c.stats().entries, 0);
    assert!(c.get(&key("a", None)).await.is_none());
    // The next caller loads again.
    let loads = AtomicUsize::new(0);
    c.get_or_try_load(key("a", None), || async {
        loads.fetch_add(1, Ordering::SeqCst);
        Ok::<_, &str>(entry(&md))
    })
    .await
    .unwrap();
    assert_eq!(loads.load(Ordering::SeqCst), 1);
    assert_eq!(c.stats().entries, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callers_waiting_on_a_failed_load_run_their_own() {
    let md = metadata(10);
    let c = MetadataCache::default();
    let calls = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..4)
        .map(|_| {
            let (c, md, calls) = (c.clone(), Arc::clone(&md), Arc::clone(&calls));
            tokio::spawn(async move {
                c.get_or_try_load(key("a", None), || async move {
                    // The first load fails after the others started waiting.
                    if calls.fetch_add(1, Ordering::SeqCst) == 0 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        return Err("first load failed");
                    }
                    Ok(entry(&md))
                })
                .await
            })
        })
        .collect();
    let results = futures::future::try_join_all(tasks).await.unwrap();
    let failed = results.iter().filter(|r| r.is_err()).count();
    // Only the failed load's own caller sees its error.
    assert_eq!(
        failed,
        1,
        "{:?}",
        results.iter().map(Result::is_ok).collect::<Vec<_>>()
    );
    assert_eq!(c.stats().entries, 1);
    assert!((2..=4).contains(&calls.load(Ordering::SeqCst)));
}
