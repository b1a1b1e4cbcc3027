//! [`Scalar`] as serde data: a tagged object (`{"type": "long", "value": 7}`)
//! that every value of every type survives, in JSON too.
//!
//! JSON numbers cannot hold NaN or ±Infinity, and an `i128` does not fit
//! every serde format, so:
//!
//! | type | value |
//! |---|---|
//! | `float`, `double` | a number when finite; `"NaN"`, `"Infinity"`, `"-Infinity"` otherwise (-0.0 stays a number) |
//! | `decimal` | `{"unscaled": "<base-10 digits>", "precision": p, "scale": s}` |
//! | `binary` | the bytes as an array of numbers |
//! | `date` | days since 1970-01-01 |
//! | `timestamp`, `timestamp_ntz` | microseconds since the epoch |

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::scalar::Scalar;

/// A float that JSON can carry whatever its value.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Float {
    Number(f64),
    Special(String),
}

impl Float {
    fn of(v: f64) -> Self {
        if v.is_finite() {
            Self::Number(v)
        } else if v.is_nan() {
            Self::Special("NaN".into())
        } else if v > 0.0 {
            Self::Special("Infinity".into())
        } else {
            Self::Special("-Infinity".into())
        }
    }

    fn value<E: serde::de::Error>(self) -> Result<f64, E> {
        match self {
            Self::Number(v) => Ok(v),
            Self::Special(s) => match s.as_str() {
                "NaN" => Ok(f64::NAN),
                "Infinity" => Ok(f64::INFINITY),
                "-Infinity" => Ok(f64::NEG_INFINITY),
                other => Err(E::custom(format!(
                    "float value '{other}' is neither a number nor NaN, Infinity or -Infinity"
                ))),
            },
        }
    }
}

#[derive(Serialize, Deserialize)]
struct Decimal {
    unscaled: String,
    precision: u8,
    scale: i8,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
enum Wire {
    Null,
    Boolean(bool),
    Byte(i8),
    Short(i16),
    Integer(i32),
    Long(i64),
    Float(Float),
    Double(Float),
    Decimal(Decimal),
    String(String),
    Binary(Vec<u8>),
    Date(i32),
    Timestamp(i64),
    TimestampNtz(i64),
}

impl Serialize for Scalar {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let wire = match self {
            Self::Null => Wire::Null,
            Self::Boolean(v) => Wire::Boolean(*v),
            Self::Int8(v) => Wire::Byte(*v),
            Self::Int16(v) => Wire::Short(*v),
            Self::Int32(v) => Wire::Integer(*v),
            Self::Int64(v) => Wire::Long(*v),
            Self::Float32(v) => Wire::Float(Float::of(f64::from(*v))),
            Self::Float64(v) => Wire::Double(Float::of(*v)),
            Self::Decimal128 {
                value,
                precision,
                scale,
            } => Wire::Decimal(Decimal {
                unscaled: value.to_string(),
                precision: *precision,
                scale: *scale,
            }),
            Self::Utf8(v) => Wire::String(v.clone()),
            Self::Binary(v) => Wire::Binary(v.clone()),
            Self::Date32(v) => Wire::Date(*v),
            Self::Timestamp(v) => Wire::Timestamp(*v),
            Self::TimestampNtz(v) => Wire::TimestampNtz(*v),
        };
        wire.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        Ok(match Wire::deserialize(deserializer)? {
            Wire::Null => Self::Null,
            Wire::Boolean(v) => Self::Boolean(v),
            Wire::Byte(v) => Self::Int8(v),
            Wire::Short(v) => Self::Int16(v),
            Wire::Integer(v) => Self::Int32(v),
            Wire::Long(v) => Self::Int64(v),
            // Every f32 is exactly an f64, so the round trip is exact.
            Wire::Float(f) => Self::Float32(f.value::<D::Error>()? as f32),
            Wire::Double(f) => Self::Float64(f.value::<D::Error>()?),
            Wire::Decimal(d) => Self::Decimal128 {
                value: d.unscaled.parse().map_err(|_| {
                    D::Error::custom(format!(
                        "decimal unscaled value '{}' is not a base-10 integer",
                        d.unscaled
                    ))
                })?,
                precision: d.precision,
                scale: d.scale,
            },
            Wire::String(v) => Self::Utf8(v),
            Wire::Binary(v) => Self::Binary(v),
            Wire::Date(v) => Self::Date32(v),
            Wire::Timestamp(v) => Self::Timestamp(v),
            Wire::TimestampNtz(v) => Self::TimestampNtz(v),
        })
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn round_trip(s: &Scalar) -> Scalar {
        let json = serde_json::to_string(s).unwrap();
        serde_json::from_str(&json).unwrap()
    }

    /// Equality that treats NaN as equal to itself and tells -0.0 from 0.0.
    fn same(a: &Scalar, b: &Scalar) -> bool {
        match (a, b) {
            (Scalar::Float32(x), Scalar::Float32(y)) => {
                x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
            }
            (Scalar::Float64(x), Scalar::Float64(y)) => {
                x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
            }
            _ => a == b,
        }
    }

    fn scalar() -> impl Strategy<Value = Scalar> {
        prop_oneof![
            Just(Scalar::Null),
            any::<bool>().prop_map(Scalar::Boolean),
            any::<i8>().prop_map(Scalar::Int8),
            any::<i16>().prop_map(Scalar::Int16),
            any::<i32>().prop_map(Scalar::Int32),
            any::<i64>().prop_map(Scalar::Int64),
            any::<f32>().prop_map(Scalar::Float32),
            any::<f64>().prop_map(Scalar::Float64),
            prop_oneof![
                Just(f64::NAN),
                Just(f64::INFINITY),
                Just(f64::NEG_INFINITY),
                Just(-0.0)
            ]
            .prop_map(Scalar::Float64),
            prop_oneof![
                Just(f32::NAN),
                Just(f32::INFINITY),
                Just(f32::NEG_INFINITY),
                Just(-0.0f32)
            ]
            .prop_map(Scalar::Float32),
            (any::<i128>(), 1u8..=38, -10i8..=38).prop_map(|(value, precision, scale)| {
                Scalar::Decimal128 {
                    value,
                    precision,
                    scale,
                }
            }),
            ".*".prop_map(Scalar::Utf8),
            proptest::collection::vec(any::<u8>(), 0..16).prop_map(Scalar::Binary),
            any::<i32>().prop_map(Scalar::Date32),
            any::<i64>().prop_map(Scalar::Timestamp),
            any::<i64>().prop_map(Scalar::TimestampNtz),
        ]
    }

    proptest! {
        #[test]
        fn every_value_of_every_type_round_trips_through_json(s in scalar()) {
            let back = round_trip(&s);
            prop_assert!(same(&s, &back), "{s:?} came back as {back:?}");
        }
    }

    #[test]
    fn non_finite_floats_are_named() {
        let json = serde_json::to_string(&Scalar::Float64(f64::NEG_INFINITY)).unwrap();
        assert_eq!(json, r#"{"type":"double","value":"-Infinity"}"#);
        let err = serde_json::from_str::<Scalar>(r#"{"type":"double","value":"inf"}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("'inf'"), "{err}");
        let err = serde_json::from_str::<Scalar>(
            r#"{"type":"decimal","value":{"unscaled":"1e5","precision":5,"scale":0}}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("'1e5'"), "{err}");
    }
}
