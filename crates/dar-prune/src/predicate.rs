//! [`Predicate`]: an [`Expr`] validated against a schema, with its literals
//! coerced to the column types, ready for exact evaluation and pruning.
//!
//! Binding normalizes the tree so that later stages match on one shape:
//! comparisons are always `column op literal` (a literal on the left is
//! swapped over), and a boolean column standing alone as a predicate becomes
//! `column = TRUE`.

use arrow_array::{BooleanArray, RecordBatch};
use arrow_schema::{DataType, Schema};

use crate::coerce::{canonical_type, coerce};
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
                Expr::Compare {
                    left: Box::new(Expr::Column(column)),
                    op,
                    right: Box::new(Expr::Literal(literal)),
                }
            }
            Expr::InList {
                expr,
                list,
                negated,
            } => {
                let (c, t) = self.value_column(*expr, "IN")?;
                let list = list
                    .iter()
                    .map(|l| coerce(&c, &t, l))
                    .collect::<Result<Vec<_>>>()?;
                Expr::InList {
                    expr: Box::new(Expr::Column(c)),
                    list,
                    negated,
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
                Expr::Between {
                    expr: Box::new(Expr::Column(c)),
                    low,
                    high,
                    negated,
                }
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
}
