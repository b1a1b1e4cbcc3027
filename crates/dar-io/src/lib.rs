//! Object-store access for dar.
#![allow(missing_docs)]
mod class;
mod cost;
mod error;
mod metered;
mod options;
mod planner;

pub use class::ObjectClass;
pub use cost::{CostModel, CostParams, Observation, ProbeBudget, SharedCostModel};
pub use error::{Error, Result};
pub use metered::{ClassStats, IoMetrics, IoSnapshot, MeteredStore};
pub use options::{REDACTED, StorageOptions, redact_uri};
pub use planner::{FetchSlice, RangePlan, estimate_time, plan_ranges};
