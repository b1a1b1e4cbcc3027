//! The scan predicate, split by where each part can run.
//!
//! The caller's predicate is bound to the table's logical schema, then its
//! top-level `AND` is split into conjuncts:
//!
//! ```text
//! predicate ── file pruning over the file index (whole predicate, logical
//!    │         names: stats and exact partition values)
//!    ├─ data conjuncts (no partition column)
//!    │     ├─ row-group and page pruning, each column read from where the
//!    │     │  file's column map resolved it (by name, physical name or
//!    │     │  field id: the same column the data comes from)
//!    │     └─ parquet RowFilter, one step per group of conjuncts on the
//!    │        same columns (cheapest columns first): each step decodes its
//!    │        columns only for the rows earlier steps kept, the other
//!    │        columns only for rows that pass them all
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

use arrow_schema::Schema;
use dar_prune::{Expr, Predicate};

use crate::errors::error::{Result, ScanError};

/// Data conjuncts that read the same top-level fields: one step of the row
/// filter.
#[derive(Debug, Clone)]
pub(crate) struct DataConjunct {
    /// Their conjunction.
    pub predicate: Predicate,
    /// The top-level fields they read, in first-use order.
    pub roots: Vec<usize>,
}

/// The bound predicate and its parts.
#[derive(Debug, Clone)]
pub(crate) struct ScanPredicate {
    /// The whole predicate: file pruning.
    pub logical: Predicate,
    /// Conjuncts without partition columns: row-group and page pruning,
    /// row filter.
    pub data: Option<Predicate>,
    /// The other conjuncts: residual filter after partition columns.
    pub rest: Option<Predicate>,
    /// `data` grouped by the fields each conjunct reads, in the order the
    /// caller wrote them.
    pub data_conjuncts: Vec<DataConjunct>,
    /// Top-level fields (indexes into the table's fields) of `data`.
    pub data_roots: Vec<usize>,
    /// Top-level fields of `rest`.
    pub rest_roots: Vec<usize>,
    /// Whether `rest` (if any) reads partition columns alone: then it is
    /// constant over a file and decided from the task before any I/O.
    pub rest_on_partitions_only: bool,
}

/// The top-level fields `e` reads, in first-use order (a bound predicate
/// names only columns of the schema).
fn roots(e: &Expr, index: &HashMap<&str, usize>) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for c in e.columns() {
        if let Some(i) = c.parts().first().and_then(|r| index.get(r.as_str()))
            && !out.contains(i)
        {
            out.push(*i);
        }
    }
    out
}

impl ScanPredicate {
    /// Binds `expr` to the table's logical schema (`index`: its top-level
    /// fields by name) and splits it.
    pub(crate) fn new(
        expr: Expr,
        logical: &Schema,
        index: &HashMap<&str, usize>,
        is_partition: &[bool],
    ) -> Result<Self> {
        let bind = |e: Expr| {
            Predicate::try_new(e, logical).map_err(|source| ScanError::Predicate {
                source: Box::new(source),
            })
        };
        let whole = bind(expr)?;
        let parts = whole.expr().clone().into_conjuncts();
        let (data, rest): (Vec<Expr>, Vec<Expr>) = parts
            .into_iter()
            .partition(|e| roots(e, index).iter().all(|r| !is_partition[*r]));
        // (fields sorted: the group's key, fields in first-use order, conjuncts)
        let mut groups: Vec<(Vec<usize>, Vec<usize>, Vec<Expr>)> = Vec::new();
        for e in &data {
            let r = roots(e, index);
            let mut key = r.clone();
            key.sort_unstable();
            match groups.iter_mut().find(|(k, _, _)| *k == key) {
                Some((_, _, exprs)) => exprs.push(e.clone()),
                None => groups.push((key, r, vec![e.clone()])),
            }
        }
        let data_conjuncts = groups
            .into_iter()
            .map(|(_, roots, exprs)| {
                Ok(DataConjunct {
                    predicate: bind(Expr::and_all(exprs))?,
                    roots,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let data = (!data.is_empty()).then(|| Expr::and_all(data));
        let rest = (!rest.is_empty()).then(|| Expr::and_all(rest));
        let rest_roots = rest.as_ref().map(|r| roots(r, index)).unwrap_or_default();
        Ok(Self {
            data_conjuncts,
            data_roots: data.as_ref().map(|d| roots(d, index)).unwrap_or_default(),
            rest_on_partitions_only: rest_roots.iter().all(|r| is_partition[*r]),
            rest_roots,
            data: data.map(bind).transpose()?,
            rest: rest.map(bind).transpose()?,
            logical: whole,
        })
    }
}

#[cfg(test)]
mod tests {
    use arrow_schema::{DataType, Field};

    use super::*;

    #[test]
    fn splits_by_partition_columns() {
        let schema = Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("p", DataType::Utf8, true),
        ]);
        let index = HashMap::from([("id", 0), ("p", 1)]);
        let expr = dar_prune::parse_expr("id > 3 AND (p = 'a' OR id < 0) AND id != 7").unwrap();
        let sp = ScanPredicate::new(expr, &schema, &index, &[false, true]).unwrap();
        assert_eq!(sp.data_roots, vec![0]);
        assert_eq!(sp.rest_roots, vec![1, 0]);
        assert!(!sp.rest_on_partitions_only);
        let expr = dar_prune::parse_expr("p = 'a' AND id > 1").unwrap();
        let sp = ScanPredicate::new(expr, &schema, &index, &[false, true]).unwrap();
        assert!(sp.rest_on_partitions_only);
        assert_eq!(sp.data.unwrap().expr().to_string(), "id > 1");
    }

    #[test]
    fn data_conjuncts_are_grouped_by_the_columns_they_read() {
        let schema = Schema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("b", DataType::Utf8, true),
            Field::new("p", DataType::Utf8, true),
        ]);
        let index = HashMap::from([("a", 0), ("b", 1), ("p", 2)]);
        let expr = dar_prune::parse_expr(
            "a > 3 AND b = 'x' AND p = 'q' AND a < 9 AND (b = 'y' OR a = 1) AND (a = 2 OR b = 'z')",
        )
        .unwrap();
        let sp = ScanPredicate::new(expr, &schema, &index, &[false, false, true]).unwrap();
        let groups: Vec<(String, Vec<usize>)> = sp
            .data_conjuncts
            .iter()
            .map(|g| (g.predicate.expr().to_string(), g.roots.clone()))
            .collect();
        assert_eq!(groups.len(), 3, "{groups:?}");
        assert_eq!(groups[0].1, vec![0]);
        assert!(
            groups[0].0.contains("a > 3") && groups[0].0.contains("a < 9"),
            "{groups:?}"
        );
        assert_eq!(groups[1], ("b = 'x'".to_string(), vec![1]));
        assert_eq!(groups[2].1, vec![1, 0]);
    }
}
