//! What changes while a scan runs, owned outside the per-file stages:
//! the metrics, the read-ahead byte budget, the DV files being read
//! once for many files, and the learned size of file tails.
//!
//! The stages read and update these through shared references; nothing
//! here knows the stages, and nothing here follows from the spec (that is
//! [`crate::execution::state::ScanState`]).

mod dv_files;
mod tail_hint;

use std::sync::Arc;

pub(crate) use dv_files::{DvFiles, SharedRead};
pub(crate) use tail_hint::TailHint;

use crate::execution::metrics::ScanMetrics;
use crate::execution::readahead::ReadAhead;

/// The running state of one scan, shared by all its files (and by the plan's
/// subsets, [`crate::ScanPlan::with_tasks`]).
#[derive(Debug)]
pub(crate) struct RunningScan {
    /// Counters and stage times, readable while the scan runs.
    pub metrics: ScanMetrics,
    /// Decoded bytes waiting for the consumer, over all files.
    pub read_ahead: Arc<ReadAhead>,
    /// The DV files the scan's files share, each read once.
    pub dv_files: DvFiles,
    /// How much of a file's end holds its footer and page index.
    pub tail_hint: TailHint,
}

impl RunningScan {
    /// Fresh state: metrics over `metrics`, a budget of `read_ahead_bytes`.
    pub(crate) fn new(metrics: ScanMetrics, read_ahead_bytes: usize) -> Self {
        Self {
            metrics,
            read_ahead: Arc::new(ReadAhead::new(read_ahead_bytes)),
            dv_files: DvFiles::default(),
            tail_hint: TailHint::default(),
        }
    }
}
