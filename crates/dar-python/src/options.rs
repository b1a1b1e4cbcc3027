//! Python arguments to `dar-scan` options: which version, which storage
//! settings, how to scan. Parsing follows the `dar` command line (and its
//! error messages).

use std::collections::HashMap;

use dar_io::StorageOptions;
use dar_scan::TableOptions;
use pyo3::prelude::*;
use pyo3::types::{PyDateTime, PyString};

use crate::errors::{invalid_argument, to_py};

/// `timestamp=`: milliseconds since the epoch (an `int`), RFC 3339 text or
/// digits (a `str`, as `dar --timestamp`), or a `datetime.datetime` (naive
/// ones are local time, as `datetime.timestamp()` has it).
pub fn timestamp_ms(value: &Bound<'_, PyAny>) -> PyResult<i64> {
    if value.is_instance_of::<PyString>() {
        let text: String = value.extract()?;
        return dar_cli::table::parse_timestamp_ms(&text).map_err(to_py);
    }
    if value.is_instance_of::<PyDateTime>() {
        let seconds: f64 = value.call_method0("timestamp")?.extract()?;
        return Ok((seconds * 1000.0).round() as i64);
    }
    value.extract::<i64>().map_err(|_| {
        invalid_argument(
            "--timestamp",
            "expected milliseconds since the epoch (int), RFC 3339 text (str) or a datetime",
        )
    })
}

/// `storage_options=`: keys and values as strings, as
/// `dar --storage-option KEY=VALUE` (keys are case-insensitive; the usual
/// `AWS_*` environment variables are read too, options given here win).
pub fn storage_options(options: Option<HashMap<String, String>>) -> StorageOptions {
    let mut storage = StorageOptions::new();
    for (key, value) in options.unwrap_or_default() {
        storage.insert(key.trim(), value);
    }
    storage
}

/// The table options of `dar.Table(...)`.
pub fn table_options(
    version: Option<i64>,
    timestamp: Option<&Bound<'_, PyAny>>,
    storage: Option<HashMap<String, String>>,
) -> PyResult<TableOptions> {
    let mut options = TableOptions::new().with_storage_options(storage_options(storage));
    match (version, timestamp) {
        (Some(_), Some(_)) => {
            return Err(invalid_argument(
                "--version",
                "version and timestamp cannot be given together",
            ));
        }
        (Some(v), None) => {
            let v = u64::try_from(v)
                .map_err(|_| invalid_argument("--version", format!("{v} is negative")))?;
            options = options.with_version(v);
        }
        (None, Some(t)) => options = options.with_timestamp_ms(timestamp_ms(t)?),
        (None, None) => {}
    }
    Ok(options)
}

/// `limit=` and `batch_size=`: non-negative integers.
pub fn count_argument(argument: &'static str, value: Option<i64>) -> PyResult<Option<usize>> {
    match value {
        None => Ok(None),
        Some(v) => usize::try_from(v)
            .map(Some)
            .map_err(|_| invalid_argument(argument, format!("{v} is negative"))),
    }
}
