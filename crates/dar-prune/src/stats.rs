//! The statistics-provider trait: one Arrow array per statistic across many
//! containers (files, row groups or page segments), so a single vectorized
//! pass decides which containers may hold matching rows.

use arrow_array::{ArrayRef, BooleanArray};

use crate::expr::ColumnPath;

/// Default length (in characters) of Delta string-statistic prefixes
/// (`delta.dataSkippingStringPrefixLength`).
pub const DEFAULT_STRING_PREFIX_LENGTH: usize = 32;

/// How far the bounds of a statistics source can be trusted.
///
/// The defaults describe exact Parquet-style bounds that may leave out NaN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BoundsSemantics {
    /// String maxima may be truncated prefixes (Delta stats): a maximum of at
    /// least this many characters, or one ending in a tie-breaker character
    /// (U+10FFFD, U+10FFFF, U+FFFD, 0x7F), stands for "prefix followed by +∞".
    pub string_max_prefix_length: Option<usize>,
    /// Timestamp maxima are truncated down to milliseconds (Delta stats): the
    /// real maximum may be up to 999 µs above the stored one.
    pub timestamp_max_truncated_to_millis: bool,
    /// Float minima and maxima may ignore NaN values (Parquet writers do), so
    /// a container may hold NaN, which SQL orders above every number, even
    /// when its maximum is finite.
    pub nan_outside_bounds: bool,
}

impl Default for BoundsSemantics {
    fn default() -> Self {
        Self::parquet()
    }
}

impl BoundsSemantics {
    /// Parquet footer or page-index statistics: genuine bounds (truncated
    /// Parquet maxima are rounded up by writers), NaN not counted.
    pub fn parquet() -> Self {
        Self {
            string_max_prefix_length: None,
            timestamp_max_truncated_to_millis: false,
            nan_outside_bounds: true,
        }
    }

    /// Delta `add.stats` (protocol §8.3): string maxima may be truncated
    /// prefixes of `prefix_length` characters, timestamp maxima are truncated
    /// to milliseconds, and NaN may be left out of float bounds (writers
    /// differ, so this is the safe assumption).
    pub fn delta(prefix_length: usize) -> Self {
        Self {
            string_max_prefix_length: Some(prefix_length),
            timestamp_max_truncated_to_millis: true,
            nan_outside_bounds: true,
        }
    }

    /// Exact values known to be complete, such as partition values: min and
    /// max are the value itself and NaN is a value like any other.
    pub fn exact() -> Self {
        Self {
            string_max_prefix_length: None,
            timestamp_max_truncated_to_millis: false,
            nan_outside_bounds: false,
        }
    }

    /// Sets [`BoundsSemantics::nan_outside_bounds`].
    pub fn with_nan_outside_bounds(mut self, v: bool) -> Self {
        self.nan_outside_bounds = v;
        self
    }
}

/// The statistics of one column over all containers. Every array has one
/// element per container; a missing array or a NULL element means unknown.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ColumnStatistics {
    /// Lower bounds of the non-NULL values (ideally of the column's type;
    /// narrower types are widened, see [`crate::Predicate::prune`]).
    pub min: Option<ArrayRef>,
    /// Upper bounds of the non-NULL values.
    pub max: Option<ArrayRef>,
    /// Number of NULL values (an integer array).
    pub null_count: Option<ArrayRef>,
    /// Number of rows (an integer array) that `null_count` counts against.
    pub row_count: Option<ArrayRef>,
    /// Per container: `false` where bounds are wide (Delta
    /// `tightBounds = false`): min/max still bound the live rows, but a null
    /// count is meaningful only when it is 0 or equals the row count. `None`
    /// means tight everywhere.
    pub tight_bounds: Option<BooleanArray>,
    /// How the bounds may be loose.
    pub semantics: BoundsSemantics,
}

impl ColumnStatistics {
    /// Nothing known about the column.
    pub fn unknown() -> Self {
        Self::default()
    }
    /// Sets the minima.
    pub fn with_min(mut self, min: ArrayRef) -> Self {
        self.min = Some(min);
        self
    }
    /// Sets the maxima.
    pub fn with_max(mut self, max: ArrayRef) -> Self {
        self.max = Some(max);
        self
    }
    /// Sets the null counts.
    pub fn with_null_count(mut self, null_count: ArrayRef) -> Self {
        self.null_count = Some(null_count);
        self
    }
    /// Sets the row counts.
    pub fn with_row_count(mut self, row_count: ArrayRef) -> Self {
        self.row_count = Some(row_count);
        self
    }
    /// Sets the per-container tight-bounds flags.
    pub fn with_tight_bounds(mut self, tight: BooleanArray) -> Self {
        self.tight_bounds = Some(tight);
        self
    }
    /// Sets the bounds semantics.
    pub fn with_semantics(mut self, semantics: BoundsSemantics) -> Self {
        self.semantics = semantics;
        self
    }
}

/// A source of per-container statistics.
///
/// Implementations return arrays; they never fail. Statistics that are
/// missing, of the wrong type or of the wrong length are treated as unknown
/// by the pruner (and counted in [`crate::PruningMetrics`]).
pub trait StatisticsProvider {
    /// How many containers (files, row groups, page segments) there are.
    fn num_containers(&self) -> usize;

    /// The statistics of `column` across all containers.
    fn column_statistics(&self, column: &ColumnPath) -> ColumnStatistics;
}
