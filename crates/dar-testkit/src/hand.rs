//! [`HandTable`]: a Delta table written by hand in a local directory —
//! Parquet files and commit lines exactly as a test gives them — for logs
//! that no writer produces (contradictory statistics, widened types with
//! old stats, odd partition values, hostile numbers) and that a reader
//! must still answer exactly or refuse clearly.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use serde_json::{Value, json};

use crate::error::{Result, TestkitError};

/// A table directory and the next commit version.
#[derive(Debug)]
pub struct HandTable {
    dir: PathBuf,
    next: u64,
}

fn io(path: &Path, e: impl std::fmt::Display) -> TestkitError {
    TestkitError::Io {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

impl HandTable {
    /// An empty table at `dir` (its `_delta_log/` is created).
    pub fn new(dir: impl Into<PathBuf>) -> Result<Self> {
        let dir = dir.into();
        let log = dir.join("_delta_log");
        std::fs::create_dir_all(&log).map_err(|e| io(&log, e))?;
        Ok(Self { dir, next: 0 })
    }

    /// The table directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The table directory as a URI-ish string for `Table::open`.
    pub fn uri(&self) -> String {
        self.dir.display().to_string()
    }

    /// Writes `batch` as the Parquet file `name` (relative to the table
    /// root, directories created); returns its size in bytes.
    pub fn write_parquet(&self, name: &str, batch: &RecordBatch) -> Result<u64> {
        self.write_parquet_with(name, batch, WriterProperties::builder().build())
    }

    /// [`HandTable::write_parquet`] with writer properties of the test's
    /// choosing.
    pub fn write_parquet_with(
        &self,
        name: &str,
        batch: &RecordBatch,
        props: WriterProperties,
    ) -> Result<u64> {
        let path = self.dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        let file = File::create(&path).map_err(|e| io(&path, e))?;
        let mut w =
            ArrowWriter::try_new(file, batch.schema(), Some(props)).map_err(|e| io(&path, e))?;
        w.write(batch).map_err(|e| io(&path, e))?;
        w.close().map_err(|e| io(&path, e))?;
        let size = std::fs::metadata(&path).map_err(|e| io(&path, e))?.len();
        Ok(size)
    }

    /// Commits `actions` (one JSON object per line) as the next version;
    /// returns that version.
    pub fn commit(&mut self, actions: &[Value]) -> Result<u64> {
        let version = self.next;
        let path = self
            .dir
            .join("_delta_log")
            .join(format!("{version:020}.json"));
        let text: String = actions.iter().map(|a| format!("{a}\n")).collect();
        std::fs::write(&path, text).map_err(|e| io(&path, e))?;
        self.next += 1;
        Ok(version)
    }

    /// A `protocol` action of reader/writer version 1/2 (no features).
    pub fn protocol() -> Value {
        json!({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}})
    }

    /// A `protocol` action with table features (reader version 3, writer 7).
    pub fn protocol_with(reader_features: &[&str]) -> Value {
        json!({"protocol": {
            "minReaderVersion": 3,
            "minWriterVersion": 7,
            "readerFeatures": reader_features,
            "writerFeatures": reader_features,
        }})
    }

    /// A `metaData` action with `fields` (Delta struct fields as JSON),
    /// `partition_columns` and `configuration`.
    pub fn metadata(fields: Value, partition_columns: &[&str], configuration: Value) -> Value {
        let schema = json!({"type": "struct", "fields": fields});
        json!({"metaData": {
            "id": "hand-written",
            "format": {"provider": "parquet", "options": {}},
            "schemaString": schema.to_string(),
            "partitionColumns": partition_columns,
            "configuration": configuration,
            "createdTime": 0,
        }})
    }

    /// A Delta struct field.
    pub fn field(name: &str, data_type: Value, metadata: Value) -> Value {
        json!({"name": name, "type": data_type, "nullable": true, "metadata": metadata})
    }

    /// An `add` action for `path` of `size` bytes, with `partition_values`
    /// (a JSON object of strings or nulls) and `stats` (the stats object,
    /// serialized into the action's `stats` string; `None` for no stats).
    pub fn add(path: &str, size: u64, partition_values: Value, stats: Option<Value>) -> Value {
        let mut add = json!({
            "path": path,
            "partitionValues": partition_values,
            "size": size,
            "modificationTime": 0,
            "dataChange": true,
        });
        if let Some(s) = stats {
            add["stats"] = Value::String(s.to_string());
        }
        json!({ "add": add })
    }
}
