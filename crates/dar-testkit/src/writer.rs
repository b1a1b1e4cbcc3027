//! [`TableWriter`]: creates a table and commits appends, removes, DV
//! deletes and checkpoints, one commit per call.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arrow_array::{RecordBatch, UInt32Array};
use arrow_schema::SchemaRef;
use bytes::Bytes;
use object_store::path::{Path, PathPart};
use object_store::{ObjectStore, PutMode, PutOptions, PutPayload};

use crate::actions::{
    DataFile, Metadata, Protocol, Tombstone, cdc_json, commit_info_json, commit_text,
};
use crate::builder::TableWriterBuilder;
use crate::dv::{DvBatch, DvStorage, merge};
use crate::error::{Result, TestkitError};
use crate::json::Json;
use crate::naming::{Ids, cdc_file_name, data_file_name, pad20};
use crate::parquet::{ParquetOptions, write_file};
use crate::partition::{directory_segment, uri_encode_segment, value_text};
use crate::schema::{TableSchema, to_physical};
use crate::stats::FileStats;

/// 2024-01-01T00:00:00Z: the default time of version 0.
pub const DEFAULT_START_MS: i64 = 1_704_067_200_000;

/// Milliseconds between consecutive commits' timestamps.
pub const COMMIT_INTERVAL_MS: i64 = 60_000;

/// Partition values of one file: physical column name, §7 text (`None` = null).
type PartitionValues = Vec<(String, Option<String>)>;

/// New files not yet written: their actions' data, and their bytes at
/// their raw (not URI-encoded) path segments.
type NewFiles = (Vec<DataFile>, Vec<(Vec<String>, Vec<u8>)>);

/// The directory segments of a file with partition values `values`.
fn partition_segments(values: &PartitionValues) -> Vec<String> {
    values
        .iter()
        .map(|(column, value)| directory_segment(column, value.as_deref()))
        .collect()
}

/// The `path` of an action for raw segments: each URI-encoded, `/`-joined.
pub(crate) fn encoded_path(segments: &[String]) -> String {
    segments
        .iter()
        .map(|s| uri_encode_segment(s))
        .collect::<Vec<_>>()
        .join("/")
}

/// What one commit did.
#[derive(Debug, Clone)]
pub struct Commit {
    /// The version written.
    pub version: u64,
    /// Files added (for DV deletes: the files with their new DVs).
    pub added: Vec<DataFile>,
    /// Paths removed (for DV deletes: the same paths, with their old DVs).
    pub removed: Vec<String>,
}

/// Writes one Delta table, a commit per call. Deterministic: the same calls
/// with the same seed give byte-identical files.
#[derive(Debug)]
pub struct TableWriter {
    pub(crate) store: Arc<dyn ObjectStore>,
    pub(crate) root: Path,
    pub(crate) schema: TableSchema,
    pub(crate) partition_indexes: Vec<usize>,
    pub(crate) data_indexes: Vec<usize>,
    pub(crate) deletion_vectors: bool,
    pub(crate) parquet: ParquetOptions,
    pub(crate) ids: Ids,
    pub(crate) start_ms: i64,
    pub(crate) version: u64,
    pub(crate) file_counter: u64,
    pub(crate) protocol: Protocol,
    pub(crate) metadata: Metadata,
    pub(crate) files: BTreeMap<String, DataFile>,
    pub(crate) tombstones: Vec<Tombstone>,
    pub(crate) in_commit_timestamps: bool,
    pub(crate) num_indexed_cols: Option<usize>,
    pub(crate) keep_rows: bool,
}

impl TableWriter {
    /// Starts a table at `root` in `store` with the logical `schema`
    /// (partition columns included).
    pub fn builder(
        store: Arc<dyn ObjectStore>,
        root: Path,
        schema: SchemaRef,
    ) -> TableWriterBuilder {
        TableWriterBuilder::new(store, root, schema)
    }

    /// The latest committed version.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The logical schema (what `append` takes).
    pub fn schema(&self) -> &SchemaRef {
        &self.schema.logical
    }

    /// The physical schema of the data files (partition columns left out).
    pub fn physical_schema(&self) -> SchemaRef {
        Arc::new(
            self.schema
                .physical
                .project(&self.data_indexes)
                .unwrap_or_else(|_| (*self.schema.physical).clone()),
        )
    }

