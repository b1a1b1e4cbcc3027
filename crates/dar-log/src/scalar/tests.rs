use arrow_array::Array;
use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, TimestampMicrosecondType};

use super::parse::{parse_bool, parse_date, parse_f32, parse_f64};
use super::{ScalarBuilder, parse_decimal, parse_integer, parse_timestamp};
use crate::schema::{DecimalType, PrimitiveType};

#[test]
fn decimals_parse_exactly_from_text() {
    assert_eq!(
        parse_decimal("-2342342.23423", 12, 5),
        Some(-234_234_223_423)
    );
    assert_eq!(parse_decimal("0.00004", 12, 5), Some(4));
    assert_eq!(parse_decimal("234.00000", 12, 5), Some(23_400_000));
    assert_eq!(
        parse_decimal("1.230000000000000000", 38, 18),
        Some(1_230_000_000_000_000_000)
    );
    assert_eq!(parse_decimal("1.23E+5", 10, 2), Some(12_300_000));
    assert_eq!(parse_decimal("1.23e5", 10, 0), Some(123_000));
    assert_eq!(parse_decimal("12300E-2", 10, 2), Some(12_300));
    assert_eq!(parse_decimal("0E-10", 20, 10), Some(0));
    assert_eq!(parse_decimal("-0", 5, 2), Some(0));
    assert_eq!(parse_decimal("+7", 5, 2), Some(700));
    assert_eq!(parse_decimal(".5", 5, 2), Some(50));
    // 38 nines fit decimal(38,0); i128 arithmetic never goes through f64.
    let nines = "9".repeat(38);
    assert_eq!(parse_decimal(&nines, 38, 0), Some(10i128.pow(38) - 1));
    assert_eq!(
        parse_decimal("-9999999999.9999999999", 20, 10),
        Some(-99_999_999_999_999_999_999)
    );
}

#[test]
fn decimals_reject_what_does_not_fit_or_is_not_a_number() {
    assert_eq!(parse_decimal("1000.00", 5, 2), None, "precision overflow");
    assert_eq!(
        parse_decimal("1.234", 5, 2),
        None,
        "non-zero digit below scale"
    );
    assert_eq!(
        parse_decimal("1.230", 5, 2),
        Some(123),
        "zero below scale is fine"
    );
    assert_eq!(parse_decimal("1e40", 38, 0), None);
    assert_eq!(parse_decimal("1e999999999999999999999", 38, 0), None);
    assert_eq!(parse_decimal("0.0000001", 10, 2), None);
    for bad in [
        "", "-", ".", "1.2.3", "abc", "1e", "1e+", "NaN", "1,5", " 1",
    ] {
        assert_eq!(parse_decimal(bad, 10, 2), None, "{bad:?}");
    }
}

#[test]
fn integers_check_their_width() {
    assert_eq!(parse_integer::<i8>("-128"), Some(-128i8));
    assert_eq!(parse_integer::<i8>("128"), None);
    assert_eq!(parse_integer::<i16>("32767"), Some(32767i16));
    assert_eq!(parse_integer::<i32>("2147483648"), None);
    assert_eq!(parse_integer::<i64>("-9223372036854775808"), Some(i64::MIN));
    assert_eq!(parse_integer::<i64>("1.0"), None);
    assert_eq!(parse_integer::<i64>(""), None);
}

#[test]
fn floats_take_java_forms() {
    assert_eq!(parse_f64("1.0E10"), Some(1.0e10));
    assert_eq!(parse_f64("-1.5E-7"), Some(-1.5e-7));
    assert!(parse_f64("NaN").is_some_and(f64::is_nan));
    assert_eq!(parse_f64("Infinity"), Some(f64::INFINITY));
    assert_eq!(parse_f64("-Infinity"), Some(f64::NEG_INFINITY));
    assert_eq!(parse_f32("0.1"), Some(0.1f32));
    assert_eq!(parse_f32("1.4E-45"), Some(f32::from_bits(1)));
    assert_eq!(parse_f64(""), None);
    assert_eq!(parse_f64("1,5"), None);
}

#[test]
fn booleans_any_case() {
    assert_eq!(parse_bool("TRUE"), Some(true));
    assert_eq!(parse_bool("False"), Some(false));
    assert_eq!(parse_bool("1"), None);
}

#[test]
fn dates() {
    assert_eq!(parse_date("1970-01-01"), Some(0));
    assert_eq!(parse_date("1970-01-02"), Some(1));
    assert_eq!(parse_date("1969-12-31"), Some(-1));
    assert_eq!(parse_date("2023-01-15"), Some(19_372));
    assert_eq!(parse_date("+10000-01-01"), Some(2_932_897));
    assert_eq!(parse_date("2023-02-30"), None);
    assert_eq!(parse_date("2023-1-15"), None);
    assert_eq!(parse_date("2023-01-15T00:00:00"), None);
}

