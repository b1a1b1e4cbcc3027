//! Turning a provider's raw [`ColumnStatistics`] into arrays the rewrite
//! rules can compare against a literal directly:
//!
//! 1. min/max are cast to the column's canonical literal type where that
//!    is exact (type widening: `int` stats for a `long` column, `float` for
//!    `double`, `date` for `timestamp_ntz`, a narrower decimal, coarser
//!    timestamp units); anything else is treated as absent and counted;
//! 2. float NaN bounds become unknown, and both zeros become `0.0` (SQL
//!    compares them equal, [`crate::float_order`]; writers store `-0.0` as
//!    a zero minimum and `0.0` as a zero maximum, as the Parquet spec asks,
//!    or either zero for either);
//! 3. Delta timestamp maxima are widened by 999 µs;
//! 4. Delta string maxima that may be truncated are flagged and, where they
//!    end in a tie-breaker character, cut back to the plain prefix;
//! 5. null and row counts become `Int64`, and null counts of containers
//!    with wide bounds are dropped unless they are 0 or the row count;
//! 6. a container whose stats contradict themselves (`null_count >
//!    row_count`, `min > max`) has none: min, max and null count unknown.

use std::sync::Arc;

use arrow_arith::boolean::{and, is_not_null, not, or};
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, BooleanArray, Int64Array, PrimitiveArray, StringArray,
    TimestampMicrosecondArray, cast::AsArray, types,
};
use arrow_cast::cast::cast;
use arrow_ord::cmp;
use arrow_schema::{DataType, TimeUnit};

use super::PruningMetrics;
use crate::stats::{BoundsSemantics, ColumnStatistics};

/// Characters Delta writers append to a truncated maximum (§8.3).
const TIE_BREAKERS: [char; 4] = ['\u{10FFFD}', '\u{10FFFF}', '\u{FFFD}', '\u{7F}'];

/// Statistics of one column, ready for the rewrite rules. Every present
/// array has `n` elements.
#[derive(Debug)]
pub(super) struct Prepared {
    pub min: Option<ArrayRef>,
    pub max: Option<ArrayRef>,
    /// For string columns: which maxima stand for "prefix + ∞", and the
    /// prefixes themselves.
    pub max_prefix: Option<(BooleanArray, ArrayRef)>,
    /// `true` where the container holds at least one non-NULL value, `false`
    /// where it holds none, NULL where unknown.
    pub has_non_null: Option<BooleanArray>,
    /// `true` where the container holds at least one NULL.
    pub has_null: Option<BooleanArray>,
    /// The column is a float column whose bounds may leave out NaN.
    pub nan_possible: bool,
}

