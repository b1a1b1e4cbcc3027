//! Delta deletion vectors (DVs): descriptors, Z85, DV files, roaring bitmaps,
//! and the row selections a Parquet scan needs.
//!
//! A DV marks rows of a data file as deleted without rewriting it. This crate
//! decodes DVs byte-exactly (size field, CRC-32, magic, cardinality are all
//! checked; corrupt input is a [`DvError`] naming the DV, never a panic),
//! fetches them with one exact ranged read, caches them per table
//! ([`DvCache`]), and turns them into [`DeletedRows`], which answers "which
//! rows of physical range `[a, b)` survive" as a parquet
//! [`RowSelection`](parquet::arrow::arrow_reader::RowSelection) in time
//! proportional to the deleted rows in the range. It depends on no other dar
//! crate.
//!
//! The steps, each usable alone:
//!
//! 1. [`DvDescriptor::try_new`] from the log's `deletionVector` fields
//!    (`storageType`, `pathOrInlineDv`, `offset`, `sizeInBytes`, `cardinality`);
//!    [`DvDescriptor::unique_id`] for log replay; [`DvDescriptor::file_url`]
//!    for where a `u`/`p` DV lives.
//! 2. Bytes to rows, no I/O: [`decode_inline`], [`decode_file_bytes`] (with
//!    [`fetch_range`] / [`record_range`] saying which bytes are needed).
//! 3. With I/O: [`DvCache::load`] (cached, coalesced) or [`fetch`] (not cached).
//! 4. [`DeletedRows::selection`] / [`DeletedRows::mask`] per row group.
//! 5. Writing, for fixtures: [`DvFileWriter`], [`DvDescriptor::inline`].
//!
//! # Example
//!
//! An inline DV deleting rows {3, 4, 7, 11, 18, 29}, applied to a file with
//! two row groups of 20 rows each:
//!
//! ```
//! use dar_dv::{DvDescriptor, decode_inline};
//! use parquet::arrow::arrow_reader::RowSelector;
//!
//! let dv = DvDescriptor::try_new(
//!     "i",
//!     "^Bg9^0rr910000000000iXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L",
//!     None, // offset
//!     44,   // sizeInBytes
//!     6,    // cardinality
//! )?
//! .with_row_count(40);
//! let deleted = decode_inline(&dv)?;
//!
//! // Row group 0 holds rows [0, 20), row group 1 rows [20, 40).
//! let first: Vec<RowSelector> = deleted.selection(0..20).into();
//! assert_eq!(first, [
//!     RowSelector::select(3), RowSelector::skip(2), // rows 3, 4
//!     RowSelector::select(2), RowSelector::skip(1), // row 7
//!     RowSelector::select(3), RowSelector::skip(1), // row 11
//!     RowSelector::select(6), RowSelector::skip(1), // row 18
//!     RowSelector::select(1),
//! ]);
//! let second: Vec<RowSelector> = deleted.selection(20..40).into();
//! assert_eq!(second, [RowSelector::select(9), RowSelector::skip(1), RowSelector::select(10)]);
//! assert_eq!(deleted.deleted_in(20..40), 1);
//! # Ok::<(), dar_dv::DvError>(())
//! ```

mod bitmap;
mod cache;
mod decode;
mod descriptor;
mod encode;
mod error;
mod rows;
mod z85;

pub use cache::{DvCache, DvCacheStats, fetch, fetch_at, fetch_with, store_path};
pub use decode::{FORMAT_VERSION, decode_file_bytes, decode_inline, fetch_range, record_range};
pub use descriptor::{DEFAULT_OFFSET, DvDescriptor, StorageType, unique_id};
pub use encode::{DvFileWriter, DvRecord};
pub use error::{DvError, DvSource, Result};
pub use rows::DeletedRows;

#[cfg(test)]
mod tests;
