//! `Snapshot::commit_timestamp_ms` is the timestamp time travel assigns to
//! the version: loading by it finds the same version again, also when
//! commits share a millisecond, use in-commit timestamps, or the snapshot
//! was rebuilt from a checkpoint or refreshed.

use std::path::{Path as StdPath, PathBuf};
use std::time::UNIX_EPOCH;

use dar_log::time_travel::commit_timestamps;

use crate::common::{builder, local};

use crate::writer::{LocalLog, add, commit_info_ict, ict_enabled_at_2, metadata, protocol};

fn sample() -> PathBuf {
    dar_testdata::workspace_root().join("examples/data/sample")
}

/// Opening a checkpointed table races a listing from the checkpoint
/// against the whole log's (a short log's full listing saves the round
/// trip of the hint) and keeps whichever finishes first: at most two
/// listings. The commit timestamp (which may need the log from version 0)
/// is worked out only when asked for, with one more listing, and kept.
#[tokio::test]
async fn opening_lists_the_log_at_most_twice_and_the_timestamp_lists_on_demand() {
    let (store, root) = local(&sample());
    let metered = dar_io::MeteredStore::new(store);
    let metrics = metered.metrics().clone();
    let snapshot = dar_log::Snapshot::builder(std::sync::Arc::new(metered), root)
        .build()
        .await
        .unwrap();
    assert_eq!(snapshot.version(), 7);
    let opened = metrics.snapshot().lists;
    assert!(
        (1..=2).contains(&opened),
        "opening lists the whole log and from the checkpoint at most: {opened}"
    );
    let t = snapshot.commit_timestamp_ms().await.unwrap();
    assert!(t.is_some());
    assert_eq!(
        metrics.snapshot().lists,
        opened + 1,
        "the first call lists from version 0"
    );
    assert_eq!(snapshot.commit_timestamp_ms().await.unwrap(), t);
    assert_eq!(
        metrics.snapshot().lists,
        opened + 1,
        "and the result is kept"
    );
}

/// For every version: load it, load by its reported commit timestamp, and
/// expect the same version. Also checks the reported times against the
/// series time travel searches, and that a latest load and a refresh report
/// the same time as a load by version. Returns the times, ascending.
async fn assert_round_trips(dir: &StdPath, versions: std::ops::RangeInclusive<u64>) -> Vec<i64> {
    let (store, root) = local(dir);
    let series = commit_timestamps(&store, &root).await.unwrap();
    let mut times = Vec::new();
    for v in versions.clone() {
        let s = builder(dir).with_version(v).build().await.unwrap();
        let t = s
            .commit_timestamp_ms()
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{}: no commit timestamp at v{v}", dir.display()));
        let back = builder(dir).with_timestamp_ms(t).build().await.unwrap();
        assert_eq!(back.version(), v, "{}: v{v} reports {t}", dir.display());
        assert_eq!(
            back.commit_timestamp_ms().await.unwrap(),
            Some(t),
            "{}",
            dir.display()
        );
        assert!(
            series.contains(&(v, t)),
            "{}: ({v}, {t}) not in {series:?}",
            dir.display()
        );
        times.push(t);
    }
    assert!(times.windows(2).all(|w| w[0] < w[1]), "{times:?}");
    let latest = builder(dir).build().await.unwrap();
    assert_eq!(latest.version(), *versions.end());
    assert_eq!(
        latest.commit_timestamp_ms().await.unwrap(),
        times.last().copied()
    );
    // A refresh from every older version reports what a fresh load does.
    for v in versions {
        let old = builder(dir).with_version(v).build().await.unwrap();
        let refreshed = old.refresh().await.unwrap();
        assert_eq!(refreshed.version(), latest.version());
        assert_eq!(
            refreshed.commit_timestamp_ms().await.unwrap(),
            latest.commit_timestamp_ms().await.unwrap(),
            "{}: refresh from v{v}",
            dir.display()
        );
    }
    times
}

