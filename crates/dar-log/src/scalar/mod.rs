//! Delta scalar values from their text forms (partition values, JSON stats)
//! into typed Arrow columns. Pure; shared by `partition` and `stats`.

use arrow_array::{ArrayRef, make_array};
use arrow_cast::{CastOptions, cast_with_options};
use arrow_schema::{ArrowError, DataType as ArrowType};

mod builder;
mod parse;

pub(crate) use self::builder::ScalarBuilder;
pub(crate) use self::parse::parse_integer;
#[cfg(test)]
pub(crate) use self::parse::{parse_decimal, parse_timestamp};

/// Casts a checkpoint column to a table type, treating every timestamp as
/// epoch-based whatever its zone label: arrow-cast would otherwise shift
/// zoned and zone-less values through named time zones, which it cannot
/// resolve without `chrono-tz`, and Delta's timestamps are UTC instants
/// (`timestamp`) or wall-clock values stored as if UTC (`timestamp_ntz`).
/// `safe` turns values that do not fit into nulls instead of an error.
pub(crate) fn cast_column(
    array: &ArrayRef,
    target: &ArrowType,
    safe: bool,
) -> Result<ArrayRef, ArrowError> {
    let options = CastOptions {
        safe,
        ..Default::default()
    };
    let ArrowType::Timestamp(unit, zone) = target else {
        return cast_with_options(array, target, &options);
    };
    let naive =
        |a: &ArrayRef, unit, zone: Option<std::sync::Arc<str>>| -> Result<ArrayRef, ArrowError> {
            let data = a
                .to_data()
                .into_builder()
                .data_type(ArrowType::Timestamp(unit, zone))
                .build()?;
            Ok(make_array(data))
        };
    let source = match array.data_type() {
        ArrowType::Timestamp(u, Some(_)) => naive(array, *u, None)?,
        _ => array.clone(),
    };
    let cast = cast_with_options(&source, &ArrowType::Timestamp(*unit, None), &options)?;
    naive(&cast, *unit, zone.clone())
}

#[cfg(test)]
mod tests;
