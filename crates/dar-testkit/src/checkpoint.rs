//! Classic single-part V1 checkpoints (§1.3, §3): one Parquet file,
//! `pad20(v).checkpoint.parquet`, one action per row, each row setting
//! exactly one of the top-level struct columns:
//!
//! ```text
//! protocol  struct<minReaderVersion:int, minWriterVersion:int,
//!                  readerFeatures:list<string>, writerFeatures:list<string>>
//! metaData  struct<id, format:struct<provider, options:map>, schemaString,
//!                  partitionColumns:list<string>, configuration:map, createdTime:long>
//! add       struct<path, partitionValues:map, size:long, modificationTime:long,
//!                  dataChange:bool, stats:string, deletionVector:struct<...>>
//! remove    struct<path, deletionTimestamp:long, dataChange:bool,
//!                  extendedFileMetadata:bool, partitionValues:map, size:long,
//!                  deletionVector:struct<...>>
//! ```
//!
//! `stats_parsed` and `partitionValues_parsed` are not written (the
//! default `delta.checkpoint.writeStatsAsStruct=false`).

use std::sync::Arc;

use arrow_array::builder::{ListBuilder, MapBuilder, MapFieldNames, StringBuilder};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Int32Array, Int64Array, RecordBatch, StringArray, StructArray,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{Field, Fields, Schema};
use dar_dv::DvDescriptor;

use crate::actions::{DataFile, Metadata, Protocol, Tombstone};
use crate::error::{Result, TestkitError};
use crate::parquet::{Codec, ParquetOptions, write_file};

/// What a checkpoint holds: the reconciled state at one version.
pub(crate) struct CheckpointState<'a> {
    /// Which stats columns the adds carry.
    pub(crate) stats: StatsColumns,
    /// A V2 sidecar: no protocol or metaData rows or columns.
    pub(crate) sidecar: bool,
    /// A later part of a multi-part checkpoint: the protocol and metaData
    /// columns, all null (their rows are in the first part).
    pub(crate) continued: bool,
    pub(crate) protocol: &'a Protocol,
    pub(crate) metadata: &'a Metadata,
    pub(crate) files: Vec<&'a DataFile>,
    pub(crate) tombstones: Vec<&'a Tombstone>,
}

/// The encoded checkpoint and the numbers `_last_checkpoint` needs.
pub(crate) struct EncodedCheckpoint {
    pub(crate) bytes: Vec<u8>,
    pub(crate) rows: usize,
}

/// One row per action: protocol, metaData, the adds, then the tombstones.
/// Rows per encoded batch: Arrow's 32-bit string offsets hold about 2 GiB
/// per array, and 10M files' stats text is more.
const ROWS_PER_BATCH: usize = 1 << 20;

pub(crate) fn encode(state: &CheckpointState<'_>, name: &str) -> Result<EncodedCheckpoint> {
    let mut batches = Vec::new();
    let chunks: Vec<&[&DataFile]> = if state.files.is_empty() {
        vec![&[]]
    } else {
        state.files.chunks(ROWS_PER_BATCH).collect()
    };
    let last = chunks.len() - 1;
    for (i, files) in chunks.into_iter().enumerate() {
        let part = CheckpointState {
            stats: state.stats.clone(),
            sidecar: state.sidecar,
            continued: state.continued,
            protocol: state.protocol,
            metadata: state.metadata,
            files: files.to_vec(),
            tombstones: if i == last {
                state.tombstones.clone()
            } else {
                Vec::new()
            },
        };
        batches.push(encode_batch(&part, state.continued || i > 0)?);
    }
    let rows = batches.iter().map(RecordBatch::num_rows).sum();
    let bytes = write_file(
        &batches,
        &ParquetOptions::default().with_codec(Codec::Snappy),
        name,
    )?;
    Ok(EncodedCheckpoint { bytes, rows })
}

/// Where each kind of row of one checkpoint batch is: protocol (row 0)
/// and metaData (row 1) unless the batch continues another or is a
/// sidecar, then the adds, then the removes.
struct Layout<'a> {
    state: &'a CheckpointState<'a>,
    /// Rows before the adds (0 or 2).
    head: usize,
    rows: usize,
}

