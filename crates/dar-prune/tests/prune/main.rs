//! Integration tests for dar-prune: exact evaluation against a row-by-row
//! reference, pruning soundness on real Parquet files, and expectations on
//! the shared Delta test tables.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

mod big_predicates;
mod contradictions;
mod delta_stats;
mod eval_vs_reference;
mod generate;
mod reference;
mod soundness;
mod testdata;
