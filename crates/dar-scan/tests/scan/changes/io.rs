//! What the feed reads: each commit once, concurrently, only the range
//! of the listing, and rows before later commits.

use std::sync::Arc;

use dar_io::testing::RecordingStore;
use futures::StreamExt;
use object_store::local::LocalFileSystem;

use super::*;
use dar_testkit::HandTable;
use dar_testkit::log_json::{add, cdf_on, id_field, metadata, protocol};
use serde_json::json;

/// On a table just opened, the feed reads no commit its snapshot's replay
/// read (they are kept, within `KEPT_COMMIT_BYTES`), nor
/// `_last_checkpoint` (the snapshot's checkpoint stands for it): of the
/// log it only lists. The snapshot's configuration stands for the latest
/// state instead of a second replay. A table opened at an older version
/// reads the latest state's newer commits once, and nothing more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_on_an_open_table_reads_each_commit_once() {
    use dar_io::ObjectClass;
    let dir = tempfile::tempdir().unwrap();
    let (mut t, schema) = writer_table(dir.path(), false).await;
    for i in 0..20 {
        t.append(&id_part(&schema, &[i], "a")).await.unwrap();
    }
    let root = dir.path().join("t");
    // Commits 11..=20 after an open at 10.
    for (table, log_reads) in [(open(&root).await, 0), (open_version(&root, 10).await, 10)] {
        let io = table.store().metrics().clone();
        let before = io.snapshot();
        let plan = table.changes(v(5), None).build().await.unwrap();
        assert_eq!(
            collect(&plan)
                .await
                .iter()
                .map(|b| b.num_rows())
                .sum::<usize>(),
            16
        );
        let log = io.snapshot().since(&before).class(ObjectClass::Log);
        assert_eq!(log.requests, log_reads, "{log:?}");
    }
}

/// A kept commit is taken only for the same file: a table recreated at
/// the same location after the open (other commits under the same
/// names) is read from the store, and the feed gives the new table's rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_reads_again_commits_replaced_since_the_open() {
    let dir = tempfile::tempdir().unwrap();
    many_commits(dir.path(), 4);
    let (table, recording) = recorded(dir.path()).await;
    // The feed from version 0, run commit by commit.
    let feed = || async { table.changes(v(0), None).open().await?.collect().await };
    assert_eq!(change_rows(&feed().await.unwrap()).len(), 4);
    assert!(
        recording
            .paths_read(|name| commit_version(name).is_some())
            .is_empty()
    );
    // The same versions, other rows (and other commit sizes).
    std::fs::remove_dir_all(dir.path().join("t")).unwrap();
    commits_of(dir.path(), 6, |v| {
        (format!("g{v}.parquet"), vec![100 + v as i32, 200])
    });
    assert_eq!(num_rows(&feed().await.unwrap()), 12);
    assert_eq!(
        recording
            .paths_read(|name| commit_version(name).is_some())
            .len(),
        6,
        "every commit of the new log read from the store"
    );
}

/// Commit files are read concurrently, as many in flight as the scan has
/// files in flight (a slow store shows it: reads overlap beyond eight).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_are_read_concurrently() {
    use std::time::Duration;

    let dir = tempfile::tempdir().unwrap();
    let mut t = HandTable::new(dir.path().join("t")).unwrap();
    let size = t.write_parquet("a.parquet", &ids_batch(&[1])).unwrap();
    t.commit(&[
        protocol(),
        metadata(id_field(), &[], cdf_on()),
        add("a.parquet", size, json!({}), None),
    ])
    .unwrap();
    for _ in 0..63 {
        t.commit(&[add("a.parquet", size, json!({}), None)])
            .unwrap();
    }
    // A checkpoint at the latest version: the open reads no commit (none
    // is kept), so the feed reads every commit of its range itself.
    dar_testkit::write_log_checkpoint(&dir.path().join("t")).unwrap();
    let (table, slow, gate) = gated(dir.path(), "memory://t").await;
    slow.set_delay(Duration::from_millis(30));
    let opened = gate.max_in_flight();
    let plan = table
        .changes(v(0), None)
        .with_concurrency(32)
        .build()
        .await
        .unwrap();
    assert_eq!(plan.tasks().len(), 64);
    // Opening reads the checkpoint (with the hint and a listing), no
    // commit; the feed reads as many as the scan's 32 files in flight.
    assert!(opened < 16, "{opened}");
    assert!(
        gate.max_in_flight() >= 16,
        "commit reads in flight: {} (after opening: {opened})",
        gate.max_in_flight()
    );
}

/// The table at `dir/t` opened as `uri` through a gate that counts the
/// reads in flight, over a store that records them and can slow them.
async fn gated(
    dir: &Path,
    uri: &str,
) -> (
    dar_scan::Table,
    Arc<RecordingStore<LocalFileSystem>>,
    Arc<dar_io::testing::FaultStore<Arc<RecordingStore<LocalFileSystem>>>>,
) {
    let local = LocalFileSystem::new_with_prefix(dir).unwrap();
    let slow = Arc::new(RecordingStore::new(local));
    let gate = Arc::new(dar_io::testing::FaultStore::new(Arc::clone(&slow)));
    let table = crate::common::table_over(uri, Arc::clone(&gate) as _).await;
    (table, slow, gate)
}

