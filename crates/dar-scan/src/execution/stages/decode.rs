//! Stage 7: decoding with parquet's async reader (or, for files of very
//! many columns, [`super::wide`]), shaped by the file's [`BatchPlan`].
//!
//! ```text
//! ParquetRecordBatchStream (projection: the plan's file roots; row
//!   │  groups and RowSelection from stage 6; RowFilter: one step per
//!   │  group of data conjuncts on the same columns, cheapest first, each
//!   │  decoding its columns for the rows earlier steps kept)
//!   ▼
//! BatchPlan::shape: read batch (file columns adapted, partition
//!   constants, nulls) ─► residual conjuncts ─► output columns
//! ```

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use arrow_array::{ArrayRef, RecordBatch};
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask};

use super::footer::FooterRead;
use super::wide::{self, WideRead};
use crate::errors::error::{Result, ScanError};
use crate::execution::metrics::{ScanMetrics, Stage};
use crate::execution::state::ScanState;
use crate::planning::task::FileAccess;
use crate::schema::batch_plan::{BatchPlan, FilterPlan};
use crate::schema::partitions::repeat;
use crate::schema::views;

/// Adds the time spent inside the wrapped stream to [`Stage::Decode`].
struct Timed<S> {
    inner: S,
    metrics: ScanMetrics,
}

impl<S: Stream + Unpin> Stream for Timed<S> {
    type Item = S::Item;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let start = Instant::now();
        let out = self.inner.poll_next_unpin(cx);
        self.metrics.add_time(Stage::Decode, start.elapsed());
        out
    }
}

/// Each partition column's value, of its read type, repeated to the
/// longest batch the file yields (its rows, at most a batch), by top-level
/// field.
fn partition_constants(footer: &FooterRead, state: &ScanState) -> Result<Vec<Option<ArrayRef>>> {
    let rows = usize::try_from(footer.num_rows())
        .unwrap_or(usize::MAX)
        .min(state.spec.batch_size)
        .max(1);
    let path = footer.file.task.object_path.as_str();
    let constant = |field: usize, one: &ArrayRef| -> Result<ArrayRef> {
        let to = state.read_fields[field].data_type();
        if one.data_type() == to {
            return repeat(path, one, rows);
        }
        let one = arrow_cast::cast(one, to)
            .map_err(|e| ScanError::arrow("typing a partition value", path, e))?;
        repeat(path, &one, rows)
    };
    let mut constants = vec![None; state.fields.len()];
    for (field, one) in state
        .partitions
        .fields
        .iter()
        .zip(&footer.file.partition_row)
    {
        constants[*field] = Some(constant(*field, one)?);
    }
    for (field, one) in &footer.file.task_row {
        constants[*field] = Some(constant(*field, one)?);
    }
    Ok(constants)
}

/// The decoding stream of one file; with `one_round` (object storage) the
/// row filter's steps fetch their columns in one round
/// ([`wide::row_filter`]).
pub(crate) fn stream(
    footer: FooterRead,
    access: &FileAccess,
    state: &Arc<ScanState>,
    metrics: &ScanMetrics,
    one_round: bool,
) -> Result<BoxStream<'static, Result<RecordBatch>>> {
    let path = footer.file.task.object_path.as_str();
    let constants = partition_constants(&footer, state)?;
    // The schema the decoder produces: the file's, byte columns as views
    // when the scan outputs views (the column map and statistics keep the
    // file's classic types).
    let metadata = if state.spec.view_types {
        views::decoding_metadata(&footer.metadata)
    } else {
        footer.metadata.clone()
    };
    let (plan, filters) = BatchPlan::new(
        state,
        path,
        metadata.schema(),
        &footer.columns,
        &constants,
        metrics,
    )?;
    let parquet_schema = metadata.parquet_schema();
    let mask = plan.mask(parquet_schema);
    let filters: Vec<(ProjectionMask, Arc<FilterPlan>)> = filters
        .into_iter()
        .map(|f| (f.mask(parquet_schema), Arc::new(f)))
        .collect();
    let location = footer.location;
    let limit = state.spec.limit.filter(|_| !plan.has_residual());
    let leaves = wide::leaves(&metadata, &mask, filters.iter().map(|(m, _)| m));
    let parquet_stream = if leaves.len() >= wide::WIDE_CHUNKS {
        wide::stream(WideRead {
            reader: footer.reader,
            metadata,
            leaves,
            mask,
            filters,
            row_groups: access.row_groups.clone(),
            selection: access.row_selection(),
            limit,
            batch_size: state.spec.batch_size,
            one_round,
        })
    } else {
        let mut builder =
            ParquetRecordBatchStreamBuilder::new_with_metadata(footer.reader, metadata)
                .with_batch_size(state.spec.batch_size)
                .with_projection(mask)
                .with_row_groups(access.row_groups.clone());
        if let Some(selection) = access.row_selection() {
            builder = builder.with_row_selection(selection);
        }
        if let Some(limit) = limit {
            builder = builder.with_limit(limit);
        }
        if !filters.is_empty() {
            builder = builder.with_row_filter(wide::row_filter(&filters, one_round));
        }
        builder
            .build()
            .map_err(|e| ScanError::parquet(&location, e))?
            .boxed()
    };
    let timed = Timed {
        inner: parquet_stream,
        metrics: metrics.clone(),
    };
    let out = timed.filter_map(move |item| {
        let result = match item {
            Ok(batch) => plan.shape(&batch).transpose(),
            Err(e) => Some(Err(ScanError::parquet(&location, e))),
        };
        futures::future::ready(result)
    });
    Ok(out.boxed())
}
