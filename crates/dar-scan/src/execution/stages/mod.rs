//! The per-file chain: each stage is a function of the previous stage's
//! value that returns the next value.
//!
//! ```text
//!  ScanTask
//!     │ open::FileToOpen::new        partition values typed once
//!     ▼
//!  FileToOpen ──decide──► Count(rows) (log knows it) │ Skip (partition-
//!     │                   only conjuncts false) │ Open
//!     │ footer::FooterRead::load     1 request (size from the log),
//!     ▼                              cached; Arrow schema derived once;
//!  FooterRead                        ColumnMap: every table column
//!     │                              resolved once (by id/name/case)
//!     │ row_groups::RowGroups::prune footer stats of the resolved leaves
//!     ▼
//!  RowGroups
//!     │ pages::prune                 page index only if it pays off;
//!     ▼                              returns a new FooterRead with it
//!  (FooterRead, RowGroups)
//!     │ dv::load                     DvCache, one read per DV file
//!     │ selection::intersect         one RowSelection (DV rows absolute)
//!     ▼
//!  FileAccess (plain data; a resolved task carries it and skips to here)
//!     │ (fewer files than threads: split into runs of row groups, each
//!     │  decoded on its own task, batches in file order)
//!     │ decode::stream               BatchPlan decided once per file:
//!     ▼                              per batch only indexing and casts
//!     │                              (wide::stream past 2048 chunks per
//!     │                              row group: parquet's async reader is
//!     │                              quadratic in chunks)
//!  Stream<RecordBatch>
//! ```
//!
//! What the stages read comes in as plain references: the spec-derived
//! [`ScanState`](crate::execution::state::ScanState), the machine's
//! [`ScanRuntime`](crate::execution::runtime::ScanRuntime), and the scan's running state
//! ([`RunningScan`](crate::execution::running::RunningScan)); this module only chains them.

pub(crate) mod decode;
pub(crate) mod dv;
pub(crate) mod footer;
pub(crate) mod open;
pub(crate) mod pages;
pub(crate) mod row_groups;
pub(crate) mod selection;
pub(crate) mod wide;

use std::sync::Arc;

use arrow_array::{RecordBatch, RecordBatchOptions};
use futures::StreamExt;
use futures::stream::BoxStream;

use crate::errors::error::{Result, ScanError};
use crate::execution::context::ScanContext;
use crate::execution::state::{ScanMode, ScanState};
use crate::planning::task::{FileAccess, ScanTask};
use footer::FooterRead;
use open::{Decision, FileToOpen};
use row_groups::RowGroups;

/// A file's batches.
pub(crate) type Batches = BoxStream<'static, Result<RecordBatch>>;

/// Stages 1-6: the footer, and what to read of the file; `None` when a
/// change data feed's side of a replaced DV changes no row (its file is
/// not opened).
pub(crate) async fn plan(
    ctx: &ScanContext,
    file: FileToOpen,
) -> Result<Option<(FooterRead, FileAccess)>> {
    let (state, runtime, running) = ctx.parts();
    let task = Arc::clone(&file.task);
    let remote = runtime.store_for(&task)?.backend().is_remote();
    // A replaced DV's side that changes no row is not opened: checked
    // first locally; on a remote store in the footer's round (a footer
    // read for nothing is cheaper than a round trip).
    let paired_in_footer_round = task.paired_dv.is_some() && remote;
    if let Some(paired) = &task.paired_dv
        && !paired_in_footer_round
        && !dv::pair_changes_rows(&task, paired, runtime, running).await?
    {
        return Ok(None);
    }
    // The DV is fetched in the footer's round when the log gives the row
    // count it is checked against, unless row-group statistics might make
    // it unneeded on a store where a wasted read is cheaper than a round.
    let early_dv = match (&task.deletion_vector, task.num_records, &task.access) {
        (Some(_), Some(rows), None) if state.pruning_predicate().is_none() || remote => Some(rows),
        _ => None,
    };
    let load = async {
        match early_dv {
            Some(rows) => {
                let (footer, dv) = futures::join!(
                    FooterRead::load(file, state, runtime, running),
                    dv::load(&task, rows, runtime, running)
                );
                Ok::<_, ScanError>((footer?, Some(dv)))
            }
            None => Ok((FooterRead::load(file, state, runtime, running).await?, None)),
        }
    };
    let (footer, early) = match &task.paired_dv {
        Some(paired) if paired_in_footer_round => {
            let (changes, loaded) =
                futures::join!(dv::pair_changes_rows(&task, paired, runtime, running), load);
            if !changes? {
                return Ok(None);
            }
            loaded?
        }
        _ => load.await?,
    };
    if (task.deletion_vector.is_some() || task.paired_dv.is_some())
        && let Some(expected) = task.num_records
        && expected != footer.num_rows()
    {
        // DV row indexes would point at the wrong rows.
        return Err(ScanError::RowCountMismatch {
            path: task.object_path.clone(),
            expected,
            actual: footer.num_rows(),
        });
    }
    if let Some(access) = &task.access {
        return Ok(Some((footer, access.clone())));
    }
    let metrics = &running.metrics;
    // Counted where the row groups are pruned, so a resolved plan that is
    // then executed counts them once.
    metrics.add_row_groups_total(footer.parquet().num_row_groups() as u64);
    let groups = RowGroups::prune(&footer, state, metrics);
    let (footer, groups) = if groups.any() {
        pages::prune(footer, groups, state, metrics).await?
    } else {
        (footer, groups)
    };
    let deleted = match (groups.any(), early) {
        (false, _) => None,
        (true, Some(dv)) => dv?,
        (true, None) => dv::load(&task, footer.num_rows(), runtime, running).await?,
    };
    let deleted = match &task.paired_dv {
        Some(other) if groups.any() => Some(
            dv::paired(
                &task,
                other,
                deleted.as_deref(),
                footer.num_rows(),
                runtime,
                running,
            )
            .await?,
        ),
        _ => deleted,
    };
    // The rows a replaced DV's side leaves out are not deletions.
    let count_deleted = task.paired_dv.is_none();
    let access = selection::intersect(&footer, groups, deleted.as_deref(), count_deleted, metrics);
    Ok(Some((footer, access)))
}

