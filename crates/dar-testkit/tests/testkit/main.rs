//! Integration tests: tables written by the kit read back exactly with
//! arrow-rs, their DVs decode with dar-dv, their log parses as the protocol
//! says, and dar-log loads them.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

mod errors;
mod layout;
mod log;
mod roundtrip;
mod sample;

use std::sync::Arc;

use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array,
    Int8Array, Int16Array, Int32Array, Int64Array, RecordBatch, StringArray, StructArray,
    TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use bytes::Bytes;
use futures::TryStreamExt;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// Every primitive type the kit writes, a nested struct, and two partition
/// candidates (`region` string, `bucket` int).
pub fn all_types_schema() -> SchemaRef {
    let inner = Fields::from(vec![
        Field::new("x", DataType::Int32, true),
        Field::new("label", DataType::Utf8, true),
    ]);
    let outer = Fields::from(vec![
        Field::new("inner", DataType::Struct(inner), true),
        Field::new("score", DataType::Float64, true),
    ]);
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("flag", DataType::Boolean, true),
        Field::new("b", DataType::Int8, true),
        Field::new("s", DataType::Int16, true),
        Field::new("i", DataType::Int32, true),
        Field::new("f", DataType::Float32, true),
        Field::new("d", DataType::Float64, true),
        Field::new("dec", DataType::Decimal128(12, 3), true),
        Field::new("name", DataType::Utf8, true),
        Field::new("raw", DataType::Binary, true),
        Field::new("day", DataType::Date32, true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
        Field::new(
            "ntz",
            DataType::Timestamp(TimeUnit::Microsecond, None),
            true,
        ),
        Field::new("nested", DataType::Struct(outer), true),
        Field::new("region", DataType::Utf8, true),
        Field::new("bucket", DataType::Int32, true),
    ]))
}

/// `rows` deterministic rows of [`all_types_schema`]; every fifth value null,
/// regions cycling through awkward names (a slash, a space, null).
pub fn all_types_batch(rows: usize, first_id: i64) -> RecordBatch {
    let schema = all_types_schema();
    let n = |i: usize| i % 5 != 3;
    let ids: Vec<i64> = (0..rows as i64).map(|i| first_id + i).collect();
    let DataType::Struct(outer) = schema.field(13).data_type().clone() else {
        unreachable!()
    };
    let DataType::Struct(inner) = outer[0].data_type().clone() else {
        unreachable!()
    };
    let inner = StructArray::new(
        inner,
        vec![
            Arc::new(Int32Array::from_iter(
                (0..rows).map(|i| n(i + 1).then_some(i as i32 * 7)),
            )) as ArrayRef,
            Arc::new(StringArray::from_iter(
                (0..rows).map(|i| n(i + 2).then(|| format!("label-{}", i % 7))),
            )),
        ],
        Some((0..rows).map(|i| i % 9 != 4).collect()),
    );
    let nested = StructArray::new(
        outer,
        vec![
            Arc::new(inner) as ArrayRef,
            Arc::new(Float64Array::from_iter(
                (0..rows).map(|i| n(i).then_some(i as f64 / 4.0)),
            )),
        ],
        Some((0..rows).map(|i| i % 11 != 6).collect()),
    );
    let regions = ["US/East", "eu west", "ap#1"];
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids)),
        Arc::new(BooleanArray::from_iter(
            (0..rows).map(|i| n(i).then_some(i % 2 == 0)),
        )),
        Arc::new(Int8Array::from_iter(
            (0..rows).map(|i| n(i).then_some((i % 200) as i8 - 100)),
        )),
        Arc::new(Int16Array::from_iter(
            (0..rows).map(|i| n(i).then_some(i as i16 * -3)),
        )),
        Arc::new(Int32Array::from_iter(
            (0..rows).map(|i| n(i).then_some(i as i32 * 1000)),
        )),
        Arc::new(Float32Array::from_iter(
            (0..rows).map(|i| n(i).then_some(i as f32 * 0.5)),
        )),
        Arc::new(Float64Array::from_iter(
            (0..rows).map(|i| n(i).then_some(i as f64 * -1.25)),
        )),
        Arc::new(
            Decimal128Array::from_iter((0..rows).map(|i| n(i).then_some(i as i128 * 1001 - 5000)))
                .with_precision_and_scale(12, 3)
                .unwrap(),
        ),
        Arc::new(StringArray::from_iter((0..rows).map(|i| {
            n(i).then(|| format!("name-{i:04}-{}", "x".repeat(i % 40)))
        }))),
        Arc::new(BinaryArray::from_iter(
            (0..rows).map(|i| n(i).then(|| vec![i as u8, 0, 255])),
        )),
        Arc::new(Date32Array::from_iter(
            (0..rows).map(|i| n(i).then_some(19_000 + i as i32)),
        )),
        Arc::new(
            TimestampMicrosecondArray::from_iter(
                (0..rows).map(|i| n(i).then_some(1_700_000_000_000_000 + i as i64 * 1_234_567)),
            )
            .with_timezone("UTC"),
        ),
        Arc::new(TimestampMicrosecondArray::from_iter(
            (0..rows).map(|i| n(i).then_some(i as i64 * 999)),
        )),
        Arc::new(nested),
        Arc::new(StringArray::from_iter(
            (0..rows).map(|i| (i % 4 != 3).then(|| regions[i % 4 % 3])),
        )),
        Arc::new(Int32Array::from_iter(
            (0..rows).map(|i| Some((i / 4 % 2) as i32)),
        )),
    ];
    RecordBatch::try_new(schema, columns).unwrap()
}

/// A fresh in-memory store.
pub fn memory() -> Arc<dyn ObjectStore> {
    Arc::new(InMemory::new())
}

/// The bytes of an object.
pub async fn read(store: &Arc<dyn ObjectStore>, path: &Path) -> Bytes {
    store.get(path).await.unwrap().bytes().await.unwrap()
}

/// A data file read back with parquet's reader, as one batch.
pub async fn read_parquet(store: &Arc<dyn ObjectStore>, path: &Path) -> RecordBatch {
    let bytes = read(store, path).await;
    let reader = ParquetRecordBatchReaderBuilder::try_new(bytes)
        .unwrap()
        .with_batch_size(1 << 20)
        .build()
        .unwrap();
    let batches: Vec<RecordBatch> = reader.collect::<Result<_, _>>().unwrap();
    arrow_select::concat::concat_batches(&batches[0].schema(), &batches).unwrap()
}

/// Every object under `root`, as (path, bytes), sorted.
pub async fn snapshot_store(store: &Arc<dyn ObjectStore>, root: &Path) -> Vec<(String, Bytes)> {
    let mut metas: Vec<_> = store.list(Some(root)).try_collect().await.unwrap();
    metas.sort_by(|a, b| a.location.cmp(&b.location));
    let mut out = Vec::new();
    for meta in metas {
        out.push((meta.location.to_string(), read(store, &meta.location).await));
    }
    out
}

/// The actions of commit `version` as JSON values.
pub async fn commit_actions(
    store: &Arc<dyn ObjectStore>,
    root: &Path,
    version: u64,
) -> Vec<serde_json::Value> {
    let path = log_file(root, &format!("{version:020}.json"));
    let text = String::from_utf8(read(store, &path).await.to_vec()).unwrap();
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// `<root>/_delta_log/<name>`.
pub fn log_file(root: &Path, name: &str) -> Path {
    Path::from(format!("{root}/_delta_log/{name}"))
}
