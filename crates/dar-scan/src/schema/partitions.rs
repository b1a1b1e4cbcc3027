//! Partition columns: one value per file (protocol §7), typed once per
//! file as a one-row array of the column's type, then repeated to the
//! length a batch needs.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::TimestampMicrosecondType;
use arrow_array::{Array, ArrayRef, UInt32Array, new_null_array};
use arrow_schema::{DataType, TimeUnit};
use dar_prune::Scalar;

use crate::errors::error::{Result, ScanError};

/// `value` as a one-row array of `data_type` (the partition column
/// `column` of the data file at `path`, for errors).
pub(crate) fn value_array(
    path: &str,
    column: &str,
    value: &Scalar,
    data_type: &DataType,
) -> Result<ArrayRef> {
    if value.is_null() {
        return Ok(new_null_array(data_type, 1));
    }
    let one = value.to_array();
    if one.data_type() == data_type {
        return Ok(one);
    }
    // Literal types differ from the column type only in labels (a timestamp
    // zone spelled "+00:00" vs "UTC"); anything else is a wrong task.
    match (one.data_type(), data_type) {
        (
            DataType::Timestamp(TimeUnit::Microsecond, _),
            DataType::Timestamp(TimeUnit::Microsecond, tz),
        ) => {
            let v = one.as_primitive::<TimestampMicrosecondType>().clone();
            Ok(Arc::new(v.with_timezone_opt(tz.clone())))
        }
        (found, expected) => Err(ScanError::InvalidTask {
            path: path.to_string(),
            reason: format!(
                "partition column '{column}': value of type {found} for a {expected} column"
            ),
        }),
    }
}

/// `rows` copies of the one-row array `one`.
pub(crate) fn repeat(path: &str, one: &ArrayRef, rows: usize) -> Result<ArrayRef> {
    if rows == one.len() {
        return Ok(Arc::clone(one));
    }
    let zeros = UInt32Array::from(vec![0u32; rows]);
    arrow_select::take::take(one.as_ref(), &zeros, None)
        .map_err(|e| ScanError::arrow("repeating a partition value", path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_typed_once_and_repeated() {
        let one = value_array("f", "p", &Scalar::Utf8("x".into()), &DataType::Utf8).unwrap();
        let a = repeat("f", &one, 3).unwrap();
        assert_eq!(a.len(), 3);
        assert_eq!(a.as_string::<i32>().value(2), "x");
        let t = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
        let one = value_array("f", "p", &Scalar::Timestamp(5), &t).unwrap();
        assert_eq!(repeat("f", &one, 2).unwrap().data_type(), &t);
        let one = value_array("f", "p", &Scalar::Null, &DataType::Int32).unwrap();
        assert_eq!(repeat("f", &one, 2).unwrap().null_count(), 2);
        let err = value_array("f", "p", &Scalar::Int64(1), &DataType::Utf8).unwrap_err();
        assert!(err.to_string().contains("partition column 'p'"));
    }
}
