//! One pruning evaluator over any [`StatisticsProvider`].
//!
//! Algorithm:
//!
//! 1. push `NOT` down to the leaves (De Morgan; a negated comparison flips
//!    its operator, which is exact under three-valued logic);
//! 2. for each column a leaf touches, fetch its statistics once and prepare
//!    them ([`prepare`]): widen types, drop NaN, widen truncated maxima;
//! 3. rewrite each leaf into a per-container "may match" array with Arrow
//!    kernels (protocol §8.4): `true` may match, `false` cannot, NULL
//!    unknown;
//! 4. combine with Kleene `AND`/`OR`, so an unknown conjunct is dropped and an
//!    unknown disjunct keeps the container;
//! 5. keep every container that is not definitely `false`.
//!
//! Nothing here fails: statistics that cannot be used make their leaf
//! unknown and are counted in [`PruningMetrics`].

mod prepare;
mod rules;

use std::collections::HashMap;

use arrow_arith::boolean::{is_null, or_kleene};
use arrow_array::BooleanArray;

use crate::coerce::canonical_type;
use crate::expr::{ColumnPath, Expr, Scalar};
use crate::predicate::Predicate;
use crate::stats::StatisticsProvider;
use prepare::Prepared;

/// Counters describing one pruning pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PruningMetrics {
    /// Containers examined.
    pub containers: usize,
    /// Containers that may match (kept).
    pub kept: usize,
    /// Containers that cannot match (pruned).
    pub pruned: usize,
    /// Statistics arrays that were present but unusable (wrong type, wrong
    /// length, or a type that cannot be widened exactly); their containers
    /// were kept.
    pub unusable_statistics: usize,
    /// Arrow kernel failures while rewriting; the affected leaves were
    /// treated as unknown.
    pub kernel_errors: usize,
}

impl PruningMetrics {
    /// Adds another pass's counters to these.
    pub fn merge(&mut self, other: &PruningMetrics) {
        self.containers += other.containers;
        self.kept += other.kept;
        self.pruned += other.pruned;
        self.unusable_statistics += other.unusable_statistics;
        self.kernel_errors += other.kernel_errors;
    }
}

/// The result of a pruning pass.
#[derive(Debug, Clone)]
pub struct PruneOutcome {
    /// One element per container, never NULL: `false` means no row of the
    /// container can satisfy the predicate.
    pub keep: BooleanArray,
    /// What happened.
    pub metrics: PruningMetrics,
}

impl Predicate {
    /// Decides, for every container of `stats`, whether it may hold a row
    /// for which the predicate is `true`. Sound: a container with such a row
    /// is always kept. Never fails.
    pub fn prune(&self, stats: &dyn StatisticsProvider) -> PruneOutcome {
        let n = stats.num_containers();
        let mut pruner = Pruner {
            predicate: self,
            stats,
            n,
            prepared: HashMap::new(),
            metrics: PruningMetrics::default(),
        };
        let nnf = negation_normal_form(self.expr(), false);
        let result = pruner.may_match(&nnf);
        let keep = match result {
            Some(r) if r.len() == n => {
                match is_null(&r).and_then(|unknown| or_kleene(&r, &unknown)) {
                    Ok(k) => k,
                    Err(_) => {
                        pruner.metrics.kernel_errors += 1;
                        BooleanArray::from(vec![true; n])
                    }
                }
            }
            _ => BooleanArray::from(vec![true; n]),
        };
        let mut metrics = pruner.metrics;
        metrics.containers = n;
        metrics.kept = keep.true_count();
        metrics.pruned = n - metrics.kept;
        PruneOutcome { keep, metrics }
    }
}

