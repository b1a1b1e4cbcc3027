use std::sync::Arc;

use arrow_array::{
    ArrayRef, BinaryArray, Date32Array, Decimal128Array, Float32Array, Float64Array, Int8Array,
    StringArray, TimestampMicrosecondArray,
};

use super::*;

fn text(column: ArrayRef, row: usize) -> Option<String> {
    value_text(&column, row, "c").unwrap()
}

#[test]
fn values_follow_section_7() {
    assert_eq!(
        text(Arc::new(Int8Array::from(vec![Some(-8), None])), 0).as_deref(),
        Some("-8")
    );
    assert_eq!(
        text(Arc::new(Int8Array::from(vec![Some(-8), None])), 1),
        None
    );
    let doubles: ArrayRef = Arc::new(Float64Array::from(vec![
        1.5,
        1e10,
        1e-5,
        f64::NAN,
        f64::NEG_INFINITY,
        0.0,
        1234567.0,
        100.0,
    ]));
    let expected = [
        "1.5",
        "1.0E10",
        "1.0E-5",
        "NaN",
        "-Infinity",
        "0.0",
        "1234567.0",
        "100.0",
    ];
    for (row, want) in expected.iter().enumerate() {
        assert_eq!(text(doubles.clone(), row).as_deref(), Some(*want));
    }
    assert_eq!(
        text(Arc::new(Float32Array::from(vec![0.1f32])), 0).as_deref(),
        Some("0.1")
    );
    assert_eq!(
        text(Arc::new(Float32Array::from(vec![3.0e-7f32])), 0).as_deref(),
        Some("3.0E-7")
    );
    let decimals: ArrayRef = Arc::new(
        Decimal128Array::from(vec![12345, -5, 0])
            .with_precision_and_scale(10, 2)
            .unwrap(),
    );
    assert_eq!(text(decimals.clone(), 0).as_deref(), Some("123.45"));
    assert_eq!(text(decimals.clone(), 1).as_deref(), Some("-0.05"));
    assert_eq!(text(decimals, 2).as_deref(), Some("0.00"));
    assert_eq!(
        text(Arc::new(Date32Array::from(vec![19723])), 0).as_deref(),
        Some("2024-01-01")
    );
    let utc: ArrayRef =
        Arc::new(TimestampMicrosecondArray::from(vec![123_456]).with_timezone("UTC"));
    assert_eq!(text(utc, 0).as_deref(), Some("1970-01-01T00:00:00.123456Z"));
    let ntz: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![-1]));
    assert_eq!(text(ntz, 0).as_deref(), Some("1969-12-31 23:59:59.999999"));
    assert_eq!(
        text(Arc::new(StringArray::from(vec!["US/East"])), 0).as_deref(),
        Some("US/East")
    );
}

#[test]
fn bad_values_are_errors() {
    let empty: ArrayRef = Arc::new(StringArray::from(vec![""]));
    let err = value_text(&empty, 0, "region").unwrap_err();
    assert!(err.to_string().contains("`region`"), "{err}");
    let binary: ArrayRef = Arc::new(BinaryArray::from(vec![&[0xffu8][..]]));
    assert!(matches!(
        value_text(&binary, 0, "b"),
        Err(TestkitError::InvalidPartitionColumn { .. })
    ));
}

#[test]
fn directories_and_paths_escape_once_each() {
    let dir = directory_segment("region", Some("US/East"));
    assert_eq!(dir, "region=US%2FEast");
    assert_eq!(uri_encode_segment(&dir), "region=US%252FEast");
    assert_eq!(
        directory_segment("a=b", None),
        "a%3Db=__HIVE_DEFAULT_PARTITION__"
    );
    assert_eq!(
        hive_escape("x:y#z{}[]^'\"*?\\\u{1}é %"),
        "x%3Ay%23z%7B}%5B%5D%5E%27%22%2A%3F%5C%01é %25"
    );
    assert_eq!(uri_encode_segment("é x"), "%C3%A9%20x");
}
