//! [`write_log_checkpoint`]: a classic checkpoint (§3) for a table that
//! someone else wrote, from its JSON commits, with `add.stats_parsed`
//! typed by the table's latest schema, as Delta-Spark writes one when
//! `delta.checkpoint.writeStatsAsStruct` is on: each file's stats JSON
//! decoded into that struct. After a type widening the old files' bounds
//! are thereby stored at the new type (a float's text `3.4` as the double
//! 3.4), which is what a reader must cope with.
//!
//! The actions are decoded into the checkpoint's Arrow schema by
//! arrow-json, so the checkpoint holds exactly what the commits say:
//!
//! ```text
//! protocol  struct<minReaderVersion, minWriterVersion, readerFeatures, writerFeatures>
//! metaData  struct<id, format<provider, options>, schemaString, partitionColumns,
//!                  configuration, createdTime>
//! add       struct<path, partitionValues, size, modificationTime, dataChange,
//!                  stats, stats_parsed<numRecords, minValues, maxValues,
//!                  nullCount, tightBounds>, deletionVector<...>>
//! ```

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit};
use serde_json::{Value, json};

use crate::error::{Result, TestkitError};
use crate::naming::pad20;
use crate::parquet::{Codec, ParquetOptions, write_file};

/// Writes `pad20(v).checkpoint.parquet` and `_last_checkpoint` for the
/// latest version `v` of the table at `dir` (a local directory whose log
/// holds JSON commits from version 0), with `add.stats` and
/// `add.stats_parsed`. Returns `v`.
pub fn write_log_checkpoint(dir: &Path) -> Result<u64> {
    let log = dir.join("_delta_log");
    let io = |path: &Path, e: std::io::Error| TestkitError::Io {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    let mut commits: Vec<(u64, std::path::PathBuf)> = std::fs::read_dir(&log)
        .map_err(|e| io(&log, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?;
            let version = name.strip_suffix(".json")?.parse().ok()?;
            Some((version, p))
        })
        .collect();
    commits.sort();
    let mut state = State::default();
    for (_, path) in &commits {
        let text = std::fs::read_to_string(path).map_err(|e| io(path, e))?;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let action: Value = serde_json::from_str(line).map_err(|e| malformed(path, e))?;
            state.apply(action);
        }
    }
    let version = commits
        .last()
        .map(|(v, _)| *v)
        .ok_or_else(|| TestkitError::Io {
            path: log.display().to_string(),
            reason: "no commits".into(),
        })?;
    let (bytes, rows) = state.encode(version)?;
    let name = format!("{}.checkpoint.parquet", pad20(version));
    let path = log.join(&name);
    std::fs::write(&path, &bytes).map_err(|e| io(&path, e))?;
    let hint = json!({"version": version, "size": rows, "sizeInBytes": bytes.len()});
    let path = log.join("_last_checkpoint");
    std::fs::write(&path, hint.to_string()).map_err(|e| io(&path, e))?;
    Ok(version)
}

fn malformed(path: &Path, e: impl std::fmt::Display) -> TestkitError {
    TestkitError::Io {
        path: path.display().to_string(),
        reason: format!("not a Delta commit: {e}"),
    }
}

/// The reconciled state of the log: the latest protocol and metaData, the
/// live adds by path.
#[derive(Default)]
struct State {
    protocol: Option<Value>,
    metadata: Option<Value>,
    adds: BTreeMap<String, Value>,
}

impl State {
    fn apply(&mut self, action: Value) {
        if let Some(p) = action.get("protocol") {
            self.protocol = Some(p.clone());
        } else if let Some(m) = action.get("metaData") {
            self.metadata = Some(m.clone());
        } else if let Some(add) = action.get("add") {
            if let Some(path) = add.get("path").and_then(Value::as_str) {
                self.adds.insert(path.to_owned(), add.clone());
            }
        } else if let Some(path) = action
            .get("remove")
            .and_then(|r| r.get("path"))
            .and_then(Value::as_str)
        {
            self.adds.remove(path);
        }
    }

    /// The checkpoint's bytes and row count.
    fn encode(&self, version: u64) -> Result<(Vec<u8>, usize)> {
        let broken = |what: &str| TestkitError::SchemaMismatch {
            reason: format!("log checkpoint: {what}"),
        };
        let metadata = self
            .metadata
            .as_ref()
            .ok_or_else(|| broken("no metaData"))?;
        let schema: Value = metadata
            .get("schemaString")
            .and_then(Value::as_str)
            .and_then(|s| serde_json::from_str(s).ok())
            .ok_or_else(|| broken("no schemaString"))?;
        let partitions: Vec<&str> = metadata
            .get("partitionColumns")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let stats_fields = stats_parsed_fields(&schema, &partitions);
        let arrow_schema = Arc::new(checkpoint_schema(stats_fields));
        let mut lines = Vec::new();
        for (key, value) in [("protocol", &self.protocol), ("metaData", &self.metadata)] {
            if let Some(v) = value {
                lines.push(json!({ key: v }).to_string());
            }
        }
        for add in self.adds.values() {
            // The stats text goes in as written (a JSON value here would
            // round decimals through f64): `{"add":{...,"stats_parsed":<text>}}`.
            let text = add.to_string();
            let stats = add
                .get("stats")
                .and_then(Value::as_str)
                .filter(|s| serde_json::from_str::<Value>(s).is_ok_and(|v| v.is_object()));
            let line = match (stats, text.strip_suffix('}')) {
                (Some(stats), Some(open)) => {
                    format!("{{\"add\":{open},\"stats_parsed\":{stats}}}}}")
                }
                _ => format!("{{\"add\":{text}}}"),
            };
            lines.push(line);
        }
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let mut decoder = arrow_json::ReaderBuilder::new(Arc::clone(&arrow_schema))
            .with_batch_size(lines.len().max(1))
            .build_decoder()
            .map_err(TestkitError::arrow("log checkpoint decoder"))?;
        decoder
            .decode(text.as_bytes())
            .map_err(TestkitError::arrow("log checkpoint decode"))?;
        let batch = decoder
            .flush()
            .map_err(TestkitError::arrow("log checkpoint decode"))?
            .ok_or_else(|| broken("no actions"))?;
        let rows = batch.num_rows();
        let name = format!("{}.checkpoint.parquet", pad20(version));
        let bytes = write_file(
            &[batch],
            &ParquetOptions::default().with_codec(Codec::Snappy),
            &name,
        )?;
        Ok((bytes, rows))
    }
}