#[test]
fn timestamps_in_every_form() {
    let at = |t: &str| parse_timestamp(t).map(|p| (p.micros, p.has_time, p.has_zone));
    assert_eq!(at("1970-01-01 00:00:00"), Some((0, true, false)));
    assert_eq!(
        at("2013-07-05 17:01:00.123456"),
        Some((1_373_043_660_123_456, true, false))
    );
    assert_eq!(
        at("1970-01-01T00:00:00.123456Z"),
        Some((123_456, true, true))
    );
    assert_eq!(
        at("1971-07-22T03:06:40.000000Z"),
        Some((49_000_000_000_000, true, true))
    );
    // Offsets are subtracted to reach UTC; several spellings.
    assert_eq!(
        at("2023-05-31T11:58:33.633-07:00"),
        at("2023-05-31T18:58:33.633Z")
    );
    assert_eq!(at("1970-01-01T01:00:00+0100").map(|t| t.0), Some(0));
    assert_eq!(at("1970-01-01T01:00:00+01").map(|t| t.0), Some(0));
    assert_eq!(
        at("1970-01-01T00:00:00+00:00:30").map(|t| t.0),
        Some(-30_000_000)
    );
    // Nanoseconds are truncated towards the past.
    assert_eq!(at("1969-12-31T23:59:59.999999999Z").map(|t| t.0), Some(-1));
    assert_eq!(at("1970-01-01T00:00:00.1Z").map(|t| t.0), Some(100_000));
    assert_eq!(
        at("2024-01-01"),
        Some((1_704_067_200_000_000, false, false))
    );
    for bad in [
        "",
        "1970-01-01T",
        "1970-01-01T24:00:00",
        "1970-01-01T00:60:00",
        "1970-01-01T00:00:00.",
        "1970-01-01T00:00:00.1234567890",
        "1970-01-01T00:00:00 UTC",
        "1970-01-01T00:00:00+1:00",
        "1970-01-01X00:00:00",
    ] {
        assert_eq!(parse_timestamp(bad), None, "{bad:?}");
    }
}

#[test]
fn builder_types_its_output() {
    let decimal = PrimitiveType::Decimal(DecimalType::try_new(12, 5).unwrap());
    let mut b = ScalarBuilder::new(decimal, 2);
    assert!(b.append_text("1.5"));
    assert!(!b.append_text("x"));
    b.append_null();
    let a = b.finish();
    assert_eq!(a.data_type(), &arrow_schema::DataType::Decimal128(12, 5));
    assert_eq!(a.len(), 2);
    assert_eq!(
        a.as_primitive::<arrow_array::types::Decimal128Type>()
            .value(0),
        150_000
    );

    let mut ts = ScalarBuilder::new(PrimitiveType::Timestamp, 1);
    assert!(ts.append_text("1970-01-01 00:00:01"));
    assert!(!ts.append_text("1970-01-01"), "timestamp needs a time");
    let a = ts.finish();
    assert_eq!(
        a.data_type(),
        &arrow_schema::DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, Some("UTC".into()))
    );
    assert_eq!(
        a.as_primitive::<TimestampMicrosecondType>().value(0),
        1_000_000
    );

    let mut ntz = ScalarBuilder::new(PrimitiveType::TimestampNtz, 1);
    assert!(
        !ntz.append_text("1970-01-01T00:00:00Z"),
        "ntz never has a zone"
    );
    assert!(ntz.append_text("1970-01-02"), "a date widens to midnight");
    assert_eq!(
        ntz.finish()
            .as_primitive::<TimestampMicrosecondType>()
            .value(0),
        86_400_000_000
    );

    let mut f = ScalarBuilder::new(PrimitiveType::Float, 1);
    assert!(f.append_text("-Infinity"));
    assert_eq!(
        f.finish().as_primitive::<Float32Type>().value(0),
        f32::NEG_INFINITY
    );
    let mut d = ScalarBuilder::new(PrimitiveType::Double, 1);
    assert!(d.append_text("NaN"));
    assert!(d.finish().as_primitive::<Float64Type>().value(0).is_nan());

    let mut v = ScalarBuilder::new(PrimitiveType::Void, 1);
    assert!(!v.append_text("x"));
    v.append_null();
    let a = v.finish();
    assert_eq!(a.data_type(), &arrow_schema::DataType::Null);
    assert_eq!(a.len(), 1);
}
