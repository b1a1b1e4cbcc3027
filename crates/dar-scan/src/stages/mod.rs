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
//!     │ decode::stream               BatchPlan decided once per file:
//!     ▼                              per batch only indexing and casts
//!     │                              (wide::stream past 2048 chunks per
//!     │                              row group: parquet's async reader is
//!     │                              quadratic in chunks)
//!  Stream<RecordBatch>
//! ```
//!
//! What the stages read comes in as plain references: the spec-derived
//! [`ScanState`](crate::state::ScanState), the machine's
//! [`ScanRuntime`](crate::runtime::ScanRuntime), and the scan's live state
//! ([`LiveScan`](crate::live::LiveScan)); this module only chains them.

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

use crate::context::ScanContext;
use crate::error::{Result, ScanError};
use crate::state::{ScanMode, ScanState};
use crate::task::{FileAccess, ScanTask};
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
    let (state, runtime, live) = ctx.parts();
    let task = Arc::clone(&file.task);
    if let Some(paired) = &task.paired_dv
        && !dv::pair_changes_rows(&task, paired, runtime, live).await?
    {
        return Ok(None);
    }
    // The DV is fetched in the footer's round when the log gives the row
    // count it is checked against, unless row-group statistics might make
    // it unneeded on a store where a wasted read is cheaper than a round.
    let early_dv = match (&task.deletion_vector, task.num_records, &task.access) {
        (Some(_), Some(rows), None)
            if state.pruning_predicate().is_none()
                || runtime.store_for(&task)?.backend().is_remote() =>
        {
            Some(rows)
        }
        _ => None,
    };
    let (footer, early) = match early_dv {
        Some(rows) => {
            let (footer, dv) = futures::join!(
                FooterRead::load(file, state, runtime, live),
                dv::load(&task, rows, runtime, live)
            );
            (footer?, Some(dv))
        }
        None => (FooterRead::load(file, state, runtime, live).await?, None),
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
    let metrics = &live.metrics;
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
        (true, None) => dv::load(&task, footer.num_rows(), runtime, live).await?,
    };
    let deleted = match &task.paired_dv {
        Some(other) if groups.any() => Some(
            dv::paired(
                &task,
                other,
                deleted.as_deref(),
                footer.num_rows(),
                runtime,
                live,
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

/// Runs the chain for one task and returns its batch stream.
pub(crate) async fn open(ctx: ScanContext, task: ScanTask) -> Result<Batches> {
    let (state, _, live) = ctx.parts();
    let file = match FileToOpen::new(task, state)?.decide(state)? {
        Decision::Count(rows) => {
            live.metrics.add_files_answered_from_log(1);
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
    decode::stream(footer, &access, ctx.state(), &live.metrics)
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