/// Pushes every `NOT` to the leaves.
pub(crate) fn negation_normal_form(e: &Expr, negate: bool) -> Expr {
    match e {
        Expr::Not(inner) => negation_normal_form(inner, !negate),
        Expr::And(children) | Expr::Or(children) => {
            let is_and = matches!(e, Expr::And(_)) != negate;
            let terms = children.iter().map(|c| negation_normal_form(c, negate));
            if is_and {
                Expr::and_all(terms)
            } else {
                Expr::or_any(terms)
            }
        }
        _ if !negate => e.clone(),
        Expr::Literal(Scalar::Boolean(b)) => Expr::Literal(Scalar::Boolean(!b)),
        Expr::Literal(s) => Expr::Literal(s.clone()),
        Expr::Compare { left, op, right } => Expr::Compare {
            left: left.clone(),
            op: op.negate(),
            right: right.clone(),
        },
        Expr::InList {
            expr,
            list,
            negated,
        } => Expr::InList {
            expr: expr.clone(),
            list: list.clone(),
            negated: !negated,
        },
        Expr::IsNull { expr, negated } => Expr::IsNull {
            expr: expr.clone(),
            negated: !negated,
        },
        Expr::Between {
            expr,
            low,
            high,
            negated,
        } => Expr::Between {
            expr: expr.clone(),
            low: low.clone(),
            high: high.clone(),
            negated: !negated,
        },
        Expr::StartsWith {
            expr,
            prefix,
            negated,
        } => Expr::StartsWith {
            expr: expr.clone(),
            prefix: prefix.clone(),
            negated: !negated,
        },
        Expr::Column(_) => Expr::Not(Box::new(e.clone())),
    }
}

struct Pruner<'a> {
    predicate: &'a Predicate,
    stats: &'a dyn StatisticsProvider,
    n: usize,
    prepared: HashMap<ColumnPath, Prepared>,
    metrics: PruningMetrics,
}

impl Pruner<'_> {
    /// Prepared statistics of `column` (fetched once per pass).
    fn column(&mut self, column: &ColumnPath) -> Option<&Prepared> {
        if !self.prepared.contains_key(column) {
            let target = canonical_type(self.predicate.column_type(column)?)?;
            let raw = self.stats.column_statistics(column);
            let prepared = prepare::prepare(raw, &target, self.n, &mut self.metrics);
            self.prepared.insert(column.clone(), prepared);
        }
        self.prepared.get(column)
    }

    /// `None` means unknown for every container.
    fn may_match(&mut self, e: &Expr) -> Option<BooleanArray> {
        match e {
            Expr::And(children) => {
                // Unknown terms are dropped: unknown AND x is false where x
                // is false, else unknown.
                let mut acc: Option<BooleanArray> = None;
                let mut any_unknown = false;
                for c in children {
                    match self.may_match(c) {
                        Some(x) => {
                            // A kernel failure makes the whole AND unknown.
                            acc = Some(match acc {
                                None => x,
                                Some(a) => self.kernel(arrow_arith::boolean::and_kleene(&a, &x))?,
                            });
                        }
                        None => any_unknown = true,
                    }
                }
                match acc {
                    Some(x) if any_unknown => {
                        let unknown = BooleanArray::new_null(x.len());
                        self.kernel(arrow_arith::boolean::and_kleene(&x, &unknown))
                    }
                    Some(x) => Some(x),
                    None if children.is_empty() => Some(BooleanArray::from(vec![true; self.n])),
                    None => None,
                }
            }
            Expr::Or(children) => {
                // One unknown term makes the whole OR unknown.
                let mut acc: Option<BooleanArray> = None;
                for c in children {
                    let x = self.may_match(c)?;
                    acc = match acc {
                        None => Some(x),
                        Some(a) => Some(self.kernel(or_kleene(&a, &x))?),
                    };
                }
                Some(acc.unwrap_or_else(|| BooleanArray::from(vec![false; self.n])))
            }
            Expr::Literal(Scalar::Boolean(true)) => Some(BooleanArray::from(vec![true; self.n])),
            // FALSE and NULL never select a row.
            Expr::Literal(_) => Some(BooleanArray::from(vec![false; self.n])),
            leaf => {
                let column = leaf.columns().into_iter().next()?;
                let n = self.n;
                let prepared = self.column(&column)?;
                let out = rules::leaf(leaf, prepared, n);
                match out {
                    Ok(r) => r,
                    Err(_) => {
                        self.metrics.kernel_errors += 1;
                        None
                    }
                }
            }
        }
    }

    fn kernel(
        &mut self,
        r: Result<BooleanArray, arrow_schema::ArrowError>,
    ) -> Option<BooleanArray> {
        match r {
            Ok(a) => Some(a),
            Err(_) => {
                self.metrics.kernel_errors += 1;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests;