/// Batches of `rows` rows and no columns.
fn count_batches(state: &ScanState, rows: u64) -> Result<Batches> {
    let batch_size = state.spec.batch_size as u64;
    let schema = Arc::clone(&state.output_schema);
    let mut batches = Vec::new();
    let mut left = rows;
    while left > 0 {
        let n = left.min(batch_size);
        let options = RecordBatchOptions::new().with_row_count(Some(n as usize));
        let b = RecordBatch::try_new_with_options(Arc::clone(&schema), vec![], &options)
            .map_err(|e| ScanError::arrow("building a count batch", "", e))?;
        batches.push(Ok(b));
        left -= n;
    }
    Ok(futures::stream::iter(batches).boxed())
}

/// Runs the chain for one task and returns its batch stream, its row
/// groups decoded in up to `parts` parts, each on its own task.
pub(crate) async fn open(ctx: ScanContext, task: ScanTask, parts: usize) -> Result<Batches> {
    let (state, _, running) = ctx.parts();
    let file = match FileToOpen::new(task, state)?.decide(state)? {
        Decision::Count(rows) => {
            running.metrics.add_files_answered_from_log(1);
            return count_batches(state, rows);
        }
        Decision::Skip => return Ok(futures::stream::empty().boxed()),
        Decision::Open(file) => file,
    };
    let Some((footer, access)) = plan(&ctx, file).await? else {
        return Ok(futures::stream::empty().boxed());
    };
    if state.mode == ScanMode::Count {
        // The selection already excludes the DV's rows.
        return count_batches(state, selected_rows(&footer, &access));
    }
    if access.row_groups.is_empty() {
        return Ok(futures::stream::empty().boxed());
    }
    // The row filter's steps fetch in one round from the file's own store
    // when it is object storage (a round trip a step otherwise).
    let one_round = ctx
        .runtime()
        .store_for(&footer.file.task)?
        .backend()
        .is_remote();
    let parts = parts.min(access.row_groups.len());
    if parts > 1 && !footer.reader.holds_whole_object() {
        return decode_in_parts(&ctx, footer, &access, parts, one_round);
    }
    decode::stream(footer, &access, ctx.state(), &running.metrics, one_round)
}

