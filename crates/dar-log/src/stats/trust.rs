//! What file statistics may be used for: the one rule that every reader of
//! [`FileStats`] relies on (file pruning in dar-prune, exact answers for
//! aggregates in dar-scan and DataFusion, `dar info`'s row count). It is
//! applied by [`StatsBuilder::finish`](super::StatsBuilder::finish), so no
//! consumer ever sees an impossible value, whatever the source (`add.stats`
//! JSON, a checkpoint's `stats_parsed`, retained checkpoint chunks).
//!
//! Statistics are hints: none of this is an error. A value that cannot be
//! believed becomes null (unknown), which every consumer already treats
//! soundly: a pruner keeps the file, an aggregate is not exact.
//!
//! | a file's statistics say | read as | may prune | exact |
//! |---|---|---|---|
//! | `numRecords < 0` | the file has no statistics at all: `numRecords` and every column's min, max and null count unknown (listed in [`FileStats::impossible`]) | no | never |
//! | `nullCount < 0` for a column | that column's min, max and null count unknown for the file (counted in [`ColumnStats::contradictory`]) | no | never |
//! | `nullCount > numRecords` | the same | no | never |
//! | `nullCount = numRecords` (every value null) with a min or a max, tight bounds | the same: one of them is wrong and nothing says which, so neither "all null" nor the bounds may rule out a row | no | never |
//! | the same under `tightBounds = false` | kept: the protocol allows it (every *live* row null, bounds of rows a deletion vector removed; §8.2) | yes | never (wide bounds never are) |
//! | `min > max` | that column's min, max and null count unknown for the file | no | never |
//! | a bound of a `double` column that was a `float` | rounded outward onto the float grid ([`widened_bounds`]) | yes | never (floats never are) |
//!
//! `numRecords` is judged on its own: it is known when a table opens,
//! while a column's statistics are parsed only when a query needs them, so
//! a column whose `nullCount` contradicts `numRecords` loses its own
//! statistics (nothing about that column is exact or prunes), and the row
//! count stands. A `numRecords` that is possible but wrong cannot be told
//! from the log at all (when a file with a deletion vector is read, the
//! scan checks it against the file's footer).
//!
//! Contradictions are judged on the values as written, before the float
//! grid rounds them outward (which could hide a `min > max`). Applying the
//! rule twice changes nothing and counts nothing twice, so statistics
//! finished in pieces and finished again stay as they were.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Float64Type;
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, BooleanArray, Float64Array, Int64Array, PrimitiveArray,
    downcast_primitive_array,
};
use arrow_buffer::BooleanBuffer;

use super::{ColumnStats, FileStats};
use crate::error::{LogError, Result};
use crate::schema::{WidenedBounds, float_grid_ceil, float_grid_floor, widened_bounds};

/// Applies the rule to every file and column of `stats`.
pub(super) fn apply(stats: &mut FileStats) -> Result<()> {
    let impossible_files = negative(&stats.num_records);
    if let Some(bad) = &impossible_files {
        stats.impossible.extend(bad.set_indices());
        stats.impossible.sort_unstable();
        stats.impossible.dedup();
        stats.num_records = null_where(&stats.num_records, bad)?;
    }
    for column in &mut stats.columns {
        drop_contradictions(
            column,
            &stats.num_records,
            &stats.tight_bounds,
            impossible_files.as_ref(),
        )?;
        widen(column)?;
    }
    Ok(())
}

/// The rows holding a negative count, when there are any.
fn negative(counts: &Int64Array) -> Option<BooleanBuffer> {
    let values = counts.values();
    let bad = BooleanBuffer::collect_bool(counts.len(), |i| counts.is_valid(i) && values[i] < 0);
    (bad.count_set_bits() > 0).then_some(bad)
}

