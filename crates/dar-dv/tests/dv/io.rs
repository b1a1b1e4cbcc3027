//! Fetching and caching: exact ranged reads, no I/O when none is needed,
//! coalesced concurrent loads, the byte budget, and errors naming the file.

use std::sync::Arc;

use dar_dv::{DeletedRows, DvCache, DvDescriptor, DvError, DvFileWriter, DvSource, fetch_range};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use url::Url;

use dar_io::testing::RecordingStore;

/// A DV file with three records in an in-memory store.
async fn three_record_store() -> (
    Arc<RecordingStore<InMemory>>,
    Url,
    Vec<(DvDescriptor, Vec<u64>)>,
) {
    let sets: [Vec<u64>; 3] = [
        vec![0, 9],
        (0..5000).map(|i| i * 3).collect(),
        vec![1 << 40],
    ];
    let mut writer = DvFileWriter::new();
    let uuid = uuid::Uuid::from_u128(0x1234_5678_9abc_def0_1234_5678_9abc_def0);
    let descriptors: Vec<_> = sets
        .iter()
        .map(|set| {
            let record = writer.add(&set.iter().copied().collect()).unwrap();
            (DvDescriptor::uuid_file("ab", uuid, &record), set.clone())
        })
        .collect();
    let inner = InMemory::new();
    let path = Path::from(format!("tables/t/ab/deletion_vector_{uuid}.bin"));
    inner.put(&path, writer.finish().into()).await.unwrap();
    let store = Arc::new(RecordingStore::new(inner));
    (
        store,
        Url::parse("memory:///tables/t").unwrap(),
        descriptors,
    )
}

#[tokio::test]
async fn each_record_is_one_exact_ranged_read() {
    let (store, root, descriptors) = three_record_store().await;
    let dyn_store: Arc<dyn ObjectStore> = store.clone();
    let cache = DvCache::new(1 << 20);
    let mut expected_ranges = Vec::new();
    for (dv, set) in &descriptors {
        let rows = cache.load(&dyn_store, &root, dv).await.unwrap();
        assert_eq!(rows.iter().collect::<Vec<_>>(), *set);
        let start = dv.effective_offset();
        let end = start + 8 + u64::from(dv.size_in_bytes());
        // The first record also takes the version byte in front of it.
        expected_ranges.push(Some(if start == 1 { 0..end } else { start..end }));
        assert_eq!(
            fetch_range(dv),
            expected_ranges.last().unwrap().clone().unwrap()
        );
    }
    let requests = store.gets();
    assert_eq!(
        requests.iter().map(|r| r.bounded()).collect::<Vec<_>>(),
        expected_ranges
    );
    assert!(
        requests
            .iter()
            .all(|r| r.path.starts_with("tables/t/ab/deletion_vector_"))
    );
    // Loading again is served by the cache.
    for (dv, _) in &descriptors {
        cache.load(&dyn_store, &root, dv).await.unwrap();
    }
    assert_eq!(store.gets().len(), 3);
    assert_eq!(cache.stats().hits, 3);
}

#[tokio::test]
async fn empty_and_inline_dvs_do_no_io() {
    let (store, root, _) = three_record_store().await;
    let dyn_store: Arc<dyn ObjectStore> = store.clone();
    let cache = DvCache::new(1 << 20);
    let empty_inline = DvDescriptor::try_new("i", "", None, 0, 0).unwrap();
    assert!(
        cache
            .load(&dyn_store, &root, &empty_inline)
            .await
            .unwrap()
            .is_empty()
    );
    let inline = DvDescriptor::inline(&DeletedRows::from_iter([7, 1 << 33])).unwrap();
    let rows = cache.load(&dyn_store, &root, &inline).await.unwrap();
    assert_eq!(rows.iter().collect::<Vec<_>>(), [7, 1 << 33]);
    assert!(store.gets().is_empty());
    assert_eq!(cache.stats().entries, 1); // only the non-empty inline DV
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_first_loads_share_one_fetch() {
    let (store, root, descriptors) = three_record_store().await;
    store.set_delay(std::time::Duration::from_millis(50));
    let dyn_store: Arc<dyn ObjectStore> = store.clone();
    let cache = Arc::new(DvCache::new(1 << 20));
    let (dv, set) = descriptors[1].clone();
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let (cache, store, root, dv) =
                (cache.clone(), dyn_store.clone(), root.clone(), dv.clone());
            tokio::spawn(async move { cache.load(&store, &root, &dv).await.unwrap() })
        })
        .collect();
    let results = futures::future::join_all(tasks).await;
    for rows in &results {
        assert_eq!(rows.as_ref().unwrap().len(), set.len() as u64);
    }
    // All 16 got the same decoded set from one request.
    assert_eq!(store.gets().len(), 1);
    let first = results[0].as_ref().unwrap();
    assert!(
        results
            .iter()
            .all(|r| Arc::ptr_eq(r.as_ref().unwrap(), first))
    );
    assert_eq!(cache.stats().loads, 1);
    assert_eq!(cache.stats().hits, 15);
}

