//! Log-only tables: adds with real statistics but no Parquet behind them,
//! and log cleanup, for tests and benchmarks of what opening a table with
//! hundreds of thousands or millions of files costs (the data is never
//! read, so it need not exist).

use arrow_array::RecordBatch;
use futures::TryStreamExt;
use object_store::ObjectStoreExt;

use crate::actions::DataFile;
use crate::error::{Result, TestkitError};
use crate::naming::data_file_name;
use crate::stats::FileStats;
use crate::writer::{Commit, TableWriter, encoded_path};

/// The `add.size` a log-only file claims: 16 bytes per value plus a
/// footer's worth, so sizes grow with rows as real files do.
fn claimed_size(batch: &RecordBatch) -> u64 {
    (4096 + 16 * batch.num_rows() * batch.num_columns()) as u64
}

impl TableWriter {
    /// Appends the logical `batch` as files of `rows_per_file` rows each (the
    /// last may be shorter), in one commit, without writing them: each
    /// `add` carries the statistics of its rows, a Spark file name and a
    /// size that grows with its rows, but no Parquet exists at its path.
    /// For tables whose log alone is read (metadata at scale). Unpartitioned
    /// tables only.
    pub async fn append_log_only(
        &mut self,
        batch: &RecordBatch,
        rows_per_file: usize,
    ) -> Result<Commit> {
        self.check_schema(batch)?;
        if !self.partition_indexes.is_empty() {
            return Err(TestkitError::SchemaMismatch {
                reason: "log-only files are for unpartitioned tables".into(),
            });
        }
        if rows_per_file == 0 || batch.num_rows() == 0 {
            return Err(TestkitError::SchemaMismatch {
                reason: "log-only files need rows (and rows_per_file > 0)".into(),
            });
        }
        let version = self.version + 1;
        let timestamp = self.timestamp(version);
        let physical = self.physical_batch(batch)?;
        let mut added = Vec::with_capacity(batch.num_rows().div_ceil(rows_per_file));
        for start in (0..batch.num_rows()).step_by(rows_per_file) {
            let rows = physical.slice(start, rows_per_file.min(batch.num_rows() - start));
            let stats = FileStats::compute(&rows, self.num_indexed_cols);
            let name = data_file_name(
                self.file_counter,
                self.ids.uuid(),
                self.parquet.codec().file_suffix(),
            );
            self.file_counter += 1;
            added.push(DataFile {
                path: encoded_path(&[name]),
                partition_values: Vec::new(),
                size: claimed_size(&rows),
                modification_time: timestamp,
                num_records: stats.num_records,
                deletion_vector: None,
                deleted: None,
                stats,
                rows: None,
            });
        }
        self.commit_added(version, timestamp, added).await
    }

    /// Deletes the commit files of versions before `version`, as log
    /// cleanup does once a checkpoint at `version` or later exists: readers
    /// must start from that checkpoint. Returns how many were deleted.
    pub async fn delete_commits_before(&self, version: u64) -> Result<usize> {
        let log = self.root.clone().join("_delta_log");
        let listed: Vec<_> = self
            .store
            .list(Some(&log))
            .try_collect()
            .await
            .map_err(TestkitError::store(&log))?;
        let mut deleted = 0;
        for meta in listed {
            let name = meta.location.filename().unwrap_or_default();
            let Some(v) = name
                .strip_suffix(".json")
                .filter(|v| v.len() == 20)
                .and_then(|v| v.parse::<u64>().ok())
            else {
                continue;
            };
            if v < version {
                self.store
                    .delete(&meta.location)
                    .await
                    .map_err(TestkitError::store(&meta.location))?;
                deleted += 1;
            }
        }
        Ok(deleted)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int64Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use object_store::ObjectStore;
    use object_store::memory::InMemory;
    use object_store::path::Path;

    use super::*;
    use crate::naming::pad20;

    /// `_delta_log/<pad20(version)>.json` under `root`.
    fn commit_path(root: &Path, version: u64) -> Path {
        root.clone()
            .join("_delta_log")
            .join(format!("{}.json", pad20(version)).as_str())
    }

    #[tokio::test]
    async fn log_only_files_have_stats_and_no_data_and_cleanup_keeps_the_checkpoint() {
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ]));
        let mut t = TableWriter::builder(Arc::clone(&store), Path::from("t"), schema.clone())
            .create()
            .await
            .unwrap();
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from_iter_values(0..10)),
                Arc::new(StringArray::from_iter_values(
                    (0..10).map(|i| format!("n{i}")),
                )),
            ],
        )
        .unwrap();
        let commit = t.append_log_only(&batch, 4).await.unwrap();
        let rows: Vec<u64> = commit.added.iter().map(|f| f.num_records).collect();
        assert_eq!(rows, [4, 4, 2]);
        let last = commit.added.last().unwrap();
        assert!(
            last.stats_json()
                .contains(r#""minValues":{"id":8,"name":"n8"}"#)
        );
        // Nothing but the log was written.
        let data = store
            .head(&Path::from(format!("t/{}", commit.added[0].path)))
            .await;
        assert!(matches!(data, Err(object_store::Error::NotFound { .. })));
        t.remove_files(&[commit.added[0].path.as_str()])
            .await
            .unwrap();
        t.checkpoint().await.unwrap();
        assert_eq!(t.delete_commits_before(t.version()).await.unwrap(), 2);
        for (v, exists) in [(0, false), (1, false), (2, true)] {
            let found = store.head(&commit_path(&Path::from("t"), v)).await.is_ok();
            assert_eq!(found, exists, "version {v}");
        }
        assert_eq!(t.live_rows(), 6);
    }
}
