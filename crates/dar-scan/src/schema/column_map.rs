//! [`ColumnMap`]: where the table's columns are in one data file,
//! resolved once per file when its footer is read, and used by everything
//! that touches the file's columns: row-group and page statistics, the row
//! filter and decoding. One resolution per column, so statistics are never
//! read from another column than the data (a column found by field id
//! under another name, or case-insensitively, prunes like any other).
//!
//! ```text
//! logical field ──FieldLookup (hash, per level)──► file root index
//!    │                                                 (None: absent)
//! predicate column a.b.c ──root, then struct children──► Parquet leaf
//!                                                       (stats provider)
//! ```

use arrow_schema::{DataType, Field, Schema};
use dar_prune::{ColumnPath, ParquetColumn, ParquetColumns};
use parquet::schema::types::SchemaDescriptor;

use super::mapping::FieldLookup;
use crate::execution::state::ScanState;

/// The table's columns in one data file.
#[derive(Debug, Clone)]
pub(crate) struct ColumnMap {
    /// Per top-level logical field: its index among the file's top-level
    /// fields; `None` when the file lacks it, or the scan does not read it
    /// from files (partition columns, columns nobody needs).
    roots: Vec<Option<usize>>,
    /// Where each column of the data predicate lives, for statistics.
    pub stats: ParquetColumns,
    /// Field lookups made to resolve the file (linear in its width).
    pub lookups: u64,
}

impl ColumnMap {
    /// Resolves the columns `state` needs in a file whose Arrow schema is
    /// `file` (as parquet derives it from `parquet`). The top-level fields
    /// in `provided` take the task's values (task columns): not read from
    /// the file even where it holds a column of that name.
    pub(crate) fn resolve(
        state: &ScanState,
        file: &Schema,
        parquet: &SchemaDescriptor,
        provided: &[usize],
    ) -> Self {
        let mode = state.spec.column_mapping;
        let top = FieldLookup::new(file.fields(), mode);
        let mut lookups = 0u64;
        let mut roots = vec![None; state.fields.len()];
        let needed = state
            .projected
            .iter()
            .enumerate()
            .filter(|(_, p)| **p)
            .map(|(i, _)| i);
        let predicate_roots = state
            .predicate
            .iter()
            .flat_map(|p| p.data_roots.iter().chain(&p.rest_roots).copied());
        for i in needed.chain(predicate_roots) {
            if state.is_partition[i] || roots[i].is_some() || provided.contains(&i) {
                continue;
            }
            lookups += 1;
            roots[i] = top.find(&state.fields[i]);
        }
        let mut stats = ParquetColumns::resolved();
        if let Some(data) = state.predicate.as_ref().and_then(|p| p.data.as_ref()) {
            for (path, _) in data.columns() {
                let (column, n) = leaf(state, &top, &roots, parquet, path);
                lookups += n;
                stats.insert(path.clone(), column);
            }
        }
        Self {
            roots,
            stats,
            lookups,
        }
    }

    /// The file root of top-level logical field `field`.
    pub(crate) fn root(&self, field: usize) -> Option<usize> {
        self.roots.get(field).copied().flatten()
    }
}

/// Where the logical column `path` lives in the file (and the lookups it
/// took): its top-level field from `roots`, then each struct level's child
/// by the mode's rules, then the Parquet leaf at the file's names.
fn leaf(
    state: &ScanState,
    top: &FieldLookup<'_>,
    roots: &[Option<usize>],
    parquet: &SchemaDescriptor,
    path: &ColumnPath,
) -> (ParquetColumn, u64) {
    let mode = state.spec.column_mapping;
    let Some((first, rest)) = path.parts().split_first() else {
        return (ParquetColumn::Unknown, 0);
    };
    let Some(&i) = state.field_index.get(first) else {
        return (ParquetColumn::Unknown, 0);
    };
    let Some(root) = roots[i] else {
        // A task column the file lacks (or that the task gives) holds the
        // task's value, not nulls.
        if state.is_task_column[i] {
            return (ParquetColumn::Unknown, 0);
        }
        return (ParquetColumn::Absent, 0);
    };
    let mut lookups = 0;
    let mut logical: &Field = &state.fields[i];
    let mut file: &Field = &top.fields()[root];
    let mut names = vec![file.name().as_str()];
    for part in rest {
        let (DataType::Struct(logical_children), DataType::Struct(file_children)) =
            (logical.data_type(), file.data_type())
        else {
            return (ParquetColumn::Unknown, lookups);
        };
        let Some((_, child)) = logical_children.find(part) else {
            return (ParquetColumn::Unknown, lookups);
        };
        lookups += 1;
        let Some(j) = FieldLookup::new(file_children, mode).find(child) else {
            return (ParquetColumn::Absent, lookups);
        };
        logical = child;
        file = &file_children[j];
        names.push(file.name());
    }
    let index = parquet.columns().iter().position(|c| {
        let parts = c.path().parts();
        parts.len() == names.len() && parts.iter().zip(&names).all(|(a, b)| a == b)
    });
    match index {
        Some(index) => (
            ParquetColumn::Leaf {
                index,
                field: file.clone(),
            },
            lookups,
        ),
        None => (ParquetColumn::Unknown, lookups),
    }
}
