//! Row-group statistics from a Parquet footer, through parquet's
//! `StatisticsConverter` (which already yields one Arrow array per
//! statistic across row groups).

use std::sync::Arc;

use arrow_array::{ArrayRef, UInt64Array};
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::file::metadata::ParquetMetaData;

use super::access::{AccessPlan, RowGroupAccess};
use super::parquet_columns::{ParquetColumn, ParquetColumns};
use crate::expr::ColumnPath;
use crate::predicate::Predicate;
use crate::stats::{BoundsSemantics, ColumnStatistics, StatisticsProvider};

/// The row groups of one Parquet file as pruning containers.
///
/// Column paths are looked up by name in the file (physical names when the
/// table uses column mapping), or where the caller resolved them
/// ([`RowGroupStatistics::with_columns`]). A column the file lacks is NULL
/// in every row.
#[derive(Debug)]
pub struct RowGroupStatistics<'a> {
    metadata: &'a ParquetMetaData,
    columns: std::borrow::Cow<'a, ParquetColumns>,
    /// Rows per row group, shared by every column's statistics.
    rows: ArrayRef,
}

impl<'a> RowGroupStatistics<'a> {
    /// Statistics of every row group of `metadata`, columns found by name.
    pub fn new(metadata: &'a ParquetMetaData) -> Self {
        Self::build(
            metadata,
            std::borrow::Cow::Owned(ParquetColumns::by_name(metadata)),
        )
    }

    /// Statistics of every row group of `metadata`, each column read where
    /// `columns` says it lives.
    pub fn with_columns(metadata: &'a ParquetMetaData, columns: &'a ParquetColumns) -> Self {
        Self::build(metadata, std::borrow::Cow::Borrowed(columns))
    }

    fn build(metadata: &'a ParquetMetaData, columns: std::borrow::Cow<'a, ParquetColumns>) -> Self {
        let counts: UInt64Array = metadata
            .row_groups()
            .iter()
            .map(|rg| u64::try_from(rg.num_rows()).ok())
            .collect();
        Self {
            metadata,
            columns,
            rows: Arc::new(counts),
        }
    }
}

impl StatisticsProvider for RowGroupStatistics<'_> {
    fn num_containers(&self) -> usize {
        self.metadata.num_row_groups()
    }

    fn column_statistics(&self, column: &ColumnPath) -> ColumnStatistics {
        let rows = Arc::clone(&self.rows);
        let base = ColumnStatistics::unknown()
            .with_semantics(BoundsSemantics::parquet())
            .with_row_count(rows.clone());
        let (index, field) = match self.columns.locate(self.metadata, column) {
            ParquetColumn::Leaf { index, field } => (index, field),
            ParquetColumn::Absent => return base.with_null_count(rows),
            ParquetColumn::Unknown => return ColumnStatistics::unknown(),
        };
        let descr = self.metadata.file_metadata().schema_descr();
        let Ok(converter) = StatisticsConverter::from_column_index(index, &field, descr) else {
            return ColumnStatistics::unknown();
        };
        // A missing null count is unknown, not zero.
        let converter = converter.with_missing_null_counts_as_zero(false);
        let groups = self.metadata.row_groups();
        let mut stats = base;
        stats.min = converter.row_group_mins(groups.iter()).ok();
        stats.max = converter.row_group_maxes(groups.iter()).ok();
        stats.null_count = converter
            .row_group_null_counts(groups.iter())
            .ok()
            .map(|a| Arc::new(a) as ArrayRef);
        stats
    }
}

/// Which row groups, and which pages of them, may hold rows matching
/// `predicate`: row groups are pruned with footer statistics, then the
/// survivors with the page index when `metadata` carries one (load it with
/// `ArrowReaderOptions::with_page_index(true)` / `PageIndexPolicy`).
pub fn access_plan(predicate: &Predicate, metadata: &ParquetMetaData) -> AccessPlan {
    let stats = RowGroupStatistics::new(metadata);
    let outcome = predicate.prune(&stats);
    let mut plan = AccessPlan {
        row_groups: RowGroupAccess::from_keep(&outcome.keep),
        row_group_metrics: outcome.metrics,
        page_metrics: Default::default(),
    };
    super::page::refine(predicate, metadata, &stats.columns, &mut plan);
    plan
}
