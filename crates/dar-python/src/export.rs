//! Handing Arrow data to Python without copying: the Arrow PyCapsule
//! interface (`__arrow_c_schema__`, `__arrow_c_array__`,
//! `__arrow_c_stream__`) over arrow-rs's C data and C stream structs.
//!
//! The buffers stay where the scan decoded them; pyarrow (or Polars,
//! DuckDB, ...) takes ownership through the structs' release callbacks.

use std::ffi::CStr;
use std::sync::Mutex;

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{Array, RecordBatch, RecordBatchIterator, RecordBatchReader, StructArray};
use arrow_schema::{ArrowError, Schema, SchemaRef};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};

use crate::errors::InternalError;

const SCHEMA_CAPSULE: &CStr = c"arrow_schema";
const ARRAY_CAPSULE: &CStr = c"arrow_array";
const STREAM_CAPSULE: &CStr = c"arrow_array_stream";

/// A Rust record-batch reader that can cross into Python.
pub type BoxReader = Box<dyn RecordBatchReader + Send>;

fn arrow_err(e: ArrowError) -> PyErr {
    InternalError::new_err(format!("cannot export Arrow data: {e}"))
}

/// `schema` as an `arrow_schema` capsule.
pub fn schema_capsule<'py>(py: Python<'py>, schema: &Schema) -> PyResult<Bound<'py, PyCapsule>> {
    let ffi = FFI_ArrowSchema::try_from(schema).map_err(arrow_err)?;
    PyCapsule::new_with_value(py, ffi, SCHEMA_CAPSULE)
}

/// `reader` as an `arrow_array_stream` capsule.
pub fn stream_capsule(py: Python<'_>, reader: BoxReader) -> PyResult<Bound<'_, PyCapsule>> {
    PyCapsule::new_with_value(py, FFI_ArrowArrayStream::new(reader), STREAM_CAPSULE)
}

/// A schema exported once through `__arrow_c_schema__`.
#[pyclass(frozen, module = "dar", name = "_ArrowSchema")]
pub struct SchemaExport {
    schema: SchemaRef,
}

#[pymethods]
impl SchemaExport {
    /// The schema as an `arrow_schema` PyCapsule.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, &self.schema)
    }
}

/// A record batch exported through `__arrow_c_array__` (a struct array
/// with the batch's schema).
#[pyclass(frozen, module = "dar", name = "_ArrowBatch")]
pub struct BatchExport {
    batch: RecordBatch,
}

#[pymethods]
impl BatchExport {
    /// The batch as an (`arrow_schema`, `arrow_array`) pair of PyCapsules;
    /// `requested_schema` is not supported and ignored (the batch keeps the
    /// scan's types).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = requested_schema;
        let schema = schema_capsule(py, &self.batch.schema())?;
        let data = StructArray::from(self.batch.clone()).into_data();
        let array = PyCapsule::new_with_value(py, FFI_ArrowArray::new(&data), ARRAY_CAPSULE)?;
        PyTuple::new(py, [schema.into_any(), array.into_any()])
    }
}

/// A stream of batches exported once through `__arrow_c_stream__`.
#[pyclass(frozen, module = "dar", name = "_ArrowStream")]
pub struct StreamExport {
    reader: Mutex<Option<BoxReader>>,
}

impl StreamExport {
    /// Wraps `reader`.
    pub fn new(reader: BoxReader) -> Self {
        Self {
            reader: Mutex::new(Some(reader)),
        }
    }
}

#[pymethods]
impl StreamExport {
    /// The stream as an `arrow_array_stream` PyCapsule; it can be taken
    /// once. `requested_schema` is not supported and ignored.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let reader = self.reader.lock().ok().and_then(|mut r| r.take());
        match reader {
            Some(reader) => stream_capsule(py, reader),
            None => Err(PyRuntimeError::new_err(
                "this Arrow stream was already consumed",
            )),
        }
    }
}

/// `schema` as a `pyarrow.Schema`.
pub fn pyarrow_schema<'py>(py: Python<'py>, schema: SchemaRef) -> PyResult<Bound<'py, PyAny>> {
    let export = Bound::new(py, SchemaExport { schema })?;
    py.import("pyarrow")?.call_method1("schema", (export,))
}

/// `batch` as a `pyarrow.RecordBatch`.
pub fn pyarrow_batch(py: Python<'_>, batch: RecordBatch) -> PyResult<Bound<'_, PyAny>> {
    let export = Bound::new(py, BatchExport { batch })?;
    py.import("pyarrow")?
        .call_method1("record_batch", (export,))
}

/// `batches` (all of `schema`) as one `pyarrow.Table`, a chunk per batch.
pub fn pyarrow_table(
    py: Python<'_>,
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
) -> PyResult<Bound<'_, PyAny>> {
    let reader = RecordBatchIterator::new(batches.into_iter().map(Ok), schema);
    let export = Bound::new(py, StreamExport::new(Box::new(reader)))?;
    py.import("pyarrow")?
        .getattr("RecordBatchReader")?
        .call_method1("from_stream", (export,))?
        .call_method0("read_all")
}