/// The file's row groups split into `parts` runs of consecutive row groups,
/// each decoded on its own task (with a reader of its own), their batches
/// returned in file order.
fn decode_in_parts(
    ctx: &ScanContext,
    footer: FooterRead,
    access: &FileAccess,
    parts: usize,
    one_round: bool,
) -> Result<Batches> {
    let (_, runtime, running) = ctx.parts();
    let rows: Vec<u64> = access
        .row_groups
        .iter()
        .map(|i| {
            footer
                .parquet()
                .row_groups()
                .get(*i)
                .map_or(0, |rg| u64::try_from(rg.num_rows()).unwrap_or(0))
        })
        .collect();
    let pieces = split_access(access, &rows, parts);
    let path = footer.file.task.object_path.clone();
    // A reader of its own for every piece but the last, which takes the
    // file's.
    let mut footers = (1..pieces.len())
        .map(|_| footer.fork(runtime))
        .collect::<Result<Vec<_>>>()?;
    footers.push(footer);
    let streams = footers
        .into_iter()
        .zip(&pieces)
        .map(|(part, piece)| {
            let batches = decode::stream(part, piece, ctx.state(), &running.metrics, one_round)?;
            Ok(crate::execution::readahead::spawn_file(
                path.clone(),
                batches,
                &running.read_ahead,
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(futures::stream::iter(streams).flatten().boxed())
}

/// `access` in `parts` pieces of consecutive row groups (as even in rows as
/// whole row groups allow), each with its share of the selection; `rows`
/// holds the rows of each of `access.row_groups`.
fn split_access(access: &FileAccess, rows: &[u64], parts: usize) -> Vec<FileAccess> {
    let total: u64 = rows.iter().sum();
    let mut bounds = Vec::new(); // index in row_groups where each piece starts
    let mut acc = 0u64;
    let mut next = 1;
    bounds.push(0);
    for (i, r) in rows.iter().enumerate() {
        if next < parts && i > 0 && acc * parts as u64 >= total * next as u64 {
            bounds.push(i);
            next += 1;
        }
        acc += r;
    }
    bounds.push(rows.len());
    let mut runs = access
        .selection
        .as_ref()
        .map(|s| s.iter().copied().collect::<std::collections::VecDeque<_>>());
    bounds
        .windows(2)
        .map(|w| {
            let groups = access.row_groups[w[0]..w[1]].to_vec();
            let selection = runs.as_mut().map(|runs| {
                let mut want: u64 = rows[w[0]..w[1]].iter().sum();
                let mut out = Vec::new();
                while want > 0 {
                    let Some(mut run) = runs.pop_front() else {
                        break;
                    };
                    if run.rows > want {
                        let mut rest = run;
                        rest.rows = run.rows - want;
                        run.rows = want;
                        runs.push_front(rest);
                    }
                    want -= run.rows;
                    out.push(run);
                }
                out
            });
            FileAccess {
                row_groups: groups,
                selection,
            }
        })
        .collect()
}

/// Rows that `access` selects in the file.
fn selected_rows(footer: &FooterRead, access: &FileAccess) -> u64 {
    match &access.selection {
        Some(runs) => runs.iter().filter(|r| !r.skip).map(|r| r.rows).sum(),
        None => access
            .row_groups
            .iter()
            .filter_map(|i| footer.parquet().row_groups().get(*i))
            .map(|rg| u64::try_from(rg.num_rows()).unwrap_or(0))
            .sum(),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::split_access;
    use crate::planning::task::{FileAccess, SelectionRun};

    /// Runs as one flag per row.
    fn flags(runs: &[SelectionRun]) -> Vec<bool> {
        runs.iter()
            .flat_map(|r| std::iter::repeat_n(r.skip, r.rows as usize))
            .collect()
    }

    proptest! {
        /// The pieces cover the row groups in order, each piece's selection
        /// covers exactly its row groups' rows, and together they are the
        /// whole selection.
        #[test]
        fn pieces_partition_groups_and_selection(
            rows in proptest::collection::vec(1u64..40, 1..9),
            parts in 1usize..5,
            skips in proptest::collection::vec(any::<bool>(), 1..400),
            with_selection in any::<bool>(),
        ) {
            let total: u64 = rows.iter().sum();
            let selection = with_selection.then(|| {
                (0..total as usize)
                    .map(|i| SelectionRun { skip: skips[i % skips.len()], rows: 1 })
                    .collect::<Vec<_>>()
            });
            let access = FileAccess {
                row_groups: (0..rows.len()).map(|i| i * 2).collect(),
                selection: selection.clone(),
            };
            let pieces = split_access(&access, &rows, parts);
            prop_assert!(!pieces.is_empty() && pieces.len() <= parts.max(1));
            let groups: Vec<usize> = pieces.iter().flat_map(|p| p.row_groups.clone()).collect();
            prop_assert_eq!(&groups, &access.row_groups);
            let mut all = Vec::new();
            for p in &pieces {
                prop_assert!(!p.row_groups.is_empty());
                let piece_rows: u64 = p.row_groups.iter().map(|g| rows[g / 2]).sum();
                match &p.selection {
                    Some(s) => {
                        prop_assert_eq!(s.iter().map(|r| r.rows).sum::<u64>(), piece_rows);
                        all.extend(flags(s));
                    }
                    None => prop_assert!(selection.is_none()),
                }
            }
            if let Some(s) = &selection {
                prop_assert_eq!(all, flags(s));
            }
        }
    }
}
