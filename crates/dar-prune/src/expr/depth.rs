//! The nesting limit of expressions, checked without recursion.
//!
//! Chains of `AND` / `OR` are flat (one n-ary node), so depth comes only
//! from real nesting: `NOT`, an `OR` inside an `AND`, an operand inside a
//! comparison. [`MAX_EXPR_DEPTH`] bounds it, which is what makes the
//! recursive passes over a bound tree (binding, pruning, evaluation,
//! display) safe on any input.

use super::Expr;
use crate::error::{PruneError, Result};

/// The deepest nesting a predicate may have, counting every node on the
/// longest path from the root to a leaf (`a = 1` is 2 deep: the comparison
/// and its operands; `NOT (a = 1 OR b = 2)` is 4). Flat `AND`/`OR` chains
/// of any length add one level. Parsing text applies the same limit to
/// nested parentheses.
pub const MAX_EXPR_DEPTH: usize = 64;

/// The children of `e`, for the iterative walks below.
fn children(e: &Expr) -> impl Iterator<Item = &Expr> {
    let (pair, list): (Option<[&Expr; 2]>, &[Expr]) = match e {
        Expr::Column(_) | Expr::Literal(_) => (None, &[]),
        Expr::Compare { left, right, .. } => (Some([left, right]), &[]),
        Expr::InList { expr, .. }
        | Expr::IsNull { expr, .. }
        | Expr::Between { expr, .. }
        | Expr::StartsWith { expr, .. }
        | Expr::Not(expr) => (None, std::slice::from_ref(expr.as_ref())),
        Expr::And(c) | Expr::Or(c) => (None, c.as_slice()),
    };
    pair.into_iter().flatten().chain(list)
}

/// `Ok` when `e` nests at most [`MAX_EXPR_DEPTH`] levels. Visits each node
/// once, with an explicit stack.
pub(crate) fn check_depth(e: &Expr) -> Result<()> {
    let mut stack: Vec<(&Expr, usize)> = vec![(e, 1)];
    while let Some((node, depth)) = stack.pop() {
        if depth > MAX_EXPR_DEPTH {
            return Err(PruneError::TooDeep {
                limit: MAX_EXPR_DEPTH,
            });
        }
        stack.extend(children(node).map(|c| (c, depth + 1)));
    }
    Ok(())
}

/// Drops `e` node by node, so that even a tree far deeper than the limit
/// (built through the API, then rejected) does not overflow the stack in
/// the compiler's recursive drop.
pub(crate) fn dismantle(e: Expr) {
    let mut stack = vec![e];
    while let Some(node) = stack.pop() {
        match node {
            Expr::Compare { left, right, .. } => {
                stack.push(*left);
                stack.push(*right);
            }
            Expr::InList { expr, .. }
            | Expr::IsNull { expr, .. }
            | Expr::Between { expr, .. }
            | Expr::StartsWith { expr, .. }
            | Expr::Not(expr) => stack.push(*expr),
            Expr::And(c) | Expr::Or(c) => stack.extend(c),
            Expr::Column(_) | Expr::Literal(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{col, lit};

    fn nots(n: usize) -> Expr {
        (0..n).fold(col("a").eq(lit(1i64)), |e, _| e.not())
    }

    #[test]
    fn depth_counts_nesting_not_chain_length() {
        assert!(check_depth(&nots(MAX_EXPR_DEPTH - 2)).is_ok());
        let err = check_depth(&nots(MAX_EXPR_DEPTH - 1)).unwrap_err();
        assert!(matches!(
            err,
            PruneError::TooDeep {
                limit: MAX_EXPR_DEPTH
            }
        ));
        let long = Expr::or_any((0..100_000i64).map(|i| col("a").eq(lit(i))));
        assert!(check_depth(&long).is_ok());
    }

    #[test]
    fn a_million_nots_drop_without_overflow() {
        let deep = nots(1_000_000);
        assert!(check_depth(&deep).is_err());
        dismantle(deep);
    }
}