/// A table at `dir/t` read through a store that records every read and
/// listing (the recording starts after opening).
async fn recorded(dir: &Path) -> (dar_scan::Table, Arc<RecordingStore<LocalFileSystem>>) {
    let local = LocalFileSystem::new_with_prefix(dir).unwrap();
    let recording = Arc::new(RecordingStore::new(local));
    let table = crate::common::table_over("memory://t", Arc::clone(&recording) as _).await;
    recording.clear();
    (table, recording)
}

/// The version of a commit file's name, if it is one.
fn commit_version(name: &str) -> Option<u64> {
    name.strip_suffix(".json")?.parse().ok()
}

/// A writer's table at `dir/t` of versions 0 to 20 (one row each from 1),
/// with a checkpoint at version 10.
async fn checkpointed_at_10(
    dir: &Path,
) -> (
    dar_testkit::TableWriter,
    std::sync::Arc<arrow_schema::Schema>,
) {
    let (mut t, schema) = writer_table(dir, false).await;
    for i in 1..=10 {
        t.append(&id_part(&schema, &[i], "a")).await.unwrap();
    }
    t.checkpoint().await.unwrap(); // at version 10
    for i in 11..=20 {
        t.append(&id_part(&schema, &[i], "a")).await.unwrap();
    }
    (t, schema)
}

/// Between versions, the feed lists the log from the open table's
/// checkpoint when it is at or before the start (the range and the state
/// before it, never the versions the checkpoint covers); from version 0
/// when the start precedes it, when it is gone since the open, or when a
/// bound is a timestamp (file times are monotonized over all commits).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_lists_the_log_from_the_checkpoint_before_its_start() {
    let dir = tempfile::tempdir().unwrap();
    let _writer = checkpointed_at_10(dir.path()).await;
    let (table, recording) = recorded(dir.path()).await;
    let from = |v: u64| Some(format!("t/_delta_log/{v:020}"));
    for (start, listed_from, rows) in [(12, from(10), 9), (10, from(10), 11), (5, None, 16)] {
        recording.clear();
        let plan = table.changes(v(start), None).build().await.unwrap();
        assert_eq!(num_rows(&collect(&plan).await), rows, "from {start}");
        let lists = recording.lists();
        assert!(!lists.is_empty());
        assert!(
            lists.iter().all(|l| l.offset == listed_from),
            "from {start}: {lists:?}"
        );
        // Nor are the commits before the checkpoint read.
        let read: Vec<u64> = recording
            .paths_read(|name| commit_version(name).is_some())
            .iter()
            .filter_map(|p| commit_version(p.rsplit('/').next().unwrap_or_default()))
            .collect();
        if listed_from.is_some() {
            assert!(read.iter().all(|&c| c >= 10), "from {start}: {read:?}");
        }
    }
    // A timestamp bound lists from version 0.
    recording.clear();
    table
        .changes(ChangeBound::TimestampMs(0), None)
        .build()
        .await
        .unwrap();
    assert!(recording.lists().iter().all(|l| l.offset.is_none()));
    // The checkpoint removed since the open: from version 0, same rows.
    let log = dir.path().join("t/_delta_log");
    for entry in std::fs::read_dir(&log).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().contains(".checkpoint.") {
            std::fs::remove_file(path).unwrap();
        }
    }
    recording.clear();
    let plan = table.changes(v(12), None).build().await.unwrap();
    assert_eq!(num_rows(&collect(&plan).await), 9);
    assert_eq!(
        recording.lists().last().map(|l| l.offset.clone()),
        Some(None)
    );
}

/// A table at `dir/t` of `n` commits, each adding one file `f{v}.parquet`
/// of the row `id = v`, the feed on.
fn many_commits(dir: &Path, n: u64) {
    commits_of(dir, n, |v| (format!("f{v}.parquet"), vec![v as i32]));
}

/// A table at `dir/t` of `n` commits, commit `v` adding the one file
/// `file(v)` names with the ids it gives, the feed on.
fn commits_of(dir: &Path, n: u64, file: impl Fn(u64) -> (String, Vec<i32>)) {
    let mut t = HandTable::new(dir.join("t")).unwrap();
    for version in 0..n {
        let (name, ids) = file(version);
        let size = t.write_parquet(&name, &ids_batch(&ids)).unwrap();
        let mut actions = Vec::new();
        if version == 0 {
            actions.extend([protocol(), metadata(id_field(), &[], cdf_on())]);
        }
        actions.push(add(&name, size, json!({}), None));
        t.commit(&actions).unwrap();
    }
}

