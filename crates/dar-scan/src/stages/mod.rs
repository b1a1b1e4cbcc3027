//! The per-file pipeline: one small typed stage per step.
//!
//! ```text
//!  ScanTask ──► count from the log? (empty projection, no predicate,
//!     │          numRecords known) ──► row-count batches, no I/O
//!     ├──────► partition-only conjuncts false for its values? ──► no I/O
//!     ▼
//!  footer::Footer::load           1 request (size from the log), cached;
//!     │                           on remote stores with the page index
//!     │                           (TailHint) and beside the DV (DvFiles)
//!     ▼
//!  row_groups::RowGroupPlan       footer stats, physical predicate
//!     ▼
//!  pages::prune_pages             page index only if a predicate column
//!     │                           has one in a kept row group
//!     ▼
//!  dv::load                       DvCache (skipped if nothing is left)
//!     ▼
//!  selection::intersect           one RowSelection (DV rows absolute)
//!     ▼                           = FileAccess (plain data on the task)
//!  decode::stream                 parquet async reader + RowFilter,
//!                                 adapt, partitions, residual, projection
//! ```
//!
//! A task that already carries its [`FileAccess`] (resolved by
//! [`crate::ScanPlan::resolve`]) goes from the footer straight to decoding.

pub(crate) mod decode;
pub(crate) mod dv;
pub(crate) mod footer;
pub(crate) mod pages;
pub(crate) mod row_groups;
pub(crate) mod selection;

use arrow_array::{Array, RecordBatch, RecordBatchOptions};
use futures::StreamExt;
use futures::stream::BoxStream;

use crate::context::{ScanContext, ScanMode};
use crate::error::{Result, ScanError};
use crate::task::{FileAccess, ScanTask};
use footer::Footer;
use row_groups::RowGroupPlan;

/// Runs stages 1-6: the footer and what to read of the file.
pub(crate) async fn plan_file(ctx: &ScanContext, task: &ScanTask) -> Result<(Footer, FileAccess)> {
    // The DV is fetched in the footer's round when the log gives the row
    // count it is checked against, unless row-group statistics might make
    // it unneeded on a store where a wasted read is cheaper than a round.
    let early_dv = match (&task.deletion_vector, task.num_records, &task.access) {
        (Some(_), Some(rows), None)
            if ctx.physical_predicate().is_none() || ctx.store_for(task)?.backend().is_remote() =>
        {
            Some(rows)
        }
        _ => None,
    };
    let (mut footer, early) = match early_dv {
        Some(rows) => {
            let (footer, dv) = futures::join!(Footer::load(ctx, task), dv::load(ctx, task, rows));
            (footer?, Some(dv))
        }
        None => (Footer::load(ctx, task).await?, None),
    };
    if task.deletion_vector.is_some()
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
        return Ok((footer, access.clone()));
    }
    // Counted where the row groups are pruned, so a resolved plan that is
    // then executed counts them once.
    ctx.inner
        .metrics
        .add_row_groups_total(footer.metadata.num_row_groups() as u64);
    let mut plan = RowGroupPlan::prune(ctx, &footer);
    if plan.any() {
        pages::prune_pages(ctx, &task.object_path, &mut footer, &mut plan).await?;
    }
    let deleted = match (plan.any(), early) {
        (false, _) => None,
        (true, Some(dv)) => dv?,
        (true, None) => dv::load(ctx, task, footer.num_rows()).await?,
    };
    let access = selection::intersect(ctx, &footer, plan, deleted.as_deref());
    Ok((footer, access))
}

/// Batches of `rows` rows and no columns.
fn count_batches(ctx: &ScanContext, rows: u64) -> Result<BoxStream<'static, Result<RecordBatch>>> {
    let batch_size = ctx.inner.spec.batch_size as u64;
    let schema = ctx.schema().clone();
    let mut batches = Vec::new();
    let mut left = rows;
    while left > 0 {
        let n = left.min(batch_size);
        let options = RecordBatchOptions::new().with_row_count(Some(n as usize));
        let b = RecordBatch::try_new_with_options(schema.clone(), vec![], &options)
            .map_err(|e| ScanError::arrow("building a count batch", "", e))?;
        batches.push(Ok(b));
        left -= n;
    }
    Ok(futures::stream::iter(batches).boxed())
}

