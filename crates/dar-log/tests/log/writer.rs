//! A small Delta log writer for tests: commits as JSON lines and classic
//! (or multi-part) checkpoints as Parquet, in an in-memory object store.
//! Checkpoint rows are given as the same JSON actions as commits and decoded
//! into the checkpoint's Arrow schema with arrow-json, then written with
//! parquet's `ArrowWriter`.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, Schema};
use bytes::Bytes;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use serde_json::{Value, json};

/// A table root in an in-memory store.
pub struct TestLog {
    pub store: Arc<dyn ObjectStore>,
    pub root: Path,
}

fn map_type() -> DataType {
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

fn list_type() -> DataType {
    DataType::List(Arc::new(Field::new("element", DataType::Utf8, true)))
}

fn st(fields: Vec<Field>) -> DataType {
    DataType::Struct(Fields::from(fields))
}

/// The checkpoint schema this writer emits (a V1 checkpoint).
pub fn checkpoint_schema() -> Schema {
    let u = |n: &str| Field::new(n, DataType::Utf8, true);
    let i64f = |n: &str| Field::new(n, DataType::Int64, true);
    let dv = st(vec![
        u("storageType"),
        u("pathOrInlineDv"),
        Field::new("offset", DataType::Int32, true),
        Field::new("sizeInBytes", DataType::Int32, true),
        i64f("cardinality"),
    ]);
    Schema::new(vec![
        Field::new(
            "protocol",
            st(vec![
                Field::new("minReaderVersion", DataType::Int32, true),
                Field::new("minWriterVersion", DataType::Int32, true),
                Field::new("readerFeatures", list_type(), true),
                Field::new("writerFeatures", list_type(), true),
            ]),
            true,
        ),
        Field::new(
            "metaData",
            st(vec![
                u("id"),
                Field::new(
                    "format",
                    st(vec![u("provider"), Field::new("options", map_type(), true)]),
                    true,
                ),
                u("schemaString"),
                Field::new("partitionColumns", list_type(), true),
                i64f("createdTime"),
                Field::new("configuration", map_type(), true),
            ]),
            true,
        ),
        Field::new(
            "txn",
            st(vec![u("appId"), i64f("version"), i64f("lastUpdated")]),
            true,
        ),
        Field::new(
            "add",
            st(vec![
                u("path"),
                Field::new("partitionValues", map_type(), true),
                i64f("size"),
                i64f("modificationTime"),
                Field::new("dataChange", DataType::Boolean, true),
                u("stats"),
                Field::new("deletionVector", dv.clone(), true),
            ]),
            true,
        ),
        Field::new(
            "remove",
            st(vec![
                u("path"),
                i64f("deletionTimestamp"),
                Field::new("dataChange", DataType::Boolean, true),
                Field::new("deletionVector", dv, true),
            ]),
            true,
        ),
    ])
}

/// The schema of a V2 checkpoint's top-level file: the V1 columns plus
/// `checkpointMetadata` and `sidecar`.
pub fn v2_checkpoint_schema() -> Schema {
    let mut fields: Vec<Field> = checkpoint_schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    fields.push(Field::new(
        "checkpointMetadata",
        st(vec![Field::new("version", DataType::Int64, true)]),
        true,
    ));
    fields.push(Field::new(
        "sidecar",
        st(vec![
            Field::new("path", DataType::Utf8, true),
            Field::new("sizeInBytes", DataType::Int64, true),
            Field::new("modificationTime", DataType::Int64, true),
        ]),
        true,
    ));
    Schema::new(fields)
}

/// Encode actions as a checkpoint Parquet file.
pub fn checkpoint_bytes(actions: &[Value]) -> Vec<u8> {
    checkpoint_bytes_in(checkpoint_schema(), actions)
}

/// Encode actions as Parquet with `schema`.
pub fn checkpoint_bytes_in(schema: Schema, actions: &[Value]) -> Vec<u8> {
    let schema = Arc::new(schema);
    let lines: String = actions.iter().map(|a| format!("{a}\n")).collect();
    let mut decoder = arrow_json::ReaderBuilder::new(Arc::clone(&schema))
        .build_decoder()
        .unwrap();
    let mut out = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut out, Arc::clone(&schema), None).unwrap();
    let mut rest = lines.as_bytes();
    let mut wrote = false;
    loop {
        let used = decoder.decode(rest).unwrap();
        rest = &rest[used..];
        match decoder.flush().unwrap() {
            Some(batch) => {
                w.write(&batch).unwrap();
                wrote = true;
            }
            None if rest.is_empty() => break,
            None => {}
        }
    }
    if !wrote {
        w.write(&arrow_array::RecordBatch::new_empty(schema))
            .unwrap();
    }
    w.close().unwrap();
    out
}

impl TestLog {
    /// An empty in-memory table root `t`.
    pub fn new() -> Self {
        Self {
            store: Arc::new(InMemory::new()),
            root: Path::from("t"),
        }
    }

    /// Write `bytes` at `t/<rel>`.
    pub async fn put(&self, rel: &str, bytes: impl Into<Bytes>) {
        let path = Path::from(format!("t/{rel}"));
        self.store
            .put(&path, PutPayload::from(bytes.into()))
            .await
            .unwrap();
    }

