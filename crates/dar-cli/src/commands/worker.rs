//! `dar worker`: a datafusion-distributed worker with dar's scan codec, on
//! a TCP address, until Ctrl-C.

use dar_distributed::serve;

use super::Streams;
use super::scan::interrupted;
use crate::cli::WorkerArgs;
use crate::error::CliError;
use crate::table::parse_storage_options;

/// Runs `dar worker`: prints `listening on HOST:PORT` once it accepts
/// connections, then serves until Ctrl-C.
pub async fn run(args: &WorkerArgs, streams: &mut Streams<'_>) -> Result<(), CliError> {
    let storage = parse_storage_options(&args.storage_options)?;
    let failed = |source: Box<dyn std::error::Error + Send + Sync>| CliError::Worker {
        address: args.listen.clone(),
        source,
    };
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .map_err(|e| failed(Box::new(e)))?;
    let address = listener.local_addr().map_err(|e| failed(Box::new(e)))?;
    writeln!(streams.stdout, "listening on {address}")
        .and_then(|()| streams.stdout.flush())
        .map_err(|e| CliError::write("text", e))?;
    serve(listener, storage, interrupted())
        .await
        .map_err(|e| failed(Box::new(e)))
}