/// Nulls the column's min, max and null count in the files whose own
/// statistics contradict themselves (or whose `numRecords` was impossible).
fn drop_contradictions(
    column: &mut ColumnStats,
    num_records: &Int64Array,
    tight_bounds: &BooleanArray,
    impossible_files: Option<&BooleanBuffer>,
) -> Result<()> {
    let rows = column.null_count.len();
    let bound_lengths = [&column.min_values, &column.max_values]
        .into_iter()
        .flatten()
        .map(|a| a.len());
    if num_records.len() != rows
        || tight_bounds.len() != rows
        || bound_lengths.into_iter().any(|n| n != rows)
    {
        return Err(LogError::arrow(
            "judging file statistics",
            arrow_schema::ArrowError::InvalidArgumentError(format!(
                "the statistics of column {} are not one per file",
                column.column.logical_name()
            )),
        ));
    }
    let nc = &column.null_count;
    let present = |a: &Option<ArrayRef>, i: usize| a.as_ref().is_some_and(|a| a.is_valid(i));
    let inverted = match (&column.min_values, &column.max_values) {
        (Some(min), Some(max)) => inverted(min.as_ref(), max.as_ref()),
        _ => None,
    };
    let bad = BooleanBuffer::collect_bool(rows, |i| {
        if impossible_files.is_some_and(|b| b.value(i)) {
            return true;
        }
        if inverted.as_ref().is_some_and(|b| b.value(i)) {
            return true;
        }
        if nc.is_null(i) {
            return false;
        }
        let nulls = nc.value(i);
        if nulls < 0 {
            return true;
        }
        if num_records.is_null(i) {
            return false;
        }
        let records = num_records.value(i);
        let tight = tight_bounds.is_valid(i) && tight_bounds.value(i);
        let has_bound = present(&column.min_values, i) || present(&column.max_values, i);
        nulls > records || (tight && nulls == records && has_bound)
    });
    if bad.count_set_bits() == 0 {
        return Ok(());
    }
    // Only files that still had a statistic of the column count (so a
    // second pass over finished statistics counts nothing).
    let counted = (0..rows)
        .filter(|&i| {
            bad.value(i)
                && (nc.is_valid(i)
                    || present(&column.min_values, i)
                    || present(&column.max_values, i))
        })
        .count();
    if counted == 0 {
        return Ok(());
    }
    column.contradictory += counted;
    let drop = |a: &ArrayRef| null_where_any(a.as_ref(), &bad);
    column.min_values = column.min_values.as_ref().map(drop).transpose()?;
    column.max_values = column.max_values.as_ref().map(drop).transpose()?;
    column.null_count = null_where(&column.null_count, &bad)?;
    Ok(())
}

/// The rows where both bounds are present and the minimum is above the
/// maximum (floats by value: `0.0` and `-0.0` are equal, as writers may
/// store either zero for either bound). `None` for types without an order
/// here (they have no min/max statistics).
fn inverted(min: &dyn Array, max: &dyn Array) -> Option<BooleanBuffer> {
    if min.data_type() != max.data_type() || min.len() != max.len() {
        return None;
    }
    if let (Some(lo), Some(hi)) = (min.as_string_opt::<i32>(), max.as_string_opt::<i32>()) {
        return Some(BooleanBuffer::collect_bool(lo.len(), |i| {
            lo.is_valid(i) && hi.is_valid(i) && lo.value(i) > hi.value(i)
        }));
    }
    downcast_primitive_array!(
        min => primitive_inverted(min, max),
        _ => None,
    )
}

fn primitive_inverted<T: ArrowPrimitiveType>(
    min: &PrimitiveArray<T>,
    max: &dyn Array,
) -> Option<BooleanBuffer> {
    let max = max.as_primitive_opt::<T>()?;
    Some(BooleanBuffer::collect_bool(min.len(), |i| {
        min.is_valid(i)
            && max.is_valid(i)
            && min.value(i).partial_cmp(&max.value(i)) == Some(std::cmp::Ordering::Greater)
    }))
}

/// Rounds the bounds of a `double` column that was a `float` outward onto
/// the float grid (see [`widened_bounds`]).
fn widen(column: &mut ColumnStats) -> Result<()> {
    let Some(current) = column.column.data_type.as_primitive() else {
        return Ok(());
    };
    if widened_bounds(current, &column.column.earlier_types) != WidenedBounds::FloatGrid {
        return Ok(());
    }
    let round = |a: &ArrayRef, to: fn(f64) -> f64| -> Result<ArrayRef> {
        let values =
            a.as_primitive_opt::<Float64Type>()
                .ok_or_else(|| LogError::UnexpectedArrowType {
                    column: column.column.logical_name(),
                    expected: "Float64".to_owned(),
                    found: a.data_type().to_string(),
                })?;
        let rounded: Float64Array = values.unary(to);
        Ok(Arc::new(rounded))
    };
    column.min_values = column
        .min_values
        .as_ref()
        .map(|a| round(a, float_grid_floor))
        .transpose()?;
    column.max_values = column
        .max_values
        .as_ref()
        .map(|a| round(a, float_grid_ceil))
        .transpose()?;
    Ok(())
}

/// `counts` with the rows of `bad` null.
fn null_where(counts: &Int64Array, bad: &BooleanBuffer) -> Result<Int64Array> {
    let array = null_where_any(counts, bad)?;
    array
        .as_primitive_opt()
        .cloned()
        .ok_or_else(|| LogError::UnexpectedArrowType {
            column: "count".to_owned(),
            expected: "Int64".to_owned(),
            found: array.data_type().to_string(),
        })
}

/// `array` with the rows of `bad` null.
fn null_where_any(array: &dyn Array, bad: &BooleanBuffer) -> Result<ArrayRef> {
    arrow_select::nullif::nullif(array, &BooleanArray::new(bad.clone(), None))
        .map_err(|e| LogError::arrow("dropping statistics that contradict themselves", e))
}
