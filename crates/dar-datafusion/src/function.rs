//! The table functions `delta_scan('uri' [, version | 'timestamp'])` and
//! `table_changes('uri', start [, end])`.

use std::sync::Arc;

use dar_scan::{ChangeBound, Table, TableOptions};
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
    base: TableOptions,
    options: DeltaScanOptions,
}

impl DeltaScanFunction {
    /// The function opening every table with `base` (storage options,
    /// caches; a version argument overrides its version).
    pub fn new(base: impl Into<TableOptions>, options: DeltaScanOptions) -> Self {
        Self {
            base: base.into(),
            options,
        }
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

/// The table URI, a table function's first argument (a string literal);
/// `usage` words the error.
fn table_uri(first: Option<&DfExpr>, usage: fn(&str) -> DataFusionError) -> Result<String> {
    match first {
        Some(DfExpr::Literal(
            ScalarValue::Utf8(Some(s))
            | ScalarValue::Utf8View(Some(s))
            | ScalarValue::LargeUtf8(Some(s)),
            _,
        )) => Ok(s.clone()),
        Some(_) => Err(usage("the first argument must be a string literal")),
        None => Err(usage("missing the table URI")),
    }
}

impl TableFunctionImpl for DeltaScanFunction {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let exprs = args.exprs();
        let uri = table_uri(exprs.first(), usage)?;
        if exprs.len() > 2 {
            return Err(usage(&format!(
                "takes 1 or 2 arguments, got {}",
                exprs.len()
            )));
        }
        let mut options = self.base.clone();
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
        let table = block(&uri, || Table::open_with(&uri, options))?;
        Ok(Arc::new(DeltaTableProvider::with_options(
            table,
            self.options,
        )))
    }
}

/// `table_changes('uri', start [, end])`: the change data feed of the Delta
/// table at `uri` from `start` to `end` (the latest version without it),
/// each a version (an integer literal) or a time (a string literal: RFC
/// 3339 or milliseconds since the epoch; a start is the first commit at or
/// after it, an end the last commit at or before it; a start after the
/// last commit is an error, an end after it the latest version). The range
/// resolves to versions when the function is called: a view over it keeps
/// reading those versions. Columns: the table's at the end version and
/// `_change_type`, `_commit_version`, `_commit_timestamp`; filters,
/// projections and limits are pushed down as for `delta_scan`.
#[derive(Debug, Clone, Default)]
pub struct TableChangesFunction {
    base: TableOptions,
    options: DeltaScanOptions,
}

impl TableChangesFunction {
    /// The function opening every table with `base` (storage options,
    /// caches; a version argument overrides its version).
    pub fn new(base: impl Into<TableOptions>, options: DeltaScanOptions) -> Self {
        Self {
            base: base.into(),
            options,
        }
    }
}

fn changes_usage(detail: &str) -> DataFusionError {
    DataFusionError::Plan(format!("table_changes('uri', start [, end]): {detail}"))
}

/// A bound of `table_changes`.
fn change_bound(which: &str, expr: &DfExpr) -> Result<ChangeBound> {
    let invalid = || {
        changes_usage(&format!(
            "the {which} must be a version (an integer literal) or a timestamp (a string \
             literal: RFC 3339 or milliseconds since the epoch), not {expr}"
        ))
    };
    let DfExpr::Literal(v, _) = expr else {
        return Err(invalid());
    };
    match point(v) {
        Some(Point::Version(text)) => Ok(ChangeBound::Version(
            dar_scan::parse_version(&text).map_err(|e| changes_usage(&e.to_string()))?,
        )),
        Some(Point::Timestamp(text)) => Ok(ChangeBound::TimestampMs(
            dar_scan::parse_timestamp_ms(text).map_err(|e| changes_usage(&e.to_string()))?,
        )),
        None => Err(invalid()),
    }
}

impl TableFunctionImpl for TableChangesFunction {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let exprs = args.exprs();
        let uri = table_uri(exprs.first(), changes_usage)?;
        if !(2..=3).contains(&exprs.len()) {
            return Err(changes_usage(&format!(
                "takes 2 or 3 arguments, got {}",
                exprs.len()
            )));
        }
        let start = change_bound("start", &exprs[1])?;
        let end = exprs.get(2).map(|e| change_bound("end", e)).transpose()?;
        let options = self.base.clone();
        let scan_options = self.options;
        let open_uri = uri.clone();
        let provider = block(&uri, move || async move {
            let table = Table::open_with(&open_uri, options).await?;
            DeltaTableProvider::changes_of(table, start, end, scan_options).await
        })?;
        Ok(Arc::new(provider))
    }
}

/// Runs the future `make` returns from synchronous code (DataFusion calls
/// table functions synchronously while planning): on the current
/// multi-threaded tokio runtime when there is one, else on a fresh
/// single-threaded runtime on a helper thread. (The future need not be
/// `Send`: it is created on the thread that runs it.) `uri` names the
/// table if the helper thread stops.
fn block<T, F, M>(uri: &str, make: M) -> Result<T>
where
    T: Send,
    M: FnOnce() -> F + Send,
    F: Future<Output = dar_scan::Result<T>>,
{
    use tokio::runtime::{Handle, RuntimeFlavor};
    if let Ok(handle) = Handle::try_current()
        && handle.runtime_flavor() == RuntimeFlavor::MultiThread
    {
        return tokio::task::block_in_place(|| handle.block_on(make())).map_err(scan_error);
    }
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| DataFusionError::External(Box::new(e)))?;
                runtime.block_on(make()).map_err(scan_error)
            })
            .join()
            .unwrap_or_else(|_| {
                Err(DataFusionError::Execution(format!(
                    "the thread opening '{}' stopped",
                    dar_io::redact_uri(uri)
                )))
            })
    })
}
