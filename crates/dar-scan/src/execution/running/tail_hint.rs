//! [`TailHint`]: how many bytes from the end of a file hold its footer and
//! page index, learned over the files of a scan so that one request on a
//! remote store brings both.

use std::sync::atomic::{AtomicU64, Ordering};

use parquet::file::metadata::ParquetMetaData;

/// Bytes to read from the end of a file to get its footer and page index
/// in one request: the largest tail seen in the scan, an eighth more.
#[derive(Debug, Default)]
pub(crate) struct TailHint {
    learned: AtomicU64,
}

impl TailHint {
    /// Smallest and largest guess made from a file's size alone.
    const GUESS: (u64, u64) = (64 * 1024, 1024 * 1024);

    /// The tail to read of a file of `size` bytes.
    pub(crate) fn for_file(&self, size: u64) -> usize {
        let learned = self.learned.load(Ordering::Relaxed);
        let hint = if learned > 0 {
            learned
        } else {
            (size / 256).clamp(Self::GUESS.0, Self::GUESS.1)
        };
        usize::try_from(hint.min(size)).unwrap_or(usize::MAX)
    }

    /// Notes the tail of a file of `size` bytes whose `metadata` was read
    /// with its page index: from the first page-index byte to the end.
    pub(crate) fn learn(&self, metadata: &ParquetMetaData, size: u64) {
        let start = metadata
            .row_groups()
            .iter()
            .flat_map(|rg| rg.columns())
            .flat_map(|c| [c.column_index_offset(), c.offset_index_offset()])
            .flatten()
            .filter_map(|o| u64::try_from(o).ok())
            .min();
        if let Some(start) = start.filter(|s| *s < size) {
            let tail = size - start;
            self.learned
                .fetch_max(tail + tail / 8 + 8, Ordering::Relaxed);
        }
    }
}
