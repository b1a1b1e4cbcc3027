//! [`TableWriterBuilder`]: the settings of a new table, checked and
//! committed as version 0 (`protocol` and `metaData`).

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_schema::SchemaRef;
use object_store::ObjectStore;
use object_store::path::Path;

use crate::actions::{Metadata, Protocol, commit_info_json};
use crate::error::{Result, TestkitError};
use crate::naming::Ids;
use crate::parquet::ParquetOptions;
use crate::partition::is_partition_type;
use crate::schema::{ColumnMappingMode, TableSchema};
use crate::writer::{DEFAULT_START_MS, TableWriter};

/// Settings for a new table; [`TableWriterBuilder::create`] writes version 0.
#[derive(Debug)]
pub struct TableWriterBuilder {
    store: Arc<dyn ObjectStore>,
    root: Path,
    schema: SchemaRef,
    partition_columns: Vec<String>,
    column_mapping: ColumnMappingMode,
    deletion_vectors: bool,
    parquet: ParquetOptions,
    seed: u64,
    start_ms: i64,
    properties: BTreeMap<String, String>,
    in_commit_timestamps: bool,
    num_indexed_cols: Option<usize>,
    keep_rows: bool,
    change_data_feed: bool,
    v2_checkpoints: bool,
}

impl TableWriterBuilder {
    pub(crate) fn new(store: Arc<dyn ObjectStore>, root: Path, schema: SchemaRef) -> Self {
        Self {
            store,
            root,
            schema,
            partition_columns: Vec::new(),
            column_mapping: ColumnMappingMode::None,
            deletion_vectors: false,
            parquet: ParquetOptions::default(),
            seed: 0,
            start_ms: DEFAULT_START_MS,
            properties: BTreeMap::new(),
            in_commit_timestamps: false,
            num_indexed_cols: None,
            keep_rows: false,
            change_data_feed: false,
            v2_checkpoints: false,
        }
    }

    /// In-commit timestamps (the writer feature `inCommitTimestamp`, on from
    /// version 0): each commit's `commitInfo` comes first and carries
    /// `inCommitTimestamp`, so time travel by timestamp does not depend on
    /// the commit files' modification times.
    pub fn with_in_commit_timestamps(mut self, on: bool) -> Self {
        self.in_commit_timestamps = on;
        self
    }

    /// The reader-writer feature `v2Checkpoint` (with
    /// `delta.checkpointPolicy = v2`), which V2 checkpoints
    /// ([`crate::CheckpointOptions::with_sidecars`]) ask for.
    pub fn with_v2_checkpoints(mut self, on: bool) -> Self {
        self.v2_checkpoints = on;
        self
    }

    /// The change data feed (`delta.enableChangeDataFeed`, the writer
    /// feature `changeDataFeed`): [`TableWriter::update_rows`] then writes
    /// `cdc` files.
    pub fn with_change_data_feed(mut self, on: bool) -> Self {
        self.change_data_feed = on;
        self
    }

    /// Keep every appended row in memory so that
    /// [`TableWriter::snapshot_rows`] can answer what a reader must return
    /// (a reference for equivalence tests; off by default to save memory).
    pub fn with_kept_rows(mut self, on: bool) -> Self {
        self.keep_rows = on;
        self
    }

    /// Stats only for the first `n` leaf columns (schema order, partition
    /// columns left out, an array or map counting as one leaf), recorded as
    /// `delta.dataSkippingNumIndexedCols`. Default: every leaf, no property.
    pub fn with_num_indexed_cols(mut self, n: usize) -> Self {
        self.num_indexed_cols = Some(n);
        self
    }
    /// Partition columns (logical names, in order). They must be top-level
    /// primitive columns of the schema; they are not stored in the files.
    pub fn with_partition_columns<S: Into<String>>(
        mut self,
        columns: impl IntoIterator<Item = S>,
    ) -> Self {
        self.partition_columns = columns.into_iter().map(Into::into).collect();
        self
    }

    /// Column mapping mode (default none): physical names `col-<uuid>` and
    /// field ids, the `columnMapping` feature.
    pub fn with_column_mapping(mut self, mode: ColumnMappingMode) -> Self {
        self.column_mapping = mode;
        self
    }

    /// Allow deletion vectors (the `deletionVectors` feature and
    /// `delta.enableDeletionVectors=true`). Needed by `delete_rows`.
    pub fn with_deletion_vectors(mut self, on: bool) -> Self {
        self.deletion_vectors = on;
        self
    }

    /// Layout of the data files (changeable later with
    /// [`TableWriter::set_parquet_options`]).
    pub fn with_parquet_options(mut self, options: ParquetOptions) -> Self {
        self.parquet = options;
        self
    }

