//! One history: time travel and the change feed resolve every timestamp of
//! a mixed history (a file-time era, then an in-commit-timestamp era, the
//! file times anywhere relative to the ICTs: later, as in a copied table,
//! earlier, or out of order) to the same version.

use std::sync::Arc;

use dar_log::checkpoint::CheckpointIo;
use dar_log::{ChangeBound, ChangeFeed, LogError, TablePaths};
use object_store::path::Path;
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::common::{builder, local};
use crate::writer::{LocalLog, add, metadata};

/// A history: the file time of every commit, and the ICTs of the commits
/// from the enablement version `file_times.len() - icts.len()` on (none:
/// in-commit timestamps never on; all: on since the table's creation).
#[derive(Debug, Clone)]
struct Mixed {
    file_times: Vec<u64>,
    icts: Vec<i64>,
}

fn mixed() -> impl Strategy<Value = Mixed> {
    (1usize..6, 0usize..7, 0u64..40, 1i64..5).prop_flat_map(|(files, icts, shift, step)| {
        let n = files + icts;
        (
            // File times around the ICTs: anywhere from well before to well
            // after them, in any order (monotonized by readers).
            proptest::collection::vec(0u64..40, n)
                .prop_map(move |t| t.iter().map(|x| 1_000 * (x + shift)).collect()),
            // Strictly increasing ICTs, 20 000-60 000.
            proptest::collection::vec(1i64..10, icts).prop_map(move |d| {
                d.iter()
                    .scan(20_000i64, |at, x| {
                        *at += 1_000 * x * step;
                        Some(*at)
                    })
                    .collect::<Vec<_>>()
            }),
        )
            .prop_map(|(file_times, icts)| Mixed { file_times, icts })
    })
}

fn config(ict_from: Option<(u64, i64)>) -> Value {
    let mut c = json!({"delta.enableChangeDataFeed": "true"});
    if let Some((version, at)) = ict_from {
        c["delta.enableInCommitTimestamps"] = json!("true");
        c["delta.inCommitTimestampEnablementVersion"] = json!(version.to_string());
        c["delta.inCommitTimestampEnablementTimestamp"] = json!(at.to_string());
    }
    c
}

fn write(dir: &std::path::Path, h: &Mixed) {
    let log = LocalLog::create(dir);
    let n = h.file_times.len() as u64;
    let e = n - h.icts.len() as u64;
    let protocol = json!({"protocol": {"minReaderVersion": 1, "minWriterVersion": 7,
        "writerFeatures": ["inCommitTimestamp", "changeDataFeed"]}});
    for v in 0..n {
        let mut actions = Vec::new();
        let ict = v.checked_sub(e).map(|i| h.icts[i as usize]);
        let mut info = json!({"commitInfo": {"timestamp": h.file_times[v as usize]}});
        if let Some(t) = ict {
            info["commitInfo"]["inCommitTimestamp"] = json!(t);
        }
        actions.push(info);
        let mut m = metadata(false);
        if v == 0 {
            actions.push(protocol.clone());
            m["metaData"]["configuration"] = config((e == 0).then(|| (0, h.icts[0])));
            actions.push(m);
        } else if v == e {
            m["metaData"]["configuration"] = config(Some((e, h.icts[0])));
            actions.push(m);
        }
        actions.push(add(&format!("f{v}"), None));
        log.commit(v, &actions);
    }
    log.set_commit_times(&h.file_times);
}

/// Time travel: the version found and its own commit timestamp, or the
/// side of the history the timestamp falls out of.
async fn travel(dir: &std::path::Path, t: i64) -> Result<(u64, i64), &'static str> {
    match builder(dir).with_timestamp_ms(t).build().await {
        Ok(s) => Ok((s.version(), s.commit_timestamp_ms().await.unwrap().unwrap())),
        Err(LogError::TimestampOutOfRange { relation, .. }) => Err(relation),
        Err(e) => panic!("time travel to {t}: {e}"),
    }
}

