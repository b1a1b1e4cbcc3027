//! Partition columns: one constant per file (protocol §7), built from the
//! task's typed value and inserted at the column's schema position.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::TimestampMicrosecondType;
use arrow_array::{ArrayRef, UInt32Array, new_null_array};
use arrow_schema::{DataType, TimeUnit};

use crate::error::{Result, ScanError};
use crate::task::PartitionValue;

/// `rows` copies of `value` as an array of `data_type`.
pub(crate) fn constant_column(
    path: &str,
    column: &str,
    value: &PartitionValue,
    data_type: &DataType,
    rows: usize,
) -> Result<ArrayRef> {
    let invalid = |reason: String| ScanError::InvalidTask {
        path: path.to_string(),
        reason: format!("partition column '{column}': {reason}"),
    };
    let scalar = value
        .to_scalar()
        .ok_or_else(|| invalid("malformed decimal value".into()))?;
    if scalar.is_null() {
        return Ok(new_null_array(data_type, rows));
    }
    let one = scalar.to_array();
    // Literal types differ from the column type only in labels (a timestamp
    // zone spelled "+00:00" vs "UTC"); anything else is a wrong task.
    let one = if one.data_type() == data_type {
        one
    } else {
        match (one.data_type(), data_type) {
            (
                DataType::Timestamp(TimeUnit::Microsecond, _),
                DataType::Timestamp(TimeUnit::Microsecond, tz),
            ) => {
                let v = one.as_primitive::<TimestampMicrosecondType>().clone();
                Arc::new(v.with_timezone_opt(tz.clone())) as ArrayRef
            }
            (found, expected) => {
                return Err(invalid(format!(
                    "value of type {found} for a {expected} column"
                )));
            }
        }
    };
    let indices = UInt32Array::from(vec![0u32; rows]);
    let out = arrow_select::take::take(one.as_ref(), &indices, None)
        .map_err(|e| ScanError::arrow("repeating a partition value", path, e))?;
    Ok(Arc::clone(&out))
}

#[cfg(test)]
mod tests {
    use arrow_array::Array;

    use super::*;

    #[test]
    fn constants() {
        let a = constant_column(
            "f",
            "p",
            &PartitionValue::String("x".into()),
            &DataType::Utf8,
            3,
        )
        .unwrap();
        assert_eq!(a.len(), 3);
        assert_eq!(a.as_string::<i32>().value(2), "x");
        let t = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
        let a = constant_column("f", "p", &PartitionValue::Timestamp(5), &t, 2).unwrap();
        assert_eq!(a.data_type(), &t);
        let a = constant_column("f", "p", &PartitionValue::Null, &DataType::Int32, 2).unwrap();
        assert_eq!(a.null_count(), 2);
        let err =
            constant_column("f", "p", &PartitionValue::Long(1), &DataType::Utf8, 1).unwrap_err();
        assert!(err.to_string().contains("partition column 'p'"));
    }
}
