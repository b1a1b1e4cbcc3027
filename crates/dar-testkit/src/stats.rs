//! Per-file statistics (§8): `numRecords`, and `minValues`, `maxValues`,
//! `nullCount` per leaf, keyed by physical names, nested like the schema.
//!
//! Rules the kit follows, so readers can be tested against them:
//! * `nullCount` counts a leaf as null where it or any parent struct is null.
//! * min/max only for the kernel-rs eligible types (integers, floats,
//!   decimals, dates, timestamps, strings); booleans and binaries get only
//!   `nullCount`; arrays and maps get nothing.
//! * Floats with a NaN or infinite value get no min/max (JSON cannot carry
//!   them and a NaN bound would be meaningless).
//! * Timestamps are written as ISO strings truncated *down* to milliseconds.
//! * Strings are cut to [`STRING_PREFIX_CHARS`] characters; a cut max gets
//!   the tie-breaker U+10FFFF appended so that it stays an upper bound (§8.3).

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, TimestampMicrosecondType,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, TimeUnit};

use crate::json::Json;
use crate::partition::decimal_text;

/// Characters kept of a string min or max (`delta.dataSkippingStringPrefixLength`).
pub const STRING_PREFIX_CHARS: usize = 32;

/// The character appended to a truncated string max (§8.3).
pub const STRING_MAX_TIE_BREAKER: char = '\u{10FFFF}';

/// Statistics of one data file, rendered as the `add.stats` JSON string.
/// The per-column part is rendered once, when computed, and kept as text:
/// a writer of ten million log-only files holds about 150 bytes of stats
/// per file instead of a JSON tree of a few kilobytes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FileStats {
    pub(crate) num_records: u64,
    /// `"minValues":{..},"maxValues":{..},"nullCount":{..}`.
    columns: Box<str>,
}

impl FileStats {
    /// Stats of a batch with physical column names (partition columns
    /// excluded), for the first `leaf_limit` leaves when given
    /// (`delta.dataSkippingNumIndexedCols`; arrays and maps count as one).
    pub(crate) fn compute(batch: &RecordBatch, leaf_limit: Option<usize>) -> Self {
        let mut budget = leaf_limit;
        let (mut min, mut max, mut null_count) = (Json::object(), Json::object(), Json::object());
        for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
            let (lo, hi, nulls) = column_stats(column, None, &mut budget);
            push_some(&mut min, field.name(), lo);
            push_some(&mut max, field.name(), hi);
            push_some(&mut null_count, field.name(), nulls);
        }
        let object = Json::object()
            .with("minValues", min)
            .with("maxValues", max)
            .with("nullCount", null_count)
            .render();
        // The members without the object's braces.
        let columns = object[1..object.len() - 1].into();
        Self {
            num_records: batch.num_rows() as u64,
            columns,
        }
    }

    /// The JSON text; `tight` is false once a DV has deleted rows (§8.2).
    pub(crate) fn render(&self, tight: bool) -> String {
        format!(
            "{{\"numRecords\":{},{},\"tightBounds\":{tight}}}",
            self.num_records, self.columns
        )
    }
}

fn push_some(object: &mut Json, key: &str, value: Option<Json>) {
    if let Some(value) = value {
        object.push(key, value);
    }
}

type ColumnStats = (Option<Json>, Option<Json>, Option<Json>);

