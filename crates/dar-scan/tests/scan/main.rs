//! Integration tests of dar-scan: every shared test table, the scan API,
//! bad input, and a randomized equivalence test.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

mod api;
mod architecture;
mod bad_input;
mod cache_props;
mod changes;
mod claims;
mod common;
mod dat;
mod data_cache;
mod duplicates;
mod edges;
mod filter_steps;
mod hardening;
mod io_shape;
mod kernel;
mod local_stats;
mod metadata_scale;
mod props;
mod refresh;
mod remote;
mod trusted_stats;
mod views;
mod wide;
