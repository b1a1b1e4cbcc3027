//! [`Predicate`]: an [`Expr`] validated against a schema, with its literals
//! coerced to the column types, ready for exact evaluation and pruning.
//!
//! Binding normalizes the tree so that later stages match on one shape:
//! comparisons are always `column op literal` (a literal on the left is
//! swapped over), and a boolean column standing alone as a predicate becomes
//! `column = TRUE`.
//!
//! A number the column's type cannot hold (see [`crate::coerce`]) is
//! rewritten into the same test on the column's own type, with the same
//! answer for every row, NULL rows included (so also under `NOT`). With
//! `below < L < above` its neighbours in the type:
//!
//! ```text
//! c = L      c BETWEEN above AND below   (no value; NULL for NULL)
//! c != L     c NOT BETWEEN above AND below
//! c < L      c <= below                  (c <= L likewise)
//! c > L      c >= above                  (c >= L likewise)
//! c IN (.., L, ..)      L left out (it equals no value)
//! c BETWEEN L1 AND L2   c BETWEEN above1 AND below2
//! ```
//!
//! Past the end of the type's range the missing neighbour's test becomes
//! `c > MAX` or `c < MIN` (false for every value, NULL for NULL), or its
//! negation: `b = 300` on a `byte` column is `b > 127`.

use arrow_array::{BooleanArray, RecordBatch};
use arrow_schema::{DataType, Schema};

use crate::coerce::{Coerced, canonical_type, coerce};
use crate::error::{PruneError, Result};
use crate::expr::{CmpOp, ColumnPath, Expr, Scalar, check_depth, dismantle};
use crate::schema_lookup::resolve;

/// A validated predicate. Build with [`Predicate::try_new`] or
/// [`Predicate::parse`].
#[derive(Debug, Clone, PartialEq)]
pub struct Predicate {
    expr: Expr,
    columns: Vec<(ColumnPath, DataType)>,
}

impl Predicate {
    /// Validates `expr` against `schema`: every column must exist, every
    /// literal must convert losslessly to its column's type, and operators
    /// must suit their column types. A tree nested deeper than
    /// [`crate::MAX_EXPR_DEPTH`] is an error ([`PruneError::TooDeep`]);
    /// nested `AND`s (and `OR`s) are flattened into one node.
    pub fn try_new(expr: Expr, schema: &Schema) -> Result<Self> {
        if let Err(e) = check_depth(&expr) {
            dismantle(expr);
            return Err(e);
        }
        let mut binder = Binder {
            schema,
            columns: Vec::new(),
        };
        let expr = binder.bind_bool(expr)?;
        Ok(Self {
            expr,
            columns: binder.columns,
        })
    }

    /// Parses SQL text (see [`crate::parse_expr`]) and validates it.
    pub fn parse(text: &str, schema: &Schema) -> Result<Self> {
        Self::try_new(crate::parse::parse_expr(text)?, schema)
    }

    /// The normalized expression.
    pub fn expr(&self) -> &Expr {
        &self.expr
    }

    /// The referenced columns and their types in the schema, in first-seen
    /// order: the projection a Parquet `ArrowPredicate` needs.
    pub fn columns(&self) -> &[(ColumnPath, DataType)] {
        &self.columns
    }

    pub(crate) fn column_type(&self, path: &ColumnPath) -> Option<&DataType> {
        self.columns.iter().find(|(p, _)| p == path).map(|(_, t)| t)
    }

    /// Evaluates the predicate on every row of `batch`, which must hold the
    /// referenced columns (by name, nested through structs). The result is
    /// NULL where SQL says unknown; a row passes a filter only where it is
    /// `true`.
    pub fn evaluate(&self, batch: &RecordBatch) -> Result<BooleanArray> {
        crate::eval::evaluate(&self.expr, batch)
    }

    /// The rows of `batch` for which the predicate is `true`.
    pub fn filter(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let mask = self.evaluate(batch)?;
        arrow_select::filter::filter_record_batch(batch, &mask)
            .map_err(|e| PruneError::arrow("filtering a batch", e))
    }
}

