//! Stage 1: the Parquet footer, through `dar-io`'s [`ParquetReader`]: one
//! size-hinted request (the size comes from the log, so no HEAD), shared
//! footer cache keyed by path and size.
//!
//! On a remote store a scan with a predicate takes the page index in the
//! same request: the tail read is sized from the largest footer-plus-page-
//! index tail seen so far in the scan ([`TailHint`]), or before any from
//! the file size, so one round trip brings both.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use dar_io::ParquetReader;
use object_store::path::Path;
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData};

use crate::context::ScanContext;
use crate::error::{Result, ScanError};
use crate::metrics::Stage;
use crate::task::ScanTask;

/// A file's reader and its decoded footer.
pub(crate) struct Footer {
    /// The reader, kept for decoding (it holds any bytes already fetched).
    pub reader: ParquetReader,
    /// The footer; with the page index once [`super::pages`] loaded it.
    pub metadata: Arc<ParquetMetaData>,
}

impl Footer {
    /// Loads the footer of `task`'s file.
    pub(crate) async fn load(ctx: &ScanContext, task: &ScanTask) -> Result<Self> {
        let metrics = &ctx.inner.metrics;
        let _t = metrics.time(Stage::Footer);
        let path = Path::parse(&task.object_path).map_err(|e| ScanError::InvalidTask {
            path: task.object_path.clone(),
            reason: format!("not an object path: {e}"),
        })?;
        let store = ctx.store_for(task)?;
        let mut reader = store.parquet_reader(path, task.size);
        let with_page_index = store.backend().is_remote() && ctx.physical_predicate().is_some();
        if with_page_index && let Some(size) = task.size {
            reader = reader.with_footer_hint(ctx.inner.tail_hint.for_file(size));
        }
        let options = with_page_index
            .then(|| ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Optional));
        let metadata = reader
            .load_metadata(options.as_ref())
            .await
            .map_err(|source| ScanError::Io {
                path: ctx.location(&task.object_path),
                source: Box::new(source),
            })?;
        metrics.add_files_read(1);
        if let (true, Some(size)) = (with_page_index, task.size) {
            ctx.inner.tail_hint.learn(&metadata, size);
        }
        Ok(Self { reader, metadata })
    }

    /// Rows in the file, by the footer.
    pub(crate) fn num_rows(&self) -> u64 {
        self.metadata
            .row_groups()
            .iter()
            .map(|rg| u64::try_from(rg.num_rows()).unwrap_or(0))
            .sum()
    }
}

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