/// Opens one task: runs the stages and returns its batch stream.
pub(crate) async fn open(
    ctx: ScanContext,
    task: ScanTask,
) -> Result<BoxStream<'static, Result<RecordBatch>>> {
    let inner = &ctx.inner;
    // Rows are read from the data, never ruled out by the log's counts
    // (`numRecords`, DV cardinality): a file in the log is read unless a
    // predicate proves it holds no match. Only counts come from the log.
    if inner.mode == ScanMode::Count
        && task.access.is_none()
        && let Some(rows) = task.live_rows()
    {
        inner.metrics.add_files_answered_from_log(1);
        return count_batches(&ctx, rows);
    }
    if inner.mode == ScanMode::CountByPartition
        && let Some(rows) = task.live_rows()
    {
        inner.metrics.add_files_answered_from_log(1);
        let passes = partition_predicate_holds(&ctx, &task)?;
        return count_batches(&ctx, if passes { rows } else { 0 });
    }
    // Conjuncts on partition columns alone are decided from the task
    // before any I/O.
    if let Some(p) = &inner.predicate
        && p.rest.is_some()
        && p.rest_on_partitions_only
        && !partition_predicate_holds(&ctx, &task)?
    {
        return Ok(futures::stream::empty().boxed());
    }
    let (footer, access) = plan_file(&ctx, &task).await?;
    if inner.mode == ScanMode::Count {
        // The selection already excludes the DV's rows.
        let rows = footer_rows(&footer, &access);
        return count_batches(&ctx, rows);
    }
    if access.row_groups.is_empty() {
        return Ok(futures::stream::empty().boxed());
    }
    decode::stream(&ctx, task, footer, &access)
}

/// Whether the partition-only predicate is true for `task`'s partition
/// values (one row holding them).
fn partition_predicate_holds(ctx: &ScanContext, task: &ScanTask) -> Result<bool> {
    let inner = &ctx.inner;
    let Some(rest) = inner.predicate.as_ref().and_then(|p| p.rest.as_ref()) else {
        return Ok(true);
    };
    let fields: Vec<_> = inner
        .fields
        .iter()
        .filter(|f| ctx.is_partition(f.name()))
        .cloned()
        .collect();
    let columns = fields
        .iter()
        .map(|f| {
            let value = task
                .partition_value(f.name())
                .ok_or_else(|| ScanError::InvalidTask {
                    path: task.object_path.clone(),
                    reason: format!("no value for partition column '{}'", f.name()),
                })?;
            crate::schema::partitions::constant_column(
                &task.object_path,
                f.name(),
                value,
                f.data_type(),
                1,
            )
        })
        .collect::<Result<Vec<_>>>()?;
    let schema = std::sync::Arc::new(arrow_schema::Schema::new(fields));
    let batch = RecordBatch::try_new(schema, columns).map_err(|e| {
        ScanError::arrow(
            "building a partition-value row",
            task.object_path.as_str(),
            e,
        )
    })?;
    let mask = rest
        .evaluate(&batch)
        .map_err(|source| ScanError::Evaluate {
            path: task.object_path.clone(),
            source: Box::new(source),
        })?;
    Ok(mask.is_valid(0) && mask.value(0))
}

/// Rows that `access` selects in the file.
fn footer_rows(footer: &Footer, access: &FileAccess) -> u64 {
    match &access.selection {
        Some(runs) => runs.iter().filter(|r| !r.skip).map(|r| r.rows).sum(),
        None => access
            .row_groups
            .iter()
            .map(|i| u64::try_from(footer.metadata.row_group(*i).num_rows()).unwrap_or(0))
            .sum(),
    }
}