struct Binder<'a> {
    schema: &'a Schema,
    columns: Vec<(ColumnPath, DataType)>,
}

impl Binder<'_> {
    fn column(&mut self, path: &ColumnPath) -> Result<DataType> {
        let t = resolve(self.schema, path)?.data_type().clone();
        if !self.columns.iter().any(|(p, _)| p == path) {
            self.columns.push((path.clone(), t.clone()));
        }
        Ok(t)
    }

    /// The column of a value position, with its type.
    fn value_column(&mut self, e: Expr, what: &str) -> Result<(ColumnPath, DataType)> {
        match e {
            Expr::Column(p) => {
                let t = self.column(&p)?;
                Ok((p, t))
            }
            other => Err(PruneError::InvalidExpr {
                message: format!("{what} needs a column on its left, found `{other}`"),
            }),
        }
    }

    fn bind_bool(&mut self, e: Expr) -> Result<Expr> {
        Ok(match e {
            Expr::Column(p) => {
                let t = self.column(&p)?;
                if t != DataType::Boolean {
                    return Err(PruneError::UnsupportedOperation {
                        operation: "use as a predicate".into(),
                        column: p.to_string(),
                        data_type: t,
                    });
                }
                Expr::Compare {
                    left: Box::new(Expr::Column(p)),
                    op: CmpOp::Eq,
                    right: Box::new(Expr::Literal(Scalar::Boolean(true))),
                }
            }
            Expr::Literal(s @ (Scalar::Boolean(_) | Scalar::Null)) => Expr::Literal(s),
            Expr::Literal(s) => {
                return Err(PruneError::InvalidExpr {
                    message: format!("literal {s} of type {} is not a predicate", s.data_type()),
                });
            }
            Expr::Compare { left, op, right } => {
                let (column, op, literal) = match (*left, *right) {
                    (Expr::Column(c), Expr::Literal(l)) => (c, op, l),
                    (Expr::Literal(l), Expr::Column(c)) => (c, op.swap(), l),
                    (l, r) => {
                        return Err(PruneError::InvalidExpr {
                            message: format!(
                                "comparisons need a column on one side and a literal on the other, found `{l} {} {r}`",
                                op.as_str()
                            ),
                        });
                    }
                };
                let t = self.column(&column)?;
                let literal = coerce(&column, &t, &literal)?;
                compare(column, op, literal)
            }
            Expr::InList {
                expr,
                list,
                negated,
            } => {
                let (c, t) = self.value_column(*expr, "IN")?;
                let mut kept = Vec::with_capacity(list.len());
                let mut left_out = None;
                for l in &list {
                    match coerce(&c, &t, l)? {
                        Coerced::Exact(s) => kept.push(s),
                        // Equal to no value of the column.
                        other => left_out = left_out.or(Some(other)),
                    }
                }
                match left_out {
                    // Every literal left out: `c IN (2.5)` is `c = 2.5`.
                    Some(only) if kept.is_empty() => {
                        let op = if negated { CmpOp::NotEq } else { CmpOp::Eq };
                        compare(c, op, only)
                    }
                    _ => Expr::InList {
                        expr: Box::new(Expr::Column(c)),
                        list: kept,
                        negated,
                    },
                }
            }
            Expr::IsNull { expr, negated } => {
                let (c, _) = self.value_column(*expr, "IS NULL")?;
                Expr::IsNull {
                    expr: Box::new(Expr::Column(c)),
                    negated,
                }
            }
            Expr::Between {
                expr,
                low,
                high,
                negated,
            } => {
                let (c, t) = self.value_column(*expr, "BETWEEN")?;
                let low = coerce(&c, &t, &low)?;
                let high = coerce(&c, &t, &high)?;
                between(c, low, high, negated)
            }
            Expr::StartsWith {
                expr,
                prefix,
                negated,
            } => {
                let (c, t) = self.value_column(*expr, "LIKE")?;
                if canonical_type(&t) != Some(DataType::Utf8) {
                    return Err(PruneError::UnsupportedOperation {
                        operation: "LIKE".into(),
                        column: c.to_string(),
                        data_type: t,
                    });
                }
                Expr::StartsWith {
                    expr: Box::new(Expr::Column(c)),
                    prefix,
                    negated,
                }
            }
            Expr::And(children) => Expr::and_all(
                children
                    .into_iter()
                    .map(|c| self.bind_bool(c))
                    .collect::<Result<Vec<_>>>()?,
            ),
            Expr::Or(children) => Expr::or_any(
                children
                    .into_iter()
                    .map(|c| self.bind_bool(c))
                    .collect::<Result<Vec<_>>>()?,
            ),
            Expr::Not(a) => Expr::Not(Box::new(self.bind_bool(*a)?)),
        })
    }
}

