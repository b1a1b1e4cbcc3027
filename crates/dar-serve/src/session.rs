//! One query's SQL session: the served tables as they are when the query
//! is planned, the table functions limited to them, dar's read-only SQL
//! rules (`dar_datafusion::sql`), and the shared memory pool.

use std::sync::Arc;

use arrow_array::RecordBatch;
use dar_datafusion::{
    DELTA_SCAN_FUNCTION, DeltaScanFunction, DeltaScanOptions, QueryOptions, TABLE_CHANGES_FUNCTION,
    TableChangesFunction,
};
use dar_scan::TableOptions;
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{DataFusionError, ParamValues, ScalarValue};
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::logical_expr::Expr;
use datafusion::prelude::{DataFrame, SessionConfig, SessionContext};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};
use tonic::Status;

use crate::tables::Tables;

/// The catalog and schema the served tables are in.
pub(crate) const CATALOG: &str = "dar";
/// The schema of the served tables.
pub(crate) const SCHEMA: &str = "public";

/// What every query's session is built from.
#[derive(Debug)]
pub(crate) struct Sessions {
    pub(crate) runtime: Arc<RuntimeEnv>,
    pub(crate) allow_any_table: bool,
    pub(crate) any_table: TableOptions,
    pub(crate) scan: DeltaScanOptions,
}

/// The served tables as a query's session holds them: name, URI and
/// version (the query's log line names those its scans read).
pub(crate) type Versions = Vec<(String, String, u64)>;

impl Sessions {
    /// A session holding each served table at its current version.
    pub(crate) fn session(&self, tables: &Tables) -> Result<(SessionContext, Versions), Status> {
        let config = SessionConfig::new()
            .with_default_catalog_and_schema(CATALOG, SCHEMA)
            .with_information_schema(false);
        let state = SessionStateBuilder::new()
            .with_config(config)
            .with_runtime_env(Arc::clone(&self.runtime))
            .with_default_features()
            .build();
        let ctx = SessionContext::new_with_state(state);
        let mut versions = Vec::new();
        let mut captured = Vec::new();
        for table in tables.iter() {
            let provider = table.provider();
            let read = provider.table();
            versions.push((table.name.clone(), read.uri().to_string(), read.version()));
            ctx.register_table(table.name.as_str(), Arc::clone(&provider) as _)
                .map_err(|e| status(&e))?;
            captured.push((table.name.clone(), table.options.clone(), provider));
        }
        let served = Arc::new(Served {
            tables: captured,
            allow_any_table: self.allow_any_table,
            any_table: self.any_table.clone(),
            scan: self.scan,
        });
        ctx.register_udtf(
            DELTA_SCAN_FUNCTION,
            Arc::new(ServedFunction {
                served: Arc::clone(&served),
                changes: false,
            }),
        );
        ctx.register_udtf(
            TABLE_CHANGES_FUNCTION,
            Arc::new(ServedFunction {
                served,
                changes: true,
            }),
        );
        Ok((ctx, versions))
    }
}

/// Plans `sql` read-only (`dar sql`'s rules) in `ctx`, with `params`
/// bound to its placeholders.
pub(crate) async fn plan(
    ctx: &SessionContext,
    sql: &str,
    params: &[ScalarValue],
) -> Result<DataFrame, Status> {
    let df = dar_datafusion::sql(ctx, sql, QueryOptions::new())
        .await
        .map_err(|e| status(&e))?;
    if params.is_empty() {
        return Ok(df);
    }
    df.with_param_values(ParamValues::List(
        params.iter().cloned().map(Into::into).collect(),
    ))
    .map_err(|e| status(&e))
}

/// The served tables as one query's session holds them.
#[derive(Debug)]
struct Served {
    tables: Vec<(
        String,
        TableOptions,
        Arc<dar_datafusion::DeltaTableProvider>,
    )>,
    allow_any_table: bool,
    any_table: TableOptions,
    scan: DeltaScanOptions,
}

/// `delta_scan('name' [, version | 'timestamp'])` and
/// `table_changes('name', start [, end])` over the served tables: the name
/// resolves to the table's URI and storage options; without a version,
/// `delta_scan('name')` is the snapshot the query's session holds. Any
/// other first argument is refused unless the server allows any table.
#[derive(Debug)]
struct ServedFunction {
    served: Arc<Served>,
    changes: bool,
}

