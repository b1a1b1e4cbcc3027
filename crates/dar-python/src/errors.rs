//! The `dar.DarError` exception hierarchy, and how a Rust error becomes one.
//!
//! Messages are the CLI's: [`dar_cli::one_line`] over the same
//! [`CliError`] the `dar` command would print (after its `dar: error: `
//! prefix). The class says what kind of failure it is:
//!
//! ```text
//! DarError
//! ├── NotFoundError             no Delta log, version or timestamp outside the history
//! ├── ProtocolUnsupportedError  a reader version, feature, format or type dar cannot read
//! ├── InvalidPredicateError     the filter does not parse or does not fit the schema
//! ├── InvalidArgumentError      a bad option: unknown column, timestamp, limit, URI, ...
//! ├── StorageError              the object store failed (network, credentials, missing object)
//! └── CorruptDataError          the log, a checkpoint, a data file or a DV is broken
//! ```

use dar_cli::CliError;
use dar_log::LogError;
use dar_scan::ScanError;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

pyo3::create_exception!(
    dar,
    DarError,
    PyException,
    "Base class of every error dar raises; the message is the `dar` command's one-line message."
);
pyo3::create_exception!(
    dar,
    NotFoundError,
    DarError,
    "The table has no Delta log, or the version or timestamp is outside its history."
);
pyo3::create_exception!(
    dar,
    ProtocolUnsupportedError,
    DarError,
    "The table needs a reader version, feature, format or type that dar cannot read."
);
pyo3::create_exception!(
    dar,
    InvalidPredicateError,
    DarError,
    "The filter does not parse or does not fit the table schema."
);
pyo3::create_exception!(
    dar,
    InvalidArgumentError,
    DarError,
    "An argument is out of range or names nothing in the table (a column, a URI scheme, a storage option)."
);
pyo3::create_exception!(
    dar,
    StorageError,
    DarError,
    "The object store failed: a request, the credentials, or an object that is not there."
);
pyo3::create_exception!(
    dar,
    CorruptDataError,
    DarError,
    "The Delta log, a checkpoint, a data file or a deletion vector is malformed or inconsistent."
);

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("DarError", py.get_type::<DarError>())?;
    m.add("NotFoundError", py.get_type::<NotFoundError>())?;
    m.add(
        "ProtocolUnsupportedError",
        py.get_type::<ProtocolUnsupportedError>(),
    )?;
    m.add(
        "InvalidPredicateError",
        py.get_type::<InvalidPredicateError>(),
    )?;
    m.add(
        "InvalidArgumentError",
        py.get_type::<InvalidArgumentError>(),
    )?;
    m.add("StorageError", py.get_type::<StorageError>())?;
    m.add("CorruptDataError", py.get_type::<CorruptDataError>())?;
    Ok(())
}

/// The kinds of failure, one per exception class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Other,
    NotFound,
    Protocol,
    Predicate,
    Argument,
    Storage,
    Corrupt,
}

/// The Python exception for `error`, with the CLI's one-line message.
pub fn to_py(error: CliError) -> PyErr {
    let message = dar_cli::one_line(&error);
    match kind(&error) {
        Kind::Other => DarError::new_err(message),
        Kind::NotFound => NotFoundError::new_err(message),
        Kind::Protocol => ProtocolUnsupportedError::new_err(message),
        Kind::Predicate => InvalidPredicateError::new_err(message),
        Kind::Argument => InvalidArgumentError::new_err(message),
        Kind::Storage => StorageError::new_err(message),
        Kind::Corrupt => CorruptDataError::new_err(message),
    }
}

/// The Python exception for a scan error.
pub fn scan_to_py(error: ScanError) -> PyErr {
    to_py(CliError::Scan(error))
}

/// An [`InvalidArgumentError`] for `argument` (named as on the `dar`
/// command line, like the CLI's messages).
pub fn invalid_argument(argument: &'static str, reason: impl Into<String>) -> PyErr {
    to_py(CliError::InvalidArgument {
        argument,
        reason: reason.into(),
    })
}

fn kind(error: &CliError) -> Kind {
    match error {
        CliError::Filter { .. } => Kind::Predicate,
        CliError::Usage { .. }
        | CliError::InvalidArgument { .. }
        | CliError::UnknownColumn { .. } => Kind::Argument,
        CliError::Scan(e) => scan_kind(e),
        CliError::FileIndex { source, .. } | CliError::CommitTimestamp { source, .. } => {
            log_kind(source)
        }
        _ => Kind::Other,
    }
}

fn scan_kind(error: &ScanError) -> Kind {
    match error {
        ScanError::Open { source, .. } => io_kind(source),
        ScanError::Log { source, .. } => log_kind(source),
        ScanError::UnknownColumn { .. } | ScanError::InvalidOption { .. } => Kind::Argument,
        ScanError::Predicate { .. } => Kind::Predicate,
        ScanError::Io { source, .. } => io_kind(source),
        ScanError::Parquet { .. }
        | ScanError::DeletionVector { .. }
        | ScanError::SchemaMismatch { .. }
        | ScanError::RowCountMismatch { .. }
        | ScanError::InvalidTask { .. } => Kind::Corrupt,
        _ => Kind::Other,
    }
}

fn io_kind(error: &dar_io::Error) -> Kind {
    match error {
        dar_io::Error::InvalidUri { .. }
        | dar_io::Error::UnsupportedScheme { .. }
        | dar_io::Error::FeatureDisabled { .. }
        | dar_io::Error::UnknownOption { .. }
        | dar_io::Error::InvalidOption { .. } => Kind::Argument,
        // Parquet failed: reading its bytes (a store error inside), or on
        // bytes that are not a Parquet file (bad footer, ...).
        dar_io::Error::Parquet { .. } if !store_failed_below(error) => Kind::Corrupt,
        _ => Kind::Storage,
    }
}

/// Whether a `dar-io` request error (not a Parquet one) is among the causes
/// of `error`.
fn store_failed_below(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = error.source();
    while let Some(e) = cause {
        if let Some(io) = e.downcast_ref::<dar_io::Error>()
            && !matches!(io, dar_io::Error::Parquet { .. })
        {
            return true;
        }
        cause = e.source();
    }
    false
}

fn log_kind(error: &LogError) -> Kind {
    match error {
        LogError::NoLog { .. }
        | LogError::VersionNotFound { .. }
        | LogError::TimestampOutOfRange { .. } => Kind::NotFound,
        LogError::UnsupportedReaderVersion { .. }
        | LogError::UnsupportedFeature { .. }
        | LogError::UnsupportedFormat { .. }
        | LogError::UnknownType { .. } => Kind::Protocol,
        LogError::Store { .. } => Kind::Storage,
        LogError::Arrow { .. } => Kind::Other,
        _ => Kind::Corrupt,
    }
}
