//! [`BatchPlan`]: how one file's decoded batches become the scan's output,
//! decided once per file. For each column of the read batch its source is
//! fixed up front (a file column with its [`ColumnPlan`], the file's
//! partition constant, or nulls), and so is the row filter's projection
//! ([`FilterPlan`]); per batch only indexing, casts and the residual
//! filter remain.
//!
//! ```text
//! decoded batch (file roots, ascending) ─► read batch (table order:
//!   │   file column + plan │ partition constant │ nulls; declared
//!   │   nullability checked)
//!   ▼
//! residual conjuncts ─► output columns (by index, struct paths walked)
//! ```

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions, new_null_array};
use arrow_schema::{ArrowError, DataType, FieldRef, Schema, SchemaRef};
use dar_prune::Predicate;
use parquet::arrow::ProjectionMask;
use parquet::schema::types::SchemaDescriptor;

use super::adapt::ColumnPlan;
use super::column_map::ColumnMap;
use super::nullability;
use super::partitions::repeat;
use crate::errors::error::{Result, ScanError};
use crate::execution::metrics::{ScanMetrics, Stage};
use crate::execution::state::ScanState;

/// Where one column of a read batch comes from.
#[derive(Debug)]
enum Source {
    /// Column `pos` of the decoded batch, adapted by the plan.
    File { pos: usize, plan: Arc<ColumnPlan> },
    /// The file's partition value, repeated (`rows` long at least for the
    /// batches of this file; sliced per batch).
    Partition(ArrayRef),
    /// Absent from the file: nulls of this type.
    Null(DataType),
}

impl Source {
    fn column(&self, path: &str, batch: &RecordBatch, rows: usize) -> Result<ArrayRef> {
        match self {
            Self::File { pos, plan } => {
                let c = batch
                    .columns()
                    .get(*pos)
                    .ok_or_else(|| ScanError::InvalidTask {
                        path: path.to_string(),
                        reason: format!("decoded batch lacks column {pos}"),
                    })?;
                plan.apply(path, c)
            }
            Self::Partition(c) if c.len() >= rows => Ok(c.slice(0, rows)),
            Self::Partition(c) => repeat(path, &c.slice(0, 1), rows),
            Self::Null(t) => Ok(new_null_array(t, rows)),
        }
    }
}

/// Builds the sources of top-level logical `fields` for a decoded batch
/// holding the file roots `decoded` (ascending); errors when a column
/// declared not null is absent.
struct Sources<'a> {
    state: &'a ScanState,
    columns: &'a ColumnMap,
    file: &'a Schema,
    path: &'a str,
    /// Partition constants by top-level field, when the batch needs them.
    constants: &'a [Option<ArrayRef>],
}

impl Sources<'_> {
    /// The source of `field` in a decoded batch of the file roots
    /// `decoded`; `enforce` makes a column declared not null that the file
    /// lacks an error (the read batch returns it; the row filter only
    /// tests it).
    fn source(
        &self,
        field: usize,
        decoded: &[usize],
        plans: &mut PlanCache,
        enforce: bool,
    ) -> Result<Source> {
        let f = &self.state.read_fields[field];
        if self.state.is_partition[field] {
            return match self.constants.get(field).cloned().flatten() {
                Some(c) => Ok(Source::Partition(c)),
                None => Err(ScanError::InvalidTask {
                    path: self.path.to_string(),
                    reason: format!("no value for partition column '{}'", f.name()),
                }),
            };
        }
        match self.columns.root(field) {
            Some(root) => {
                let pos = decoded
                    .binary_search(&root)
                    .map_err(|_| ScanError::InvalidTask {
                        path: self.path.to_string(),
                        reason: format!("column '{}' was not decoded", f.name()),
                    })?;
                let plan = plans.get(field, || {
                    ColumnPlan::new(
                        self.path,
                        f.name(),
                        self.file.field(root).data_type(),
                        f,
                        self.state.spec.column_mapping,
                    )
                })?;
                Ok(Source::File { pos, plan })
            }
            None if self.state.is_task_column[field]
                && let Some(c) = self.constants.get(field).cloned().flatten() =>
            {
                // The task gives the value the file lacks.
                Ok(Source::Partition(c))
            }
            None => {
                if enforce
                    && self.state.not_null[field]
                        .as_ref()
                        .is_some_and(|d| !d.is_nullable())
                {
                    return Err(ScanError::MissingNonNullable {
                        path: self.path.to_string(),
                        column: f.name().clone(),
                    });
                }
                Ok(Source::Null(f.data_type().clone()))
            }
        }
    }
}

