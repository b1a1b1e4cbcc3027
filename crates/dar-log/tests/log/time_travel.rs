//! Time travel by timestamp (file times monotonized, in-commit timestamps),
//! and `Snapshot::refresh`.

use std::collections::BTreeSet;

use dar_log::time_travel::commit_timestamps;
use dar_log::{LogError, Snapshot};
use serde_json::json;

use crate::common::{builder, local};
use crate::writer::{
    LocalLog, TestLog, add, commit_info_ict, dv, ict_enabled_at_2, metadata, protocol, remove,
    set_mtime,
};

/// A timestamp outside the history fails with `TimestampOutOfRange` on the
/// side named by `relation`.
fn assert_out_of_range(built: Result<Snapshot, LogError>, relation: &str) {
    match built {
        Err(LogError::TimestampOutOfRange { relation: r, .. }) if r == relation => {}
        Err(e) => panic!("want TimestampOutOfRange {relation}, got {e}"),
        Ok(s) => panic!(
            "want TimestampOutOfRange {relation}, got version {}",
            s.version()
        ),
    }
}

#[tokio::test]
async fn by_timestamp_with_monotonized_file_times() {
    let dir = tempfile::tempdir().unwrap();
    let log = LocalLog::create(dir.path());
    log.commit(0, &[protocol(), metadata(false), add("a", None)]);
    for v in 1..4u64 {
        log.commit(v, &[add(&format!("f{v}"), None)]);
    }
    // Version 2 has the same time as version 1: it becomes 2_000_001.
    log.set_commit_times(&[1_000_000, 2_000_000, 2_000_000, 3_000_000]);
    let (store, root) = local(dir.path());
    let times = commit_timestamps(&store, &root).await.unwrap();
    assert_eq!(
        times,
        [
            (0, 1_000_000),
            (1, 2_000_000),
            (2, 2_000_001),
            (3, 3_000_000)
        ]
    );
    for (t, want) in [
        (1_000_000, 0),
        (1_999_999, 0),
        (2_000_000, 1),
        (2_000_001, 2),
        (2_999_999, 2),
        (3_000_000, 3),
    ] {
        let s = builder(dir.path())
            .with_timestamp_ms(t)
            .build()
            .await
            .unwrap();
        assert_eq!(s.version(), want, "at {t}");
        assert_eq!(s.num_files(), want as usize + 1);
    }
    for (t, relation) in [(999_999, "before"), (3_000_001, "after")] {
        let built = builder(dir.path()).with_timestamp_ms(t).build().await;
        assert_out_of_range(built, relation);
    }
}

#[tokio::test]
async fn by_timestamp_with_in_commit_timestamps() {
    let log = TestLog::new();
    let p = json!({"protocol": {"minReaderVersion": 1, "minWriterVersion": 7, "writerFeatures": ["inCommitTimestamp"]}});
    let mut m = metadata(false);
    m["metaData"]["configuration"] = json!({"delta.enableInCommitTimestamps": "true"});
    let ci = |t: i64| json!({"commitInfo": {"timestamp": 5, "inCommitTimestamp": t}});
    log.commit(0, &[ci(100), p, m, add("a", None)]).await;
    log.commit(1, &[ci(200), add("b", None)]).await;
    log.commit(2, &[ci(300), add("c", None)]).await;
    for (t, want) in [(100, 0), (199, 0), (200, 1), (250, 1), (300, 2)] {
        let s = log.builder().with_timestamp_ms(t).build().await.unwrap();
        assert_eq!(s.version(), want, "at {t}");
        assert_eq!(
            s.commit_timestamp_ms().await.unwrap(),
            Some([100, 200, 300][want as usize])
        );
    }
    for (t, relation) in [(99, "before"), (301, "after")] {
        assert_out_of_range(log.builder().with_timestamp_ms(t).build().await, relation);
    }
    let s = log.builder().build().await.unwrap();
    assert_eq!(
        s.commit_info().await.unwrap().in_commit_timestamp,
        Some(300)
    );
}

