//! A local checkpoint's statistics are let go once the open has decoded
//! its counts, and read again from the file when a query needs them, only
//! while the file is the one the open read (else its files have no
//! statistics for the columns not parsed yet: kept, never pruned on
//! unchecked bytes); through a store of the caller's (or any object
//! store) they stay in memory. Every checkpoint shape: classic JSON
//! stats, `stats_parsed` only, multi-part, V2 with sidecars.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use dar_io::ObjectClass;
use dar_scan::Table;
use dar_testkit::{CheckpointOptions, TableWriter};
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;

use crate::common::table_over;

/// A log-only table of `files` files of two rows each (`id` 0.., `day`
/// = id % 7), checkpointed as `options` says, then one more commit.
async fn write(dir: &Path, options: &CheckpointOptions, files: usize) {
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir).unwrap());
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("day", DataType::Int64, true),
    ]));
    let mut w = TableWriter::builder(store, "t".into(), Arc::clone(&schema))
        .create()
        .await
        .unwrap();
    let rows = |from: i64, n: i64| {
        RecordBatch::try_new(
            Arc::clone(&schema),
            vec![
                Arc::new(Int64Array::from_iter_values(from..from + n)),
                Arc::new(Int64Array::from_iter_values(
                    (from..from + n).map(|i| i % 7),
                )),
            ],
        )
        .unwrap()
    };
    w.append_log_only(&rows(0, 2 * files as i64), 2)
        .await
        .unwrap();
    w.checkpoint_with(options).await.unwrap();
    w.append_log_only(&rows(2 * files as i64, 4), 2)
        .await
        .unwrap();
}

/// Checkpoint requests made so far through `t`'s store.
fn checkpoint_requests(t: &Table) -> u64 {
    t.store()
        .metrics()
        .snapshot()
        .class(ObjectClass::Checkpoint)
        .requests
}

/// The paths of the files `sql` keeps, sorted.
fn kept(t: &Table, sql: &str) -> Vec<String> {
    let plan = t.scan().with_predicate_sql(sql).build().unwrap();
    let mut paths: Vec<String> = plan.tasks().iter().map(|t| t.log_path.clone()).collect();
    paths.sort();
    paths
}

/// Every checkpoint file (parts and sidecars) of the table at `root`.
fn checkpoint_files(root: &Path) -> Vec<std::path::PathBuf> {
    let log = root.join("_delta_log");
    let mut out: Vec<_> = std::fs::read_dir(&log)
        .unwrap()
        .chain(
            std::fs::read_dir(log.join("_sidecars"))
                .into_iter()
                .flatten(),
        )
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "parquet")
                && (p.to_string_lossy().contains("checkpoint")
                    || p.to_string_lossy().contains("_sidecars"))
        })
        .collect();
    out.sort();
    out
}

/// The checks of the module docs on a table of `files` files whose
/// checkpoint is written as `options` says (`shape` names it).
async fn check(options: CheckpointOptions, shape: &str, files: usize) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &options, files).await;
    let root = dir.path().join("t");
    let uri = root.to_str().unwrap().to_string();
    let local = Table::open(&uri).await.unwrap();
    let caller: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new());
    let held = table_over(&format!("file://{uri}"), caller).await;

    // The local index holds no stats chunks: less than the same index
    // with them.
    let bytes = |t: &Table| t.scan().build().unwrap().metrics().snapshot().index_bytes;
    assert!(
        bytes(&local) < bytes(&held),
        "{shape}: local {} bytes, held {}",
        bytes(&local),
        bytes(&held)
    );

    // Both prune alike: ids 100..139 are files 50..69.
    let (before_local, before_held) = (checkpoint_requests(&local), checkpoint_requests(&held));
    let sql = "id >= 100 AND id < 140";
    let ids = kept(&local, sql);
    assert_eq!(ids.len(), 20, "{shape}");
    assert_eq!(ids, kept(&held, sql), "{shape}");
    // The local stats were read again; the held ones were not.
    assert!(
        checkpoint_requests(&local) > before_local,
        "{shape}: no checkpoint read by the local plan"
    );
    assert_eq!(checkpoint_requests(&held), before_held, "{shape}");

    // A checkpoint file replaced since the open (even by its own bytes)
    // is not read again: for a column not parsed yet, its files read as
    // files without statistics, so the filter keeps them all (and says
    // so), where the held stats prune. A column parsed before still prunes.
    let replaced = checkpoint_files(&root);
    assert!(!replaced.is_empty(), "{shape}");
    for f in &replaced {
        dar_testdata::replace_by_copy(f);
    }
    let days = |t: &Table| {
        let plan = t.scan().with_predicate_sql("day = 3").build().unwrap();
        let m = plan.metrics().snapshot();
        (plan.tasks().len(), m.stats_files_unavailable)
    };
    // Day 3: a seventh of the checkpoint's files, and those of the two
    // later files (their own stats, in a commit) that hold one.
    let later = (0..2)
        .filter(|f| (0..2).any(|r| (2 * files + 2 * f + r) % 7 == 3))
        .count();
    let (kept_held, unavailable_held) = days(&held);
    assert!(
        kept_held > later && kept_held < files,
        "{shape}: {kept_held} files"
    );
    assert_eq!(unavailable_held, 0, "{shape}");
    assert_eq!(days(&local), (files + later, files as u64), "{shape}");
    assert_eq!(kept(&local, sql), ids, "{shape}");
    // A table opened anew reads the new files.
    let reopened = Table::open(&uri).await.unwrap();
    assert_eq!(kept(&reopened, sql), ids, "{shape}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_checkpoint_stats_are_read_again_only_from_the_file_first_read() {
    for (options, shape, _) in shapes() {
        check(options, shape, 300).await;
    }
}

