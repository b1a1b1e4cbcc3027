//! `dar serve`: Delta tables served over Arrow Flight SQL, fresh and
//! consistent, to many clients at once. A library crate of its own so that
//! an application can embed the server; it owns no Delta or scan logic and
//! composes the crates below it:
//!
//! * each table is opened once ([`dar_scan::Table`]) and refreshed in the
//!   background every [`ServeOptions::with_refresh_interval`] with
//!   `Table::refresh` (only new commits are replayed); a query reads one
//!   snapshot per table from plan to last batch, even while a refresh
//!   lands, and `delta_scan('name', version)` still travels in time;
//! * SQL is `dar sql`'s: DataFusion with `dar-datafusion`'s provider,
//!   read-only (`dar_datafusion::sql`: DDL, DML and `COPY` are refused),
//!   `delta_scan()`/`table_changes()` limited to the served tables unless
//!   [`ServeOptions::with_any_table`];
//! * Flight SQL (`arrow_flight::sql::server`): statements, prepared
//!   statements with `$1`/`?` parameters bound by `DoPut`, and `GetSqlInfo`,
//!   `GetCatalogs`, `GetDbSchemas`, `GetTables`, `GetTableTypes`; results
//!   streamed as they are produced;
//! * many clients: admission control (a bounded queue, then
//!   `RESOURCE_EXHAUSTED`), a DataFusion memory pool, a query timeout, and
//!   a client that goes away stops its query;
//! * the bearer token and TLS of `dar worker` (`dar-distributed`), and an
//!   admin port with `GET /health` and `GET /metrics`.
//!
//! ```no_run
//! use dar_serve::{ServeOptions, Server, TableConfig};
//!
//! # #[tokio::main(flavor = "multi_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let options = ServeOptions::new().with_table(TableConfig::new("trips", "examples/data/sample"));
//! let server = Server::open(options).await?;
//! for table in server.tables() {
//!     println!("{} at version {}", table.name, table.version);
//! }
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:50051").await?;
//! server.serve(listener, async { let _ = tokio::signal::ctrl_c().await; }).await?;
//! # Ok(())
//! # }
//! ```

mod admin;
mod admission;
mod config;
mod error;
mod metrics;
mod query;
mod service;
mod session;
mod tables;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use arrow_flight::flight_service_server::FlightServiceServer;
use dar_datafusion::DeltaScanOptions;
use dar_distributed::CheckToken;
use datafusion::execution::disk_manager::{DiskManagerBuilder, DiskManagerMode};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use tokio::net::TcpListener;
use tonic::service::interceptor::InterceptedService;

pub use config::{
    DEFAULT_MAX_CONCURRENT_QUERIES, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_QUEUED_QUERIES,
    DEFAULT_QUERY_TIMEOUT, DEFAULT_REFRESH_INTERVAL, ServeOptions, TableConfig, parse_bytes,
    parse_duration,
};
pub use error::Error;

use crate::admission::Admission;
use crate::service::{Service, State};
use crate::session::Sessions;
use crate::tables::Tables;

/// How a table was at start.
#[derive(Debug, Clone)]
pub struct TableStatus {
    /// The name SQL uses.
    pub name: String,
    /// The version queries read now.
    pub version: u64,
    /// How long opening it took.
    pub open_time: Duration,
}

/// A server: the opened tables and everything queries share. Serve it
/// with [`Server::serve`] (and [`Server::serve_admin`] for the admin port).
#[derive(Debug, Clone)]
pub struct Server {
    state: Arc<State>,
    refresh_interval: Duration,
    token: Option<dar_distributed::Token>,
    tls: Option<dar_distributed::ServerTls>,
    max_message_bytes: usize,
    drain_timeout: Duration,
}

/// How long in-flight queries may finish once shutdown is asked.
pub const DEFAULT_DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