impl<'a> Layout<'a> {
    fn add_at(&self, row: usize) -> Option<&'a DataFile> {
        let adds = self.state.files.len();
        (self.head..self.head + adds)
            .contains(&row)
            .then(|| self.state.files[row - self.head])
    }

    fn remove_at(&self, row: usize) -> Option<&'a Tombstone> {
        let after = self.head + self.state.files.len();
        (row >= after).then(|| self.state.tombstones[row - after])
    }
}

/// One batch of a checkpoint: the protocol and metaData rows first unless
/// `continued` (a later batch) or a sidecar, then the adds, then the
/// removes.
fn encode_batch(state: &CheckpointState<'_>, continued: bool) -> Result<RecordBatch> {
    let head = if state.sidecar || continued { 0 } else { 2 };
    let layout = Layout {
        state,
        head,
        rows: head + state.files.len() + state.tombstones.len(),
    };
    let add = with_stats(
        add_column(&layout)?,
        layout.rows,
        &|r| layout.add_at(r).map(DataFile::stats_json),
        &state.stats,
    )?;
    let mut columns = vec![
        ("protocol", protocol_column(&layout)?),
        ("metaData", metadata_column(&layout)?),
        ("add", add),
        ("remove", remove_column(&layout)?),
    ];
    if state.sidecar {
        // A sidecar holds file actions only (protocol digest §3).
        columns.drain(..2);
    }
    let schema = Schema::new(
        columns
            .iter()
            .map(|(name, array)| Field::new(*name, array.data_type().clone(), true))
            .collect::<Vec<_>>(),
    );
    RecordBatch::try_new(
        Arc::new(schema),
        columns.into_iter().map(|(_, a)| a).collect(),
    )
    .map_err(TestkitError::arrow("checkpoint batch"))
}

/// The `protocol` column: row 0 of a batch with a head.
fn protocol_column(layout: &Layout<'_>) -> Result<ArrayRef> {
    let (rows, head) = (layout.rows, layout.head);
    let p = layout.state.protocol;
    let features = |list: Option<Vec<&str>>| {
        let mut builder = string_list_builder();
        for row in 0..rows {
            match (row, &list) {
                (0, Some(features)) if head > 0 => {
                    features
                        .iter()
                        .for_each(|f| builder.values().append_value(f));
                    builder.append(true);
                }
                _ => builder.append(false),
            }
        }
        Arc::new(builder.finish()) as ArrayRef
    };
    let only_first =
        |v: i32| Int32Array::from_iter((0..rows).map(|r| (r == 0 && head > 0).then_some(v)));
    struct_array(
        vec![
            (
                "minReaderVersion",
                Arc::new(only_first(p.min_reader_version)),
            ),
            (
                "minWriterVersion",
                Arc::new(only_first(p.min_writer_version)),
            ),
            ("readerFeatures", features(p.reader_features())),
            ("writerFeatures", features(p.writer_features())),
        ],
        (0..rows).map(|r| r == 0 && head > 0).collect(),
    )
}

/// The `metaData` column: row 1 of a batch with a head.
fn metadata_column(layout: &Layout<'_>) -> Result<ArrayRef> {
    let (rows, head) = (layout.rows, layout.head);
    let m = layout.state.metadata;
    let at = |row: usize| (row == 1 && head > 0).then_some(m);
    let mut options = string_map_builder();
    let mut columns = string_list_builder();
    let mut configuration = string_map_builder();
    for row in 0..rows {
        options
            .append(at(row).is_some())
            .map_err(TestkitError::arrow("checkpoint format.options"))?;
        match at(row) {
            Some(m) => {
                m.partition_columns
                    .iter()
                    .for_each(|c| columns.values().append_value(c));
                columns.append(true);
                for (k, v) in &m.configuration {
                    configuration.keys().append_value(k);
                    configuration.values().append_value(v);
                }
                configuration
                    .append(true)
                    .map_err(TestkitError::arrow("checkpoint configuration"))?;
            }
            None => {
                columns.append(false);
                configuration
                    .append(false)
                    .map_err(TestkitError::arrow("checkpoint configuration"))?;
            }
        }
    }
    let strings = |f: &dyn Fn(&Metadata) -> &str| -> ArrayRef {
        Arc::new(StringArray::from_iter((0..rows).map(|r| at(r).map(f))))
    };
    let valid: Vec<bool> = (0..rows).map(|r| r == 1 && head > 0).collect();
    let format = struct_array(
        vec![
            ("provider", strings(&|_| "parquet")),
            ("options", Arc::new(options.finish())),
        ],
        valid.clone(),
    )?;
    struct_array(
        vec![
            ("id", strings(&|m| m.id.as_str())),
            ("format", format),
            ("schemaString", strings(&|m| m.schema_string.as_str())),
            ("partitionColumns", Arc::new(columns.finish())),
            ("configuration", Arc::new(configuration.finish())),
            (
                "createdTime",
                Arc::new(Int64Array::from_iter(
                    (0..rows).map(|r| at(r).map(|m| m.created_time)),
                )),
            ),
        ],
        valid,
    )
}

