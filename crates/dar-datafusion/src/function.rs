//! The table function `delta_scan('uri' [, version])`.

use std::sync::Arc;

use dar_io::StorageOptions;
use dar_scan::{Table, TableOptions};
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::logical_expr::Expr as DfExpr;

use crate::options::DeltaScanOptions;
use crate::provider::{DeltaTableProvider, scan_error};

/// `delta_scan('uri' [, version])`: the Delta table at `uri`, at its newest
/// version or at `version`, opened with this function's storage options.
#[derive(Debug, Clone, Default)]
pub struct DeltaScanFunction {
    storage: StorageOptions,
    options: DeltaScanOptions,
}

impl DeltaScanFunction {
    /// The function with storage options for every table it opens.
    pub fn new(storage: StorageOptions, options: DeltaScanOptions) -> Self {
        Self { storage, options }
    }
}

fn usage(detail: &str) -> DataFusionError {
    DataFusionError::Plan(format!("delta_scan('uri' [, version]): {detail}"))
}

impl TableFunctionImpl for DeltaScanFunction {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let exprs = args.exprs();
        let uri = match exprs.first() {
            Some(DfExpr::Literal(
                ScalarValue::Utf8(Some(s))
                | ScalarValue::Utf8View(Some(s))
                | ScalarValue::LargeUtf8(Some(s)),
                _,
            )) => s.clone(),
            Some(_) => return Err(usage("the first argument must be a string literal")),
            None => return Err(usage("missing the table URI")),
        };
        let mut options = TableOptions::new().with_storage_options(self.storage.clone());
        match exprs.get(1) {
            None => {}
            Some(DfExpr::Literal(v, _)) => {
                let version = match v {
                    ScalarValue::Int64(Some(n)) => u64::try_from(*n).ok(),
                    ScalarValue::Int32(Some(n)) => u64::try_from(*n).ok(),
                    ScalarValue::UInt64(Some(n)) => Some(*n),
                    _ => None,
                };
                let version = version.ok_or_else(|| {
                    usage(&format!(
                        "the version must be a non-negative integer, not {v}"
                    ))
                })?;
                options = options.with_version(version);
            }
            Some(other) => {
                return Err(usage(&format!(
                    "the version must be an integer literal, not {other}"
                )));
            }
        }
        if exprs.len() > 2 {
            return Err(usage(&format!(
                "takes 1 or 2 arguments, got {}",
                exprs.len()
            )));
        }
        let table = open_blocking(&uri, options)?;
        Ok(Arc::new(DeltaTableProvider::with_options(
            table,
            self.options,
        )))
    }
}

/// Opens a table from synchronous code (DataFusion calls table functions
/// synchronously while planning): on the current multi-threaded tokio
/// runtime when there is one, else on a fresh single-threaded runtime on a
/// helper thread. (The opening future is not `Send`: it is created on the
/// thread that runs it.)
fn open_blocking(uri: &str, options: TableOptions) -> Result<Table> {
    use tokio::runtime::{Handle, RuntimeFlavor};
    if let Ok(handle) = Handle::try_current()
        && handle.runtime_flavor() == RuntimeFlavor::MultiThread
    {
        return tokio::task::block_in_place(|| handle.block_on(Table::open_with(uri, options)))
            .map_err(scan_error);
    }
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| DataFusionError::External(Box::new(e)))?;
                runtime
                    .block_on(Table::open_with(uri, options))
                    .map_err(scan_error)
            })
            .join()
            .unwrap_or_else(|_| {
                Err(DataFusionError::Execution(format!(
                    "delta_scan: the thread opening '{}' stopped",
                    dar_io::redact_uri(uri)
                )))
            })
    })
}
