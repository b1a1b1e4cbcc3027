//! A checkpoint's adds keep their paths in one array per decoded piece
//! (gathered as the batches decode), not one per 8,192-row batch: the
//! batches' own arrays are released as they decode, so they are never
//! live beside the file index's copy.

use std::collections::BTreeSet;

use dar_log::checkpoint::CheckpointIo;
use dar_log::listing::{KeptCommits, find_segment};
use dar_log::paths::TablePaths;
use dar_log::replay::replay_segment;
use url::Url;

use crate::writer::{TestLog, add, metadata, protocol, remove};

/// Adds in the checkpoint: more than two pieces' minimum (32k rows each),
/// nine decoded batches.
const FILES: usize = 70_000;

#[tokio::test]
async fn a_checkpoint_piece_keeps_its_paths_in_one_array() {
    let log = TestLog::new();
    let name = |i: usize| format!("part-{i:06}-with-a-path-long-enough-to-matter.parquet");
    let mut actions = vec![protocol(), metadata(false)];
    actions.extend((0..FILES).map(|i| add(&name(i), None)));
    log.commit(0, &actions[..2]).await;
    log.checkpoint(1, &actions).await;
    // A newer commit removes every seventh file: each batch is filtered
    // before its paths are gathered.
    let removed: Vec<_> = (0..FILES)
        .step_by(7)
        .map(|i| remove(&name(i), None))
        .collect();
    log.commit(2, &removed).await;

    let seg = find_segment(log.store.as_ref(), &log.root, None)
        .await
        .unwrap();
    let paths = TablePaths::new(&Url::parse("memory:///t/").unwrap(), &log.root);
    let state = replay_segment(
        &log.store,
        &CheckpointIo::new(),
        &paths,
        &seg,
        false,
        &KeptCommits::default(),
    )
    .await
    .unwrap();

    // Exactly the files not removed, each once.
    let got: Vec<String> = state
        .adds
        .iter()
        .flat_map(|a| a.path.iter().map(|p| p.unwrap().to_string()))
        .collect();
    let expected: BTreeSet<String> = (0..FILES).filter(|i| i % 7 != 0).map(name).collect();
    assert_eq!(got.len(), expected.len());
    assert_eq!(got.into_iter().collect::<BTreeSet<_>>(), expected);

    // The batches share a piece's array: at most one array per core
    // decoding, against one per batch.
    assert!(state.adds.len() >= 9, "{} batches", state.adds.len());
    let arrays: BTreeSet<usize> = state
        .adds
        .iter()
        .map(|a| a.path.value_data().as_ptr() as usize)
        .collect();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    assert!(
        arrays.len() <= cores,
        "{} path arrays for {} batches on {cores} cores",
        arrays.len(),
        state.adds.len()
    );
    // And each array holds its batches' paths and nothing else: the
    // filtered-out paths were not kept.
    let held: usize = arrays
        .iter()
        .map(|&p| {
            let a = state
                .adds
                .iter()
                .find(|a| a.path.value_data().as_ptr() as usize == p)
                .unwrap();
            a.path.value_data().len()
        })
        .sum();
    let used: usize = state
        .adds
        .iter()
        .map(|a| {
            let o = a.path.value_offsets();
            (o[o.len() - 1] - o[0]) as usize
        })
        .sum();
    assert_eq!(held, used);
}
