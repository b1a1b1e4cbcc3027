//! The table function `delta_scan('uri' [, version | 'timestamp'])`.

use std::sync::Arc;

use dar_io::StorageOptions;
use dar_scan::{Table, TableOptions};
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::logical_expr::Expr as DfExpr;

use crate::options::DeltaScanOptions;
use crate::provider::{DeltaTableProvider, scan_error};

/// `delta_scan('uri' [, version | 'timestamp'])`: the Delta table at `uri`,
/// at its newest version, at `version` (an integer), or at the newest
/// version committed at or before `'timestamp'` (a string: RFC 3339 such as
/// `'2024-01-31T12:00:00Z'`, or milliseconds since the epoch), opened with
/// this function's storage options. The version and timestamp parse with
/// dar-scan's [`parse_version`](dar_scan::parse_version) and
/// [`parse_timestamp_ms`](dar_scan::parse_timestamp_ms), as the `dar`
/// command line and the Python module parse theirs.
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
    DataFusionError::Plan(format!(
        "delta_scan('uri' [, version | 'timestamp']): {detail}"
    ))
}

/// What the second argument may be.
const SECOND_ARGUMENT: &str = "the second argument must be a version (an integer literal) or a \
     timestamp (a string literal: RFC 3339 or milliseconds since the epoch)";

/// Which version the second argument names, as text for dar-scan's
/// parsers (which word the errors).
enum Point<'a> {
    /// An integer literal: a version.
    Version(String),
    /// A string literal: a timestamp.
    Timestamp(&'a str),
}

fn point(value: &ScalarValue) -> Option<Point<'_>> {
    match value {
        ScalarValue::Int8(Some(n)) => Some(Point::Version(n.to_string())),
        ScalarValue::Int16(Some(n)) => Some(Point::Version(n.to_string())),
        ScalarValue::Int32(Some(n)) => Some(Point::Version(n.to_string())),
        ScalarValue::Int64(Some(n)) => Some(Point::Version(n.to_string())),
        ScalarValue::UInt8(Some(n)) => Some(Point::Version(n.to_string())),
        ScalarValue::UInt16(Some(n)) => Some(Point::Version(n.to_string())),
        ScalarValue::UInt32(Some(n)) => Some(Point::Version(n.to_string())),
        ScalarValue::UInt64(Some(n)) => Some(Point::Version(n.to_string())),
        ScalarValue::Utf8(Some(s))
        | ScalarValue::Utf8View(Some(s))
        | ScalarValue::LargeUtf8(Some(s)) => Some(Point::Timestamp(s)),
        _ => None,
    }
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
        if exprs.len() > 2 {
            return Err(usage(&format!(
                "takes 1 or 2 arguments, got {}",
                exprs.len()
            )));
        }
        let mut options = TableOptions::new().with_storage_options(self.storage.clone());
        match exprs.get(1) {
            None => {}
            Some(DfExpr::Literal(v, _)) => {
                options = match point(v) {
                    Some(Point::Version(text)) => options.with_version(
                        dar_scan::parse_version(&text).map_err(|e| usage(&e.to_string()))?,
                    ),
                    Some(Point::Timestamp(text)) => options.with_timestamp_ms(
                        dar_scan::parse_timestamp_ms(text).map_err(|e| usage(&e.to_string()))?,
                    ),
                    None => return Err(usage(&format!("{SECOND_ARGUMENT}, not {v}"))),
                };
            }
            Some(other) => {
                return Err(usage(&format!("{SECOND_ARGUMENT}, not {other}")));
            }
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
