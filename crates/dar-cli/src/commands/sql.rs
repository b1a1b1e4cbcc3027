//! `dar sql`: a SQL query over Delta tables, planned and run by DataFusion
//! through `dar-datafusion`, written by the same sinks as `dar scan`. It
//! only reads: DDL, DML, `COPY` and statements such as `SET` are refused
//! (`dar_datafusion::sql` with default `QueryOptions`).

use std::io::BufWriter;
use std::path::PathBuf;

use dar_datafusion::{DeltaScanOptions, DeltaTableProvider, QueryOptions, register_dar_with};
use dar_scan::{StatsLoading, Table, TableOptions};
use datafusion::error::DataFusionError;
use datafusion::physical_plan::displayable;
use datafusion::prelude::SessionContext;
use futures::StreamExt;

use super::Streams;
use super::scan::check_output;
use crate::cli::SqlArgs;
use crate::error::{CliError, one_line};
use crate::output::{OutputFile, batch_sink};
use crate::table::parse_storage_options;

/// Runs `dar sql`. A query that failed on `--workers` names the workers
/// that no longer answer (a dead worker's broken stream does not say
/// which it was).
pub async fn run(args: &SqlArgs, streams: &mut Streams<'_>) -> Result<(), CliError> {
    let result = query(args, streams).await;
    #[cfg(feature = "distributed")]
    if let Err(CliError::Sql { message }) = &result
        && !args.workers.is_empty()
    {
        let down = dar_distributed::unreachable_workers(&worker_urls(args)?).await;
        if !down.is_empty() {
            let names: Vec<String> = down
                .iter()
                .map(|u| {
                    let host = u.host_str().unwrap_or_default();
                    let port = u.port_or_known_default().unwrap_or_default();
                    format!("worker {host}:{port}")
                })
                .collect();
            let lost = format!("query failed: {} no longer reachable; ", names.join(", "));
            return Err(CliError::Sql {
                message: message.replacen("query failed: ", &lost, 1),
            });
        }
    }
    result
}

async fn query(args: &SqlArgs, streams: &mut Streams<'_>) -> Result<(), CliError> {
    check_output(args.format, crate::cli::output_file(&args.output))?;
    let storage = parse_storage_options(&args.storage_options)?;
    // `--explain` reads the kept files' footers while planning, so that the
    // plan shows the row groups and pages each scan keeps.
    let options = DeltaScanOptions::new().with_resolve_at_plan(args.explain);
    let ctx = session(args)?;
    let mut base = crate::table::with_cache(TableOptions::from(storage), &args.cache);
    // The query is known before its tables open: the columns its filters
    // name have their file statistics decoded with the checkpoint's
    // counts, not in a second pass when the query is planned.
    let filtered = dar_datafusion::filter_columns(&ctx, &args.query);
    if !filtered.is_empty() {
        base = base.with_stats_loading(StatsLoading::Columns(filtered));
    }
    register_dar_with(&ctx, base.clone(), options);
    // The local folders of the registered tables: `--output` never writes
    // inside one.
    let mut table_roots: Vec<PathBuf> = Vec::new();
    for (i, entry) in args.tables.iter().enumerate() {
        let (name, uri) = match entry.split_once('=') {
            Some((n, u)) if !n.trim().is_empty() && !u.is_empty() => (n.trim(), u),
            // The entry is not echoed: a URI may carry a secret.
            _ => {
                return Err(CliError::InvalidArgument {
                    argument: "--table",
                    reason: format!("entry {} is not NAME=URI", i + 1),
                });
            }
        };
        let table = Table::open_with(uri, base.clone()).await?;
        let url = table.store().url();
        if url.scheme() == "file"
            && let Ok(root) = url.to_file_path()
        {
            table_roots.push(root);
        }
        let provider = DeltaTableProvider::with_options(table, options);
        ctx.register_table(name, std::sync::Arc::new(provider))
            .map_err(sql_error)?;
    }
    // A reader: queries, EXPLAIN and DESCRIBE only (no DDL, DML, COPY or
    // SET), expressions nested at most dar_datafusion::MAX_EXPR_NESTING
    // deep, TIMESTAMP in microseconds.
    let df = dar_datafusion::sql(&ctx, &args.query, QueryOptions::new())
        .await
        .map_err(sql_error)?;
    if args.explain {
        let plan = df.create_physical_plan().await.map_err(sql_error)?;
        let text = displayable(plan.as_ref()).indent(true).to_string();
        return writeln!(streams.stdout, "{}", text.trim_end())
            .map_err(|e| CliError::write("explain", e));
    }
    let mut stream = df.execute_stream().await.map_err(sql_error)?;
    let schema = stream.schema();
    match crate::cli::output_file(&args.output) {
        Some(path) => {
            // Rows go to a temporary file renamed over `path` only once the
            // query has succeeded: a failed query (a worker lost, a bad
            // row) leaves what was at `path` untouched.
            let mut file = OutputFile::create(path, &table_roots)?;
            let written = async {
                let writer = Box::new(BufWriter::new(file.writer()));
                let mut sink = batch_sink(args.format, &schema, writer)?;
                while let Some(batch) = stream.next().await {
                    sink.write(&batch.map_err(sql_error)?)?;
                }
                sink.finish()
            }
            .await;
            written.map_err(|e| e.in_file(path))?;
            file.commit()
        }
        #[cfg(feature = "distributed")]
        None if !args.workers.is_empty() => {
            // A worker can fail after others sent rows: hold them until the
            // query has succeeded, so a failed query writes none.
            let mut spool = crate::output::Spool::new();
            let mut sink = batch_sink(args.format, &schema, Box::new(&mut spool))?;
            while let Some(batch) = stream.next().await {
                sink.write(&batch.map_err(sql_error)?)?;
            }
            sink.finish()?;
            spool
                .copy_to(&mut *streams.stdout)
                .map_err(|e| CliError::write(args.format.name(), e))
        }
        None => {
            let mut sink = batch_sink(args.format, &schema, Box::new(&mut *streams.stdout))?;
            while let Some(batch) = stream.next().await {
                sink.write(&batch.map_err(sql_error)?)?;
            }
            sink.finish()
        }
    }
}

