//! Checkpoint Parquet goes through dar-io's reader: every request is
//! metered as a checkpoint read, and a second load sharing the footer cache
//! parses no checkpoint footer again.

use std::collections::BTreeSet;
use std::sync::Arc;

use dar_io::testing::RecordingStore;
use dar_io::{MetadataCache, MeteredStore, ObjectClass};
use dar_log::Snapshot;
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::path::Path;

const TABLES: [&str; 3] = [
    // classic, one part
    "kernel/app-txn-checkpoint",
    // classic, three parts
    "kernel/v1-multi-part-struct-stats-only",
    // V2 Parquet with sidecars
    "kernel/v2-checkpoints-parquet-with-sidecars",
];

#[tokio::test]
async fn checkpoint_reads_are_metered_and_their_footers_cached() {
    for name in TABLES {
        let Some(t) = dar_testdata::table(name) else {
            return;
        };
        let recording = Arc::new(RecordingStore::new(
            LocalFileSystem::new_with_prefix(&t).unwrap(),
        ));
        let metered = MeteredStore::new(Arc::clone(&recording) as Arc<dyn ObjectStore>);
        let metrics = metered.metrics().clone();
        let store: Arc<dyn ObjectStore> = Arc::new(metered);
        let cache = MetadataCache::default();
        let builder = Snapshot::builder(Arc::clone(&store), Path::from(""))
            .with_metadata_cache(cache.clone());

        let first = builder.clone().build().await.unwrap();
        let io = metrics.snapshot();
        let parquet: Vec<_> = recording
            .gets()
            .into_iter()
            .filter(|g| g.path.ends_with(".parquet"))
            .collect();
        let files: BTreeSet<_> = parquet.iter().map(|g| g.path.clone()).collect();
        assert!(!files.is_empty(), "{name}: no checkpoint read");
        // Every checkpoint request was tagged by the reader, none is
        // counted as a data file's footer or pages.
        assert!(
            parquet
                .iter()
                .all(|g| g.class == Some(ObjectClass::Checkpoint)),
            "{name}: {parquet:?}"
        );
        assert_eq!(
            io.class(ObjectClass::Checkpoint).requests,
            parquet.len() as u64,
            "{name}: {io}"
        );
        assert_eq!(io.class(ObjectClass::Footer).requests, 0, "{name}: {io}");
        assert_eq!(io.class(ObjectClass::PageData).requests, 0, "{name}: {io}");
        let c = cache.stats();
        assert_eq!(
            (c.hits, c.misses, c.entries),
            (0, files.len() as u64, files.len()),
            "{name}"
        );

        // A second load with the same cache: every footer is a hit.
        let second = builder.build().await.unwrap();
        let c2 = cache.stats();
        assert_eq!(
            (c2.hits, c2.misses, c2.entries),
            (files.len() as u64, files.len() as u64, files.len()),
            "{name}"
        );
        let io2 = metrics.snapshot().since(&io);
        assert_eq!(io2.class(ObjectClass::Footer).requests, 0, "{name}: {io2}");
        assert_eq!(
            (second.version(), second.num_files()),
            (first.version(), first.num_files())
        );
        assert_eq!(
            second.file_index().unwrap().path,
            first.file_index().unwrap().path,
            "{name}"
        );
    }
}

/// Issue 33 item 16: a checkpoint of many parts is read a bounded number
/// of parts at a time (before, every part was fetched and decoded at
/// once: here 100 requests in flight), and reads them all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoint_parts_in_flight_are_bounded() {
    use dar_io::testing::{Fault, FaultStore};
    use std::time::Duration;

    use crate::writer::{TestLog, add, checkpoint_bytes, metadata, protocol};

    let log = TestLog::new();
    let parts = 100;
    for o in 1..=parts {
        let mut rows = vec![add(&format!("f{o}.parquet"), None)];
        if o == 1 {
            rows.extend([protocol(), metadata(false)]);
        }
        log.put(
            &format!("_delta_log/00000000000000000000.checkpoint.{o:010}.{parts:010}.parquet"),
            checkpoint_bytes(&rows),
        )
        .await;
    }
    // Every read waits a little: reads started together overlap.
    let store = Arc::new(
        FaultStore::new(Arc::clone(&log.store))
            .with_faults((0..400).map(|_| Fault::Slow(Duration::from_millis(20)))),
    );
    let snapshot = Snapshot::builder(Arc::clone(&store) as Arc<dyn ObjectStore>, log.root.clone())
        .build()
        .await
        .unwrap();
    assert_eq!(snapshot.num_files(), parts);
    let most = store.max_in_flight();
    assert!(
        (2..=dar_log::checkpoint::MAX_FILES_IN_FLIGHT as u64).contains(&most),
        "{most} reads in flight"
    );
}

/// A long commit tail is read with up to 256 commits in flight where the
/// store's cost model says each read is a round trip (object storage:
/// 300 commits in two rounds, not five), and with at most 64 elsewhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_commit_tail_on_object_storage_is_read_in_a_few_rounds() {
    use dar_io::testing::{Fault, FaultStore};
    use dar_io::{CostModel, CostParams};
    use std::time::Duration;

    use crate::writer::{TestLog, add, metadata, protocol};

    let log = TestLog::new();
    let commits = 300u64;
    for v in 0..commits {
        let mut actions = vec![add(&format!("f{v}.parquet"), None)];
        if v == 0 {
            actions.extend([protocol(), metadata(false)]);
        }
        log.commit(v, &actions).await;
    }
    for (cost, most) in [
        (Some(CostParams::remote()), 256),
        (Some(CostParams::local()), 64),
        (None, 64),
    ] {
        let store = Arc::new(
            FaultStore::new(Arc::clone(&log.store))
                .with_faults((0..1000).map(|_| Fault::Slow(Duration::from_millis(20)))),
        );
        let mut builder =
            Snapshot::builder(Arc::clone(&store) as Arc<dyn ObjectStore>, log.root.clone());
        if let Some(params) = &cost {
            builder = builder.with_cost_model(Arc::new(CostModel::new(params.clone())));
        }
        let snapshot = builder.build().await.unwrap();
        assert_eq!(snapshot.num_files(), commits as usize);
        let seen = store.max_in_flight();
        // Reads started together overlap (each waits 20 ms); never more
        // than the cap.
        assert!(
            seen <= most && seen > most / 2,
            "{cost:?}: {seen} in flight, cap {most}"
        );
    }
}
