//! Delta tables written by dar-testkit for the SQL tests (run everywhere).
//!
//! | table | layout | versions |
//! |---|---|---|
//! | `people` | column mapping `name`, DVs, 4-row row groups, 2-row pages, nested struct, every stats type | v1: ids 1-6, v2: + ids 7-10, v3: id 2 deleted (DV) |
//! | `orders` | partitioned by `region` (string, one null), no DVs | v1: 8 orders |

use std::path::Path;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int32Array, Int64Array,
    RecordBatch, StringArray, StructArray, TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit};
use dar_testkit::{ColumnMappingMode, DvStorage, ParquetOptions, TableWriter};
use object_store::local::LocalFileSystem;
use object_store::path::Path as StorePath;

fn info_fields() -> Fields {
    Fields::from(vec![
        Field::new("city", DataType::Utf8, true),
        Field::new("zip", DataType::Int32, true),
    ])
}

fn people_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("score", DataType::Float64, true),
        Field::new("amount", DataType::Decimal128(8, 2), true),
        Field::new("born", DataType::Date32, true),
        Field::new(
            "seen",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
        Field::new("active", DataType::Boolean, true),
        Field::new("info", DataType::Struct(info_fields()), true),
    ]))
}

/// One person per id: name, score, amount (cents), born (days), seen (µs),
/// active, city, zip.
type Person = (
    i64,
    Option<&'static str>,
    Option<f64>,
    Option<i128>,
    Option<i32>,
    Option<i64>,
    Option<bool>,
    Option<&'static str>,
    Option<i32>,
);

/// 2024-01-01T00:00:00Z in µs.
const JAN_1: i64 = 1_704_067_200_000_000;
const HOUR: i64 = 3_600_000_000;

const PEOPLE: [Person; 10] = [
    (
        1,
        Some("ada"),
        Some(9.5),
        Some(1050),
        Some(19_000),
        Some(JAN_1),
        Some(true),
        Some("Oslo"),
        Some(150),
    ),
    (
        2,
        Some("bob"),
        Some(7.0),
        Some(-250),
        Some(19_001),
        Some(JAN_1 + HOUR),
        Some(false),
        Some("Rome"),
        Some(100),
    ),
    (
        3,
        Some("cy"),
        None,
        Some(0),
        Some(19_002),
        Some(JAN_1 + 2 * HOUR),
        Some(true),
        None,
        None,
    ),
    (
        4,
        Some("dee"),
        Some(3.25),
        None,
        None,
        None,
        None,
        Some("Oslo"),
        Some(151),
    ),
    (
        5,
        None,
        Some(8.0),
        Some(99_999),
        Some(19_004),
        Some(JAN_1 + 4 * HOUR),
        Some(false),
        Some("Lima"),
        Some(1),
    ),
    (
        6,
        Some("abe"),
        Some(1.0),
        Some(1),
        Some(19_005),
        Some(JAN_1 + 5 * HOUR),
        Some(true),
        Some("Rome"),
        Some(101),
    ),
    (
        7,
        Some("eve"),
        Some(6.5),
        Some(700),
        Some(19_006),
        Some(JAN_1 + 6 * HOUR),
        Some(true),
        Some("Oslo"),
        Some(152),
    ),
    (
        8,
        Some("fay"),
        Some(2.0),
        Some(800),
        Some(19_007),
        Some(JAN_1 + 7 * HOUR),
        Some(false),
        Some("Lima"),
        Some(2),
    ),
    (
        9,
        Some("gus"),
        Some(4.5),
        Some(900),
        Some(19_008),
        Some(JAN_1 + 8 * HOUR),
        Some(true),
        Some("Rome"),
        Some(102),
    ),
    (
        10,
        Some("hal"),
        Some(5.0),
        Some(1000),
        Some(19_009),
        Some(JAN_1 + 9 * HOUR),
        None,
        None,
        None,
    ),
];

