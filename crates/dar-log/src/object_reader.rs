//! Parquet's `AsyncFileReader` over an object store, for checkpoints and
//! sidecars. The file size is known from the listing (or the sidecar
//! action), so the footer is read without a HEAD request; files up to
//! [`WHOLE_FILE_LIMIT`] are fetched in one request and served from memory,
//! which beats a footer request plus column-chunk requests.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use futures::FutureExt;
use futures::future::BoxFuture;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::errors::{ParquetError, Result};
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};

/// Files at most this large are read with a single request.
pub const WHOLE_FILE_LIMIT: u64 = 4 * 1024 * 1024;

/// Reads one Parquet object.
#[derive(Debug, Clone)]
pub struct ObjectReader {
    store: Arc<dyn ObjectStore>,
    path: Path,
    size: u64,
    whole: Option<Bytes>,
}

fn ext(e: object_store::Error) -> ParquetError {
    ParquetError::External(Box::new(e))
}

impl ObjectReader {
    /// A reader for `path` of `size` bytes.
    pub fn new(store: Arc<dyn ObjectStore>, path: Path, size: u64) -> Self {
        Self {
            store,
            path,
            size,
            whole: None,
        }
    }

    async fn range(&mut self, range: Range<u64>) -> Result<Bytes> {
        if self.whole.is_none() && self.size <= WHOLE_FILE_LIMIT {
            let all = self
                .store
                .get(&self.path)
                .await
                .map_err(ext)?
                .bytes()
                .await
                .map_err(ext)?;
            self.whole = Some(all);
        }
        if let Some(all) = &self.whole {
            let (start, end) = (
                usize::try_from(range.start).unwrap_or(usize::MAX),
                usize::try_from(range.end).unwrap_or(usize::MAX),
            );
            if start > end || end > all.len() {
                return Err(ParquetError::EOF(format!(
                    "range {start}..{end} beyond the {} bytes of the file",
                    all.len()
                )));
            }
            return Ok(all.slice(start..end));
        }
        self.store.get_range(&self.path, range).await.map_err(ext)
    }
}

impl AsyncFileReader for ObjectReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, Result<Bytes>> {
        self.range(range).boxed()
    }

    fn get_byte_ranges(&mut self, ranges: Vec<Range<u64>>) -> BoxFuture<'_, Result<Vec<Bytes>>> {
        async move {
            if self.size <= WHOLE_FILE_LIMIT {
                let mut out = Vec::with_capacity(ranges.len());
                for r in ranges {
                    out.push(self.range(r).await?);
                }
                return Ok(out);
            }
            self.store
                .get_ranges(&self.path, &ranges)
                .await
                .map_err(ext)
        }
        .boxed()
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, Result<Arc<ParquetMetaData>>> {
        async move {
            let size = self.size;
            let metadata = ParquetMetaDataReader::new()
                .with_arrow_reader_options(options)
                .load_and_finish(self, size)
                .await?;
            Ok(Arc::new(metadata))
        }
        .boxed()
    }
}