pub(super) fn prepare(
    stats: ColumnStatistics,
    target: &DataType,
    n: usize,
    metrics: &mut PruningMetrics,
) -> Prepared {
    let sem = stats.semantics;
    let usable = |a: Option<ArrayRef>, metrics: &mut PruningMetrics| -> Option<ArrayRef> {
        let a = a?;
        if a.len() != n {
            metrics.unusable_statistics += 1;
            return None;
        }
        if a.data_type() == &DataType::Null || a.null_count() == a.len() {
            return None;
        }
        let conformed = conform(&a, target);
        if conformed.is_none() {
            metrics.unusable_statistics += 1;
        }
        conformed
    };
    let mut min = usable(stats.min, metrics);
    let mut max = usable(stats.max, metrics);
    let mut null_count = counts(stats.null_count, n, metrics);
    let mut row_count = counts(stats.row_count, n, metrics);
    let tight = match stats.tight_bounds {
        Some(t) if t.len() != n => {
            metrics.unusable_statistics += 1;
            // Tightness unknown: so is what the null count means.
            null_count = None;
            None
        }
        other => other,
    };
    let nan_possible = target.is_floating() && sem.nan_outside_bounds;
    min = min.map(|m| lower_bounds(m, target));
    max = max.map(|m| upper_bounds(m, target, sem));

    // A container whose own stats are impossible or contradict themselves
    // describes nothing about the column.
    let facts = Facts {
        min: min.as_ref(),
        max: max.as_ref(),
        null_count: null_count.as_ref(),
        row_count: row_count.as_ref(),
        tight: tight.as_ref(),
    };
    if let Some(bad) = impossible(&facts) {
        metrics.unusable_statistics += bad.true_count();
        let drop = |a: &dyn Array| arrow_select::nullif::nullif(a, &bad).ok();
        let drop_counts = |a: &Int64Array| drop(a).map(|a| a.as_primitive().clone());
        min = min.as_deref().and_then(drop);
        max = max.as_deref().and_then(drop);
        null_count = null_count.as_ref().and_then(drop_counts);
    }
    // A negative count is unknown (already so above, unless a kernel
    // failed there: never compare against one).
    null_count = null_count.as_ref().and_then(non_negative);
    row_count = row_count.as_ref().and_then(non_negative);

    // Wide bounds: a null count other than 0 or the row count means
    // nothing (without a row count, only 0 does).
    if let (Some(tight), Some(nc)) = (&tight, &null_count) {
        let zero = Int64Array::new_scalar(0);
        let mask = (|| {
            let mut middle = cmp::neq(nc, &zero).ok()?;
            if let Some(rc) = &row_count {
                middle = and(&middle, &cmp::neq(nc, rc).ok()?).ok()?;
            }
            and(&not(tight).ok()?, &middle).ok()
        })();
        null_count = mask
            .and_then(|m| arrow_select::nullif::nullif(nc, &m).ok())
            .map(|a| a.as_primitive().clone());
    }
    let has_non_null = match (&null_count, &row_count) {
        (Some(nc), Some(rc)) => cmp::lt(nc, rc).ok(),
        _ => None,
    };
    let has_null = null_count
        .as_ref()
        .and_then(|nc| cmp::gt(nc, &Int64Array::new_scalar(0)).ok());

    let max_prefix = match (target, sem.string_max_prefix_length, &max) {
        (DataType::Utf8, Some(len), Some(m)) => string_prefixes(m.as_string::<i32>(), len),
        _ => None,
    };
    Prepared {
        min,
        max,
        max_prefix,
        has_non_null,
        has_null,
        nan_possible,
    }
}

/// Null or row counts as `Int64`, when usable (`n` integers). Int64
/// (Delta's JSON longs) passes through without a copy; other integer types
/// are cast (values out of range become unknown). Negative counts are
/// judged with the other contradictions ([`impossible`]).
fn counts(a: Option<ArrayRef>, n: usize, metrics: &mut PruningMetrics) -> Option<Int64Array> {
    let a = a?;
    let ok = a.len() == n && (a.data_type().is_integer() || a.data_type() == &DataType::Null);
    if !ok {
        metrics.unusable_statistics += 1;
        return None;
    }
    Some(match a.data_type() {
        DataType::Int64 => a.as_primitive::<types::Int64Type>().clone(),
        _ => cast(&a, &DataType::Int64)
            .ok()?
            .as_primitive::<types::Int64Type>()
            .clone(),
    })
}

/// `counts` with its negative values unknown.
fn non_negative(counts: &Int64Array) -> Option<Int64Array> {
    match arrow_arith::aggregate::min(counts) {
        Some(m) if m < 0 => {
            let negative = cmp::lt(counts, &Int64Array::new_scalar(0)).ok()?;
            Some(
                arrow_select::nullif::nullif(counts, &negative)
                    .ok()?
                    .as_primitive()
                    .clone(),
            )
        }
        _ => Some(counts.clone()),
    }
}

/// Minima ready to compare: float NaN unknown, either zero `0.0`.
fn lower_bounds(min: ArrayRef, target: &DataType) -> ArrayRef {
    match target {
        DataType::Float64 => float_bounds::<types::Float64Type>(&min),
        DataType::Float32 => float_bounds::<types::Float32Type>(&min),
        _ => min,
    }
}

