//! Type widening (protocol §11): validating `delta.typeChanges` history,
//! and the one rule by which statistics written before a widening are read
//! at the column's current type ([`widened_bounds`]).

use serde_json::Value;

use super::types::{DataType, PrimitiveType, StructField, StructType, TYPE_CHANGES_KEY};
use crate::error::{LogError, Result};

/// Whether `from -> to` is one of the widenings the protocol allows.
///
/// Integer-to-decimal follows Delta-Spark (`DecimalType.isWiderThan`): the
/// decimal must hold every value of the integer type, i.e. `p - s >= 3, 5,
/// 10, 20` for byte, short, integer, long. The protocol table writes
/// `decimal(10 + k1, k2)` for all three small integer types, which would
/// reject `byte -> decimal(4,1)` that Delta-Spark writes (see the
/// `type-widening` test table); the rules agree for integer and long.
pub fn is_allowed_widening(from: PrimitiveType, to: PrimitiveType) -> bool {
    use PrimitiveType as P;
    match (from, to) {
        (P::Float, P::Double) => true,
        (P::Byte | P::Short | P::Integer, P::Double) => true,
        (P::Date, P::TimestampNtz) => true,
        (P::Decimal(f), P::Decimal(t)) => {
            t.scale() >= f.scale() && (t.precision() - t.scale()) >= (f.precision() - f.scale())
        }
        (from, P::Decimal(t)) => match integer_digits(from) {
            Some(digits) => t.precision() - t.scale() >= digits,
            None => false,
        },
        (from, to) => match (integer_rank(from), integer_rank(to)) {
            (Some(f), Some(t)) => f < t,
            _ => false,
        },
    }
}

fn integer_rank(p: PrimitiveType) -> Option<u8> {
    match p {
        PrimitiveType::Byte => Some(1),
        PrimitiveType::Short => Some(2),
        PrimitiveType::Integer => Some(3),
        PrimitiveType::Long => Some(4),
        _ => None,
    }
}

/// Decimal digits needed to hold every value of an integer type.
fn integer_digits(p: PrimitiveType) -> Option<u8> {
    match p {
        PrimitiveType::Byte => Some(3),
        PrimitiveType::Short => Some(5),
        PrimitiveType::Integer => Some(10),
        PrimitiveType::Long => Some(20),
        _ => None,
    }
}

/// How the bounds (`minValues` / `maxValues`) a file's statistics give for
/// a column read at its current type, given the types the column had
/// before (its `delta.typeChanges`). The one rule for widened columns:
/// every source of Delta file statistics (`add.stats` JSON, a checkpoint's
/// `add.stats_parsed`, the retained checkpoint chunks) goes through it in
/// [`StatsBuilder::finish`](crate::stats::StatsBuilder::finish).
///
/// | widening | a bound written at the old type |
/// |---|---|
/// | integer → wider integer, integer → `double`, integer or decimal → decimal, `date` → `timestamp_ntz` | converts exactly: JSON text parses as the new type to the same value (a date as midnight), `stats_parsed` leaves cast exactly or to null |
/// | `float` → `double` | may be the *text of a float* read as a double: Delta-Spark writes a float bound as its shortest text (`0.1` for 0.100000001490116…), and `stats_parsed` written after the widening holds that text parsed as a double (0.1000000000000000055…), below the float the file holds. So every bound of such a column is rounded outward onto the float grid: a minimum down to the nearest float, a maximum up ([`WidenedBounds::FloatGrid`]) |
///
/// Why the float grid is sound: a file written before the widening holds
/// floats, and its bound is a float `f` written as text. That text lies
/// within half a float step of `f`, and read as a double (JSON, or a
/// `stats_parsed` double) it moves by far less than a float step, so the
/// floats just below and just above what was read bracket `f` again.
/// Files written after the widening hold doubles, and rounding their bounds
/// outward only loosens them (by at most one float step): never a dropped
/// match, at worst a file kept that could have been skipped. Parquet
/// row-group and page statistics need no such rounding: they are the
/// values the file holds, in its own (narrower) Arrow type, which
/// dar-prune converts exactly.
pub fn widened_bounds(current: PrimitiveType, earlier: &[PrimitiveType]) -> WidenedBounds {
    if current == PrimitiveType::Double && earlier.contains(&PrimitiveType::Float) {
        WidenedBounds::FloatGrid
    } else {
        WidenedBounds::Exact
    }
}

