//! The predicate language: [`Expr`] trees over column paths and typed
//! literals, with SQL three-valued logic.
//!
//! An [`Expr`] is what a caller writes (with the builder helpers [`col`] and
//! [`lit`], or by parsing text with [`crate::parse_expr`]). Before it can be
//! evaluated or used for pruning it is validated against an Arrow schema,
//! which yields a [`crate::Predicate`].
//!
//! `AND` and `OR` are n-ary: a chain of any length is one node with one
//! child per term (the builders and the parser flatten as they go), so a
//! 100,000-term `OR` is as shallow as a two-term one. Every other nesting
//! (`NOT`, parentheses around mixed operators) counts towards
//! [`MAX_EXPR_DEPTH`], checked once when text is parsed and when an `Expr`
//! is bound; past that, the passes over a tree may recurse safely.

use std::collections::HashSet;

mod builder;
mod depth;
mod display;
mod path;
mod scalar;
mod scalar_wire;

pub use builder::{col, lit};
pub use depth::MAX_EXPR_DEPTH;
pub(crate) use depth::{check_depth, dismantle};
pub use path::ColumnPath;
pub use scalar::{Scalar, UTC};

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `=`
    Eq,
    /// `!=` / `<>`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
}

impl CmpOp {
    /// The operator with its operands swapped: `a < b` is `b > a`.
    pub fn swap(self) -> Self {
        match self {
            Self::Eq => Self::Eq,
            Self::NotEq => Self::NotEq,
            Self::Lt => Self::Gt,
            Self::LtEq => Self::GtEq,
            Self::Gt => Self::Lt,
            Self::GtEq => Self::LtEq,
        }
    }

    /// The logical negation: `NOT (a < b)` is `a >= b` (also under SQL
    /// three-valued logic, since both sides are NULL for the same rows).
    pub fn negate(self) -> Self {
        match self {
            Self::Eq => Self::NotEq,
            Self::NotEq => Self::Eq,
            Self::Lt => Self::GtEq,
            Self::LtEq => Self::Gt,
            Self::Gt => Self::LtEq,
            Self::GtEq => Self::Lt,
        }
    }

    /// The SQL spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Eq => "=",
            Self::NotEq => "!=",
            Self::Lt => "<",
            Self::LtEq => "<=",
            Self::Gt => ">",
            Self::GtEq => ">=",
        }
    }
}

/// A predicate or value expression.
///
/// Value positions (the operands of comparisons, `IN`, `BETWEEN`, ...) take
/// a column on one side and literals on the other; a boolean column or a
/// boolean literal may stand alone as a predicate.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A column, possibly nested in structs.
    Column(ColumnPath),
    /// A typed literal.
    Literal(Scalar),
    /// `left op right`.
    Compare {
        /// Left operand.
        left: Box<Expr>,
        /// The operator.
        op: CmpOp,
        /// Right operand.
        right: Box<Expr>,
    },
    /// `expr [NOT] IN (list...)`.
    InList {
        /// The tested value.
        expr: Box<Expr>,
        /// The candidate literals (may contain NULL).
        list: Vec<Scalar>,
        /// `NOT IN` when true.
        negated: bool,
    },
    /// `expr IS [NOT] NULL`.
    IsNull {
        /// The tested value.
        expr: Box<Expr>,
        /// `IS NOT NULL` when true.
        negated: bool,
    },
    /// `expr [NOT] BETWEEN low AND high` (inclusive on both ends).
    Between {
        /// The tested value.
        expr: Box<Expr>,
        /// Lower bound.
        low: Scalar,
        /// Upper bound.
        high: Scalar,
        /// `NOT BETWEEN` when true.
        negated: bool,
    },
    /// `expr [NOT] LIKE 'prefix%'`: the string starts with `prefix`.
    StartsWith {
        /// The tested string value.
        expr: Box<Expr>,
        /// The literal prefix (no wildcards).
        prefix: String,
        /// `NOT LIKE` when true.
        negated: bool,
    },
    /// Kleene `AND` of every child (`TRUE` when there are none). Build it
    /// with [`Expr::and`] or [`Expr::and_all`], which keep chains flat.
    And(Vec<Expr>),
    /// Kleene `OR` of every child (`FALSE` when there are none). Build it
    /// with [`Expr::or`] or [`Expr::or_any`], which keep chains flat.
    Or(Vec<Expr>),
    /// Kleene `NOT`.
    Not(Box<Expr>),
}

impl Expr {
    /// Every column path the expression references, in first-seen order,
    /// without duplicates.
    pub fn columns(&self) -> Vec<ColumnPath> {
        let mut seen: HashSet<&ColumnPath> = HashSet::new();
        let mut out: Vec<ColumnPath> = Vec::new();
        self.visit_columns(|c| {
            if seen.insert(c) {
                out.push(c.clone());
            }
        });
        out
    }

    /// Calls `f` on every column reference, left to right (iteratively: any
    /// depth is safe).
    fn visit_columns<'a>(&'a self, mut f: impl FnMut(&'a ColumnPath)) {
        let mut stack: Vec<&Expr> = vec![self];
        while let Some(e) = stack.pop() {
            match e {
                Self::Column(c) => f(c),
                Self::Literal(_) => {}
                Self::Compare { left, right, .. } => {
                    stack.push(right);
                    stack.push(left);
                }
                Self::InList { expr, .. }
                | Self::IsNull { expr, .. }
                | Self::Between { expr, .. }
                | Self::StartsWith { expr, .. }
                | Self::Not(expr) => stack.push(expr),
                Self::And(children) | Self::Or(children) => stack.extend(children.iter().rev()),
            }
        }
    }

    /// Conjunction of all `exprs`, flattened into one `AND` node; `TRUE`
    /// when empty, the expression itself when there is one.
    pub fn and_all(exprs: impl IntoIterator<Item = Expr>) -> Expr {
        junction(exprs, true)
    }

    /// Disjunction of all `exprs`, flattened into one `OR` node; `FALSE`
    /// when empty, the expression itself when there is one.
    pub fn or_any(exprs: impl IntoIterator<Item = Expr>) -> Expr {
        junction(exprs, false)
    }

    /// The terms of a top-level `AND` (the expression itself when it is no
    /// `AND`).
    pub fn into_conjuncts(self) -> Vec<Expr> {
        match self {
            Self::And(children) => children,
            other => vec![other],
        }
    }
}

/// One flat `AND` (`is_and`) or `OR` of `exprs`: children of the same kind
/// are spliced in, so chains never nest.
fn junction(exprs: impl IntoIterator<Item = Expr>, is_and: bool) -> Expr {
    let mut terms: Vec<Expr> = Vec::new();
    for e in exprs {
        let children = match e {
            Expr::And(children) if is_and => children,
            Expr::Or(children) if !is_and => children,
            other => {
                terms.push(other);
                continue;
            }
        };
        if terms.is_empty() {
            // Reuse the first list: `a.and(b)` on a long `a` appends.
            terms = children;
        } else {
            terms.extend(children);
        }
    }
    match terms.len() {
        0 => Expr::Literal(Scalar::Boolean(is_and)),
        1 => terms
            .pop()
            .unwrap_or(Expr::Literal(Scalar::Boolean(is_and))),
        _ if is_and => Expr::And(terms),
        _ => Expr::Or(terms),
    }
}
