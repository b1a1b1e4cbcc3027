//! Page pruning with the Parquet page index (column index + offset index).
//!
//! Pages of different columns start at different rows, so a page cannot be
//! a container by itself. Instead, per row group:
//!
//! 1. collect the first row of every page of every column the predicate
//!    references, and cut the row group at all of them into *segments*;
//!    each segment lies inside exactly one page of each column:
//!
//!    ```text
//!    rows      0    100  150  200       300
//!    col a     |a0       |a1       |a2    |     (pages at 0, 150, 300...)
//!    col b     |b0  |b1            |b2    |     (pages at 0, 100, 200...)
//!    segments  |s0  |s1  |s2  |s3  ...
//!    ```
//! 2. give each segment the statistics of its page in each column (Arrow
//!    `take` over `StatisticsConverter`'s per-page arrays); null and row
//!    counts stay those of the page, which is what "all NULL" / "no NULL"
//!    needs;
//! 3. run the ordinary pruner over the segments;
//! 4. turn the kept segments into a `RowSelection` (adjacent runs merged).
//!
//! A column without page index entries is unknown in every segment; a
//! column the file lacks is NULL in every row.

use std::sync::Arc;

use arrow_array::{ArrayRef, UInt32Array, UInt64Array};
use arrow_select::take::take;
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use parquet::file::metadata::ParquetMetaData;

use super::access::{AccessPlan, RowGroupAccess};
use super::parquet_columns::{ParquetColumn, ParquetColumns};
use super::table::StatisticsTable;
use crate::predicate::Predicate;
use crate::pruning::PruningMetrics;
use crate::stats::{BoundsSemantics, ColumnStatistics};

/// Page-level statistics of one column in one row group.
struct ColumnPages {
    /// First row of each page, strictly increasing, starting at 0.
    first_rows: Vec<usize>,
    stats: ColumnStatistics,
}

/// Prunes the pages of row group `row_group` of a file whose `metadata`
/// includes the page index, columns found by name. Without a page index
/// (or for an out-of-range row group) the answer is [`RowGroupAccess::Scan`].
pub fn page_access_plan(
    predicate: &Predicate,
    metadata: &ParquetMetaData,
    row_group: usize,
) -> (RowGroupAccess, PruningMetrics) {
    page_access_plan_with(
        predicate,
        metadata,
        &ParquetColumns::by_name(metadata),
        row_group,
    )
}

/// [`page_access_plan`] with each column read where `columns` says it
/// lives (resolved once per file for row-group and page pruning alike).
pub fn page_access_plan_with(
    predicate: &Predicate,
    metadata: &ParquetMetaData,
    resolved: &ParquetColumns,
    row_group: usize,
) -> (RowGroupAccess, PruningMetrics) {
    let Some(rg) = metadata.row_groups().get(row_group) else {
        return (RowGroupAccess::Scan, PruningMetrics::default());
    };
    let Ok(rows) = usize::try_from(rg.num_rows()) else {
        return (RowGroupAccess::Scan, PruningMetrics::default());
    };
    if rows == 0 || metadata.column_index().is_none() || metadata.offset_index().is_none() {
        return (RowGroupAccess::Scan, PruningMetrics::default());
    }
    let mut columns = Vec::new();
    let mut absent = Vec::new();
    for (path, _) in predicate.columns() {
        match resolved.locate(metadata, path) {
            ParquetColumn::Leaf { index, field } => {
                if let Some(pages) = column_pages(metadata, row_group, rows, index, &field) {
                    columns.push((path.clone(), pages));
                }
            }
            ParquetColumn::Absent => absent.push(path.clone()),
            ParquetColumn::Unknown => {}
        }
    }
    if columns.is_empty() && absent.is_empty() {
        return (RowGroupAccess::Scan, PruningMetrics::default());
    }

    let mut starts: Vec<usize> = columns
        .iter()
        .flat_map(|(_, p)| p.first_rows.iter().copied())
        .collect();
    starts.push(0);
    starts.sort_unstable();
    starts.dedup();
    let lengths: Vec<usize> = starts
        .iter()
        .zip(starts.iter().skip(1).chain(std::iter::once(&rows)))
        .map(|(s, e)| e - s)
        .collect();

    let mut table = StatisticsTable::new(starts.len());
    for (path, pages) in columns {
        let index: UInt32Array = starts
            .iter()
            .map(|s| {
                u32::try_from(
                    pages
                        .first_rows
                        .partition_point(|f| f <= s)
                        .saturating_sub(1),
                )
                .ok()
            })
            .collect();
        let gather = |a: Option<ArrayRef>| a.and_then(|a| take(&a, &index, None).ok());
        let s = pages.stats;
        let mut stats = ColumnStatistics::unknown().with_semantics(s.semantics);
        stats.min = gather(s.min);
        stats.max = gather(s.max);
        stats.null_count = gather(s.null_count);
        stats.row_count = gather(s.row_count);
        table.insert(path, stats);
    }
    let segment_rows: ArrayRef = Arc::new(UInt64Array::from_iter_values(
        lengths.iter().map(|l| *l as u64),
    ));
    for path in absent {
        table.insert(
            path,
            ColumnStatistics::unknown()
                .with_null_count(segment_rows.clone())
                .with_row_count(segment_rows.clone()),
        );
    }

    let outcome = predicate.prune(&table);
    let mut selectors: Vec<RowSelector> = Vec::new();
    for (keep, len) in outcome.keep.iter().zip(lengths) {
        let keep = keep != Some(false);
        match selectors.last_mut() {
            Some(last) if last.skip != keep => last.row_count += len,
            _ => selectors.push(if keep {
                RowSelector::select(len)
            } else {
                RowSelector::skip(len)
            }),
        }
    }
    let access = match outcome.metrics.pruned {
        0 => RowGroupAccess::Scan,
        p if p == outcome.metrics.containers => RowGroupAccess::Skip,
        _ => RowGroupAccess::Selection(RowSelection::from(selectors)),
    };
    (access, outcome.metrics)
}