#[tokio::test]
async fn sample_table_commit_timestamps_round_trip() {
    // Versions 3 and 4 (and 6 and 7) were written in the same millisecond;
    // version 4 has a checkpoint named by `_last_checkpoint`.
    let dir = sample();
    let times = assert_round_trips(&dir, 0..=7).await;
    let log = dir.join("_delta_log");
    let raw: Vec<i64> = (0..=7u64)
        .map(|v| {
            let m = std::fs::metadata(log.join(format!("{v:020}.json"))).unwrap();
            m.modified()
                .unwrap()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_millis() as i64
        })
        .collect();
    assert_eq!(times, dar_log::time_travel::monotonized_times(raw));
}

#[tokio::test]
async fn shared_tables_commit_timestamps_round_trip() {
    for (name, last) in [
        // Both commits in the same millisecond; checkpoint at 1.
        ("kernel/app-txn-checkpoint", 1),
        // Checkpoint at 2 without `_last_checkpoint`.
        ("kernel/with_checkpoint_no_last_checkpoint", 3),
        // 26 commits without a checkpoint, many in the same millisecond.
        ("kernel/compacted-log-files-table", 25),
        ("kernel/crc-full", 0),
        ("dat/basic_append", 1),
    ] {
        let Some(dir) = dar_testdata::table(name) else {
            return;
        };
        let dir = if dir.join("delta").is_dir() {
            dir.join("delta")
        } else {
            dir
        };
        assert_round_trips(&dir, 0..=last).await;
    }
}

#[tokio::test]
async fn equal_and_backwards_file_times_before_a_checkpoint_count() {
    // v1's file time is ahead of all later ones: every later version's
    // timestamp is pushed past it, also for versions rebuilt from the
    // checkpoint at 3, whose segment does not list v1.
    let dir = tempfile::tempdir().unwrap();
    let log = LocalLog::create(dir.path());
    log.commit(0, &[protocol(), metadata(false), add("f0", None)]);
    for v in 1..=5u64 {
        log.commit(v, &[add(&format!("f{v}"), None)]);
    }
    let cp: Vec<_> = [protocol(), metadata(false)]
        .into_iter()
        .chain((0..=3).map(|v| add(&format!("f{v}"), None)))
        .collect();
    log.checkpoint(3, &cp);
    log.set_commit_times(&[1_000, 5_000, 2_000, 2_000, 2_000, 2_000]);
    let times = assert_round_trips(dir.path(), 0..=5).await;
    assert_eq!(times, [1_000, 5_000, 5_001, 5_002, 5_003, 5_004]);
}

#[tokio::test]
async fn in_commit_timestamps_enabled_later_round_trip() {
    // v0 and v1 share a file time; ICT is on from v2 (a checkpoint at 2);
    // v2 and v3 carry their own timestamps, unrelated to their file times.
    let dir = tempfile::tempdir().unwrap();
    let log = LocalLog::create(dir.path());
    let (ict_protocol, ict_metadata) = ict_enabled_at_2();
    log.commit(0, &[protocol(), metadata(false), add("f0", None)]);
    log.commit(1, &[add("f1", None)]);
    let v2 = [
        commit_info_ict(10_000),
        ict_protocol.clone(),
        ict_metadata.clone(),
    ];
    log.commit(2, &[&v2[..], &[add("f2", None)]].concat());
    log.commit(3, &[commit_info_ict(10_500), add("f3", None)]);
    let cp: Vec<_> = [ict_protocol, ict_metadata]
        .into_iter()
        .chain((0..=2).map(|v| add(&format!("f{v}"), None)))
        .collect();
    log.checkpoint(2, &cp);
    log.set_commit_times(&[1_000, 1_000, 1_000, 1_000]);
    let times = assert_round_trips(dir.path(), 0..=3).await;
    assert_eq!(times, [1_000, 1_001, 10_000, 10_500]);
}
