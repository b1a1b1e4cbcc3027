//! The text form of predicates, parsed with `sqlparser` (its generic
//! dialect, with `NOT (` and `CAST(` parsed once: see `dialect.rs`).
//!
//! Supported: column names (`a`, nested `a.b.c`, quoted `"odd name"`),
//! literals (integers, decimals `1.5`, exponents `1e3` as DOUBLE, strings,
//! `X'0A'` binaries, `TRUE`/`FALSE`/`NULL`, `DATE '...'`, `TIMESTAMP '...'`,
//! `TIMESTAMP_NTZ '...'`, `CAST('<literal>' AS <type>)`), `= != <> < <= > >=`,
//! `[NOT] IN (...)`, `IS [NOT] NULL`, `[NOT] BETWEEN .. AND ..`,
//! `[NOT] LIKE 'prefix%'`, `AND`, `OR`, `NOT` and parentheses. Anything else
//! is an [`PruneError::Unsupported`] error naming the construct and where it
//! starts.

use arrow_cast::cast::{CastOptions, cast_with_options};
use arrow_schema::{DataType as ArrowType, TimeUnit};
use sqlparser::ast::{
    BinaryOperator, CastKind, DataType as SqlType, Expr as SqlExpr, Spanned, UnaryOperator, Value,
};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Location, Token};

use crate::error::{PruneError, Result};
use crate::expr::{CmpOp, ColumnPath, Expr, MAX_EXPR_DEPTH, Scalar, UTC, check_depth, dismantle};

mod dialect;
mod tree;

pub use tree::{MAX_KEYWORD_PAREN_DEPTH, MAX_NAME_PARTS};

/// Parses a predicate such as `a > 5 AND b IN ('x', 'y')` into an [`Expr`].
/// Column names are not checked here; [`crate::Predicate::try_new`] does that.
///
/// `AND`/`OR` chains of any length become one flat node; nesting deeper
/// than [`crate::MAX_EXPR_DEPTH`] is a [`PruneError::TooDeep`] error, and
/// parentheses after keywords nested deeper than
/// [`MAX_KEYWORD_PAREN_DEPTH`] a [`PruneError::TooDeepAfterKeyword`] error.
pub fn parse_expr(text: &str) -> Result<Expr> {
    let dialect = dialect::PredicateDialect;
    tree::scan_tokens(&dialect, text)?;
    let located = |e| parser_error(e, text);
    // sqlparser's own limit is a backstop (its stack grows on demand): the
    // tree's depth is checked below, flat chains counted once.
    let mut parser = Parser::new(&dialect)
        .with_recursion_limit(SQL_RECURSION_LIMIT)
        .try_with_sql(text)
        .map_err(located)?;
    let mut sql = parser.parse_expr().map_err(located)?;
    let next = parser.peek_token();
    if next.token != Token::EOF {
        tree::dismantle(sql);
        return Err(PruneError::Parse {
            line: next.span.start.line,
            column: next.span.start.column,
            message: format!(
                "unexpected `{}` after the end of the predicate",
                shorten(&next.token.to_string())
            ),
        });
    }
    if tree::too_deep(&mut sql) {
        tree::dismantle(sql);
        return Err(PruneError::TooDeep {
            limit: MAX_EXPR_DEPTH,
        });
    }
    let converted = convert(&sql);
    tree::dismantle(sql);
    let expr = converted?;
    if let Err(e) = check_depth(&expr) {
        dismantle(expr);
        return Err(e);
    }
    Ok(expr)
}

/// At most [`ECHO_LIMIT`] characters of `text` (an error quotes what it
/// found, and a hostile input can be huge).
pub(crate) fn shorten(text: &str) -> String {
    match text.char_indices().nth(ECHO_LIMIT) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}... ({} bytes)", &text[..cut], text.len()),
    }
}

/// sqlparser's recursion limit: each nesting level of the predicate costs
/// sqlparser one or two levels (`NOT (` is two).
const SQL_RECURSION_LIMIT: usize = 4 * MAX_EXPR_DEPTH;

/// Characters of input an error message quotes at most.
const ECHO_LIMIT: usize = 60;