/// The change feed's range for `start..=end`, or its refusal.
async fn feed(
    dir: &std::path::Path,
    start: ChangeBound,
    end: Option<ChangeBound>,
) -> Result<(u64, u64), String> {
    let (store, _) = local(dir);
    let paths = TablePaths::for_store_root(&Path::from("")).unwrap();
    ChangeFeed::open(Arc::clone(&store), paths, &CheckpointIo::new(), start, end)
        .await
        .map(|f| (f.start(), f.end()))
        .map_err(|e| e.to_string())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// For every timestamp at, just before and just after each commit's
    /// file time and ICT, and beyond both ends: the feed's end is the
    /// version time travel finds (the latest for a time after the
    /// history); its start is that version when its timestamp is the
    /// time, else the next (the first version for a time before the
    /// history; after it, an error).
    #[test]
    fn time_travel_and_the_feed_resolve_every_timestamp_alike(h in mixed()) {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &h);
        let latest = h.file_times.len() as u64 - 1;
        let mut times: Vec<i64> = h.file_times.iter().map(|&t| t as i64).collect();
        times.extend(&h.icts);
        let probes: Vec<i64> = times
            .iter()
            .flat_map(|&t| [t - 1, t, t + 1])
            .chain([0, 1_000_000])
            .collect();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            for t in probes {
                let found = travel(dir.path(), t).await;
                let at = ChangeBound::TimestampMs(t);
                let end = feed(dir.path(), ChangeBound::Version(0), Some(at)).await;
                let start = feed(dir.path(), at, None).await;
                match found {
                    Ok((v, own)) => {
                        prop_assert!(own <= t, "{h:?} at {t}: version {v} at {own}");
                        prop_assert_eq!(end.as_ref().map(|r| r.1), Ok(v), "end at {}: {:?}", t, h);
                        let next = if own == t { v } else { v + 1 };
                        prop_assert_eq!(start.as_ref().map(|r| r.0), Ok(next), "start at {}: {:?}", t, h);
                    }
                    Err("after") => {
                        prop_assert_eq!(end.as_ref().map(|r| r.1), Ok(latest), "end at {}: {:?}", t, h);
                        prop_assert!(start.is_err(), "start at {t}: {start:?} {h:?}");
                    }
                    Err(_) => {
                        prop_assert!(end.is_err(), "end at {t}: {end:?} {h:?}");
                        prop_assert_eq!(start.as_ref().map(|r| r.0), Ok(0), "start at {}: {:?}", t, h);
                    }
                }
            }
            Ok(())
        })?;
    }
}

/// In the ICT era a timestamp is found by bisection: time travel and a
/// feed's timestamp bounds read a handful of the 64 commits (O(log n)),
/// not every commit since in-commit timestamps were enabled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ict_era_is_searched_by_bisection() {
    use dar_io::testing::RecordingStore;
    use object_store::local::LocalFileSystem;

    let dir = tempfile::tempdir().unwrap();
    let log = LocalLog::create(dir.path());
    let protocol = json!({"protocol": {"minReaderVersion": 1, "minWriterVersion": 7,
        "writerFeatures": ["inCommitTimestamp"]}});
    let mut m = metadata(false);
    m["metaData"]["configuration"] = config(Some((0, 1_000)));
    let ict = |v: u64| 1_000 + 1_000 * v as i64;
    let n = 64;
    for v in 0..n {
        let info = json!({"commitInfo": {"timestamp": 1, "inCommitTimestamp": ict(v)}});
        let mut actions = vec![info];
        if v == 0 {
            actions.extend([protocol.clone(), m.clone()]);
        }
        actions.push(add(&format!("f{v}"), None));
        log.commit(v, &actions);
    }
    // A checkpoint at the latest version: replaying it reads no commit.
    let mut state = vec![protocol, m];
    state.extend((0..n).map(|v| add(&format!("f{v}"), None)));
    log.checkpoint(n - 1, &state);
    let recording = Arc::new(RecordingStore::new(
        LocalFileSystem::new_with_prefix(dir.path()).unwrap(),
    ));
    let store: Arc<dyn object_store::ObjectStore> = recording.clone();
    let root = Path::from("");
    let commits_read = || {
        recording
            .paths_read(|name| name.ends_with(".json") && !name.contains("checkpoint"))
            .len()
    };
    for t in [ict(5) + 500, ict(40), ict(62) + 1] {
        recording.clear();
        let v = dar_log::time_travel::version_at_timestamp(&store, &root, t)
            .await
            .unwrap();
        assert!(ict(v) <= t && t < ict(v + 1), "{t}: {v}");
        assert!(
            commits_read() <= 8,
            "time travel to {t}: {}",
            commits_read()
        );
        recording.clear();
        let paths = TablePaths::for_store_root(&root).unwrap();
        let io = CheckpointIo::new();
        let f = ChangeFeed::open(
            Arc::clone(&store),
            paths,
            &io,
            ChangeBound::TimestampMs(t),
            None,
        )
        .await
        .unwrap();
        assert_eq!(f.start(), if ict(v) == t { v } else { v + 1 });
        assert!(commits_read() <= 8, "feed from {t}: {}", commits_read());
    }
}
