//! `dar.Table`: one Delta table at one version.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use dar_scan::{ErrorKind, FileColumns, ScanError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyInt, PyList};

use crate::datafusion::provider_capsule;
use crate::errors::{exception, scan_to_py};
use crate::export::{pyarrow_schema, pyarrow_table};
use crate::options::{change_bound, count_argument, table_options};
use crate::runtime::wait;
use crate::scan::Scan;

/// An [`crate::errors::InternalError`]: a panic while the table was locked.
fn unusable() -> PyErr {
    exception(
        ErrorKind::Internal,
        "the table is unusable after a panic".to_string(),
    )
}

/// A Delta table at one version (the newest unless `version` or
/// `timestamp` says otherwise), opened from a path or a `file://`,
/// `s3://`, `az://` / `abfs[s]://` / `https://<account>.blob...` or `gs://`
/// URI.
#[pyclass(frozen, module = "dar")]
pub struct Table {
    inner: Mutex<dar_scan::Table>,
}

impl Table {
    /// The table (a cheap clone; taken so no lock is held while it works).
    fn current(&self) -> PyResult<dar_scan::Table> {
        self.inner.lock().map(|t| t.clone()).map_err(|_| unusable())
    }
}

#[pymethods]
impl Table {
    /// Opens the table at `uri`: its log is replayed here (with the GIL
    /// released), so errors about the table surface at once.
    /// `confine_paths` refuses data and DV files outside the table root;
    /// `stats_for_filter` parses the file statistics of the columns that
    /// filter names while the table opens.
    #[new]
    #[pyo3(signature = (uri, *, version = None, timestamp = None, storage_options = None, confine_paths = false, data_cache_bytes = None, cache_dir = None, cache_dir_bytes = None, stats_for_filter = None))]
    #[expect(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn new(
        py: Python<'_>,
        uri: PathBuf,
        version: Option<&Bound<'_, PyInt>>,
        timestamp: Option<&Bound<'_, PyAny>>,
        storage_options: Option<HashMap<String, String>>,
        confine_paths: bool,
        data_cache_bytes: Option<&Bound<'_, PyInt>>,
        cache_dir: Option<PathBuf>,
        cache_dir_bytes: Option<&Bound<'_, PyInt>>,
        stats_for_filter: Option<String>,
    ) -> PyResult<Self> {
        let mut options = table_options(version, timestamp, storage_options, confine_paths)?;
        if let Some(n) = count_argument("data_cache_bytes", data_cache_bytes)? {
            options = options.with_data_cache_bytes(n);
        }
        if let Some(dir) = cache_dir {
            options = options.with_cache_dir(dir);
        }
        if let Some(n) = count_argument("cache_dir_bytes", cache_dir_bytes)? {
            options = options.with_cache_dir_bytes(n as u64);
        }
        if let Some(f) = &stats_for_filter {
            options = options.with_stats_for_predicate(f);
        }
        let uri = uri.to_string_lossy().into_owned();
        let open = move || async move { dar_scan::Table::open_with(&uri, options).await };
        let table = wait(py, open)?.map_err(scan_to_py)?;
        Ok(Self {
            inner: Mutex::new(table),
        })
    }

    /// The table URI (credentials removed).
    #[getter]
    fn uri(&self) -> PyResult<String> {
        Ok(self.current()?.uri().to_string())
    }

    /// The loaded version.
    #[getter]
    fn version(&self) -> PyResult<u64> {
        Ok(self.current()?.version())
    }

    /// The logical schema as a `pyarrow.Schema` (every field nullable; under
    /// column mapping the fields carry their physical name and id as
    /// metadata).
    #[getter]
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        pyarrow_schema(py, self.current()?.schema().clone())
    }

    /// The partition columns, in order.
    #[getter]
    fn partition_columns(&self) -> PyResult<Vec<String>> {
        Ok(self.current()?.snapshot().partition_columns().to_vec())
    }

    /// A lazy `polars.LazyFrame` over the table (Polars' IO-plugin API): the
    /// projection, the predicate where it converts to dar's filter, and the
    /// row limit when the whole predicate converts are pushed into dar's
    /// scan; Polars applies the whole predicate to what the scan returns.
    fn to_polars<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        slf.py().import("dar._polars")?.call_method1("scan", (slf,))
    }

    /// The table as a DataFusion table provider (a
    /// `datafusion_table_provider` PyCapsule, see [`crate::datafusion`]),
    /// for `datafusion.SessionContext.register_table`. `session` is the
    /// session DataFusion Python 52 and later pass; it is not needed.
    #[pyo3(signature = (session = None))]
    fn __datafusion_table_provider__<'py>(
        &self,
        py: Python<'py>,
        session: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = session;
        provider_capsule(py, self.current()?)
    }

    /// The protocol and what dar reads of it (see [`protocol_dict`]).
    #[getter]
    fn protocol<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        protocol_dict(py, self.current()?.snapshot().protocol())
    }

    /// The `metaData` action: `id`, `name`, `description`,
    /// `format_provider`, `format_options`, `schema_string`,
    /// `partition_columns`, `created_time` (ms) and `configuration` (the
    /// table properties).
    #[getter]
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let table = self.current()?;
        let m = table.snapshot().metadata();
        let d = PyDict::new(py);
        d.set_item("id", &m.id)?;
        d.set_item("name", &m.name)?;
        d.set_item("description", &m.description)?;
        d.set_item("format_provider", &m.format.provider)?;
        d.set_item("format_options", &m.format.options)?;
        d.set_item("schema_string", m.schema_string.as_deref())?;
        d.set_item("partition_columns", PyList::new(py, &m.partition_columns)?)?;
        d.set_item("created_time", m.created_time)?;
        d.set_item("configuration", &m.configuration)?;
        Ok(d)
    }

    /// The active files as a `pyarrow.Table`, the columns of `dar files`:
    /// `path`, `size`, `num_records`, the partition columns, `deleted_rows`,
    /// `dv`; with `full=True` those of `dar files --format csv` (adds
    /// `modification_time` and every deletion-vector field).
    #[pyo3(signature = (*, full = false))]
    fn files<'py>(&self, py: Python<'py>, full: bool) -> PyResult<Bound<'py, PyAny>> {
        let table = self.current()?;
        let index = table.snapshot().file_index().map_err(|source| {
            scan_to_py(ScanError::Log {
                uri: table.uri().to_string(),
                source: Box::new(source),
            })
        })?;
        let columns = if full {
            FileColumns::Full
        } else {
            FileColumns::Summary
        };
        let batch = dar_scan::files_batch(index, columns).map_err(|source| {
            scan_to_py(ScanError::Arrow {
                context: "listing the files",
                path: String::new(),
                source: Box::new(source),
            })
        })?;
        pyarrow_table(py, batch.schema(), vec![batch])
    }

    /// Moves to the newest version, replaying only the new commits.
    fn refresh(&self, py: Python<'_>) -> PyResult<()> {
        let mut table = self.current()?;
        let refresh = move || async move { table.refresh().await.map(|()| table) };
        let table = wait(py, refresh)?.map_err(scan_to_py)?;
        let mut inner = self.inner.lock().map_err(|_| unusable())?;
        *inner = table;
        Ok(())
    }

    /// Describes a scan: `columns` (names; `a.b` for a struct field),
    /// `filter` (SQL, as `dar scan --filter`), `limit` and `batch_size`
    /// (rows); `view_types=True` gives strings and binaries as
    /// `string_view` / `binary_view` (pyarrow 16 and later, Polars and
    /// DuckDB take them), decoded without copying every value. Unknown
    /// columns and bad filters raise here.
    #[pyo3(signature = (columns = None, filter = None, limit = None, batch_size = None, view_types = false))]
    fn scan(
        &self,
        py: Python<'_>,
        columns: Option<Vec<String>>,
        filter: Option<String>,
        limit: Option<&Bound<'_, PyInt>>,
        batch_size: Option<&Bound<'_, PyInt>>,
        view_types: bool,
    ) -> PyResult<Scan> {
        Scan::new(
            py,
            self.current()?,
            columns,
            filter,
            count_argument("limit", limit)?,
            count_argument("batch_size", batch_size)?,
            view_types,
            None,
        )
    }

    /// Describes the change data feed of versions `start` to `end` (the
    /// latest when `None`) as a scan: each bound a version (`int`) or a
    /// time (`datetime.datetime` or RFC 3339 `str`: a start is the first
    /// commit at or after it, an end the last commit at or before it).
    /// Rows carry the table's columns (or `columns`) and `_change_type`,
    /// `_commit_version` and `_commit_timestamp`; `filter` may name them.
    /// The commits are read here: a range that cannot be read raises.
    /// `view_types` as in `scan`.
    #[pyo3(signature = (start, end = None, columns = None, filter = None, limit = None, batch_size = None, view_types = false))]
    #[allow(clippy::too_many_arguments, reason = "the Python signature")]
    fn changes(
        &self,
        py: Python<'_>,
        start: &Bound<'_, PyAny>,
        end: Option<&Bound<'_, PyAny>>,
        columns: Option<Vec<String>>,
        filter: Option<String>,
        limit: Option<&Bound<'_, PyInt>>,
        batch_size: Option<&Bound<'_, PyInt>>,
        view_types: bool,
    ) -> PyResult<Scan> {
        let start = change_bound(start)?;
        let end = end.map(change_bound).transpose()?;
        Scan::new(
            py,
            self.current()?,
            columns,
            filter,
            count_argument("limit", limit)?,
            count_argument("batch_size", batch_size)?,
            view_types,
            Some((start, end)),
        )
    }

    fn __repr__(&self) -> PyResult<String> {
        let table = self.current()?;
        Ok(format!(
            "dar.Table('{}', version={})",
            table.uri(),
            table.version()
        ))
    }
}

