use std::sync::Arc;

use arrow_array::builder::{MapBuilder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, TimestampMicrosecondType,
};
use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, StringArray, StructArray};
use arrow_schema::{DataType as A, Field};
use chrono::DateTime;
use proptest::prelude::*;

use super::*;
use crate::schema::DecimalType;

fn col(name: &str, ty: PrimitiveType) -> PartitionColumn {
    PartitionColumn::new(name, format!("phys_{name}"), ty)
}

fn dec(p: u8, s: u8) -> PrimitiveType {
    PrimitiveType::Decimal(DecimalType::try_new(p, s).unwrap())
}

/// Builds a single column from text values.
fn one(ty: PrimitiveType, values: &[Option<&str>]) -> Result<ArrayRef> {
    let mut b = PartitionValuesBuilder::new(vec![col("c", ty)]);
    for (i, v) in values.iter().enumerate() {
        b.push(&format!("f{i}"), &[("phys_c", *v)])?;
    }
    Ok(b.finish()?.remove(0))
}

#[test]
fn nulls_empty_strings_and_absent_keys() {
    let mut b = PartitionValuesBuilder::new(vec![
        col("s", PrimitiveType::String),
        col("n", PrimitiveType::Long),
    ]);
    b.push("f0", &[("phys_s", Some("")), ("phys_n", Some(""))])
        .unwrap();
    b.push("f1", &[("phys_s", None), ("other", Some("x"))])
        .unwrap();
    b.push("f2", &[("phys_n", Some("7")), ("phys_s", Some("a"))])
        .unwrap();
    let out = b.finish().unwrap();
    let s = out[0].as_string::<i32>();
    assert_eq!((s.is_null(0), s.is_null(1), s.value(2)), (true, true, "a"));
    let n = out[1].as_primitive::<Int64Type>();
    assert_eq!((n.is_null(0), n.is_null(1), n.value(2)), (true, true, 7));
}

#[test]
fn every_type_parses() {
    let i8s = one(PrimitiveType::Byte, &[Some("-128")]).unwrap();
    assert_eq!(i8s.as_primitive::<Int8Type>().value(0), -128);
    let i16s = one(PrimitiveType::Short, &[Some("300")]).unwrap();
    assert_eq!(i16s.as_primitive::<Int16Type>().value(0), 300);
    let i32s = one(PrimitiveType::Integer, &[Some("-5")]).unwrap();
    assert_eq!(i32s.as_primitive::<Int32Type>().value(0), -5);
    let f = one(
        PrimitiveType::Float,
        &[Some("1.0E10"), Some("NaN"), Some("-Infinity")],
    )
    .unwrap();
    let f = f.as_primitive::<Float32Type>();
    assert_eq!(f.value(0), 1.0e10);
    assert!(f.value(1).is_nan());
    assert_eq!(f.value(2), f32::NEG_INFINITY);
    let d = one(PrimitiveType::Double, &[Some("Infinity"), Some("1.5")]).unwrap();
    assert_eq!(
        d.as_primitive::<Float64Type>().values().to_vec(),
        [f64::INFINITY, 1.5]
    );
    let b = one(PrimitiveType::Boolean, &[Some("TRUE"), Some("false")]).unwrap();
    assert_eq!(
        b.as_boolean().iter().collect::<Vec<_>>(),
        [Some(true), Some(false)]
    );
    let bin = one(PrimitiveType::Binary, &[Some("\u{1}\u{1F608}")]).unwrap();
    assert_eq!(bin.as_binary::<i32>().value(0), "\u{1}\u{1F608}".as_bytes());
    let dm = one(dec(12, 5), &[Some("1.23E+5"), Some("-0.00001")]).unwrap();
    assert_eq!(dm.data_type(), &A::Decimal128(12, 5));
    assert_eq!(
        dm.as_primitive::<Decimal128Type>().values().to_vec(),
        [12_300_000_000, -1]
    );
    let ts = one(
        PrimitiveType::Timestamp,
        &[
            Some("1970-01-01 00:00:01"),
            Some("1970-01-01T02:00:01.5+02:00"),
        ],
    )
    .unwrap();
    assert_eq!(
        ts.as_primitive::<TimestampMicrosecondType>()
            .values()
            .to_vec(),
        [1_000_000, 1_500_000]
    );
}

