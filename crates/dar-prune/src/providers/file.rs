//! File-level statistics: the Delta file index as Arrow arrays, one row per
//! file. `dar-scan` fills it from `dar-log`'s columnar file index.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BooleanArray, UInt64Array};

use crate::expr::ColumnPath;
use crate::stats::{
    BoundsSemantics, ColumnStatistics, DEFAULT_STRING_PREFIX_LENGTH, StatisticsProvider,
};

#[derive(Debug, Clone, Default)]
struct DataColumn {
    min: Option<ArrayRef>,
    max: Option<ArrayRef>,
    null_count: Option<ArrayRef>,
}

/// Per-file statistics of a Delta table (protocol §8): for each data column
/// (by physical path) min/max/null-count arrays, plus `numRecords`, the
/// `tightBounds` flags, and typed partition values (exact: min = max = the
/// value). Every array has one element per file; NULL means unknown.
///
/// ```
/// # use std::sync::Arc;
/// # use arrow_array::{Int64Array, StringArray};
/// # use arrow_schema::{DataType, Field, Schema};
/// use dar_prune::{FileStatistics, Predicate};
///
/// let stats = FileStatistics::builder(2)
///     .with_num_records(Arc::new(Int64Array::from(vec![10, 10])))
///     .with_min("id", Arc::new(Int64Array::from(vec![0, 10])))
///     .with_max("id", Arc::new(Int64Array::from(vec![9, 19])))
///     .with_null_count("id", Arc::new(Int64Array::from(vec![0, 0])))
///     .with_partition_values("region", Arc::new(StringArray::from(vec![Some("eu"), None])))
///     .build();
/// let schema = Schema::new(vec![
///     Field::new("id", DataType::Int64, true),
///     Field::new("region", DataType::Utf8, true),
/// ]);
/// let p = Predicate::parse("id >= 12", &schema)?;
/// assert_eq!(p.prune(&stats).keep, vec![false, true].into());
/// let p = Predicate::parse("region = 'eu'", &schema)?;
/// assert_eq!(p.prune(&stats).keep, vec![true, false].into());
/// # Ok::<(), dar_prune::PruneError>(())
/// ```
#[derive(Debug, Clone)]
pub struct FileStatistics {
    files: usize,
    num_records: Option<ArrayRef>,
    tight_bounds: Option<BooleanArray>,
    semantics: BoundsSemantics,
    data: HashMap<ColumnPath, DataColumn>,
    partitions: HashMap<ColumnPath, ArrayRef>,
}

/// Builds [`FileStatistics`].
#[derive(Debug, Clone)]
pub struct FileStatisticsBuilder {
    inner: FileStatistics,
}

impl FileStatistics {
    /// A builder for `files` files.
    pub fn builder(files: usize) -> FileStatisticsBuilder {
        FileStatisticsBuilder {
            inner: FileStatistics {
                files,
                num_records: None,
                tight_bounds: None,
                semantics: BoundsSemantics::delta(DEFAULT_STRING_PREFIX_LENGTH),
                data: HashMap::new(),
                partitions: HashMap::new(),
            },
        }
    }
}

impl FileStatisticsBuilder {
    fn column(&mut self, path: ColumnPath) -> &mut DataColumn {
        self.inner.data.entry(path).or_default()
    }
    /// `numRecords` per file (physical rows, DV-deleted rows included).
    pub fn with_num_records(mut self, num_records: ArrayRef) -> Self {
        self.inner.num_records = Some(num_records);
        self
    }
    /// `tightBounds` per file (NULL reads as `true`, as the protocol says
    /// for an absent flag).
    pub fn with_tight_bounds(mut self, tight: BooleanArray) -> Self {
        let filled: BooleanArray = tight.iter().map(|v| Some(v.unwrap_or(true))).collect();
        self.inner.tight_bounds = Some(filled);
        self
    }
    /// `delta.dataSkippingStringPrefixLength` (default 32).
    pub fn with_string_prefix_length(mut self, chars: usize) -> Self {
        self.inner.semantics.string_max_prefix_length = Some(chars);
        self
    }
    /// Whether float bounds may leave out NaN (default `true`, the safe
    /// assumption; set `false` only for writers known to put NaN in the max,
    /// as Delta-Spark does).
    pub fn with_nan_outside_bounds(mut self, v: bool) -> Self {
        self.inner.semantics.nan_outside_bounds = v;
        self
    }
    /// `minValues` of a data column.
    pub fn with_min(mut self, column: impl Into<ColumnPath>, min: ArrayRef) -> Self {
        self.column(column.into()).min = Some(min);
        self
    }
    /// `maxValues` of a data column.
    pub fn with_max(mut self, column: impl Into<ColumnPath>, max: ArrayRef) -> Self {
        self.column(column.into()).max = Some(max);
        self
    }
    /// `nullCount` of a data column.
    pub fn with_null_count(mut self, column: impl Into<ColumnPath>, null_count: ArrayRef) -> Self {
        self.column(column.into()).null_count = Some(null_count);
        self
    }
    /// Typed partition values of a partition column (NULL = the partition
    /// value is null, so every row of the file is null in that column).
    pub fn with_partition_values(
        mut self,
        column: impl Into<ColumnPath>,
        values: ArrayRef,
    ) -> Self {
        self.inner.partitions.insert(column.into(), values);
        self
    }
    /// The finished statistics. Arrays of the wrong length are not rejected
    /// here; the pruner ignores them (and counts them).
    pub fn build(self) -> FileStatistics {
        self.inner
    }
}

impl StatisticsProvider for FileStatistics {
    fn num_containers(&self) -> usize {
        self.files
    }

    fn column_statistics(&self, column: &ColumnPath) -> ColumnStatistics {
        if let Some(values) = self.partitions.get(column) {
            // Exact: min = max = value. Counting against one "row" per file
            // says "all null" or "no null" without needing numRecords.
            let nulls: UInt64Array = (0..values.len())
                .map(|i| Some(u64::from(values.is_null(i))))
                .collect();
            return ColumnStatistics::unknown()
                .with_min(values.clone())
                .with_max(values.clone())
                .with_null_count(Arc::new(nulls))
                .with_row_count(Arc::new(UInt64Array::from(vec![1u64; values.len()])))
                .with_semantics(BoundsSemantics::exact());
        }
        let Some(data) = self.data.get(column) else {
            return ColumnStatistics::unknown();
        };
        ColumnStatistics {
            min: data.min.clone(),
            max: data.max.clone(),
            null_count: data.null_count.clone(),
            row_count: self.num_records.clone(),
            tight_bounds: self.tight_bounds.clone(),
            semantics: self.semantics,
        }
    }
}
