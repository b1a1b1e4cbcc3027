//! DataFusion [`Statistics`] of a set of scan tasks, from the snapshot's
//! file index (no I/O).
//!
//! | statistic | source | exact when |
//! |---|---|---|
//! | rows | `numRecords - DV cardinality` | no DV, no predicate, every count known |
//! | bytes | file sizes (compressed) | never |
//! | partition min/max | partition values | no DV, no predicate |
//! | min/max | `minValues`/`maxValues` | integer, decimal, date, boolean columns; no DV, no predicate, tight bounds |
//! | null count | `nullCount` summed (absent without tight bounds) | no DV, no predicate |
//!
//! Otherwise a statistic is an inexact bound, or absent when a file lacks
//! it. Bounds Delta may truncate are weakened: a string maximum (cut at a
//! prefix) is absent, a timestamp maximum (written in milliseconds) is
//! raised by 999 µs, floats (NaN) are never exact.

use std::collections::HashMap;

use arrow_array::Array;
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use dar_log::FileIndex;
use dar_prune::Scalar;
use dar_scan::ScanTask;
use datafusion::common::stats::Precision;
use datafusion::common::{ColumnStatistics, ScalarValue, Statistics};

/// Everything the statistics of a task set depend on.
#[derive(Debug)]
pub(crate) struct StatsInput<'a> {
    /// The snapshot's file index.
    pub index: &'a FileIndex,
    /// Row of each file in the index, by `add.path`.
    pub rows: &'a HashMap<String, usize>,
    /// The output columns as DataFusion sees them.
    pub schema: &'a Schema,
    /// The table's partition columns.
    pub partition_columns: &'a [String],
    /// Whether a predicate filters rows inside the kept files.
    pub predicate: bool,
    /// The scan's limit.
    pub limit: Option<usize>,
}

/// Row of each file of `index`, by `add.path`.
pub(crate) fn index_rows(index: &FileIndex) -> HashMap<String, usize> {
    (0..index.len())
        .map(|i| (index.path.value(i).to_string(), i))
        .collect()
}

/// The statistics of reading `tasks`.
pub(crate) fn statistics(input: &StatsInput<'_>, tasks: &[ScanTask]) -> Statistics {
    let has_dv = tasks.iter().any(|t| t.deletion_vector.is_some());
    let exact = !has_dv && !input.predicate;
    let live: Option<u64> = tasks.iter().map(ScanTask::live_rows).sum();
    let num_rows = match live.and_then(|n| usize::try_from(n).ok()) {
        Some(n) if exact => Precision::Exact(n),
        Some(n) => Precision::Inexact(n),
        None => Precision::Absent,
    };
    let bytes: Option<u64> = tasks.iter().map(|t| t.size).sum();
    let rows: Vec<usize> = tasks
        .iter()
        .filter_map(|t| input.rows.get(&t.log_path).copied())
        .collect();
    let complete = rows.len() == tasks.len();
    let columns = input
        .schema
        .fields()
        .iter()
        .map(|f| {
            if !complete {
                ColumnStatistics::new_unknown()
            } else if input.partition_columns.contains(f.name()) {
                partition_column(f, tasks, exact && live.is_some())
            } else {
                data_column(f, input.index, &rows, exact)
            }
        })
        .collect();
    let stats = Statistics {
        num_rows,
        total_byte_size: bytes
            .and_then(|b| usize::try_from(b).ok())
            .map_or(Precision::Absent, Precision::Inexact),
        column_statistics: columns,
    };
    match input.limit {
        Some(limit) => apply_limit(stats, limit),
        None => stats,
    }
}

fn apply_limit(mut stats: Statistics, limit: usize) -> Statistics {
    stats.num_rows = match stats.num_rows {
        Precision::Exact(n) => Precision::Exact(n.min(limit)),
        Precision::Inexact(n) => Precision::Inexact(n.min(limit)),
        Precision::Absent => Precision::Inexact(limit),
    };
    stats.column_statistics = stats
        .column_statistics
        .into_iter()
        .map(ColumnStatistics::to_inexact)
        .collect();
    stats
}

fn precision<T: std::fmt::Debug + Clone + PartialEq + Eq + PartialOrd>(
    v: Option<T>,
    exact: bool,
) -> Precision<T> {
    match v {
        Some(v) if exact => Precision::Exact(v),
        Some(v) => Precision::Inexact(v),
        None => Precision::Absent,
    }
}

fn partition_column(field: &Field, tasks: &[ScanTask], exact: bool) -> ColumnStatistics {
    let mut nulls: u64 = 0;
    let mut values: Vec<ScalarValue> = Vec::new();
    for t in tasks {
        match t.partition_value(field.name()).cloned() {
            Some(Scalar::Null) | None => nulls += t.live_rows().unwrap_or(0),
            Some(s) => match value_for(&s, field.data_type()) {
                Some(v) => values.push(v),
                None => return ColumnStatistics::new_unknown(),
            },
        }
    }
    let min = values
        .iter()
        .try_fold(None::<ScalarValue>, |acc, v| fold(acc, v, true));
    let max = values
        .iter()
        .try_fold(None::<ScalarValue>, |acc, v| fold(acc, v, false));
    ColumnStatistics {
        null_count: precision(usize::try_from(nulls).ok(), exact),
        min_value: precision(min.flatten(), exact),
        max_value: precision(max.flatten(), exact),
        ..ColumnStatistics::new_unknown()
    }
}