/// Page boundaries and per-page statistics of leaf `index`, or `None` when
/// the page index lacks or garbles them.
fn column_pages(
    metadata: &ParquetMetaData,
    row_group: usize,
    rows: usize,
    index: usize,
    field: &arrow_schema::Field,
) -> Option<ColumnPages> {
    let column_index = metadata.column_index()?;
    let offset_index = metadata.offset_index()?;
    // The converter indexes these without bounds checks.
    column_index.get(row_group)?.get(index)?;
    let locations = offset_index.get(row_group)?.get(index)?.page_locations();
    let first_rows: Vec<usize> = locations
        .iter()
        .map(|l| usize::try_from(l.first_row_index).ok())
        .collect::<Option<_>>()?;
    let well_formed = first_rows.first() == Some(&0)
        && first_rows.windows(2).all(|w| w[0] < w[1])
        && first_rows.last().is_some_and(|l| *l < rows);
    if !well_formed {
        return None;
    }
    let descr = metadata.file_metadata().schema_descr();
    let converter = StatisticsConverter::from_column_index(index, field, descr)
        .ok()?
        .with_missing_null_counts_as_zero(false);
    let groups = [row_group];
    let pages = first_rows.len();
    let sized = |a: ArrayRef| (a.len() == pages).then_some(a);
    let min = converter
        .data_page_mins(column_index, offset_index, groups.iter())
        .ok()
        .and_then(sized);
    let max = converter
        .data_page_maxes(column_index, offset_index, groups.iter())
        .ok()
        .and_then(sized);
    let null_count = converter
        .data_page_null_counts(column_index, offset_index, groups.iter())
        .ok()
        .map(|a| Arc::new(a) as ArrayRef)
        .and_then(sized);
    let row_count = converter
        .data_page_row_counts(offset_index, metadata.row_groups(), groups.iter())
        .ok()
        .flatten()
        .map(|a| Arc::new(a) as ArrayRef)
        .and_then(sized);
    let mut stats = ColumnStatistics::unknown().with_semantics(BoundsSemantics::parquet());
    stats.min = min;
    stats.max = max;
    stats.null_count = null_count;
    stats.row_count = row_count;
    Some(ColumnPages { first_rows, stats })
}

/// Refines the row groups an [`AccessPlan`] still scans with page pruning.
pub(super) fn refine(
    predicate: &Predicate,
    metadata: &ParquetMetaData,
    columns: &ParquetColumns,
    plan: &mut AccessPlan,
) {
    for (i, access) in plan.row_groups.iter_mut().enumerate() {
        if *access == RowGroupAccess::Scan {
            let (refined, metrics) = page_access_plan_with(predicate, metadata, columns, i);
            plan.page_metrics.merge(&metrics);
            *access = refined;
        }
    }
}
