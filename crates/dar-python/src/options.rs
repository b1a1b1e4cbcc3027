//! Python arguments to `dar-scan` options: which version, which storage
//! settings, how to scan. Versions and timestamps parse with dar-scan's
//! parser ([`dar_scan::parse_version`], [`dar_scan::parse_timestamp_ms`]),
//! as the `dar` command line and SQL parse theirs, and fail with its
//! messages; integers of any size are refused as out of range, never with
//! an `OverflowError`.

use std::collections::HashMap;

use dar_io::StorageOptions;
use dar_scan::{ScanError, TableOptionError, TableOptions};
use pyo3::prelude::*;
use pyo3::types::{PyDateTime, PyInt, PyString};

use crate::errors::{invalid_argument, option_to_py, scan_to_py};

/// `timestamp=`: milliseconds since the epoch (an `int`), RFC 3339 text or
/// digits (a `str`), or a `datetime.datetime` (naive ones are local time,
/// as `datetime.timestamp()` has it).
pub fn timestamp_ms(value: &Bound<'_, PyAny>) -> PyResult<i64> {
    if value.is_instance_of::<PyDateTime>() {
        let seconds: f64 = value.call_method0("timestamp")?.extract()?;
        return Ok((seconds * 1000.0).round() as i64);
    }
    if value.is_instance_of::<PyInt>()
        && let Ok(ms) = value.extract::<i64>()
    {
        return Ok(ms);
    }
    if value.is_instance_of::<PyString>() || value.is_instance_of::<PyInt>() {
        // An int beyond 64 bits as its digits: dar-scan's parser says what
        // is wrong, and Python raises no OverflowError.
        let text = value.str()?.to_string();
        return dar_scan::parse_timestamp_ms(&text).map_err(option_to_py);
    }
    Err(invalid_argument(format!(
        "invalid timestamp: expected milliseconds since the epoch (int), RFC 3339 text (str) \
         or a datetime.datetime, not {}",
        value.get_type().name()?
    )))
}

/// A bound of `Table.changes`: a version (`int`) or a time (as
/// `timestamp=`, but not an `int`).
pub fn change_bound(value: &Bound<'_, PyAny>) -> PyResult<dar_scan::ChangeBound> {
    if let Ok(v) = value.cast::<PyInt>() {
        return Ok(dar_scan::ChangeBound::Version(version(v)?));
    }
    Ok(dar_scan::ChangeBound::TimestampMs(timestamp_ms(value)?))
}

/// `version=`: a non-negative `int`.
pub fn version(value: &Bound<'_, PyInt>) -> PyResult<u64> {
    if let Ok(v) = value.extract::<u64>() {
        return Ok(v);
    }
    // Negative or beyond 64 bits: dar-scan's parser words the error.
    let text = value.str()?.to_string();
    dar_scan::parse_version(&text).map_err(option_to_py)
}

/// `storage_options=`: keys and values as strings (keys are
/// case-insensitive; the usual `AWS_*` environment variables are read too,
/// options given here win).
pub fn storage_options(options: Option<HashMap<String, String>>) -> StorageOptions {
    options
        .unwrap_or_default()
        .into_iter()
        .map(|(key, value)| (key.trim().to_string(), value))
        .collect()
}

/// The table options of `dar.Table(...)`.
pub fn table_options(
    version: Option<&Bound<'_, PyInt>>,
    timestamp: Option<&Bound<'_, PyAny>>,
    storage: Option<HashMap<String, String>>,
    confine_paths: bool,
) -> PyResult<TableOptions> {
    let mut options = TableOptions::new()
        .with_storage_options(storage_options(storage))
        .with_paths_confined_to_root(confine_paths);
    match (version, timestamp) {
        (Some(_), Some(_)) => return Err(option_to_py(TableOptionError::VersionAndTimestamp)),
        (Some(v), None) => options = options.with_version(self::version(v)?),
        (None, Some(t)) => options = options.with_timestamp_ms(timestamp_ms(t)?),
        (None, None) => {}
    }
    Ok(options)
}

/// `limit=` and `batch_size=`: integers from 0 to `2**63 - 1`, refused as
/// dar-scan refuses scan options out of range
/// ([`ScanError::InvalidOption`], named `option`).
pub fn count_argument(
    option: &'static str,
    value: Option<&Bound<'_, PyInt>>,
) -> PyResult<Option<usize>> {
    let Some(value) = value else {
        return Ok(None);
    };
    let invalid = |reason: String| scan_to_py(ScanError::InvalidOption { option, reason });
    if let Ok(n) = value.extract::<i64>() {
        if n < 0 {
            return Err(invalid(format!("{n} is negative")));
        }
        if let Ok(n) = usize::try_from(n) {
            return Ok(Some(n));
        }
    }
    let text = value.str()?.to_string();
    if text.starts_with('-') {
        return Err(invalid(format!("{text} is negative")));
    }
    let max = i64::try_from(usize::MAX).unwrap_or(i64::MAX);
    Err(invalid(format!("{text} is out of range (at most {max})")))
}
