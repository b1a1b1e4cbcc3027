//! `dar serve` through a real Flight SQL client (arrow-flight's), against
//! servers started in this process on 127.0.0.1:0.

// `&[0..10]`: a table of one commit (one range per commit).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::single_range_in_vec_init
)]

mod kit;
mod queries;
mod safety;
mod service;