/// sqlparser reports positions inside its message (`... at Line: 1, Column: 5`),
/// except at the end of input, which is then where the error points.
fn parser_error(e: ParserError, input: &str) -> PruneError {
    let text = match &e {
        ParserError::TokenizerError(m) | ParserError::ParserError(m) => m.clone(),
        other => other.to_string(),
    };
    if matches!(e, ParserError::RecursionLimitExceeded) {
        return PruneError::TooDeep {
            limit: MAX_EXPR_DEPTH,
        };
    }
    let (message, line, column) = match text.rfind(" at Line: ") {
        Some(at) => {
            let pos = &text[at + " at Line: ".len()..];
            let mut nums = pos
                .split(", Column: ")
                .map(|n| n.trim().parse::<u64>().unwrap_or(0));
            let line = nums.next().unwrap_or(0);
            let column = nums.next().unwrap_or(0);
            (text[..at].to_string(), line, column)
        }
        None => {
            let line = input.matches('\n').count() as u64 + 1;
            let last = input.rsplit('\n').next().unwrap_or("");
            (text, line, last.chars().count() as u64 + 1)
        }
    };
    PruneError::Parse {
        line,
        column,
        message,
    }
}

fn unsupported(at: Location, what: impl Into<String>) -> PruneError {
    PruneError::Unsupported {
        line: at.line,
        column: at.column,
        what: what.into(),
    }
}

/// Where `e` starts: the start of its leftmost operand, found without
/// recursing (sqlparser's `span()` walks the whole subtree).
fn start(e: &SqlExpr) -> Location {
    let mut e = e;
    loop {
        e = match e {
            SqlExpr::BinaryOp { left, .. }
            | SqlExpr::IsNull(left)
            | SqlExpr::IsNotNull(left)
            | SqlExpr::IsTrue(left)
            | SqlExpr::IsNotTrue(left)
            | SqlExpr::IsFalse(left)
            | SqlExpr::IsNotFalse(left)
            | SqlExpr::IsUnknown(left)
            | SqlExpr::IsNotUnknown(left)
            | SqlExpr::IsDistinctFrom(left, _)
            | SqlExpr::IsNotDistinctFrom(left, _)
            | SqlExpr::InList { expr: left, .. }
            | SqlExpr::Between { expr: left, .. }
            | SqlExpr::Like { expr: left, .. }
            | SqlExpr::ILike { expr: left, .. }
            | SqlExpr::SimilarTo { expr: left, .. }
            | SqlExpr::RLike { expr: left, .. }
            | SqlExpr::AnyOp { left, .. }
            | SqlExpr::AllOp { left, .. }
            | SqlExpr::AtTimeZone {
                timestamp: left, ..
            }
            | SqlExpr::Collate { expr: left, .. }
            | SqlExpr::CompoundFieldAccess { root: left, .. }
            | SqlExpr::JsonAccess { value: left, .. } => left,
            other => return other.span().start,
        };
    }
}

/// The terms of an `AND` (`is_and`) or `OR` chain, flattened through
/// parentheses, left to right, without recursion.
fn junction(e: &SqlExpr, is_and: bool) -> Result<Expr> {
    let op = if is_and {
        BinaryOperator::And
    } else {
        BinaryOperator::Or
    };
    let mut terms = Vec::new();
    let mut stack = vec![e];
    while let Some(node) = stack.pop() {
        match node {
            SqlExpr::BinaryOp { left, op: o, right } if *o == op => {
                stack.push(right);
                stack.push(left);
            }
            SqlExpr::Nested(inner) if matches!(inner.as_ref(), SqlExpr::BinaryOp { op: o, .. } if *o == op) =>
            {
                stack.push(inner);
            }
            other => terms.push(convert(other)?),
        }
    }
    Ok(if is_and {
        Expr::And(terms)
    } else {
        Expr::Or(terms)
    })
}