/// Maxima ready to compare: as [`lower_bounds`], and Delta timestamp
/// maxima (written in milliseconds) raised by 999 µs.
fn upper_bounds(max: ArrayRef, target: &DataType, sem: BoundsSemantics) -> ArrayRef {
    match target {
        DataType::Float64 => float_bounds::<types::Float64Type>(&max),
        DataType::Float32 => float_bounds::<types::Float32Type>(&max),
        DataType::Timestamp(TimeUnit::Microsecond, tz) if sem.timestamp_max_truncated_to_millis => {
            let widened: TimestampMicrosecondArray = max
                .as_primitive::<types::TimestampMicrosecondType>()
                .unary(|v| v.saturating_add(999));
            Arc::new(widened.with_timezone_opt(tz.clone()))
        }
        _ => max,
    }
}

/// What one column's statistics say, for judging them.
struct Facts<'a> {
    min: Option<&'a ArrayRef>,
    max: Option<&'a ArrayRef>,
    null_count: Option<&'a Int64Array>,
    row_count: Option<&'a Int64Array>,
    /// `None`: tight everywhere.
    tight: Option<&'a BooleanArray>,
}

/// The containers whose statistics are impossible or contradict
/// themselves (the cases in the module docs, step 6), when there are any:
/// their min, max and null count cannot describe them, so all three are
/// read as unknown.
fn impossible(f: &Facts<'_>) -> Option<BooleanArray> {
    let zero = Int64Array::new_scalar(0);
    let mut parts: Vec<BooleanArray> = Vec::new();
    for counts in [f.null_count, f.row_count].into_iter().flatten() {
        parts.extend(cmp::lt(counts, &zero).ok());
    }
    if let (Some(nc), Some(rc)) = (f.null_count, f.row_count) {
        parts.extend(cmp::gt(nc, rc).ok());
        // Every value NULL, yet a bound, under tight bounds.
        let bound = match (f.min, f.max) {
            (Some(lo), Some(hi)) => or(&is_not_null(lo).ok()?, &is_not_null(hi).ok()?).ok(),
            (Some(b), None) | (None, Some(b)) => is_not_null(b).ok(),
            (None, None) => None,
        };
        if let Some(bound) = bound {
            let mut all_null = and(&cmp::eq(nc, rc).ok()?, &bound).ok()?;
            if let Some(tight) = f.tight {
                all_null = and(&all_null, tight).ok()?;
            }
            parts.push(all_null);
        }
    }
    if let (Some(lo), Some(hi)) = (f.min, f.max) {
        parts.extend(cmp::gt(lo, hi).ok());
    }
    let mut bad: Option<BooleanArray> = None;
    for p in parts {
        bad = Some(match bad {
            None => p,
            Some(b) => arrow_arith::boolean::or_kleene(&b, &p).ok()?,
        });
    }
    bad.filter(|b| b.true_count() > 0)
}

/// NaN bounds become null (unknown) and either zero becomes `0.0`.
fn float_bounds<T: ArrowPrimitiveType>(a: &ArrayRef) -> ArrayRef {
    let out: PrimitiveArray<T> = a.as_primitive::<T>().unary_opt(|v| {
        // NaN is the only value unordered against itself; `==` treats
        // -0.0 and +0.0 as equal, so both zeros are caught.
        if v.partial_cmp(&v).is_none() {
            None
        } else if v == T::Native::default() {
            Some(T::Native::default())
        } else {
            Some(v)
        }
    });
    Arc::new(out)
}

/// Flags maxima that may be truncated and returns the prefix each stands
/// for; `None` when no maximum is flagged (the common case, which then
/// costs one pass over the string lengths and no allocation).
fn string_prefixes(max: &StringArray, prefix_length: usize) -> Option<(BooleanArray, ArrayRef)> {
    // A string of fewer bytes than `prefix_length` has fewer characters too,
    // so characters are only counted for long values.
    let flagged = |v: &str| {
        v.ends_with(TIE_BREAKERS)
            || (v.len() >= prefix_length && v.chars().count() >= prefix_length)
    };
    // Fast scan over the raw offsets: every tie-breaker's UTF-8 form ends in
    // 0x7F, 0xBD or 0xBF, so only such values (or long ones) need a look.
    let offsets = max.value_offsets();
    let bytes = max.value_data();
    let suspect = offsets.windows(2).any(|w| {
        let (start, end) = (
            usize::try_from(w[0]).unwrap_or(0),
            usize::try_from(w[1]).unwrap_or(0),
        );
        end - start >= prefix_length
            || (end > start && matches!(bytes[end - 1], 0x7F | 0xBD | 0xBF))
    });
    if !suspect || !max.iter().flatten().any(flagged) {
        return None;
    }
    let flags: BooleanArray = max.iter().map(|v| Some(v.is_some_and(flagged))).collect();
    let prefixes: StringArray = max
        .iter()
        .map(|v| v.map(|v| v.strip_suffix(TIE_BREAKERS).unwrap_or(v)))
        .collect();
    Some((flags, Arc::new(prefixes)))
}

