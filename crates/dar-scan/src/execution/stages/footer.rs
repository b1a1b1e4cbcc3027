//! Stage 1: the Parquet footer, through `dar-io`'s [`ParquetReader`]: one
//! size-hinted request (the size comes from the log, so no HEAD), shared
//! footer cache keyed by the file's identity (store, path, size and the
//! log's modification time). The file's Arrow schema is derived
//! here, once, and the table's columns are resolved against it
//! ([`ColumnMap`]) for every later stage.
//!
//! On a remote store a scan with a predicate takes the page index in the
//! same request: the tail read is sized from the largest footer-plus-page-
//! index tail seen so far in the scan ([`crate::execution::running::TailHint`]), or
//! before any from the file size and the bytes a round trip to the store
//! is worth, so one round trip brings both.

use dar_io::{ObjectVersion, ParquetReader, TableStore};
use object_store::path::Path;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData};

use super::open::FileToOpen;
use crate::errors::error::{Result, ScanError};
use crate::execution::metrics::Stage;
use crate::execution::running::RunningScan;
use crate::execution::runtime::ScanRuntime;
use crate::execution::state::ScanState;
use crate::schema::column_map::ColumnMap;

/// A file whose footer is read.
#[derive(Debug)]
pub(crate) struct FooterRead {
    pub file: FileToOpen,
    /// The reader, kept for decoding (it holds any bytes already fetched).
    pub reader: ParquetReader,
    /// The footer and the file's Arrow schema.
    pub metadata: ArrowReaderMetadata,
    /// Where the table's columns are in the file.
    pub columns: ColumnMap,
    /// Where the file is, as a person would name it (for errors).
    pub location: String,
}

impl FooterRead {
    /// Reads the footer of `file` from the store that holds it.
    pub(crate) async fn load(
        file: FileToOpen,
        state: &ScanState,
        runtime: &ScanRuntime,
        running: &RunningScan,
    ) -> Result<Self> {
        let task = &file.task;
        let metrics = &running.metrics;
        let _t = metrics.time(Stage::Footer);
        let path = Path::parse(&task.object_path).map_err(|e| ScanError::InvalidTask {
            path: task.object_path.clone(),
            reason: format!("not an object path: {e}"),
        })?;
        let store = runtime.store_for(task)?;
        let location = location(store, &task.object_path);
        let mut reader = store
            .parquet_reader(path, task.size)
            .with_version(task.modification_time.map(ObjectVersion::Modified));
        let with_page_index = store.backend().is_remote() && state.pruning_predicate().is_some();
        if with_page_index && let Some(size) = task.size {
            let params = store.cost_model().params();
            reader = reader.with_footer_hint(running.tail_hint.for_file(size, &params));
        }
        let options = with_page_index
            .then(|| ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Optional));
        let footer = reader
            .load_metadata(options.as_ref())
            .await
            .map_err(|source| ScanError::Io {
                path: location.clone(),
                source: Box::new(source),
            })?;
        metrics.add_files_read(1);
        if let (true, Some(size)) = (with_page_index, task.size) {
            running.tail_hint.learn(&footer, size);
        }
        let metadata = ArrowReaderMetadata::try_new(footer, ArrowReaderOptions::new())
            .map_err(|e| ScanError::parquet(&location, e))?;
        let provided: Vec<usize> = file.task_row.iter().map(|(i, _)| *i).collect();
        let columns = ColumnMap::resolve(
            state,
            metadata.schema(),
            metadata.parquet_schema(),
            &provided,
        );
        metrics.add_column_lookups(columns.lookups);
        Ok(Self {
            file,
            reader,
            metadata,
            columns,
            location,
        })
    }

    /// The same footer with a reader of its own (sharing the store's
    /// caches and cost model), for decoding another part of the file on
    /// another task.
    pub(crate) fn fork(&self, runtime: &ScanRuntime) -> Result<Self> {
        let task = &self.file.task;
        let store = runtime.store_for(task)?;
        let reader = store
            .parquet_reader(self.reader.path().clone(), task.size)
            .with_version(task.modification_time.map(ObjectVersion::Modified));
        Ok(Self {
            file: self.file.clone(),
            reader,
            metadata: self.metadata.clone(),
            columns: self.columns.clone(),
            location: self.location.clone(),
        })
    }

    /// The footer.
    pub(crate) fn parquet(&self) -> &ParquetMetaData {
        self.metadata.metadata()
    }

    /// Rows in the file, by the footer.
    pub(crate) fn num_rows(&self) -> u64 {
        self.parquet()
            .row_groups()
            .iter()
            .map(|rg| u64::try_from(rg.num_rows()).unwrap_or(0))
            .sum()
    }
}

/// Where the object `key` of `store` is, as a person would name it:
/// `/tmp/t/a.parquet` for a local table, `s3://bucket/t/a.parquet`
/// otherwise (object keys lack the local path's leading `/`).
pub(crate) fn location(store: &TableStore, key: &str) -> String {
    let url = store.url();
    match url.scheme() {
        "file" => format!("/{key}"),
        scheme => format!("{scheme}://{}/{key}", url.host_str().unwrap_or("")),
    }
}
