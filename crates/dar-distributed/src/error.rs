//! The crate's one error type (for setting up and serving workers; query
//! errors are DataFusion's). No variant carries a token, a key or the
//! contents of a file.

use std::net::SocketAddr;
use std::path::PathBuf;

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
    /// A worker listening beyond loopback was given no token: anyone who
    /// reaches its port could run plans with its credentials.
    #[error(
        "worker {address} listens beyond loopback and has no token: \
         every caller would run plans with its credentials"
    )]
    TokenRequired {
        /// The address it would listen on.
        address: SocketAddr,
    },
    /// A token that cannot be used (empty, too short, or with characters
    /// a request header cannot carry). The token itself is never shown.
    #[error("the worker token from {origin} {reason}")]
    Token {
        /// Where it came from: a file, or the environment variable.
        origin: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A file (token, certificate, key, CA) could not be read.
    #[error("cannot read the {what} file '{}': {source}", path.display())]
    ReadFile {
        /// What the file should hold.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A PEM file (certificate, key, CA) that holds none of what it should.
    #[error("the {what} file '{}' {reason}", path.display())]
    Pem {
        /// What the file should hold.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The worker's TLS configuration was refused (a certificate that does
    /// not match its key, for example).
    #[error("worker {address}: TLS setup failed: {source}")]
    Tls {
        /// The worker's address.
        address: SocketAddr,
        /// The transport error.
        #[source]
        source: tonic::transport::Error,
    },
}