#[test]
fn unparseable_values_name_file_column_and_value() {
    for (ty, bad) in [
        (PrimitiveType::Integer, "2147483648"),
        (PrimitiveType::Long, "1.5"),
        (dec(5, 2), "1.234"),
        (dec(5, 2), "12x"),
        (PrimitiveType::Boolean, "yes"),
        (PrimitiveType::Date, "2024-02-30"),
        (PrimitiveType::TimestampNtz, "2024-01-01T00:00:00Z"),
        (PrimitiveType::Timestamp, "yesterday"),
        (PrimitiveType::Double, "1,5"),
    ] {
        let err = one(ty, &[None, Some(bad)]).map(|_| ()).unwrap_err();
        match &err {
            LogError::PartitionValue {
                file,
                column,
                value,
                data_type,
            } => {
                assert_eq!(
                    (file.as_str(), column.as_str(), value.as_str()),
                    ("f1", "c", bad)
                );
                assert_eq!(data_type, &ty.to_string());
            }
            other => panic!("{other:?}"),
        }
        let msg = err.to_string();
        assert!(
            msg.contains(bad) && msg.contains("f1") && msg.contains("'c'"),
            "{msg}"
        );
    }
}

#[test]
fn checkpoint_map_and_parsed_struct_inputs() {
    let columns = vec![col("n", PrimitiveType::Long), col("d", PrimitiveType::Date)];
    let mut map = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
    map.keys().append_value("phys_n");
    map.values().append_value("5");
    map.keys().append_value("phys_d");
    map.values().append_value("1970-01-03");
    map.append(true).unwrap();
    map.keys().append_value("phys_n");
    map.values().append_null();
    map.append(true).unwrap();
    map.append(false).unwrap();
    let map = map.finish();

    let mut b = PartitionValuesBuilder::new(columns.clone());
    b.push(
        "json",
        &[("phys_n", Some("1")), ("phys_d", Some("1970-01-01"))],
    )
    .unwrap();
    b.extend_map(&map, |i| format!("row{i}")).unwrap();
    // partitionValues_parsed: narrower int32 for the long column, int32 days.
    let parsed = StructArray::from(vec![
        (
            Arc::new(Field::new("PHYS_N", A::Int32, true)),
            Arc::new(Int32Array::from(vec![Some(9), None])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("phys_d", A::Int32, true)),
            Arc::new(Int32Array::from(vec![Some(10), Some(11)])) as ArrayRef,
        ),
    ]);
    b.extend_parsed(&parsed).unwrap();
    b.push("json2", &[("phys_n", Some("2"))]).unwrap();
    let out = b.finish().unwrap();
    let n = out[0].as_primitive::<Int64Type>();
    assert_eq!(
        n.iter().collect::<Vec<_>>(),
        [Some(1), Some(5), None, None, Some(9), None, Some(2)]
    );
    let d = out[1].as_primitive::<Date32Type>();
    assert_eq!(
        d.iter().collect::<Vec<_>>(),
        [Some(0), Some(2), None, None, Some(10), Some(11), None]
    );

    let mut bad = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
    bad.keys().append_value("phys_n");
    bad.values().append_value("five");
    bad.append(true).unwrap();
    let mut b = PartitionValuesBuilder::new(columns.clone());
    let err = b
        .extend_map(&bad.finish(), |i| format!("checkpoint row {i}"))
        .unwrap_err();
    assert!(
        matches!(&err, LogError::PartitionValue { file, value, .. } if file == "checkpoint row 0" && value == "five"),
        "{err}"
    );

    let missing = StructArray::from(vec![(
        Arc::new(Field::new("phys_n", A::Int64, true)),
        Arc::new(Int64Array::from(vec![1])) as ArrayRef,
    )]);
    let mut b = PartitionValuesBuilder::new(columns.clone());
    assert!(
        matches!(b.extend_parsed(&missing), Err(LogError::UnexpectedArrowType { column, .. }) if column.contains("phys_d"))
    );
    let wrong = StructArray::from(vec![
        (
            Arc::new(Field::new("phys_n", A::Utf8, true)),
            Arc::new(StringArray::from(vec!["x"])) as ArrayRef,
        ),
        (
            Arc::new(Field::new("phys_d", A::Int32, true)),
            Arc::new(Int32Array::from(vec![1])) as ArrayRef,
        ),
    ]);
    let mut b = PartitionValuesBuilder::new(columns);
    assert!(matches!(
        b.extend_parsed(&wrong),
        Err(LogError::Arrow { .. })
    ));
}

