//! Pruning output as plain data: per row group, skip it, scan it whole, or
//! scan only some rows.

use arrow_array::BooleanArray;
use parquet::arrow::arrow_reader::RowSelection;

use crate::pruning::PruningMetrics;

/// What to read of one row group.
#[derive(Debug, Clone, PartialEq)]
pub enum RowGroupAccess {
    /// No row can match: do not read it.
    Skip,
    /// Read every row.
    Scan,
    /// Read only the selected rows (row numbers relative to the row group).
    Selection(RowSelection),
}

impl RowGroupAccess {
    /// One decision per row group from row-group pruning's
    /// [`PruneOutcome::keep`](crate::PruneOutcome::keep): `false` skips the
    /// row group, anything else scans it whole.
    pub fn from_keep(keep: &BooleanArray) -> Vec<RowGroupAccess> {
        keep.iter()
            .map(|k| {
                if k == Some(false) {
                    Self::Skip
                } else {
                    Self::Scan
                }
            })
            .collect()
    }

    /// True unless [`RowGroupAccess::Skip`].
    pub fn should_read(&self) -> bool {
        !matches!(self, Self::Skip)
    }

    /// Intersects two decisions about the same row group of `rows` rows (for
    /// example page pruning with a deletion-vector selection).
    pub fn intersect(&self, other: &RowGroupAccess, rows: usize) -> RowGroupAccess {
        match (self, other) {
            (Self::Skip, _) | (_, Self::Skip) => Self::Skip,
            (Self::Scan, x) | (x, Self::Scan) => x.clone(),
            (Self::Selection(a), Self::Selection(b)) => {
                let s = a.intersection(b);
                match s.row_count() {
                    0 => Self::Skip,
                    n if n == rows => Self::Scan,
                    _ => Self::Selection(s),
                }
            }
        }
    }
}

/// One decision per row group of a file, with what pruning did.
#[derive(Debug, Clone, PartialEq)]
pub struct AccessPlan {
    /// Indexed by row group number.
    pub row_groups: Vec<RowGroupAccess>,
    /// Row-group level counters (containers are row groups).
    pub row_group_metrics: PruningMetrics,
    /// Page level counters (containers are page segments of the row groups
    /// that were examined).
    pub page_metrics: PruningMetrics,
}

impl AccessPlan {
    /// Row groups that must be read.
    pub fn row_groups_to_read(&self) -> Vec<usize> {
        self.row_groups
            .iter()
            .enumerate()
            .filter(|(_, a)| a.should_read())
            .map(|(i, _)| i)
            .collect()
    }
}