/// How the bounds of a widened column read (see [`widened_bounds`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WidenedBounds {
    /// As written, converted exactly to the current type.
    Exact,
    /// Rounded outward onto the `float` (f32) grid: minima with
    /// [`float_grid_floor`], maxima with [`float_grid_ceil`].
    FloatGrid,
}

/// The largest `f32` value not above `v`, as an `f64` (`-inf` below every
/// float; NaN stays NaN).
pub fn float_grid_floor(v: f64) -> f64 {
    // The nearest float, then a step down where it lies above.
    let near = v as f32;
    if f64::from(near) > v {
        f64::from(near.next_down())
    } else {
        f64::from(near)
    }
}

/// The smallest `f32` value not below `v`, as an `f64` (`+inf` above every
/// float; NaN stays NaN).
pub fn float_grid_ceil(v: f64) -> f64 {
    // The nearest float, then a step up where it lies below.
    let near = v as f32;
    if f64::from(near) < v {
        f64::from(near.next_up())
    } else {
        f64::from(near)
    }
}

/// The types a primitive field had before its `delta.typeChanges` (the
/// entries about the field itself, not its elements, keys or values), in
/// history order. Entries that do not parse are left out (validation
/// reports them).
pub fn earlier_types(field: &StructField) -> Vec<PrimitiveType> {
    let Some(changes) = field
        .metadata
        .get(TYPE_CHANGES_KEY)
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    changes
        .iter()
        .filter(|e| {
            e.get("fieldPath")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
        })
        .filter_map(|e| e.get("fromType").and_then(Value::as_str))
        .filter_map(PrimitiveType::parse)
        .collect()
}

impl StructType {
    /// Walks every `delta.typeChanges` entry at every depth and fails on a
    /// malformed entry or on a `fromType -> toType` pair the protocol does not
    /// allow, naming the field (with its `fieldPath`) and both types.
    pub fn validate_type_changes(&self) -> Result<()> {
        validate_struct(self, "")
    }
}

fn validate_struct(s: &StructType, parent: &str) -> Result<()> {
    for field in &s.fields {
        let path = if parent.is_empty() {
            field.name.clone()
        } else {
            format!("{parent}.{}", field.name)
        };
        if let Some(changes) = field.metadata.get(TYPE_CHANGES_KEY) {
            validate_changes(changes, &path)?;
        }
        validate_nested(&field.data_type, &path)?;
    }
    Ok(())
}

/// Type changes live on the nearest struct field, so only structs reached
/// through arrays and maps need a further walk.
fn validate_nested(dt: &DataType, path: &str) -> Result<()> {
    match dt {
        DataType::Struct(s) => validate_struct(s, path),
        DataType::Array(a) => validate_nested(&a.element_type, &format!("{path}.element")),
        DataType::Map(m) => {
            validate_nested(&m.key_type, &format!("{path}.key"))?;
            validate_nested(&m.value_type, &format!("{path}.value"))
        }
        DataType::Primitive(_) | DataType::Variant => Ok(()),
    }
}

fn validate_changes(changes: &Value, path: &str) -> Result<()> {
    let malformed = |reason: String| LogError::InvalidTypeChangeMetadata {
        field: path.to_owned(),
        reason,
    };
    let entries = changes.as_array().ok_or_else(|| {
        malformed(format!(
            "{TYPE_CHANGES_KEY} must be an array, found {changes}"
        ))
    })?;
    for entry in entries {
        let type_of = |key: &str| -> Result<&str> {
            entry
                .get(key)
                .and_then(Value::as_str)
                .ok_or_else(|| malformed(format!("entry {entry} has no string \"{key}\"")))
        };
        let (from_name, to_name) = (type_of("fromType")?, type_of("toType")?);
        let field = match entry.get("fieldPath").and_then(Value::as_str) {
            Some(sub) if !sub.is_empty() => format!("{path}.{sub}"),
            _ => path.to_owned(),
        };
        let invalid = || LogError::InvalidTypeChange {
            field: field.clone(),
            from_type: from_name.to_owned(),
            to_type: to_name.to_owned(),
        };
        let (Some(from), Some(to)) = (
            PrimitiveType::parse(from_name),
            PrimitiveType::parse(to_name),
        ) else {
            return Err(invalid());
        };
        if !is_allowed_widening(from, to) {
            return Err(invalid());
        }
    }
    Ok(())
}
