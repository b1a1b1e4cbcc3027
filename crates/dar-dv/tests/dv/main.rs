//! Integration tests: every DV in the shared test tables, the I/O pattern of
//! fetching (recorded through a wrapper store), the cache, and randomized
//! equivalence against simple reference computations.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

mod recording_store;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;

use dar_dv::{
    DeletedRows, DvCache, DvDescriptor, DvError, DvFileWriter, DvSource, decode_file_bytes,
    decode_inline, fetch_range,
};
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use parquet::arrow::arrow_reader::RowSelector;
use proptest::prelude::*;
use recording_store::RecordingStore;
use url::Url;

/// Deleted rows of every DV in the shared tables, by (table, unique id).
///
/// Each set was checked against the data: the rows at these positions of
/// the DV's data file (read with pyarrow) are exactly the rows that the
/// commit's predicate (`commitInfo.operationParameters`) deletes, and an
/// independent Python decoder of the DV bytes agrees. `with-short-dv` and
/// `cdf-table-with-dv` carry no predicates: for the latter the sets match the
/// change history documented by kernel-rs' CDF test (remove {0, 9}, restore,
/// remove {0, 1, 4, 5}, restore {1, 4}, restore {0, 5} and remove {3});
/// for the former the 3 deletions leave the 7 rows delta-rs reports.
fn expected() -> BTreeMap<(&'static str, &'static str), Vec<u64>> {
    let cdc = [
        ("uxXKMQm7kW?Gxtg1Fc8gx@1", vec![1]),    // DELETE id = 3
        ("umJ2cF>/b}cNH0FOIH=-S@1", vec![2, 3]), // DELETE id > 3
        ("u)ii3umnMG[TGOi6^Mkdw@1", vec![0]),    // DELETE id = 1
        ("u<&<2bjpjObOJ4wv3^ejz@1", vec![0]),    // UPDATE id = 2
        ("uF0u+Uo^@EuVa@tFk))2D@1", vec![0]),    // DELETE 6 < id < 9 (id 8)
        ("uF0u+Uo^@EuVa@tFk))2D@43", vec![1]),   // same DELETE, 2nd file (id 7)
        ("u>[cU:b<XlcQr-qen5gRk@1", vec![5]),    // MERGE update of id 9
        ("u9o*B3A9$@MU{2@BJ{d6N@1", vec![6]),    // UPDATE id = 11
        ("u<4$go)s!dkVsxG*vpLez@1", vec![7]),    // MERGE delete of id 11
        ("uXq<G^UbT+TGkmx<+7Y=5@1", vec![0, 1, 2, 3, 4, 6]), // DELETE id < 10
    ];
    let mut map = BTreeMap::new();
    for table in [
        "kernel/cdf-table-with-cdc-and-dvs",
        "kernel/compacted-log-files-table",
    ] {
        for (id, rows) in &cdc {
            map.insert((table, *id), rows.clone());
        }
    }
    map.insert(
        ("kernel/table-with-dv-small", "uvBn[lx{q8@P<9BNH/isA@1"),
        vec![0, 9],
    );
    map.insert(
        ("kernel/with-short-dv", "uU5OWRz5k%CFT.Td}yCPW@1"),
        vec![0, 1, 2],
    );
    let cdf = "kernel/cdf-table-with-dv";
    map.insert((cdf, "uvBn[lx{q8@P<9BNH/isA@1"), vec![0, 9]);
    map.insert(
        (cdf, "i^Bg9^0rr910000000000iXQKl0rr91000935c8Xg000311onP9"),
        vec![0, 1, 4, 5],
    );
    map.insert(
        (cdf, "i^Bg9^0rr910000000000iXQKl0rr91000315c8Xg000f5"),
        vec![0, 5],
    );
    // Written with `#` padding in its last Z85 group (see z85.rs).
    map.insert(
        (cdf, "i^Bg9^0rr910000000000iXQKl0rr91000005c8Xg##093"),
        vec![3],
    );
    map
}

