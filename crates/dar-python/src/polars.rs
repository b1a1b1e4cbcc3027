//! Lazy Polars frames (`Table.to_polars()`, `dar.scan_polars(uri, ...)`):
//! Polars' IO-plugin API driven by the Python in `polars_source.py`,
//! compiled into the submodule `dar._polars` when `dar` is imported (Polars
//! itself is imported only when a frame is made). It converts the
//! predicate Polars hands over into dar's filter where it can, pushes it,
//! the projection and (for a predicate that converts whole) the row limit
//! into the scan, and has Polars apply the whole predicate to what comes
//! back, so the rows are always Polars' own answer.

use std::ffi::CString;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// Compiles `dar._polars` and adds it, and its `scan_polars`, to `m`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let code = CString::new(include_str!("polars_source.py"))
        .map_err(|e| PyRuntimeError::new_err(format!("dar._polars source: {e}")))?;
    let module = PyModule::from_code(m.py(), &code, c"dar/_polars.py", c"dar._polars")?;
    m.add("_polars", &module)?;
    m.add("scan_polars", module.getattr("scan_polars")?)?;
    Ok(())
}
