//! The scan predicate, split by where each part can run.
//!
//! The caller's predicate is bound to the table's logical schema, then its
//! top-level `AND` is split into conjuncts:
//!
//! ```text
//! predicate ── file pruning over the file index (whole predicate, logical
//!    │         names: stats and exact partition values)
//!    ├─ data conjuncts (no partition column)
//!    │     ├─ physical form ─► row-group and page pruning (file names)
//!    │     └─ logical form  ─► parquet RowFilter: decoded first, the other
//!    │                         columns only for rows that pass
//!    └─ other conjuncts (touch a partition column)
//!          ├─ only partition columns ─► decided once per file from its
//!          │                            partition values (skip or read all)
//!          └─ mixed ─► residual filter on the read batch, after partition
//!                      columns exist
//! ```
//!
//! Each part is exact where it filters rows (the `dar-prune` evaluator), so
//! their conjunction is the predicate; pruning only ever drops containers
//! that the statistics prove empty.

use std::collections::HashMap;

use arrow_schema::{DataType, Field, Fields, Schema};
use dar_log::schema::ColumnMappingMode;
use dar_prune::{ColumnPath, Expr, Predicate};

use crate::error::{Result, ScanError};
use crate::schema::mapping::physical_name;

/// The bound predicate and its parts.
#[derive(Debug, Clone)]
pub(crate) struct ScanPredicate {
    /// The whole predicate (logical names): file pruning.
    pub logical: Predicate,
    /// Conjuncts without partition columns (logical names): row filter.
    pub data: Option<Predicate>,
    /// The same with physical paths: row-group and page pruning.
    pub physical: Option<Predicate>,
    /// The other conjuncts: residual filter after partition columns.
    pub rest: Option<Predicate>,
    /// Top-level logical columns of `data`.
    pub data_roots: Vec<String>,
    /// Top-level logical columns of `rest`.
    pub rest_roots: Vec<String>,
    /// Whether `rest` (if any) reads partition columns alone: then it is
    /// constant over a file and decided from the task before any I/O.
    pub rest_on_partitions_only: bool,
}

fn roots(e: &Expr) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in e.columns() {
        if let Some(r) = c.parts().first()
            && !out.contains(r)
        {
            out.push(r.clone());
        }
    }
    out
}

impl ScanPredicate {
    /// Binds `expr` to the table's logical schema and splits it.
    pub(crate) fn new(
        expr: Expr,
        logical: &Schema,
        partition_columns: &[String],
        mode: ColumnMappingMode,
    ) -> Result<Self> {
        let bind = |e: Expr, s: &Schema| {
            Predicate::try_new(e, s).map_err(|source| ScanError::Predicate {
                source: Box::new(source),
            })
        };
        let whole = bind(expr, logical)?;
        let parts = whole.expr().clone().into_conjuncts();
        let (data, rest): (Vec<Expr>, Vec<Expr>) = parts
            .into_iter()
            .partition(|e| roots(e).iter().all(|r| !partition_columns.contains(r)));
        let data = (!data.is_empty()).then(|| Expr::and_all(data));
        let rest = (!rest.is_empty()).then(|| Expr::and_all(rest));
        let physical = match &data {
            Some(d) if !roots(d).is_empty() => {
                let (renamed, schema) = physical_form(d, logical, mode);
                // Pruning is an optimization: a predicate that does not
                // bind in physical form just prunes nothing.
                Predicate::try_new(renamed, &schema).ok()
            }
            _ => None,
        };
        let rest_roots = rest.as_ref().map(roots).unwrap_or_default();
        Ok(Self {
            data_roots: data.as_ref().map(roots).unwrap_or_default(),
            rest_on_partitions_only: rest_roots.iter().all(|r| partition_columns.contains(r)),
            rest_roots,
            data: data.map(|d| bind(d, logical)).transpose()?,
            rest: rest.map(|r| bind(r, logical)).transpose()?,
            physical,
            logical: whole,
        })
    }
}

/// `expr` with every column path renamed to physical names, and the
/// schema those names bind to (the logical types under physical names).
fn physical_form(expr: &Expr, logical: &Schema, mode: ColumnMappingMode) -> (Expr, Schema) {
    let mut renames: HashMap<ColumnPath, ColumnPath> = HashMap::new();
    for c in expr.columns() {
        let mut fields = logical.fields();
        let mut parts = Vec::new();
        for part in c.parts() {
            let Some(f) = fields.iter().find(|f| f.name() == part) else {
                break;
            };
            parts.push(physical_name(f, mode).to_string());
            if let DataType::Struct(children) = f.data_type() {
                fields = children;
            }
        }
        renames.insert(c.clone(), ColumnPath::new(parts));
    }
    let schema = Schema::new(physical_fields(logical.fields(), mode));
    (rename(expr, &renames), schema)
}

fn physical_fields(fields: &Fields, mode: ColumnMappingMode) -> Fields {
    fields
        .iter()
        .map(|f| {
            let t = match f.data_type() {
                DataType::Struct(children) => DataType::Struct(physical_fields(children, mode)),
                other => other.clone(),
            };
            Field::new(physical_name(f, mode), t, true)
        })
        .collect()
}

fn rename(e: &Expr, map: &HashMap<ColumnPath, ColumnPath>) -> Expr {
    let r = |x: &Expr| Box::new(rename(x, map));
    match e {
        Expr::Column(c) => Expr::Column(map.get(c).cloned().unwrap_or_else(|| c.clone())),
        Expr::Literal(s) => Expr::Literal(s.clone()),
        Expr::Compare { left, op, right } => Expr::Compare {
            left: r(left),
            op: *op,
            right: r(right),
        },
        Expr::InList {
            expr,
            list,
            negated,
        } => Expr::InList {
            expr: r(expr),
            list: list.clone(),
            negated: *negated,
        },
        Expr::IsNull { expr, negated } => Expr::IsNull {
            expr: r(expr),
            negated: *negated,
        },
        Expr::Between {
            expr,
            low,
            high,
            negated,
        } => Expr::Between {
            expr: r(expr),
            low: low.clone(),
            high: high.clone(),
            negated: *negated,
        },
        Expr::StartsWith {
            expr,
            prefix,
            negated,
        } => Expr::StartsWith {
            expr: r(expr),
            prefix: prefix.clone(),
            negated: *negated,
        },
        Expr::And(c) => Expr::And(c.iter().map(|x| rename(x, map)).collect()),
        Expr::Or(c) => Expr::Or(c.iter().map(|x| rename(x, map)).collect()),
        Expr::Not(a) => Expr::Not(r(a)),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap as Map;

    use super::*;

    #[test]
    fn splits_and_renames() {
        let mapped = |name: &str, phys: &str, t: DataType| {
            Field::new(name, t, true).with_metadata(Map::from([(
                "delta.columnMapping.physicalName".to_string(),
                phys.to_string(),
            )]))
        };
        let schema = Schema::new(vec![
            mapped("id", "col-1", DataType::Int64),
            mapped("p", "col-2", DataType::Utf8),
        ]);
        let expr = dar_prune::parse_expr("id > 3 AND (p = 'a' OR id < 0) AND id != 7").unwrap();
        let sp = ScanPredicate::new(expr, &schema, &["p".into()], ColumnMappingMode::Name).unwrap();
        assert_eq!(sp.data_roots, vec!["id".to_string()]);
        assert_eq!(sp.rest_roots, vec!["p".to_string(), "id".to_string()]);
        let physical = sp.physical.unwrap();
        assert_eq!(physical.columns()[0].0, ColumnPath::from_dotted("col-1"));
    }
}
