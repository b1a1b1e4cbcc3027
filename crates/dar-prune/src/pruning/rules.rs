//! The rewrite rules of protocol §8.4, one leaf at a time, as Arrow kernels
//! over prepared statistics. Every function returns `Ok(None)` when the leaf
//! cannot be decided from the statistics at hand (unknown everywhere).
//!
//! | leaf            | may match where                                   |
//! |-----------------|---------------------------------------------------|
//! | `c = L`         | `min <= L AND max' >= L`                          |
//! | `c < L`, `<=`   | `min < L` / `min <= L`                            |
//! | `c > L`, `>=`   | `max' > L` / `max' >= L`                          |
//! | `c != L`        | `NOT (min = L AND max = L AND max exact)`         |
//! | `c IN (..)`     | any `c = Li`; `NOT IN` is all `c != Li`           |
//! | `c BETWEEN a,b` | `min <= b AND max' >= a` (never where `a > b`)    |
//! | `c LIKE 'p%'`   | `max' >= p AND (min <= p OR min LIKE 'p%')`       |
//! | `c IS NULL`     | `null_count > 0`                                  |
//! | `c IS NOT NULL` | `null_count < row_count`                          |
//!
//! Floats compare as SQL does ([`crate::float_order`]: the zeros equal,
//! NaN above every value). Where NaN may hide outside float bounds, the
//! tests that a NaN would pass (`>`, `>=`, `!=`, `NOT IN`, ...) are
//! unknown; `=`, `<`, `<=`, `IN` and `BETWEEN` stay usable.
//! Every value leaf is also ANDed with "has a non-NULL value". `max'` is the
//! widened maximum: for a possibly truncated string maximum `m` standing for
//! "prefix + ∞", `m' >= L` holds where `L <= prefix OR L LIKE 'prefix%'`.

use std::sync::Arc;

use arrow_arith::boolean::{and_kleene, not, or_kleene};
use arrow_array::{ArrayRef, BooleanArray, Datum, Scalar as Datum1, StringArray};
use arrow_ord::cmp;
use arrow_schema::ArrowError;
use arrow_string::like::starts_with;

use std::cmp::Ordering;

use arrow_array::Array;
use arrow_ord::ord::make_comparator;
use arrow_schema::SortOptions;

use super::prepare::Prepared;
use crate::expr::{CmpOp, Expr, Scalar};
use crate::in_list::{Lookup, SHORT_LIST, sorted_literals};

type R = Result<Option<BooleanArray>, ArrowError>;

fn datum(s: &Scalar) -> Datum1<ArrayRef> {
    Datum1::new(s.to_array())
}

fn is_nan(s: &Scalar) -> bool {
    matches!(s, Scalar::Float32(v) if v.is_nan()) || matches!(s, Scalar::Float64(v) if v.is_nan())
}

fn compare(op: CmpOp, l: &dyn Datum, r: &dyn Datum) -> Result<BooleanArray, ArrowError> {
    match op {
        CmpOp::Eq => cmp::eq(l, r),
        CmpOp::NotEq => cmp::neq(l, r),
        CmpOp::Lt => cmp::lt(l, r),
        CmpOp::LtEq => cmp::lt_eq(l, r),
        CmpOp::Gt => cmp::gt(l, r),
        CmpOp::GtEq => cmp::gt_eq(l, r),
    }
}

fn and_opt(a: Option<BooleanArray>, b: Option<BooleanArray>) -> R {
    Ok(match (a, b) {
        (Some(a), Some(b)) => Some(and_kleene(&a, &b)?),
        (Some(x), None) | (None, Some(x)) => {
            Some(and_kleene(&x, &BooleanArray::new_null(x.len()))?)
        }
        (None, None) => None,
    })
}

fn or_opt(a: Option<BooleanArray>, b: Option<BooleanArray>) -> R {
    Ok(match (a, b) {
        (Some(a), Some(b)) => Some(or_kleene(&a, &b)?),
        _ => None,
    })
}