#[tokio::test]
async fn cache_stays_within_its_byte_budget() {
    let (store, root, descriptors) = three_record_store().await;
    let dyn_store: Arc<dyn ObjectStore> = store.clone();
    let big = DeletedRows::from_iter(descriptors[1].1.iter().copied()).memory_size();
    let small = DeletedRows::from_iter([0, 9]).memory_size();
    // Room for the small ones and the big one, but not all three at once.
    let cache = DvCache::new(big + small);
    let [a, b, c] = [0, 1, 2].map(|i| descriptors[i].0.clone());
    cache.load(&dyn_store, &root, &a).await.unwrap();
    cache.load(&dyn_store, &root, &c).await.unwrap();
    cache.load(&dyn_store, &root, &a).await.unwrap(); // a is now most recent
    cache.load(&dyn_store, &root, &b).await.unwrap(); // evicts c, the least recent
    let stats = cache.stats();
    assert!(stats.bytes <= cache.capacity_bytes(), "{stats:?}");
    assert_eq!((stats.entries, stats.evictions), (2, 1));
    let before = store.gets().len();
    cache.load(&dyn_store, &root, &a).await.unwrap(); // still cached
    assert_eq!(store.gets().len(), before);
    cache.load(&dyn_store, &root, &c).await.unwrap(); // fetched again
    assert_eq!(store.gets().len(), before + 1);
    // A DV larger than the whole budget is returned but not kept.
    let tiny = DvCache::new(1);
    assert_eq!(tiny.load(&dyn_store, &root, &b).await.unwrap().len(), 5000);
    assert_eq!(tiny.stats().entries, 0);
}

#[tokio::test]
async fn absolute_path_dvs_load_from_the_same_store() {
    let mut writer = DvFileWriter::new();
    writer.add(&DeletedRows::from_iter([1, 2])).unwrap();
    let record = writer.add(&DeletedRows::from_iter([4, 1 << 35])).unwrap();
    let inner = InMemory::new();
    let path = Path::from("shared dvs/file.bin");
    inner.put(&path, writer.finish().into()).await.unwrap();
    let store = Arc::new(RecordingStore::new(inner));
    let dyn_store: Arc<dyn ObjectStore> = store.clone();
    let root = Url::parse("memory:///tables/t/").unwrap();
    let dv = DvDescriptor::try_new(
        "p",
        "memory:///shared%20dvs/file.bin",
        Some(record.offset as i64),
        i64::from(record.size_in_bytes),
        2,
    )
    .unwrap();
    let rows = DvCache::new(1 << 20)
        .load(&dyn_store, &root, &dv)
        .await
        .unwrap();
    assert_eq!(rows.iter().collect::<Vec<_>>(), [4, 1 << 35]);
    let end = record.offset + 8 + u64::from(record.size_in_bytes);
    let reads: Vec<_> = store
        .gets()
        .iter()
        .map(|g| (g.path.clone(), g.bounded()))
        .collect();
    assert_eq!(
        reads,
        [("shared dvs/file.bin".to_owned(), Some(record.offset..end))]
    );
    // The same file through another store origin is refused, not misread.
    let other = Url::parse("s3://bucket/t/").unwrap();
    let err = DvCache::new(1 << 20)
        .load(&dyn_store, &other, &dv)
        .await
        .unwrap_err();
    assert!(matches!(err, DvError::InvalidPath { .. }), "{err:?}");
}

