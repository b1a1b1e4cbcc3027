//! `Table.__datafusion_table_provider__`: the table in DataFusion Python.
//!
//! `SessionContext.register_table("t", dar.Table(uri))` (datafusion 55;
//! its deprecated `register_table_provider` too) calls
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
//! workspace forbids. A function this side does not know (a Python UDF)
//! decodes as a [`StandIn`] ([`StandInCodec`]), and [`Provider`] reports
//! every filter that calls one `Unsupported`: DataFusion Python evaluates
//! it with its own function, over the rows of dar's scan, and dar never
//! runs it.

use std::any::Any;
use std::ffi::CStr;
use std::sync::{Arc, OnceLock};

use arrow_schema::{DataType, SchemaRef};
use async_trait::async_trait;
use dar_datafusion::DeltaTableProvider;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::tree_node::TreeNode;
use datafusion::common::{Result, Statistics, TableReference, not_impl_err};
use datafusion::execution::{TaskContext, TaskContextProvider};
use datafusion::logical_expr::{
    ColumnarValue, Expr, Extension, LogicalPlan, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, TableProviderFilterPushDown, TableType, Volatility,
};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionContext;
use datafusion_ffi::table_provider::FFI_TableProvider;
use datafusion_proto::logical_plan::{DefaultLogicalExtensionCodec, LogicalExtensionCodec};
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
    let provider: Arc<dyn TableProvider> = Arc::new(Provider(DeltaTableProvider::new(table)));
    let codec: Arc<dyn LogicalExtensionCodec> = Arc::new(StandInCodec);
    let context = decoding_context();
    let ffi = FFI_TableProvider::new(provider, true, Some(handle), &context, Some(codec));
    PyCapsule::new_with_value(py, ffi, PROVIDER_CAPSULE)
}

/// A function of the caller's session this side does not know, as decoded
/// from a pushed-down filter: it only carries the name, and is never run
/// ([`Provider`] reports its filters `Unsupported`, so DataFusion keeps them).
#[derive(Debug, PartialEq, Eq, Hash)]
struct StandIn {
    name: String,
    signature: Signature,
}

impl ScalarUDFImpl for StandIn {
    fn name(&self) -> &str {
        &self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        not_impl_err!("dar does not know the function {}", self.name)
    }

    fn invoke_with_args(&self, _args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        not_impl_err!("dar cannot run the function {}", self.name)
    }
}

/// DataFusion's default codec, except that a function the decoding context
/// lacks becomes a [`StandIn`] instead of an error.
#[derive(Debug)]
struct StandInCodec;

impl LogicalExtensionCodec for StandInCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> Result<Extension> {
        DefaultLogicalExtensionCodec {}.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        DefaultLogicalExtensionCodec {}.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        DefaultLogicalExtensionCodec {}.try_decode_table_provider(buf, table_ref, schema, ctx)
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        DefaultLogicalExtensionCodec {}.try_encode_table_provider(table_ref, node, buf)
    }

    fn try_decode_udf(&self, name: &str, _buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        let signature = Signature::variadic_any(Volatility::Volatile);
        let name = name.to_string();
        Ok(Arc::new(ScalarUDF::new_from_impl(StandIn {
            name,
            signature,
        })))
    }
}

/// Whether `filter` calls a [`StandIn`].
fn calls_stand_in(filter: &Expr) -> bool {
    filter
        .exists(|e| {
            Ok(matches!(e, Expr::ScalarFunction(f)
                if (f.func.inner().as_ref() as &dyn Any).downcast_ref::<StandIn>().is_some()))
        })
        .unwrap_or(true)
}

/// dar's [`DeltaTableProvider`], with filters that call a [`StandIn`]
/// reported `Unsupported` (DataFusion then never hands them to the scan).
#[derive(Debug)]
struct Provider(DeltaTableProvider);

#[async_trait]
impl TableProvider for Provider {
    fn schema(&self) -> SchemaRef {
        self.0.schema()
    }

    fn table_type(&self) -> TableType {
        self.0.table_type()
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        let mut answers = self.0.supports_filters_pushdown(filters)?;
        for (answer, filter) in answers.iter_mut().zip(filters) {
            if calls_stand_in(filter) {
                *answer = TableProviderFilterPushDown::Unsupported;
            }
        }
        Ok(answers)
    }

    fn statistics(&self) -> Option<Statistics> {
        self.0.statistics()
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.0.scan(state, projection, filters, limit).await
    }
}
