//! Stage 2: row-group pruning with the footer's statistics (`dar-prune`'s
//! row-group provider, physical column names).
//!
//! The provider finds columns by name. A file whose column the adapter
//! finds otherwise (by field id in `id` mode, or case-insensitively) would
//! look to it as if the column were absent (all NULL), which is unsound:
//! such files are not pruned by statistics at all ([`stats_usable`]).

use dar_prune::{RowGroupAccess, RowGroupStatistics};
use parquet::arrow::parquet_to_arrow_schema;

use crate::schema::mapping::{find_field, physical_name};

use super::footer::Footer;
use crate::context::ScanContext;
use crate::metrics::Stage;

/// One decision per row group of the file.
pub(crate) struct RowGroupPlan {
    /// Indexed by row group.
    pub access: Vec<RowGroupAccess>,
    /// Whether the footer's statistics may prune ([`stats_usable`]); the
    /// page index is only used when they may.
    pub stats_usable: bool,
}

impl RowGroupPlan {
    /// Prunes the row groups of `footer` with the scan's data predicate.
    pub(crate) fn prune(ctx: &ScanContext, footer: &Footer) -> Self {
        let n = footer.metadata.num_row_groups();
        let scan_all = |stats_usable| Self {
            access: vec![RowGroupAccess::Scan; n],
            stats_usable,
        };
        let Some(predicate) = ctx.physical_predicate() else {
            return scan_all(false);
        };
        let metrics = &ctx.inner.metrics;
        let _t = metrics.time(Stage::RowGroups);
        if !stats_usable(ctx, footer) {
            return scan_all(false);
        }
        let outcome = predicate.prune(&RowGroupStatistics::new(&footer.metadata));
        metrics.add_row_groups_pruned(outcome.metrics.pruned as u64);
        Self {
            access: RowGroupAccess::from_keep(&outcome.keep),
            stats_usable: true,
        }
    }

    /// Whether any row group is still to be read.
    pub(crate) fn any(&self) -> bool {
        self.access.iter().any(RowGroupAccess::should_read)
    }
}

/// Whether every top-level column of the data predicate is either absent
/// from the file or stored under its physical name (what the statistics
/// providers look up).
fn stats_usable(ctx: &ScanContext, footer: &Footer) -> bool {
    let Some(p) = &ctx.inner.predicate else {
        return true;
    };
    let file = footer.metadata.file_metadata();
    let Ok(schema) = parquet_to_arrow_schema(file.schema_descr(), file.key_value_metadata()) else {
        return false;
    };
    let mode = ctx.inner.spec.column_mapping;
    p.data_roots.iter().all(|root| {
        let Some(field) = ctx.inner.fields.iter().find(|f| f.name() == root) else {
            return false;
        };
        match find_field(field, schema.fields(), mode) {
            None => true,
            Some(i) => schema.field(i).name() == physical_name(field, mode),
        }
    })
}
