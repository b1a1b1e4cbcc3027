//! dar-scan's [`PlanStatistics`] as DataFusion [`Statistics`]: a
//! conversion only. The Delta rules (what is exact, truncated bounds, DVs)
//! live in dar-scan.

use arrow_schema::{DataType, Schema};
use dar_prune::Scalar;
use dar_scan::{ColumnStatistics as DarColumn, Estimate, PlanStatistics};
use datafusion::common::stats::Precision;
use datafusion::common::{ColumnStatistics, ScalarValue, Statistics};

fn count(e: &Estimate<u64>) -> Precision<usize> {
    match e {
        Estimate::Exact(n) => usize::try_from(*n).map_or(Precision::Absent, Precision::Exact),
        Estimate::Inexact(n) => usize::try_from(*n).map_or(Precision::Absent, Precision::Inexact),
        _ => Precision::Absent,
    }
}

fn bound(e: &Estimate<Scalar>, t: &DataType) -> Precision<ScalarValue> {
    match e {
        Estimate::Exact(s) => value_for(s, t).map_or(Precision::Absent, Precision::Exact),
        Estimate::Inexact(s) => value_for(s, t).map_or(Precision::Absent, Precision::Inexact),
        _ => Precision::Absent,
    }
}

fn column(c: &DarColumn, t: &DataType) -> ColumnStatistics {
    ColumnStatistics {
        null_count: count(&c.null_count),
        min_value: bound(&c.min, t),
        max_value: bound(&c.max, t),
        ..ColumnStatistics::new_unknown()
    }
}

/// `stats` for the output `schema` as DataFusion sees it (view types and
/// dictionary partition columns included).
pub(crate) fn to_datafusion(stats: &PlanStatistics, schema: &Schema) -> Statistics {
    Statistics {
        num_rows: count(&stats.num_rows),
        total_byte_size: count(&stats.total_bytes),
        column_statistics: schema
            .fields()
            .iter()
            .zip(&stats.columns)
            .map(|(f, c)| column(c, f.data_type()))
            .collect(),
    }
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
