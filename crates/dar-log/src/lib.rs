//! Delta log replay into a snapshot with a columnar file index

pub mod actions;
pub mod add_columns;
pub mod checkpoint;
pub mod commit;
pub mod error;
pub mod file_index;
pub mod listing;
pub mod object_reader;
pub mod protocol;
pub mod replay;
mod scalar;
pub mod partition;
pub mod schema;
pub mod stats;
pub mod snapshot;
pub mod time_travel;

pub use error::{LogError, Result};
pub use file_index::FileIndex;
pub use snapshot::{FileIndexMode, Snapshot, SnapshotBuilder};