    /// Write commit `version`.
    pub async fn commit(&self, version: u64, actions: &[Value]) {
        let text: String = actions.iter().map(|a| format!("{a}\n")).collect();
        self.put(&format!("_delta_log/{version:020}.json"), text)
            .await;
    }

    /// Write a classic checkpoint at `version`.
    pub async fn checkpoint(&self, version: u64, actions: &[Value]) {
        self.put(
            &format!("_delta_log/{version:020}.checkpoint.parquet"),
            checkpoint_bytes(actions),
        )
        .await;
    }

    /// A snapshot builder over this log.
    pub fn builder(&self) -> dar_log::SnapshotBuilder {
        dar_log::Snapshot::builder(Arc::clone(&self.store), self.root.clone())
    }
}

/// `protocol` (1, 2).
pub fn protocol() -> Value {
    json!({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}})
}

/// `metaData` with `value: long` and an optional string partition column `p`.
pub fn metadata(partitioned: bool) -> Value {
    let mut fields =
        vec![json!({"name": "value", "type": "long", "nullable": true, "metadata": {}})];
    if partitioned {
        fields.push(json!({"name": "p", "type": "integer", "nullable": true, "metadata": {}}));
    }
    let schema = json!({"type": "struct", "fields": fields}).to_string();
    let parts: Vec<&str> = if partitioned { vec!["p"] } else { vec![] };
    json!({"metaData": {
        "id": "00000000-0000-0000-0000-000000000000",
        "format": {"provider": "parquet", "options": {}},
        "schemaString": schema,
        "partitionColumns": parts,
        "createdTime": 0,
        "configuration": {}
    }})
}

/// A DV descriptor `u<id>@1`.
pub fn dv(id: u32) -> Value {
    json!({"storageType": "u", "pathOrInlineDv": format!("dv{id:016}"), "offset": 1, "sizeInBytes": 10, "cardinality": 1})
}

/// `add` of `path` with an optional DV.
pub fn add(path: &str, dv: Option<Value>) -> Value {
    let mut a = json!({"add": {
        "path": path, "partitionValues": {}, "size": 100, "modificationTime": 0,
        "dataChange": true, "stats": "{\"numRecords\":3}"
    }});
    if let Some(dv) = dv {
        a["add"]["deletionVector"] = dv;
    }
    a
}

/// `remove` of `path` with an optional DV.
pub fn remove(path: &str, dv: Option<Value>) -> Value {
    let mut r = json!({"remove": {"path": path, "deletionTimestamp": 0, "dataChange": true}});
    if let Some(dv) = dv {
        r["remove"]["deletionVector"] = dv;
    }
    r
}

/// A log written to a local folder, for tests that need file modification
/// times (the in-memory store cannot set them).
pub struct LocalLog {
    log: std::path::PathBuf,
}

impl LocalLog {
    /// Creates `<table>/_delta_log`.
    pub fn create(table: &std::path::Path) -> Self {
        let log = table.join("_delta_log");
        std::fs::create_dir(&log).unwrap();
        Self { log }
    }

    /// The commit file of `version`.
    pub fn file(&self, version: u64) -> std::path::PathBuf {
        self.log.join(format!("{version:020}.json"))
    }

    /// Writes `actions` as the commit of `version`.
    pub fn commit(&self, version: u64, actions: &[Value]) {
        let lines: String = actions.iter().map(|a| format!("{a}\n")).collect();
        std::fs::write(self.file(version), lines).unwrap();
    }

    /// Writes a classic checkpoint of `actions` at `version` and points
    /// `_last_checkpoint` at it.
    pub fn checkpoint(&self, version: u64, actions: &[Value]) {
        let name = format!("{version:020}.checkpoint.parquet");
        std::fs::write(self.log.join(name), checkpoint_bytes(actions)).unwrap();
        let hint = json!({"version": version, "size": actions.len()});
        std::fs::write(self.log.join("_last_checkpoint"), hint.to_string()).unwrap();
    }

    /// Sets the modification time of each commit file, from version 0 on.
    pub fn set_commit_times(&self, times_ms: &[u64]) {
        for (v, &ms) in (0u64..).zip(times_ms) {
            set_mtime(&self.file(v), ms);
        }
    }
}

/// Sets a file's modification time (ms since the epoch).
pub fn set_mtime(path: &std::path::Path, ms: u64) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms))
        .unwrap();
}

/// `protocol` and `metaData` that switch in-commit timestamps on at version 2
/// (enablement timestamp 10 000 ms), for a commit at version 2.
pub fn ict_enabled_at_2() -> (Value, Value) {
    let protocol = json!({"protocol": {"minReaderVersion": 1, "minWriterVersion": 7, "writerFeatures": ["inCommitTimestamp"]}});
    let mut metadata = metadata(false);
    metadata["metaData"]["configuration"] = json!({
        "delta.enableInCommitTimestamps": "true",
        "delta.inCommitTimestampEnablementVersion": "2",
        "delta.inCommitTimestampEnablementTimestamp": "10000",
    });
    (protocol, metadata)
}

/// A `commitInfo` with in-commit timestamp `ms`.
pub fn commit_info_ict(ms: i64) -> Value {
    json!({"commitInfo": {"timestamp": 1, "inCommitTimestamp": ms}})
}