#[tokio::test]
async fn fetch_errors_name_the_dv_file() {
    let (store, root, descriptors) = three_record_store().await;
    let dyn_store: Arc<dyn ObjectStore> = store.clone();
    let cache = DvCache::new(1 << 20);
    // A file that does not exist.
    let missing = DvDescriptor::uuid_file(
        "zz",
        uuid::Uuid::nil(),
        &dar_dv::DvRecord {
            offset: 1,
            size_in_bytes: 36,
            cardinality: 2,
        },
    );
    let err = cache.load(&dyn_store, &root, &missing).await.unwrap_err();
    assert!(matches!(err, DvError::Fetch { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("tables/t/zz/deletion_vector_00000000-0000-0000-0000-000000000000.bin"),
        "{text}"
    );
    // A descriptor whose size does not match the record: checked, named.
    let (dv, _) = &descriptors[0];
    let wrong = DvDescriptor::try_new("u", dv.path_or_inline_dv(), Some(1), 40, 2).unwrap();
    let err = cache.load(&dyn_store, &root, &wrong).await.unwrap_err();
    assert!(
        matches!(&err, DvError::SizeMismatch { dv: DvSource::File { path, offset: 1 }, in_file: 36, in_descriptor: 40 }
            if path.ends_with(".bin")),
        "{err:?}"
    );
    // A failed load is not cached: the good descriptor still loads.
    assert_eq!(cache.load(&dyn_store, &root, dv).await.unwrap().len(), 2);
    // The row-count bound applies to cached rows too.
    let bounded = dv.clone().with_row_count(9);
    let err = cache.load(&dyn_store, &root, &bounded).await.unwrap_err();
    assert!(
        matches!(
            err,
            DvError::RowIndexOutOfRange {
                row: 9,
                row_count: 9,
                ..
            }
        ),
        "{err:?}"
    );
}

/// Regression (issue 10, item 6): a file DV whose cardinality says 0 is read
/// like any other, so a missing DV file is an error, not "nothing deleted".
#[tokio::test]
async fn cardinality_zero_file_dv_is_still_read() {
    let (store, root, _) = three_record_store().await;
    let dyn_store: Arc<dyn ObjectStore> = store.clone();
    let cache = DvCache::new(1 << 20);
    let missing = DvDescriptor::try_new("u", "ab0000000000000000000", Some(1), 36, 0).unwrap();
    let err = cache.load(&dyn_store, &root, &missing).await.unwrap_err();
    assert!(err.to_string().contains("deletion_vector_"), "{err}");
}

/// A real Delta-Spark DV file read through a descriptor whose cardinality
/// was changed to 0: the bitmap's two rows make it a cardinality error.
#[tokio::test]
async fn real_dv_with_cardinality_zero_is_an_error() {
    let Some(table) = dar_testdata::table("kernel/table-with-dv-small") else {
        return;
    };
    let store: Arc<dyn ObjectStore> =
        Arc::new(object_store::local::LocalFileSystem::new_with_prefix(&table).unwrap());
    let dv = DvDescriptor::try_new("u", "vBn[lx{q8@P<9BNH/isA", Some(1), 36, 0).unwrap();
    let location =
        object_store::path::Path::from("deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin");
    let err = DvCache::new(1 << 20)
        .load_at("test-store", &store, &location, &dv)
        .await;
    assert!(err.is_err(), "{:?}", err.map(|r| r.len()));
}

/// Many DVs through a small cache, loaded by many tasks at once: after every
/// load the cache is within its budget, and what left was evicted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_budget_holds_after_every_load() {
    let mut writer = DvFileWriter::new();
    let uuid = uuid::Uuid::from_u128(7);
    let dvs: Vec<DvDescriptor> = (0..64u64)
        .map(|i| {
            let rows: DeletedRows = (0..100).map(|r| i * 1000 + r * 3).collect();
            DvDescriptor::uuid_file("ab", uuid, &writer.add(&rows).unwrap())
        })
        .collect();
    let inner = InMemory::new();
    let path = Path::from(format!("tables/t/ab/deletion_vector_{uuid}.bin"));
    inner.put(&path, writer.finish().into()).await.unwrap();
    let store: Arc<dyn ObjectStore> = Arc::new(inner);
    let root = Url::parse("memory:///tables/t").unwrap();
    let one = DeletedRows::from_iter((0..100).map(|r| r * 3)).memory_size();
    let cache = Arc::new(DvCache::new(6 * one + one / 2));
    let tasks: Vec<_> = (0..4)
        .map(|t| {
            let (cache, store, root) = (cache.clone(), store.clone(), root.clone());
            let mine: Vec<_> = dvs.iter().skip(t).step_by(4).cloned().collect();
            tokio::spawn(async move {
                for dv in mine {
                    assert_eq!(cache.load(&store, &root, &dv).await.unwrap().len(), 100);
                    let s = cache.stats();
                    assert!(s.bytes <= cache.capacity_bytes(), "{s:?}");
                    assert!(s.entries <= 6, "{s:?}");
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let s = cache.stats();
    assert_eq!((s.loads, s.entries), (64, 6), "{s:?}");
    assert_eq!(s.evictions, 64 - 6, "{s:?}");
}

/// The first load of a DV fails while others wait for it: only its caller
/// gets the error, the others fetch for themselves, and nothing failed is
/// kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callers_waiting_on_a_failed_load_fetch_for_themselves() {
    let (store, _, descriptors) = three_record_store().await;
    let (dv, set) = descriptors[1].clone();
    let location = Path::from(format!(
        "tables/t/ab/deletion_vector_{}.bin",
        uuid::Uuid::from_u128(0x1234_5678_9abc_def0_1234_5678_9abc_def0)
    ));
    let cache = Arc::new(DvCache::new(1 << 20));
    let first = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let tasks: Vec<_> = (0..4)
        .map(|_| {
            let (cache, store, location, dv, first) = (
                cache.clone(),
                store.clone(),
                location.clone(),
                dv.clone(),
                first.clone(),
            );
            tokio::spawn(async move {
                cache
                    .load_at_with("test-store", &location, &dv, |range| async {
                        if first.swap(false, std::sync::atomic::Ordering::SeqCst) {
                            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                            return Err(object_store::Error::NotImplemented {
                                operation: "injected".into(),
                                implementer: "test".into(),
                            });
                        }
                        store.get_range(&location, range).await
                    })
                    .await
            })
        })
        .collect();
    let results = futures::future::join_all(tasks).await;
    let results: Vec<_> = results.into_iter().map(|r| r.unwrap()).collect();
    let failed: Vec<_> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(matches!(failed[0], DvError::Fetch { .. }), "{failed:?}");
    for rows in results.iter().filter_map(|r| r.as_ref().ok()) {
        assert_eq!(rows.len(), set.len() as u64);
    }
    assert_eq!(cache.stats().entries, 1);
}

/// Two stores hold a DV file at the same path with other rows (the same
/// descriptor names both): one cache shared by both keeps them apart by
/// the store's identity.
#[tokio::test]
async fn one_cache_keeps_the_same_dv_path_of_two_stores_apart() {
    let uuid = uuid::Uuid::from_u128(7);
    let path = Path::from(format!("t/deletion_vector_{uuid}.bin"));
    let mut stores = Vec::new();
    let mut descriptors = Vec::new();
    for set in [vec![1u64, 2, 3], vec![4u64, 5, 6]] {
        let mut writer = DvFileWriter::new();
        let record = writer.add(&set.iter().copied().collect()).unwrap();
        descriptors.push(DvDescriptor::uuid_file("", uuid, &record));
        let store = InMemory::new();
        store.put(&path, writer.finish().into()).await.unwrap();
        stores.push(Arc::new(store) as Arc<dyn ObjectStore>);
    }
    assert_eq!(
        descriptors[0], descriptors[1],
        "the test needs one descriptor"
    );
    let cache = DvCache::new(1 << 20);
    let a = cache
        .load_at("s3 http://a b", &stores[0], &path, &descriptors[0])
        .await
        .unwrap();
    let b = cache
        .load_at("s3 http://b b", &stores[1], &path, &descriptors[1])
        .await
        .unwrap();
    assert!(a.contains(1) && !a.contains(4));
    assert!(
        b.contains(4) && !b.contains(1),
        "the other store's DV was served"
    );
    assert_eq!(cache.stats().loads, 2);
}
