//! SQL-like text for expressions and literals (used in errors and logs; the
//! output parses back with [`crate::parse_expr`]).

use std::fmt;

use arrow_cast::display::array_value_to_string;

use super::{Expr, MAX_EXPR_DEPTH, Scalar};

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Null => f.write_str("NULL"),
            Self::Boolean(v) => f.write_str(if *v { "TRUE" } else { "FALSE" }),
            Self::Int8(v) => write!(f, "{v}"),
            Self::Int16(v) => write!(f, "{v}"),
            Self::Int32(v) => write!(f, "{v}"),
            Self::Int64(v) => write!(f, "{v}"),
            // A plain decimal parses back as a decimal literal, which
            // compares by its exact value: written so only where that is
            // the float's value (`1.5`), else in a form that parses back as
            // the same float (`1e-1`, a DOUBLE).
            Self::Float32(v) if v.is_finite() => {
                let text = format!("{v:?}");
                if crate::exact::is_exact_text(&text, f64::from(*v)) {
                    f.write_str(&text)
                } else {
                    write!(f, "CAST('{v}' AS FLOAT)")
                }
            }
            Self::Float64(v) if v.is_finite() => {
                let text = format!("{v:?}");
                if text.contains('e') || crate::exact::is_exact_text(&text, *v) {
                    f.write_str(&text)
                } else {
                    write!(f, "{v:e}")
                }
            }
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
        write_expr(self, f, 1)
    }
}

/// Writes `e` at nesting level `depth`; below [`MAX_EXPR_DEPTH`] levels the
/// rest is `...` (a tree that deep is rejected when bound, but may still
/// be printed in the error that says so).
fn write_expr(e: &Expr, f: &mut fmt::Formatter<'_>, depth: usize) -> fmt::Result {
    if depth > MAX_EXPR_DEPTH {
        return f.write_str("...");
    }
    let not = |negated: &bool| if *negated { "NOT " } else { "" };
    fn sub(x: &Expr, depth: usize) -> Nested<'_> {
        Nested(x, depth + 1)
    }
    match e {
        Expr::Column(c) => write!(f, "{c}"),
        Expr::Literal(s) => write!(f, "{s}"),
        Expr::Compare { left, op, right } => {
            write!(
                f,
                "{} {} {}",
                sub(left, depth),
                op.as_str(),
                sub(right, depth)
            )
        }
        Expr::InList {
            expr,
            list: l,
            negated,
        } => write!(f, "{} {}IN ({})", sub(expr, depth), not(negated), list(l)),
        Expr::IsNull { expr, negated } => write!(f, "{} IS {}NULL", sub(expr, depth), not(negated)),
        Expr::Between {
            expr,
            low,
            high,
            negated,
        } => {
            write!(
                f,
                "{} {}BETWEEN {low} AND {high}",
                sub(expr, depth),
                not(negated)
            )
        }
        Expr::StartsWith {
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
                "{} {}LIKE {}",
                sub(expr, depth),
                not(negated),
                Scalar::Utf8(format!("{escaped}%"))
            )
        }
        Expr::And(children) => junction(f, children, "AND", "TRUE", depth),
        Expr::Or(children) => junction(f, children, "OR", "FALSE", depth),
        Expr::Not(inner) => write!(f, "NOT ({})", sub(inner, depth)),
    }
}

/// `(a AND b AND c)`; `empty` for no children.
fn junction(
    f: &mut fmt::Formatter<'_>,
    children: &[Expr],
    op: &str,
    empty: &str,
    depth: usize,
) -> fmt::Result {
    if children.is_empty() {
        return f.write_str(empty);
    }
    f.write_str("(")?;
    for (i, c) in children.iter().enumerate() {
        if i > 0 {
            write!(f, " {op} ")?;
        }
        write_expr(c, f, depth + 1)?;
    }
    f.write_str(")")
}

/// A child expression with its nesting level, for `write!`.
struct Nested<'a>(&'a Expr, usize);

impl fmt::Display for Nested<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_expr(self.0, f, self.1)
    }
}