/// A DV found in a table's log, with its data file's `numRecords`.
struct FoundDv {
    table: String,
    root: PathBuf,
    descriptor: DvDescriptor,
}

/// Every `add.deletionVector` / `remove.deletionVector` in the JSON commit
/// and compaction files of every table under the shared test data.
fn all_dvs() -> Option<Vec<FoundDv>> {
    let testdata = dar_testdata::root()?.canonicalize().unwrap();
    let mut found = Vec::new();
    for group in ["dat", "kernel"] {
        let Ok(tables) = std::fs::read_dir(testdata.join(group)) else {
            continue;
        };
        for table in tables {
            let root = table.unwrap().path();
            let log = root.join("_delta_log");
            let Ok(files) = std::fs::read_dir(&log) else {
                continue;
            };
            let name = format!("{group}/{}", root.file_name().unwrap().to_string_lossy());
            for file in files {
                let file = file.unwrap().path();
                if file.extension().is_some_and(|e| e == "json") {
                    scan_log_file(&file, &name, &root, &mut found);
                }
            }
        }
    }
    Some(found)
}

fn scan_log_file(file: &FsPath, table: &str, root: &FsPath, found: &mut Vec<FoundDv>) {
    // Some logs hold deliberately malformed files; those lines are skipped.
    let text = String::from_utf8_lossy(&std::fs::read(file).unwrap()).into_owned();
    for line in text.lines() {
        let Ok(action) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        for kind in ["add", "remove"] {
            let Some(dv) = action[kind]["deletionVector"].as_object() else {
                continue;
            };
            let mut descriptor = DvDescriptor::try_new(
                dv["storageType"].as_str().unwrap(),
                dv["pathOrInlineDv"].as_str().unwrap(),
                dv.get("offset").and_then(serde_json::Value::as_i64),
                dv["sizeInBytes"].as_i64().unwrap(),
                dv["cardinality"].as_i64().unwrap(),
            )
            .unwrap();
            let stats = action[kind]["stats"].as_str();
            if let Some(stats) =
                stats.and_then(|s| serde_json::from_str::<serde_json::Value>(s).ok())
            {
                descriptor = descriptor.with_row_count(stats["numRecords"].as_u64().unwrap());
            }
            found.push(FoundDv {
                table: table.to_owned(),
                root: root.to_owned(),
                descriptor,
            });
        }
    }
}

fn root_url(root: &FsPath) -> Url {
    Url::from_directory_path(root).unwrap()
}

#[tokio::test]
async fn every_dv_in_the_shared_tables_decodes_to_its_verified_rows() {
    let Some(found) = all_dvs() else { return };
    let expected = expected();
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new());
    let cache = DvCache::new(1 << 20);
    let mut checked = BTreeSet::new();
    let (mut files, mut inline) = (0, 0);
    for dv in &found {
        let id = dv.descriptor.unique_id();
        let rows = cache
            .load(&store, &root_url(&dv.root), &dv.descriptor)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", dv.table));
        assert_eq!(rows.len(), dv.descriptor.cardinality(), "{} {id}", dv.table);
        let want = expected
            .get(&(dv.table.as_str(), id.as_str()))
            .unwrap_or_else(|| panic!("no verified rows pinned for {} {id}", dv.table));
        assert_eq!(rows.iter().collect::<Vec<_>>(), *want, "{} {id}", dv.table);
        if dv.descriptor.storage_type() == dar_dv::StorageType::Inline {
            inline += 1;
        } else {
            files += 1;
        }
        checked.insert((dv.table.clone(), id));
    }
    // Every pinned DV was met, in both kinds of storage.
    assert_eq!(checked.len(), expected.len());
    assert!(
        files > 0 && inline > 0,
        "{files} file DVs, {inline} inline DVs"
    );
    // Repeated descriptors (adds, removes, compaction files) were cache hits.
    let stats = cache.stats();
    assert_eq!(stats.loads as usize, checked.len());
    assert_eq!((stats.loads + stats.hits) as usize, found.len());
}