/// Column plans built once per file and shared by the read batch and the
/// row filter.
struct PlanCache(Vec<Option<Arc<ColumnPlan>>>);

impl PlanCache {
    fn get(
        &mut self,
        field: usize,
        build: impl FnOnce() -> Result<ColumnPlan>,
    ) -> Result<Arc<ColumnPlan>> {
        if let Some(p) = self.0.get(field).cloned().flatten() {
            return Ok(p);
        }
        let plan = Arc::new(build()?);
        if let Some(slot) = self.0.get_mut(field) {
            *slot = Some(Arc::clone(&plan));
        }
        Ok(plan)
    }
}

/// The file roots of `fields` (top-level logical indexes) in the file,
/// ascending and without repeats.
fn file_roots(columns: &ColumnMap, fields: impl IntoIterator<Item = usize>) -> Vec<usize> {
    let mut roots: Vec<usize> = fields.into_iter().filter_map(|f| columns.root(f)).collect();
    roots.sort_unstable();
    roots.dedup();
    roots
}

/// One step of a file's row filter: a group of data conjuncts evaluated on
/// their own columns, decoded before the others (parquet's `RowFilter`)
/// and only for the rows earlier steps kept, so that the other columns are
/// decoded only for rows that pass every step.
#[derive(Debug)]
pub(crate) struct FilterPlan {
    /// The file roots the filter decodes.
    pub mask_roots: Vec<usize>,
    /// One source per column of `schema`.
    sources: Vec<Source>,
    schema: SchemaRef,
    predicate: Predicate,
    /// What decoding its columns costs per row ([`decode_cost`]).
    cost: usize,
    path: Arc<str>,
    metrics: ScanMetrics,
}

impl FilterPlan {
    /// The rows of a decoded filter batch for which the conjuncts are
    /// `true`.
    pub(crate) fn evaluate(&self, batch: &RecordBatch) -> Result<BooleanArray, ArrowError> {
        let mask = self.evaluate_uncounted(batch)?;
        self.count(batch.num_rows(), mask.true_count());
        Ok(mask)
    }

    /// Counts `rows` evaluated, of which `passed` passed, in the metrics.
    pub(crate) fn count(&self, rows: usize, passed: usize) {
        self.metrics.add_rows_filter_evaluated(rows as u64);
        self.metrics
            .add_rows_filtered((rows - passed.min(rows)) as u64);
    }

    /// [`Self::evaluate`] without counting the rows in the metrics.
    pub(crate) fn evaluate_uncounted(
        &self,
        batch: &RecordBatch,
    ) -> Result<BooleanArray, ArrowError> {
        let external = |e: ScanError| ArrowError::ExternalError(Box::new(e));
        let rows = batch.num_rows();
        let columns = self
            .sources
            .iter()
            .map(|s| s.column(&self.path, batch, rows))
            .collect::<Result<Vec<_>>>()
            .map_err(external)?;
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        let logical =
            RecordBatch::try_new_with_options(Arc::clone(&self.schema), columns, &options)?;
        let mask = self
            .predicate
            .evaluate(&logical)
            .map_err(|e| ArrowError::ExternalError(Box::new(e)))?;
        Ok(definitely_true(mask))
    }

    /// The projection mask of the filter's columns.
    pub(crate) fn mask(&self, parquet: &SchemaDescriptor) -> ProjectionMask {
        ProjectionMask::roots(parquet, self.mask_roots.iter().copied())
    }
}