/// The URLs of `--workers`.
#[cfg(feature = "distributed")]
fn worker_urls(args: &SqlArgs) -> Result<Vec<url::Url>, CliError> {
    args.workers
        .iter()
        .map(|w| dar_distributed::worker_url(w.trim()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| CliError::InvalidArgument {
            argument: "--workers",
            reason: e.strip_backtrace(),
        })
}

/// How `dar sql --workers` calls its workers: the token of `--token-file`
/// or `DAR_WORKER_TOKEN`, the CA of `--tls-ca`, `--max-message-mib`.
#[cfg(feature = "distributed")]
fn client_options(args: &SqlArgs) -> Result<dar_distributed::ClientOptions, CliError> {
    use dar_distributed::{ClientOptions, DEFAULT_MAX_MESSAGE_BYTES, TlsCa, Token};

    let invalid = |argument: &'static str| {
        move |e: dar_distributed::Error| CliError::InvalidArgument {
            argument,
            reason: e.to_string(),
        }
    };
    let limit = args
        .max_message_mib
        .map_or(DEFAULT_MAX_MESSAGE_BYTES, |mib| mib as usize * 1024 * 1024);
    let mut client = ClientOptions::new().with_max_message_bytes(limit);
    let token_source = if args.token_file.is_some() {
        "--token-file"
    } else {
        dar_distributed::TOKEN_ENV
    };
    if let Some(token) =
        Token::from_file_or_env(args.token_file.as_deref()).map_err(invalid(token_source))?
    {
        client = client.with_token(token);
    }
    if let Some(ca) = &args.tls_ca {
        client = client.with_tls_ca(TlsCa::from_pem_file(ca).map_err(invalid("--tls-ca"))?);
    }
    Ok(client)
}

/// The session: one that runs the stages on `--workers`, or a plain one.
#[cfg(feature = "distributed")]
fn session(args: &SqlArgs) -> Result<SessionContext, CliError> {
    if args.workers.is_empty() {
        return Ok(SessionContext::new());
    }
    Ok(SessionContext::from(
        dar_distributed::coordinator_state_with(
            datafusion::prelude::SessionConfig::new(),
            worker_urls(args)?,
            client_options(args)?,
        ),
    ))
}

/// The session: a plain one (built without `distributed`).
#[cfg(not(feature = "distributed"))]
fn session(_args: &SqlArgs) -> Result<SessionContext, CliError> {
    Ok(SessionContext::new())
}

/// A DataFusion error as one line: dar's own error (a table that cannot be
/// read) with its causes, or DataFusion's message without a backtrace.
fn sql_error(e: DataFusionError) -> CliError {
    let message = match e.find_root() {
        DataFusionError::External(inner) => one_line(inner.as_ref()),
        _ => e.strip_backtrace(),
    };
    CliError::Sql {
        message: format!(
            "query failed: {}",
            message.split_whitespace().collect::<Vec<_>>().join(" ")
        ),
    }
}
