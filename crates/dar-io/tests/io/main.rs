//! dar-io integration tests: the Parquet reader over local disk, a real S3
//! server (s3s-fs in-process) and ThrottledStore; injected faults.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::single_range_in_vec_init,
    reason = "tests"
)]

mod cache;
mod claims;
mod common;
mod faults;
mod local;
mod s3;
mod testdata;
mod throttled;
