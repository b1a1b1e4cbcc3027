//! Predicates over Delta/Parquet data, sound file/row-group/page pruning, and
//! exact evaluation on Arrow batches.
#![forbid(unsafe_code)]

mod coerce;
mod error;
mod eval;
mod expr;
mod parse;
mod predicate;
mod schema_lookup;

pub use error::{PruneError, Result};
pub use eval::column_array;
pub use expr::{CmpOp, ColumnPath, Expr, Scalar, UTC, col, lit};
pub use parse::parse_expr;
pub use predicate::Predicate;
mod pruning;
mod stats;

pub use pruning::{PruneOutcome, PruningMetrics};
pub use stats::{BoundsSemantics, ColumnStatistics, DEFAULT_STRING_PREFIX_LENGTH, StatisticsProvider};
mod providers;

pub use providers::{
    AccessPlan, FileStatistics, FileStatisticsBuilder, RowGroupAccess, RowGroupStatistics, StatisticsTable, access_plan,
    page_access_plan,
};
