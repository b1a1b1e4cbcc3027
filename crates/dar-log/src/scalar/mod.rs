//! Delta scalar values from their text forms (partition values, JSON stats)
//! into typed Arrow columns. Pure; shared by `partition` and `stats`.

mod builder;
mod parse;

pub(crate) use self::builder::ScalarBuilder;
pub(crate) use self::parse::parse_integer;
#[cfg(test)]
pub(crate) use self::parse::{parse_decimal, parse_timestamp};

#[cfg(test)]
mod tests;
