//! Column chunks of a checkpoint file held in memory, decoded by the sync
//! Parquet reader in row-range pieces side by side: a checkpoint of one
//! row group (what writers produce for up to ~128 MB) still decodes on
//! every core. The pages of the other pieces are skipped by their
//! headers, not decompressed.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder, RowSelection,
    RowSelector,
};
use parquet::errors::ParquetError;
use parquet::file::reader::{ChunkReader, Length};

/// Rows decoded per batch.
pub(super) const BATCH_ROWS: usize = 8192;

/// Rows below which a file is not split across threads.
const MIN_PIECE_ROWS: usize = 32 * 1024;

/// Byte ranges of a file held in memory, sorted by offset.
#[derive(Debug)]
pub(super) struct Chunks {
    file_len: u64,
    ranges: Vec<(u64, Bytes)>,
}

impl Chunks {
    /// The fetched `ranges`, each with its offset in the file.
    pub(super) fn new(mut ranges: Vec<(u64, Bytes)>) -> Arc<Self> {
        let file_len = ranges
            .iter()
            .map(|(s, b)| s + b.len() as u64)
            .max()
            .unwrap_or(0);
        ranges.sort_by_key(|(s, _)| *s);
        Arc::new(Self { file_len, ranges })
    }

    /// Bytes held.
    pub(super) fn bytes(&self) -> usize {
        self.ranges.iter().map(|(_, b)| b.len()).sum()
    }

    fn find(&self, start: u64) -> parquet::errors::Result<(usize, &Bytes)> {
        let i = self.ranges.partition_point(|(s, _)| *s <= start);
        let (s, b) = i
            .checked_sub(1)
            .map(|i| &self.ranges[i])
            .ok_or_else(|| ParquetError::EOF(format!("offset {start} is not held")))?;
        let from = usize::try_from(start - s)
            .ok()
            .filter(|f| *f <= b.len())
            .ok_or_else(|| ParquetError::EOF(format!("offset {start} is not held")))?;
        Ok((from, b))
    }
}

/// The byte ranges of the column chunks of `leaves` in every row group of
/// `metadata`'s file.
pub(super) fn chunk_ranges(metadata: &ArrowReaderMetadata, leaves: &[usize]) -> Vec<Range<u64>> {
    metadata
        .metadata()
        .row_groups()
        .iter()
        .flat_map(|rg| {
            leaves.iter().map(move |&l| {
                let (start, len) = rg.column(l).byte_range();
                start..start + len
            })
        })
        .collect()
}

/// `Chunks` behind an `Arc`, as the sync Parquet reader takes its input by value.
#[derive(Debug, Clone)]
struct Shared(Arc<Chunks>);

impl Length for Shared {
    fn len(&self) -> u64 {
        self.0.file_len
    }
}

impl ChunkReader for Shared {
    type T = bytes::buf::Reader<Bytes>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        let (from, b) = self.0.find(start)?;
        Ok(bytes::Buf::reader(b.slice(from..)))
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        let (from, b) = self.0.find(start)?;
        if from + length > b.len() {
            return Err(ParquetError::EOF(format!(
                "bytes {start}..+{length} are not held"
            )));
        }
        Ok(b.slice(from..from + length))
    }
}

/// A reader of the rows `range` of the file, projected on `mask`.
pub(super) fn reader(
    chunks: &Arc<Chunks>,
    metadata: &ArrowReaderMetadata,
    mask: &ProjectionMask,
    range: Range<usize>,
) -> parquet::errors::Result<ParquetRecordBatchReader> {
    let mut selectors = Vec::with_capacity(2);
    if range.start > 0 {
        selectors.push(RowSelector::skip(range.start));
    }
    selectors.push(RowSelector::select(range.len()));
    ParquetRecordBatchReaderBuilder::new_with_metadata(Shared(Arc::clone(chunks)), metadata.clone())
        .with_projection(mask.clone())
        .with_row_selection(RowSelection::from(selectors))
        .with_batch_size(BATCH_ROWS)
        .build()
}

/// The row ranges of a file of `rows` rows decoded side by side: one per
/// core when `parallel`, each of at least [`MIN_PIECE_ROWS`] rows. (More
/// pieces would let a thread freed halfway join in, but each piece costs:
/// four per core took 10% more CPU at a million rows.)
pub(super) fn pieces(rows: usize, parallel: bool) -> Vec<Range<usize>> {
    let threads = if parallel {
        crate::parallel::cores()
    } else {
        1
    };
    let n = threads.min(rows / MIN_PIECE_ROWS).max(1);
    let per = rows.div_ceil(n).max(1);
    (0..n)
        .map(|i| (i * per).min(rows)..((i + 1) * per).min(rows))
        .filter(|r| !r.is_empty())
        .collect()
}