/// The `add` column (without stats): one row per file.
fn add_column(layout: &Layout<'_>) -> Result<ArrayRef> {
    let rows = layout.rows;
    let file = |row: usize| layout.add_at(row);
    struct_array(
        vec![
            (
                "path",
                Arc::new(StringArray::from_iter(
                    (0..rows).map(|r| file(r).map(|f| f.path.as_str())),
                )),
            ),
            ("partitionValues", partition_values(rows, &file)?),
            (
                "size",
                Arc::new(Int64Array::from_iter(
                    (0..rows).map(|r| file(r).map(|f| f.size as i64)),
                )),
            ),
            (
                "modificationTime",
                Arc::new(Int64Array::from_iter(
                    (0..rows).map(|r| file(r).map(|f| f.modification_time)),
                )),
            ),
            (
                "dataChange",
                Arc::new(BooleanArray::from_iter(
                    (0..rows).map(|r| file(r).map(|_| false)),
                )),
            ),
            (
                "deletionVector",
                deletion_vectors(rows, &|r| file(r).and_then(|f| f.deletion_vector.as_ref()))?,
            ),
        ],
        (0..rows).map(|r| file(r).is_some()).collect(),
    )
}

/// The `remove` column: one row per tombstone.
fn remove_column(layout: &Layout<'_>) -> Result<ArrayRef> {
    let rows = layout.rows;
    let file = |row: usize| layout.remove_at(row).map(|t| &t.file);
    let stamp = |row: usize| layout.remove_at(row).map(|t| t.deletion_timestamp);
    struct_array(
        vec![
            (
                "path",
                Arc::new(StringArray::from_iter(
                    (0..rows).map(|r| file(r).map(|f| f.path.as_str())),
                )),
            ),
            (
                "deletionTimestamp",
                Arc::new(Int64Array::from_iter((0..rows).map(stamp))),
            ),
            (
                "dataChange",
                Arc::new(BooleanArray::from_iter(
                    (0..rows).map(|r| file(r).map(|_| true)),
                )),
            ),
            (
                "extendedFileMetadata",
                Arc::new(BooleanArray::from_iter(
                    (0..rows).map(|r| file(r).map(|_| true)),
                )),
            ),
            ("partitionValues", partition_values(rows, &file)?),
            (
                "size",
                Arc::new(Int64Array::from_iter(
                    (0..rows).map(|r| file(r).map(|f| f.size as i64)),
                )),
            ),
            (
                "deletionVector",
                deletion_vectors(rows, &|r| file(r).and_then(|f| f.deletion_vector.as_ref()))?,
            ),
        ],
        (0..rows).map(|r| file(r).is_some()).collect(),
    )
}

fn string_list_builder() -> ListBuilder<StringBuilder> {
    ListBuilder::new(StringBuilder::new()).with_field(Arc::new(Field::new(
        "element",
        arrow_schema::DataType::Utf8,
        true,
    )))
}

fn string_map_builder() -> MapBuilder<StringBuilder, StringBuilder> {
    let names = MapFieldNames {
        entry: "key_value".into(),
        key: "key".into(),
        value: "value".into(),
    };
    MapBuilder::new(Some(names), StringBuilder::new(), StringBuilder::new())
}

