//! Stages 3 and 4: the page index, loaded only when it can pay off (the
//! predicate has a column whose chunks in a kept row group carry a column
//! index), then page pruning of each kept row group into a row selection.

use dar_prune::{RowGroupAccess, page_access_plan};
use parquet::arrow::arrow_reader::ArrowReaderOptions;

use super::footer::Footer;
use super::row_groups::RowGroupPlan;
use crate::context::ScanContext;
use crate::error::{Result, ScanError};
use crate::metrics::Stage;

/// Whether some chunk of a predicate column in a row group still to scan
/// has a column index.
fn page_index_pays_off(footer: &Footer, plan: &RowGroupPlan, columns: &[Vec<String>]) -> bool {
    let descr = footer.metadata.file_metadata().schema_descr();
    let leaves: Vec<usize> = descr
        .columns()
        .iter()
        .enumerate()
        .filter(|(_, c)| columns.iter().any(|p| c.path().parts() == p.as_slice()))
        .map(|(i, _)| i)
        .collect();
    if leaves.is_empty() {
        return false;
    }
    footer
        .metadata
        .row_groups()
        .iter()
        .zip(&plan.access)
        .filter(|(_, a)| **a == RowGroupAccess::Scan)
        .any(|(rg, _)| {
            leaves.iter().any(|l| {
                rg.columns()
                    .get(*l)
                    .is_some_and(|c| c.column_index_offset().is_some())
            })
        })
}

/// Refines `plan` with page statistics, loading the page index if needed.
pub(crate) async fn prune_pages(
    ctx: &ScanContext,
    path: &str,
    footer: &mut Footer,
    plan: &mut RowGroupPlan,
) -> Result<()> {
    let Some(predicate) = ctx.physical_predicate() else {
        return Ok(());
    };
    let columns: Vec<Vec<String>> = predicate
        .columns()
        .iter()
        .map(|(c, _)| c.parts().to_vec())
        .collect();
    if !plan.stats_usable || !page_index_pays_off(footer, plan, &columns) {
        return Ok(());
    }
    let metrics = &ctx.inner.metrics;
    if footer.metadata.column_index().is_none() || footer.metadata.offset_index().is_none() {
        let _t = metrics.time(Stage::PageIndex);
        let options = ArrowReaderOptions::new()
            .with_page_index_policy(parquet::file::metadata::PageIndexPolicy::Optional);
        footer.metadata = footer
            .reader
            .load_metadata(Some(&options))
            .await
            .map_err(|source| ScanError::Io {
                path: ctx.location(path),
                source: Box::new(source),
            })?;
    }
    let _t = metrics.time(Stage::Pages);
    for (i, access) in plan.access.iter_mut().enumerate() {
        if *access != RowGroupAccess::Scan {
            continue;
        }
        let (refined, m) = page_access_plan(predicate, &footer.metadata, i);
        metrics.add_pages_total(m.containers as u64);
        metrics.add_pages_pruned(m.pruned as u64);
        match &refined {
            RowGroupAccess::Skip => {
                metrics.add_row_groups_pruned(1);
                let rows = footer.metadata.row_group(i).num_rows();
                metrics.add_rows_skipped_by_pages(u64::try_from(rows).unwrap_or(0));
            }
            RowGroupAccess::Selection(s) => {
                metrics.add_rows_skipped_by_pages(s.skipped_row_count() as u64);
            }
            RowGroupAccess::Scan => {}
        }
        *access = refined;
    }
    Ok(())
}