/// What decoding one value of a column of `data_type` costs, roughly (bytes
/// of fixed-width values; more for strings, binaries and nested values,
/// whose bytes are copied and offsets built): the order of the row
/// filter's steps. Statistics give no selectivity for most conjuncts (an
/// equality on a column with min < value < max), so cost alone decides.
pub(crate) fn decode_cost(data_type: &DataType) -> usize {
    match data_type {
        DataType::Boolean => 1,
        DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView => 32,
        DataType::Struct(fields) => {
            fields
                .iter()
                .map(|f| decode_cost(f.data_type()))
                .sum::<usize>()
                + 8
        }
        DataType::List(_)
        | DataType::LargeList(_)
        | DataType::ListView(_)
        | DataType::LargeListView(_)
        | DataType::FixedSizeList(..)
        | DataType::Map(..) => 64,
        other => other.primitive_width().unwrap_or(16),
    }
}

/// Rows of `mask` that are `true` (NULL counts as not passing).
pub(crate) fn definitely_true(mask: BooleanArray) -> BooleanArray {
    match mask.nulls() {
        Some(n) if n.null_count() > 0 => BooleanArray::new(mask.values() & n.inner(), None),
        _ => mask,
    }
}

/// One read-batch column.
#[derive(Debug)]
struct ReadColumn {
    source: Source,
    /// The declared field, when nullability is to be enforced on it.
    declared: Option<FieldRef>,
}

/// How one file's decoded batches become output batches.
#[derive(Debug)]
pub(crate) struct BatchPlan {
    state: Arc<ScanState>,
    path: Arc<str>,
    /// The file roots the decoder reads, ascending.
    pub decoded_roots: Vec<usize>,
    read: Vec<ReadColumn>,
    read_schema: SchemaRef,
    /// Conjuncts evaluated on the read batch.
    residual: Vec<Predicate>,
    /// Per output column: the position of its top-level field in the read
    /// batch.
    output: Vec<usize>,
    metrics: ScanMetrics,
}

impl BatchPlan {
    /// The plan of the file at `path` whose Arrow schema is `file` and
    /// whose columns resolved to `columns`, and the steps of its row filter
    /// (in the order they run) when the data conjuncts go to the decoder;
    /// `constants` holds each partition column's value repeated (by
    /// top-level field).
    pub(crate) fn new(
        state: &Arc<ScanState>,
        path: &str,
        file: &Schema,
        columns: &ColumnMap,
        constants: &[Option<ArrayRef>],
        metrics: &ScanMetrics,
    ) -> Result<(Self, Vec<FilterPlan>)> {
        let sources = Sources {
            state,
            columns,
            file,
            path,
            constants,
        };
        let mut plans = PlanCache(vec![None; state.fields.len()]);
        let any_output = state.projected.iter().any(|p| *p);

        // The data conjuncts go into a RowFilter when the output has
        // columns, one step per group of conjuncts on the same columns that
        // the file holds at least one of; cheapest columns first, so that
        // wide columns decode only for the rows narrow ones kept.
        let mut residual: Vec<Predicate> = Vec::new();
        let mut residual_fields: Vec<usize> = Vec::new();
        let mut filters = Vec::new();
        if let Some(p) = &state.predicate {
            for group in &p.data_conjuncts {
                let mask_roots = file_roots(columns, group.roots.iter().copied());
                if any_output && !mask_roots.is_empty() {
                    let sources = group
                        .roots
                        .iter()
                        .map(|f| sources.source(*f, &mask_roots, &mut plans, false))
                        .collect::<Result<Vec<_>>>()?;
                    let fields: Vec<FieldRef> = group
                        .roots
                        .iter()
                        .map(|f| Arc::clone(&state.read_fields[*f]))
                        .collect();
                    let cost = fields.iter().map(|f| decode_cost(f.data_type())).sum();
                    filters.push(FilterPlan {
                        mask_roots,
                        sources,
                        schema: Arc::new(Schema::new(fields)),
                        predicate: group.predicate.clone(),
                        cost,
                        path: path.into(),
                        metrics: metrics.clone(),
                    });
                } else {
                    residual.push(group.predicate.clone());
                    residual_fields.extend(&group.roots);
                }
            }
            // Stable: equal costs keep the caller's order.
            filters.sort_by_key(|f| f.cost);
            if let Some(rest) = &p.rest {
                // Conjuncts on partition columns alone were decided before
                // the file was opened.
                if !p.rest_on_partitions_only {
                    residual.push(rest.clone());
                    residual_fields.extend(&p.rest_roots);
                }
            }
        }

        let mut in_read = state.projected.clone();
        for f in residual_fields {
            in_read[f] = true;
        }
        let read_fields: Vec<usize> = (0..state.fields.len()).filter(|f| in_read[*f]).collect();
        let decoded_roots = file_roots(columns, read_fields.iter().copied());
        let mut position = vec![usize::MAX; state.fields.len()];
        let mut read = Vec::with_capacity(read_fields.len());
        for (pos, f) in read_fields.iter().enumerate() {
            position[*f] = pos;
            read.push(ReadColumn {
                source: sources.source(*f, &decoded_roots, &mut plans, true)?,
                declared: state.not_null[*f].clone(),
            });
        }
        let read_schema = Arc::new(Schema::new(
            read_fields
                .iter()
                .map(|f| Arc::clone(&state.read_fields[*f]))
                .collect::<Vec<_>>(),
        ));
        let output = state.output.iter().map(|c| position[c.root]).collect();
        let plan = Self {
            state: Arc::clone(state),
            path: path.into(),
            decoded_roots,
            read,
            read_schema,
            residual,
            output,
            metrics: metrics.clone(),
        };
        Ok((plan, filters))
    }

