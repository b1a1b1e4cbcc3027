//! The non-file Delta actions a snapshot keeps (protocol digest §2), and the
//! deletion-vector descriptor as plain fields.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// `protocol` action (§2.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Protocol {
    /// Minimum reader version (1-3).
    pub min_reader_version: i32,
    /// Minimum writer version (1-7).
    pub min_writer_version: i32,
    /// Reader features (reader version 3 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader_features: Option<Vec<String>>,
    /// Writer features (writer version 7 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_features: Option<Vec<String>>,
}

impl Protocol {
    /// Whether `writerFeatures` names `feature`.
    pub fn has_writer_feature(&self, feature: &str) -> bool {
        self.writer_features
            .as_ref()
            .is_some_and(|f| f.iter().any(|x| x == feature))
    }

    /// Whether `readerFeatures` lists `feature`.
    pub fn has_reader_feature(&self, feature: &str) -> bool {
        self.reader_features
            .as_ref()
            .is_some_and(|f| f.iter().any(|x| x == feature))
    }
}

/// `metaData.format` (§2.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Format {
    /// Data file format; always `parquet` in practice.
    #[serde(default)]
    pub provider: String,
    /// Format options.
    #[serde(default)]
    pub options: HashMap<String, Option<String>>,
}

/// `metaData` action (§2.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// Table id (a GUID).
    pub id: String,
    /// Optional table name.
    #[serde(default)]
    pub name: Option<String>,
    /// Optional description.
    #[serde(default)]
    pub description: Option<String>,
    /// Data format.
    #[serde(default)]
    pub format: Format,
    /// The Delta schema as JSON text (§5). Required by the protocol, but
    /// absent from some old checkpoints: the table's files can still be
    /// listed, its rows not read.
    #[serde(default)]
    pub schema_string: Option<String>,
    /// Logical partition column names, in order.
    #[serde(default)]
    pub partition_columns: Vec<String>,
    /// Creation time, ms.
    #[serde(default)]
    pub created_time: Option<i64>,
    /// Table properties. A null value (some writers emit them) reads as absent.
    #[serde(default, deserialize_with = "de_config")]
    pub configuration: HashMap<String, String>,
}

fn de_config<'de, D: serde::Deserializer<'de>>(d: D) -> Result<HashMap<String, String>, D::Error> {
    let raw: Option<HashMap<String, Option<String>>> = Option::deserialize(d)?;
    Ok(raw
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect())
}

/// `txn` action (§2.5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Txn {
    /// Application id.
    pub app_id: String,
    /// Application-defined version.
    pub version: i64,
    /// When the writer last updated it, ms.
    #[serde(default)]
    pub last_updated: Option<i64>,
}

/// `domainMetadata` action (§2.8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DomainMetadata {
    /// Domain name.
    pub domain: String,
    /// Domain configuration (free-form, usually JSON).
    pub configuration: String,
    /// Tombstone flag.
    #[serde(default)]
    pub removed: bool,
}

/// The fields of `commitInfo` that readers use (§2.6), plus the raw object.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CommitInfo {
    /// `timestamp` (ms), as written by the engine.
    pub timestamp: Option<i64>,
    /// `inCommitTimestamp` (ms) when in-commit timestamps are enabled.
    pub in_commit_timestamp: Option<i64>,
    /// The whole `commitInfo` object.
    pub raw: serde_json::Value,
}