    /// The data columns of a logical `batch` exactly as the kit stores them
    /// in Parquet: partition columns dropped, physical names and field ids.
    /// A reference reader compares file contents against this.
    pub fn physical_batch(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        self.check_schema(batch)?;
        let data = batch
            .project(&self.data_indexes)
            .map_err(TestkitError::arrow("project data columns"))?;
        to_physical(&data, self.physical_schema())
    }

    /// The Delta `schemaString`.
    pub fn schema_string(&self) -> &str {
        &self.metadata.schema_string
    }

    /// The table root in the store.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// `(minReaderVersion, minWriterVersion)`.
    pub fn protocol_versions(&self) -> (i32, i32) {
        (
            self.protocol.min_reader_version,
            self.protocol.min_writer_version,
        )
    }

    /// The live files, sorted by path.
    pub fn files(&self) -> impl Iterator<Item = &DataFile> {
        self.files.values()
    }

    /// One live file by its `add.path`.
    pub fn file(&self, path: &str) -> Option<&DataFile> {
        self.files.get(path)
    }

    /// Rows a reader must return from the current snapshot.
    pub fn live_rows(&self) -> u64 {
        self.files.values().map(DataFile::live_rows).sum()
    }

    /// The rows a reader must return from the current snapshot, in the
    /// logical schema: live files in path order, each file's rows in file
    /// order without the DV-deleted ones. Needs
    /// [`TableWriterBuilder::with_kept_rows`].
    pub fn snapshot_rows(&self) -> Result<RecordBatch> {
        let mut parts = Vec::new();
        for file in self.files.values() {
            let rows = file.rows.as_ref().ok_or(TestkitError::RowsNotKept)?;
            let part = match &file.deleted {
                Some(deleted) => {
                    let keep = deleted.mask(0..rows.num_rows() as u64);
                    arrow_select::filter::filter_record_batch(rows, &keep)
                        .map_err(TestkitError::arrow("drop DV-deleted rows"))?
                }
                None => rows.clone(),
            };
            parts.push(part);
        }
        arrow_select::concat::concat_batches(&self.schema.logical, &parts)
            .map_err(TestkitError::arrow("concatenate snapshot rows"))
    }

    /// Changes the layout of files written from now on.
    pub fn set_parquet_options(&mut self, options: ParquetOptions) {
        self.parquet = options;
    }

    /// Appends `batch` (logical schema) in one commit: one new file per
    /// distinct tuple of partition values, in order of first appearance.
    pub async fn append(&mut self, batch: &RecordBatch) -> Result<Commit> {
        self.check_schema(batch)?;
        if batch.num_rows() == 0 {
            return Err(TestkitError::SchemaMismatch {
                reason: "an appended batch must have rows".into(),
            });
        }
        let version = self.version + 1;
        let timestamp = self.timestamp(version);
        let (added, pending) = self.data_files(batch, timestamp)?;
        for (segments, bytes) in pending {
            self.put(&segments, bytes, PutMode::Create).await?;
        }
        self.commit_added(version, timestamp, added).await
    }

    /// Commits `added` as a blind append (`WRITE`) at `version` and makes
    /// the files live.
    pub(crate) async fn commit_added(
        &mut self,
        version: u64,
        timestamp: i64,
        added: Vec<DataFile>,
    ) -> Result<Commit> {
        let mut actions = vec![commit_info_json(
            timestamp,
            "WRITE",
            self.in_commit_timestamps,
        )];
        actions.extend(added.iter().map(|f| f.add_json(true)));
        self.write_commit(version, &actions).await?;
        for file in &added {
            self.files.insert(file.path.clone(), file.clone());
        }
        Ok(Commit {
            version,
            added,
            removed: Vec::new(),
        })
    }

    /// The new data files of a logical `batch` (one per distinct tuple of
    /// partition values) and their bytes at their raw path segments, not
    /// yet written.
    fn data_files(&mut self, batch: &RecordBatch, timestamp: i64) -> Result<NewFiles> {
        let mut added = Vec::new();
        let mut pending = Vec::new();
        for (values, rows) in self.partition_groups(batch)? {
            let part = if rows.is_empty() || rows.len() == batch.num_rows() {
                batch.clone()
            } else {
                let indices = UInt32Array::from(rows);
                arrow_select::take::take_record_batch(batch, &indices)
                    .map_err(TestkitError::arrow("split batch by partition"))?
            };
            let physical = self.physical_batch(&part)?;
            let stats = FileStats::compute(&physical, self.num_indexed_cols);

            let uuid = self.ids.uuid();
            let name = data_file_name(self.file_counter, uuid, self.parquet.codec().file_suffix());
            self.file_counter += 1;
            let mut segments = partition_segments(&values);
            segments.push(name);
            let path = encoded_path(&segments);
            let bytes = write_file(std::slice::from_ref(&physical), &self.parquet, &path)?;
            let file = DataFile {
                path,
                partition_values: values,
                size: bytes.len() as u64,
                modification_time: timestamp,
                num_records: stats.num_records,
                deletion_vector: None,
                deleted: None,
                stats,
                rows: self.keep_rows.then(|| part.clone()),
            };
            pending.push((segments, bytes));
            added.push(file);
        }
        Ok((added, pending))
    }