fn strings() -> DataType {
    DataType::List(Arc::new(Field::new("element", DataType::Utf8, true)))
}

fn string_map() -> DataType {
    let entries = Field::new(
        "key_value",
        DataType::Struct(Fields::from(vec![
            Field::new("key", DataType::Utf8, false),
            Field::new("value", DataType::Utf8, true),
        ])),
        false,
    );
    DataType::Map(Arc::new(entries), false)
}

fn nullable_struct(name: &str, fields: Vec<Field>) -> Field {
    Field::new(name, DataType::Struct(Fields::from(fields)), true)
}

/// The checkpoint's columns, `add.stats_parsed` with `stats_fields`.
fn checkpoint_schema(stats_fields: Fields) -> Schema {
    let text = |name: &str| Field::new(name, DataType::Utf8, true);
    let long = |name: &str| Field::new(name, DataType::Int64, true);
    let int = |name: &str| Field::new(name, DataType::Int32, true);
    Schema::new(vec![
        nullable_struct(
            "protocol",
            vec![
                int("minReaderVersion"),
                int("minWriterVersion"),
                Field::new("readerFeatures", strings(), true),
                Field::new("writerFeatures", strings(), true),
            ],
        ),
        nullable_struct(
            "metaData",
            vec![
                text("id"),
                text("name"),
                text("description"),
                nullable_struct(
                    "format",
                    vec![text("provider"), Field::new("options", string_map(), true)],
                ),
                text("schemaString"),
                Field::new("partitionColumns", strings(), true),
                Field::new("configuration", string_map(), true),
                long("createdTime"),
            ],
        ),
        nullable_struct(
            "add",
            vec![
                text("path"),
                Field::new("partitionValues", string_map(), true),
                long("size"),
                long("modificationTime"),
                Field::new("dataChange", DataType::Boolean, true),
                text("stats"),
                Field::new("stats_parsed", DataType::Struct(stats_fields), true),
                nullable_struct(
                    "deletionVector",
                    vec![
                        text("storageType"),
                        text("pathOrInlineDv"),
                        int("offset"),
                        int("sizeInBytes"),
                        long("cardinality"),
                    ],
                ),
            ],
        ),
    ])
}

/// `numRecords`, `minValues`, `maxValues`, `nullCount`, `tightBounds` for
/// the data columns of the Delta `schema` (partition columns left out), by
/// physical name.
fn stats_parsed_fields(schema: &Value, partitions: &[&str]) -> Fields {
    let data: Vec<&Value> = fields(schema)
        .into_iter()
        .filter(|f| {
            let name = f.get("name").and_then(Value::as_str).unwrap_or_default();
            !partitions.contains(&name)
        })
        .collect();
    let mut out = vec![Field::new("numRecords", DataType::Int64, true)];
    if let Some(bounds) = section(&data, true) {
        out.push(nullable_struct("minValues", bounds.clone()));
        out.push(nullable_struct("maxValues", bounds));
    }
    if let Some(counts) = section(&data, false) {
        out.push(nullable_struct("nullCount", counts));
    }
    out.push(Field::new("tightBounds", DataType::Boolean, true));
    Fields::from(out)
}

fn fields(struct_type: &Value) -> Vec<&Value> {
    struct_type
        .get("fields")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

/// The bounds (`bounds`) or null-count section of `fields`; `None` when no
/// leaf has such a statistic.
fn section(fields_of: &[&Value], bounds: bool) -> Option<Vec<Field>> {
    let out: Vec<Field> = fields_of
        .iter()
        .filter_map(|f| {
            let name = f
                .pointer("/metadata/delta.columnMapping.physicalName")
                .or_else(|| f.get("name"))
                .and_then(Value::as_str)?;
            let t = f.get("type")?;
            if t.get("type").and_then(Value::as_str) == Some("struct") {
                let children = fields(t);
                return section(&children, bounds).map(|c| nullable_struct(name, c));
            }
            let leaf = match (t.as_str(), bounds) {
                (Some(_), false) => DataType::Int64,
                (Some(p), true) => bound_type(p)?,
                (None, _) => return None,
            };
            Some(Field::new(name, leaf, true))
        })
        .collect();
    (!out.is_empty()).then_some(out)
}

/// The Arrow type of a Delta primitive's min/max; `None` for types
/// without them.
fn bound_type(delta: &str) -> Option<DataType> {
    Some(match delta {
        "byte" => DataType::Int8,
        "short" => DataType::Int16,
        "integer" => DataType::Int32,
        "long" => DataType::Int64,
        "float" => DataType::Float32,
        "double" => DataType::Float64,
        "string" => DataType::Utf8,
        "date" => DataType::Date32,
        "timestamp" => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        "timestamp_ntz" => DataType::Timestamp(TimeUnit::Microsecond, None),
        d => {
            let inner = d.strip_prefix("decimal(")?.strip_suffix(')')?;
            let (p, s) = inner.split_once(',')?;
            DataType::Decimal128(p.trim().parse().ok()?, s.trim().parse().ok()?)
        }
    })
}
