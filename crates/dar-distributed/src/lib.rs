//! dar's Delta scan beyond one machine, on
//! [datafusion-distributed](https://crates.io/crates/datafusion-distributed)
//! workers. No scheduler of our own: datafusion-distributed cuts a
//! DataFusion plan into stages and runs them on workers over Arrow Flight;
//! this crate makes dar's scan node one of the nodes it can ship.
//!
//! * [`DeltaScanCodec`]: the `PhysicalExtensionCodec` of
//!   `dar_datafusion::DeltaScanExec`. It carries the scan's serializable
//!   `dar_scan::ScanSpec` and the tasks of each partition (a few hundred
//!   bytes per file), never the table, credentials or caches.
//! * [`WorkerStores`]: a worker opens each table's store from the URI in the
//!   spec with its own storage options and environment.
//! * [`coordinator_state`]: the session that plans a query, gives each worker
//!   its own share of the files and runs the stages there.
//! * [`serve`] and [`WorkerHandle`]: a worker (what `dar worker` runs), on a
//!   TCP listener, in its own process or in the background of this one;
//!   [`WorkerOptions`] for its token, TLS and message limit.
//! * [`coordinator_state_with`] and [`ClientOptions`]: the token, CA and
//!   message limit with which a coordinator calls its workers.
//!
//! Every file is read by exactly one worker. A worker that fails (cannot
//! reach the store, dies mid-query) fails the query with an error naming
//! it: the query's stream ends with that error, after whatever batches
//! had already arrived (a caller that must never show part of a result
//! holds them until the stream ends, as `dar sql --workers` does).
//!
//! # What a worker trusts
//!
//! A worker runs the plans it is sent with its own storage credentials.
//! It checks, on every call: the token ([`Token`], compared in constant
//! time; required beyond loopback, a worker without one refuses to start
//! there), the size of each gRPC message ([`DEFAULT_MAX_MESSAGE_BYTES`]
//! unless set), and each plan's nodes ([`check_plan`]: storage is read
//! only through dar's Delta scan, never DataFusion's own file sources).
//! TLS ([`ServerTls`], [`TlsCa`]) keeps the token and the rows private on
//! the network.
//!
//! ```
//! use dar_datafusion::register_delta_table;
//! use dar_distributed::{WorkerHandle, coordinator_state, worker_url};
//! use dar_io::StorageOptions;
//! use dar_scan::Table;
//! use datafusion::prelude::{SessionConfig, SessionContext};
//!
//! # #[tokio::main(flavor = "multi_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // 1. Two workers on 127.0.0.1 (in the background of this process).
//! let mut workers = Vec::new();
//! for _ in 0..2 {
//!     let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//!     workers.push(WorkerHandle::start(listener, StorageOptions::new())?);
//! }
//! // 2. A coordinating session that knows them.
//! let urls = workers
//!     .iter()
//!     .map(|w| worker_url(&w.address().to_string()))
//!     .collect::<Result<Vec<_>, _>>()?;
//! let ctx = SessionContext::from(coordinator_state(SessionConfig::new(), urls));
//! // 3. Tables and SQL as usual.
//! let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/sample");
//! register_delta_table(&ctx, "trips", Table::open(sample).await?)?;
//! let batches = ctx
//!     .sql("SELECT count(*) AS n FROM trips WHERE day = DATE '2024-01-03'")
//!     .await?
//!     .collect()
//!     .await?;
//! let n = arrow_cast::display::array_value_to_string(batches[0].column(0), 0)?;
//! assert_eq!(n, "77");
//! # Ok(())
//! # }
//! ```

mod allow;
mod auth;
mod codec;
mod error;
mod linger;
mod planner;
mod stores;
mod tls;
mod wire;
mod worker;

pub use allow::check_plan;
pub use auth::{CheckToken, MIN_TOKEN_LEN, TOKEN_ENV, Token};
pub use codec::DeltaScanCodec;
pub use error::Error;
pub use linger::{LINGER, LingeringStream};
pub use planner::{coordinator_state, coordinator_state_with, unreachable_workers, worker_url};
pub use stores::{ScanRecord, WorkerStores};
pub use tls::{ServerTls, TlsCa};
pub use wire::{ClientOptions, DEFAULT_MAX_MESSAGE_BYTES};
pub use worker::{WorkerHandle, WorkerOptions, incoming, needs_token, serve, serve_with};