/// Every checkpoint shape at 300 files: its options, its name, and how
/// many checkpoint parts hold adds beside the one with the metadata.
fn shapes() -> [(CheckpointOptions, &'static str, usize); 4] {
    [
        (CheckpointOptions::default(), "classic, JSON stats", 1),
        (
            CheckpointOptions::default()
                .with_stats_json(false)
                .with_stats_parsed(true),
            "classic, stats_parsed",
            1,
        ),
        (CheckpointOptions::default().with_parts(3), "multi-part", 3),
        (
            CheckpointOptions::default().with_sidecars(2),
            "V2, sidecars",
            1,
        ),
    ]
}

/// A checkpoint of rows enough to split each decoding over two cores has
/// its stats read and decoded before its other chunks: the same checks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_local_checkpoint_decodes_its_stats_first_with_the_same_results() {
    check(
        CheckpointOptions::default(),
        "classic, 70,000 files",
        70_000,
    )
    .await;
}

/// A table opened for a known predicate (`with_stats_for_predicate`) has
/// its columns' stats decoded with the checkpoint's counts: its plan reads
/// no checkpoint byte again, parses nothing, and keeps the files the
/// on-demand plan keeps, even after the checkpoint files were replaced.
/// `parts` is the number of checkpoint parts: a part other than the one
/// holding the metadata may decode its counts first, and then its stats
/// once more at open.
async fn check_known(options: CheckpointOptions, shape: &str, files: usize, parts: usize) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &options, files).await;
    let root = dir.path().join("t");
    let uri = root.to_str().unwrap().to_string();
    let sql = "id >= 100 AND id < 140";
    let on_demand = kept(&Table::open(&uri).await.unwrap(), sql);
    assert_eq!(on_demand.len(), 20, "{shape}");

    let options = dar_scan::TableOptions::new().with_stats_for_predicate(sql);
    let known = Table::open_with(&uri, options).await.unwrap();
    let stats = &known.snapshot().file_index().unwrap().stats;
    assert_eq!(stats.parsed_columns(), 1, "{shape}: id's at open");
    let decodes = stats.checkpoint_decodes();
    assert!(decodes < parts, "{shape}: {decodes} decodes again");
    let before = checkpoint_requests(&known);
    for f in &checkpoint_files(&root) {
        dar_testdata::replace_by_copy(f);
    }
    let plan = known.scan().with_predicate_sql(sql).build().unwrap();
    let m = plan.metrics().snapshot();
    assert_eq!(m.stats_columns_parsed, 0, "{shape}");
    assert_eq!(m.stats_files_unavailable, 0, "{shape}");
    assert_eq!(checkpoint_requests(&known), before, "{shape}: read again");
    let mut paths: Vec<String> = plan.tasks().iter().map(|t| t.log_path.clone()).collect();
    paths.sort();
    assert_eq!(paths, on_demand, "{shape}");
    // Another column's stats are still parsed when asked for (from the
    // replaced files: unavailable, so kept).
    let day = known.scan().with_predicate_sql("day = 3").build().unwrap();
    assert_eq!(day.metrics().snapshot().stats_columns_parsed, 1, "{shape}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_predicate_known_at_open_has_its_stats_decoded_with_the_counts() {
    for (options, shape, parts) in shapes() {
        check_known(options, shape, 300, parts).await;
    }
    // Rows enough to split each decoding over two cores: the other chunks
    // are read and decoded first (they hold the metadata), then the stats.
    check_known(
        CheckpointOptions::default(),
        "classic, 70,000 files",
        70_000,
        1,
    )
    .await;
}