    /// The projection mask of the decoded columns.
    pub(crate) fn mask(&self, parquet: &SchemaDescriptor) -> ProjectionMask {
        ProjectionMask::roots(parquet, self.decoded_roots.iter().copied())
    }

    /// Whether conjuncts are left for the read batch (then a limit cannot
    /// be handed to the decoder).
    pub(crate) fn has_residual(&self) -> bool {
        !self.residual.is_empty()
    }

    /// The output batch of one decoded batch (`None` when no row is left).
    pub(crate) fn shape(&self, decoded: &RecordBatch) -> Result<Option<RecordBatch>> {
        let path = &*self.path;
        let rows = decoded.num_rows();
        let timer = self.metrics.time(Stage::Adapt);
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(self.read.len());
        for c in &self.read {
            let column = c.source.column(path, decoded, rows)?;
            if let Some(d) = &c.declared {
                nullability::check(path, d, &column)?;
            }
            columns.push(column);
        }
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        let mut batch =
            RecordBatch::try_new_with_options(Arc::clone(&self.read_schema), columns, &options)
                .map_err(|e| ScanError::arrow("assembling a read batch", path, e))?;
        drop(timer);
        if !self.residual.is_empty() {
            let _t = self.metrics.time(Stage::Residual);
            for p in &self.residual {
                let mask = p.evaluate(&batch).map_err(|source| ScanError::Evaluate {
                    path: path.to_string(),
                    source: Box::new(source),
                })?;
                batch = arrow_select::filter::filter_record_batch(&batch, &definitely_true(mask))
                    .map_err(|e| ScanError::arrow("filtering a batch", path, e))?;
            }
            self.metrics
                .add_rows_filtered((rows - batch.num_rows()) as u64);
        }
        if batch.num_rows() == 0 {
            return Ok(None);
        }
        let columns = self
            .state
            .output
            .iter()
            .zip(&self.output)
            .map(|(c, pos)| {
                let top = batch
                    .columns()
                    .get(*pos)
                    .ok_or_else(|| ScanError::InvalidTask {
                        path: path.to_string(),
                        reason: format!("column '{}' was not read", c.path.join(".")),
                    })?;
                c.extract(top, path)
            })
            .collect::<Result<Vec<_>>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        RecordBatch::try_new_with_options(Arc::clone(&self.state.output_schema), columns, &options)
            .map(Some)
            .map_err(|e| ScanError::arrow("assembling an output batch", path, e))
    }
}
