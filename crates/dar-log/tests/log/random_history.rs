//! Randomized histories (adds, removes, re-adds, DV changes, checkpoints at
//! random versions) replayed by dar-log must equal a simple in-memory model.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use serde_json::Value;

use crate::writer::{TestLog, add, dv, metadata, protocol, remove};

/// The model: live path -> DV id (as written by `writer::dv`), per version.
pub(crate) type State = BTreeMap<String, Option<u32>>;

#[derive(Debug, Clone)]
pub(crate) enum Op {
    /// Add a brand-new file.
    AddNew,
    /// Remove the n-th live file.
    Remove(usize),
    /// Re-add the n-th ever-removed file (no DV).
    ReAdd(usize),
    /// Replace the n-th live file's DV.
    NewDv(usize),
    /// Re-add an identical live file (refreshes stats; no change).
    Touch(usize),
}

pub(crate) fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => Just(Op::AddNew),
        2 => any::<usize>().prop_map(Op::Remove),
        1 => any::<usize>().prop_map(Op::ReAdd),
        2 => any::<usize>().prop_map(Op::NewDv),
        1 => any::<usize>().prop_map(Op::Touch),
    ]
}

fn dv_json(id: Option<u32>) -> Option<Value> {
    id.map(dv)
}

/// Apply one commit's ops to the model, returning the commit's actions.
/// A commit touches each path at most once (valid logs do).
pub(crate) fn apply(
    state: &mut State,
    removed: &mut Vec<String>,
    next: &mut u32,
    ops: &[Op],
) -> Vec<Value> {
    let mut actions = Vec::new();
    let mut touched = BTreeSet::new();
    for op in ops {
        let live: Vec<String> = state
            .keys()
            .filter(|p| !touched.contains(*p))
            .cloned()
            .collect();
        match op {
            Op::AddNew => {
                *next += 1;
                let p = format!("part-{next}.parquet");
                touched.insert(p.clone());
                actions.push(add(&p, None));
                state.insert(p, None);
            }
            Op::Remove(n) if !live.is_empty() => {
                let p = live[n % live.len()].clone();
                let old = state.remove(&p).flatten();
                actions.push(remove(&p, dv_json(old)));
                removed.push(p.clone());
                touched.insert(p);
            }
            Op::ReAdd(n) => {
                let candidates: Vec<&String> = removed
                    .iter()
                    .filter(|p| !state.contains_key(*p) && !touched.contains(*p))
                    .collect();
                if let Some(p) = candidates
                    .get(n % candidates.len().max(1))
                    .map(|p| (*p).clone())
                {
                    actions.push(add(&p, None));
                    state.insert(p.clone(), None);
                    touched.insert(p);
                }
            }
            Op::NewDv(n) if !live.is_empty() => {
                let p = live[n % live.len()].clone();
                *next += 1;
                let old = state.insert(p.clone(), Some(*next)).flatten();
                actions.push(remove(&p, dv_json(old)));
                actions.push(add(&p, dv_json(Some(*next))));
                touched.insert(p);
            }
            Op::Touch(n) if !live.is_empty() => {
                let p = live[n % live.len()].clone();
                actions.push(add(&p, dv_json(state[&p])));
                touched.insert(p);
            }
            _ => {}
        }
    }
    actions
}

pub(crate) fn checkpoint_actions(state: &State) -> Vec<Value> {
    let mut a = vec![protocol(), metadata(false)];
    a.extend(state.iter().map(|(p, d)| add(p, dv_json(*d))));
    a
}

async fn replayed(log: &TestLog, version: Option<u64>) -> State {
    let b = log.builder();
    let b = match version {
        Some(v) => b.with_version(v),
        None => b,
    };
    let s = b.build().await.unwrap();
    let fi = s.file_index().unwrap();
    (0..fi.len())
        .map(|i| {
            let id = fi
                .deletion_vector(i)
                .unwrap()
                .map(|d| d.path_or_inline_dv()[2..].parse::<u32>().unwrap());
            (fi.path.value(i).to_string(), id)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn replay_matches_model(
        commits in prop::collection::vec(prop::collection::vec(op(), 0..6), 1..12),
        checkpoint_at in prop::collection::btree_set(0usize..12, 0..3),
        probe in any::<usize>(),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let log = TestLog::new();
            let mut state = State::new();
            let mut removed = Vec::new();
            let mut next = 0;
            let mut states = Vec::new();
            for (v, ops) in commits.iter().enumerate() {
                let mut actions = apply(&mut state, &mut removed, &mut next, ops);
                if v == 0 {
                    actions.splice(0..0, [protocol(), metadata(false)]);
                }
                // Real commits always carry commitInfo (an empty commit is corrupt).
                actions.insert(0, serde_json::json!({"commitInfo": {"operation": "TEST"}}));
                log.commit(v as u64, &actions).await;
                if checkpoint_at.contains(&v) {
                    log.checkpoint(v as u64, &checkpoint_actions(&state)).await;
                }
                states.push(state.clone());
            }
            prop_assert_eq!(&replayed(&log, None).await, states.last().unwrap());
            let v = probe % states.len();
            prop_assert_eq!(&replayed(&log, Some(v as u64)).await, &states[v]);
            Ok(())
        })?;
    }
}
