//! Running a plan: the per-file chain of stages, the state a running scan
//! shares (metrics, budgets, DV reads, tail hints), read-ahead, limits and
//! the runtime a machine lends the scan.

pub(crate) mod context;
pub(crate) mod exec;
pub(crate) mod limit;
pub(crate) mod metrics;
pub(crate) mod readahead;
pub(crate) mod running;
pub(crate) mod runtime;
pub(crate) mod stages;
pub(crate) mod state;
