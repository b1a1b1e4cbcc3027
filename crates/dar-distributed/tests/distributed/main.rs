//! Integration tests of dar-distributed: in-process workers on 127.0.0.1
//! running real SQL over shared and generated Delta tables, against
//! single-process results; an S3 table read by workers with their own
//! credentials; the size of the encoded plan; what a worker refuses
//! (calls without its token, plain text when it serves TLS, oversized
//! messages, plans that read storage outside dar's scan); the codec's
//! round trip of arbitrary partition values.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

mod codec;
mod common;
mod limits;
mod plan_size;
mod plans;
mod s3;
mod sql;
mod tls;
mod token;
