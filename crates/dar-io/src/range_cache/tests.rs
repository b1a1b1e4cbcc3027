#![allow(
    clippy::single_range_in_vec_init,
    reason = "one byte range per read is what these tests read"
)]

use std::sync::Arc;

use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use proptest::prelude::*;

use crate::{ObjectClass, RangeCache, TableStore};

fn data(len: usize, salt: u8) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8 ^ salt).collect()
}

/// A table store over `backend` that caches through `cache`, named as an
/// S3 table so that a disk tier applies.
fn store_over(backend: &Arc<InMemory>, cache: &RangeCache) -> TableStore {
    TableStore::builder("s3://bucket/t")
        .with_store(Arc::clone(backend) as Arc<dyn ObjectStore>)
        .with_store_id(crate::StoreId::new("s3 test-endpoint bucket"))
        .with_range_cache(cache.clone())
        .build()
        .unwrap()
}

async fn put(backend: &InMemory, path: &Path, bytes: Vec<u8>) {
    backend.put(path, PutPayload::from(bytes)).await.unwrap();
}

async fn read(
    ts: &TableStore,
    path: &Path,
    size: u64,
    ranges: &[std::ops::Range<u64>],
) -> Vec<Vec<u8>> {
    let mut reader = ts
        .parquet_reader(path.clone(), Some(size))
        .with_whole_object_threshold(0);
    reader
        .read_ranges(ranges.to_vec())
        .await
        .unwrap()
        .into_iter()
        .map(|b| b.to_vec())
        .collect()
}

fn page_requests(ts: &TableStore) -> u64 {
    ts.metrics()
        .snapshot()
        .class(ObjectClass::PageData)
        .requests
}

#[tokio::test]
async fn a_second_read_fetches_nothing_the_first_fetched() {
    let backend = Arc::new(InMemory::new());
    let path = Path::from("t/part-0.parquet");
    let bytes = data(200_000, 0);
    put(&backend, &path, bytes.clone()).await;
    let ts = store_over(&backend, &RangeCache::new(1 << 20));
    let ranges = vec![10..2_000, 50_000..60_000, 150_000..150_100];
    let first = read(&ts, &path, 200_000, &ranges).await;
    let after_first = ts.metrics().snapshot();
    assert!(after_first.class(ObjectClass::PageData).requests > 0);
    assert_eq!(after_first.cache.misses, 3);
    // A sub-range of what was fetched, the same ranges again, in another order.
    let again = read(
        &ts,
        &path,
        200_000,
        &[50_100..50_200, 150_000..150_100, 10..2_000],
    )
    .await;
    let io = ts.metrics().snapshot().since(&after_first);
    assert_eq!(io.requests(), 0, "{io}");
    assert_eq!((io.cache.hits, io.cache.hit_bytes), (3, 100 + 100 + 1_990));
    assert_eq!(again[0], bytes[50_100..50_200]);
    assert_eq!(again[2], first[0]);
    // A range reaching past what was fetched is fetched.
    read(&ts, &path, 200_000, &[59_000..61_000]).await;
    assert_eq!(ts.metrics().snapshot().since(&after_first).cache.misses, 1);
}

#[tokio::test]
async fn a_rewritten_object_is_fetched_again() {
    let backend = Arc::new(InMemory::new());
    let path = Path::from("t/part-0.parquet");
    put(&backend, &path, data(10_000, 0)).await;
    let ts = store_over(&backend, &RangeCache::new(1 << 20));
    let meta1 = backend.head(&path).await.unwrap();
    let read_meta = |meta: object_store::ObjectMeta| {
        let ts = ts.clone();
        async move {
            let mut r = crate::ParquetReader::from_meta(Arc::clone(ts.store()), &meta)
                .with_store_id(ts.store_id().clone())
                .with_range_cache(Some(ts.range_cache().clone()), ts.metrics().clone())
                .with_whole_object_threshold(0);
            r.read_ranges(vec![100..200]).await.unwrap()[0].to_vec()
        }
    };
    assert_eq!(read_meta(meta1.clone()).await, data(10_000, 0)[100..200]);

    // Same path and size, new content: the new ETag misses.
    put(&backend, &path, data(10_000, 7)).await;
    let meta2 = backend.head(&path).await.unwrap();
    assert_ne!(meta1.e_tag, meta2.e_tag);
    assert_eq!(read_meta(meta2).await, data(10_000, 7)[100..200]);

    // New size: the size in the key misses.
    put(&backend, &path, data(12_000, 9)).await;
    assert_eq!(
        read(&ts, &path, 12_000, &[100..200]).await[0],
        data(12_000, 9)[100..200]
    );
}

