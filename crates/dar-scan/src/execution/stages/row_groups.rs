//! Stage 2: row-group pruning with the footer's statistics (`dar-prune`'s
//! row-group provider), each predicate column read where the file's column
//! map resolved it.

use dar_prune::{RowGroupAccess, RowGroupStatistics};

use super::footer::FooterRead;
use crate::execution::metrics::{ScanMetrics, Stage};
use crate::execution::state::ScanState;

/// One decision per row group of a file.
#[derive(Debug)]
pub(crate) struct RowGroups {
    /// Indexed by row group.
    pub access: Vec<RowGroupAccess>,
}

impl RowGroups {
    /// Prunes the row groups of `footer` with the scan's data conjuncts.
    pub(crate) fn prune(footer: &FooterRead, state: &ScanState, metrics: &ScanMetrics) -> Self {
        let parquet = footer.parquet();
        let n = parquet.num_row_groups();
        let Some(predicate) = state.pruning_predicate() else {
            return Self {
                access: vec![RowGroupAccess::Scan; n],
            };
        };
        let _t = metrics.time(Stage::RowGroups);
        let stats = RowGroupStatistics::with_columns(parquet, &footer.columns.stats);
        let outcome = predicate.prune(&stats);
        metrics.add_row_groups_pruned(outcome.metrics.pruned as u64);
        Self {
            access: RowGroupAccess::from_keep(&outcome.keep),
        }
    }

    /// Whether any row group is still to be read.
    pub(crate) fn any(&self) -> bool {
        self.access.iter().any(RowGroupAccess::should_read)
    }
}
