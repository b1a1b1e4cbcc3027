//! Builder helpers: `col("a").gt(lit(5)).and(col("b").is_not_null())`.

use super::{CmpOp, ColumnPath, Expr, Scalar};

/// A column reference; dots separate struct fields (`"a.b.c"`).
pub fn col(name: impl AsRef<str>) -> Expr {
    Expr::Column(ColumnPath::from_dotted(name.as_ref()))
}

/// A literal.
pub fn lit(value: impl Into<Scalar>) -> Expr {
    Expr::Literal(value.into())
}

fn cmp(left: Expr, op: CmpOp, right: Expr) -> Expr {
    Expr::Compare {
        left: Box::new(left),
        op,
        right: Box::new(right),
    }
}

impl Expr {
    /// `self = other`
    pub fn eq(self, other: Expr) -> Expr {
        cmp(self, CmpOp::Eq, other)
    }
    /// `self != other`
    pub fn not_eq(self, other: Expr) -> Expr {
        cmp(self, CmpOp::NotEq, other)
    }
    /// `self < other`
    pub fn lt(self, other: Expr) -> Expr {
        cmp(self, CmpOp::Lt, other)
    }
    /// `self <= other`
    pub fn lt_eq(self, other: Expr) -> Expr {
        cmp(self, CmpOp::LtEq, other)
    }
    /// `self > other`
    pub fn gt(self, other: Expr) -> Expr {
        cmp(self, CmpOp::Gt, other)
    }
    /// `self >= other`
    pub fn gt_eq(self, other: Expr) -> Expr {
        cmp(self, CmpOp::GtEq, other)
    }
    /// `self op other`
    pub fn compare(self, op: CmpOp, other: Expr) -> Expr {
        cmp(self, op, other)
    }
    /// `self AND other`, flat: an `AND` on either side takes the other
    /// side in (appending to a left `AND` reuses its list, so a long
    /// `a.and(b).and(c)...` chain builds in linear time).
    pub fn and(self, other: Expr) -> Expr {
        Expr::and_all([self, other])
    }
    /// `self OR other`, flat like [`Expr::and`].
    pub fn or(self, other: Expr) -> Expr {
        Expr::or_any([self, other])
    }
    /// `NOT self` (named `not_` so it does not shadow `std::ops::Not`).
    #[allow(clippy::should_implement_trait, reason = "builder reads as SQL")]
    pub fn not(self) -> Expr {
        Expr::Not(Box::new(self))
    }
    /// `self IS NULL`
    pub fn is_null(self) -> Expr {
        Expr::IsNull {
            expr: Box::new(self),
            negated: false,
        }
    }
    /// `self IS NOT NULL`
    pub fn is_not_null(self) -> Expr {
        Expr::IsNull {
            expr: Box::new(self),
            negated: true,
        }
    }
    /// `self IN (list...)`
    pub fn in_list(self, list: impl IntoIterator<Item = impl Into<Scalar>>) -> Expr {
        Expr::InList {
            expr: Box::new(self),
            list: list.into_iter().map(Into::into).collect(),
            negated: false,
        }
    }
    /// `self NOT IN (list...)`
    pub fn not_in_list(self, list: impl IntoIterator<Item = impl Into<Scalar>>) -> Expr {
        Expr::InList {
            expr: Box::new(self),
            list: list.into_iter().map(Into::into).collect(),
            negated: true,
        }
    }
    /// `self BETWEEN low AND high`
    pub fn between(self, low: impl Into<Scalar>, high: impl Into<Scalar>) -> Expr {
        Expr::Between {
            expr: Box::new(self),
            low: low.into(),
            high: high.into(),
            negated: false,
        }
    }
    /// `self NOT BETWEEN low AND high`
    pub fn not_between(self, low: impl Into<Scalar>, high: impl Into<Scalar>) -> Expr {
        Expr::Between {
            expr: Box::new(self),
            low: low.into(),
            high: high.into(),
            negated: true,
        }
    }
    /// `self LIKE 'prefix%'`
    pub fn starts_with(self, prefix: impl Into<String>) -> Expr {
        Expr::StartsWith {
            expr: Box::new(self),
            prefix: prefix.into(),
            negated: false,
        }
    }
    /// `self NOT LIKE 'prefix%'`
    pub fn not_starts_with(self, prefix: impl Into<String>) -> Expr {
        Expr::StartsWith {
            expr: Box::new(self),
            prefix: prefix.into(),
            negated: true,
        }
    }
}
