//! `Table.__datafusion_table_provider__`: the table in DataFusion Python.
//!
//! `SessionContext.register_table("t", dar.Table(uri))` (datafusion 55;
//! `register_table_provider` in older releases) calls
//! `__datafusion_table_provider__(session)` and takes the PyCapsule it
//! returns: a `datafusion_table_provider` capsule holding
//! datafusion-ffi's [`FFI_TableProvider`] over dar-datafusion's
//! [`DeltaTableProvider`], the provider `dar sql` uses. Queries get its
//! pushdown (filters reported `Exact` / `Inexact` / `Unsupported`,
//! projection, limit) and statistics; its scans run on the module's tokio
//! runtime ([`crate::runtime::runtime`]).
//!
//! Filters cross the FFI boundary as DataFusion protobuf and are decoded
//! here with the functions of a [`SessionContext`] of this module
//! ([`decoding_context`]), not the caller's session: reading the
//! session's own codec out of its capsule takes `unsafe`, which this
//! workspace forbids. A filter calling a function DataFusion Python knows
//! and dar's DataFusion does not (a Python UDF) therefore fails to decode,
//! and the query fails with DataFusion's error naming the function.

use std::ffi::CStr;
use std::sync::{Arc, OnceLock};

use dar_datafusion::DeltaTableProvider;
use datafusion::catalog::TableProvider;
use datafusion::execution::TaskContextProvider;
use datafusion::prelude::SessionContext;
use datafusion_ffi::table_provider::FFI_TableProvider;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::runtime::runtime;

/// The capsule name DataFusion Python looks for.
const PROVIDER_CAPSULE: &CStr = c"datafusion_table_provider";

/// The context pushed-down filters are decoded with: DataFusion's
/// built-in functions (as dar's DataFusion is built). Kept for the
/// module's life: the exported provider holds it weakly.
fn decoding_context() -> Arc<dyn TaskContextProvider> {
    static CONTEXT: OnceLock<Arc<SessionContext>> = OnceLock::new();
    Arc::clone(CONTEXT.get_or_init(|| Arc::new(SessionContext::new()))) as _
}

/// `table` (the value `dar.Table` holds: the same snapshot and storage
/// options, nothing reopened) as a `datafusion_table_provider` capsule.
pub fn provider_capsule(py: Python<'_>, table: dar_scan::Table) -> PyResult<Bound<'_, PyCapsule>> {
    let handle = runtime()?.handle().clone();
    let provider: Arc<dyn TableProvider> = Arc::new(DeltaTableProvider::new(table));
    let ffi = FFI_TableProvider::new(provider, true, Some(handle), &decoding_context(), None);
    PyCapsule::new_with_value(py, ffi, PROVIDER_CAPSULE)
}