#[test]
fn resolve_uses_physical_names() {
    let schema = StructType::from_json(
        r#"{"type":"struct","fields":[{"name":"Cat","type":"string","nullable":true,
        "metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-2"}},
        {"name":"s","type":{"type":"struct","fields":[]},"nullable":true,"metadata":{}}]}"#,
    )
    .unwrap();
    let cols =
        PartitionColumn::resolve_all(&schema, &["cat".to_owned()], ColumnMappingMode::Id).unwrap();
    assert_eq!(
        cols,
        [PartitionColumn::new("Cat", "col-2", PrimitiveType::String)]
    );
    let plain = PartitionColumn::resolve_all(&schema, &["Cat".to_owned()], ColumnMappingMode::None)
        .unwrap();
    assert_eq!(plain[0].physical_name, "Cat");
    assert!(matches!(
        PartitionColumn::resolve_all(&schema, &["nope".to_owned()], ColumnMappingMode::None),
        Err(LogError::ColumnNotFound { .. })
    ));
    assert!(matches!(
        PartitionColumn::resolve_all(&schema, &["s".to_owned()], ColumnMappingMode::None),
        Err(LogError::InvalidSchema { .. })
    ));
}

/// Java's `Double.toString`/`Float.toString` shape: plain in [1e-3, 1e7),
/// else `d.dddE±n`, always with a fractional digit.
fn java_float(shortest: String, abs: f64) -> String {
    if !abs.is_finite() || shortest.contains("NaN") {
        return shortest;
    }
    if abs == 0.0 || (1e-3..1e7).contains(&abs) {
        return if shortest.contains('.') {
            shortest
        } else {
            format!("{shortest}.0")
        };
    }
    shortest
}

fn java_sci(e_form: String) -> String {
    // Rust `{:e}` gives `1.5e-7`/`1e10`; Java writes `1.5E-7`/`1.0E10`.
    let (mantissa, exp) = e_form.split_once('e').unwrap_or((&e_form, "0"));
    let mantissa = if mantissa.contains('.') {
        mantissa.to_owned()
    } else {
        format!("{mantissa}.0")
    };
    format!("{mantissa}E{exp}")
}

fn spark_double(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    let abs = v.abs();
    if abs == 0.0 || (1e-3..1e7).contains(&abs) {
        java_float(format!("{v:?}"), abs)
    } else {
        java_sci(format!("{v:e}"))
    }
}

fn spark_float(v: f32) -> String {
    if v.is_nan() || v.is_infinite() {
        return spark_double(f64::from(v));
    }
    let abs = f64::from(v.abs());
    if abs == 0.0 || (1e-3..1e7).contains(&abs) {
        java_float(format!("{v:?}"), abs)
    } else {
        java_sci(format!("{v:e}"))
    }
}

/// `BigDecimal.toPlainString` with the scale kept.
fn plain_decimal(unscaled: i128, scale: u8) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let scale = usize::from(scale);
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    let sign = if unscaled < 0 { "-" } else { "" };
    if scale == 0 {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{frac}")
    }
}

