//! [`ScanSpec`]: what a scan reads, as plain serde data.
//!
//! A spec holds the logical side of a scan and nothing of the machine that
//! planned it: the table's URI (credentials removed) and version, its
//! schema, column-mapping mode and partition columns, the output columns,
//! the predicate, batch size, limit and order. Together with the
//! [`crate::ScanTask`]s it is all another process needs to run the scan with
//! its own store ([`crate::ScanRuntime`], [`crate::ScanContext::new`]).
//!
//! Bytes carry a format number ([`ScanSpec::FORMAT`]), which covers the
//! spec and the tasks alike: a reader of another format refuses them with
//! [`ScanError::SpecFormat`] rather than misreading them.

use arrow_schema::Schema;
use dar_log::schema::ColumnMappingMode;
use dar_prune::Expr;
use serde::{Deserialize, Serialize};

use crate::errors::error::{Result, ScanError};

/// The logical description of one scan, shared by all its tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScanSpec {
    /// [`ScanSpec::FORMAT`] of the writer.
    pub(crate) format: u32,
    /// The version of dar that wrote the spec, for error messages.
    pub(crate) producer: String,
    /// The table URI, credentials removed.
    pub(crate) table_uri: String,
    /// The snapshot version the tasks come from.
    pub(crate) version: u64,
    /// The table schema with the nullability the Delta log declares (and
    /// column-mapping metadata on its fields).
    pub(crate) schema: Schema,
    pub(crate) column_mapping: ColumnMappingMode,
    pub(crate) partition_columns: Vec<String>,
    /// Columns that a task may give a value for (in its partition values)
    /// where its file lacks them: the `_change_type` of a changes scan,
    /// stored in `cdc` files and decided by the action for the others.
    #[serde(default)]
    pub(crate) task_columns: Vec<String>,
    /// Output columns as paths of logical names, in output order.
    pub(crate) columns: Vec<Vec<String>>,
    /// The caller's predicate (its SQL text when serialized).
    #[serde(with = "predicate_text")]
    pub(crate) predicate: Option<Expr>,
    pub(crate) batch_size: usize,
    pub(crate) limit: Option<usize>,
    pub(crate) ordered: bool,
    /// Strings and binaries decoded and output as `Utf8View` /
    /// `BinaryView` ([`crate::view_type`]).
    #[serde(default)]
    pub(crate) view_types: bool,
}

/// What a spec reads: the table's side (or a change feed's end).
#[derive(Debug)]
pub(crate) struct SpecSource {
    pub(crate) table_uri: String,
    pub(crate) version: u64,
    pub(crate) schema: Schema,
    pub(crate) column_mapping: ColumnMappingMode,
    pub(crate) partition_columns: Vec<String>,
    pub(crate) task_columns: Vec<String>,
}

/// The first field of encoded bytes, read alone so that bytes of another
/// format are refused by number, not by whichever field changed.
#[derive(Deserialize)]
struct Header {
    format: u32,
    #[serde(default)]
    producer: String,
}

impl ScanSpec {
    /// The format of specs and tasks this build reads and writes. Raised
    /// whenever [`ScanSpec`] or [`crate::ScanTask`] change shape.
    pub const FORMAT: u32 = 5;

    /// The spec of a scan of `source` with `options` (the output columns
    /// already chosen: `columns`).
    pub(crate) fn new(
        source: SpecSource,
        columns: Vec<Vec<String>>,
        options: crate::planning::scan_options::ResolvedOptions,
    ) -> Self {
        Self {
            format: Self::FORMAT,
            producer: producer(),
            table_uri: source.table_uri,
            version: source.version,
            schema: source.schema,
            column_mapping: source.column_mapping,
            partition_columns: source.partition_columns,
            task_columns: source.task_columns,
            columns,
            predicate: options.predicate,
            batch_size: options.batch_size,
            limit: options.limit,
            ordered: options.ordered,
            view_types: options.view_types,
        }
    }

    /// The table URI (credentials removed), to open the store where the
    /// scan runs.
    pub fn table_uri(&self) -> &str {
        &self.table_uri
    }

    /// The snapshot version the scan's tasks come from.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The scan's limit.
    pub fn limit(&self) -> Option<usize> {
        self.limit
    }

