//! Stage 7: decoding with parquet's async reader, then shaping batches.
//!
//! ```text
//! ParquetRecordBatchStream (projection mask: file roots of the needed
//!   │  columns; row groups and RowSelection from stage 6; RowFilter with
//!   │  the data conjuncts, decoded first, adapted to logical form)
//!   ▼
//! adapt (mapping, casts, nulls) + partition constants ─► read batch
//!   ▼
//! residual filter: conjuncts mixing partition and data columns (those on
//!   │  partition columns alone are decided per file before any I/O)
//!   ▼
//! output projection
//! ```

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions};
use arrow_schema::{ArrowError, FieldRef, Schema, SchemaRef};
use dar_prune::Predicate;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use parquet::arrow::arrow_reader::{
    ArrowPredicateFn, ArrowReaderMetadata, ArrowReaderOptions, RowFilter,
};
use parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask};

use super::footer::Footer;
use crate::context::ScanContext;
use crate::error::{Result, ScanError};
use crate::metrics::{ScanMetrics, Stage};
use crate::schema::adapt::Adapter;
use crate::schema::mapping::find_field;
use crate::schema::nullability;
use crate::schema::partitions::constant_column;
use crate::task::{FileAccess, ScanTask};

/// Rows of `mask` that are `true` (NULL counts as not passing).
fn definitely_true(mask: BooleanArray) -> BooleanArray {
    match mask.nulls() {
        Some(n) if n.null_count() > 0 => BooleanArray::new(mask.values() & n.inner(), None),
        _ => mask,
    }
}

/// Everything the batch mapper needs, owned.
struct Shaper {
    ctx: ScanContext,
    task: Arc<ScanTask>,
    /// The logical top-level fields of the read batch, in table order.
    read_fields: Vec<FieldRef>,
    /// Per read field: its declared field when it (or a struct child)
    /// is declared not null, to be enforced on every batch.
    not_null: Vec<Option<FieldRef>>,
    read_schema: SchemaRef,
    residual: Vec<Predicate>,
    /// Per read field: its partition constant built for an earlier batch,
    /// sliced for later ones (the value is the same for the whole file).
    constants: Vec<Option<ArrayRef>>,
}

/// Partition column `f` of a read batch with `rows` rows, sliced from
/// `slot` (the constant built for an earlier batch) when it is long enough.
fn constant(
    slot: &mut Option<ArrayRef>,
    task: &ScanTask,
    f: &FieldRef,
    rows: usize,
) -> Result<ArrayRef> {
    if let Some(c) = slot.as_ref()
        && c.len() >= rows
    {
        return Ok(c.slice(0, rows));
    }
    let path = task.object_path.as_str();
    let value = task
        .partition_value(f.name())
        .ok_or_else(|| ScanError::InvalidTask {
            path: path.to_string(),
            reason: format!("no value for partition column '{}'", f.name()),
        })?;
    let c = constant_column(path, f.name(), value, f.data_type(), rows)?;
    *slot = Some(Arc::clone(&c));
    Ok(c)
}

impl Shaper {
    fn shape(&mut self, file_batch: RecordBatch) -> Result<Option<RecordBatch>> {
        let inner = &self.ctx.inner;
        let path = self.task.object_path.as_str();
        let rows = file_batch.num_rows();
        let adapter = Adapter {
            path,
            mode: inner.spec.column_mapping,
        };
        let _t = inner.metrics.time(Stage::Adapt);
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(self.read_fields.len());
        let fields = file_batch.schema_ref().fields();
        for ((f, slot), declared) in self
            .read_fields
            .iter()
            .zip(&mut self.constants)
            .zip(&self.not_null)
        {
            let column = if self.ctx.is_partition(f.name()) {
                constant(slot, &self.task, f, rows)?
            } else {
                if let Some(d) = declared
                    && !d.is_nullable()
                    && find_field(f, fields, inner.spec.column_mapping).is_none()
                {
                    return Err(ScanError::MissingNonNullable {
                        path: path.to_string(),
                        column: f.name().clone(),
                    });
                }
                let mut c =
                    adapter.columns(fields, file_batch.columns(), std::slice::from_ref(f), rows)?;
                let c = c.pop().ok_or_else(|| ScanError::InvalidTask {
                    path: path.to_string(),
                    reason: format!("column '{}' was not adapted", f.name()),
                })?;
                if let Some(d) = declared {
                    nullability::check(path, d, &c)?;
                }
                c
            };
            columns.push(column);
        }
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        let mut batch =
            RecordBatch::try_new_with_options(Arc::clone(&self.read_schema), columns, &options)
                .map_err(|e| ScanError::arrow("assembling a read batch", path, e))?;
        drop(_t);
        if !self.residual.is_empty() {
            let _t = inner.metrics.time(Stage::Residual);
            for p in &self.residual {
                let mask = p.evaluate(&batch).map_err(|source| ScanError::Evaluate {
                    path: path.to_string(),
                    source: Box::new(source),
                })?;
                let mask = definitely_true(mask);
                batch = arrow_select::filter::filter_record_batch(&batch, &mask)
                    .map_err(|e| ScanError::arrow("filtering a batch", path, e))?;
            }
            inner
                .metrics
                .add_rows_filtered((rows - batch.num_rows()) as u64);
        }
        if batch.num_rows() == 0 {
            return Ok(None);
        }
        let columns = inner
            .output
            .iter()
            .map(|c| c.extract(&batch, path))
            .collect::<Result<Vec<_>>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        let out =
            RecordBatch::try_new_with_options(Arc::clone(&inner.output_schema), columns, &options)
                .map_err(|e| ScanError::arrow("assembling an output batch", path, e))?;
        Ok(Some(out))
    }
}

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

