//! `dar serve`: Delta tables over Arrow Flight SQL (`dar-serve`), until
//! Ctrl-C or SIGTERM, which drain in-flight queries up to a deadline.
//!
//! It prints each table's version and open time, then `listening on
//! HOST:PORT` (the real port when asked for port 0), and `admin on
//! HOST:PORT` for the admin port. Beyond loopback without a token it
//! warns on standard error: anyone who reaches the port can read the
//! tables.

use std::net::SocketAddr;
use std::time::Duration;

use dar_distributed::{ServerTls, Token};
use dar_serve::{ServeOptions, Server, TableConfig, beyond_loopback, parse_bytes, parse_duration};

use super::Streams;
use crate::cli::ServeArgs;
use crate::error::CliError;

fn serve_error(message: impl Into<String>) -> CliError {
    CliError::Serve {
        message: message.into(),
    }
}

fn duration(argument: &'static str, text: &Option<String>) -> Result<Option<Duration>, CliError> {
    text.as_deref()
        .map(|t| parse_duration(t).map_err(|reason| CliError::InvalidArgument { argument, reason }))
        .transpose()
}

/// The server's options from the command line and `--config`.
fn options(args: &ServeArgs) -> Result<ServeOptions, CliError> {
    let mut options = ServeOptions::new().with_any_table(args.allow_any_table);
    if let Some(path) = &args.config {
        let text = std::fs::read_to_string(path).map_err(|e| {
            serve_error(format!(
                "cannot read the config file '{}': {e}",
                path.display()
            ))
        })?;
        options = options
            .from_toml(&text, path)
            .map_err(|e| serve_error(e.to_string()))?;
        if args.allow_any_table {
            options = options.with_any_table(true);
        }
    }
    let storage = crate::table::parse_storage_options(&args.storage_options)?;
    for (key, value) in storage.iter() {
        options = options.with_storage_option(key, value);
    }
    for (i, entry) in args.tables.iter().enumerate() {
        match entry.split_once('=') {
            Some((n, u)) if !n.trim().is_empty() && !u.is_empty() => {
                options = options.with_table(TableConfig::new(n.trim(), u));
            }
            // The entry is not echoed: a URI may carry a secret.
            _ => {
                return Err(CliError::InvalidArgument {
                    argument: "--table",
                    reason: format!("entry {} is not NAME=URI", i + 1),
                });
            }
        }
    }
    if let Some(dir) = &args.cache_dir {
        options = options.with_cache_dir(dir);
    }
    if let Some(d) = duration("--refresh-interval", &args.refresh_interval)? {
        options = options.with_refresh_interval(d);
    }
    if let Some(d) = duration("--query-timeout", &args.query_timeout)? {
        options = options.with_query_timeout(d);
    }
    if let Some(text) = &args.memory_limit {
        let bytes = parse_bytes(text).map_err(|reason| CliError::InvalidArgument {
            argument: "--memory-limit",
            reason,
        })?;
        options = options.with_memory_limit(bytes);
    }
    if let Some(n) = args.max_concurrent_queries {
        options = options.with_max_concurrent_queries(n as usize);
    }
    if let Some(n) = args.max_queued_queries {
        options = options.with_max_queued_queries(n as usize);
    }
    if let Some(path) = &args.token_file {
        let token = Token::from_file(path).map_err(|e| serve_error(e.to_string()))?;
        options = options.with_token(token);
    }
    if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
        let tls = ServerTls::from_pem_files(cert, key).map_err(|e| serve_error(e.to_string()))?;
        options = options.with_tls(tls);
    }
    Ok(options)
}

async fn bind(what: &str, address: &str) -> Result<tokio::net::TcpListener, CliError> {
    let addresses: Vec<SocketAddr> = tokio::net::lookup_host(address)
        .await
        .map_err(|e| serve_error(format!("{what} address '{address}': {e}")))?
        .collect();
    tokio::net::TcpListener::bind(addresses.as_slice())
        .await
        .map_err(|e| serve_error(format!("cannot listen on {address} ({what}): {e}")))
}

/// Completes on Ctrl-C or SIGTERM. The handlers are in place when this
/// returns, not when the future is first polled: a signal sent as soon as
/// `dar serve` says it listens must find them (it killed the process).
fn stop_signal() -> impl Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let term = signal(SignalKind::terminate());
        let interrupt = signal(SignalKind::interrupt());
        async move {
            match (term, interrupt) {
                (Ok(mut term), Ok(mut interrupt)) => {
                    tokio::select! {
                        _ = interrupt.recv() => {}
                        _ = term.recv() => {}
                    }
                }
                _ => super::scan::interrupted().await,
            }
        }
    }
    #[cfg(not(unix))]
    super::scan::interrupted()
}

/// Runs `dar serve`.
pub async fn run(args: &ServeArgs, streams: &mut Streams<'_>) -> Result<(), CliError> {
    let options = options(args)?;
    let has_token = options.has_token();
    let has_tls = options.has_tls();
    let drain = duration("--drain-timeout", &args.drain_timeout)?;
    let mut server = Server::open(options)
        .await
        .map_err(|e| serve_error(dar_scan::one_line(&e)))?;
    if let Some(d) = drain {
        server = server.with_drain_timeout(d);
    }
    for table in server.tables() {
        crate::commands::out!(
            "text",
            streams.stdout,
            "table {} at version {} (opened in {:.1} ms)",
            table.name,
            table.version,
            table.open_time.as_secs_f64() * 1000.0
        )?;
    }
    let listener = bind("Flight SQL", &args.listen).await?;
    let address = listener
        .local_addr()
        .map_err(|e| serve_error(e.to_string()))?;
    if beyond_loopback(address) && !has_token {
        let _ = writeln!(
            streams.stderr,
            "dar serve: warning: serving {address} beyond loopback without a token: anyone who \
             reaches this port can read the tables (give --token-file)"
        );
    } else if beyond_loopback(address) && !has_tls {
        let _ = writeln!(
            streams.stderr,
            "dar serve: warning: serving {address} beyond loopback without TLS: the token and \
             the rows cross the network in clear (give --tls-cert and --tls-key)"
        );
    }
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let admin = match &args.admin_listen {
        Some(admin_address) => {
            let admin_listener = bind("admin", admin_address).await?;
            let bound = admin_listener
                .local_addr()
                .map_err(|e| serve_error(e.to_string()))?;
            crate::commands::out!("text", streams.stdout, "admin on {bound}")?;
            let admin_server = server.clone();
            let mut admin_stopped = stopped.clone();
            Some(tokio::spawn(async move {
                admin_server
                    .serve_admin(admin_listener, async move {
                        let _ = admin_stopped.wait_for(|s| *s).await;
                    })
                    .await
            }))
        }
        None => None,
    };
    let stopping = stop_signal();
    crate::commands::out!("text", streams.stdout, "listening on {address}")?;
    streams
        .stdout
        .flush()
        .map_err(|e| CliError::write("text", e))?;
    let mut flight_stopped = stopped;
    tokio::spawn(async move {
        stopping.await;
        let _ = stop.send(true);
    });
    let served = server
        .serve(listener, async move {
            let _ = flight_stopped.wait_for(|s| *s).await;
        })
        .await;
    if let Some(admin) = admin {
        admin.abort();
    }
    served.map_err(|e| serve_error(dar_scan::one_line(&e)))
}
