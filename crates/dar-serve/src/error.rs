//! The errors of starting a server; errors of one query are gRPC statuses
//! (see `status`).

use std::error::Error as StdError;

/// Why a server could not start or serve. No variant carries a credential.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The configuration is wrong (a TOML key, two tables of one name).
    #[error("configuration: {0}")]
    Config(String),

    /// A table could not be opened at start.
    #[error("table '{name}': {source}")]
    Open {
        /// The table's name.
        name: String,
        /// dar's error (credentials redacted).
        #[source]
        source: dar_scan::ScanError,
    },

    /// The gRPC or admin server failed (bind, TLS, transport).
    #[error("{what}: {source}")]
    Serve {
        /// Which server.
        what: &'static str,
        /// The cause.
        #[source]
        source: Box<dyn StdError + Send + Sync>,
    },
}
