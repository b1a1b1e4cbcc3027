//! An in-memory [`StatisticsProvider`]: column statistics keyed by path.

use std::collections::HashMap;

use crate::expr::ColumnPath;
use crate::stats::{ColumnStatistics, StatisticsProvider};

/// Column statistics for `n` containers, keyed by column path. Columns not
/// in the table are unknown.
#[derive(Debug, Clone, Default)]
pub struct StatisticsTable {
    containers: usize,
    columns: HashMap<ColumnPath, ColumnStatistics>,
}

impl StatisticsTable {
    /// An empty table for `containers` containers.
    pub fn new(containers: usize) -> Self {
        Self {
            containers,
            columns: HashMap::new(),
        }
    }

    /// Adds (or replaces) the statistics of `column`.
    pub fn with_column(mut self, column: impl Into<ColumnPath>, stats: ColumnStatistics) -> Self {
        self.columns.insert(column.into(), stats);
        self
    }

    /// Adds (or replaces) the statistics of `column` in place.
    pub fn insert(&mut self, column: ColumnPath, stats: ColumnStatistics) {
        self.columns.insert(column, stats);
    }
}

impl StatisticsProvider for StatisticsTable {
    fn num_containers(&self) -> usize {
        self.containers
    }

    fn column_statistics(&self, column: &ColumnPath) -> ColumnStatistics {
        self.columns.get(column).cloned().unwrap_or_default()
    }
}