fn people_batch(rows: &[Person]) -> RecordBatch {
    let info = StructArray::new(
        info_fields(),
        vec![
            Arc::new(StringArray::from(
                rows.iter().map(|r| r.7).collect::<Vec<_>>(),
            )) as ArrayRef,
            Arc::new(Int32Array::from(
                rows.iter().map(|r| r.8).collect::<Vec<_>>(),
            )),
        ],
        None,
    );
    RecordBatch::try_new(
        people_schema(),
        vec![
            Arc::new(Int64Array::from(
                rows.iter().map(|r| r.0).collect::<Vec<_>>(),
            )),
            Arc::new(StringArray::from(
                rows.iter().map(|r| r.1).collect::<Vec<_>>(),
            )),
            Arc::new(Float64Array::from(
                rows.iter().map(|r| r.2).collect::<Vec<_>>(),
            )),
            Arc::new(
                Decimal128Array::from(rows.iter().map(|r| r.3).collect::<Vec<_>>())
                    .with_precision_and_scale(8, 2)
                    .unwrap(),
            ),
            Arc::new(Date32Array::from(
                rows.iter().map(|r| r.4).collect::<Vec<_>>(),
            )),
            Arc::new(
                TimestampMicrosecondArray::from(rows.iter().map(|r| r.5).collect::<Vec<_>>())
                    .with_timezone("UTC"),
            ),
            Arc::new(BooleanArray::from(
                rows.iter().map(|r| r.6).collect::<Vec<_>>(),
            )),
            Arc::new(info),
        ],
    )
    .unwrap()
}

fn store(dir: &Path) -> Arc<dyn object_store::ObjectStore> {
    Arc::new(LocalFileSystem::new_with_prefix(dir).unwrap())
}

/// Writes `people` under `dir/people`.
pub async fn write_people(dir: &Path) {
    let mut t = TableWriter::builder(store(dir), StorePath::from("people"), people_schema())
        .with_column_mapping(ColumnMappingMode::Name)
        .with_deletion_vectors(true)
        .with_parquet_options(
            ParquetOptions::default()
                .with_row_group_rows(4)
                .with_page_rows(2),
        )
        .create()
        .await
        .unwrap();
    let first = t.append(&people_batch(&PEOPLE[..6])).await.unwrap();
    assert_eq!(first.version, 1);
    t.append(&people_batch(&PEOPLE[6..])).await.unwrap();
    let path = first.added[0].path.clone();
    let v3 = t.delete_rows(&path, &[1], DvStorage::Inline).await.unwrap();
    assert_eq!(v3.version, 3);
}

fn orders_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("order_id", DataType::Int64, false),
        Field::new("person_id", DataType::Int64, true),
        Field::new("total", DataType::Int64, true),
        Field::new("region", DataType::Utf8, true),
    ]))
}

/// Writes `orders` under `dir/orders`.
pub async fn write_orders(dir: &Path) {
    let mut t = TableWriter::builder(store(dir), StorePath::from("orders"), orders_schema())
        .with_partition_columns(["region"])
        .create()
        .await
        .unwrap();
    let batch = RecordBatch::try_new(
        orders_schema(),
        vec![
            Arc::new(Int64Array::from(vec![
                100, 101, 102, 103, 104, 105, 106, 107,
            ])),
            Arc::new(Int64Array::from(vec![
                Some(1),
                Some(1),
                Some(2),
                Some(3),
                Some(7),
                Some(9),
                None,
                Some(1),
            ])),
            Arc::new(Int64Array::from(vec![10, 20, 30, 40, 50, 60, 70, 80])),
            Arc::new(StringArray::from(vec![
                Some("east"),
                Some("west"),
                Some("east"),
                Some("west"),
                Some("east"),
                Some("north"),
                None,
                Some("north"),
            ])),
        ],
    )
    .unwrap();
    t.append(&batch).await.unwrap();
}
