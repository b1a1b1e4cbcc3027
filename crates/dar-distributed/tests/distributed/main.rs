//! Integration tests of dar-distributed: in-process workers on 127.0.0.1
//! running real SQL over shared and generated Delta tables, against
//! single-process results; an S3 table read by workers with their own
//! credentials; the size of the encoded plan.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

mod common;
mod plan_size;
mod s3;
mod sql;
