//! `dar` for Python: Delta tables read by `dar-scan`, handed to pyarrow,
//! Polars, DuckDB or pandas as Arrow data without a copy.
//!
//! This crate is the Python extension module `dar`, built with maturin
//! (`pyproject.toml` beside this crate; `maturin develop` installs it into
//! the active virtual environment):
//!
//! ```python
//! import dar
//!
//! table = dar.Table("examples/data/sample")          # or s3://, az://, gs://...
//! rows = table.scan(columns=["trip_id", "fare"], filter="fare > 50").to_table()
//! polars.from_arrow(table.scan())                    # any __arrow_c_stream__ consumer
//! ```
//!
//! - [`table`]: `dar.Table(uri, *, version, timestamp, storage_options,
//!   confine_paths)`:
//!   version, schema, partition columns, protocol, metadata, files,
//!   refresh, scan; `dar.protocol(uri, ...)`: the protocol and what dar
//!   reads of it, for tables dar refuses too.
//! - [`polars`]: `Table.to_polars()` and `dar.scan_polars(uri, ...)`, lazy
//!   Polars frames with projection, predicate and limit pushdown.
//! - [`datafusion`]: `Table.__datafusion_table_provider__`, the table in
//!   DataFusion Python (`SessionContext.register_table`) with dar's
//!   pushdown.
//! - [`scan`]: `dar.Scan`: `__arrow_c_stream__`, `to_reader()`,
//!   `to_table()`, `count()`, `metrics()`.
//! - [`export`]: the Arrow PyCapsule interface over arrow-rs's C data and
//!   C stream structs.
//! - [`stream`]: pulling a running scan from Python.
//! - [`runtime`]: the tokio runtime; waits release the GIL and honour
//!   Ctrl-C.
//! - [`errors`]: the `dar.DarError` hierarchy, one class per dar-scan
//!   `ErrorKind`, with dar-scan's one-line messages.
//!
//! The Python API is typed in `dar.pyi`; the tests are `tests/*.py`
//! (pytest, run by `.ci/run`).

use pyo3::prelude::*;

pub mod datafusion;
pub mod errors;
pub mod export;
pub mod metrics;
pub mod options;
pub mod polars;
pub mod runtime;
pub mod scan;
pub mod stream;
pub mod table;

/// The module's allocator (feature `jemalloc`, on in the wheel), as the
/// `dar` binary's: jemalloc, two arenas (`.cargo/config.toml`), so that
/// page buffers a scan frees are reused instead of handed back to the
/// kernel and faulted in again. Its symbols are its own (prefixed: a
/// module must not replace the process's malloc) and its thread-local
/// storage is set up on first use, as a module loaded by `dlopen` needs.
#[cfg(all(feature = "jemalloc", target_os = "linux", not(target_env = "musl")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// The module `dar`.
#[pymodule]
fn dar(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<table::Table>()?;
    m.add_class::<scan::Scan>()?;
    m.add_function(wrap_pyfunction!(table::protocol_of, m)?)?;
    polars::register(m)?;
    errors::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
