//! `dar.Scan`: the rows of a table, as an Arrow C stream, a
//! `pyarrow.RecordBatchReader`, a `pyarrow.Table` or a count.
//!
//! Every consumption runs the scan anew (a fresh plan, so fresh metrics);
//! the plan built to check the arguments serves the first one.

use std::sync::Mutex;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use dar_scan::{ChangeBound, ErrorKind, ScanMetrics, ScanOptions, ScanPlan};
use futures::StreamExt;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict};

use crate::errors::{build_to_py, exception, scan_to_py};
use crate::export::{pyarrow_schema, pyarrow_table, stream_capsule};
use crate::metrics::metrics_dict;
use crate::runtime::wait;
use crate::stream::{BatchIterator, ScanReader};

/// What a scan reads: the table and the arguments of `Table.scan` (or of
/// `Table.changes`, with its range).
struct ScanSpec {
    table: dar_scan::Table,
    columns: Option<Vec<String>>,
    filter: Option<String>,
    limit: Option<usize>,
    batch_size: Option<usize>,
    /// Strings and binaries as `string_view` / `binary_view`.
    view_types: bool,
    changes: Option<(ChangeBound, Option<ChangeBound>)>,
}

impl ScanSpec {
    /// A fresh plan (`count`: no columns, so row counts can come from the
    /// log), with dar-scan's messages for what cannot be planned. A change
    /// feed reads its commits here, with the GIL released.
    fn build(&self, py: Python<'_>, count: bool) -> PyResult<ScanPlan> {
        if let Some((start, end)) = self.changes {
            return self.build_changes(py, start, end, count);
        }
        self.table
            .scan()
            .with_options(self.options(count))
            .build()
            .map_err(|e| build_to_py(&self.table, self.filter.as_deref(), e))
    }

    /// The scan options of the arguments (`count`: no column), the same
    /// for a scan and a change feed.
    fn options(&self, count: bool) -> ScanOptions {
        let mut options = ScanOptions::new().with_view_types(self.view_types);
        if count {
            options = options.with_columns(Vec::<String>::new());
        } else if let Some(columns) = &self.columns {
            options = options.with_columns(columns);
        }
        if let Some(filter) = &self.filter {
            options = options.with_predicate_sql(filter.clone());
        }
        if let Some(limit) = self.limit {
            options = options.with_limit(limit);
        }
        if let Some(batch_size) = self.batch_size {
            options = options.with_batch_size(batch_size);
        }
        options
    }

    fn build_changes(
        &self,
        py: Python<'_>,
        start: ChangeBound,
        end: Option<ChangeBound>,
        count: bool,
    ) -> PyResult<ScanPlan> {
        let builder = self
            .table
            .changes(start, end)
            .with_options(self.options(count));
        wait(py, move || builder.build())?
            .map_err(|e| build_to_py(&self.table, self.filter.as_deref(), e))
    }
}

/// A described scan of a table: which columns, which rows, how many.
/// Consume it with `to_table()`, `to_reader()`, `count()`, or by handing
/// it to anything that takes an Arrow stream (`__arrow_c_stream__`).
#[pyclass(frozen, module = "dar")]
pub struct Scan {
    spec: ScanSpec,
    schema: SchemaRef,
    /// The plan built by `Table.scan` to check the arguments, until a
    /// consumption takes it.
    unused: Mutex<Option<ScanPlan>>,
    /// The metrics of the latest plan.
    metrics: Mutex<ScanMetrics>,
}

/// Runs `plan`, handing each batch to `f`, one wait per batch (so Ctrl-C
/// is seen between batches).
fn each_batch(py: Python<'_>, plan: &ScanPlan, mut f: impl FnMut(RecordBatch)) -> PyResult<()> {
    let mut stream = plan.execute();
    while let Some(batch) = wait(py, || stream.next())? {
        f(batch.map_err(scan_to_py)?);
    }
    Ok(())
}

/// `text` as a Python string literal (single quotes, escaped).
fn python_str(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
}

fn poisoned<T>(_: T) -> PyErr {
    exception(
        ErrorKind::Internal,
        "the scan is unusable after a panic".to_string(),
    )
}