fn partition_values<'a>(
    rows: usize,
    file: &dyn Fn(usize) -> Option<&'a DataFile>,
) -> Result<ArrayRef> {
    let mut map = string_map_builder();
    for row in 0..rows {
        if let Some(f) = file(row) {
            for (k, v) in &f.partition_values {
                map.keys().append_value(k);
                map.values().append_option(v.as_deref());
            }
        }
        map.append(file(row).is_some())
            .map_err(TestkitError::arrow("checkpoint partitionValues"))?;
    }
    Ok(Arc::new(map.finish()))
}

fn deletion_vectors<'a>(
    rows: usize,
    dv: &dyn Fn(usize) -> Option<&'a DvDescriptor>,
) -> Result<ArrayRef> {
    let code = |r| dv(r).map(|d| d.storage_type().code().to_string());
    struct_array(
        vec![
            (
                "storageType",
                Arc::new(StringArray::from_iter((0..rows).map(code))),
            ),
            (
                "pathOrInlineDv",
                Arc::new(StringArray::from_iter(
                    (0..rows).map(|r| dv(r).map(|d| d.path_or_inline_dv())),
                )),
            ),
            (
                "offset",
                Arc::new(Int32Array::from_iter(
                    (0..rows).map(|r| dv(r).and_then(|d| d.offset()).map(|o| o as i32)),
                )),
            ),
            (
                "sizeInBytes",
                Arc::new(Int32Array::from_iter(
                    (0..rows).map(|r| dv(r).map(|d| d.size_in_bytes() as i32)),
                )),
            ),
            (
                "cardinality",
                Arc::new(Int64Array::from_iter(
                    (0..rows).map(|r| dv(r).map(|d| d.cardinality() as i64)),
                )),
            ),
        ],
        (0..rows).map(|r| dv(r).is_some()).collect(),
    )
}

/// A nullable struct column from named children and a validity per row.
/// The stats columns a checkpoint's adds carry (Delta's
/// `delta.checkpoint.writeStatsAsJson` / `writeStatsAsStruct`).
#[derive(Debug, Clone)]
pub(crate) struct StatsColumns {
    /// `add.stats`, the JSON text.
    pub(crate) json: bool,
    /// `add.stats_parsed`, with these struct fields.
    pub(crate) parsed: Option<Fields>,
}

/// `add` (a struct of `rows` rows) with the stats columns `columns` asks
/// for appended; `text(r)` is row `r`'s stats JSON.
fn with_stats(
    add: ArrayRef,
    rows: usize,
    text: &dyn Fn(usize) -> Option<String>,
    columns: &StatsColumns,
) -> Result<ArrayRef> {
    let s =
        add.as_any()
            .downcast_ref::<StructArray>()
            .ok_or_else(|| TestkitError::SchemaMismatch {
                reason: "checkpoint add is not a struct".into(),
            })?;
    let mut fields: Vec<Field> = s.fields().iter().map(|f| f.as_ref().clone()).collect();
    let mut arrays: Vec<ArrayRef> = s.columns().to_vec();
    // Where Delta writers put them: after `dataChange`, before `deletionVector`.
    let mut at = fields
        .iter()
        .position(|f| f.name() == "deletionVector")
        .unwrap_or(fields.len());
    if columns.json {
        fields.insert(at, Field::new("stats", arrow_schema::DataType::Utf8, true));
        arrays.insert(at, Arc::new(StringArray::from_iter((0..rows).map(text))));
        at += 1;
    }
    if let Some(parsed) = &columns.parsed {
        let a = crate::stats_parsed::stats_parsed_column(parsed, rows, text)?;
        fields.insert(at, Field::new("stats_parsed", a.data_type().clone(), true));
        arrays.insert(at, a);
    }
    let out = StructArray::try_new(Fields::from(fields), arrays, s.nulls().cloned())
        .map_err(TestkitError::arrow("checkpoint add stats"))?;
    Ok(Arc::new(out))
}

fn struct_array(children: Vec<(&str, ArrayRef)>, valid: Vec<bool>) -> Result<ArrayRef> {
    let fields: Fields = children
        .iter()
        .map(|(name, array)| Field::new(*name, array.data_type().clone(), true))
        .collect();
    let arrays = children.into_iter().map(|(_, a)| a).collect();
    let array = StructArray::try_new(fields, arrays, Some(NullBuffer::from(valid)))
        .map_err(TestkitError::arrow("checkpoint struct column"))?;
    Ok(Arc::new(array))
}
