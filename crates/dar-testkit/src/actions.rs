//! The log's actions (§2) as the kit writes them, and their JSON lines.

use std::collections::BTreeMap;

use dar_dv::{DeletedRows, DvDescriptor};

use crate::json::Json;
use crate::stats::FileStats;

/// A live data file of a table written by the kit.
#[derive(Debug, Clone)]
pub struct DataFile {
    /// `add.path`: relative to the root, URI-encoded (§2.9).
    pub path: String,
    /// `add.partitionValues`: physical column name to §7 text (`None` = null),
    /// in partition-column order.
    pub partition_values: Vec<(String, Option<String>)>,
    /// File size in bytes.
    pub size: u64,
    /// `add.modificationTime` (ms).
    pub modification_time: i64,
    /// Physical rows in the file (`numRecords`; DV-deleted rows included).
    pub num_records: u64,
    /// The file's DV, if rows were deleted.
    pub deletion_vector: Option<DvDescriptor>,
    pub(crate) deleted: Option<DeletedRows>,
    pub(crate) stats: FileStats,
    /// The file's logical rows (partition columns included), when the
    /// writer keeps them.
    pub(crate) rows: Option<arrow_array::RecordBatch>,
}

impl DataFile {
    /// Row indexes deleted by the file's DV (empty without one).
    pub fn deleted_rows(&self) -> Vec<u64> {
        self.deleted
            .as_ref()
            .map(|d| d.iter().collect())
            .unwrap_or_default()
    }

    /// The file's logical rows (partition columns and DV-deleted rows
    /// included), when the writer keeps them
    /// ([`crate::TableWriterBuilder::with_kept_rows`]).
    pub fn rows(&self) -> Option<&arrow_array::RecordBatch> {
        self.rows.as_ref()
    }

    /// Rows a reader must return: `num_records` minus the DV's cardinality.
    pub fn live_rows(&self) -> u64 {
        self.num_records
            - self
                .deletion_vector
                .as_ref()
                .map_or(0, DvDescriptor::cardinality)
    }

    /// The `add.stats` JSON: tight bounds unless a DV deleted rows.
    pub fn stats_json(&self) -> String {
        self.stats.render(self.deletion_vector.is_none())
    }

    /// The `add` action line.
    pub(crate) fn add_json(&self, data_change: bool) -> Json {
        let mut add = Json::object()
            .with("path", Json::str(&self.path))
            .with("partitionValues", self.partition_values_json())
            .with("size", Json::Int(self.size as i64))
            .with("modificationTime", Json::Int(self.modification_time))
            .with("dataChange", Json::Bool(data_change))
            .with("stats", Json::Str(self.stats_json()));
        if let Some(dv) = &self.deletion_vector {
            add.push("deletionVector", dv_json(dv));
        }
        Json::object().with("add", add)
    }

    /// The `remove` action line for this file (with its DV, if any).
    pub(crate) fn remove_json(&self, deletion_timestamp: i64, data_change: bool) -> Json {
        let mut remove = Json::object()
            .with("path", Json::str(&self.path))
            .with("deletionTimestamp", Json::Int(deletion_timestamp))
            .with("dataChange", Json::Bool(data_change))
            .with("extendedFileMetadata", Json::Bool(true))
            .with("partitionValues", self.partition_values_json())
            .with("size", Json::Int(self.size as i64));
        if let Some(dv) = &self.deletion_vector {
            remove.push("deletionVector", dv_json(dv));
        }
        Json::object().with("remove", remove)
    }

    pub(crate) fn partition_values_json(&self) -> Json {
        Json::Object(
            self.partition_values
                .iter()
                .map(|(k, v)| (k.clone(), Json::opt_str(v.as_deref())))
                .collect(),
        )
    }
}

/// The `cdc` action line of a change file at `path` (`size` bytes) with
/// the partition values of `file`, the data file whose rows it changes.
pub(crate) fn cdc_json(path: &str, file: &DataFile, size: u64) -> Json {
    let cdc = Json::object()
        .with("path", Json::str(path))
        .with("partitionValues", file.partition_values_json())
        .with("size", Json::Int(size as i64))
        .with("dataChange", Json::Bool(false));
    Json::object().with("cdc", cdc)
}

/// A removed file kept for the checkpoint's tombstones.
#[derive(Debug, Clone)]
pub(crate) struct Tombstone {
    pub(crate) file: DataFile,
    pub(crate) deletion_timestamp: i64,
}