/// `column op literal` for a coerced literal (see the module docs).
fn compare(column: ColumnPath, op: CmpOp, literal: Coerced) -> Expr {
    let cmp = |op: CmpOp, s: Scalar| Expr::Compare {
        left: Box::new(Expr::Column(column.clone())),
        op,
        right: Box::new(Expr::Literal(s)),
    };
    let (below, above) = match literal {
        Coerced::Exact(s) => return cmp(op, s),
        Coerced::Between { below, above } => (below, above),
    };
    match (op, below, above) {
        (CmpOp::Eq | CmpOp::NotEq, Some(below), Some(above)) => Expr::Between {
            expr: Box::new(Expr::Column(column.clone())),
            low: above,
            high: below,
            negated: op == CmpOp::NotEq,
        },
        (CmpOp::Lt | CmpOp::LtEq, Some(below), _) => cmp(CmpOp::LtEq, below),
        (CmpOp::Gt | CmpOp::GtEq, _, Some(above)) => cmp(CmpOp::GtEq, above),
        // Past the type's maximum: `c > MAX` holds for no value.
        (op, Some(max), None) => cmp(past_range(op, CmpOp::Gt), max),
        // Below its minimum: `c < MIN` holds for none.
        (op, None, Some(min)) => cmp(past_range(op, CmpOp::Lt), min),
        // `coerce` never leaves out both neighbours; a NULL matches nothing.
        (op, None, None) => cmp(op, Scalar::Null),
    }
}

/// The test against the end of a type's range that a comparison `op` with
/// a number past that end becomes: `never` (`>` past the maximum, `<` below
/// the minimum) where `op` holds for no value, its negation where `op`
/// holds for every value.
fn past_range(op: CmpOp, never: CmpOp) -> CmpOp {
    let holds_for_all = match op {
        CmpOp::Eq => false,
        CmpOp::NotEq => true,
        // Every value is below a number past the maximum, none below one
        // under the minimum.
        CmpOp::Lt | CmpOp::LtEq => never == CmpOp::Gt,
        CmpOp::Gt | CmpOp::GtEq => never == CmpOp::Lt,
    };
    if holds_for_all { never.negate() } else { never }
}

/// `column [NOT] BETWEEN low AND high` for coerced bounds: `low` rounds up
/// to the type, `high` down (see the module docs).
fn between(column: ColumnPath, low: Coerced, high: Coerced, negated: bool) -> Expr {
    let low = match low {
        Coerced::Exact(s) => Ok(s),
        Coerced::Between {
            above: Some(above), ..
        } => Ok(above),
        // Above the type's range: no value is that high.
        past => Err(past),
    };
    let high = match high {
        Coerced::Exact(s) => Ok(s),
        Coerced::Between {
            below: Some(below), ..
        } => Ok(below),
        past => Err(past),
    };
    let op = if negated { CmpOp::NotEq } else { CmpOp::Eq };
    match (low, high) {
        (Ok(low), Ok(high)) => Expr::Between {
            expr: Box::new(Expr::Column(column)),
            low,
            high,
            negated,
        },
        // A bound past the range matches no value, like `c = L` for it.
        (Err(past), _) | (_, Err(past)) => compare(column, op, past),
    }
}

#[cfg(test)]
mod tests {
    use arrow_schema::{Field, Fields};