impl Server {
    /// Opens every table of `options` (one after the other) and builds the
    /// shared state; nothing is served yet.
    ///
    /// # Errors
    ///
    /// [`Error::Open`] for a table that cannot be opened, [`Error::Config`]
    /// for a wrong configuration (no table, two of one name).
    pub async fn open(options: ServeOptions) -> Result<Self, Error> {
        if options.tables.is_empty() {
            return Err(Error::Config(
                "no table to serve: give at least one (--table NAME=URI)".into(),
            ));
        }
        // Plain strings and partition values: view types and dictionaries
        // are not read by every Flight SQL client (JDBC, older Arrow).
        let scan = DeltaScanOptions::default()
            .with_view_types(false)
            .with_dictionary_partitions(false);
        let tables = Tables::open(&options, scan).await?;
        let mut runtime = RuntimeEnvBuilder::new()
            // Operators that run out of memory fail the query; nothing
            // spills to the server's disk.
            .with_disk_manager_builder(
                DiskManagerBuilder::default().with_mode(DiskManagerMode::Disabled),
            );
        if let Some(bytes) = options.memory_limit {
            runtime = runtime.with_memory_limit(bytes, 1.0);
        }
        let runtime = runtime
            .build_arc()
            .map_err(|e| Error::Config(format!("the query runtime: {e}")))?;
        let sessions = Sessions {
            runtime,
            allow_any_table: options.allow_any_table,
            any_table: options.any_table_options(),
            scan,
        };
        let state = State::new(
            tables,
            sessions,
            Admission::new(options.max_concurrent, options.max_queued),
            options.query_timeout,
            options.log_queries,
        )?;
        Ok(Self {
            state: Arc::new(state),
            refresh_interval: options.refresh_interval,
            token: options.token,
            tls: options.tls,
            max_message_bytes: options.max_message_bytes,
            drain_timeout: DEFAULT_DRAIN_TIMEOUT,
        })
    }

    /// Waits at most `timeout` for in-flight queries once shutdown is
    /// asked (default [`DEFAULT_DRAIN_TIMEOUT`]).
    pub fn with_drain_timeout(mut self, timeout: Duration) -> Self {
        self.drain_timeout = timeout;
        self
    }

    /// Each table: name, version, open time.
    pub fn tables(&self) -> Vec<TableStatus> {
        self.state
            .tables
            .iter()
            .map(|t| TableStatus {
                name: t.name.clone(),
                version: t.version(),
                open_time: t.open_time,
            })
            .collect()
    }

    /// The metrics, in Prometheus' text format (what `GET /metrics` shows).
    pub fn metrics_text(&self) -> String {
        self.state
            .metrics
            .render(&self.state.tables, &self.state.admission)
    }

    /// Serves Flight SQL on `listener`, refreshing every table in the
    /// background, until `shutdown` completes; then new calls are refused
    /// and in-flight queries get the drain timeout to finish.
    ///
    /// # Errors
    ///
    /// [`Error::Serve`] when the TLS identity does not work or serving
    /// fails.
    pub async fn serve(
        &self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), Error> {
        let failed = |source: Box<dyn std::error::Error + Send + Sync>| Error::Serve {
            what: "the Flight SQL server",
            source,
        };
        let address: SocketAddr = listener.local_addr().map_err(|e| failed(Box::new(e)))?;
        let mut refreshers = tokio::task::JoinSet::new();
        for table in self.state.tables.iter() {
            refreshers.spawn(tables::refresh_loop(
                Arc::clone(table),
                self.refresh_interval,
            ));
        }
        let mut builder = tonic::transport::Server::builder();
        if let Some(tls) = &self.tls {
            builder = builder
                .tls_config(tls.server_config())
                .map_err(|e| failed(Box::new(e)))?;
        }
        let check = CheckToken::new(self.token.clone(), &format!("dar serve {address}"));
        let service = FlightServiceServer::new(Service {
            state: Arc::clone(&self.state),
        })
        .max_decoding_message_size(self.max_message_bytes)
        .max_encoding_message_size(self.max_message_bytes);
        let router = builder.add_service(InterceptedService::new(service, check));

        let (stop, stopped) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            shutdown.await;
            let _ = stop.send(true);
        });
        let mut graceful = stopped.clone();
        let serving =
            router.serve_with_incoming_shutdown(dar_distributed::incoming(listener), async move {
                let _ = graceful.wait_for(|s| *s).await;
            });
        let mut asked = stopped;
        let drain = self.drain_timeout;
        let deadline = async move {
            let _ = asked.wait_for(|s| *s).await;
            tokio::time::sleep(drain).await;
        };
        let result = tokio::select! {
            served = serving => served.map_err(|e| failed(Box::new(e))),
            () = deadline => {
                eprintln!(
                    "dar serve: {} queries still running after the drain timeout ({drain:?}); stopping them",
                    self.state.admission.running()
                );
                Ok(())
            }
        };
        refreshers.abort_all();
        result
    }

    /// Serves the admin port (`GET /health`, `GET /metrics`) on `listener`
    /// until `shutdown` completes.
    ///
    /// # Errors
    ///
    /// [`Error::Serve`] when serving fails.
    pub async fn serve_admin(
        &self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), Error> {
        axum::serve(listener, admin::router(Arc::clone(&self.state)))
            .with_graceful_shutdown(shutdown)
            .await
            .map_err(|e| Error::Serve {
                what: "the admin server",
                source: Box::new(e),
            })
    }
}

/// Whether a server on `address` is reachable beyond this machine (so it
/// should require a token): any address but loopback.
pub fn beyond_loopback(address: SocketAddr) -> bool {
    dar_distributed::needs_token(address)
}