fn convert(e: &SqlExpr) -> Result<Expr> {
    Ok(match e {
        SqlExpr::Identifier(i) => Expr::Column(ColumnPath::new([i.value.clone()])),
        SqlExpr::CompoundIdentifier(parts) => {
            Expr::Column(ColumnPath::new(parts.iter().map(|i| i.value.clone())))
        }
        SqlExpr::Nested(inner) => convert(inner)?,
        SqlExpr::BinaryOp { left, op, right } => {
            let cmp = match op {
                BinaryOperator::And => return junction(e, true),
                BinaryOperator::Or => return junction(e, false),
                BinaryOperator::Eq => CmpOp::Eq,
                BinaryOperator::NotEq => CmpOp::NotEq,
                BinaryOperator::Lt => CmpOp::Lt,
                BinaryOperator::LtEq => CmpOp::LtEq,
                BinaryOperator::Gt => CmpOp::Gt,
                BinaryOperator::GtEq => CmpOp::GtEq,
                other => {
                    return Err(unsupported(
                        start(right),
                        format!("operator `{other}` (supported: = != <> < <= > >= AND OR)"),
                    ));
                }
            };
            convert(left)?.compare(cmp, convert(right)?)
        }
        SqlExpr::UnaryOp {
            op: UnaryOperator::Not,
            expr,
        } => convert(expr)?.not(),
        SqlExpr::IsNull(inner) => convert(inner)?.is_null(),
        SqlExpr::IsNotNull(inner) => convert(inner)?.is_not_null(),
        SqlExpr::InList {
            expr,
            list,
            negated,
        } => Expr::InList {
            expr: Box::new(convert(expr)?),
            list: list.iter().map(literal).collect::<Result<_>>()?,
            negated: *negated,
        },
        SqlExpr::Between {
            expr,
            negated,
            low,
            high,
        } => Expr::Between {
            expr: Box::new(convert(expr)?),
            low: literal(low)?,
            high: literal(high)?,
            negated: *negated,
        },
        SqlExpr::Like {
            negated,
            any: false,
            expr,
            pattern,
            escape_char,
        } => {
            let escape = match escape_char.as_ref().map(|v| &v.value) {
                None => '\\',
                Some(Value::SingleQuotedString(s)) if s.chars().count() == 1 => {
                    s.chars().next().unwrap_or('\\')
                }
                Some(_) => {
                    return Err(unsupported(
                        start(pattern),
                        "ESCAPE needs a single character",
                    ));
                }
            };
            let Scalar::Utf8(p) = literal(pattern)? else {
                return Err(unsupported(
                    start(pattern),
                    "LIKE needs a string literal pattern",
                ));
            };
            let column = convert(expr)?;
            match like_prefix(&p, escape) {
                Some((prefix, true)) => Expr::StartsWith {
                    expr: Box::new(column),
                    prefix,
                    negated: *negated,
                },
                Some((exact, false)) => {
                    let op = if *negated { CmpOp::NotEq } else { CmpOp::Eq };
                    column.compare(op, Expr::Literal(Scalar::Utf8(exact)))
                }
                None => {
                    return Err(unsupported(
                        start(pattern),
                        format!(
                            "LIKE pattern '{p}': only a literal prefix followed by one trailing % is supported"
                        ),
                    ));
                }
            }
        }
        SqlExpr::Value(_)
        | SqlExpr::TypedString(_)
        | SqlExpr::Cast { .. }
        | SqlExpr::UnaryOp { .. } => Expr::Literal(literal(e)?),
        other => {
            let kind = shorten(&other.to_string());
            return Err(unsupported(start(other), format!("expression `{kind}`")));
        }
    })
}

/// `'abc%'` is prefix `abc`; `'abc'` (no wildcard) is an exact match; other
/// patterns (inner `%`, any `_`) are not supported. Returns `(text, is_prefix)`.
fn like_prefix(pattern: &str, escape: char) -> Option<(String, bool)> {
    let mut out = String::new();
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        if c == escape {
            out.push(chars.next()?);
        } else if c == '%' {
            return if chars.peek().is_none() {
                Some((out, true))
            } else {
                None
            };
        } else if c == '_' {
            return None;
        } else {
            out.push(c);
        }
    }
    Some((out, false))
}

fn literal(e: &SqlExpr) -> Result<Scalar> {
    let at = start(e);
    match e {
        SqlExpr::Nested(inner) => literal(inner),
        SqlExpr::Value(v) => value(&v.value, at),
        SqlExpr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match literal(expr)? {
            Scalar::Int64(v) => Ok(Scalar::Int64(-v)),
            Scalar::Float64(v) => Ok(Scalar::Float64(-v)),
            Scalar::Decimal128 {
                value,
                precision,
                scale,
            } => Ok(Scalar::Decimal128 {
                value: -value,
                precision,
                scale,
            }),
            other => Err(unsupported(at, format!("unary minus on {other}"))),
        },
        SqlExpr::UnaryOp {
            op: UnaryOperator::Plus,
            expr,
        } => literal(expr),
        SqlExpr::TypedString(ts) => {
            let Value::SingleQuotedString(text) = &ts.value.value else {
                return Err(unsupported(
                    at,
                    "typed literal needs a single-quoted string",
                ));
            };
            cast_text(text, &ts.data_type, at)
        }
        SqlExpr::Cast {
            kind: CastKind::Cast | CastKind::DoubleColon,
            expr,
            data_type,
            format: None,
            ..
        } => match literal(expr)? {
            Scalar::Utf8(text) => cast_text(&text, data_type, at),
            other => cast_scalar(&other, data_type, at),
        },
        other => Err(unsupported(
            at,
            format!("`{other}` where a literal is expected"),
        )),
    }
}