/// The smaller (`min`) or larger of `acc` and `v`; `None` (stop) when they
/// do not compare.
fn fold(acc: Option<ScalarValue>, v: &ScalarValue, min: bool) -> Option<Option<ScalarValue>> {
    Some(Some(match acc {
        None => v.clone(),
        Some(a) => {
            let ord = v.partial_cmp(&a)?;
            if (min && ord.is_lt()) || (!min && ord.is_gt()) {
                v.clone()
            } else {
                a
            }
        }
    }))
}

/// How far a column's Delta min/max can be trusted.
enum BoundKind {
    /// Exact when the file set allows.
    Exact,
    /// A bound, never exact (floats: NaN is not in the stats).
    Inexact,
    /// Min a bound; max not a bound (truncated strings and binaries).
    MinOnly,
    /// Min a bound; max written in milliseconds (add 999 µs).
    MillisMax,
}

fn bound_kind(t: &DataType) -> Option<BoundKind> {
    let t = match t {
        DataType::Dictionary(_, v) => v.as_ref(),
        t => t,
    };
    Some(match t {
        DataType::Boolean
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::Date32
        | DataType::Decimal128(_, _) => BoundKind::Exact,
        DataType::Float32 | DataType::Float64 => BoundKind::Inexact,
        DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8 => BoundKind::MinOnly,
        DataType::Timestamp(TimeUnit::Microsecond, _) => BoundKind::MillisMax,
        _ => return None,
    })
}

fn data_column(field: &Field, index: &FileIndex, rows: &[usize], exact: bool) -> ColumnStatistics {
    let Some(stats) = index.stats.column(field.name()) else {
        return ColumnStatistics::new_unknown();
    };
    if stats.column.logical_path.len() != 1 {
        return ColumnStatistics::new_unknown();
    }
    let nulls: Option<u64> = rows
        .iter()
        .map(|&i| {
            let n = &stats.null_count;
            n.is_valid(i)
                .then(|| u64::try_from(n.value(i)).ok())
                .flatten()
        })
        .sum();
    let tight = rows.iter().all(|&i| {
        let t = &index.stats.tight_bounds;
        t.is_valid(i) && t.value(i)
    });
    // Under `tightBounds = false` a null count "means nothing" unless it is
    // 0 or all rows (protocol §8.2): no bound at all then.
    let nulls = nulls.filter(|_| tight);
    let mut out = ColumnStatistics {
        null_count: precision(nulls.and_then(|n| usize::try_from(n).ok()), exact),
        ..ColumnStatistics::new_unknown()
    };
    let Some(kind) = bound_kind(field.data_type()) else {
        return out;
    };
    let exact_bounds = exact && tight && matches!(kind, BoundKind::Exact);
    let bound = |array: Option<&arrow_array::ArrayRef>, min: bool| -> Option<ScalarValue> {
        let array = array?;
        rows.iter()
            .map(|&i| Scalar::from_array(array.as_ref(), i).filter(|s| !s.is_null()))
            .map(|s| s.and_then(|s| value_for(&s, field.data_type())))
            .try_fold(None, |acc, v| fold(acc, &v?, min))
            .flatten()
    };
    out.min_value = precision(bound(stats.min_values.as_ref(), true), exact_bounds);
    out.max_value = match kind {
        BoundKind::MinOnly => Precision::Absent,
        BoundKind::MillisMax => match bound(stats.max_values.as_ref(), false) {
            Some(ScalarValue::TimestampMicrosecond(Some(t), tz)) => Precision::Inexact(
                ScalarValue::TimestampMicrosecond(Some(t.saturating_add(999)), tz),
            ),
            _ => Precision::Absent,
        },
        _ => precision(bound(stats.max_values.as_ref(), false), exact_bounds),
    };
    out
}

/// A dar-prune scalar as a DataFusion scalar of type `t` (the column's type
/// in DataFusion: views and dictionaries included).
pub(crate) fn value_for(s: &Scalar, t: &DataType) -> Option<ScalarValue> {
    let v = match s {
        Scalar::Null => return ScalarValue::try_from(t).ok(),
        Scalar::Boolean(v) => ScalarValue::Boolean(Some(*v)),
        Scalar::Int8(v) => ScalarValue::Int8(Some(*v)),
        Scalar::Int16(v) => ScalarValue::Int16(Some(*v)),
        Scalar::Int32(v) => ScalarValue::Int32(Some(*v)),
        Scalar::Int64(v) => ScalarValue::Int64(Some(*v)),
        Scalar::Float32(v) => ScalarValue::Float32(Some(*v)),
        Scalar::Float64(v) => ScalarValue::Float64(Some(*v)),
        Scalar::Decimal128 {
            value,
            precision,
            scale,
        } => ScalarValue::Decimal128(Some(*value), *precision, *scale),
        Scalar::Utf8(v) => ScalarValue::Utf8(Some(v.clone())),
        Scalar::Binary(v) => ScalarValue::Binary(Some(v.clone())),
        Scalar::Date32(v) => ScalarValue::Date32(Some(*v)),
        Scalar::Timestamp(v) => {
            ScalarValue::TimestampMicrosecond(Some(*v), Some(dar_prune::UTC.into()))
        }
        Scalar::TimestampNtz(v) => ScalarValue::TimestampMicrosecond(Some(*v), None),
    };
    if &v.data_type() == t {
        Some(v)
    } else {
        v.cast_to(t).ok()
    }
}
