//! The crate's one error type.
//!
//! Every variant names what it is about (a URI, an object path, an option key)
//! and keeps its source. URIs are always stored in redacted form (see
//! [`crate::redact_uri`]) and option values never appear, so formatting an
//! error cannot leak credentials.

use std::ops::Range;

/// Errors from `dar-io`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The table URI could not be parsed.
    #[error("invalid table URI '{uri}': {reason}")]
    InvalidUri {
        /// The URI, redacted.
        uri: String,
        /// What is wrong with it.
        reason: String,
    },

    /// The URI scheme is not one `dar-io` knows.
    #[error(
        "unsupported URI scheme '{scheme}' in '{uri}' (expected a path, file://, s3://, memory://, az://, abfss://, gs://)"
    )]
    UnsupportedScheme {
        /// The URI, redacted.
        uri: String,
        /// The scheme found.
        scheme: String,
    },

    /// The scheme is known but its cargo feature is not enabled.
    #[error("URI '{uri}' needs the `{feature}` cargo feature of dar-io")]
    FeatureDisabled {
        /// The URI, redacted.
        uri: String,
        /// The feature that would enable it.
        feature: &'static str,
    },

    /// A storage option key is unknown to the backend.
    #[error("unknown storage option '{key}' for {backend}")]
    UnknownOption {
        /// The option key (never the value).
        key: String,
        /// The backend that rejected it.
        backend: &'static str,
    },

    /// An option value could not be interpreted.
    #[error("invalid value for storage option '{key}': {reason}")]
    InvalidOption {
        /// The option key (never the value).
        key: String,
        /// Why it is invalid.
        reason: String,
    },

    /// The object store client could not be built (for example a storage
    /// option value does not parse). The reason is object_store's message
    /// with every quoted value replaced by `<redacted>`: no storage option
    /// value is ever echoed, secret or not.
    #[error("cannot build object store for '{uri}': {reason}")]
    BuildStore {
        /// The URI, redacted.
        uri: String,
        /// What failed, without option values.
        reason: String,
    },

    /// The byte-range cache's directory cannot be created or read.
    #[error("cache directory '{path}': {source}")]
    CacheDir {
        /// The directory.
        path: String,
        /// The file-system error.
        #[source]
        source: std::io::Error,
    },

    /// The byte-range cache's directory is not safe to use (owned by
    /// another user, writable by others, inside a table, or holding a
    /// cache folder dar did not create).
    #[error("refusing cache directory '{path}': {reason}")]
    CacheDirRefused {
        /// The directory.
        path: String,
        /// Why it is refused.
        reason: String,
    },

    /// A store operation on one object failed.
    #[error("object store request for '{path}' failed: {source}")]
    Store {
        /// The object path.
        path: String,
        /// The object_store error.
        #[source]
        source: object_store::Error,
    },

    /// A response body was shorter or longer than the range asked for.
    #[error("truncated body for '{path}' range {range:?}: expected {expected} bytes, got {actual}")]
    Truncated {
        /// The object path.
        path: String,
        /// The byte range requested.
        range: Range<u64>,
        /// Bytes expected.
        expected: u64,
        /// Bytes received.
        actual: u64,
    },

    /// The object is not the size its caller (a Delta log's `add.size`)
    /// said, so its footer is not where it was looked for.
    #[error(
        "'{path}' is {actual} bytes, but its size was given as {expected} bytes (the table log and the file disagree)"
    )]
    SizeMismatch {
        /// The object path.
        path: String,
        /// The size the caller gave.
        expected: u64,
        /// The object's size in the store.
        actual: u64,
    },

    /// A byte range is malformed (start after end) or outside the object.
    #[error("invalid byte range {range:?} for '{path}' (object size {size:?})")]
    InvalidRange {
        /// The object path (empty when not known, e.g. in the pure planner).
        path: String,
        /// The range.
        range: Range<u64>,
        /// The object size if known.
        size: Option<u64>,
    },

    /// The Parquet footer or page index could not be decoded.
    #[error("cannot read Parquet metadata of '{path}': {source}")]
    Parquet {
        /// The object path.
        path: String,
        /// The parquet error.
        #[source]
        source: parquet::errors::ParquetError,
    },
}

/// Result alias for `dar-io`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps this error into an `object_store::Error` (for [`object_store::ObjectStore`]
    /// implementations and callers that report store errors), keeping
    /// NotFound-like variants as they are.
    pub fn into_object_store(self) -> object_store::Error {
        match self {
            Error::Store { source, .. } => source,
            other => object_store::Error::Generic {
                store: "dar-io",
                source: Box::new(other),
            },
        }
    }

    /// Wraps this error into a `ParquetError` (for `AsyncFileReader`).
    pub(crate) fn into_parquet(self) -> parquet::errors::ParquetError {
        parquet::errors::ParquetError::External(Box::new(self))
    }
}

impl Error {
    /// What went wrong, without the object path, for callers whose own
    /// message already names the object (so a path is printed once).
    pub fn reason(&self) -> String {
        match self {
            Self::Store { source, .. } => match source {
                object_store::Error::NotFound { source, .. } => format!("not found ({source})"),
                other => other.to_string(),
            },
            Self::Truncated {
                range,
                expected,
                actual,
                ..
            } => format!(
                "truncated body for range {range:?}: expected {expected} bytes, got {actual}"
            ),
            Self::SizeMismatch {
                expected, actual, ..
            } => format!(
                "the file is {actual} bytes, but its size was given as {expected} bytes (the table log and the file disagree)"
            ),
            Self::InvalidRange { range, size, .. } => {
                format!("invalid byte range {range:?} (object size {size:?})")
            }
            Self::Parquet { source, .. } => match source {
                parquet::errors::ParquetError::External(e) => match e.downcast_ref::<Self>() {
                    Some(inner) => inner.reason(),
                    None => format!("cannot read Parquet metadata: {e}"),
                },
                other => format!("cannot read Parquet metadata: {other}"),
            },
            other => other.to_string(),
        }
    }
}
