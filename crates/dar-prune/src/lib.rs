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
