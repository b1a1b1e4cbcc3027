//! `dar worker`: a datafusion-distributed worker with dar's scan codec, on
//! a TCP address, until Ctrl-C.
//!
//! Before it binds, the address is resolved and checked: beyond loopback
//! a worker needs a token (`--token-file` or `DAR_WORKER_TOKEN`), else it
//! refuses to start. Beyond loopback without TLS it says on standard
//! error that the token and the rows cross the network in clear.

use std::error::Error as StdError;
use std::net::SocketAddr;

use dar_distributed::{ServerTls, TlsCa, Token, WorkerOptions, needs_token, serve_with};

use super::Streams;
use super::scan::interrupted;
use crate::cli::WorkerArgs;
use crate::error::CliError;
use crate::table::parse_storage_options;

/// The worker's options from the command line and `DAR_WORKER_TOKEN`,
/// with `token` (read already).
fn options(
    args: &WorkerArgs,
    storage: dar_io::StorageOptions,
    token: Option<Token>,
) -> Result<WorkerOptions, Box<dyn StdError + Send + Sync>> {
    let mut options = WorkerOptions::new(storage)
        .with_max_message_bytes(args.max_message_mib as usize * 1024 * 1024);
    if let Some(token) = token {
        options = options.with_token(token);
    }
    if args.data_cache_mib.is_some() || args.cache.cache_dir.is_some() {
        let mib = args
            .data_cache_mib
            .unwrap_or((dar_scan::DEFAULT_DATA_CACHE_BYTES >> 20) as u64);
        let memory = usize::try_from(mib.saturating_mul(1 << 20)).unwrap_or(usize::MAX);
        let mut cache = dar_io::RangeCache::new(memory);
        if let Some(dir) = &args.cache.cache_dir {
            let bytes = args.cache.cache_dir_mib.map(|m| m.saturating_mul(1 << 20));
            cache = cache.with_disk(dir, bytes)?;
        }
        options = options.with_data_cache(cache);
    }
    if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
        options = options.with_tls(ServerTls::from_pem_files(cert, key)?);
    }
    if let Some(ca) = &args.tls_ca {
        options = options.with_tls_ca(TlsCa::from_pem_file(ca)?);
    }
    Ok(options)
}

/// Runs `dar worker`: prints `listening on HOST:PORT` once it accepts
/// connections, then serves until Ctrl-C.
pub async fn run(args: &WorkerArgs, streams: &mut Streams<'_>) -> Result<(), CliError> {
    let failed = |source: Box<dyn StdError + Send + Sync>| CliError::Worker {
        address: args.listen.clone(),
        source,
    };
    let storage = parse_storage_options(&args.storage_options)?;
    let token =
        Token::from_file_or_env(args.token_file.as_deref()).map_err(|e| failed(Box::new(e)))?;
    let has_token = token.is_some();
    let options = options(args, storage, token).map_err(failed)?;
    let addresses: Vec<SocketAddr> = tokio::net::lookup_host(&args.listen)
        .await
        .map_err(|e| failed(Box::new(e)))?
        .collect();
    let beyond = addresses.iter().any(|a| needs_token(*a));
    if beyond && !has_token {
        return Err(failed(
            "listening beyond loopback needs a token: give --token-file PATH or set \
             DAR_WORKER_TOKEN (the same for dar sql --workers), or listen on 127.0.0.1"
                .into(),
        ));
    }
    let listener = tokio::net::TcpListener::bind(addresses.as_slice())
        .await
        .map_err(|e| failed(Box::new(e)))?;
    let address = listener.local_addr().map_err(|e| failed(Box::new(e)))?;
    if beyond && args.tls_cert.is_none() {
        // Best effort: a closed standard error must not stop the worker.
        let _ = writeln!(
            streams.stderr,
            "dar worker: warning: serving {address} beyond loopback without TLS: the \
             token, the plans and the rows cross the network in clear \
             (give --tls-cert and --tls-key)"
        );
    }
    writeln!(streams.stdout, "listening on {address}")
        .and_then(|()| streams.stdout.flush())
        .map_err(|e| CliError::write("text", e))?;
    serve_with(listener, options, interrupted())
        .await
        .map_err(|e| failed(Box::new(e)))
}
