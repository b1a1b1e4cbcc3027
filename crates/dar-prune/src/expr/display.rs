//! SQL-like text for expressions and literals (used in errors and logs; the
//! output parses back with [`crate::parse_expr`]).

use std::fmt;

use arrow_cast::display::array_value_to_string;

use super::{Expr, Scalar};

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Null => f.write_str("NULL"),
            Self::Boolean(v) => f.write_str(if *v { "TRUE" } else { "FALSE" }),
            Self::Int8(v) => write!(f, "{v}"),
            Self::Int16(v) => write!(f, "{v}"),
            Self::Int32(v) => write!(f, "{v}"),
            Self::Int64(v) => write!(f, "{v}"),
            Self::Float32(v) if v.is_finite() => write!(f, "{v:?}"),
            Self::Float64(v) if v.is_finite() => write!(f, "{v:?}"),
            Self::Float32(v) => write!(f, "CAST('{v}' AS FLOAT)"),
            Self::Float64(v) => write!(f, "CAST('{v}' AS DOUBLE)"),
            Self::Utf8(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Self::Binary(b) => {
                f.write_str("X'")?;
                for byte in b {
                    write!(f, "{byte:02X}")?;
                }
                f.write_str("'")
            }
            Self::Decimal128 { .. }
            | Self::Date32(_)
            | Self::Timestamp(_)
            | Self::TimestampNtz(_) => {
                let text = array_value_to_string(&self.to_array(), 0).map_err(|_| fmt::Error)?;
                match self {
                    Self::Date32(_) => write!(f, "DATE '{text}'"),
                    Self::Timestamp(_) => write!(f, "TIMESTAMP '{text}'"),
                    Self::TimestampNtz(_) => write!(f, "TIMESTAMP_NTZ '{text}'"),
                    _ => f.write_str(&text),
                }
            }
        }
    }
}

fn list(items: &[Scalar]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let not = |negated: &bool| if *negated { "NOT " } else { "" };
        match self {
            Self::Column(c) => write!(f, "{c}"),
            Self::Literal(s) => write!(f, "{s}"),
            Self::Compare { left, op, right } => write!(f, "{left} {} {right}", op.as_str()),
            Self::InList {
                expr,
                list: l,
                negated,
            } => write!(f, "{expr} {}IN ({})", not(negated), list(l)),
            Self::IsNull { expr, negated } => write!(f, "{expr} IS {}NULL", not(negated)),
            Self::Between {
                expr,
                low,
                high,
                negated,
            } => {
                write!(f, "{expr} {}BETWEEN {low} AND {high}", not(negated))
            }
            Self::StartsWith {
                expr,
                prefix,
                negated,
            } => {
                let escaped = prefix
                    .replace('\\', "\\\\")
                    .replace('%', "\\%")
                    .replace('_', "\\_");
                write!(
                    f,
                    "{expr} {}LIKE {}",
                    not(negated),
                    Scalar::Utf8(format!("{escaped}%"))
                )
            }
            Self::And(a, b) => write!(f, "({a} AND {b})"),
            Self::Or(a, b) => write!(f, "({a} OR {b})"),
            Self::Not(e) => write!(f, "NOT ({e})"),
        }
    }
}
