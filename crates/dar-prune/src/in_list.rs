//! Long `IN` lists without quadratic work: the literals are sorted once
//! into one Arrow array, and each row (or each container's bounds) is
//! looked up by binary search with an arrow-ord comparator, so a list of
//! 100,000 values costs `O((rows + k) log k)` instead of `O(rows * k)`.
//!
//! Comparators order floats by IEEE total order, exactly as the
//! `arrow_ord::cmp` kernels the short path uses; both paths first put
//! floats in SQL-canonical form ([`crate::float_order`]: `-0.0` is `0.0`,
//! every NaN one NaN), so they agree, and agree with SQL.

use std::cmp::Ordering;

use arrow_array::{Array, ArrayRef, BooleanArray};
use arrow_ord::ord::{DynComparator, make_comparator};
use arrow_schema::{DataType, SortOptions};

use crate::expr::Scalar;

/// Lists up to this long are evaluated one literal at a time.
pub(crate) const SHORT_LIST: usize = 8;

/// The non-NULL literals of a list as one sorted array of type `to`, or
/// `None` when they do not form one array (mixed types, a failed cast).
pub(crate) fn sorted_literals(list: &[Scalar], to: &DataType) -> Option<ArrayRef> {
    let arrays: Vec<ArrayRef> = list
        .iter()
        .filter(|s| !s.is_null())
        .map(Scalar::to_array)
        .collect();
    let refs: Vec<&dyn Array> = arrays.iter().map(AsRef::as_ref).collect();
    let all = arrow_select::concat::concat(&refs).ok()?;
    let all = if all.data_type() == to {
        all
    } else {
        let strict = arrow_cast::cast::CastOptions {
            safe: false,
            ..Default::default()
        };
        arrow_cast::cast::cast_with_options(&all, to, &strict).ok()?
    };
    arrow_ord::sort::sort(&crate::float_order::normalize(&all), None).ok()
}

/// Looks values of one array up in a sorted literal array.
pub(crate) struct Lookup {
    cmp: DynComparator,
    len: usize,
}

impl Lookup {
    /// A lookup of `values` (any array of the literals' type) in `sorted`.
    pub(crate) fn new(values: &dyn Array, sorted: &dyn Array) -> Option<Self> {
        let cmp = make_comparator(values, sorted, SortOptions::default()).ok()?;
        Some(Self {
            cmp,
            len: sorted.len(),
        })
    }

    /// The index of the first literal `>=` `values[row]` (`len` if none).
    pub(crate) fn lower_bound(&self, row: usize) -> usize {
        let (mut lo, mut hi) = (0, self.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            // values[row] > literal[mid]: the bound is further right.
            if (self.cmp)(row, mid) == Ordering::Greater {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Whether `values[row]` (not NULL) equals some literal.
    pub(crate) fn contains(&self, row: usize) -> bool {
        let i = self.lower_bound(row);
        i < self.len && (self.cmp)(row, i) == Ordering::Equal
    }

    /// How `values[row]` compares with literal `i`.
    pub(crate) fn compare(&self, row: usize, i: usize) -> Ordering {
        (self.cmp)(row, i)
    }
}

/// `values IN list` for a long list: NULL where the value is NULL, or where
/// it matches nothing and the list holds a NULL.
pub(crate) fn evaluate(values: &ArrayRef, list: &[Scalar]) -> Option<BooleanArray> {
    let sorted = sorted_literals(list, values.data_type())?;
    let values = &crate::float_order::normalize(values);
    let lookup = Lookup::new(values.as_ref(), sorted.as_ref())?;
    let list_null = list.iter().any(Scalar::is_null);
    Some(
        (0..values.len())
            .map(|row| {
                if values.is_null(row) {
                    None
                } else if lookup.contains(row) {
                    Some(true)
                } else if list_null {
                    None
                } else {
                    Some(false)
                }
            })
            .collect(),
    )
}
