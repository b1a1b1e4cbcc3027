//! The crate's one error type (for serving workers; query errors are
//! DataFusion's).

use std::net::SocketAddr;

/// Errors from `dar-distributed`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The listener's address could not be read.
    #[error("cannot read the worker's listening address: {0}")]
    Listener(#[source] std::io::Error),
    /// The gRPC server failed.
    #[error("worker {address} failed: {source}")]
    Serve {
        /// The worker's address.
        address: SocketAddr,
        /// The transport error.
        #[source]
        source: tonic::transport::Error,
    },
    /// The worker's background task panicked or was cancelled.
    #[error("worker task failed: {0}")]
    Task(String),
}
