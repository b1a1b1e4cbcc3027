//! Output formats: where record batches go once read.
//!
//! A [`BatchSink`] takes the batches of a scan one by one and is finished
//! once at the end (footers, end-of-stream markers, the aligned table).
//! Every format but `table` streams: memory stays bounded by one batch.

mod file;
mod flatten;
mod json_floats;
mod json_object;
pub mod logical;
mod pipe;
mod sinks;
#[cfg(feature = "distributed")]
mod spool;

pub use file::OutputFile;
pub use flatten::flatten_for_csv;
pub use json_object::JsonObject;
pub use pipe::PipeWatch;
pub use sinks::{batch_sink, write_csv, write_table};
#[cfg(feature = "distributed")]
pub use spool::Spool;

use arrow_array::RecordBatch;

use crate::error::CliError;

/// Receives the batches of a scan.
pub trait BatchSink {
    /// Writes one batch.
    fn write(&mut self, batch: &RecordBatch) -> Result<(), CliError>;

    /// Writes whatever ends the output and flushes it.
    fn finish(self: Box<Self>) -> Result<(), CliError>;
}
