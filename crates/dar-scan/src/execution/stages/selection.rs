//! Stage 6: one [`RowSelection`] for the whole file: per kept row group,
//! page selection ∩ DV survivors (DV row indexes are absolute in the file,
//! so row group `i` covers `[start_i, start_i + rows_i)`, protocol §9.6);
//! row groups left with no row are dropped. The result is the task's
//! [`FileAccess`], plain data.

use dar_dv::DeletedRows;
use dar_prune::RowGroupAccess;
use parquet::arrow::arrow_reader::{RowSelection, RowSelector};

use super::footer::FooterRead;
use super::row_groups::RowGroups;
use crate::execution::metrics::ScanMetrics;
use crate::planning::task::FileAccess;

/// Intersects page pruning and the DV into the file's access; the rows the
/// DV skips count as deleted when `count_deleted`.
pub(crate) fn intersect(
    footer: &FooterRead,
    groups: RowGroups,
    deleted: Option<&DeletedRows>,
    count_deleted: bool,
    metrics: &ScanMetrics,
) -> FileAccess {
    let parquet = footer.parquet();
    let mut row_groups = Vec::new();
    let mut selectors: Vec<RowSelector> = Vec::new();
    let mut partial = false;
    // First absolute row of row group `i`.
    let mut start = 0u64;
    for (i, access) in groups.access.into_iter().enumerate() {
        let rows = usize::try_from(parquet.row_group(i).num_rows()).unwrap_or(0);
        let range = start..start + rows as u64;
        start = range.end;
        if !access.should_read() {
            continue;
        }
        let dv_rows = deleted.map_or(0, |d| d.deleted_in(range.clone()));
        let access = match deleted {
            Some(d) if dv_rows > 0 => {
                if count_deleted {
                    metrics.add_rows_deleted_by_dv(dv_rows);
                }
                access.intersect(&RowGroupAccess::Selection(d.selection(range)), rows)
            }
            _ => access,
        };
        match access {
            RowGroupAccess::Skip => metrics.add_row_groups_pruned(1),
            RowGroupAccess::Scan => {
                row_groups.push(i);
                selectors.push(RowSelector::select(rows));
            }
            RowGroupAccess::Selection(s) => {
                row_groups.push(i);
                partial = true;
                selectors.extend(Vec::<RowSelector>::from(s));
            }
        }
    }
    let selection = partial.then(|| RowSelection::from(selectors));
    FileAccess::from_selection(row_groups, selection)
}