/// ICT switched on at v2 (`E` = 2, `Tₑ` = v2's ICT = 10 000) while the file
/// times of v0 and v1 are later than every ICT: the two parts of the history
/// are not one sorted sequence, so time travel searches only one (§10).
#[tokio::test]
async fn by_timestamp_with_ict_enabled_later_and_later_file_times() {
    let dir = tempfile::tempdir().unwrap();
    let log = LocalLog::create(dir.path());
    let (ict_protocol, ict_metadata) = ict_enabled_at_2();
    log.commit(0, &[protocol(), metadata(false), add("f0", None)]);
    log.commit(1, &[add("f1", None)]);
    let v2 = [commit_info_ict(10_000), ict_protocol, ict_metadata];
    log.commit(2, &[&v2[..], &[add("f2", None)]].concat());
    log.commit(3, &[commit_info_ict(20_000), add("f3", None)]);
    log.set_commit_times(&[50_000, 60_000, 1_000, 1_000]);
    let file = |v: u64| log.file(v);
    let (store, root) = local(dir.path());
    let at = |t: i64| builder(dir.path()).with_timestamp_ms(t).build();
    // What the old search of the combined sequence returned.
    let combined = |times: &[(u64, i64)], t: i64| {
        let idx = times.partition_point(|&(_, c)| c <= t);
        (t >= times[0].1 && t <= times[times.len() - 1].1)
            .then(|| times.get(idx.wrapping_sub(1)).map(|e| e.0))
            .flatten()
    };

    let times = commit_timestamps(&store, &root).await.unwrap();
    assert_eq!(times, [(0, 50_000), (1, 60_000), (2, 10_000), (3, 20_000)]);
    // T ≥ Tₑ: only v2 and v3, by ICT.
    for (t, want) in [(10_000, 2), (19_999, 2), (20_000, 3)] {
        assert_eq!(at(t).await.unwrap().version(), want, "T = {t}");
        // The combined search called all of these "before the history".
        assert_eq!(combined(&times, t), None, "T = {t}");
    }
    let s = at(15_000).await.unwrap();
    assert_eq!(s.commit_timestamp_ms().await.unwrap(), Some(10_000));
    // After the latest commit, even where v0/v1's file times lie: a T ≥ Tₑ
    // never reaches the versions before E.
    assert_out_of_range(at(20_001).await, "after");
    assert_out_of_range(at(55_000).await, "after");
    // T < Tₑ: only v0 and v1, by file time; both are later than T here.
    assert_out_of_range(at(9_999).await, "before");
    // Versions from E on load again by their reported commit timestamp.
    for v in 2..=3 {
        let s = builder(dir.path()).with_version(v).build().await.unwrap();
        let t = s.commit_timestamp_ms().await.unwrap().unwrap();
        assert_eq!(at(t).await.unwrap().version(), v);
    }

    // With v0's file time before Tₑ, T < Tₑ finds it; v1 (file time past
    // every ICT) cannot be reached by any timestamp.
    set_mtime(&file(0), 5_000);
    let times = commit_timestamps(&store, &root).await.unwrap();
    assert_eq!(times, [(0, 5_000), (1, 60_000), (2, 10_000), (3, 20_000)]);
    for (t, want) in [(5_000, 0), (9_999, 0), (10_000, 2), (20_000, 3)] {
        assert_eq!(at(t).await.unwrap().version(), want, "T = {t}");
    }
    assert_out_of_range(at(4_999).await, "before");
    assert_out_of_range(at(59_000).await, "after");
    let s0 = builder(dir.path()).with_version(0).build().await.unwrap();
    assert_eq!(s0.commit_timestamp_ms().await.unwrap(), Some(5_000));
    assert_eq!(at(5_000).await.unwrap().version(), 0);
}

#[tokio::test]
async fn dat_time_travel_by_timestamp_round_trips() {
    for case in [
        "basic_append",
        "basic_partitioned",
        "multi_partitioned",
        "with_schema_change",
    ] {
        let Some(dir) = dar_testdata::table(&format!("dat/{case}")) else {
            return;
        };
        let (store, root) = local(&dir.join("delta"));
        for (v, t) in commit_timestamps(&store, &root).await.unwrap() {
            let s = builder(&dir.join("delta"))
                .with_timestamp_ms(t)
                .build()
                .await
                .unwrap();
            assert_eq!(s.version(), v, "{case} at {t}");
        }
    }
}

fn file_set(s: &Snapshot) -> BTreeSet<(String, Option<String>, i64)> {
    let fi = s.file_index().unwrap();
    (0..fi.len())
        .map(|i| {
            (
                fi.path.value(i).to_string(),
                fi.deletion_vector(i).unwrap().map(|d| d.unique_id()),
                fi.size.value(i),
            )
        })
        .collect()
}

#[tokio::test]
async fn refresh_equals_fresh_load() {
    let log = TestLog::new();
    log.commit(
        0,
        &[
            protocol(),
            metadata(false),
            add("a", None),
            add("b", None),
            add("c", None),
        ],
    )
    .await;
    log.commit(
        1,
        &[
            remove("a", None),
            add("d", None),
            json!({"txn": {"appId": "app", "version": 1}}),
        ],
    )
    .await;
    log.checkpoint(
        1,
        &[
            protocol(),
            metadata(false),
            add("b", None),
            add("c", None),
            add("d", None),
        ],
    )
    .await;
    log.commit(2, &[remove("b", None), add("b", Some(dv(1)))])
        .await;
    let old = log.builder().build().await.unwrap();
    assert_eq!(old.num_files(), 3);
    // Nothing new: same snapshot.
    assert_eq!(file_set(&old.refresh().await.unwrap()), file_set(&old));
    log.commit(
        3,
        &[
            remove("b", Some(dv(1))),
            add("b", Some(dv(2))),
            add("e", None),
        ],
    )
    .await;
    log.commit(
        4,
        &[
            remove("c", None),
            json!({"txn": {"appId": "app", "version": 7}}),
            json!({"domainMetadata": {"domain": "x", "configuration": "{}", "removed": false}}),
        ],
    )
    .await;
    log.commit(
        5,
        &[
            add("a", None),
            json!({"domainMetadata": {"domain": "y", "configuration": "{}", "removed": false}}),
            json!({"domainMetadata": {"domain": "x", "configuration": "{}", "removed": true}}),
        ],
    )
    .await;
    let refreshed = old.refresh().await.unwrap();
    let fresh = log.builder().build().await.unwrap();
    assert_eq!(refreshed.version(), 5);
    assert_eq!(file_set(&refreshed), file_set(&fresh));
    assert_eq!(refreshed.num_files(), 4);
    assert_eq!(refreshed.app_version("app"), Some(7));
    assert_eq!(refreshed.txns(), fresh.txns());
    assert_eq!(refreshed.domains(), fresh.domains());
    assert_eq!(refreshed.domains().keys().collect::<Vec<_>>(), ["y"]);
    // A gap after the old version is reported.
    log.commit(7, &[add("z", None)]).await;
    let err = refreshed.refresh().await.unwrap_err();
    assert!(
        matches!(err, LogError::VersionGap { missing: 6, .. }),
        "{err}"
    );
}