/// The protocol as a dict: `min_reader_version`, `min_writer_version`,
/// `reader_features` and `writer_features` (lists, or None below reader 3
/// / writer 7), `features` (one dict per feature, listed or implied by the
/// legacy versions: `name`, `kind`, `source`, `required_by_readers`,
/// `dar` (`reads`, `not needed` or `refused`) and `meaning`), `dar_reads`,
/// `refused` (the names that stop dar) and `verdict`, the line `dar info`
/// prints (all from [`dar_log::ProtocolReport`]).
pub fn protocol_dict<'py>(
    py: Python<'py>,
    p: &dar_log::actions::Protocol,
) -> PyResult<Bound<'py, PyDict>> {
    let report = dar_log::ProtocolReport::new(p);
    let d = PyDict::new(py);
    d.set_item("min_reader_version", p.min_reader_version)?;
    d.set_item("min_writer_version", p.min_writer_version)?;
    d.set_item("reader_features", p.reader_features.clone())?;
    d.set_item("writer_features", p.writer_features.clone())?;
    let features = PyList::empty(py);
    for f in &report.features {
        let fd = PyDict::new(py);
        fd.set_item("name", &f.name)?;
        fd.set_item("kind", f.kind.as_str())?;
        fd.set_item("source", f.source.to_string())?;
        fd.set_item("required_by_readers", f.required_by_readers)?;
        fd.set_item("dar", f.support.as_str())?;
        fd.set_item("meaning", &f.meaning)?;
        features.append(fd)?;
    }
    d.set_item("features", features)?;
    d.set_item("dar_reads", report.dar_reads())?;
    let refused: Vec<&str> = report.refused().map(|f| f.name.as_str()).collect();
    d.set_item("refused", refused)?;
    d.set_item("verdict", report.verdict())?;
    Ok(d)
}

/// `dar.protocol(uri, *, version, timestamp, storage_options)`: the
/// protocol of the table at `uri` as [`Table::protocol`] gives it, for
/// tables dar refuses too (only the log is replayed; `verdict` says what
/// stops dar).
#[pyfunction(name = "protocol")]
#[pyo3(signature = (uri, *, version = None, timestamp = None, storage_options = None))]
pub fn protocol_of<'py>(
    py: Python<'py>,
    uri: PathBuf,
    version: Option<&Bound<'_, PyInt>>,
    timestamp: Option<&Bound<'_, PyAny>>,
    storage_options: Option<HashMap<String, String>>,
) -> PyResult<Bound<'py, PyDict>> {
    let options = table_options(version, timestamp, storage_options, false)?;
    let uri = uri.to_string_lossy().into_owned();
    let inspect = move || async move { dar_scan::Table::inspect_with(&uri, &options).await };
    let header = wait(py, inspect)?.map_err(scan_to_py)?;
    protocol_dict(py, &header.protocol)
}
