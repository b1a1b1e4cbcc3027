//! Checkpoint `add.stats_parsed` (protocol §3): typed stats structs, cast up
//! to the current column types.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, BooleanArray, PrimitiveArray, StructArray, new_null_array,
};
use arrow_buffer::{BooleanBuffer, NullBuffer};
use arrow_cast::can_cast_types;
use arrow_schema::DataType as ArrowType;

use super::{Chunk, StatsBuilder};
use crate::error::Result;
use crate::partition::with_parent_nulls;
use crate::scalar::cast_column;
use crate::schema::{find_arrow_field, primitive_to_arrow};

impl StatsBuilder {
    /// Appends every row of a checkpoint's `add.stats_parsed` column:
    /// `struct<numRecords, minValues: struct<...>, maxValues: struct<...>,
    /// nullCount: struct<...>, tightBounds>` keyed by physical names.
    ///
    /// Leaves are cast up to the column's current type (older files keep
    /// narrower types after a widening); `int32` is accepted as a date and
    /// `int64` as microseconds for timestamps, as kernel-rs does. A leaf that
    /// is missing is null; one that cannot be cast is null and counted in
    /// [`ColumnStats::invalid`](super::ColumnStats::invalid). A null
    /// `stats_parsed` row is a file without stats.
    pub fn extend_parsed(&mut self, stats_parsed: &StructArray) -> Result<()> {
        let rows = stats_parsed.len();
        let parent = stats_parsed.nulls();
        let child = |name: &str| -> Result<Option<ArrayRef>> {
            find_arrow_field(stats_parsed.fields(), name)
                .map(|i| with_parent_nulls(stats_parsed.column(i), parent))
                .transpose()
        };
        let num_records = match child("numRecords")? {
            Some(a) => cast_counting(&a, &ArrowType::Int64).0,
            None => new_null_array(&ArrowType::Int64, rows),
        };
        let tight_bounds = tight_bounds(child("tightBounds")?, parent, rows);
        let sections = [
            child("minValues")?,
            child("maxValues")?,
            child("nullCount")?,
        ];

        let n = self.columns.len();
        let mut mins = Vec::with_capacity(n);
        let mut maxs = Vec::with_capacity(n);
        let mut null_counts = Vec::with_capacity(n);
        for col in 0..n {
            let path = &self.columns[col].physical_path;
            let leaf = |section: usize| -> Result<Option<ArrayRef>> {
                match &sections[section] {
                    Some(root) => find_leaf(root, path),
                    None => Ok(None),
                }
            };
            let mut invalid = 0;
            let mut typed = |section: usize, target: &ArrowType| -> Result<ArrayRef> {
                Ok(match leaf(section)? {
                    Some(array) => {
                        let (array, bad) = cast_counting(&array, target);
                        invalid += bad;
                        array
                    }
                    None => new_null_array(target, rows),
                })
            };
            match self.kinds[col] {
                Some(kind) => {
                    let target = primitive_to_arrow(kind);
                    mins.push(Some(typed(0, &target)?));
                    maxs.push(Some(typed(1, &target)?));
                }
                None => {
                    mins.push(None);
                    maxs.push(None);
                }
            }
            null_counts.push(typed(2, &ArrowType::Int64)?);
            self.invalid[col] += invalid;
        }
        self.flush();
        self.chunks.push(Chunk {
            num_records,
            tight_bounds,
            mins,
            maxs,
            null_counts,
        });
        Ok(())
    }
}

/// `tightBounds`: true where stats exist and the field is null or absent,
/// null where the whole `stats_parsed` row is null.
fn tight_bounds(array: Option<ArrayRef>, parent: Option<&NullBuffer>, rows: usize) -> ArrayRef {
    let values = array.and_then(|a| a.as_boolean_opt().cloned());
    let result: BooleanArray = (0..rows)
        .map(|i| {
            if parent.is_some_and(|p| p.is_null(i)) {
                None
            } else {
                Some(match &values {
                    Some(v) if v.is_valid(i) => v.value(i),
                    _ => true,
                })
            }
        })
        .collect();
    Arc::new(result)
}

/// Follows a physical path through nested structs, applying each level's
/// nulls. `None` when some level is missing or not a struct.
fn find_leaf(root: &ArrayRef, path: &[String]) -> Result<Option<ArrayRef>> {
    let mut current = Arc::clone(root);
    for name in path {
        let Some(level) = current.as_struct_opt() else {
            return Ok(None);
        };
        let Some(i) = find_arrow_field(level.fields(), name) else {
            return Ok(None);
        };
        current = with_parent_nulls(level.column(i), level.nulls())?;
    }
    Ok(Some(current))
}

/// Casts a stats leaf to `target`, nulling what cannot be cast (and float
/// NaNs); returns the array and how many present values became null (NaNs
/// not counted).
fn cast_counting(array: &ArrayRef, target: &ArrowType) -> (ArrayRef, usize) {
    let present = array.len() - array.null_count();
    let cast_array = if array.data_type() == target {
        Ok(Arc::clone(array))
    } else if can_cast_types(array.data_type(), target) {
        cast_column(array, target, true)
    } else {
        Err(arrow_schema::ArrowError::CastError(String::new()))
    };
    let Ok(cast_array) = cast_array else {
        return (new_null_array(target, array.len()), present);
    };
    let bad = present - (cast_array.len() - cast_array.null_count()).min(present);
    let scrubbed = match target {
        ArrowType::Float32 => scrub_nan::<Float32Type>(&cast_array),
        ArrowType::Float64 => scrub_nan::<Float64Type>(&cast_array),
        _ => cast_array,
    };
    (scrubbed, bad)
}

fn scrub_nan<T>(array: &ArrayRef) -> ArrayRef
where
    T: ArrowPrimitiveType,
    T::Native: num_like::IsNan,
{
    let Some(values) = array.as_primitive_opt::<T>() else {
        return Arc::clone(array);
    };
    let valid = BooleanBuffer::collect_bool(values.len(), |i| {
        values.is_valid(i) && !num_like::IsNan::is_nan(values.value(i))
    });
    let scrubbed = PrimitiveArray::<T>::new(values.values().clone(), Some(NullBuffer::new(valid)))
        .with_data_type(array.data_type().clone());
    Arc::new(scrubbed)
}

mod num_like {
    /// NaN test over both float widths.
    pub(super) trait IsNan: Copy {
        fn is_nan(self) -> bool;
    }
    impl IsNan for f32 {
        fn is_nan(self) -> bool {
            f32::is_nan(self)
        }
    }
    impl IsNan for f64 {
        fn is_nan(self) -> bool {
            f64::is_nan(self)
        }
    }
}