#[tokio::test]
async fn table_with_dv_small_selection_keeps_rows_1_to_8() {
    let Some(root) = dar_testdata::table("kernel/table-with-dv-small") else {
        return;
    };
    let root = root.canonicalize().unwrap();
    let dv = DvDescriptor::try_new("u", "vBn[lx{q8@P<9BNH/isA", Some(1), 36, 2)
        .unwrap()
        .with_row_count(10);
    let store = RecordingStore::new(Arc::new(LocalFileSystem::new()));
    let rows = dar_dv::fetch(&store, &root_url(&root), &dv).await.unwrap();
    let selectors: Vec<RowSelector> = rows.selection(0..10).into();
    assert_eq!(
        selectors,
        [
            RowSelector::skip(1),
            RowSelector::select(8),
            RowSelector::skip(1)
        ]
    );
    // One ranged read: the version byte plus the 44-byte record, not the file.
    let file = "deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin";
    let requests = store.requests();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].0.ends_with(file), "{requests:?}");
    assert_eq!(requests[0].1, Some(0..45));
}

/// A DV file with three records in an in-memory store.
async fn three_record_store() -> (Arc<RecordingStore>, Url, Vec<(DvDescriptor, Vec<u64>)>) {
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
    let store = Arc::new(RecordingStore::new(Arc::new(inner)));
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
    let requests = store.requests();
    assert_eq!(
        requests.iter().map(|r| r.1.clone()).collect::<Vec<_>>(),
        expected_ranges
    );
    assert!(
        requests
            .iter()
            .all(|r| r.0.starts_with("tables/t/ab/deletion_vector_"))
    );
    // Loading again is served by the cache.
    for (dv, _) in &descriptors {
        cache.load(&dyn_store, &root, dv).await.unwrap();
    }
    assert_eq!(store.requests().len(), 3);
    assert_eq!(cache.stats().hits, 3);
}

