//! Stage 0: a task as a file to open: its partition values typed once as
//! one-row arrays of their columns' types, and what the log alone decides
//! before any I/O (a count from `numRecords`, partition-only conjuncts).

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch};

use crate::errors::error::{Result, ScanError};
use crate::execution::state::{ScanMode, ScanState};
use crate::planning::task::ScanTask;
use crate::schema::partitions::value_array;

/// A task about to be opened.
#[derive(Debug, Clone)]
pub(crate) struct FileToOpen {
    pub task: Arc<ScanTask>,
    /// One one-row array per partition column (the order of
    /// `state.partitions`).
    pub partition_row: Vec<ArrayRef>,
    /// The task's values of task columns (`ScanSpec::task_columns`), as
    /// one-row arrays by top-level field, for files that lack them.
    pub task_row: Vec<(usize, ArrayRef)>,
}

/// What the log decides about a file before it is opened.
#[derive(Debug)]
pub(crate) enum Decision {
    /// Only a row count is wanted and the log knows it.
    Count(u64),
    /// The partition-only conjuncts are false for the file's values.
    Skip,
    /// The file must be read.
    Open(FileToOpen),
}

impl FileToOpen {
    /// Types `task`'s partition values for `state`'s partition columns.
    pub(crate) fn new(task: ScanTask, state: &ScanState) -> Result<Self> {
        let path = task.object_path.as_str();
        let partition_row = state
            .partitions
            .schema
            .fields()
            .iter()
            .map(|f| {
                let value =
                    task.partition_value(f.name())
                        .ok_or_else(|| ScanError::InvalidTask {
                            path: path.to_string(),
                            reason: format!("no value for partition column '{}'", f.name()),
                        })?;
                value_array(path, f.name(), value, f.data_type())
            })
            .collect::<Result<Vec<_>>>()?;
        let task_row = state
            .is_task_column
            .iter()
            .enumerate()
            .filter(|(_, t)| **t)
            .filter_map(|(i, _)| {
                let f = &state.fields[i];
                task.partition_value(f.name())
                    .map(|v| value_array(path, f.name(), v, f.data_type()).map(|a| (i, a)))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            task: Arc::new(task),
            partition_row,
            task_row,
        })
    }

    /// What the log and the partition values decide. Rows are read from
    /// the data, never ruled out by the log's counts (`numRecords`, DV
    /// cardinality): a file in the log is read unless a predicate proves
    /// it holds no match; only counts come from the log.
    pub(crate) fn decide(self, state: &ScanState) -> Result<Decision> {
        let task = &self.task;
        match (state.mode, task.live_rows()) {
            (ScanMode::Count, Some(rows)) if task.access.is_none() => {
                return Ok(Decision::Count(rows));
            }
            (ScanMode::CountByPartition, Some(rows)) => {
                let passes = self.partitions_pass(state)?;
                return Ok(Decision::Count(if passes { rows } else { 0 }));
            }
            _ => {}
        }
        let partition_only = state
            .predicate
            .as_ref()
            .is_some_and(|p| p.rest.is_some() && p.rest_on_partitions_only);
        if partition_only && !self.partitions_pass(state)? {
            return Ok(Decision::Skip);
        }
        Ok(Decision::Open(self))
    }

    /// Whether the partition-only conjuncts are true for this file.
    fn partitions_pass(&self, state: &ScanState) -> Result<bool> {
        let Some(rest) = state.predicate.as_ref().and_then(|p| p.rest.as_ref()) else {
            return Ok(true);
        };
        let path = self.task.object_path.as_str();
        let row = RecordBatch::try_new(
            Arc::clone(&state.partitions.schema),
            self.partition_row.clone(),
        )
        .map_err(|e| ScanError::arrow("building a partition-value row", path, e))?;
        let mask = rest.evaluate(&row).map_err(|source| ScanError::Evaluate {
            path: path.to_string(),
            source: Box::new(source),
        })?;
        Ok(!mask.is_empty() && mask.is_valid(0) && mask.value(0))
    }
}
