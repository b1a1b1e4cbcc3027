//! Delta log actions as JSON values, for commits written by hand
//! ([`crate::HandTable::commit`]): the shapes tests of every crate need
//! for logs no writer produces, or produces only in part (a change data
//! feed's DV pairs, in-commit timestamps switched on and off).

use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use crate::error::{Result, TestkitError};

/// A `protocol` action of reader/writer version 1/2 (no features).
pub fn protocol() -> Value {
    json!({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}})
}

/// A `protocol` action with table features (reader version 3, writer 7),
/// each reader feature also a writer feature.
pub fn protocol_with(reader_features: &[&str]) -> Value {
    protocol_features(reader_features, reader_features)
}

/// A `protocol` action of reader version 3 and writer version 7 with
/// `reader` features and `writer` features (a writer-only feature such
/// as `inCommitTimestamp` in `writer` alone).
pub fn protocol_features(reader: &[&str], writer: &[&str]) -> Value {
    json!({"protocol": {
        "minReaderVersion": 3,
        "minWriterVersion": 7,
        "readerFeatures": reader,
        "writerFeatures": writer,
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

/// A Delta struct field (nullable).
pub fn field(name: &str, data_type: Value, metadata: Value) -> Value {
    json!({"name": name, "type": data_type, "nullable": true, "metadata": metadata})
}

/// A nullable field `name` of primitive type `to_type`, widened from
/// `from_type` (its `delta.typeChanges`, as Delta-Spark records type
/// widening).
pub fn widened_field(name: &str, from_type: &str, to_type: &str) -> Value {
    field(
        name,
        json!(to_type),
        json!({"delta.typeChanges": [{"fromType": from_type, "toType": to_type}]}),
    )
}

/// `fields` as the JSON array [`metadata`] takes.
pub fn fields(fields: impl IntoIterator<Item = Value>) -> Value {
    Value::Array(fields.into_iter().collect())
}

/// The fields of a table of one nullable `integer` column `id`.
pub fn id_field() -> Value {
    json!([field("id", json!("integer"), json!({}))])
}

/// The table configuration with the change data feed and type widening on.
pub fn cdf_and_widening_on() -> Value {
    json!({"delta.enableChangeDataFeed": "true", "delta.enableTypeWidening": "true"})
}

/// The table configuration with the change data feed on.
pub fn cdf_on() -> Value {
    json!({"delta.enableChangeDataFeed": "true"})
}

/// `configuration` with in-commit timestamps on from `version`, whose
/// in-commit timestamp is `timestamp_ms` (both recorded as the protocol
/// asks of a table that switches them on after its creation).
pub fn with_ict_from(mut configuration: Value, version: u64, timestamp_ms: i64) -> Value {
    configuration["delta.enableInCommitTimestamps"] = json!("true");
    configuration["delta.inCommitTimestampEnablementVersion"] = json!(version.to_string());
    configuration["delta.inCommitTimestampEnablementTimestamp"] = json!(timestamp_ms.to_string());
    configuration
}

/// A `commitInfo` action, with `inCommitTimestamp` when `ict` is given
/// (it must then be the commit's first action).
pub fn commit_info(timestamp_ms: i64, ict: Option<i64>) -> Value {
    let mut info = json!({"timestamp": timestamp_ms, "operation": "WRITE"});
    if let Some(t) = ict {
        info["inCommitTimestamp"] = json!(t);
    }
    json!({ "commitInfo": info })
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

/// An `add` of an unpartitioned file without statistics.
pub fn add_file(path: &str, size: u64) -> Value {
    add(path, size, json!({}), None)
}

/// An inline deletion-vector descriptor (`deletionVector` of an add or a
/// remove) deleting `rows`.
///
/// # Panics
///
/// If dar-dv cannot encode the rows (it always can).
pub fn inline_dv(rows: &[u64]) -> Value {
    #[allow(
        clippy::expect_used,
        reason = "a test helper; encoding rows cannot fail"
    )]
    let dv = dar_dv::DvDescriptor::inline(&dar_dv::DeletedRows::from_iter(rows.iter().copied()))
        .expect("an inline DV");
    json!({
        "storageType": "i",
        "pathOrInlineDv": dv.path_or_inline_dv(),
        "sizeInBytes": dv.size_in_bytes(),
        "cardinality": dv.cardinality(),
    })
}

/// An `add` of an unpartitioned file of 10 rows (`numRecords` 10), with an
/// inline DV deleting `dv` when given.
pub fn add_with_dv(path: &str, size: u64, dv: Option<&[u64]>) -> Value {
    let mut add = add(path, size, json!({}), Some(json!({"numRecords": 10})));
    if let Some(rows) = dv {
        add["add"]["deletionVector"] = inline_dv(rows);
    }
    add
}

/// A `remove` of an unpartitioned file with `dataChange`, with the inline
/// DV deleting `dv` it had when given.
pub fn remove(path: &str, size: u64, dv: Option<&[u64]>) -> Value {
    let mut r = json!({"remove": {"path": path, "dataChange": true, "size": size,
        "partitionValues": {}, "deletionTimestamp": 0}});
    if let Some(rows) = dv {
        r["remove"]["deletionVector"] = inline_dv(rows);
    }
    r
}

/// Sets the modification time of the file at `path` to `ms` since the
/// epoch (a commit's file time).
pub fn set_file_time(path: &Path, ms: i64) -> Result<()> {
    let io = |e: std::io::Error| TestkitError::Io {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    let at = SystemTime::UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(at))
        .map_err(io)
}
