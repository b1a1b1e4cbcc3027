use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Decimal128Array, Float64Array, Int32Array, RecordBatch, StringArray,
    StructArray, TimestampMicrosecondArray,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Fields, Schema};

use super::*;

#[test]
fn nested_stats_with_parent_nulls() {
    let inner_fields = Fields::from(vec![
        Field::new("x", DataType::Int32, true),
        Field::new("flag", DataType::Boolean, true),
    ]);
    // Row 1's struct is null: its x (= -100) must not count as the min.
    let inner = StructArray::new(
        inner_fields.clone(),
        vec![
            Arc::new(Int32Array::from(vec![Some(5), Some(-100), None])) as ArrayRef,
            Arc::new(BooleanArray::from(vec![true, false, true])),
        ],
        Some(NullBuffer::from(vec![true, false, true])),
    );
    let schema = Schema::new(vec![
        Field::new("s", DataType::Utf8, true),
        Field::new("n", DataType::Struct(inner_fields), true),
        Field::new("d", DataType::Decimal128(5, 2), true),
        Field::new(
            "t",
            DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
        Field::new("f", DataType::Float64, true),
    ]);
    let long = "a".repeat(40);
    let batch = RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(StringArray::from(vec![
                Some(long.as_str()),
                Some("b"),
                None,
            ])),
            Arc::new(inner),
            Arc::new(
                Decimal128Array::from(vec![Some(-5), Some(12345), None])
                    .with_precision_and_scale(5, 2)
                    .unwrap(),
            ),
            Arc::new(
                TimestampMicrosecondArray::from(vec![1_685_559_513_633_999, -1, 0])
                    .with_timezone("UTC"),
            ),
            Arc::new(Float64Array::from(vec![1.0, f64::NAN, 2.0])),
        ],
    )
    .unwrap();
    let json = FileStats::compute(&batch, None).render(true);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["numRecords"], 3);
    assert_eq!(value["minValues"]["s"], "a".repeat(32));
    assert_eq!(value["maxValues"]["s"], "b");
    assert_eq!(value["nullCount"]["s"], 1);
    assert_eq!(value["minValues"]["n"]["x"], 5);
    assert_eq!(value["maxValues"]["n"]["x"], 5);
    assert_eq!(value["nullCount"]["n"]["x"], 2);
    assert_eq!(value["nullCount"]["n"]["flag"], 1);
    assert!(value["minValues"]["n"].get("flag").is_none());
    assert!(
        json.contains(r#""d":-0.05"#) && json.contains(r#""d":123.45"#),
        "{json}"
    );
    assert_eq!(value["minValues"]["t"], "1969-12-31T23:59:59.999Z");
    assert_eq!(value["maxValues"]["t"], "2023-05-31T18:58:33.633Z");
    assert!(
        value["minValues"].get("f").is_none(),
        "NaN: no float bounds"
    );
    assert_eq!(value["nullCount"]["f"], 0);
    assert_eq!(value["tightBounds"], true);
    assert!(
        FileStats::compute(&batch, None)
            .render(false)
            .ends_with(r#""tightBounds":false}"#)
    );
}

#[test]
fn string_truncation_keeps_bounds() {
    let long = format!("{}z", "é".repeat(32));
    assert_eq!(truncate_min(&long), "é".repeat(32));
    let max = truncate_max(&long).unwrap();
    assert!(max.as_str() >= long.as_str());
    assert!(max.ends_with(STRING_MAX_TIE_BREAKER));
    assert_eq!(truncate_max("short").as_deref(), Some("short"));
    let unboundable = format!("{}{STRING_MAX_TIE_BREAKER}", "a".repeat(32));
    assert_eq!(truncate_max(&unboundable), None);
    assert_eq!(
        timestamp_millis_text(1_500, false).as_deref(),
        Some("1970-01-01T00:00:00.001")
    );
}

#[test]
fn leaf_limit_keeps_the_leading_leaves() {
    let inner = Fields::from(vec![
        Field::new("a", DataType::Int32, true),
        Field::new("b", DataType::Int32, true),
    ]);
    let schema = Schema::new(vec![
        Field::new("n", DataType::Struct(inner.clone()), true),
        Field::new("c", DataType::Int32, true),
    ]);
    let ints = || Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef;
    let batch = RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(StructArray::new(inner, vec![ints(), ints()], None)),
            ints(),
        ],
    )
    .unwrap();
    let render = |limit| FileStats::compute(&batch, limit).render(true);
    assert_eq!(
        render(Some(1)),
        r#"{"numRecords":2,"minValues":{"n":{"a":1}},"maxValues":{"n":{"a":2}},"nullCount":{"n":{"a":0}},"tightBounds":true}"#
    );
    assert_eq!(
        render(Some(0)),
        r#"{"numRecords":2,"minValues":{},"maxValues":{},"nullCount":{},"tightBounds":true}"#
    );
    assert!(render(Some(3)).contains(r#""c":2"#));
}