/// `(min, max, nullCount)` of one column; structs give nested objects.
fn column_stats(
    column: &ArrayRef,
    parent_nulls: Option<&NullBuffer>,
    budget: &mut Option<usize>,
) -> ColumnStats {
    let nulls = NullBuffer::union(parent_nulls, column.nulls());
    if let DataType::Struct(fields) = column.data_type() {
        let array = column.as_struct();
        let (mut min, mut max, mut count) = (Json::object(), Json::object(), Json::object());
        for (field, child) in fields.iter().zip(array.columns()) {
            let (child_min, child_max, child_count) = column_stats(child, nulls.as_ref(), budget);
            push_some(&mut min, field.name(), child_min);
            push_some(&mut max, field.name(), child_max);
            push_some(&mut count, field.name(), child_count);
        }
        let non_empty = |o: Json| (!o.is_empty_object()).then_some(o);
        return (non_empty(min), non_empty(max), non_empty(count));
    }
    match budget {
        Some(0) => return (None, None, None),
        Some(left) => *left -= 1,
        None => {}
    }
    if matches!(column.data_type(), DataType::List(_) | DataType::Map(..)) {
        return (None, None, None);
    }
    let null_count = nulls.as_ref().map_or(0, NullBuffer::null_count);
    let valid = |i: &usize| nulls.as_ref().is_none_or(|n| n.is_valid(*i));
    let rows = 0..column.len();
    let (min, max) = match column.data_type() {
        DataType::Int8 => ints(
            rows.filter(valid)
                .map(|i| column.as_primitive::<Int8Type>().value(i) as i64),
        ),
        DataType::Int16 => ints(
            rows.filter(valid)
                .map(|i| column.as_primitive::<Int16Type>().value(i) as i64),
        ),
        DataType::Int32 => ints(
            rows.filter(valid)
                .map(|i| column.as_primitive::<Int32Type>().value(i) as i64),
        ),
        DataType::Int64 => ints(
            rows.filter(valid)
                .map(|i| column.as_primitive::<Int64Type>().value(i)),
        ),
        DataType::Float32 => {
            let values = column.as_primitive::<Float32Type>();
            floats(rows.filter(valid).map(|i| values.value(i)), |v| {
                format!("{v:?}")
            })
        }
        DataType::Float64 => {
            let values = column.as_primitive::<Float64Type>();
            floats(rows.filter(valid).map(|i| values.value(i)), |v| {
                format!("{v:?}")
            })
        }
        DataType::Decimal128(_, scale) => {
            let values = column.as_primitive::<Decimal128Type>();
            let bounds = min_max(rows.filter(valid).map(|i| values.value(i)));
            let text = |v: i128| Json::Number(decimal_text(v, *scale));
            (bounds.map(|b| text(b.0)), bounds.map(|b| text(b.1)))
        }
        DataType::Date32 => {
            let values = column.as_primitive::<Date32Type>();
            let bounds = min_max(rows.filter(valid).map(|i| values.value(i)));
            let text = |days: i32| crate::partition::date_text(days).map(Json::Str);
            (
                bounds.and_then(|b| text(b.0)),
                bounds.and_then(|b| text(b.1)),
            )
        }
        DataType::Timestamp(TimeUnit::Microsecond, zone) => {
            let values = column.as_primitive::<TimestampMicrosecondType>();
            let bounds = min_max(rows.filter(valid).map(|i| values.value(i)));
            let utc = zone.is_some();
            let text = |micros: i64| timestamp_millis_text(micros, utc).map(Json::Str);
            (
                bounds.and_then(|b| text(b.0)),
                bounds.and_then(|b| text(b.1)),
            )
        }
        DataType::Utf8 => {
            let values = column.as_string::<i32>();
            let bounds = min_max(rows.filter(valid).map(|i| values.value(i)));
            (
                bounds.map(|b| Json::str(truncate_min(b.0))),
                bounds.and_then(|b| truncate_max(b.1)).map(Json::Str),
            )
        }
        _ => (None, None),
    };
    (min, max, Some(Json::Int(null_count as i64)))
}

fn min_max<T: PartialOrd + Copy>(values: impl Iterator<Item = T>) -> Option<(T, T)> {
    values.fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((if v < lo { v } else { lo }, if v > hi { v } else { hi })),
    })
}

fn ints(values: impl Iterator<Item = i64>) -> (Option<Json>, Option<Json>) {
    let bounds = min_max(values);
    (
        bounds.map(|b| Json::Int(b.0)),
        bounds.map(|b| Json::Int(b.1)),
    )
}

fn floats<T: num_like::Float>(
    values: impl Iterator<Item = T>,
    text: impl Fn(T) -> String,
) -> (Option<Json>, Option<Json>) {
    let values: Vec<T> = values.collect();
    if values.iter().any(|v| !v.finite()) {
        return (None, None);
    }
    let bounds = min_max(values.into_iter());
    (
        bounds.map(|b| Json::Number(text(b.0))),
        bounds.map(|b| Json::Number(text(b.1))),
    )
}

mod num_like {
    /// The one float property the stats need.
    pub(super) trait Float: PartialOrd + Copy {
        fn finite(self) -> bool;
    }
    impl Float for f32 {
        fn finite(self) -> bool {
            self.is_finite()
        }
    }
    impl Float for f64 {
        fn finite(self) -> bool {
            self.is_finite()
        }
    }
}

/// A timestamp in µs as the stats string, truncated down to ms:
/// `2023-05-31T18:58:33.633Z` (UTC) or `2023-05-31T18:58:33.633` (ntz).
pub(crate) fn timestamp_millis_text(micros: i64, utc: bool) -> Option<String> {
    let millis = micros.div_euclid(1000);
    let time = chrono::DateTime::from_timestamp_millis(millis)?;
    let format = if utc {
        "%Y-%m-%dT%H:%M:%S%.3fZ"
    } else {
        "%Y-%m-%dT%H:%M:%S%.3f"
    };
    Some(time.naive_utc().format(format).to_string())
}

/// The first [`STRING_PREFIX_CHARS`] characters: never above the real min.
pub(crate) fn truncate_min(s: &str) -> String {
    s.chars().take(STRING_PREFIX_CHARS).collect()
}

/// The max, cut to the prefix plus the tie-breaker when longer; `None` when
/// no such bound exists (the first cut character is already U+10FFFF).
pub(crate) fn truncate_max(s: &str) -> Option<String> {
    let mut chars = s.chars();
    let prefix: String = chars.by_ref().take(STRING_PREFIX_CHARS).collect();
    match chars.next() {
        None => Some(prefix),
        Some(STRING_MAX_TIE_BREAKER) => None,
        Some(_) => Some(format!("{prefix}{STRING_MAX_TIE_BREAKER}")),
    }
}

#[cfg(test)]
mod tests;