#[tokio::test]
async fn empty_and_inline_dvs_do_no_io() {
    let (store, root, _) = three_record_store().await;
    let dyn_store: Arc<dyn ObjectStore> = store.clone();
    let cache = DvCache::new(1 << 20);
    let empty_file = DvDescriptor::try_new("u", "ab0000000000000000000", Some(1), 0, 0);
    // Not even a valid UUID is needed for an empty DV: nothing is read.
    let empty_file = empty_file.unwrap();
    assert!(
        cache
            .load(&dyn_store, &root, &empty_file)
            .await
            .unwrap()
            .is_empty()
    );
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
    assert!(store.requests().is_empty());
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
    assert_eq!(store.requests().len(), 1);
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
    let before = store.requests().len();
    cache.load(&dyn_store, &root, &a).await.unwrap(); // still cached
    assert_eq!(store.requests().len(), before);
    cache.load(&dyn_store, &root, &c).await.unwrap(); // fetched again
    assert_eq!(store.requests().len(), before + 1);
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
    let store = Arc::new(RecordingStore::new(Arc::new(inner)));
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
    assert_eq!(
        store.requests(),
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

fn brute_selectors(set: &BTreeSet<u64>, start: u64, end: u64) -> Vec<RowSelector> {
    let mut out: Vec<RowSelector> = Vec::new();
    for row in start..end {
        let skip = set.contains(&row);
        match out.last_mut() {
            Some(last) if last.skip == skip => last.row_count += 1,
            _ => out.push(if skip {
                RowSelector::skip(1)
            } else {
                RowSelector::select(1)
            }),
        }
    }
    out
}

/// Row sets clustered near a base (so ranges hit them), sometimes beyond
/// u32::MAX, sometimes empty.
fn row_sets() -> impl Strategy<Value = (u64, BTreeSet<u64>)> {
    let base = prop_oneof![
        Just(0_u64),
        Just(u64::from(u32::MAX) - 100),
        Just(1_u64 << 40)
    ];
    (base, proptest::collection::btree_set(0_u64..600, 0..200))
        .prop_map(|(base, offsets)| (base, offsets.into_iter().map(|o| base + o).collect()))
}

proptest! {
    #[test]
    fn selections_masks_and_counts_match_brute_force(
        (base, set) in row_sets(),
        a in 0_u64..700,
        len in 0_u64..700,
    ) {
        let deleted: DeletedRows = set.iter().copied().collect();
        let (start, end) = (base + a, base + a + len);
        let want = brute_selectors(&set, start, end);
        prop_assert_eq!(&deleted.selectors(start..end), &want);
        let selection: Vec<RowSelector> = deleted.selection(start..end).into();
        prop_assert_eq!(&selection, &want);
        let mask: Vec<bool> = deleted.mask(start..end).iter().map(Option::unwrap).collect();
        let want_mask: Vec<bool> = (start..end).map(|r| !set.contains(&r)).collect();
        prop_assert_eq!(mask, want_mask);
        let in_range = set.range(start..end).count() as u64;
        prop_assert_eq!(deleted.deleted_in(start..end), in_range);
        prop_assert_eq!(deleted.surviving_in(start..end), len - in_range);
        // Consecutive ranges concatenate.
        let mid = start + len / 2;
        let mut joined = deleted.selectors(start..mid);
        joined.extend(deleted.selectors(mid..end));
        let joined: Vec<RowSelector> = parquet::arrow::arrow_reader::RowSelection::from(joined).into();
        prop_assert_eq!(joined, want);
    }

    #[test]
    fn encode_decode_round_trips(
        sets in proptest::collection::vec(
            prop_oneof![
                Just(BTreeSet::new()),
                row_sets().prop_map(|(_, s)| s),
                proptest::collection::btree_set(any::<u64>().prop_map(|r| r >> 1), 0..50),
            ],
            1..4,
        )
    ) {
        // Several DVs in one file, each read back from the whole file and
        // from its exact fetch range; and each as an inline DV.
        let mut writer = DvFileWriter::new();
        let records: Vec<_> = sets
            .iter()
            .map(|s| writer.add(&s.iter().copied().collect()).unwrap())
            .collect();
        let file = writer.finish();
        for (set, record) in sets.iter().zip(&records) {
            let want: Vec<u64> = set.iter().copied().collect();
            let dv = DvDescriptor::uuid_file("", uuid::Uuid::nil(), record);
            prop_assert_eq!(dv.cardinality(), set.len() as u64);
            let whole = decode_file_bytes(&dv, "f", 0, &file).unwrap();
            prop_assert_eq!(whole.iter().collect::<Vec<_>>(), want.clone());
            let range = fetch_range(&dv);
            let part = &file[range.start as usize..range.end as usize];
            let exact = decode_file_bytes(&dv, "f", range.start, part).unwrap();
            prop_assert_eq!(exact.iter().collect::<Vec<_>>(), want.clone());
            let inline = DvDescriptor::inline(&set.iter().copied().collect()).unwrap();
            let again = DvDescriptor::try_new(
                "i",
                inline.path_or_inline_dv(),
                None,
                i64::from(inline.size_in_bytes()),
                inline.cardinality() as i64,
            ).unwrap();
            prop_assert_eq!(decode_inline(&again).unwrap().iter().collect::<Vec<_>>(), want);
        }
    }
}

#[test]
fn rows_above_2_pow_63_cannot_be_encoded() {
    let err = DvFileWriter::new()
        .add(&DeletedRows::from_iter([1 << 63]))
        .unwrap_err();
    assert!(matches!(err, DvError::RowIndexOutOfRange { row, .. } if row == 1 << 63));
}
