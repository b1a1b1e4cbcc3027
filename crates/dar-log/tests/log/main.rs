//! Integration tests of dar-log: every shared test table, DAT expectations,
//! bad inputs, time travel, refresh and randomized histories.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

mod bad_input;
mod checkpoint_io;
mod checkpoint_paths;
mod commit_timestamp;
mod common;
mod compaction;
mod dat;
mod duplicates;
mod file_index;
mod hardening;
mod history;
mod loading;
mod random_history;
mod schema_data;
mod tables;
mod time_travel;
mod values_data;
mod writer;