proptest! {
    #[test]
    fn spark_formatted_values_round_trip(
        long in any::<i64>(),
        int in any::<i32>(),
        short in any::<i16>(),
        byte in any::<i8>(),
        double in any::<f64>(),
        float in any::<f32>(),
        (precision, scale, unscaled) in (1u8..=38).prop_flat_map(|p| (Just(p), 0..=p, any::<i128>()))
            .prop_map(|(p, s, raw)| (p, s, raw % 10i128.pow(u32::from(p)))),
        sci in any::<bool>(),
        days in -700_000i32..2_900_000,
        micros in -30_000_000_000_000_000i64..250_000_000_000_000_000,
        iso in any::<bool>(),
        text in "\\PC{1,12}",
        upper in any::<bool>(),
        flag in any::<bool>(),
    ) {
        let decimal = dec(precision, scale);
        let columns = vec![
            col("long", PrimitiveType::Long), col("int", PrimitiveType::Integer),
            col("short", PrimitiveType::Short), col("byte", PrimitiveType::Byte),
            col("double", PrimitiveType::Double), col("float", PrimitiveType::Float),
            col("dec", decimal), col("date", PrimitiveType::Date),
            col("ts", PrimitiveType::Timestamp), col("ntz", PrimitiveType::TimestampNtz),
            col("s", PrimitiveType::String), col("bin", PrimitiveType::Binary),
            col("bool", PrimitiveType::Boolean),
        ];
        let dec_text = if sci {
            format!("{unscaled}E-{scale}")
        } else {
            plain_decimal(unscaled, scale)
        };
        let date = chrono::NaiveDate::from_num_days_from_ce_opt(days + 719_163).unwrap();
        let ts = DateTime::from_timestamp_micros(micros).unwrap().naive_utc();
        let ts_text = if iso {
            ts.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
        } else {
            ts.format("%Y-%m-%d %H:%M:%S%.6f").to_string()
        };
        let ntz_text = ts.format("%Y-%m-%d %H:%M:%S%.6f").to_string();
        let bool_text = match (flag, upper) {
            (true, true) => "TRUE", (true, false) => "true",
            (false, true) => "False", (false, false) => "false",
        };
        let values = [
            long.to_string(), int.to_string(), short.to_string(), byte.to_string(),
            spark_double(double), spark_float(float), dec_text,
            date.format("%Y-%m-%d").to_string(), ts_text, ntz_text, text.clone(), text.clone(),
            bool_text.to_owned(),
        ];
        let physical: Vec<String> = columns.iter().map(|c| c.physical_name.clone()).collect();
        let pairs: Vec<(&str, Option<&str>)> =
            physical.iter().zip(&values).map(|(k, v)| (k.as_str(), Some(v.as_str()))).collect();
        let mut b = PartitionValuesBuilder::new(columns);
        b.push("f", &pairs).unwrap();
        let out = b.finish().unwrap();
        prop_assert_eq!(out[0].as_primitive::<Int64Type>().value(0), long);
        prop_assert_eq!(out[1].as_primitive::<Int32Type>().value(0), int);
        prop_assert_eq!(out[2].as_primitive::<Int16Type>().value(0), short);
        prop_assert_eq!(out[3].as_primitive::<Int8Type>().value(0), byte);
        let d = out[4].as_primitive::<Float64Type>().value(0);
        prop_assert!(d.to_bits() == double.to_bits() || (d.is_nan() && double.is_nan()), "{} {}", d, &values[4]);
        let f = out[5].as_primitive::<Float32Type>().value(0);
        prop_assert!(f.to_bits() == float.to_bits() || (f.is_nan() && float.is_nan()), "{} {}", f, &values[5]);
        prop_assert_eq!(out[6].as_primitive::<Decimal128Type>().value(0), unscaled);
        prop_assert_eq!(out[7].as_primitive::<Date32Type>().value(0), days);
        prop_assert_eq!(out[8].as_primitive::<TimestampMicrosecondType>().value(0), micros);
        prop_assert_eq!(out[9].as_primitive::<TimestampMicrosecondType>().value(0), micros);
        prop_assert_eq!(out[10].as_string::<i32>().value(0), text.as_str());
        prop_assert_eq!(out[11].as_binary::<i32>().value(0), text.as_bytes());
        prop_assert_eq!(out[12].as_boolean().value(0), flag);
    }
}

#[test]
fn checkpoint_maps_with_other_string_encodings() {
    use arrow_array::builder::{Int32Builder, StringViewBuilder};
    let mut map = MapBuilder::new(None, StringBuilder::new(), StringViewBuilder::new());
    map.keys().append_value("phys_n");
    map.values().append_value("42");
    map.append(true).unwrap();
    let mut b = PartitionValuesBuilder::new(vec![col("n", PrimitiveType::Long)]);
    b.extend_map(&map.finish(), |i| format!("row {i}")).unwrap();
    assert_eq!(
        b.finish().unwrap()[0].as_primitive::<Int64Type>().value(0),
        42
    );

    let mut ints = MapBuilder::new(None, Int32Builder::new(), StringBuilder::new());
    ints.keys().append_value(1);
    ints.values().append_value("42");
    ints.append(true).unwrap();
    let mut b = PartitionValuesBuilder::new(vec![col("n", PrimitiveType::Long)]);
    let err = b
        .extend_map(&ints.finish(), |i| format!("row {i}"))
        .unwrap_err();
    assert!(
        matches!(&err, LogError::UnexpectedArrowType { column, found, .. }
            if column == "partitionValues.key" && found == "Int32"),
        "{err}"
    );
}