/// Builds the decoding stream of one file.
pub(crate) fn stream(
    ctx: &ScanContext,
    task: ScanTask,
    footer: Footer,
    access: &FileAccess,
) -> Result<BoxStream<'static, Result<RecordBatch>>> {
    let inner = &ctx.inner;
    let path = task.object_path.clone();
    let arrow_md =
        ArrowReaderMetadata::try_new(Arc::clone(&footer.metadata), ArrowReaderOptions::new())
            .map_err(|e| ScanError::parquet(&ctx.location(&path), e))?;
    let file_fields = arrow_md.schema().fields().clone();
    let parquet_schema = arrow_md.metadata().file_metadata().schema_descr_ptr();

    let field_of = |name: &str| inner.fields.iter().find(|f| f.name() == name).cloned();
    let file_root = |f: &FieldRef| {
        if ctx.is_partition(f.name()) {
            None
        } else {
            find_field(f, &file_fields, inner.spec.column_mapping)
        }
    };

    // The data conjuncts go into a RowFilter when the output has columns
    // and the file holds at least one of their columns.
    let predicate = inner.predicate.as_ref();
    let mut residual: Vec<Predicate> = Vec::new();
    let mut residual_roots: Vec<String> = Vec::new();
    let mut filter: Option<RowFilter> = None;
    if let Some(p) = predicate {
        if let Some(data) = &p.data {
            let targets: Vec<FieldRef> = p.data_roots.iter().filter_map(|r| field_of(r)).collect();
            let mut roots: Vec<usize> = targets.iter().filter_map(&file_root).collect();
            roots.sort_unstable();
            roots.dedup();
            if !inner.projection_roots.is_empty() && !roots.is_empty() {
                let mask = ProjectionMask::roots(&parquet_schema, roots);
                let data = data.clone();
                let schema = Arc::new(Schema::new(targets.clone()));
                let mode = inner.spec.column_mapping;
                let file_path = path.clone();
                let metrics = inner.metrics.clone();
                let f = move |batch: RecordBatch| -> Result<BooleanArray, ArrowError> {
                    let adapter = Adapter {
                        path: &file_path,
                        mode,
                    };
                    let rows = batch.num_rows();
                    let cols = adapter
                        .columns(batch.schema_ref().fields(), batch.columns(), &targets, rows)
                        .map_err(|e| ArrowError::ExternalError(Box::new(e)))?;
                    let options = RecordBatchOptions::new().with_row_count(Some(rows));
                    let logical =
                        RecordBatch::try_new_with_options(Arc::clone(&schema), cols, &options)?;
                    let mask = data
                        .evaluate(&logical)
                        .map_err(|e| ArrowError::ExternalError(Box::new(e)))?;
                    let mask = definitely_true(mask);
                    metrics.add_rows_filtered((rows - mask.true_count()) as u64);
                    Ok(mask)
                };
                filter = Some(RowFilter::new(vec![Box::new(ArrowPredicateFn::new(
                    mask, f,
                ))]));
            } else {
                residual.push(data.clone());
                residual_roots.extend(p.data_roots.iter().cloned());
            }
        }
        if let Some(rest) = &p.rest {
            // Conjuncts on partition columns alone were decided before the
            // file was opened (`stages::open`).
            if !p.rest_on_partitions_only {
                residual.push(rest.clone());
                residual_roots.extend(p.rest_roots.iter().cloned());
            }
        }
    }

    let read_fields: Vec<FieldRef> = inner
        .fields
        .iter()
        .filter(|f| inner.projection_roots.contains(f.name()) || residual_roots.contains(f.name()))
        .cloned()
        .collect();
    let mut roots: Vec<usize> = read_fields.iter().filter_map(&file_root).collect();
    roots.sort_unstable();
    roots.dedup();
    let mask = ProjectionMask::roots(&parquet_schema, roots);

    let mut builder = ParquetRecordBatchStreamBuilder::new_with_metadata(footer.reader, arrow_md)
        .with_batch_size(inner.spec.batch_size)
        .with_projection(mask)
        .with_row_groups(access.row_groups.clone());
    if let Some(selection) = access.row_selection() {
        builder = builder.with_row_selection(selection);
    }
    if let Some(f) = filter {
        builder = builder.with_row_filter(f);
    }
    if residual.is_empty()
        && let Some(limit) = inner.spec.limit
    {
        builder = builder.with_limit(limit);
    }
    let parquet_stream = builder
        .build()
        .map_err(|e| ScanError::parquet(&ctx.location(&path), e))?;
    let mut shaper = Shaper {
        ctx: ctx.clone(),
        task: Arc::new(task),
        read_schema: Arc::new(Schema::new(read_fields.clone())),
        constants: vec![None; read_fields.len()],
        not_null: read_fields
            .iter()
            .map(|f| {
                inner
                    .spec
                    .schema
                    .fields()
                    .find(f.name())
                    .map(|(_, d)| Arc::clone(d))
                    .filter(|d| nullability::has_constraint(d))
            })
            .collect(),
        read_fields,
        residual,
    };
    let timed = Timed {
        inner: parquet_stream,
        metrics: inner.metrics.clone(),
    };
    let out = timed.filter_map(move |item| {
        let result = match item {
            Ok(batch) => shaper.shape(batch).transpose(),
            Err(e) => Some(Err(ScanError::parquet(
                &shaper.ctx.location(&shaper.task.object_path),
                e,
            ))),
        };
        futures::future::ready(result)
    });
    Ok(out.boxed())
}
