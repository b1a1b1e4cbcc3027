//! Integration tests: every DV in the shared test tables (`tables`), the
//! I/O pattern of fetching and the cache (`io`, reads recorded through a
//! wrapper store), and randomized equivalence against simple reference
//! computations (`props`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

mod io;
mod props;
mod tables;