    /// Updates rows of one file in one commit, as a writer with deletion
    /// vectors and the change data feed does: the old rows deleted through
    /// the file's DV (`remove` + `add` with the grown DV), a new file with
    /// the `updated` rows (logical schema, one per index of `rows`, in that
    /// order, with the file's partition values), and a `cdc` file under
    /// `_change_data/` holding each row's `update_preimage` and
    /// `update_postimage`. Needs deletion vectors, the change data feed and
    /// [`TableWriterBuilder::with_kept_rows`].
    pub async fn update_rows(
        &mut self,
        path: &str,
        rows: &[u64],
        updated: &RecordBatch,
        storage: DvStorage,
    ) -> Result<Commit> {
        if !self.deletion_vectors {
            return Err(TestkitError::DeletionVectorsDisabled);
        }
        self.check_schema(updated)?;
        let mismatch = |reason: String| TestkitError::SchemaMismatch { reason };
        if !self.change_data_feed() {
            return Err(mismatch(
                "update_rows writes cdc files: turn the change data feed on".into(),
            ));
        }
        if rows.is_empty() || updated.num_rows() != rows.len() {
            return Err(mismatch(format!(
                "{} updated rows for {} row indexes (at least one)",
                updated.num_rows(),
                rows.len()
            )));
        }
        let old = self.live(path)?.clone();
        let kept = old.rows.as_ref().ok_or(TestkitError::RowsNotKept)?;
        if let Some(&row) = rows
            .iter()
            .find(|&&r| old.deleted.as_ref().is_some_and(|d| d.contains(r)))
        {
            return Err(mismatch(format!("row {row} of {path} is already deleted")));
        }
        let merged = merge(path, old.num_records, old.deleted.as_ref(), rows)?;
        let indices = UInt32Array::from_iter_values(rows.iter().map(|&r| r as u32));
        let preimage = arrow_select::take::take_record_batch(kept, &indices)
            .map_err(TestkitError::arrow("take the updated rows"))?;
        let version = self.version + 1;
        let timestamp = self.timestamp(version);
        let (added, mut pending) = self.data_files(updated, timestamp)?;
        if added.len() != 1 || added[0].partition_values != old.partition_values {
            return Err(mismatch(format!(
                "updated rows of {path} must keep its partition values"
            )));
        }
        let (cdc_segments, cdc_bytes) = self.cdc_file(&old, &preimage, updated)?;
        let cdc_path = encoded_path(&cdc_segments);
        let cdc_size = cdc_bytes.len() as u64;
        pending.push((cdc_segments, cdc_bytes));
        let mut dvs = DvBatch::new(storage, self.ids.uuid());
        let mut new = old.clone();
        new.deletion_vector = Some(dvs.add(path, &merged)?);
        new.deleted = Some(merged);
        new.modification_time = timestamp;
        if let Some(dv) = dvs.finish() {
            pending.push(dv);
        }
        for (segments, bytes) in pending {
            self.put(&segments, bytes, PutMode::Create).await?;
        }
        let mut actions = vec![commit_info_json(
            timestamp,
            "UPDATE",
            self.in_commit_timestamps,
        )];
        actions.push(old.remove_json(timestamp, true));
        actions.push(new.add_json(true));
        actions.extend(added.iter().map(|f| f.add_json(true)));
        actions.push(cdc_json(&cdc_path, &old, cdc_size));
        self.write_commit(version, &actions).await?;
        self.tombstones.push(Tombstone {
            file: old.clone(),
            deletion_timestamp: timestamp,
        });
        self.files.insert(new.path.clone(), new.clone());
        for file in &added {
            self.files.insert(file.path.clone(), file.clone());
        }
        let mut all = vec![new];
        all.extend(added);
        Ok(Commit {
            version,
            added: all,
            removed: vec![old.path],
        })
    }

