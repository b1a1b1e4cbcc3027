//! The exact value of a numeric literal, in decimal: what comparing
//! numbers of different types by value needs ([`crate::coerce`]), and what
//! tells whether a float's shortest text is its exact value
//! ([`crate::expr`]'s display).

use crate::expr::Scalar;

/// The exact value of a numeric literal.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Number {
    NaN,
    Infinite { negative: bool },
    Finite(Decimal),
}

/// A finite number in decimal: `±int.frac`, `int` without leading and
/// `frac` without trailing zeros (zero is `+` with both empty).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Decimal {
    pub(crate) negative: bool,
    pub(crate) int: String,
    pub(crate) frac: String,
}

impl Number {
    /// The value of a numeric literal (`None` for other literals).
    pub(crate) fn of(s: &Scalar) -> Option<Number> {
        let from_int = |v: i128| Decimal::new(v < 0, v.unsigned_abs().to_string(), String::new());
        Some(match s {
            Scalar::Int8(v) => Number::Finite(from_int((*v).into())),
            Scalar::Int16(v) => Number::Finite(from_int((*v).into())),
            Scalar::Int32(v) => Number::Finite(from_int((*v).into())),
            Scalar::Int64(v) => Number::Finite(from_int((*v).into())),
            Scalar::Decimal128 { value, scale, .. } => {
                let digits = value.unsigned_abs().to_string();
                let negative = *value < 0;
                Number::Finite(match usize::try_from(*scale) {
                    Ok(s) if s >= digits.len() => {
                        Decimal::new(negative, String::new(), format!("{digits:0>s$}"))
                    }
                    Ok(s) => {
                        let (i, f) = digits.split_at(digits.len() - s);
                        Decimal::new(negative, i.to_string(), f.to_string())
                    }
                    Err(_) => {
                        let zeros = "0".repeat(usize::from(scale.unsigned_abs()));
                        Decimal::new(negative, format!("{digits}{zeros}"), String::new())
                    }
                })
            }
            Scalar::Float32(v) => Number::of_f64(f64::from(*v)),
            Scalar::Float64(v) => Number::of_f64(*v),
            _ => return None,
        })
    }

    pub(crate) fn of_f64(v: f64) -> Number {
        if v.is_nan() {
            return Number::NaN;
        }
        if v.is_infinite() {
            return Number::Infinite { negative: v < 0.0 };
        }
        // Every finite double is a decimal of at most 1074 digits after the
        // point, and Rust prints the exact digits asked for.
        let text = format!("{:.1074}", v.abs());
        let (i, f) = text.split_once('.').unwrap_or((&text, ""));
        Number::Finite(Decimal::new(v < 0.0, i.to_string(), f.to_string()))
    }
}

impl Decimal {
    pub(crate) fn new(negative: bool, int: String, frac: String) -> Self {
        let int = int.trim_start_matches('0').to_string();
        let frac = frac.trim_end_matches('0').to_string();
        let zero = int.is_empty() && frac.is_empty();
        Self {
            negative: negative && !zero,
            int,
            frac,
        }
    }

    /// `floor` and `ceil` of the value times `10^scale`, or `None` when
    /// they do not fit an `i128` (far outside every Delta type's range).
    pub(crate) fn scaled(&self, scale: usize) -> Option<(i128, i128)> {
        let kept: String = self.frac.chars().take(scale).collect();
        let digits = format!("{}{kept:0<scale$}", self.int);
        let inexact = self.frac.len() > scale;
        let magnitude: i128 = if digits.is_empty() {
            0
        } else if digits.len() > 38 {
            return None;
        } else {
            digits.parse().ok()?
        };
        let step = i128::from(inexact);
        Some(if self.negative {
            (-magnitude - step, -magnitude)
        } else {
            (magnitude, magnitude + step)
        })
    }
}

impl std::fmt::Display for Decimal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sign = if self.negative { "-" } else { "" };
        let int = if self.int.is_empty() { "0" } else { &self.int };
        if self.frac.is_empty() {
            write!(f, "{sign}{int}")
        } else {
            write!(f, "{sign}{int}.{}", self.frac)
        }
    }
}

/// Whether `text`, a plain decimal (`1.5`, `-0.25`, `300.0`), is exactly
/// the value of `v`.
pub(crate) fn is_exact_text(text: &str, v: f64) -> bool {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if !(int.chars().chain(frac.chars())).all(|c| c.is_ascii_digit()) {
        return false;
    }
    let written = Decimal::new(negative, int.to_string(), frac.to_string());
    Number::of_f64(v) == Number::Finite(written)
}
