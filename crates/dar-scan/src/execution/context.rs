//! [`ScanContext`]: what every task of one scan shares, in three parts
//! kept apart: the spec and what follows from it ([`ScanState`],
//! read-only), the machine that reads ([`ScanRuntime`]), and what changes
//! while the scan runs ([`RunningScan`]: metrics, read-ahead budget, shared
//! DV-file reads, tail hint).

use std::sync::Arc;

use arrow_schema::SchemaRef;

use crate::errors::error::{Result, ScanError};
use crate::execution::metrics::ScanMetrics;
use crate::execution::running::RunningScan;
use crate::execution::runtime::ScanRuntime;
use crate::execution::state::ScanState;
use crate::planning::spec::ScanSpec;

#[derive(Debug)]
struct Shared {
    state: Arc<ScanState>,
    runtime: ScanRuntime,
    running: RunningScan,
}

/// The shared state of one scan, needed to execute its [`crate::ScanTask`]s:
/// a [`ScanSpec`] (what to read) and a [`ScanRuntime`] (the store and caches
/// of the machine that reads). Cheap to clone; clones share the running
/// metrics.
#[derive(Debug, Clone)]
pub struct ScanContext {
    shared: Arc<Shared>,
}

impl ScanContext {
    /// Pairs `spec` (planned here or received from another process) with
    /// `runtime`: resolves the output columns and binds the predicate once
    /// for all tasks.
    ///
    /// # Errors
    ///
    /// [`ScanError::InvalidOption`] for a batch size or concurrency of 0;
    /// [`ScanError::UnknownColumn`], [`ScanError::Predicate`] or
    /// [`ScanError::Spec`] for a spec that does not fit its own schema.
    pub fn new(spec: ScanSpec, runtime: ScanRuntime) -> Result<Self> {
        if runtime.concurrency == Some(0) {
            return Err(ScanError::InvalidOption {
                option: "concurrency",
                reason: "must be at least 1".into(),
            });
        }
        let state = ScanState::new(spec)?;
        let metrics = ScanMetrics::new(runtime.store.metrics().clone());
        let running = RunningScan::new(metrics, runtime.read_ahead_bytes);
        Ok(Self {
            shared: Arc::new(Shared {
                state: Arc::new(state),
                runtime,
                running,
            }),
        })
    }

    /// What the scan reads, to send to another process.
    pub fn spec(&self) -> &ScanSpec {
        &self.shared.state.spec
    }

    /// The output schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.shared.state.output_schema
    }

    /// The running metrics of the scan.
    pub fn metrics(&self) -> &ScanMetrics {
        &self.shared.running.metrics
    }

    /// The machine-local half of the scan.
    pub fn runtime(&self) -> &ScanRuntime {
        &self.shared.runtime
    }

    /// The spec-derived state.
    pub(crate) fn state(&self) -> &Arc<ScanState> {
        &self.shared.state
    }

    /// The running state.
    pub(crate) fn running(&self) -> &RunningScan {
        &self.shared.running
    }

    /// The three parts, for the stages.
    pub(crate) fn parts(&self) -> (&ScanState, &ScanRuntime, &RunningScan) {
        let s = &*self.shared;
        (&s.state, &s.runtime, &s.running)
    }
}