    /// Seed for the table id, file names, physical names and DV file names.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Timestamp (ms) of version 0; version `v` is stamped
    /// `start + v * COMMIT_INTERVAL_MS`. Default [`DEFAULT_START_MS`].
    pub fn with_start_time_ms(mut self, start_ms: i64) -> Self {
        self.start_ms = start_ms;
        self
    }

    /// A table property (`metaData.configuration`).
    pub fn with_property(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.properties.insert(key.into(), value.into());
        self
    }

    /// Validates the settings and commits version 0 (protocol and metaData).
    /// Fails if version 0 already exists.
    pub async fn create(self) -> Result<TableWriter> {
        let mut ids = Ids::new(self.seed);
        let table_id = ids.uuid().to_string();
        let schema = TableSchema::new(self.schema.clone(), self.column_mapping, &mut ids)?;
        let mut partition_indexes = Vec::new();
        for column in &self.partition_columns {
            let invalid = |reason: &str| TestkitError::InvalidPartitionColumn {
                column: column.clone(),
                reason: reason.to_owned(),
            };
            let (index, field) = schema
                .logical
                .column_with_name(column)
                .ok_or_else(|| invalid("not in the schema"))?;
            if !is_partition_type(field.data_type()) {
                return Err(invalid(&format!(
                    "type {} cannot be a partition column",
                    field.data_type()
                )));
            }
            if partition_indexes.contains(&index) {
                return Err(invalid("listed twice"));
            }
            partition_indexes.push(index);
        }
        if partition_indexes.len() == schema.logical.fields().len() {
            return Err(TestkitError::InvalidPartitionColumn {
                column: self.partition_columns.join(","),
                reason: "a table needs at least one non-partition column".into(),
            });
        }

        // Reader-and-writer features go to both lists, writer-only ones
        // (in-commit timestamps) only to `writerFeatures`.
        let (mut features, mut writer_only) = (Vec::new(), Vec::new());
        let mut configuration = self.properties;
        if let Some(n) = self.num_indexed_cols {
            configuration.insert("delta.dataSkippingNumIndexedCols".into(), n.to_string());
        }
        if self.in_commit_timestamps {
            writer_only.push("inCommitTimestamp");
            configuration.insert("delta.enableInCommitTimestamps".into(), "true".into());
            configuration.insert(
                "delta.inCommitTimestampEnablementVersion".into(),
                "0".into(),
            );
            configuration.insert(
                "delta.inCommitTimestampEnablementTimestamp".into(),
                self.start_ms.to_string(),
            );
        }
        if self.column_mapping != ColumnMappingMode::None {
            features.push("columnMapping");
            configuration.insert(
                "delta.columnMapping.mode".into(),
                self.column_mapping.as_str().into(),
            );
            configuration.insert(
                "delta.columnMapping.maxColumnId".into(),
                schema.max_column_id.to_string(),
            );
        }
        if self.change_data_feed {
            writer_only.push("changeDataFeed");
            configuration.insert("delta.enableChangeDataFeed".into(), "true".into());
        }
        if self.deletion_vectors {
            features.push("deletionVectors");
            configuration.insert("delta.enableDeletionVectors".into(), "true".into());
        }
        if schema.uses_timestamp_ntz {
            features.push("timestampNtz");
        }
        if self.v2_checkpoints {
            features.push("v2Checkpoint");
            configuration.insert("delta.checkpointPolicy".into(), "v2".into());
        }
        let protocol = Protocol::for_features(features, writer_only);
        let metadata = Metadata {
            id: table_id,
            schema_string: schema.delta_json.clone(),
            partition_columns: self.partition_columns,
            configuration,
            created_time: self.start_ms,
        };
        let data_indexes = (0..schema.logical.fields().len())
            .filter(|i| !partition_indexes.contains(i))
            .collect();
        let mut writer = TableWriter {
            store: self.store,
            root: self.root,
            schema,
            partition_indexes,
            data_indexes,
            deletion_vectors: self.deletion_vectors,
            parquet: self.parquet,
            ids,
            start_ms: self.start_ms,
            version: 0,
            file_counter: 0,
            protocol,
            metadata,
            files: BTreeMap::new(),
            tombstones: Vec::new(),
            in_commit_timestamps: self.in_commit_timestamps,
            num_indexed_cols: self.num_indexed_cols,
            keep_rows: self.keep_rows,
        };
        let actions = vec![
            commit_info_json(writer.start_ms, "CREATE TABLE", writer.in_commit_timestamps),
            writer.protocol.json(),
            writer.metadata.json(),
        ];
        writer.write_commit(0, &actions).await?;
        Ok(writer)
    }
}