/// The DV descriptor object (§9.1).
pub(crate) fn dv_json(dv: &DvDescriptor) -> Json {
    let mut json = Json::object()
        .with(
            "storageType",
            Json::str(dv.storage_type().code().to_string()),
        )
        .with("pathOrInlineDv", Json::str(dv.path_or_inline_dv()));
    if let Some(offset) = dv.offset() {
        json.push("offset", Json::Int(offset as i64));
    }
    json.with("sizeInBytes", Json::Int(i64::from(dv.size_in_bytes())))
        .with("cardinality", Json::Int(dv.cardinality() as i64))
}

/// The table's `protocol` (§2.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Protocol {
    pub(crate) min_reader_version: i32,
    pub(crate) min_writer_version: i32,
    /// Reader-and-writer features (listed in both lists).
    pub(crate) features: Vec<&'static str>,
    /// Writer-only features.
    pub(crate) writer_only: Vec<&'static str>,
}

impl Protocol {
    /// Reader 1 / writer 2 when no feature is used; writer 7 with any
    /// feature, and reader 3 when a reader feature is used.
    pub(crate) fn for_features(
        features: Vec<&'static str>,
        writer_only: Vec<&'static str>,
    ) -> Self {
        let min_reader_version = if features.is_empty() { 1 } else { 3 };
        let min_writer_version = if features.is_empty() && writer_only.is_empty() {
            2
        } else {
            7
        };
        Self {
            min_reader_version,
            min_writer_version,
            features,
            writer_only,
        }
    }

    /// `readerFeatures`, present iff reader version 3.
    pub(crate) fn reader_features(&self) -> Option<Vec<&'static str>> {
        (self.min_reader_version == 3).then(|| self.features.clone())
    }

    /// `writerFeatures`, present iff writer version 7.
    pub(crate) fn writer_features(&self) -> Option<Vec<&'static str>> {
        (self.min_writer_version == 7).then(|| [&self.features[..], &self.writer_only[..]].concat())
    }

    pub(crate) fn json(&self) -> Json {
        let mut protocol = Json::object()
            .with(
                "minReaderVersion",
                Json::Int(i64::from(self.min_reader_version)),
            )
            .with(
                "minWriterVersion",
                Json::Int(i64::from(self.min_writer_version)),
            );
        let list = |features: Vec<&str>| Json::Array(features.into_iter().map(Json::str).collect());
        if let Some(features) = self.reader_features() {
            protocol.push("readerFeatures", list(features));
        }
        if let Some(features) = self.writer_features() {
            protocol.push("writerFeatures", list(features));
        }
        Json::object().with("protocol", protocol)
    }
}

/// The table's `metaData` (§2.2).
#[derive(Debug, Clone)]
pub(crate) struct Metadata {
    pub(crate) id: String,
    pub(crate) schema_string: String,
    pub(crate) partition_columns: Vec<String>,
    pub(crate) configuration: BTreeMap<String, String>,
    pub(crate) created_time: i64,
}

impl Metadata {
    pub(crate) fn json(&self) -> Json {
        let metadata = Json::object()
            .with("id", Json::str(&self.id))
            .with(
                "format",
                Json::object()
                    .with("provider", Json::str("parquet"))
                    .with("options", Json::object()),
            )
            .with("schemaString", Json::str(&self.schema_string))
            .with(
                "partitionColumns",
                Json::Array(self.partition_columns.iter().map(Json::str).collect()),
            )
            .with(
                "configuration",
                Json::Object(
                    self.configuration
                        .iter()
                        .map(|(k, v)| (k.clone(), Json::str(v)))
                        .collect(),
                ),
            )
            .with("createdTime", Json::Int(self.created_time));
        Json::object().with("metaData", metadata)
    }
}

/// A `commitInfo` line (free-form; readers need only `inCommitTimestamp`,
/// written when in-commit timestamps are on). Always the commit's first line.
pub(crate) fn commit_info_json(timestamp: i64, operation: &str, in_commit_timestamp: bool) -> Json {
    let mut info = Json::object();
    if in_commit_timestamp {
        info.push("inCommitTimestamp", Json::Int(timestamp));
    }
    let info = info
        .with("timestamp", Json::Int(timestamp))
        .with("operation", Json::str(operation))
        .with(
            "engineInfo",
            Json::str(concat!("dar-testkit/", env!("CARGO_PKG_VERSION"))),
        );
    Json::object().with("commitInfo", info)
}

/// Newline-delimited JSON text of one commit.
pub(crate) fn commit_text(actions: &[Json]) -> String {
    let mut text = String::new();
    for action in actions {
        text.push_str(&action.render());
        text.push('\n');
    }
    text
}