#[tokio::test]
async fn bytes_of_an_object_that_changed_under_one_key_are_never_mixed() {
    // The key carries no tag (as for Delta files: path and size from the
    // log); the store's answers do.
    let backend = Arc::new(InMemory::new());
    let path = Path::from("t/part-0.parquet");
    put(&backend, &path, data(10_000, 0)).await;
    let ts = store_over(&backend, &RangeCache::new(1 << 20));
    read(&ts, &path, 10_000, &[0..100]).await;
    put(&backend, &path, data(10_000, 5)).await;
    // One range held (old), one fetched (new): the read notices the new tag
    // and fetches both again.
    let got = read(&ts, &path, 10_000, &[0..100, 9_000..9_100]).await;
    let new = data(10_000, 5);
    assert_eq!(got, vec![new[0..100].to_vec(), new[9_000..9_100].to_vec()]);
    // The old bytes are gone from the cache.
    assert_eq!(read(&ts, &path, 10_000, &[0..100]).await[0], new[0..100]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_budget_holds_under_eight_concurrent_readers() {
    let backend = Arc::new(InMemory::new());
    for f in 0..8 {
        put(
            &backend,
            &Path::from(format!("t/f{f}.parquet")),
            data(300_000, f),
        )
        .await;
    }
    let budget = 256 * 1024;
    let cache = RangeCache::new(budget);
    let ts = store_over(&backend, &cache);
    let readers = (0..8u8).map(|f| {
        let ts = ts.clone();
        let cache = cache.clone();
        tokio::spawn(async move {
            let path = Path::from(format!("t/f{f}.parquet"));
            for round in 0..20u64 {
                let start = (round * 13_000 + u64::from(f) * 1_000) % 280_000;
                let ranges = [
                    start..start + 9_000,
                    (start + 11_000) % 280_000..(start + 11_000) % 280_000 + 5_000,
                ];
                let got = read(&ts, &path, 300_000, &ranges).await;
                let want = data(300_000, f);
                for (r, g) in ranges.iter().zip(&got) {
                    assert_eq!(g[..], want[r.start as usize..r.end as usize]);
                }
                let usage = cache.usage();
                assert!(usage.memory_bytes <= budget, "{usage:?}");
            }
        })
    });
    for r in futures::future::join_all(readers).await {
        r.unwrap();
    }
    assert!(cache.usage().memory_bytes <= budget);
    assert!(ts.metrics().snapshot().cache.evictions > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_process_reads_the_disk_tier_and_refetches_a_corrupt_file() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Arc::new(InMemory::new());
    let path = Path::from("t/part-0.parquet");
    let bytes = data(100_000, 3);
    put(&backend, &path, bytes.clone()).await;
    let first_cache = RangeCache::new(0)
        .with_disk(dir.path(), Some(1 << 30))
        .unwrap();
    let first = store_over(&backend, &first_cache);
    read(&first, &path, 100_000, &[1_000..5_000, 70_000..80_000]).await;
    assert!(page_requests(&first) > 0);
    first_cache.flush().await;

    // A new cache over the same directory, as a later process opens it.
    let second = store_over(
        &backend,
        &RangeCache::new(1 << 20)
            .with_disk(dir.path(), Some(1 << 30))
            .unwrap(),
    );
    let got = read(&second, &path, 100_000, &[1_000..5_000, 75_000..76_000]).await;
    assert_eq!(got[1], bytes[75_000..76_000]);
    let io = second.metrics().snapshot();
    // One HEAD checks the object is still the version the entries hold.
    assert_eq!((io.requests(), io.bytes()), (1, 0), "{io}");
    assert_eq!((io.cache.disk_hits, io.cache.validations), (2, 1));

    // Damage every byte of every cache file: the next process refetches
    // and says so.
    for f in crate::testing::files_under(&second.range_cache().disk_namespace().unwrap()) {
        let mut b = std::fs::read(&f).unwrap();
        if !b.starts_with(b"DARCACHE") {
            continue;
        }
        for x in b.iter_mut().skip(40) {
            *x ^= 1;
        }
        std::fs::write(&f, b).unwrap();
    }
    let third = store_over(
        &backend,
        &RangeCache::new(0)
            .with_disk(dir.path(), Some(1 << 30))
            .unwrap(),
    );
    let got = read(&third, &path, 100_000, &[1_000..5_000]).await;
    assert_eq!(got[0], bytes[1_000..5_000]);
    let io = third.metrics().snapshot();
    assert_eq!(
        (io.cache.corrupt, io.cache.disk_hits, io.cache.misses),
        (1, 0, 1)
    );
    // A rewritten object (new ETag) is not served from the entries of the
    // old one, in this process or another.
    put(&backend, &path, data(100_000, 77)).await;
    let fourth = store_over(
        &backend,
        &RangeCache::new(0)
            .with_disk(dir.path(), Some(1 << 30))
            .unwrap(),
    );
    let got = read(&fourth, &path, 100_000, &[70_000..80_000]).await;
    assert_eq!(got[0], data(100_000, 77)[70_000..80_000]);
    assert_eq!(fourth.metrics().snapshot().cache.disk_hits, 0);
    assert!(page_requests(&third) > 0);
}

#[test]
fn a_memory_store_never_uses_the_disk_tier() {
    let dir = tempfile::tempdir().unwrap();
    let cache = RangeCache::new(1024)
        .with_disk(dir.path(), Some(1 << 20))
        .unwrap();
    let ts = TableStore::builder("memory://x/t")
        .with_range_cache(cache)
        .build()
        .unwrap();
    assert!(ts.range_cache().disk_dir().is_none());
    assert_eq!(ts.range_cache().usage().memory_budget, 1024);
    let err = RangeCache::new(0)
        .with_disk(dir.path().join("f").join("x"), Some(1))
        .map(|_| ())
        .and_then(|()| {
            std::fs::write(dir.path().join("file"), b"x").unwrap();
            RangeCache::new(0)
                .with_disk(dir.path().join("file"), Some(1))
                .map(|_| ())
        })
        .unwrap_err();
    assert!(err.to_string().contains("file"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Whatever the budget and the reads, every read returns the object's
    /// bytes, and the memory tier never holds more than its budget.
    #[test]
    fn reads_are_exact_and_bounded(
        budget in 1usize..40_000,
        reads in proptest::collection::vec(
            proptest::collection::vec((0u64..30_000, 0u64..6_000), 1..5), 1..12),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let backend = Arc::new(InMemory::new());
            let path = Path::from("t/p.parquet");
            let bytes = data(36_000, 1);
            put(&backend, &path, bytes.clone()).await;
            let cache = RangeCache::new(budget);
            let ts = store_over(&backend, &cache);
            for ranges in reads {
                let ranges: Vec<_> = ranges.iter().map(|(s, l)| *s..s + l).collect();
                let got = read(&ts, &path, 36_000, &ranges).await;
                for (r, g) in ranges.iter().zip(&got) {
                    prop_assert_eq!(&g[..], &bytes[r.start as usize..r.end as usize]);
                }
                prop_assert!(cache.usage().memory_bytes <= budget);
            }
            Ok(())
        })?;
    }
}