/// Casts statistics to the canonical literal type when the conversion keeps
/// them valid bounds; `None` otherwise. These are the exact conversions of
/// the protocol's type widening (§11), how row-group and page statistics of
/// a file written before a widening (in the file's narrower type) compare
/// with the column: integers to wider integers, decimals or doubles, floats
/// to doubles, dates to midnight, decimals to wider ones. Delta file
/// statistics arrive in the column's current type, already read by
/// dar-log's one rule for widened bounds (`dar_log::schema::widened_bounds`:
/// a `float` bound's text read as a `double` is rounded outward onto the
/// float grid there, as only the log knows a column's history).
pub(super) fn conform(a: &ArrayRef, target: &DataType) -> Option<ArrayRef> {
    let source = a.data_type();
    if source == target {
        return Some(a.clone());
    }
    use DataType as T;
    let exact = match (source, target) {
        // Integer casts are exact or NULL (out of range), never rounded.
        (s, t) if s.is_integer() && t.is_integer() => true,
        (T::Float32, T::Float64) => true,
        (T::Int8 | T::Int16 | T::Int32 | T::UInt8 | T::UInt16 | T::UInt32, T::Float64) => true,
        (T::Int8 | T::Int16 | T::UInt8 | T::UInt16, T::Float32) => true,
        // Out-of-precision values become NULL rather than rounded.
        (s, T::Decimal128(..)) if s.is_integer() => true,
        (
            T::Decimal32(p1, s1) | T::Decimal64(p1, s1) | T::Decimal128(p1, s1),
            T::Decimal128(p2, s2),
        ) => s1 <= s2 && i16::from(*p1) - i16::from(*s1) <= i16::from(*p2) - i16::from(*s2),
        (T::Utf8 | T::LargeUtf8 | T::Utf8View, T::Utf8) => true,
        (T::Binary | T::LargeBinary | T::BinaryView | T::FixedSizeBinary(_), T::Binary) => true,
        (T::Date64, T::Date32) => false,
        (T::Date32, T::Timestamp(TimeUnit::Microsecond, None)) => return timestamp_from_days(a),
        (T::Timestamp(unit, tz_s), T::Timestamp(TimeUnit::Microsecond, tz_t))
            if tz_s.is_some() == tz_t.is_some() =>
        {
            return timestamp_micros(a, *unit, tz_t.clone());
        }
        _ => false,
    };
    if !exact {
        return None;
    }
    cast(a, target).ok()
}

fn timestamp_from_days(a: &ArrayRef) -> Option<ArrayRef> {
    let days = a.as_primitive::<types::Date32Type>();
    let micros: TimestampMicrosecondArray =
        days.unary_opt(|d| i64::from(d).checked_mul(86_400_000_000));
    Some(Arc::new(micros))
}

/// Coarser units scale up exactly; finer units would round, so they are
/// refused.
fn timestamp_micros(a: &ArrayRef, unit: TimeUnit, tz: Option<Arc<str>>) -> Option<ArrayRef> {
    let factor: i64 = match unit {
        TimeUnit::Second => 1_000_000,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1,
        TimeUnit::Nanosecond => return None,
    };
    let raw = cast(a, &DataType::Int64).ok()?;
    let raw: &Int64Array = raw.as_primitive();
    let micros: TimestampMicrosecondArray = raw.unary_opt(|v| v.checked_mul(factor));
    Some(Arc::new(micros.with_timezone_opt(tz)))
}
