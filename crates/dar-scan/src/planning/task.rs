//! [`ScanTask`]: one data file to read, as plain serde-serializable data.
//!
//! A task says everything about the file that the log knows (object path,
//! size, typed partition values, row count, DV descriptor) and, once
//! resolved, which row groups and rows to read ([`FileAccess`]). What all
//! files share (schema, column mapping, projection, predicate) is said once,
//! in the scan's [`crate::ScanSpec`]. Another thread, engine or machine can
//! execute any subset of a plan's tasks with a [`crate::ScanContext`] built
//! from that spec and its own store; [`ScanTask::to_bytes`] carries one
//! there with the format number that [`crate::ScanSpec`] uses.

use dar_dv::DvDescriptor;
use dar_prune::Scalar;
use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use serde::{Deserialize, Serialize};

use crate::errors::error::{Result, ScanError};
use crate::planning::spec::{ScanSpec, producer};

/// One run of a row selection: `rows` rows selected or skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SelectionRun {
    /// Skip (true) or select (false).
    pub skip: bool,
    /// Length of the run.
    pub rows: u64,
}

/// Which parts of a file to read, after row-group, page and DV pruning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
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
#[non_exhaustive]
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
    /// `add.modificationTime` from the log (ms since the epoch): with the
    /// store, path and size, what names this version of the file in
    /// every cache.
    #[serde(default)]
    pub modification_time: Option<i64>,
    /// `numRecords` from the stats (physical rows, DV rows included).
    pub num_records: Option<u64>,
    /// Typed partition values by logical column name, in partition-column
    /// order.
    pub partition_values: Vec<(String, Scalar)>,
    /// The file's deletion vector.
    pub deletion_vector: Option<DvDescriptor>,
    /// For a change data feed over a replaced deletion vector: the other
    /// side's DV. Only the rows it deletes and [`ScanTask::deletion_vector`]
    /// does not are read (the rows a new DV newly deletes, or an old DV's
    /// rows that are restored); `None` reads every row the file's DV keeps.
    #[serde(default)]
    pub paired_dv: Option<DvDescriptor>,
    /// Row groups and rows to read, once resolved (see
    /// [`crate::ScanPlan::resolve`]); `None` prunes while executing.
    pub access: Option<FileAccess>,
}

/// A task as bytes: the format header of [`ScanSpec`], then the task.
#[derive(Serialize, Deserialize)]
struct Encoded<T> {
    format: u32,
    producer: String,
    task: T,
}

impl ScanTask {
    /// Rows the file holds after its DV, when the log says (`num_records -
    /// cardinality`). `None` when the log does not know, and when it
    /// contradicts itself (a DV deleting more rows than the file has): the
    /// file must then be read, which tells what is wrong.
    pub fn live_rows(&self) -> Option<u64> {
        if self.paired_dv.is_some() {
            // Two DVs decide the rows: known only once both are read.
            return None;
        }
        let deleted = self
            .deletion_vector
            .as_ref()
            .map_or(0, DvDescriptor::cardinality);
        self.num_records.and_then(|n| n.checked_sub(deleted))
    }

    /// The partition value of logical column `name`.
    pub fn partition_value(&self, name: &str) -> Option<&Scalar> {
        self.partition_values
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    /// The task as bytes (JSON), with the format number of
    /// [`ScanSpec::FORMAT`] and this build's version.
    ///
    /// # Errors
    ///
    /// [`ScanError::Spec`] if serialization fails.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let encoded = Encoded {
            format: ScanSpec::FORMAT,
            producer: producer(),
            task: self,
        };
        serde_json::to_vec(&encoded).map_err(|e| ScanError::Spec {
            reason: e.to_string(),
        })
    }

    /// A task from [`ScanTask::to_bytes`].
    ///
    /// # Errors
    ///
    /// [`ScanError::SpecFormat`] for bytes of another format (another dar
    /// version), [`ScanError::Spec`] for bytes that do not parse.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        ScanSpec::check_format(bytes)?;
        let encoded: Encoded<Self> =
            serde_json::from_slice(bytes).map_err(|e| ScanError::Spec {
                reason: e.to_string(),
            })?;
        Ok(encoded.task)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn task() -> ScanTask {
        ScanTask {
            object_path: "t/part-0.parquet".into(),
            store_origin: None,
            log_path: "part-0.parquet".into(),
            size: Some(10),
            modification_time: Some(1),
            num_records: Some(5),
            partition_values: vec![
                (
                    "d".into(),
                    Scalar::Decimal128 {
                        value: -12_345_678_901_234_567_890_123,
                        precision: 38,
                        scale: 3,
                    },
                ),
                ("f".into(), Scalar::Float64(f64::NAN)),
                ("s".into(), Scalar::Null),
            ],
            deletion_vector: Some(DvDescriptor::try_new("i", "abc", None, 4, 2).unwrap()),
            paired_dv: None,
            access: Some(FileAccess {
                row_groups: vec![0, 2],
                selection: Some(vec![SelectionRun {
                    skip: true,
                    rows: 3,
                }]),
            }),
        }
    }

    #[test]
    fn task_round_trips_through_bytes() {
        let task = task();
        let back = ScanTask::from_bytes(&task.to_bytes().unwrap()).unwrap();
        // NaN is not equal to itself: compare the rest, then the NaN.
        assert_eq!(back.partition_values[0], task.partition_values[0]);
        assert!(matches!(back.partition_values[1].1, Scalar::Float64(v) if v.is_nan()));
        assert_eq!(back.deletion_vector, task.deletion_vector);
        assert_eq!(back.access, task.access);
        assert_eq!(task.live_rows(), Some(3));
        assert!(matches!(
            back.partition_value("d"),
            Some(Scalar::Decimal128 { scale: 3, .. })
        ));
    }

    #[test]
    fn task_bytes_of_another_format_are_refused_by_number() {
        let mut json: serde_json::Value =
            serde_json::from_slice(&task().to_bytes().unwrap()).unwrap();
        json["format"] = serde_json::json!(ScanSpec::FORMAT + 1);
        let err = ScanTask::from_bytes(json.to_string().as_bytes()).unwrap_err();
        assert!(matches!(err, ScanError::SpecFormat { .. }), "{err}");
        let err = ScanTask::from_bytes(b"{\"format\": 2, \"task\": 5}").unwrap_err();
        assert!(
            matches!(err, ScanError::Spec { .. } | ScanError::SpecFormat { .. }),
            "{err}"
        );
    }
}