    /// Whether `delta.enableChangeDataFeed` is on.
    fn change_data_feed(&self) -> bool {
        self.metadata
            .configuration
            .get("delta.enableChangeDataFeed")
            .is_some_and(|v| v == "true")
    }

    /// The `cdc` file of an update of `file`'s rows: the data columns
    /// (physical) of `preimage` then `postimage`, and `_change_type`.
    fn cdc_file(
        &mut self,
        file: &DataFile,
        preimage: &RecordBatch,
        postimage: &RecordBatch,
    ) -> Result<(Vec<String>, Vec<u8>)> {
        let before = self.physical_batch(preimage)?;
        let after = self.physical_batch(postimage)?;
        let both = arrow_select::concat::concat_batches(&before.schema(), [&before, &after])
            .map_err(TestkitError::arrow("concatenate cdc rows"))?;
        let kinds: Vec<&str> = std::iter::repeat_n("update_preimage", before.num_rows())
            .chain(std::iter::repeat_n("update_postimage", after.num_rows()))
            .collect();
        let mut fields: Vec<arrow_schema::FieldRef> =
            both.schema().fields().iter().cloned().collect();
        fields.push(Arc::new(arrow_schema::Field::new(
            "_change_type",
            arrow_schema::DataType::Utf8,
            false,
        )));
        let mut columns = both.columns().to_vec();
        columns.push(Arc::new(arrow_array::StringArray::from(kinds)));
        let cdc = RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), columns)
            .map_err(TestkitError::arrow("build the cdc batch"))?;
        let uuid = self.ids.uuid();
        let name = cdc_file_name(self.file_counter, uuid, self.parquet.codec().file_suffix());
        self.file_counter += 1;
        let mut segments = vec!["_change_data".to_string()];
        segments.extend(partition_segments(&file.partition_values));
        segments.push(name);
        let bytes = write_file(
            std::slice::from_ref(&cdc),
            &self.parquet,
            &encoded_path(&segments),
        )?;
        Ok((segments, bytes))
    }

    /// Removes live files (by `add.path`) in one commit.
    pub async fn remove_files(&mut self, paths: &[&str]) -> Result<Commit> {
        let version = self.version + 1;
        let timestamp = self.timestamp(version);
        let mut actions = vec![commit_info_json(
            timestamp,
            "DELETE",
            self.in_commit_timestamps,
        )];
        for path in paths {
            let file = self.live(path)?;
            actions.push(file.remove_json(timestamp, true));
        }
        self.write_commit(version, &actions).await?;
        let mut removed = Vec::new();
        for path in paths {
            if let Some(file) = self.files.remove(*path) {
                self.tombstones.push(Tombstone {
                    file,
                    deletion_timestamp: timestamp,
                });
                removed.push((*path).to_owned());
            }
        }
        Ok(Commit {
            version,
            added: Vec::new(),
            removed,
        })
    }

    /// Deletes rows (0-based physical row indexes) of one file through a DV.
    pub async fn delete_rows(
        &mut self,
        path: &str,
        rows: &[u64],
        storage: DvStorage,
    ) -> Result<Commit> {
        self.delete_rows_in(&[(path, rows)], storage).await
    }

    /// Deletes rows of several files in one commit: for each file a
    /// `remove` (old DV) and an `add` (new DV = old ∪ new rows,
    /// `tightBounds:false`). With file storage, all new DVs share one DV file.
    pub async fn delete_rows_in(
        &mut self,
        deletes: &[(&str, &[u64])],
        storage: DvStorage,
    ) -> Result<Commit> {
        if !self.deletion_vectors {
            return Err(TestkitError::DeletionVectorsDisabled);
        }
        let version = self.version + 1;
        let timestamp = self.timestamp(version);
        let mut dvs = DvBatch::new(storage, self.ids.uuid());
        let mut actions = vec![commit_info_json(
            timestamp,
            "DELETE",
            self.in_commit_timestamps,
        )];
        let mut replaced = Vec::new();
        for (path, rows) in deletes {
            let old = self.live(path)?;
            let merged = merge(path, old.num_records, old.deleted.as_ref(), rows)?;
            let mut new = old.clone();
            new.deletion_vector = Some(dvs.add(path, &merged)?);
            new.deleted = Some(merged);
            new.modification_time = timestamp;
            actions.push(old.remove_json(timestamp, true));
            actions.push(new.add_json(true));
            replaced.push((old.clone(), new));
        }
        if let Some((segments, bytes)) = dvs.finish() {
            self.put(&segments, bytes, PutMode::Create).await?;
        }
        self.write_commit(version, &actions).await?;
        let mut commit = Commit {
            version,
            added: Vec::new(),
            removed: Vec::new(),
        };
        for (old, new) in replaced {
            commit.removed.push(old.path.clone());
            commit.added.push(new.clone());
            // Deleting rows already deleted leaves the same DV: the add
            // supersedes the remove of that very key, which is then no
            // tombstone (a checkpoint never both adds and removes a key).
            if old
                .deletion_vector
                .as_ref()
                .map(dar_dv::DvDescriptor::unique_id)
                != new
                    .deletion_vector
                    .as_ref()
                    .map(dar_dv::DvDescriptor::unique_id)
            {
                self.tombstones.push(Tombstone {
                    file: old,
                    deletion_timestamp: timestamp,
                });
            }
            self.files.insert(new.path.clone(), new);
        }
        Ok(commit)
    }

    pub(crate) fn timestamp(&self, version: u64) -> i64 {
        self.start_ms + version as i64 * COMMIT_INTERVAL_MS
    }

    fn live(&self, path: &str) -> Result<&DataFile> {
        self.files
            .get(path)
            .ok_or_else(|| TestkitError::UnknownFile {
                path: path.to_owned(),
            })
    }

    pub(crate) fn check_schema(&self, batch: &RecordBatch) -> Result<()> {
        let expected = self.schema.logical.fields();
        let actual = batch.schema_ref().fields();
        if expected.len() != actual.len() {
            return Err(TestkitError::SchemaMismatch {
                reason: format!("{} columns, the table has {}", actual.len(), expected.len()),
            });
        }
        for (e, a) in expected.iter().zip(actual) {
            if e.name() != a.name()
                || e.data_type() != a.data_type()
                || e.is_nullable() != a.is_nullable()
            {
                return Err(TestkitError::SchemaMismatch {
                    reason: format!("column `{}` is {a:?}, the table has {e:?}", e.name()),
                });
            }
        }
        Ok(())
    }

    /// Row indexes grouped by their partition values; an empty index list
    /// stands for the whole batch (unpartitioned tables).
    fn partition_groups(&self, batch: &RecordBatch) -> Result<Vec<(PartitionValues, Vec<u32>)>> {
        if self.partition_indexes.is_empty() {
            return Ok(vec![(Vec::new(), Vec::new())]);
        }
        let mut groups: Vec<(PartitionValues, Vec<u32>)> = Vec::new();
        let mut index: HashMap<Vec<Option<String>>, usize> = HashMap::new();
        for row in 0..batch.num_rows() {
            let mut key = Vec::with_capacity(self.partition_indexes.len());
            for &column in &self.partition_indexes {
                let name = self.schema.logical.field(column).name();
                key.push(value_text(batch.column(column), row, name)?);
            }
            let group = *index.entry(key.clone()).or_insert_with(|| {
                let named = self
                    .partition_indexes
                    .iter()
                    .zip(key)
                    .map(|(&column, value)| {
                        (self.schema.physical.field(column).name().clone(), value)
                    })
                    .collect();
                groups.push((named, Vec::new()));
                groups.len() - 1
            });
            groups[group].1.push(row as u32);
        }
        Ok(groups)
    }

    pub(crate) async fn write_commit(&mut self, version: u64, actions: &[Json]) -> Result<()> {
        let segments = ["_delta_log".into(), format!("{}.json", pad20(version))];
        self.put(
            &segments,
            commit_text(actions).into_bytes(),
            PutMode::Create,
        )
        .await?;
        self.version = version;
        Ok(())
    }

    /// Writes `bytes` under the root at the raw (not URI-encoded) segments.
    /// The raw segment is the object's key (`region=US%2FEast` on disk,
    /// matching the once-decoded `add.path`), so it is not re-encoded.
    pub(crate) async fn put(
        &self,
        segments: &[String],
        bytes: Vec<u8>,
        mode: PutMode,
    ) -> Result<()> {
        let mut location = self.root.clone();
        for segment in segments {
            let part =
                PathPart::parse(segment).map_err(|source| TestkitError::InvalidObjectName {
                    name: segment.clone(),
                    reason: source.to_string(),
                })?;
            location = location.join(part);
        }
        let options = PutOptions {
            mode,
            ..PutOptions::default()
        };
        self.store
            .put_opts(&location, PutPayload::from(Bytes::from(bytes)), options)
            .await
            .map_err(TestkitError::store(&location))?;
        Ok(())
    }
}
