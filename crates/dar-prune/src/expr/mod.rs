//! The predicate language: [`Expr`] trees over column paths and typed
//! literals, with SQL three-valued logic.
//!
//! An [`Expr`] is what a caller writes (with the builder helpers [`col`] and
//! [`lit`], or by parsing text with [`crate::parse_expr`]). Before it can be
//! evaluated or used for pruning it is validated against an Arrow schema,
//! which yields a [`crate::Predicate`].

mod builder;
mod display;
mod path;
mod scalar;

pub use builder::{col, lit};
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
    /// Kleene `AND`.
    And(Box<Expr>, Box<Expr>),
    /// Kleene `OR`.
    Or(Box<Expr>, Box<Expr>),
    /// Kleene `NOT`.
    Not(Box<Expr>),
}

impl Expr {
    /// Every column path the expression references, in first-seen order,
    /// without duplicates.
    pub fn columns(&self) -> Vec<ColumnPath> {
        let mut out: Vec<ColumnPath> = Vec::new();
        self.visit_columns(&mut |c| {
            if !out.contains(c) {
                out.push(c.clone());
            }
        });
        out
    }

    fn visit_columns(&self, f: &mut impl FnMut(&ColumnPath)) {
        match self {
            Self::Column(c) => f(c),
            Self::Literal(_) => {}
            Self::Compare { left, right, .. } => {
                left.visit_columns(f);
                right.visit_columns(f);
            }
            Self::InList { expr, .. }
            | Self::IsNull { expr, .. }
            | Self::Between { expr, .. }
            | Self::StartsWith { expr, .. }
            | Self::Not(expr) => expr.visit_columns(f),
            Self::And(a, b) | Self::Or(a, b) => {
                a.visit_columns(f);
                b.visit_columns(f);
            }
        }
    }

    /// Conjunction of all `exprs`; `TRUE` when empty.
    pub fn and_all(exprs: impl IntoIterator<Item = Expr>) -> Expr {
        exprs
            .into_iter()
            .reduce(|a, b| a.and(b))
            .unwrap_or(Expr::Literal(Scalar::Boolean(true)))
    }
}
