use super::*;

fn c(t: DataType, s: Scalar) -> Result<Coerced> {
    coerce(&ColumnPath::from_dotted("c"), &t, &s)
}

fn exact(s: Scalar) -> Coerced {
    Coerced::Exact(s)
}

fn between(below: Option<Scalar>, above: Option<Scalar>) -> Coerced {
    Coerced::Between { below, above }
}

fn dec(value: i128, precision: u8, scale: i8) -> Scalar {
    Scalar::Decimal128 {
        value,
        precision,
        scale,
    }
}

#[test]
fn numbers_the_type_holds_are_exact() {
    assert_eq!(
        c(DataType::Int8, Scalar::Int64(5)).unwrap(),
        exact(Scalar::Int8(5))
    );
    assert_eq!(
        c(DataType::Float64, Scalar::Int64(5)).unwrap(),
        exact(Scalar::Float64(5.0))
    );
    assert_eq!(
        c(DataType::Decimal128(10, 2), Scalar::Int64(5)).unwrap(),
        exact(dec(500, 10, 2))
    );
    assert_eq!(
        c(DataType::Int32, dec(30, 2, 1)).unwrap(),
        exact(Scalar::Int32(3))
    );
    assert_eq!(
        c(DataType::Int64, Scalar::Float64(-4.0)).unwrap(),
        exact(Scalar::Int64(-4))
    );
    assert_eq!(
        c(DataType::Decimal128(8, 2), dec(10_050, 6, 3)).unwrap(),
        exact(dec(1005, 8, 2))
    );
    assert_eq!(
        c(DataType::Float64, dec(15, 2, 1)).unwrap(),
        exact(Scalar::Float64(1.5))
    );
    assert_eq!(
        c(DataType::Float32, Scalar::Float64(1.5)).unwrap(),
        exact(Scalar::Float32(1.5))
    );
    // The extremes of each type are in it.
    assert_eq!(
        c(DataType::Int64, Scalar::Int64(i64::MIN)).unwrap(),
        exact(Scalar::Int64(i64::MIN))
    );
    let max38 = 10i128.pow(38) - 1;
    assert_eq!(
        c(DataType::Decimal128(38, 0), dec(max38, 38, 0)).unwrap(),
        exact(dec(max38, 38, 0))
    );
}

#[test]
fn other_numbers_lie_between_two_values_of_the_type() {
    // `passengers > 2.5`, `IN (2, 2.5)`.
    assert_eq!(
        c(DataType::Int32, dec(25, 2, 1)).unwrap(),
        between(Some(Scalar::Int32(2)), Some(Scalar::Int32(3)))
    );
    assert_eq!(
        c(DataType::Int32, dec(-25, 2, 1)).unwrap(),
        between(Some(Scalar::Int32(-3)), Some(Scalar::Int32(-2)))
    );
    assert_eq!(
        c(DataType::Int64, Scalar::Float64(2.5)).unwrap(),
        between(Some(Scalar::Int64(2)), Some(Scalar::Int64(3)))
    );
    // `fare < 10.005` on decimal(8, 2): no float rounding.
    assert_eq!(
        c(DataType::Decimal128(8, 2), dec(10_005, 5, 3)).unwrap(),
        between(Some(dec(1000, 8, 2)), Some(dec(1001, 8, 2)))
    );
    // A double stands for its exact binary value: 0.1 is a little more
    // than one tenth.
    assert_eq!(
        c(DataType::Decimal128(20, 19), Scalar::Float64(0.1)).unwrap(),
        between(
            Some(dec(1_000_000_000_000_000_055, 20, 19)),
            Some(dec(1_000_000_000_000_000_056, 20, 19))
        )
    );
    // A double against a float column: 0.1 is no float.
    let Coerced::Between {
        below: Some(Scalar::Float32(lo)),
        above: Some(Scalar::Float32(hi)),
    } = c(DataType::Float32, Scalar::Float64(0.1)).unwrap()
    else {
        panic!()
    };
    assert_eq!((hi, lo), (0.1f32, 0.1f32.next_down()));
    assert!(f64::from(lo) < 0.1 && 0.1 < f64::from(hi));
    // A decimal against a float column is first the nearest double.
    assert_eq!(
        c(DataType::Float32, dec(1, 1, 1)).unwrap(),
        c(DataType::Float32, Scalar::Float64(0.1)).unwrap()
    );
    // Past the largest float, below infinity.
    assert_eq!(
        c(DataType::Float32, Scalar::Float64(1e300)).unwrap(),
        between(
            Some(Scalar::Float32(f32::MAX)),
            Some(Scalar::Float32(f32::INFINITY))
        )
    );
    // An integer a float cannot hold.
    assert_eq!(
        c(DataType::Float32, Scalar::Int64((1 << 24) + 1)).unwrap(),
        between(
            Some(Scalar::Float32(16_777_216.0)),
            Some(Scalar::Float32(16_777_218.0))
        )
    );
}

