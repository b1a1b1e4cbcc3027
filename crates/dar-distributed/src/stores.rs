//! [`WorkerStores`]: how a worker reaches tables, with its own storage
//! configuration, and what it scanned.
//!
//! A received scan names its table by URI only (credentials removed). The
//! worker opens the store for that URI with the storage options it was
//! started with (and the environment's usual variables, as `dar-io` reads
//! them), once per table: later scans of the same table share the store's
//! footer cache and the DV cache.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use dar_io::{StorageOptions, TableStore};
use dar_scan::{ScanMetrics, ScanRuntime};
use datafusion::common::{DataFusionError, Result};

/// Scans kept by [`WorkerStores::recent_scans`].
const RECENT_SCANS: usize = 256;

/// One scan a worker ran: its table, its files and its live metrics.
#[derive(Debug, Clone)]
pub struct ScanRecord {
    /// The table URI (credentials removed).
    pub table_uri: String,
    /// `add.path` of every file the worker was given, in task order.
    pub files: Vec<String>,
    /// The scan's metrics (files read, rows, bytes), live while it runs.
    pub metrics: ScanMetrics,
}

/// A worker's name, storage configuration, opened stores and recent scans.
#[derive(Debug)]
pub struct WorkerStores {
    name: String,
    storage: StorageOptions,
    runtimes: Mutex<HashMap<String, ScanRuntime>>,
    recent: Mutex<VecDeque<ScanRecord>>,
}

impl WorkerStores {
    /// A worker called `name` (how errors name it, e.g. `worker
    /// 127.0.0.1:50051`) that opens tables with `storage`.
    pub fn new(name: impl Into<String>, storage: StorageOptions) -> Self {
        Self {
            name: name.into(),
            storage,
            runtimes: Mutex::new(HashMap::new()),
            recent: Mutex::new(VecDeque::new()),
        }
    }

    /// The worker's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The runtime for the table at `uri`: its store opened with this
    /// worker's storage options, once.
    pub(crate) fn runtime(&self, uri: &str) -> Result<ScanRuntime> {
        let mut runtimes = self.runtimes.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(r) = runtimes.get(uri) {
            return Ok(r.clone());
        }
        let store = TableStore::open(uri, self.storage.clone()).map_err(|e| {
            DataFusionError::Execution(format!("cannot open the store of table '{uri}': {e}"))
        })?;
        let runtime = ScanRuntime::new(store);
        runtimes.insert(uri.to_string(), runtime.clone());
        Ok(runtime)
    }

    pub(crate) fn record(&self, scan: ScanRecord) {
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        if recent.len() == RECENT_SCANS {
            recent.pop_front();
        }
        recent.push_back(scan);
    }

    /// The last scans this worker received (up to 256), oldest first.
    pub fn recent_scans(&self) -> Vec<ScanRecord> {
        self.recent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }
}
