//! Predicates over Delta/Parquet data, sound pruning of files, row groups
//! and pages, and exact evaluation on Arrow batches.
//!
//! A selective scan is fast only if it skips what cannot match at every
//! level. `dar-prune` owns the predicate language and all three levels; it
//! does no I/O and knows nothing of Delta logs: it works on Arrow arrays of
//! statistics and on Parquet metadata.
//!
//! * [`Expr`]: columns (nested struct fields too), typed literals for every
//!   Delta type, comparisons, `IN`, `IS [NOT] NULL`, `BETWEEN`, `LIKE
//!   'prefix%'`, `AND`/`OR`/`NOT` with SQL three-valued logic. Build it with
//!   [`col`] / [`lit`] or parse text with [`parse_expr`].
//! * [`Predicate`]: an `Expr` validated against an Arrow schema (unknown
//!   columns and incompatible literals are errors, with suggestions);
//!   numbers compare by value across numeric types, as in SQL (`n > 2.5` on
//!   an integer column is `n >= 3`), floats in SQL's order (`-0.0 = 0.0`,
//!   NaN equal to itself and above every other value).
//! * Messages about a predicate's text: [`quote_predicate`], [`error_site`]
//!   (` near "> 5"` for a parse error) and [`nearest_columns`] (the names a
//!   misspelt column may have meant).
//! * [`Predicate::evaluate`] / [`Predicate::filter`]: exact evaluation with
//!   arrow-rs kernels; [`Predicate::columns`] is the projection a Parquet
//!   `ArrowPredicate` needs.
//! * [`Predicate::prune`]: one vectorized pass over any
//!   [`StatisticsProvider`] (per-container Arrow arrays of min, max, null
//!   count, row count) answering "may match" per container. Providers:
//!   [`FileStatistics`] (the Delta file index), [`RowGroupStatistics`]
//!   (Parquet footers) and the page index ([`page_access_plan`]); the output
//!   for a Parquet file is plain data, [`AccessPlan`] of
//!   [`RowGroupAccess`] `Skip | Scan | Selection(RowSelection)`.
//!
//! Pruning is sound: it may keep a container without matches, never drop
//! one with a match. Missing stats, truncated string maxima, millisecond
//! timestamp maxima, NaN, `tightBounds = false`, widened types and columns
//! absent from a file are all handled conservatively; unusable statistics
//! are counted in [`PruningMetrics`], never errors.
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{Int64Array, RecordBatch, StringArray};
//! use arrow_schema::{DataType, Field, Schema};
//! use dar_prune::{FileStatistics, Predicate};
//!
//! let schema = Arc::new(Schema::new(vec![
//!     Field::new("id", DataType::Int64, true),
//!     Field::new("city", DataType::Utf8, true),
//! ]));
//! let p = Predicate::parse("id > 15 AND city IN ('Oslo', 'Rome')", &schema)?;
//!
//! // A tiny file index: three files, id ranges 0-9, 10-19, 20-29.
//! let files = FileStatistics::builder(3)
//!     .with_num_records(Arc::new(Int64Array::from(vec![10, 10, 10])))
//!     .with_min("id", Arc::new(Int64Array::from(vec![0, 10, 20])))
//!     .with_max("id", Arc::new(Int64Array::from(vec![9, 19, 29])))
//!     .with_min("city", Arc::new(StringArray::from(vec!["Athens", "Oslo", "Sofia"])))
//!     .with_max("city", Arc::new(StringArray::from(vec!["Zurich", "Paris", "Vienna"])))
//!     .build();
//! let outcome = p.prune(&files);
//! assert_eq!(outcome.keep, vec![false, true, false].into());
//! assert_eq!(outcome.metrics.pruned, 2);
//!
//! // Exact evaluation of the same predicate on rows of a kept file.
//! let batch = RecordBatch::try_new(schema, vec![
//!     Arc::new(Int64Array::from(vec![Some(12), Some(17), None])),
//!     Arc::new(StringArray::from(vec!["Oslo", "Oslo", "Rome"])),
//! ])?;
//! assert_eq!(p.evaluate(&batch)?, vec![Some(false), Some(true), None].into());
//! assert_eq!(p.filter(&batch)?.num_rows(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

mod coerce;
mod error;
mod eval;
mod exact;
mod expr;
mod float_order;
mod in_list;
mod messages;
mod parse;
mod predicate;
mod schema_lookup;

pub use error::{PruneError, Result};
pub use eval::column_array;
pub use expr::{CmpOp, ColumnPath, Expr, MAX_EXPR_DEPTH, Scalar, UTC, col, lit};
pub use messages::{ErrorSite, error_site, quote_predicate};
pub use parse::{MAX_KEYWORD_PAREN_DEPTH, MAX_NAME_PARTS, parse_expr};
pub use predicate::Predicate;
pub use schema_lookup::nearest_columns;
mod pruning;
mod stats;

pub use pruning::{PruneOutcome, PruningMetrics};
pub use stats::{
    BoundsSemantics, ColumnStatistics, DEFAULT_STRING_PREFIX_LENGTH, StatisticsProvider,
};
mod providers;

pub use providers::{
    AccessPlan, FileStatistics, FileStatisticsBuilder, ParquetColumn, ParquetColumns,
    RowGroupAccess, RowGroupStatistics, StatisticsTable, access_plan, page_access_plan,
    page_access_plan_with, predicate_projection,
};