#[test]
fn numbers_past_the_range_have_one_neighbour() {
    assert_eq!(
        c(DataType::Int8, Scalar::Int64(300)).unwrap(),
        between(Some(Scalar::Int8(127)), None)
    );
    assert_eq!(
        c(DataType::Int8, Scalar::Int64(-300)).unwrap(),
        between(None, Some(Scalar::Int8(-128)))
    );
    assert_eq!(
        c(DataType::Int8, dec(1275, 4, 1)).unwrap(),
        between(Some(Scalar::Int8(127)), None)
    );
    assert_eq!(
        c(DataType::Int8, dec(-1285, 4, 1)).unwrap(),
        between(None, Some(Scalar::Int8(-128)))
    );
    assert_eq!(
        c(DataType::Decimal128(3, 2), Scalar::Int64(50)).unwrap(),
        between(Some(dec(999, 3, 2)), None)
    );
    assert_eq!(
        c(DataType::Int64, Scalar::Float64(1e30)).unwrap(),
        between(Some(Scalar::Int64(i64::MAX)), None)
    );
    assert_eq!(
        c(DataType::Int64, Scalar::Float64(-1e300)).unwrap(),
        between(None, Some(Scalar::Int64(i64::MIN)))
    );
    // NaN is above every number; the infinities past either end.
    assert_eq!(
        c(DataType::Int32, Scalar::Float64(f64::NAN)).unwrap(),
        between(Some(Scalar::Int32(i32::MAX)), None)
    );
    assert_eq!(
        c(DataType::Int32, Scalar::Float64(f64::NEG_INFINITY)).unwrap(),
        between(None, Some(Scalar::Int32(i32::MIN)))
    );
}

#[test]
fn float_literals_are_canonical() {
    let Coerced::Exact(Scalar::Float64(z)) = c(DataType::Float64, Scalar::Float64(-0.0)).unwrap()
    else {
        panic!()
    };
    assert_eq!(z.to_bits(), 0);
    let negative_nan = f64::from_bits(f64::NAN.to_bits() | (1 << 63));
    let Coerced::Exact(Scalar::Float64(n)) =
        c(DataType::Float64, Scalar::Float64(negative_nan)).unwrap()
    else {
        panic!()
    };
    assert_eq!(n.to_bits(), f64::NAN.to_bits());
    let Coerced::Exact(Scalar::Float32(n)) = c(DataType::Float32, Scalar::Float64(n)).unwrap()
    else {
        panic!()
    };
    assert!(n.is_nan());
}

#[test]
fn exact_values_of_doubles() {
    use crate::exact::{Decimal, Number};
    let tiny = Number::of_f64(f64::from_bits(1));
    let Number::Finite(d) = tiny else { panic!() };
    assert_eq!(d.frac.len(), 1074, "the smallest subnormal has 1074 digits");
    assert!(d.frac.ends_with("625") && d.int.is_empty());
    assert_eq!(
        Number::of_f64(-2.5),
        Number::Finite(Decimal::new(true, "2".into(), "5".into()))
    );
    assert!(crate::exact::is_exact_text("2.5", 2.5));
    assert!(!crate::exact::is_exact_text("0.1", 0.1));
    assert!(crate::exact::is_exact_text("-0.0", -0.0));
}

#[test]
fn strings_to_temporal() {
    assert_eq!(
        c(DataType::Date32, Scalar::from("1970-01-02")).unwrap(),
        exact(Scalar::Date32(1))
    );
    let ts = DataType::Timestamp(TimeUnit::Microsecond, Some("+00:00".into()));
    assert_eq!(
        c(ts, Scalar::from("1970-01-01T00:00:01Z")).unwrap(),
        exact(Scalar::Timestamp(1_000_000))
    );
    let ntz = DataType::Timestamp(TimeUnit::Microsecond, None);
    assert_eq!(
        c(ntz.clone(), Scalar::Date32(1)).unwrap(),
        exact(Scalar::TimestampNtz(86_400_000_000))
    );
    assert!(c(DataType::Date32, Scalar::from("not a date")).is_err());
    assert!(c(DataType::Date32, Scalar::TimestampNtz(1)).is_err());
    let err = c(DataType::Int32, Scalar::from("x")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot compare column `c` of type Int32 with Utf8 literal 'x'"
    );
}
