//! [`ScanTask`]: one data file to read, as plain serde-serializable data.
//!
//! A task says everything about the file that the log knows (object path,
//! size, typed partition values, row count, DV descriptor) and, once
//! resolved, which row groups and rows to read ([`FileAccess`]). What all
//! files share (schema, column mapping, projection, predicate) is said once,
//! in the scan's [`crate::ScanSpec`]. Another thread, engine or machine can
//! execute any subset of a plan's tasks with a [`crate::ScanContext`] built
//! from that spec and its own store.

use arrow_array::Array;
use dar_prune::Scalar;
use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use serde::{Deserialize, Serialize};

/// A typed partition value in a JSON-friendly form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
#[non_exhaustive]
pub enum PartitionValue {
    /// Null.
    Null,
    /// `boolean`.
    Boolean(bool),
    /// `byte`.
    Byte(i8),
    /// `short`.
    Short(i16),
    /// `integer`.
    Integer(i32),
    /// `long`.
    Long(i64),
    /// `float`.
    Float(f32),
    /// `double`.
    Double(f64),
    /// `decimal(precision, scale)`; the unscaled value as decimal text (an
    /// i128 does not fit every serde format).
    Decimal {
        /// Unscaled value, base 10.
        unscaled: String,
        /// Precision.
        precision: u8,
        /// Scale.
        scale: i8,
    },
    /// `string`.
    String(String),
    /// `binary`.
    Binary(Vec<u8>),
    /// `date`: days since 1970-01-01.
    Date(i32),
    /// `timestamp`: µs since the epoch, UTC.
    Timestamp(i64),
    /// `timestamp_ntz`: µs since 1970-01-01T00:00:00, no zone.
    TimestampNtz(i64),
}

impl PartitionValue {
    /// Element `i` of a typed partition-value array from the file index.
    pub(crate) fn from_array(array: &dyn Array, i: usize) -> Option<Self> {
        Some(match Scalar::from_array(array, i)? {
            Scalar::Null => Self::Null,
            Scalar::Boolean(v) => Self::Boolean(v),
            Scalar::Int8(v) => Self::Byte(v),
            Scalar::Int16(v) => Self::Short(v),
            Scalar::Int32(v) => Self::Integer(v),
            Scalar::Int64(v) => Self::Long(v),
            Scalar::Float32(v) => Self::Float(v),
            Scalar::Float64(v) => Self::Double(v),
            Scalar::Decimal128 {
                value,
                precision,
                scale,
            } => Self::Decimal {
                unscaled: value.to_string(),
                precision,
                scale,
            },
            Scalar::Utf8(v) => Self::String(v),
            Scalar::Binary(v) => Self::Binary(v),
            Scalar::Date32(v) => Self::Date(v),
            Scalar::Timestamp(v) => Self::Timestamp(v),
            Scalar::TimestampNtz(v) => Self::TimestampNtz(v),
        })
    }

    /// The value as a `dar-prune` literal (`None`: malformed decimal text).
    pub fn to_scalar(&self) -> Option<Scalar> {
        Some(match self {
            Self::Null => Scalar::Null,
            Self::Boolean(v) => Scalar::Boolean(*v),
            Self::Byte(v) => Scalar::Int8(*v),
            Self::Short(v) => Scalar::Int16(*v),
            Self::Integer(v) => Scalar::Int32(*v),
            Self::Long(v) => Scalar::Int64(*v),
            Self::Float(v) => Scalar::Float32(*v),
            Self::Double(v) => Scalar::Float64(*v),
            Self::Decimal {
                unscaled,
                precision,
                scale,
            } => Scalar::Decimal128 {
                value: unscaled.parse().ok()?,
                precision: *precision,
                scale: *scale,
            },
            Self::String(v) => Scalar::Utf8(v.clone()),
            Self::Binary(v) => Scalar::Binary(v.clone()),
            Self::Date(v) => Scalar::Date32(*v),
            Self::Timestamp(v) => Scalar::Timestamp(*v),
            Self::TimestampNtz(v) => Scalar::TimestampNtz(*v),
        })
    }
}

/// A deletion-vector descriptor, as in the log (protocol §9.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DvInfo {
    /// `u`, `p` or `i`.
    pub storage_type: String,
    /// The encoded path or inline bitmap.
    pub path_or_inline_dv: String,
    /// Byte offset of the record in the DV file.
    pub offset: Option<i32>,
    /// Size of the serialized bitmap.
    pub size_in_bytes: i32,
    /// Number of deleted rows.
    pub cardinality: i64,
}

