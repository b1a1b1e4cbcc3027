//! Stage 1: the Parquet footer, through `dar-io`'s [`ParquetReader`]: one
//! size-hinted request (the size comes from the log, so no HEAD), shared
//! footer cache keyed by path and size.

use std::sync::Arc;

use dar_io::ParquetReader;
use object_store::path::Path;
use parquet::file::metadata::ParquetMetaData;

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
        let mut reader = ctx.store_for(task)?.parquet_reader(path, task.size);
        let metadata = reader
            .load_metadata(None)
            .await
            .map_err(|source| ScanError::Io {
                path: ctx.location(&task.object_path),
                source: Box::new(source),
            })?;
        metrics.add_files_read(1);
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
