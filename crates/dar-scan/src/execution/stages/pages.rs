//! Stages 3 and 4: the page index, loaded only when it can pay off (a
//! predicate column's chunk in a kept row group carries a column index),
//! then page pruning of each kept row group into a row selection. Loading
//! the page index yields a new footer value; the one given is not changed.

use dar_prune::{ParquetColumn, RowGroupAccess, page_access_plan_with};
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::file::metadata::PageIndexPolicy;

use super::footer::FooterRead;
use super::row_groups::RowGroups;
use crate::errors::error::{Result, ScanError};
use crate::execution::metrics::{ScanMetrics, Stage};
use crate::execution::state::ScanState;

/// Whether some chunk of a predicate column in a row group still to scan
/// has a column index.
fn page_index_pays_off(footer: &FooterRead, groups: &RowGroups, state: &ScanState) -> bool {
    let Some(predicate) = state.pruning_predicate() else {
        return false;
    };
    let leaves: Vec<usize> = predicate
        .columns()
        .iter()
        .filter_map(|(path, _)| match footer.columns.stats.get(path) {
            Some(ParquetColumn::Leaf { index, .. }) => Some(*index),
            _ => None,
        })
        .collect();
    if leaves.is_empty() {
        return false;
    }
    footer
        .parquet()
        .row_groups()
        .iter()
        .zip(&groups.access)
        .filter(|(_, a)| **a == RowGroupAccess::Scan)
        .any(|(rg, _)| {
            leaves.iter().any(|l| {
                rg.columns()
                    .get(*l)
                    .is_some_and(|c| c.column_index_offset().is_some())
            })
        })
}

/// `footer` with its page index, read if the footer lacks it.
async fn with_page_index(mut footer: FooterRead, metrics: &ScanMetrics) -> Result<FooterRead> {
    let parquet = footer.parquet();
    if parquet.column_index().is_some() && parquet.offset_index().is_some() {
        return Ok(footer);
    }
    let _t = metrics.time(Stage::PageIndex);
    let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Optional);
    let loaded = footer
        .reader
        .load_metadata(Some(&options))
        .await
        .map_err(|source| ScanError::Io {
            path: footer.location.clone(),
            source: Box::new(source),
        })?;
    // The decoder takes footer and schema as one value; the column map
    // resolved from the schema stays valid (same file, same schema).
    footer.metadata = ArrowReaderMetadata::try_new(loaded, ArrowReaderOptions::new())
        .map_err(|e| ScanError::parquet(&footer.location, e))?;
    Ok(footer)
}

/// Refines `groups` with page statistics, loading the page index if
/// needed: returns the footer (with its page index when it was loaded) and
/// the refined decisions.
pub(crate) async fn prune(
    footer: FooterRead,
    groups: RowGroups,
    state: &ScanState,
    metrics: &ScanMetrics,
) -> Result<(FooterRead, RowGroups)> {
    let Some(predicate) = state.pruning_predicate() else {
        return Ok((footer, groups));
    };
    if !page_index_pays_off(&footer, &groups, state) {
        return Ok((footer, groups));
    }
    let footer = with_page_index(footer, metrics).await?;
    let _t = metrics.time(Stage::Pages);
    let parquet = footer.parquet();
    let mut access = groups.access;
    for (i, a) in access.iter_mut().enumerate() {
        if *a != RowGroupAccess::Scan {
            continue;
        }
        let (refined, m) = page_access_plan_with(predicate, parquet, &footer.columns.stats, i);
        metrics.add_pages_total(m.containers as u64);
        metrics.add_pages_pruned(m.pruned as u64);
        match &refined {
            RowGroupAccess::Skip => {
                metrics.add_row_groups_pruned(1);
                let rows = parquet.row_group(i).num_rows();
                metrics.add_rows_skipped_by_pages(u64::try_from(rows).unwrap_or(0));
            }
            RowGroupAccess::Selection(s) => {
                metrics.add_rows_skipped_by_pages(s.skipped_row_count() as u64);
            }
            RowGroupAccess::Scan => {}
        }
        *a = refined;
    }
    Ok((footer, RowGroups { access }))
}