/// One run of a row selection: `rows` rows selected or skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelectionRun {
    /// Skip (true) or select (false).
    pub skip: bool,
    /// Length of the run.
    pub rows: u64,
}

/// Which parts of a file to read, after row-group, page and DV pruning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileAccess {
    /// Row groups to read, ascending.
    pub row_groups: Vec<usize>,
    /// Rows of those row groups (concatenated, in order) to read; `None`
    /// reads them whole. Absolute row positions are respected: DV indexes
    /// count from the file's first row (protocol §9.6).
    pub selection: Option<Vec<SelectionRun>>,
}

impl FileAccess {
    pub(crate) fn from_selection(row_groups: Vec<usize>, selection: Option<RowSelection>) -> Self {
        let selection = selection.map(|s| {
            let selectors: Vec<RowSelector> = s.into();
            selectors
                .into_iter()
                .map(|r| SelectionRun {
                    skip: r.skip,
                    rows: r.row_count as u64,
                })
                .collect()
        });
        Self {
            row_groups,
            selection,
        }
    }

    pub(crate) fn row_selection(&self) -> Option<RowSelection> {
        self.selection.as_ref().map(|runs| {
            runs.iter()
                .map(|r| {
                    let n = usize::try_from(r.rows).unwrap_or(usize::MAX);
                    if r.skip {
                        RowSelector::skip(n)
                    } else {
                        RowSelector::select(n)
                    }
                })
                .collect::<Vec<_>>()
                .into()
        })
    }
}

/// One data file of a [`crate::ScanPlan`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScanTask {
    /// Object-store key of the data file.
    pub object_path: String,
    /// `None` when the file is on the table's own store (nearly always);
    /// else the origin (`scheme://authority`) of the store that holds it,
    /// which the table must have been given (see
    /// [`crate::TableOptions::with_store_for`]).
    #[serde(default)]
    pub store_origin: Option<String>,
    /// `add.path` as written in the log.
    pub log_path: String,
    /// File size in bytes (from the log).
    pub size: Option<u64>,
    /// `numRecords` from the stats (physical rows, DV rows included).
    pub num_records: Option<u64>,
    /// Partition values by logical column name, in partition-column order.
    pub partition_values: Vec<(String, PartitionValue)>,
    /// The file's deletion vector.
    pub deletion_vector: Option<DvInfo>,
    /// Row groups and rows to read, once resolved (see
    /// [`crate::ScanPlan::resolve`]); `None` prunes while executing.
    pub access: Option<FileAccess>,
}

impl ScanTask {
    /// Rows the file holds after its DV, when the log says (`num_records -
    /// cardinality`).
    pub fn live_rows(&self) -> Option<u64> {
        let deleted = self
            .deletion_vector
            .as_ref()
            .map_or(0, |d| u64::try_from(d.cardinality).unwrap_or(0));
        self.num_records.map(|n| n.saturating_sub(deleted))
    }

    /// The partition value of logical column `name`.
    pub fn partition_value(&self, name: &str) -> Option<&PartitionValue> {
        self.partition_values
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_round_trips_through_json() {
        let task = ScanTask {
            object_path: "t/part-0.parquet".into(),
            store_origin: None,
            log_path: "part-0.parquet".into(),
            size: Some(10),
            num_records: Some(5),
            partition_values: vec![
                (
                    "d".into(),
                    PartitionValue::Decimal {
                        unscaled: "-12345678901234567890123".into(),
                        precision: 38,
                        scale: 3,
                    },
                ),
                ("s".into(), PartitionValue::Null),
            ],
            deletion_vector: Some(DvInfo {
                storage_type: "i".into(),
                path_or_inline_dv: "abc".into(),
                offset: None,
                size_in_bytes: 4,
                cardinality: 2,
            }),
            access: Some(FileAccess {
                row_groups: vec![0, 2],
                selection: Some(vec![SelectionRun {
                    skip: true,
                    rows: 3,
                }]),
            }),
        };
        let json = serde_json::to_string(&task).unwrap();
        let back: ScanTask = serde_json::from_str(&json).unwrap();
        assert_eq!(back, task);
        assert_eq!(task.live_rows(), Some(3));
        assert!(matches!(
            back.partition_value("d")
                .and_then(PartitionValue::to_scalar),
            Some(Scalar::Decimal128 { scale: 3, .. })
        ));
    }
}