fn value(v: &Value, at: Location) -> Result<Scalar> {
    Ok(match v {
        Value::Number(text, _) => number(text, at)?,
        Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Scalar::Utf8(s.clone()),
        Value::HexStringLiteral(h) => {
            Scalar::Binary(hex(h).ok_or_else(|| unsupported(at, format!("hex literal X'{h}'")))?)
        }
        Value::Boolean(b) => Scalar::Boolean(*b),
        Value::Null => Scalar::Null,
        other => return Err(unsupported(at, format!("literal `{other}`"))),
    })
}

fn hex(h: &str) -> Option<Vec<u8>> {
    if !h.len().is_multiple_of(2) {
        return None;
    }
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Integers are `long` (narrowed later to the column type), plain decimals
/// keep their digits as `decimal(p, s)`, exponent forms are `double`.
fn number(text: &str, at: Location) -> Result<Scalar> {
    if let Ok(i) = text.parse::<i64>() {
        return Ok(Scalar::Int64(i));
    }
    let bad = || unsupported(at, format!("number `{text}` out of range"));
    if text.contains(['e', 'E']) {
        return text.parse::<f64>().map(Scalar::Float64).map_err(|_| bad());
    }
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let digits = format!("{int}{frac}");
    let value = digits.parse::<i128>().map_err(|_| bad())?;
    let scale = i8::try_from(frac.len()).map_err(|_| bad())?;
    let precision = u8::try_from(digits.trim_start_matches('0').len().max(1).max(frac.len()))
        .map_err(|_| bad())?;
    if precision > 38 {
        return Err(bad());
    }
    Ok(Scalar::Decimal128 {
        value,
        precision,
        scale,
    })
}

fn sql_type(t: &SqlType, at: Location) -> Result<ArrowType> {
    let name = t.to_string().to_uppercase();
    Ok(match name.as_str() {
        "DATE" => ArrowType::Date32,
        "TIMESTAMP" | "TIMESTAMP WITH TIME ZONE" | "TIMESTAMPTZ" | "TIMESTAMP_LTZ" => {
            ArrowType::Timestamp(TimeUnit::Microsecond, Some(UTC.into()))
        }
        "TIMESTAMP_NTZ" | "TIMESTAMP WITHOUT TIME ZONE" | "DATETIME" => {
            ArrowType::Timestamp(TimeUnit::Microsecond, None)
        }
        "DOUBLE" | "DOUBLE PRECISION" | "FLOAT8" => ArrowType::Float64,
        "FLOAT" | "REAL" | "FLOAT4" => ArrowType::Float32,
        "TINYINT" | "BYTE" => ArrowType::Int8,
        "SMALLINT" | "SHORT" => ArrowType::Int16,
        "INT" | "INTEGER" => ArrowType::Int32,
        "BIGINT" | "LONG" => ArrowType::Int64,
        "STRING" | "TEXT" | "VARCHAR" => ArrowType::Utf8,
        "BOOLEAN" | "BOOL" => ArrowType::Boolean,
        _ => match t {
            SqlType::Decimal(info) | SqlType::Numeric(info) => {
                use sqlparser::ast::ExactNumberInfo as E;
                let (p, s) = match info {
                    E::PrecisionAndScale(p, s) => (*p, *s),
                    E::Precision(p) => (*p, 0),
                    E::None => (10, 0),
                };
                let p = u8::try_from(p).ok().filter(|p| (1..=38).contains(p));
                let s = i8::try_from(s).ok().filter(|s| (0..=38).contains(s));
                match (p, s) {
                    (Some(p), Some(s)) if s as u8 <= p => ArrowType::Decimal128(p, s),
                    _ => return Err(unsupported(at, format!("type {name}"))),
                }
            }
            _ => return Err(unsupported(at, format!("type {name}"))),
        },
    })
}

fn cast_text(text: &str, t: &SqlType, at: Location) -> Result<Scalar> {
    cast_scalar(&Scalar::Utf8(text.to_string()), t, at)
}

fn cast_scalar(s: &Scalar, t: &SqlType, at: Location) -> Result<Scalar> {
    let target = sql_type(t, at)?;
    let strict = CastOptions {
        safe: false,
        ..Default::default()
    };
    let out =
        cast_with_options(&s.to_array(), &target, &strict).map_err(|e| PruneError::Parse {
            line: at.line,
            column: at.column,
            message: format!("{s} is not a valid {t}: {e}"),
        })?;
    Scalar::from_array(&out, 0).ok_or_else(|| unsupported(at, format!("type {t}")))
}

#[cfg(test)]
mod tests;
