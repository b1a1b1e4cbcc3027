//! Partition values (§7): the log's text form of each type, Hive-style
//! directory names, and the URI encoding of `add.path` (§2.9).
//!
//! A value goes through three spellings:
//!
//! ```text
//! value          US/East                       (in the batch)
//! log text       "US/East"                     add.partitionValues (§7 serialization)
//! directory      region=US%2FEast              Hive escaping; the object's real name
//! add.path       region=US%252FEast/part-...   the directory URI-encoded once more
//! ```

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, TimestampMicrosecondType,
};
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, TimeUnit};

use crate::error::{Result, TestkitError};

/// Spark's directory name for a null partition value.
pub const HIVE_DEFAULT_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// Whether a column of this type can be a partition column.
pub(crate) fn is_partition_type(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Boolean
            | DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::Float32
            | DataType::Float64
            | DataType::Decimal128(..)
            | DataType::Utf8
            | DataType::Binary
            | DataType::Date32
            | DataType::Timestamp(TimeUnit::Microsecond, _)
    )
}

/// The §7 text of row `row` of a partition column; `None` for null.
pub(crate) fn value_text(column: &ArrayRef, row: usize, name: &str) -> Result<Option<String>> {
    if column.is_null(row) {
        return Ok(None);
    }
    let invalid = |reason: &str| TestkitError::InvalidPartitionColumn {
        column: name.to_owned(),
        reason: reason.to_owned(),
    };
    let text = match column.data_type() {
        DataType::Boolean => column.as_boolean().value(row).to_string(),
        DataType::Int8 => column.as_primitive::<Int8Type>().value(row).to_string(),
        DataType::Int16 => column.as_primitive::<Int16Type>().value(row).to_string(),
        DataType::Int32 => column.as_primitive::<Int32Type>().value(row).to_string(),
        DataType::Int64 => column.as_primitive::<Int64Type>().value(row).to_string(),
        DataType::Float32 => java_float(column.as_primitive::<Float32Type>().value(row)),
        DataType::Float64 => java_double(column.as_primitive::<Float64Type>().value(row)),
        DataType::Decimal128(_, scale) => {
            decimal_text(column.as_primitive::<Decimal128Type>().value(row), *scale)
        }
        DataType::Utf8 => {
            let value = column.as_string::<i32>().value(row);
            if value.is_empty() {
                // Spark turns "" into null; a reader could not tell them apart.
                return Err(invalid(
                    "an empty string partition value reads back as null; use null",
                ));
            }
            value.to_owned()
        }
        DataType::Binary => {
            let bytes = column.as_binary::<i32>().value(row);
            std::str::from_utf8(bytes)
                .map_err(|_| invalid("binary partition values must be UTF-8"))?
                .to_owned()
        }
        DataType::Date32 => date_text(column.as_primitive::<Date32Type>().value(row))
            .ok_or_else(|| invalid("date out of range"))?,
        DataType::Timestamp(TimeUnit::Microsecond, zone) => {
            let micros = column.as_primitive::<TimestampMicrosecondType>().value(row);
            timestamp_text(micros, zone.is_some())
                .ok_or_else(|| invalid("timestamp out of range"))?
        }
        _ => return Err(invalid("type cannot be a partition column")),
    };
    Ok(Some(text))
}

/// Plain decimal text with the scale kept: `12345`, scale 2 -> `123.45`.
pub(crate) fn decimal_text(unscaled: i128, scale: i8) -> String {
    if scale <= 0 {
        return unscaled.to_string();
    }
    let scale = scale as usize;
    let digits = unscaled.unsigned_abs().to_string();
    let digits = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = digits.split_at(digits.len() - scale);
    let sign = if unscaled < 0 { "-" } else { "" };
    format!("{sign}{int}.{frac}")
}

/// `YYYY-MM-DD` for days since the epoch.
pub(crate) fn date_text(days: i32) -> Option<String> {
    let date = chrono::NaiveDate::from_num_days_from_ce_opt(days.checked_add(719_163)?)?;
    Some(date.format("%Y-%m-%d").to_string())
}

/// Timestamps as current Spark writes them: ISO-8601 UTC with µs
/// (`1970-01-01T00:00:00.123456Z`); `timestamp_ntz` as
/// `YYYY-MM-DD HH:MM:SS.ffffff`.
pub(crate) fn timestamp_text(micros: i64, utc: bool) -> Option<String> {
    let time = chrono::DateTime::from_timestamp_micros(micros)?.naive_utc();
    let format = if utc {
        "%Y-%m-%dT%H:%M:%S%.6fZ"
    } else {
        "%Y-%m-%d %H:%M:%S%.6f"
    };
    Some(time.format(format).to_string())
}

/// Java's `Double.toString`: `1.5`, `1.0E10`, `1.0E-5`, `NaN`, `-Infinity`.
pub(crate) fn java_double(value: f64) -> String {
    java_style(
        value.is_nan(),
        value.is_infinite(),
        value < 0.0,
        value.abs(),
        || format!("{value:?}"),
        || format!("{value:e}"),
    )
}

/// Java's `Float.toString`, with the shortest `f32` digits.
pub(crate) fn java_float(value: f32) -> String {
    java_style(
        value.is_nan(),
        value.is_infinite(),
        value < 0.0,
        f64::from(value.abs()),
        || format!("{value:?}"),
        || format!("{value:e}"),
    )
}

fn java_style(
    nan: bool,
    infinite: bool,
    negative: bool,
    magnitude: f64,
    plain: impl Fn() -> String,
    scientific: impl Fn() -> String,
) -> String {
    if nan {
        return "NaN".into();
    }
    if infinite {
        return if negative { "-Infinity" } else { "Infinity" }.into();
    }
    if magnitude == 0.0 || (1e-3..1e7).contains(&magnitude) {
        // Debug keeps a `.0` on integral values and never uses exponents here.
        return plain();
    }
    // `1e10` -> `1.0E10`, `1.25e-5` -> `1.25E-5`.
    let text = scientific();
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    if mantissa.contains('.') {
        format!("{mantissa}E{exponent}")
    } else {
        format!("{mantissa}.0E{exponent}")
    }
}

/// One Hive directory segment: `name=escaped(value)`, or
/// `name=__HIVE_DEFAULT_PARTITION__` for null.
pub(crate) fn directory_segment(name: &str, value: Option<&str>) -> String {
    let value = value.map_or_else(|| HIVE_DEFAULT_PARTITION.to_owned(), hive_escape);
    format!("{}={value}", hive_escape(name))
}

/// Hive's `escapePathName`: control characters and `"#%'*/:=?\{[]^` and
/// DEL become `%XX` (uppercase hex).
pub(crate) fn hive_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let escape = matches!(
            c,
            '\u{01}'
                ..='\u{1F}'
                    | '"'
                    | '#'
                    | '%'
                    | '\''
                    | '*'
                    | '/'
                    | ':'
                    | '='
                    | '?'
                    | '\\'
                    | '\u{7F}'
                    | '{'
                    | '['
                    | ']'
                    | '^'
        );
        if escape {
            out.push_str(&format!("%{:02X}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Percent-encodes one path segment for `add.path` (§2.9): everything but
/// RFC 3986 unreserved characters and the sub-delimiters a path may carry
/// unescaped; non-ASCII as UTF-8 octets.
pub(crate) fn uri_encode_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        let keep = byte.is_ascii_alphanumeric()
            || matches!(
                byte,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b'@'
            );
        if keep {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests;
