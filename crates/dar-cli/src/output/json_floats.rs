//! JSON output of floats that JSON numbers cannot hold: NaN and ±Infinity
//! are written as the strings `"NaN"`, `"Infinity"` and `"-Infinity"` (as
//! Spark's `to_json` does), so they stay apart from NULL, which arrow-json
//! would otherwise write for all three. Finite values are written as
//! their shortest round-tripping text.

use std::io::Write;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{Array, PrimitiveArray};
use arrow_json::writer::{Encoder, EncoderFactory, EncoderOptions, NullableEncoder};
use arrow_schema::{ArrowError, DataType, FieldRef};

/// Makes [`FloatEncoder`]s for every `float` and `double` array.
#[derive(Debug)]
pub(crate) struct FloatsAsText;

/// Writes one float array's values.
struct FloatEncoder<'a, T: arrow_array::ArrowPrimitiveType> {
    array: &'a PrimitiveArray<T>,
}

fn write_float(out: &mut Vec<u8>, v: f64, text: impl std::fmt::Debug) {
    // Writing to a Vec cannot fail.
    let _ = if v.is_nan() {
        out.write_all(b"\"NaN\"")
    } else if v == f64::INFINITY {
        out.write_all(b"\"Infinity\"")
    } else if v == f64::NEG_INFINITY {
        out.write_all(b"\"-Infinity\"")
    } else {
        write!(out, "{text:?}")
    };
}

impl Encoder for FloatEncoder<'_, Float64Type> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        let v = self.array.value(idx);
        write_float(out, v, v);
    }
}

impl Encoder for FloatEncoder<'_, Float32Type> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        let v = self.array.value(idx);
        write_float(out, f64::from(v), v);
    }
}

impl EncoderFactory for FloatsAsText {
    fn make_default_encoder<'a>(
        &self,
        _field: &'a FieldRef,
        array: &'a dyn Array,
        _options: &'a EncoderOptions,
    ) -> Result<Option<NullableEncoder<'a>>, ArrowError> {
        let encoder: Box<dyn Encoder + 'a> = match array.data_type() {
            DataType::Float64 => Box::new(FloatEncoder {
                array: array.as_primitive::<Float64Type>(),
            }),
            DataType::Float32 => Box::new(FloatEncoder {
                array: array.as_primitive::<Float32Type>(),
            }),
            _ => return Ok(None),
        };
        Ok(Some(NullableEncoder::new(encoder, array.nulls().cloned())))
    }
}

/// The factory, to hand to `arrow_json::WriterBuilder::with_encoder_factory`.
pub(crate) fn floats_as_text() -> Arc<dyn EncoderFactory> {
    Arc::new(FloatsAsText)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Float32Array, Float64Array, RecordBatch};

    use super::*;

    #[test]
    fn non_finite_floats_are_strings_and_nulls_stay_null() {
        let batch = RecordBatch::try_from_iter([
            (
                "d",
                Arc::new(Float64Array::from(vec![
                    Some(f64::NAN),
                    Some(f64::INFINITY),
                    Some(f64::NEG_INFINITY),
                    None,
                    Some(-0.0),
                    Some(0.1),
                ])) as _,
            ),
            (
                "f",
                Arc::new(Float32Array::from(vec![
                    Some(f32::NAN),
                    Some(0.1),
                    None,
                    Some(1e30),
                    Some(f32::NEG_INFINITY),
                    Some(2.5),
                ])) as _,
            ),
        ])
        .unwrap();
        let mut out = Vec::new();
        let mut w = arrow_json::WriterBuilder::new()
            .with_explicit_nulls(true)
            .with_encoder_factory(floats_as_text())
            .build::<_, arrow_json::writer::LineDelimited>(&mut out);
        w.write(&batch).unwrap();
        w.finish().unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], r#"{"d":"NaN","f":"NaN"}"#);
        assert_eq!(lines[1], r#"{"d":"Infinity","f":0.1}"#);
        assert_eq!(lines[2], r#"{"d":"-Infinity","f":null}"#);
        assert_eq!(lines[3], r#"{"d":null,"f":1e30}"#);
        assert_eq!(lines[4], r#"{"d":-0.0,"f":"-Infinity"}"#);
        assert_eq!(lines[5], r#"{"d":0.1,"f":2.5}"#);
    }
}