/// Some value is `op L` given the lower bounds (`op` is `<` or `<=`). A NaN
/// the bounds leave out never passes: SQL orders NaN above every value
/// (`L` is not NaN here).
fn lower(p: &Prepared, op: CmpOp, l: &Scalar) -> R {
    let Some(min) = &p.min else { return Ok(None) };
    Ok(Some(compare(op, min, &datum(l))?))
}

/// Some value is `op L` given the upper bounds (`op` is `>` or `>=`).
/// `nan_matches`: a NaN row would satisfy the test (NaN is above every
/// value, so it does for `>` and `>=`).
fn upper(p: &Prepared, op: CmpOp, l: &Scalar, nan_matches: bool) -> R {
    if nan_matches && p.nan_possible {
        return Ok(None);
    }
    let Some(max) = &p.max else { return Ok(None) };
    let lit = datum(l);
    let normal = compare(op, max, &lit)?;
    let Some((flags, prefixes)) = &p.max_prefix else {
        return Ok(Some(normal));
    };
    // "prefix + ∞" is above L exactly when L <= prefix or L extends prefix.
    let below = cmp::gt_eq(prefixes, &lit)?;
    let extends = starts_with(&lit, prefixes)?;
    let truncated_ok = and_kleene(flags, &or_kleene(&below, &extends)?)?;
    Ok(Some(or_kleene(&normal, &truncated_ok)?))
}

fn eq(p: &Prepared, l: &Scalar) -> R {
    and_opt(lower(p, CmpOp::LtEq, l)?, upper(p, CmpOp::GtEq, l, false)?)
}

fn not_eq(p: &Prepared, l: &Scalar) -> R {
    if p.nan_possible {
        return Ok(None);
    }
    let (Some(min), Some(max)) = (&p.min, &p.max) else {
        return Ok(None);
    };
    let lit = datum(l);
    let mut single = and_kleene(&cmp::eq(min, &lit)?, &cmp::eq(max, &lit)?)?;
    if let Some((flags, _)) = &p.max_prefix {
        single = and_kleene(&single, &not(flags)?)?;
    }
    Ok(Some(not(&single)?))
}

/// Whether `low > high` (two literals of the column's type).
fn reversed(low: &Scalar, high: &Scalar) -> Result<bool, ArrowError> {
    let gt = cmp::gt(&datum(low), &datum(high))?;
    Ok(gt.len() == 1 && gt.is_valid(0) && gt.value(0))
}

fn with_values(p: &Prepared, r: Option<BooleanArray>) -> R {
    and_opt(r, p.has_non_null.clone())
}

/// `IN` / `NOT IN` over a long list by binary search in the sorted
/// literals (see [`crate::in_list`]): the same answers as the per-literal
/// rules, in `O(n log k)`. `None` when the short path must decide (a short
/// list, missing bounds, possibly truncated string maxima).
///
/// * `IN`: may match where the first literal `>= min` is `<= max`;
/// * `NOT IN`: cannot match only where `min = max` is in the list.
fn long_in_list(p: &Prepared, list: &[Scalar], negated: bool) -> Option<BooleanArray> {
    if list.len() <= SHORT_LIST || p.max_prefix.is_some() {
        return None;
    }
    let (min, max) = (p.min.as_ref()?, p.max.as_ref()?);
    let sorted = sorted_literals(list, min.data_type())?;
    let low = Lookup::new(min.as_ref(), sorted.as_ref())?;
    let high = Lookup::new(max.as_ref(), sorted.as_ref())?;
    let single = make_comparator(min.as_ref(), max.as_ref(), SortOptions::default()).ok()?;
    Some(
        (0..min.len())
            .map(|j| {
                if min.is_null(j) || max.is_null(j) {
                    return None;
                }
                Some(if negated {
                    single(j, j) != Ordering::Equal || !low.contains(j)
                } else {
                    let i = low.lower_bound(j);
                    i < sorted.len() && high.compare(j, i) != Ordering::Less
                })
            })
            .collect(),
    )
}

