//! [`TableConfiguration`]: the protocol and metadata of one version and
//! everything that follows from them, derived once.
//!
//! What a reader decides from a table's protocol and metadata (protocol
//! digest §4, §6, §10, §12) is decided here and nowhere else:
//!
//! | derived                 | from                                                   |
//! |-------------------------|--------------------------------------------------------|
//! | readable or refused     | reader version and features ([`ProtocolReport`])       |
//! | logical schema          | `schemaString` (partition columns as text without it)  |
//! | column-mapping mode     | `delta.columnMapping.mode`, if the protocol enables it |
//! | physical schema         | the schema under that mode                             |
//! | change data feed on     | `delta.enableChangeDataFeed`                           |
//! | in-commit timestamps    | `inCommitTimestamp` writer feature and `delta.enableInCommitTimestamps`, from `delta.inCommitTimestampEnablementVersion` |
//!
//! A snapshot holds the configuration of its version. The change data
//! feed starts from the configuration before its range and evolves it
//! commit by commit ([`TableConfiguration::evolve`]), so each commit is
//! judged by the settings in force at that commit: a feed across the
//! commit that switched in-commit timestamps off gives the commits before
//! it their in-commit timestamps and the ones from it on their file times.

use std::sync::Arc;

use crate::actions::{Metadata, Protocol};
use crate::error::{LogError, Result};
use crate::protocol::{ProtocolReport, check_protocol};
use crate::schema::{
    COLUMN_MAPPING_MODE_KEY, ColumnMappingMode, DataType, PrimitiveType, StructField, StructType,
};

/// Table property that turns the change data feed on.
pub const ENABLE_CDF_KEY: &str = "delta.enableChangeDataFeed";
/// Table property that turns in-commit timestamps on.
const ENABLE_ICT_KEY: &str = "delta.enableInCommitTimestamps";
/// The first version whose commit timestamp is its in-commit timestamp.
const ICT_VERSION_KEY: &str = "delta.inCommitTimestampEnablementVersion";
/// The in-commit timestamp of that version.
const ICT_TIMESTAMP_KEY: &str = "delta.inCommitTimestampEnablementTimestamp";

/// Where a table's commit timestamps come from (protocol digest §10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InCommitTimestamps {
    /// Off: every commit's timestamp is its file's modification time.
    Off,
    /// On from `version` (0 when the table records no enablement version:
    /// on since its creation). Commits before it keep their file times.
    Since {
        /// The enablement version.
        version: u64,
        /// The in-commit timestamp of that version, when the table
        /// records it (`delta.inCommitTimestampEnablementTimestamp`).
        timestamp_ms: Option<i64>,
    },
}

impl InCommitTimestamps {
    /// The state `protocol` and `metadata` describe: on when the protocol
    /// lists the `inCommitTimestamp` writer feature and the table property
    /// is true. Needs no readable schema, so that time travel can consult
    /// the latest version of a table whose newest protocol dar refuses.
    pub fn of(protocol: &Protocol, metadata: &Metadata) -> Self {
        let config = &metadata.configuration;
        let on = protocol.has_writer_feature("inCommitTimestamp")
            && config
                .get(ENABLE_ICT_KEY)
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        if !on {
            return Self::Off;
        }
        Self::Since {
            version: config
                .get(ICT_VERSION_KEY)
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0),
            timestamp_ms: config
                .get(ICT_TIMESTAMP_KEY)
                .and_then(|v| v.trim().parse().ok()),
        }
    }

    /// Whether the timestamp of commit `version` is its in-commit timestamp.
    pub fn apply_to(self, version: u64) -> bool {
        matches!(self, Self::Since { version: e, .. } if version >= e)
    }
}

