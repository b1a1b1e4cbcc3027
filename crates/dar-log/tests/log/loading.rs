//! How the file index is loaded changes nothing in it: checkpoint parts,
//! sidecars and stats decoded side by side or in sequence, column stats
//! parsed on demand or at load, on every shared table and on random logs
//! whose checkpoints are classic, multi-part or V2 with sidecars. And
//! opening parses no column statistics; a query parses only its columns'.

use std::sync::Arc;

use arrow_array::RecordBatch;
use dar_log::{Snapshot, SnapshotBuilder, StatsLoading};
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::common::builder;
use crate::random_history::{Op, State, apply, checkpoint_actions, op};
use crate::writer::{
    TestLog, checkpoint_bytes, checkpoint_bytes_in, metadata, protocol, v2_checkpoint_schema,
};

fn multi_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The whole index (every column's stats included) of `b`'s snapshot,
/// decoded on one task and parsed at load: what the parallel, on-demand
/// default must equal.
async fn sequential_index(b: SnapshotBuilder) -> RecordBatch {
    let s = b
        .with_parallel_decode(false)
        .with_stats_loading(StatsLoading::AtLoad)
        .build()
        .await
        .unwrap();
    s.file_index().unwrap().to_record_batch().unwrap()
}

#[test]
fn every_shared_table_loads_the_same_in_parallel_and_sequence_lazily_and_eagerly() {
    let rt = multi_thread();
    let mut seen = 0;
    for t in crate::tables::TABLES {
        let Some(dir) = crate::tables::table_dir(t.name) else {
            return;
        };
        rt.block_on(async {
            let lazy = builder(&dir).build().await.unwrap();
            assert_eq!(
                lazy.file_index().unwrap().stats.parsed_columns(),
                0,
                "{}: opening parsed column stats",
                t.name
            );
            let parallel = lazy.file_index().unwrap().to_record_batch().unwrap();
            let sequential = sequential_index(builder(&dir)).await;
            assert_eq!(parallel, sequential, "{}", t.name);
        });
        seen += 1;
    }
    assert!(seen > 30, "only {seen} tables");
}

/// `log` opened with `value`'s stats parsed while it opens.
async fn value_known_at_open(log: &TestLog) -> Snapshot {
    log.builder()
        .with_stats_loading(StatsLoading::Columns(vec![vec!["value".into()]]))
        .build()
        .await
        .unwrap()
}

/// Where a random log's checkpoint puts its adds.
#[derive(Debug, Clone, Copy)]
enum Layout {
    Classic,
    MultiPart(usize),
    Sidecars(usize),
}

fn layout() -> impl Strategy<Value = Layout> {
    prop_oneof![
        Just(Layout::Classic),
        (2usize..5).prop_map(Layout::MultiPart),
        (1usize..4).prop_map(Layout::Sidecars),
    ]
}

/// `add` actions with stats on `value` (their bounds from the path), so
/// the column stats differ from file to file.
fn with_stats(mut actions: Vec<Value>) -> Vec<Value> {
    for a in &mut actions {
        if let Some(add) = a.get_mut("add") {
            let path = add["path"].as_str().unwrap_or_default();
            let n: i64 = path
                .trim_start_matches("part-")
                .trim_end_matches(".parquet")
                .parse()
                .unwrap_or(0);
            add["stats"] = Value::String(
                json!({"numRecords": 3 + n % 5, "minValues": {"value": n},
                       "maxValues": {"value": n * 2 + 1}, "nullCount": {"value": n % 2}})
                .to_string(),
            );
        }
    }
    actions
}

/// Writes the checkpoint of `state` at `version` in `layout`.
async fn write_checkpoint(log: &TestLog, version: u64, state: &State, layout: Layout) {
    let all = with_stats(checkpoint_actions(state));
    let (header, adds) = all.split_at(2);
    match layout {
        Layout::Classic => log.checkpoint(version, &all).await,
        Layout::MultiPart(n) => {
            for i in 0..n {
                let mut part: Vec<Value> = if i == 0 { header.to_vec() } else { Vec::new() };
                part.extend(adds.iter().skip(i).step_by(n).cloned());
                let name = format!(
                    "_delta_log/{version:020}.checkpoint.{:010}.{n:010}.parquet",
                    i + 1
                );
                log.put(&name, checkpoint_bytes(&part)).await;
            }
        }
        Layout::Sidecars(n) => {
            let mut top = header.to_vec();
            top.push(json!({"checkpointMetadata": {"version": version}}));
            for i in 0..n {
                let part: Vec<Value> = adds.iter().skip(i).step_by(n).cloned().collect();
                let bytes = checkpoint_bytes(&part);
                let name = format!("{version:020}-side-{i}.parquet");
                top.push(json!({"sidecar": {"path": name, "sizeInBytes": bytes.len(),
                                            "modificationTime": 0}}));
                log.put(&format!("_delta_log/_sidecars/{name}"), bytes)
                    .await;
            }
            let uuid = format!("3a0d65cd-4056-49b8-937b-{version:012}");
            let name = format!("_delta_log/{version:020}.checkpoint.{uuid}.parquet");
            log.put(&name, checkpoint_bytes_in(v2_checkpoint_schema(), &top))
                .await;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn parallel_decode_builds_the_sequential_index(
        commits in prop::collection::vec(prop::collection::vec(op(), 0..8), 2..10),
        checkpoint_at in 0usize..10,
        layout in layout(),
    ) {
        let rt = multi_thread();
        rt.block_on(async {
            let log = TestLog::new();
            let (mut state, mut removed, mut next) = (State::new(), Vec::new(), 0);
            let checkpoint_at = checkpoint_at % commits.len();
            for (v, ops) in commits.iter().enumerate() {
                let ops: &[Op] = ops;
                let mut actions = with_stats(apply(&mut state, &mut removed, &mut next, ops));
                if v == 0 {
                    actions.splice(0..0, [protocol(), metadata(false)]);
                }
                actions.insert(0, json!({"commitInfo": {"operation": "TEST"}}));
                log.commit(v as u64, &actions).await;
                if v == checkpoint_at {
                    write_checkpoint(&log, v as u64, &state, layout).await;
                }
            }
            let parallel = log.builder().build().await.unwrap();
            let index = parallel.file_index().unwrap();
            let mut paths: Vec<String> =
                index.path.iter().flatten().map(String::from).collect();
            paths.sort();
            prop_assert_eq!(paths, state.keys().cloned().collect::<Vec<_>>());
            let sequential = sequential_index(log.builder()).await;
            prop_assert_eq!(index.to_record_batch().unwrap(), sequential.clone());
            // `value`'s stats parsed while it opens: decoded with the
            // counts, except from the parts of a multi-part checkpoint
            // that decoded theirs before the part with the metadata was
            // read. The same index either way.
            let known = value_known_at_open(&log).await;
            let stats = &known.file_index().unwrap().stats;
            prop_assert_eq!(stats.parsed_columns(), 1);
            let decodes = stats.checkpoint_decodes();
            match layout {
                Layout::MultiPart(n) => prop_assert!(decodes < n, "{} of {} parts", decodes, n),
                _ => prop_assert_eq!(decodes, 0),
            }
            prop_assert_eq!(known.file_index().unwrap().to_record_batch().unwrap(), sequential);
            prop_assert_eq!(stats.checkpoint_decodes(), decodes, "nothing decoded again");
            Ok(())
        })?;
    }
}

/// A log whose checkpoint (v0) says `value` has statistics, then a commit
/// whose metadata says which columns have them now (`configuration`).
async fn log_with_newer_metadata(configuration: Value) -> TestLog {
    let log = TestLog::new();
    let state: State = (0..50)
        .map(|i| (format!("part-{i}.parquet"), None))
        .collect();
    log.commit(0, &[json!({"commitInfo": {}}), protocol(), metadata(false)])
        .await;
    write_checkpoint(&log, 0, &state, Layout::Classic).await;
    let mut newer = metadata(false);
    newer["metaData"]["configuration"] = configuration;
    log.commit(1, &[json!({"commitInfo": {}}), newer]).await;
    log
}

#[test]
fn the_newest_metadata_says_which_stats_decode_with_the_counts() {
    let rt = multi_thread();
    rt.block_on(async {
        // Still indexed: decoded with the counts, from the newer metadata.
        let log = log_with_newer_metadata(json!({"delta.dataSkippingNumIndexedCols": "5"})).await;
        let s = value_known_at_open(&log).await;
        let stats = &s.file_index().unwrap().stats;
        assert_eq!((stats.parsed_columns(), stats.checkpoint_decodes()), (1, 0));
        let min = stats.column("value").unwrap().unwrap();
        let min = min.min_values.as_ref().unwrap();
        assert_eq!(min.len(), 50);
        assert_eq!(
            s.file_index().unwrap().to_record_batch().unwrap(),
            sequential_index(log.builder()).await
        );
        // No longer indexed (the checkpoint's metadata still says it is):
        // no stats, and none parsed from the checkpoint's text.
        let log = log_with_newer_metadata(json!({"delta.dataSkippingNumIndexedCols": "0"})).await;
        let s = value_known_at_open(&log).await;
        let stats = &s.file_index().unwrap().stats;
        assert!(stats.columns().is_empty());
        assert_eq!((stats.parsed_columns(), stats.checkpoint_decodes()), (0, 0));
        assert!(stats.column("value").unwrap().is_none());
    });
}

#[test]
fn columns_named_for_the_open_are_parsed_once_and_others_on_demand() {
    let Some(dir) = dar_testdata::table("kernel/parsed-stats") else {
        return;
    };
    let rt = multi_thread();
    rt.block_on(async {
        let on_demand = builder(&dir).build().await.unwrap();
        let known = builder(&dir)
            .with_stats_loading(StatsLoading::Columns(vec![
                vec!["id".into()],
                vec!["nope".into()],
            ]))
            .build()
            .await
            .unwrap();
        let stats = &known.file_index().unwrap().stats;
        assert_eq!(stats.parsed_columns(), 1, "id's only");
        let expected = on_demand
            .file_index()
            .unwrap()
            .stats
            .column("id")
            .unwrap()
            .unwrap();
        let id = stats.column("id").unwrap().unwrap();
        assert_eq!(stats.parsed_columns(), 1, "kept, not parsed again");
        assert_eq!(id.min_values, expected.min_values);
        assert_eq!(id.max_values, expected.max_values);
        assert_eq!(id.null_count, expected.null_count);
        stats.column("age").unwrap().unwrap();
        assert_eq!(stats.parsed_columns(), 2);
        assert_eq!(
            known.file_index().unwrap().to_record_batch().unwrap(),
            on_demand.file_index().unwrap().to_record_batch().unwrap()
        );
    });
}

#[test]
fn a_query_parses_only_its_columns_stats_once() {
    let Some(dir) = dar_testdata::table("kernel/parsed-stats") else {
        return;
    };
    let rt = multi_thread();
    rt.block_on(async {
        let s: Arc<Snapshot> = Arc::new(builder(&dir).build().await.unwrap());
        let stats = &s.file_index().unwrap().stats;
        assert!(stats.columns().len() >= 4);
        assert_eq!(stats.parsed_columns(), 0);
        let before = s.file_index().unwrap().memory_size();
        let id = stats.column("id").unwrap().unwrap();
        assert_eq!(stats.parsed_columns(), 1);
        assert!(s.file_index().unwrap().memory_size() > before);
        let again = stats.column("id").unwrap().unwrap();
        assert!(Arc::ptr_eq(&id, &again), "kept, not parsed again");
        assert_eq!(stats.parsed_columns(), 1);
        let both = stats
            .for_paths(&[vec!["id".into()], vec!["age".into()], vec!["nope".into()]])
            .unwrap();
        assert_eq!(both.len(), 2);
        assert_eq!(stats.parsed_columns(), 2);
        stats.all().unwrap();
        assert_eq!(stats.parsed_columns(), stats.columns().len());
    });
}

#[test]
fn a_large_checkpoint_decodes_its_stats_in_pieces_to_the_same_index() {
    let rt = multi_thread();
    rt.block_on(async {
        let log = TestLog::new();
        let state: State = (0..70_000)
            .map(|i| (format!("part-{i}.parquet"), None))
            .collect();
        log.commit(0, &[json!({"commitInfo": {}}), protocol(), metadata(false)])
            .await;
        write_checkpoint(&log, 0, &state, Layout::Classic).await;
        let parallel = log.builder().build().await.unwrap();
        let index = parallel.file_index().unwrap();
        assert_eq!(index.len(), 70_000);
        let records: i64 = index.stats.num_records.iter().flatten().sum();
        let expected: i64 = (0..70_000i64).map(|n| 3 + n % 5).sum();
        assert_eq!(records, expected);
        let sequential = sequential_index(log.builder()).await;
        assert_eq!(index.to_record_batch().unwrap(), sequential);
        // `value`'s stats decoded in pieces with the counts.
        let known = value_known_at_open(&log).await;
        let stats = &known.file_index().unwrap().stats;
        assert_eq!((stats.parsed_columns(), stats.checkpoint_decodes()), (1, 0));
        assert_eq!(
            known.file_index().unwrap().to_record_batch().unwrap(),
            sequential
        );
    });
}