impl Scan {
    /// Checks the arguments by planning the scan once; with `changes`, the
    /// change data feed of that range.
    #[allow(clippy::too_many_arguments, reason = "the arguments of Table.scan")]
    pub fn new(
        py: Python<'_>,
        table: dar_scan::Table,
        columns: Option<Vec<String>>,
        filter: Option<String>,
        limit: Option<usize>,
        batch_size: Option<usize>,
        view_types: bool,
        changes: Option<(ChangeBound, Option<ChangeBound>)>,
    ) -> PyResult<Self> {
        let spec = ScanSpec {
            table,
            columns,
            filter,
            limit,
            batch_size,
            view_types,
            changes,
        };
        let plan = spec.build(py, false)?;
        Ok(Self {
            spec,
            schema: plan.schema().clone(),
            metrics: Mutex::new(plan.metrics().clone()),
            unused: Mutex::new(Some(plan)),
        })
    }

    /// The plan for one consumption; its metrics become `metrics()`.
    fn plan(&self, py: Python<'_>, count: bool) -> PyResult<ScanPlan> {
        let unused = if count {
            None
        } else {
            self.unused.lock().map_err(poisoned)?.take()
        };
        let plan = match unused {
            Some(plan) => plan,
            None => self.spec.build(py, count)?,
        };
        *self.metrics.lock().map_err(poisoned)? = plan.metrics().clone();
        Ok(plan)
    }
}

#[pymethods]
impl Scan {
    /// The schema of the rows, as a `pyarrow.Schema`.
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pyarrow_schema(py, self.schema.clone())
    }

    /// Runs the scan as an `arrow_array_stream` PyCapsule (the Arrow
    /// PyCapsule interface), batches passed on as they are decoded, without
    /// a copy. `requested_schema` is not supported and ignored.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let plan = self.plan(py, false)?;
        stream_capsule(py, Box::new(ScanReader::new(&plan)))
    }

    /// Runs the scan as a `pyarrow.RecordBatchReader`; errors while
    /// reading raise `dar.DarError`s.
    fn to_reader<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let plan = self.plan(py, false)?;
        let schema = pyarrow_schema(py, plan.schema().clone())?;
        let batches = Bound::new(py, BatchIterator::new(&plan))?;
        py.import("pyarrow")?
            .getattr("RecordBatchReader")?
            .call_method1("from_batches", (schema, batches))
    }

    /// As [`Self::to_reader`], with small batches merged into batches of
    /// `rows` rows (see [`crate::stream::coalesced`]): what the lazy Polars
    /// frame reads, one Polars conversion per `rows` rows.
    #[pyo3(name = "_to_merged_reader")]
    fn to_merged_reader<'py>(&self, py: Python<'py>, rows: usize) -> PyResult<Bound<'py, PyAny>> {
        let plan = self.plan(py, false)?;
        let schema = plan.schema().clone();
        let stream = crate::stream::coalesced(plan.execute(), schema.clone(), rows);
        let batches = Bound::new(py, BatchIterator::of(stream))?;
        py.import("pyarrow")?
            .getattr("RecordBatchReader")?
            .call_method1("from_batches", (pyarrow_schema(py, schema)?, batches))
    }

    /// Runs the scan into a `pyarrow.Table` (one chunk per batch).
    fn to_table<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let plan = self.plan(py, false)?;
        let mut batches = Vec::new();
        each_batch(py, &plan, |b| batches.push(b))?;
        pyarrow_table(py, plan.schema().clone(), batches)
    }

    /// The number of rows the scan returns (answered from the log's
    /// statistics where they are exact, without reading data files).
    fn count(&self, py: Python<'_>) -> PyResult<u64> {
        let plan = self.plan(py, true)?;
        let mut rows = 0u64;
        each_batch(py, &plan, |b| rows += b.num_rows() as u64)?;
        Ok(rows)
    }

    /// What the latest run of this scan did (so far, if it is still being
    /// read): files, row groups and pages pruned, rows deleted, filtered
    /// and returned, stage times and I/O, as a `dict`.
    fn metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let metrics = self.metrics.lock().map_err(poisoned)?.snapshot();
        metrics_dict(py, &metrics)
    }

    fn __repr__(&self) -> String {
        let columns: Vec<String> = self
            .schema
            .fields()
            .iter()
            .map(|f| python_str(f.name()))
            .collect();
        let filter = self
            .spec
            .filter
            .as_deref()
            .map_or("None".into(), python_str);
        let limit = self.spec.limit.map_or("None".into(), |l| l.to_string());
        format!(
            "dar.Scan('{}', columns=[{}], filter={filter}, limit={limit})",
            self.spec.table.uri(),
            columns.join(", "),
        )
    }
}
