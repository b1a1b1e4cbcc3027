//! Every DV in the shared test tables, decoded and checked against rows
//! verified from the data.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;

use dar_dv::{DvCache, DvDescriptor};
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use parquet::arrow::arrow_reader::RowSelector;
use url::Url;

use dar_io::testing::RecordingStore;

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
    let store = RecordingStore::new(LocalFileSystem::new());
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
    let requests = store.gets();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].path.ends_with(file), "{requests:?}");
    assert_eq!(requests[0].bounded(), Some(0..45));
}