impl TableFunctionImpl for ServedFunction {
    fn call_with_args(
        &self,
        args: TableFunctionArgs,
    ) -> datafusion::common::Result<Arc<dyn TableProvider>> {
        let function = if self.changes {
            TABLE_CHANGES_FUNCTION
        } else {
            DELTA_SCAN_FUNCTION
        };
        let exprs = args.exprs();
        let name = match exprs.first() {
            Some(Expr::Literal(
                ScalarValue::Utf8(Some(s))
                | ScalarValue::Utf8View(Some(s))
                | ScalarValue::LargeUtf8(Some(s)),
                _,
            )) => s.clone(),
            _ => {
                return Err(DataFusionError::Plan(format!(
                    "{function}: the first argument must be the name of a served table (a string literal)"
                )));
            }
        };
        let served = &self.served;
        let Some((_, options, provider)) = served.tables.iter().find(|(n, _, _)| *n == name) else {
            if !served.allow_any_table {
                let names: Vec<&str> = served.tables.iter().map(|(n, _, _)| n.as_str()).collect();
                return Err(DataFusionError::Plan(format!(
                    "{function}: '{}' is not a table this server serves (it serves: {}); \
                     only a server started with --allow-any-table reads other tables",
                    dar_io::redact_uri(&name),
                    names.join(", ")
                )));
            }
            return if self.changes {
                TableChangesFunction::new(served.any_table.clone(), served.scan)
                    .call_with_args(args)
            } else {
                DeltaScanFunction::new(served.any_table.clone(), served.scan).call_with_args(args)
            };
        };
        if !self.changes && exprs.len() == 1 {
            return Ok(Arc::clone(provider) as _);
        }
        let uri = provider.table().uri().to_string();
        let mut rewritten = exprs.to_vec();
        rewritten[0] = Expr::Literal(ScalarValue::Utf8(Some(uri)), None);
        let args = TableFunctionArgs::new(&rewritten, args.session());
        if self.changes {
            TableChangesFunction::new(options.clone(), served.scan).call_with_args(args)
        } else {
            DeltaScanFunction::new(options.clone(), served.scan).call_with_args(args)
        }
    }
}

/// `sql` with each `?` placeholder numbered (`$1`, `$2`, ...), as
/// DataFusion plans only numbered ones; `?` inside strings and comments is
/// left alone (the SQL is tokenized).
pub(crate) fn number_placeholders(sql: &str) -> Result<String, Status> {
    if !sql.contains('?') {
        return Ok(sql.to_string());
    }
    let tokens = Tokenizer::new(&GenericDialect {}, sql)
        .tokenize()
        .map_err(|e| Status::invalid_argument(format!("the SQL does not parse: {e}")))?;
    let mut n = 0;
    let mut out = String::with_capacity(sql.len() + 8);
    for token in tokens {
        match token {
            Token::Placeholder(p) if p == "?" => {
                n += 1;
                out.push_str(&format!("${n}"));
            }
            other => out.push_str(&other.to_string()),
        }
    }
    Ok(out)
}

/// The parameters of one execution: the first row of `batches` (the
/// values a client bound), one value per column in order.
pub(crate) fn parameters(batches: &[RecordBatch]) -> Result<Vec<ScalarValue>, Status> {
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    if rows > 1 {
        return Err(Status::invalid_argument(format!(
            "{rows} rows of parameters were bound; this server executes a prepared \
             statement with one row of parameters at a time"
        )));
    }
    let Some(batch) = batches.iter().find(|b| b.num_rows() == 1) else {
        return Ok(Vec::new());
    };
    batch
        .columns()
        .iter()
        .enumerate()
        .map(|(i, column)| {
            ScalarValue::try_from_array(column, 0).map_err(|e| {
                Status::invalid_argument(format!("parameter {} cannot be read: {e}", i + 1))
            })
        })
        .collect()
}

/// The gRPC status of a DataFusion error: the query's fault
/// (`INVALID_ARGUMENT`), a resource (`RESOURCE_EXHAUSTED`), else
/// `INTERNAL`. The message is DataFusion's or dar's (whose errors redact
/// credentials).
pub(crate) fn status(e: &DataFusionError) -> Status {
    let root = e.find_root();
    let message = dar_scan::one_line(e);
    match root {
        DataFusionError::ResourcesExhausted(_) => Status::resource_exhausted(format!(
            "the query needs more memory than the server's --memory-limit allows: {message}"
        )),
        DataFusionError::SQL(..)
        | DataFusionError::Plan(_)
        | DataFusionError::SchemaError(..)
        | DataFusionError::NotImplemented(_) => Status::invalid_argument(message),
        _ => Status::internal(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn question_marks_are_numbered_outside_strings() {
        assert_eq!(
            number_placeholders("SELECT * FROM t WHERE a = ? AND b = '?' AND c > ?").unwrap(),
            "SELECT * FROM t WHERE a = $1 AND b = '?' AND c > $2"
        );
        assert_eq!(number_placeholders("SELECT $1").unwrap(), "SELECT $1");
    }
}
