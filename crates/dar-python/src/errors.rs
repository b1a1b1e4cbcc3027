//! The `dar.DarError` exception hierarchy, and how a Rust error becomes one.
//!
//! The class is the error's [`ErrorKind`] (dar-scan's
//! [`ScanError::kind`]), one class per kind; the message is dar-scan's
//! one-line rendering ([`dar_scan::one_line`], and
//! [`dar_scan::build_error_message`] for a scan that cannot be planned),
//! which names options as the library does (`timestamp`, `predicate`),
//! never as the `dar` command's flags:
//!
//! ```text
//! DarError
//! ├── NotFoundError             no Delta log, version or timestamp outside the history
//! ├── ProtocolUnsupportedError  a reader version, feature, format or type dar cannot read
//! ├── InvalidPredicateError     the filter does not parse or does not fit the schema
//! ├── InvalidArgumentError      a bad argument: unknown column, timestamp, limit, URI, ...
//! ├── StorageError              the object store failed (network, credentials, missing object)
//! ├── CorruptDataError          the log, a checkpoint, a data file or a DV is broken
//! │   └── SchemaViolationError  a data file breaks the declared schema (nulls in a non-null column)
//! ├── PathRefusedError          a data or DV file outside the root (confine_paths) or on another store
//! └── InternalError             dar itself failed (a decoder task stopped): a bug to report
//! ```

use dar_scan::{ErrorKind, ScanError, Table, TableOptionError};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

pyo3::create_exception!(
    dar,
    DarError,
    PyException,
    "Base class of every error dar raises; the message is dar's one-line message."
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
pyo3::create_exception!(
    dar,
    SchemaViolationError,
    CorruptDataError,
    "A data file breaks the schema the table declares: nulls in, or no values for, a column declared not null, or a column of another type."
);
pyo3::create_exception!(
    dar,
    PathRefusedError,
    DarError,
    "The log names a data or deletion-vector file dar may not read: outside the table root while paths are confined to it, or on another store."
);
pyo3::create_exception!(
    dar,
    InternalError,
    DarError,
    "dar itself failed (a decoder task stopped, an Arrow kernel failed): no input explains it; please report it."
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
    m.add(
        "SchemaViolationError",
        py.get_type::<SchemaViolationError>(),
    )?;
    m.add("PathRefusedError", py.get_type::<PathRefusedError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    Ok(())
}

/// The exception of `kind` with `message`.
pub fn exception(kind: ErrorKind, message: String) -> PyErr {
    match kind {
        ErrorKind::NotFound => NotFoundError::new_err(message),
        ErrorKind::ProtocolUnsupported => ProtocolUnsupportedError::new_err(message),
        ErrorKind::InvalidPredicate => InvalidPredicateError::new_err(message),
        ErrorKind::InvalidArgument => InvalidArgumentError::new_err(message),
        ErrorKind::Storage => StorageError::new_err(message),
        ErrorKind::CorruptData => CorruptDataError::new_err(message),
        ErrorKind::SchemaViolation => SchemaViolationError::new_err(message),
        ErrorKind::PathRefused => PathRefusedError::new_err(message),
        ErrorKind::Internal => InternalError::new_err(message),
        // A kind added to dar-scan after this module: still a DarError.
        _ => DarError::new_err(message),
    }
}

/// The Python exception for a scan error, with its one-line message.
pub fn scan_to_py(error: ScanError) -> PyErr {
    exception(error.kind(), dar_scan::one_line(&error))
}

/// The Python exception for a scan of `table` that cannot be planned, with
/// the filter text `filter`: dar-scan's message naming the nearest columns
/// or pointing into the filter.
pub fn build_to_py(table: &Table, filter: Option<&str>, error: ScanError) -> PyErr {
    exception(
        error.kind(),
        dar_scan::build_error_message(table, filter, &error),
    )
}

/// The Python exception for a table option that does not parse.
pub fn option_to_py(error: TableOptionError) -> PyErr {
    scan_to_py(ScanError::from(error))
}

/// An [`InvalidArgumentError`] for an argument of a type or value that
/// only Python can get wrong (`message` names the argument as Python
/// does).
pub fn invalid_argument(message: String) -> PyErr {
    exception(ErrorKind::InvalidArgument, message)
}