    use super::*;
    use crate::expr::{col, lit};

    fn schema() -> Schema {
        let inner: Fields = vec![Field::new("zip", DataType::Utf8, true)].into();
        Schema::new(vec![
            Field::new("salary", DataType::Int64, true),
            Field::new("name", DataType::Utf8, true),
            Field::new("active", DataType::Boolean, true),
            Field::new("address", DataType::Struct(inner), true),
        ])
    }

    #[test]
    fn bad_predicates_are_specific_errors() {
        let err = Predicate::parse("salry > 5", &schema()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown column `salry` (did you mean `salary`?)"
        );
        let err = Predicate::parse("address.zpi = '1'", &schema()).unwrap_err();
        assert!(
            err.to_string().contains("did you mean `address.zip`"),
            "{err}"
        );
        let err = Predicate::parse("salary = 'abc'", &schema()).unwrap_err();
        assert!(
            matches!(&err, PruneError::IncompatibleTypes { column, column_type: DataType::Int64, .. } if column == "salary"),
            "{err}"
        );
        let err = Predicate::parse("salary LIKE 'a%'", &schema()).unwrap_err();
        assert!(
            matches!(err, PruneError::UnsupportedOperation { .. }),
            "{err}"
        );
        let err = Predicate::parse("name", &schema()).unwrap_err();
        assert!(
            matches!(err, PruneError::UnsupportedOperation { .. }),
            "{err}"
        );
        let err = Predicate::parse("salary = salary", &schema()).unwrap_err();
        assert!(matches!(err, PruneError::InvalidExpr { .. }), "{err}");
        let err = Predicate::try_new(lit(5i64), &schema()).unwrap_err();
        assert!(matches!(err, PruneError::InvalidExpr { .. }), "{err}");
    }

    #[test]
    fn binding_normalizes_and_lists_columns() {
        let p =
            Predicate::parse("5 < salary AND active AND address.zip IS NULL", &schema()).unwrap();
        assert_eq!(
            p.expr(),
            &col("salary")
                .gt(lit(5i64))
                .and(col("active").eq(lit(true)))
                .and(col("address.zip").is_null())
        );
        let names: Vec<String> = p.columns().iter().map(|(c, _)| c.to_string()).collect();
        assert_eq!(names, ["salary", "active", "address.zip"]);
        assert_eq!(p.columns()[2].1, DataType::Utf8);
    }

    /// Numbers of other types compare by value: the binder writes the same
    /// test on the column's own type.
    #[test]
    fn numbers_of_other_types_compare_by_value() {
        let schema = Schema::new(vec![
            Field::new("n", DataType::Int32, true),
            Field::new("b", DataType::Int8, true),
            Field::new("fare", DataType::Decimal128(8, 2), true),
        ]);
        let bound = |text: &str| Predicate::parse(text, &schema).unwrap().expr().to_string();
        for (text, want) in [
            ("n > 2.5", "n >= 3"),
            ("n >= 2.5", "n >= 3"),
            ("n < 2.5", "n <= 2"),
            ("n <= -2.5", "n <= -3"),
            ("n = 2.5", "n BETWEEN 3 AND 2"),
            ("n != 2.5", "n NOT BETWEEN 3 AND 2"),
            ("NOT (n = 2.5)", "NOT (n BETWEEN 3 AND 2)"),
            ("n = 2.0", "n = 2"),
            ("n > 2.5e0", "n >= 3"),
            ("n IN (2, 2.5)", "n IN (2)"),
            ("n NOT IN (2.5, 3)", "n NOT IN (3)"),
            ("n IN (2.5)", "n BETWEEN 3 AND 2"),
            ("n NOT IN (2.5, 7.5)", "n NOT BETWEEN 3 AND 2"),
            ("n IN (2.5, NULL)", "n IN (NULL)"),
            ("n BETWEEN 1.5 AND 4.5", "n BETWEEN 2 AND 4"),
            ("n BETWEEN 1.2 AND 1.8", "n BETWEEN 2 AND 1"),
            ("n BETWEEN 1 AND 1e30", "n BETWEEN 1 AND 2147483647"),
            ("n BETWEEN 1e30 AND 1e31", "n > 2147483647"),
            ("n NOT BETWEEN -1e30 AND -1e29", "n >= -2147483648"),
            ("n < CAST('NaN' AS DOUBLE)", "n <= 2147483647"),
            ("n = CAST('NaN' AS DOUBLE)", "n > 2147483647"),
            ("b = 300", "b > 127"),
            ("b != 300", "b <= 127"),
            ("b < 300", "b <= 127"),
            ("b > 300", "b > 127"),
            ("b = -300", "b < -128"),
            ("b > -300", "b >= -128"),
            ("b < -300", "b < -128"),
            ("b <= -300", "b < -128"),
            ("fare < 10.005", "fare <= 10.00"),
            ("fare > 10.005", "fare >= 10.01"),
            ("fare = 10.005", "fare BETWEEN 10.01 AND 10.00"),
            ("fare = 10.0", "fare = 10.00"),
            ("fare > 1000000", "fare > 999999.99"),
        ] {
            assert_eq!(bound(text), want, "{text}");
        }
    }