/// Whether `metadata` turns the change data feed on.
fn change_data_feed(metadata: &Metadata) -> bool {
    metadata
        .configuration
        .get(ENABLE_CDF_KEY)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// The protocol and metadata of one version of a table dar reads, with
/// what follows from them (see the module doc). Built once per version
/// ([`TableConfiguration::try_new`]) or from the previous commit's
/// ([`TableConfiguration::evolve`]); cheap to clone (the schema is shared).
#[derive(Debug, Clone)]
pub struct TableConfiguration {
    version: u64,
    protocol: Protocol,
    metadata: Metadata,
    schema: Arc<StructType>,
    column_mapping: ColumnMappingMode,
    change_data_feed: bool,
    in_commit_timestamps: InCommitTimestamps,
}

impl TableConfiguration {
    /// The configuration of `version` with `protocol` and `metadata`.
    ///
    /// # Errors
    ///
    /// [`LogError::UnsupportedReaderVersion`] or
    /// [`LogError::UnsupportedFeature`] for a protocol dar refuses (checked
    /// first, so a refused table is reported as such whatever else its
    /// metadata holds); [`LogError::UnsupportedFormat`] for data files
    /// that are not Parquet; the errors of parsing `schemaString`;
    /// [`LogError::UnknownColumnMappingMode`].
    pub fn try_new(protocol: Protocol, metadata: Metadata, version: u64) -> Result<Self> {
        check_protocol(&protocol, version)?;
        let provider = metadata.format.provider.as_str();
        if !provider.is_empty() && !provider.eq_ignore_ascii_case("parquet") {
            return Err(LogError::UnsupportedFormat {
                provider: provider.to_string(),
            });
        }
        let schema = match &metadata.schema_string {
            Some(text) => StructType::from_json(text)?,
            // Without a schema the files can still be listed: partition
            // values are kept as text, under their logical names.
            None => StructType::new(
                metadata
                    .partition_columns
                    .iter()
                    .map(|p| {
                        StructField::new(
                            p.clone(),
                            DataType::Primitive(PrimitiveType::String),
                            true,
                        )
                    })
                    .collect(),
            ),
        };
        let supports_mapping = protocol.min_reader_version == 2
            || (protocol.min_reader_version == 3 && protocol.has_reader_feature("columnMapping"));
        let column_mapping = ColumnMappingMode::from_property(
            metadata
                .configuration
                .get(COLUMN_MAPPING_MODE_KEY)
                .map(String::as_str),
            supports_mapping,
        )?;
        Ok(Self {
            version,
            change_data_feed: change_data_feed(&metadata),
            in_commit_timestamps: InCommitTimestamps::of(&protocol, &metadata),
            protocol,
            metadata,
            schema: Arc::new(schema),
            column_mapping,
        })
    }

    /// The configuration at `version`, the commit after this one's, which
    /// holds `protocol` and `metadata` when it changes them: this one with
    /// the new version when it changes neither.
    ///
    /// # Errors
    ///
    /// As [`TableConfiguration::try_new`], naming `version`.
    pub fn evolve(
        &self,
        protocol: Option<Protocol>,
        metadata: Option<Metadata>,
        version: u64,
    ) -> Result<Self> {
        if protocol.is_none() && metadata.is_none() {
            return Ok(Self {
                version,
                ..self.clone()
            });
        }
        Self::try_new(
            protocol.unwrap_or_else(|| self.protocol.clone()),
            metadata.unwrap_or_else(|| self.metadata.clone()),
            version,
        )
    }

    /// The version this configuration is in force at.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The protocol in force.
    pub fn protocol(&self) -> &Protocol {
        &self.protocol
    }

    /// The metadata in force.
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// What dar reads of the protocol, feature by feature (for a
    /// configuration that exists, the verdict is that dar reads it).
    pub fn protocol_report(&self) -> ProtocolReport {
        ProtocolReport::new(&self.protocol)
    }

    /// The logical schema (physical names and ids in field metadata). For
    /// a log without `schemaString` ([`TableConfiguration::has_schema`] is
    /// false), only the partition columns, as strings.
    pub fn schema(&self) -> &Arc<StructType> {
        &self.schema
    }

    /// Whether the metadata holds a schema (`schemaString`).
    pub fn has_schema(&self) -> bool {
        self.metadata.schema_string.is_some()
    }

    /// The column-mapping mode in force.
    pub fn column_mapping_mode(&self) -> ColumnMappingMode {
        self.column_mapping
    }

    /// The schema as data files name it: every field under its physical
    /// name in `name` and `id` mode (see [`StructType::physical_schema`]).
    ///
    /// # Errors
    ///
    /// [`LogError::ColumnMapping`] for a field without the physical name
    /// (or id) its mode needs.
    pub fn physical_schema(&self) -> Result<StructType> {
        self.schema.physical_schema(self.column_mapping)
    }

    /// The schema in Arrow form.
    ///
    /// # Errors
    ///
    /// As [`StructType::to_arrow`].
    pub fn arrow_schema(&self) -> Result<arrow_schema::Schema> {
        self.schema.to_arrow(self.column_mapping)
    }

    /// Whether the change data feed is on (`delta.enableChangeDataFeed`).
    pub fn is_change_data_feed_enabled(&self) -> bool {
        self.change_data_feed
    }

    /// Whether, and from which version, commit timestamps are in-commit
    /// timestamps.
    pub fn in_commit_timestamps(&self) -> InCommitTimestamps {
        self.in_commit_timestamps
    }

    /// Whether this version's commit timestamp is its in-commit timestamp.
    pub fn uses_in_commit_timestamp(&self) -> bool {
        self.in_commit_timestamps.apply_to(self.version)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn protocol(writer: &[&str]) -> Protocol {
        Protocol {
            min_reader_version: 1,
            min_writer_version: 7,
            reader_features: None,
            writer_features: Some(writer.iter().map(|s| s.to_string()).collect()),
        }
    }

    fn metadata(config: &[(&str, &str)]) -> Metadata {
        Metadata {
            id: "t".into(),
            name: None,
            description: None,
            format: Default::default(),
            schema_string: Some(
                r#"{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":{}}]}"#.into(),
            ),
            partition_columns: Vec::new(),
            created_time: None,
            configuration: config
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<HashMap<_, _>>(),
        }
    }

    #[test]
    fn in_commit_timestamps_need_the_feature_and_the_property() {
        let on = [(ENABLE_ICT_KEY, "true"), (ICT_VERSION_KEY, "3")];
        let without_feature = TableConfiguration::try_new(protocol(&[]), metadata(&on), 5).unwrap();
        assert_eq!(
            without_feature.in_commit_timestamps(),
            InCommitTimestamps::Off
        );
        let c = TableConfiguration::try_new(protocol(&["inCommitTimestamp"]), metadata(&on), 5)
            .unwrap();
        assert_eq!(
            c.in_commit_timestamps(),
            InCommitTimestamps::Since {
                version: 3,
                timestamp_ms: None
            }
        );
        assert!(c.uses_in_commit_timestamp());
        assert!(!c.in_commit_timestamps().apply_to(2));
    }

    #[test]
    fn evolving_follows_each_commit() {
        let ict = protocol(&["inCommitTimestamp"]);
        let off = TableConfiguration::try_new(ict.clone(), metadata(&[]), 2).unwrap();
        assert!(!off.uses_in_commit_timestamp());
        let same = off.evolve(None, None, 3).unwrap();
        assert_eq!(same.version(), 3);
        assert!(!same.is_change_data_feed_enabled());
        let on = same
            .evolve(
                None,
                Some(metadata(&[
                    (ENABLE_ICT_KEY, "true"),
                    (ICT_VERSION_KEY, "4"),
                    (ENABLE_CDF_KEY, "true"),
                ])),
                4,
            )
            .unwrap();
        assert!(on.uses_in_commit_timestamp());
        assert!(on.is_change_data_feed_enabled());
        let off_again = on
            .evolve(None, Some(metadata(&[(ENABLE_ICT_KEY, "false")])), 8)
            .unwrap();
        assert!(!off_again.uses_in_commit_timestamp());
        // A refused protocol fails the commit that brings it, by version.
        let refused = Protocol {
            min_reader_version: 4,
            ..ict
        };
        let err = off_again.evolve(Some(refused), None, 9).unwrap_err();
        assert!(err.to_string().contains("9"), "{err}");
    }

    #[test]
    fn mapping_mode_needs_protocol_support() {
        let m = metadata(&[(COLUMN_MAPPING_MODE_KEY, "name")]);
        let legacy = TableConfiguration::try_new(protocol(&[]), m.clone(), 0).unwrap();
        assert_eq!(legacy.column_mapping_mode(), ColumnMappingMode::None);
        let v2 = Protocol {
            min_reader_version: 2,
            min_writer_version: 5,
            reader_features: None,
            writer_features: None,
        };
        let mapped = TableConfiguration::try_new(v2, m, 0).unwrap();
        assert_eq!(mapped.column_mapping_mode(), ColumnMappingMode::Name);
    }
}
