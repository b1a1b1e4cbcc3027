//! Planning a scan: the builder, the pruned plan of plain-data tasks, the
//! spec that travels with them, and what the log says of their rows
//! (statistics, splits, the files listing).

pub(crate) mod builder;
pub(crate) mod file_pruning;
pub(crate) mod files;
pub(crate) mod plan;
pub(crate) mod predicate;
pub(crate) mod scan_options;
pub(crate) mod spec;
pub(crate) mod split;
pub(crate) mod statistics;
pub(crate) mod task;