/// Run commit by commit, the feed gives the rows of its first commit
/// before it reads the later commits (request order: the first data file
/// is read while most commit files are not), and a limit stops reading
/// commits; collected into a plan, it reads every commit first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_of_the_first_commits_come_before_later_commits_are_read() {
    let dir = tempfile::tempdir().unwrap();
    many_commits(dir.path(), 40);
    // A checkpoint at the latest version: the open reads no commit (none
    // is kept), so the feed reads every commit of its range itself.
    dar_testkit::write_log_checkpoint(&dir.path().join("t")).unwrap();
    let (table, recording) = recorded(dir.path()).await;
    let commits_read = || {
        recording
            .paths_read(|name| commit_version(name).is_some())
            .len()
    };
    let scan = table
        .changes(v(0), None)
        .with_concurrency(1)
        .open()
        .await
        .unwrap();
    assert_eq!((scan.start(), scan.end()), (0, 39));
    assert_eq!(commits_read(), 0, "opening reads no commit of the range");
    let mut batches = scan.execute();
    let first = batches.next().await.unwrap().unwrap();
    assert_eq!(change_rows(&[first]), ["0|insert|0"]);
    let gets = recording.paths_read(|_| true);
    let first_data = gets.iter().position(|p| p.ends_with(".parquet")).unwrap();
    let read_before: Vec<&String> = gets[..first_data]
        .iter()
        .filter(|p| commit_version(p.rsplit('/').next().unwrap_or_default()).is_some())
        .collect();
    // The commits read ahead (8, the least read-ahead), not all 40.
    assert!(read_before.len() <= 9, "{read_before:?}");
    assert!(commits_read() < 20, "{gets:?}");
    let rest: Vec<_> = batches.map(|b| b.unwrap()).collect().await;
    assert_eq!(num_rows(&rest), 39);
    assert_eq!(commits_read(), 40);

    // A limit stops reading commits.
    recording.clear();
    let scan = table
        .changes(v(0), None)
        .with_limit(2)
        .open()
        .await
        .unwrap();
    assert_eq!(num_rows(&scan.collect().await.unwrap()), 2);
    assert!(commits_read() < 20, "{}", commits_read());

    // A plan holds every task, so it reads every commit first.
    recording.clear();
    let plan = table.changes(v(0), None).build().await.unwrap();
    assert_eq!(commits_read(), 40);
    assert_eq!(plan.tasks().len(), 40);
}

/// On object storage a feed reads many small change files together:
/// beyond the 64 files a scan keeps in flight, while their sizes stay
/// within a bound, so 150 one-row files take one round trip, not three.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_small_change_files_are_read_together_on_object_storage() {
    use std::time::Duration;

    let dir = tempfile::tempdir().unwrap();
    let mut t = HandTable::new(dir.path().join("t")).unwrap();
    let mut actions = vec![protocol(), metadata(id_field(), &[], cdf_on())];
    for i in 0..150 {
        let name = format!("f{i}.parquet");
        let size = t.write_parquet(&name, &ids_batch(&[i])).unwrap();
        actions.push(add(&name, size, json!({}), None));
    }
    t.commit(&actions).unwrap();
    // An `s3://` table (a remote store's defaults) read through the gate.
    let (table, slow, gate) = gated(dir.path(), "s3://bucket/t").await;
    let opened = gate.max_in_flight();
    slow.set_delay(Duration::from_millis(30));
    let scan = table.changes(v(0), None).open().await.unwrap();
    let rows = scan.collect().await.unwrap();
    assert_eq!(num_rows(&rows), 150);
    assert!(
        gate.max_in_flight() > 64,
        "reads in flight: {} (after opening: {opened})",
        gate.max_in_flight()
    );
}

/// A feed that ends at a version the open table's own listing covers
/// (from its checkpoint, before the start) lists nothing: it takes that
/// listing. A start at or before the checkpoint, an open end (the latest
/// version when the feed opens) or an end past the open version list
/// again; the rows are the same either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_ending_at_a_version_the_open_listed_lists_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (mut t, schema) = checkpointed_at_10(dir.path()).await;
    let (table, recording) = recorded(dir.path()).await;
    // Two commits after the open.
    for i in 21..=22 {
        t.append(&id_part(&schema, &[i], "a")).await.unwrap();
    }
    for (start, end, lists, rows) in [
        (12, Some(20), false, 9),
        (11, Some(15), false, 5),
        (20, Some(20), false, 1),
        (10, Some(15), true, 6),
        (5, Some(20), true, 16),
        (12, None, true, 11),
        (12, Some(22), true, 11),
    ] {
        recording.clear();
        let scan = table.changes(v(start), end.map(v)).open().await.unwrap();
        assert_eq!(
            num_rows(&scan.collect().await.unwrap()),
            rows,
            "{start}..{end:?}"
        );
        assert_eq!(
            !recording.lists().is_empty(),
            lists,
            "{start}..{end:?}: {:?}",
            recording.lists()
        );
        // The open's commits are kept: none is read again.
        if !lists {
            assert!(
                recording
                    .paths_read(|name| commit_version(name).is_some())
                    .is_empty()
            );
        }
    }

    // Without a checkpoint the open listed from version 0.
    let dir = tempfile::tempdir().unwrap();
    many_commits(dir.path(), 30);
    let (table, recording) = recorded(dir.path()).await;
    let scan = table.changes(v(0), Some(v(29))).open().await.unwrap();
    assert_eq!(num_rows(&scan.collect().await.unwrap()), 30);
    assert!(recording.lists().is_empty(), "{:?}", recording.lists());
}