    /// Whether strings and binaries come out as views
    /// ([`crate::ScanBuilder::with_view_types`]).
    pub fn view_types(&self) -> bool {
        self.view_types
    }

    /// The spec as bytes (JSON).
    ///
    /// # Errors
    ///
    /// [`ScanError::Spec`] if serialization fails.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        serde_json::to_vec(self).map_err(|e| ScanError::Spec {
            reason: e.to_string(),
        })
    }

    /// A spec from [`ScanSpec::to_bytes`].
    ///
    /// # Errors
    ///
    /// [`ScanError::SpecFormat`] for bytes of another format (another dar
    /// version), [`ScanError::Spec`] for bytes that do not parse.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::check_format(bytes)?;
        serde_json::from_slice(bytes).map_err(|e| ScanError::Spec {
            reason: e.to_string(),
        })
    }

    /// Checks the format number of JSON bytes whose top-level object has
    /// the `format` (and `producer`) fields of a spec, as a spec or an
    /// envelope that embeds one does.
    ///
    /// # Errors
    ///
    /// As [`ScanSpec::from_bytes`].
    pub fn check_format(bytes: &[u8]) -> Result<()> {
        let header: Header = serde_json::from_slice(bytes).map_err(|e| ScanError::Spec {
            reason: e.to_string(),
        })?;
        if header.format == Self::FORMAT {
            Ok(())
        } else {
            Err(ScanError::SpecFormat {
                found: header.format,
                producer: header.producer,
                supported: Self::FORMAT,
            })
        }
    }
}

/// The version of this build of dar, as specs record it.
pub(crate) fn producer() -> String {
    format!("dar {}", env!("CARGO_PKG_VERSION"))
}

/// A predicate as its SQL text: `dar_prune`'s display parses back to the
/// same predicate (a property its tests and fuzz target check).
mod predicate_text {
    use dar_prune::Expr;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(p: &Option<Expr>, s: S) -> Result<S::Ok, S::Error> {
        match p {
            Some(e) => s.serialize_some(&e.to_string()),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Expr>, D::Error> {
        let text: Option<String> = Option::deserialize(d)?;
        text.map(|t| {
            dar_prune::parse_expr(&t)
                .map_err(|e| serde::de::Error::custom(format!("predicate '{t}': {e}")))
        })
        .transpose()
    }
}

#[cfg(test)]
mod tests {
    use arrow_schema::{DataType, Field};

    use super::*;

    fn spec() -> ScanSpec {
        ScanSpec {
            format: ScanSpec::FORMAT,
            producer: producer(),
            table_uri: "s3://bucket/t".into(),
            version: 3,
            schema: Schema::new(vec![
                Field::new("id", DataType::Int64, false),
                Field::new("p", DataType::Utf8, true),
            ]),
            column_mapping: ColumnMappingMode::Name,
            partition_columns: vec!["p".into()],
            task_columns: vec![],
            columns: vec![vec!["id".into()]],
            predicate: Some(dar_prune::parse_expr("id > 3 AND p IN ('a', 'b')").unwrap()),
            batch_size: 100,
            limit: Some(7),
            ordered: false,
            view_types: true,
        }
    }

    #[test]
    fn spec_round_trips_through_bytes() {
        let s = spec();
        let back = ScanSpec::from_bytes(&s.to_bytes().unwrap()).unwrap();
        assert_eq!(back, s);
        assert_eq!(back.table_uri(), "s3://bucket/t");
        assert_eq!(back.version(), 3);
        assert_eq!(back.limit(), Some(7));
    }

    #[test]
    fn another_format_is_refused_by_number() {
        let mut s = spec();
        s.format = ScanSpec::FORMAT + 1;
        s.producer = "dar 9.9.9".into();
        let err = ScanSpec::from_bytes(&s.to_bytes().unwrap()).unwrap_err();
        assert!(
            matches!(err, ScanError::SpecFormat { found, .. } if found == ScanSpec::FORMAT + 1)
        );
        let text = err.to_string();
        assert!(text.contains("dar 9.9.9"), "{text}");
        assert!(
            text.contains(&format!("format {}", ScanSpec::FORMAT)),
            "{text}"
        );
        // Not JSON at all: a clear error too.
        let err = ScanSpec::from_bytes(b"\x00garbage").unwrap_err();
        assert!(matches!(err, ScanError::Spec { .. }), "{err}");
    }
}