/// The rule for one leaf (see the module table).
pub(super) fn leaf(e: &Expr, p: &Prepared, n: usize) -> R {
    let all = |v: bool| Ok(Some(BooleanArray::from(vec![v; n])));
    match e {
        Expr::Compare { op, right, .. } => {
            let Expr::Literal(l) = right.as_ref() else {
                return Ok(None);
            };
            if l.is_null() {
                return all(false);
            }
            if is_nan(l) {
                return Ok(None);
            }
            let r = match op {
                CmpOp::Eq => eq(p, l)?,
                CmpOp::NotEq => not_eq(p, l)?,
                CmpOp::Lt | CmpOp::LtEq => lower(p, *op, l)?,
                CmpOp::Gt | CmpOp::GtEq => upper(p, *op, l, true)?,
            };
            with_values(p, r)
        }
        Expr::InList {
            list,
            negated: false,
            ..
        } => {
            if list.iter().any(is_nan) {
                return Ok(None);
            }
            if let Some(r) = long_in_list(p, list, false) {
                return with_values(p, Some(r));
            }
            let mut acc = Some(BooleanArray::from(vec![false; n]));
            for item in list.iter().filter(|s| !s.is_null()) {
                acc = or_opt(acc, eq(p, item)?)?;
            }
            with_values(p, acc)
        }
        Expr::InList {
            list,
            negated: true,
            ..
        } => {
            if list.iter().any(Scalar::is_null) {
                // `x NOT IN (.., NULL)` is never true.
                return all(false);
            }
            if list.iter().any(is_nan) {
                return Ok(None);
            }
            if !p.nan_possible
                && let Some(r) = long_in_list(p, list, true)
            {
                return with_values(p, Some(r));
            }
            let mut acc = Some(BooleanArray::from(vec![true; n]));
            for item in list {
                acc = and_opt(acc, not_eq(p, item)?)?;
            }
            with_values(p, acc)
        }
        Expr::Between {
            low, high, negated, ..
        } => {
            if low.is_null() || high.is_null() {
                // NULL bounds: never true for BETWEEN; NOT BETWEEN may still
                // be true through the known side, so stay unknown.
                return if *negated {
                    with_values(p, None)
                } else {
                    all(false)
                };
            }
            if is_nan(low) || is_nan(high) {
                return Ok(None);
            }
            if !*negated && reversed(low, high)? {
                // `x BETWEEN 3 AND 2` holds for no value (binding writes
                // `x = 2.5` on an integer column so).
                return all(false);
            }
            let r = if *negated {
                or_opt(lower(p, CmpOp::Lt, low)?, upper(p, CmpOp::Gt, high, true)?)?
            } else {
                and_opt(
                    lower(p, CmpOp::LtEq, high)?,
                    upper(p, CmpOp::GtEq, low, false)?,
                )?
            };
            with_values(p, r)
        }
        Expr::StartsWith {
            prefix,
            negated: false,
            ..
        } => {
            if prefix.is_empty() {
                return Ok(p.has_non_null.clone());
            }
            let l = Scalar::Utf8(prefix.clone());
            let min_ok = match &p.min {
                Some(min) => {
                    let lit = datum(&l);
                    Some(or_kleene(
                        &cmp::lt_eq(min, &lit)?,
                        &starts_with(min, &lit)?,
                    )?)
                }
                None => None,
            };
            with_values(p, and_opt(min_ok, upper(p, CmpOp::GtEq, &l, false)?)?)
        }
        Expr::StartsWith {
            prefix,
            negated: true,
            ..
        } => {
            let maxp: Option<ArrayRef> = p
                .max_prefix
                .as_ref()
                .map(|(_, m)| m.clone())
                .or_else(|| p.max.clone());
            let (Some(min), Some(maxp)) = (&p.min, maxp) else {
                return with_values(p, None);
            };
            let lit: Datum1<ArrayRef> =
                Datum1::new(Arc::new(StringArray::from(vec![prefix.as_str()])));
            let inside = and_kleene(&starts_with(min, &lit)?, &starts_with(&maxp, &lit)?)?;
            with_values(p, Some(not(&inside)?))
        }
        Expr::IsNull { negated: false, .. } => Ok(p.has_null.clone()),
        Expr::IsNull { negated: true, .. } => Ok(p.has_non_null.clone()),
        _ => Ok(None),
    }
}
