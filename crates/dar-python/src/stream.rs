//! Pulling a running scan from Python: as a Rust `RecordBatchReader` behind
//! an Arrow C stream ([`ScanReader`]), or batch by batch from a Python
//! iterator ([`BatchIterator`], behind `Scan.to_reader()`).
//!
//! Both wait for each batch with [`crate::runtime::wait`]: the GIL released
//! while the scan works, Ctrl-C cancelling it. A C-stream consumer only
//! sees an error message, so after a Ctrl-C [`ScanReader`] also re-arms the
//! interrupt (`_thread.interrupt_main`) for Python to raise
//! `KeyboardInterrupt` once the consumer returns.

use std::sync::Mutex;

use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use dar_scan::{ScanError, ScanPlan};
use futures::StreamExt;
use futures::stream::BoxStream;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError};
use pyo3::prelude::*;

use crate::errors::scan_to_py;
use crate::export::pyarrow_batch;
use crate::runtime::{runtime, wait};

pub(crate) type BatchStream = BoxStream<'static, Result<RecordBatch, ScanError>>;

/// The C-stream side of a scan: an Arrow `RecordBatchReader` over the
/// plan's stream, ending at the first error.
pub struct ScanReader {
    schema: SchemaRef,
    stream: Option<BatchStream>,
}

impl ScanReader {
    /// Starts running `plan`.
    pub fn new(plan: &ScanPlan) -> Self {
        Self {
            schema: plan.schema().clone(),
            stream: Some(plan.execute()),
        }
    }
}

/// An error for a C-stream consumer, with dar's one-line message.
fn external(message: String) -> ArrowError {
    ArrowError::ExternalError(Box::new(std::io::Error::other(message)))
}

/// The one-line message of `error` (the exception's text).
fn message(py: Python<'_>, error: &PyErr) -> String {
    error
        .value(py)
        .str()
        .map(|s| s.to_string())
        .unwrap_or_else(|_| "the scan failed".to_string())
}

impl ScanReader {
    fn next_item(&mut self) -> Result<Option<RecordBatch>, ArrowError> {
        let Some(stream) = self.stream.as_mut() else {
            return Ok(None);
        };
        // The consumer may call from any thread, with or without the GIL.
        let waited = Python::try_attach(|py| {
            wait(py, || stream.next()).map_err(|e| {
                if e.is_instance_of::<PyKeyboardInterrupt>(py) {
                    let _ = py
                        .import("_thread")
                        .and_then(|t| t.call_method0("interrupt_main"));
                    "the scan was cancelled (KeyboardInterrupt)".to_string()
                } else {
                    message(py, &e)
                }
            })
        });
        let item = match waited {
            Some(Ok(item)) => item,
            Some(Err(message)) => return Err(external(message)),
            // The interpreter is shutting down: no signals to look for.
            None => match runtime() {
                Ok(rt) => rt.block_on(stream.next()),
                Err(_) => return Err(external("the async runtime is unavailable".into())),
            },
        };
        match item {
            None => Ok(None),
            Some(Ok(batch)) => Ok(Some(batch)),
            Some(Err(e)) => Err(external(dar_scan::one_line(&e))),
        }
    }
}

impl Iterator for ScanReader {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let item = self.next_item().transpose();
        if !matches!(item, Some(Ok(_))) {
            // Done or failed: release the scan (and its I/O) now.
            self.stream = None;
        }
        item
    }
}

impl RecordBatchReader for ScanReader {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// `stream` with its small batches merged into batches of at least `rows`
/// rows (the last one shorter), in order; a batch of `rows / 8` rows or
/// more passes through uncopied. For consumers that pay per batch and per
/// column (a Polars frame from each batch): a selective scan's few rows,
/// spread over many pages, cross over once instead of once per page. A
/// merged batch is allocated for the rows it holds (arrow's
/// `BatchCoalescer` allocates its target up front, per column).
pub fn coalesced(stream: BatchStream, schema: SchemaRef, rows: usize) -> BatchStream {
    let merger = Merger {
        schema,
        rows: rows.max(1),
        pending: Vec::new(),
        pending_rows: 0,
    };
    // The input (`None` once ended or failed), the merger, and what is
    // ready to hand out.
    let state = (Some(stream), merger, std::collections::VecDeque::new());
    futures::stream::unfold(state, |(mut input, mut merger, mut ready)| async move {
        loop {
            if let Some(item) = ready.pop_front() {
                return Some((item, (input, merger, ready)));
            }
            match input.as_mut()?.next().await {
                Some(Ok(batch)) => ready.extend(merger.push(batch)),
                // The end, or an error: the pending rows first.
                other => {
                    input = None;
                    ready.extend(merger.flush());
                    ready.extend(other.and_then(Result::err).map(Err));
                }
            }
        }
    })
    .boxed()
}

/// Small batches held until they make `rows` rows (see [`coalesced`]).
struct Merger {
    schema: SchemaRef,
    rows: usize,
    pending: Vec<RecordBatch>,
    pending_rows: usize,
}

impl Merger {
    /// What `batch` makes ready: nothing while it and the pending batches
    /// are small, else the pending rows merged and a large batch itself.
    fn push(&mut self, batch: RecordBatch) -> Vec<Result<RecordBatch, ScanError>> {
        if batch.num_rows() >= (self.rows / 8).max(1) {
            let mut out: Vec<_> = self.flush().into_iter().collect();
            out.push(Ok(batch));
            return out;
        }
        self.pending_rows += batch.num_rows();
        self.pending.push(batch);
        if self.pending_rows >= self.rows {
            self.flush().into_iter().collect()
        } else {
            Vec::new()
        }
    }

    /// The pending batches as one (none when nothing is pending).
    fn flush(&mut self) -> Option<Result<RecordBatch, ScanError>> {
        let pending = std::mem::take(&mut self.pending);
        self.pending_rows = 0;
        match pending.len() {
            0 => None,
            1 => pending.into_iter().next().map(Ok),
            _ => Some(
                arrow_select::concat::concat_batches(&self.schema, &pending).map_err(|source| {
                    ScanError::Arrow {
                        context: "merging small batches",
                        path: String::new(),
                        source: Box::new(source),
                    }
                }),
            ),
        }
    }
}

/// A running scan as a Python iterator of `pyarrow.RecordBatch`es; read
/// errors raise `dar.DarError`s.
#[pyclass(frozen, module = "dar", name = "_BatchIterator")]
pub struct BatchIterator {
    stream: Mutex<Option<BatchStream>>,
}

impl BatchIterator {
    /// Starts running `plan`.
    pub fn new(plan: &ScanPlan) -> Self {
        Self::of(plan.execute())
    }

    /// Iterates over `stream`.
    pub fn of(stream: BatchStream) -> Self {
        Self {
            stream: Mutex::new(Some(stream)),
        }
    }
}

#[pymethods]
impl BatchIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        // Never block on the lock while holding the GIL: the thread that
        // holds it waits for the GIL at the end of its batch.
        let Ok(mut guard) = self.stream.try_lock() else {
            return Err(PyRuntimeError::new_err(
                "this scan is being read by another thread",
            ));
        };
        let Some(stream) = guard.as_mut() else {
            return Ok(None);
        };
        let item = match wait(py, || stream.next()) {
            Ok(item) => item,
            Err(e) => {
                *guard = None;
                return Err(e);
            }
        };
        match item {
            Some(Ok(batch)) => pyarrow_batch(py, batch).map(Some),
            Some(Err(e)) => {
                *guard = None;
                Err(scan_to_py(e))
            }
            None => {
                *guard = None;
                Ok(None)
            }
        }
    }
}
