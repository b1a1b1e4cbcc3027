//! The served tables: each opened once, kept fresh by a background refresh
//! that replays only new commits, and handed to queries as one immutable
//! provider per version.
//!
//! Why a provider per version: `DeltaTableProvider::refresh` moves one
//! provider forward in place, so a query planned while it lands could read
//! its schema at one version and its files at the next. Here a refresh
//! builds a new provider and swaps an `Arc`; a query takes the current
//! `Arc`s when it is planned and reads them to its last batch.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use dar_datafusion::{DeltaScanOptions, DeltaTableProvider};
use dar_scan::{Table, TableOptions};

use crate::config::{ServeOptions, TableConfig};
use crate::error::Error;

/// One served table.
#[derive(Debug)]
pub(crate) struct ServedTable {
    pub(crate) name: String,
    pub(crate) options: TableOptions,
    current: RwLock<Arc<DeltaTableProvider>>,
    /// When the table was last known to be current (open, or a refresh
    /// that succeeded), as milliseconds since `epoch`.
    fresh_at_ms: AtomicU64,
    epoch: Instant,
    pub(crate) open_time: Duration,
    pub(crate) refreshes: AtomicU64,
    pub(crate) refresh_errors: AtomicU64,
}

impl ServedTable {
    /// The provider queries planned now read.
    pub(crate) fn provider(&self) -> Arc<DeltaTableProvider> {
        Arc::clone(
            &self
                .current
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// The version queries planned now read.
    pub(crate) fn version(&self) -> u64 {
        self.provider().table().version()
    }

    /// How long since the table was last known current.
    pub(crate) fn lag(&self) -> Duration {
        let fresh = Duration::from_millis(self.fresh_at_ms.load(Ordering::Relaxed));
        self.epoch.elapsed().saturating_sub(fresh)
    }

    fn mark_fresh(&self) {
        let ms = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.fresh_at_ms.store(ms, Ordering::Relaxed);
    }

    /// Replays the commits after the current version; a new version gets a
    /// new provider (queries running keep theirs).
    pub(crate) async fn refresh(&self) -> dar_scan::Result<u64> {
        let current = self.provider();
        let mut table = current.table();
        let before = table.version();
        let result = table.refresh().await;
        self.refreshes.fetch_add(1, Ordering::Relaxed);
        if let Err(e) = result {
            self.refresh_errors.fetch_add(1, Ordering::Relaxed);
            return Err(e);
        }
        if table.version() != before {
            let next = Arc::new(DeltaTableProvider::with_options(table, current.options()));
            *self
                .current
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = next;
        }
        self.mark_fresh();
        Ok(self.version())
    }
}

/// Every served table, by name.
#[derive(Debug, Default)]
pub(crate) struct Tables {
    by_name: BTreeMap<String, Arc<ServedTable>>,
}

impl Tables {
    /// Opens every table of `options`, one after the other (each reports
    /// its own open time).
    pub(crate) async fn open(
        options: &ServeOptions,
        scan: DeltaScanOptions,
    ) -> Result<Self, Error> {
        let mut by_name = BTreeMap::new();
        for config in &options.tables {
            check_name(config)?;
            if by_name.contains_key(&config.name) {
                return Err(Error::Config(format!(
                    "two tables are named '{}'",
                    config.name
                )));
            }
            let table_options = options.table_options(config);
            let started = Instant::now();
            let table = Table::open_with(&config.uri, table_options.clone())
                .await
                .map_err(|source| Error::Open {
                    name: config.name.clone(),
                    source,
                })?;
            let served = ServedTable {
                name: config.name.clone(),
                options: table_options,
                current: RwLock::new(Arc::new(DeltaTableProvider::with_options(table, scan))),
                fresh_at_ms: AtomicU64::new(0),
                epoch: Instant::now(),
                open_time: started.elapsed(),
                refreshes: AtomicU64::new(0),
                refresh_errors: AtomicU64::new(0),
            };
            by_name.insert(config.name.clone(), Arc::new(served));
        }
        Ok(Self { by_name })
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Arc<ServedTable>> {
        self.by_name.values()
    }
}

/// A table name SQL can use unquoted: a letter or `_`, then letters,
/// digits and `_`.
fn check_name(config: &TableConfig) -> Result<(), Error> {
    let name = &config.name;
    let mut chars = name.chars();
    let ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(Error::Config(format!(
            "table name '{name}' is not an identifier (letters, digits and _, not starting with a digit)"
        )))
    }
}

/// Refreshes `table` every `interval` until the task is aborted. A failed
/// refresh is reported on standard error and retried at the next tick (the
/// table keeps serving its last version; its lag grows).
pub(crate) async fn refresh_loop(table: Arc<ServedTable>, interval: Duration) {
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    let mut failing = false;
    loop {
        tick.tick().await;
        match table.refresh().await {
            Ok(_) => failing = false,
            Err(e) if !failing => {
                failing = true;
                eprintln!(
                    "dar serve: refreshing table '{}' failed (still serving version {}): {}",
                    table.name,
                    table.version(),
                    dar_scan::one_line(&e)
                );
            }
            Err(_) => {}
        }
    }
}
