//! Stage 2: row-group pruning with the footer's statistics (`dar-prune`'s
//! row-group provider, physical column names).

use dar_prune::{RowGroupAccess, RowGroupStatistics};

use super::footer::Footer;
use crate::context::ScanContext;
use crate::metrics::Stage;

/// One decision per row group of the file.
pub(crate) struct RowGroupPlan {
    /// Indexed by row group.
    pub access: Vec<RowGroupAccess>,
}

impl RowGroupPlan {
    /// Prunes the row groups of `footer` with the scan's data predicate.
    pub(crate) fn prune(ctx: &ScanContext, footer: &Footer) -> Self {
        let n = footer.metadata.num_row_groups();
        let Some(predicate) = ctx
            .inner
            .predicate
            .as_ref()
            .and_then(|p| p.physical.as_ref())
        else {
            return Self {
                access: vec![RowGroupAccess::Scan; n],
            };
        };
        let metrics = &ctx.inner.metrics;
        let _t = metrics.time(Stage::RowGroups);
        let outcome = predicate.prune(&RowGroupStatistics::new(&footer.metadata));
        metrics.add_row_groups_pruned(outcome.metrics.pruned as u64);
        let access = outcome
            .keep
            .iter()
            .map(|k| {
                if k == Some(false) {
                    RowGroupAccess::Skip
                } else {
                    RowGroupAccess::Scan
                }
            })
            .collect();
        Self { access }
    }

    /// Whether any row group is still to be read.
    pub(crate) fn any(&self) -> bool {
        self.access.iter().any(RowGroupAccess::should_read)
    }
}