    /// A float literal prints as text that parses back to the same value,
    /// whatever column it is then compared with (`0.1` would parse as the
    /// decimal one tenth, which an exact decimal column tells apart from
    /// the double 0.1).
    #[test]
    fn float_literals_print_as_their_value() {
        let schema = Schema::new(vec![
            Field::new("f", DataType::Float64, true),
            Field::new("g", DataType::Float32, true),
            Field::new("d", DataType::Decimal128(38, 30), true),
            Field::new("n", DataType::Int64, true),
        ]);
        let doubles = [0.1, 2.5, -0.0, 1e300, 1e-7, 123_456.789, 1.0 / 3.0];
        let literals = doubles
            .iter()
            .map(|v| Scalar::Float64(*v))
            .chain(doubles.iter().map(|v| Scalar::Float32(*v as f32)));
        for l in literals {
            for c in ["f", "g", "d", "n"] {
                let e = col(c).gt(Expr::Literal(l.clone()));
                let shown = e.to_string();
                let direct = Predicate::try_new(e, &schema).unwrap();
                let again = Predicate::parse(&shown, &schema).unwrap();
                assert_eq!(again.expr(), direct.expr(), "{shown}");
            }
        }
        assert_eq!(col("f").eq(lit(0.1)).to_string(), "f = 1e-1");
        assert_eq!(col("f").eq(lit(2.5)).to_string(), "f = 2.5");
        assert_eq!(
            col("f").eq(lit(0.1f32)).to_string(),
            "f = CAST('0.1' AS FLOAT)"
        );
    }

    /// The rewritten forms give the answer the original comparison gives,
    /// NULL for NULL included.
    #[test]
    fn rewritten_forms_keep_the_rows_and_the_nulls() {
        use arrow_array::Int32Array;
        use std::sync::Arc;
        let schema = Arc::new(Schema::new(vec![Field::new("n", DataType::Int32, true)]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int32Array::from(vec![
                Some(2),
                Some(3),
                None,
                Some(i32::MAX),
            ]))],
        )
        .unwrap();
        let rows = |text: &str| {
            let p = Predicate::parse(text, &schema).unwrap();
            p.evaluate(&batch).unwrap().iter().collect::<Vec<_>>()
        };
        let (t, f) = (Some(true), Some(false));
        assert_eq!(rows("n = 2.5"), [f, f, None, f]);
        assert_eq!(rows("NOT (n = 2.5)"), [t, t, None, t]);
        assert_eq!(rows("n > 2.5"), [f, t, None, t]);
        assert_eq!(rows("NOT (n IN (2.5))"), [t, t, None, t]);
        assert_eq!(rows("n = 1e30"), [f, f, None, f]);
        assert_eq!(rows("NOT (n > 1e30)"), [t, t, None, t]);
        assert_eq!(rows("n < 1e30"), [t, t, None, t]);
    }
}
