//! [`HandTable`]: a Delta table written by hand in a local directory —
//! Parquet files and commit lines exactly as a test gives them — for logs
//! that no writer produces (contradictory statistics, widened types with
//! old stats, odd partition values, hostile numbers) and that a reader
//! must still answer exactly or refuse clearly. The actions themselves
//! come from [`crate::log_json`].

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use serde_json::Value;

use crate::error::{Result, TestkitError};
use crate::log_json;

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
        log_json::protocol()
    }

    /// A `protocol` action with table features (reader version 3, writer 7).
    pub fn protocol_with(reader_features: &[&str]) -> Value {
        log_json::protocol_with(reader_features)
    }

    /// A `metaData` action (see [`log_json::metadata`]).
    pub fn metadata(fields: Value, partition_columns: &[&str], configuration: Value) -> Value {
        log_json::metadata(fields, partition_columns, configuration)
    }

    /// A Delta struct field (see [`log_json::field`]).
    pub fn field(name: &str, data_type: Value, metadata: Value) -> Value {
        log_json::field(name, data_type, metadata)
    }

    /// An `add` action (see [`log_json::add`]).
    pub fn add(path: &str, size: u64, partition_values: Value, stats: Option<Value>) -> Value {
        log_json::add(path, size, partition_values, stats)
    }
}

/// A Parquet file (no rows) whose schema is a chain of `groups` nested
/// groups ending in one INT32 leaf, its footer written byte by byte in
/// Thrift's compact protocol: the hostile footer that overflowed readers'
/// stacks at a few thousand levels. Logically it is the column
/// `g: struct<g: struct<... x: int>>`.
pub fn deeply_nested_parquet(groups: usize) -> Vec<u8> {
    fn varint(out: &mut Vec<u8>, mut n: u64) {
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }
    fn zigzag(n: i64) -> u64 {
        ((n << 1) ^ (n >> 63)) as u64
    }
    let mut f = vec![0x15]; // field 1 (version), i32
    varint(&mut f, zigzag(1));
    let elements = groups + 1; // the root, groups - 1 groups, the leaf
    f.push(0x19); // field 2 (schema), list
    if elements < 15 {
        f.push(((elements as u8) << 4) | 12);
    } else {
        f.push(0xF0 | 12);
        varint(&mut f, elements as u64);
    }
    for i in 0..elements {
        if i + 1 == elements {
            f.extend([0x15, 0x02]); // 1: type INT32
            f.extend([0x25, 0x02]); // 3: repetition OPTIONAL
            f.extend([0x18, 0x01, b'x']); // 4: name
        } else {
            if i > 0 {
                f.extend([0x35, 0x02]); // 3: repetition OPTIONAL
                f.extend([0x18, 0x01, b'g']); // 4: name
            } else {
                f.extend([0x48, 0x06]); // 4: name (root)
                f.extend(b"schema");
            }
            f.push(0x15); // 5: num_children
            varint(&mut f, zigzag(1));
        }
        f.push(0); // end of SchemaElement
    }
    f.push(0x16); // field 3 (num_rows), i64
    varint(&mut f, zigzag(0));
    f.push(0x19); // field 4 (row_groups), empty list
    f.push(12);
    f.push(0); // end of FileMetaData
    let mut file = b"PAR1".to_vec();
    file.extend(&f);
    file.extend((f.len() as u32).to_le_bytes());
    file.extend(b"PAR1");
    file
}
