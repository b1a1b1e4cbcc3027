//! Delta tables in DataFusion SQL, through `dar-scan`.
//!
//! A thin adapter: every file, pruning, deletion-vector and I/O decision is
//! made by the dar crates below it. What it adds is the DataFusion side:
//!
//! * [`DeltaTableProvider`]: a `TableProvider` over a [`dar_scan::Table`]
//!   (at the version it was opened at; [`DeltaTableProvider::refresh`] moves
//!   it forward without registering it again), registered with
//!   [`register_delta_table`].
//! * Filter pushdown: each DataFusion filter is converted to a
//!   `dar_prune::Expr` and reported `Exact` when dar returns exactly its
//!   rows, `Inexact` when only a weaker form converts (dar prunes and
//!   pre-filters, DataFusion filters again) and `Unsupported` otherwise.
//! * [`DeltaScanExec`]: projection, filters and limit pushed into dar
//!   (`LIMIT 1` opens one file), files split into the session's target
//!   partitions balanced by bytes, statistics from the file index (so
//!   `COUNT(*)` is answered without reading data files when no deletion
//!   vector or predicate is in the way), and dar's scan metrics in
//!   `EXPLAIN ANALYZE`. [`DeltaScanExec::encode`] and
//!   [`DeltaScanExec::decode`] carry it to another process (spec and tasks,
//!   never credentials), and [`DeltaScanExec::split`] divides its files
//!   among workers; `dar-distributed` builds on them.
//! * [`register_dar`]: the table function `delta_scan('uri' [, version | 'timestamp'])`
//!   and `CREATE EXTERNAL TABLE t STORED AS DELTA LOCATION 'uri'`.
//! * [`sql`]: one SQL statement planned with dar's rules: reading only
//!   unless [`QueryOptions`] allow DDL, writes or statements (a write never
//!   goes inside a Delta table), long `AND`/`OR` chains rebalanced and
//!   deeper nesting than [`MAX_EXPR_NESTING`] refused (DataFusion recurses
//!   on expressions), `TIMESTAMP` in microseconds as in Delta, and
//!   `SELECT * FROM t [WHERE …] [LIMIT …]` planned without DataFusion's
//!   quadratic expansion of `*` (linear in the columns on wide tables).
//! * [`filter_columns`]: the columns a statement's filters name, before
//!   its tables open, so that a one-shot query opens them with those
//!   columns' file statistics decoded with the log's counts.
//!
//! ```
//! use dar_datafusion::{register_dar, register_delta_table};
//! use dar_scan::Table;
//! use datafusion::prelude::SessionContext;
//!
//! # #[tokio::main(flavor = "multi_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/sample");
//! let ctx = SessionContext::new();
//! register_dar(&ctx);
//! register_delta_table(&ctx, "trips", Table::open(sample).await?)?;
//! let batches = ctx
//!     .sql("SELECT count(*) AS n FROM trips WHERE day = DATE '2024-01-03'")
//!     .await?
//!     .collect()
//!     .await?;
//! let n = arrow_cast::display::array_value_to_string(batches[0].column(0), 0)?;
//! assert_eq!(n, "77"); // 80 trips written that day, 3 deleted by a deletion vector
//! # Ok(())
//! # }
//! ```

mod convert;
mod encoding;
mod exec;
mod factory;
mod filter_columns;
mod function;
mod metrics;
mod options;
mod provider;
mod query;
mod statistics;
mod wildcard;

use std::sync::Arc;

use dar_io::StorageOptions;
use dar_scan::TableOptions;
use datafusion::prelude::SessionContext;

pub use exec::DeltaScanExec;
pub use factory::DeltaTableFactory;
pub use filter_columns::filter_columns;
pub use function::{DeltaScanFunction, TableChangesFunction};
pub use options::{DeltaScanOptions, PARTITION_DICTIONARY_KEY};
pub use provider::{DeltaTableProvider, datafusion_schema, register_delta_table};
pub use query::{MAX_EXPR_NESTING, QueryOptions, sql};

/// The name of the table function.
pub const DELTA_SCAN_FUNCTION: &str = "delta_scan";
/// The name of the change-data-feed table function.
pub const TABLE_CHANGES_FUNCTION: &str = "table_changes";
/// The file type of `CREATE EXTERNAL TABLE ... STORED AS DELTA`.
pub const DELTA_FILE_TYPE: &str = "DELTA";

/// Registers dar in `ctx` with default options: the table functions
/// `delta_scan('uri' [, version | 'timestamp'])` and `table_changes('uri',
/// start [, end])`, and `STORED AS DELTA`.
pub fn register_dar(ctx: &SessionContext) {
    register_dar_with(ctx, StorageOptions::new(), DeltaScanOptions::default());
}

/// Registers dar in `ctx`; tables opened by `delta_scan`, `table_changes`
/// and `STORED AS DELTA` open with `base` (storage options, or whole
/// [`TableOptions`]: caches, confinement) and scan with `options`.
pub fn register_dar_with(
    ctx: &SessionContext,
    base: impl Into<TableOptions>,
    options: DeltaScanOptions,
) {
    let base: TableOptions = base.into();
    ctx.register_udtf(
        DELTA_SCAN_FUNCTION,
        Arc::new(DeltaScanFunction::new(base.clone(), options)),
    );
    ctx.register_udtf(
        TABLE_CHANGES_FUNCTION,
        Arc::new(TableChangesFunction::new(base.clone(), options)),
    );
    let state = ctx.state_ref();
    let mut state = state.write();
    state.table_factories_mut().insert(
        DELTA_FILE_TYPE.to_string(),
        Arc::new(DeltaTableFactory::new(base, options)),
    );
}
