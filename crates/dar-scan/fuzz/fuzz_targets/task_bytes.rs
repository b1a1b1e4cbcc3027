//! Scan tasks through their byte encoding: a task built from arbitrary
//! values (every scalar type for partition values, NaN and ±Infinity
//! included; DV descriptors; access selections) comes back equal from
//! `to_bytes`/`from_bytes`, and arbitrary bytes given to `from_bytes` (and
//! to `ScanSpec::from_bytes`) are a task, or an error, never a panic.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use dar_scan::{DvDescriptor, Scalar, ScanSpec, ScanTask};
use libfuzzer_sys::fuzz_target;

fn scalar(u: &mut Unstructured<'_>) -> arbitrary::Result<Scalar> {
    Ok(match u.int_in_range(0..=14)? {
        0 => Scalar::Null,
        1 => Scalar::Boolean(u.arbitrary()?),
        2 => Scalar::Int8(u.arbitrary()?),
        3 => Scalar::Int16(u.arbitrary()?),
        4 => Scalar::Int32(u.arbitrary()?),
        5 => Scalar::Int64(u.arbitrary()?),
        6 => Scalar::Float32(f32::from_bits(u.arbitrary()?)),
        7 => Scalar::Float64(f64::from_bits(u.arbitrary()?)),
        8 => Scalar::Decimal128 {
            value: u.arbitrary()?,
            precision: u.int_in_range(1..=38)?,
            scale: u.arbitrary()?,
        },
        9 => Scalar::Utf8(u.arbitrary()?),
        10 => Scalar::Binary(u.arbitrary()?),
        11 => Scalar::Date32(u.arbitrary()?),
        12 => Scalar::Timestamp(u.arbitrary()?),
        13 => Scalar::TimestampNtz(u.arbitrary()?),
        _ => Scalar::Float64(f64::NAN),
    })
}

/// Equal, with NaN equal to itself (bit patterns of NaN may differ).
fn same(a: &Scalar, b: &Scalar) -> bool {
    match (a, b) {
        (Scalar::Float32(x), Scalar::Float32(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
        (Scalar::Float64(x), Scalar::Float64(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
        _ => a == b,
    }
}

fuzz_target!(|data: &[u8]| {
    // Any bytes: a task or an error.
    let _ = ScanTask::from_bytes(data);
    let _ = ScanSpec::from_bytes(data);
    let mut u = Unstructured::new(data);
    // The current format number: a template of another format is refused.
    let template = format!(
        r#"{{"format":{},"producer":"fuzz","task":{{"object_path":"t/p.parquet","log_path":"p.parquet","size":null,"num_records":null,"partition_values":[],"deletion_vector":null,"access":null}}}}"#,
        ScanSpec::FORMAT
    );
    let Ok(template) = ScanTask::from_bytes(template.as_bytes()) else {
        panic!("the template task must decode");
    };
    let mut task = template;
    let Ok(n) = u.int_in_range(0..=4) else { return };
    for i in 0..n {
        let Ok(v) = scalar(&mut u) else { return };
        task.partition_values.push((format!("p{i}"), v));
    }
    if let Ok(true) = bool::arbitrary(&mut u) {
        let (Ok(kind), Ok(path), Ok(size), Ok(card)) = (
            u.choose(&["u", "i", "p", "x"]),
            String::arbitrary(&mut u),
            i64::arbitrary(&mut u),
            i64::arbitrary(&mut u),
        ) else {
            return;
        };
        let offset = u.arbitrary::<Option<i64>>().unwrap_or(None);
        task.deletion_vector = DvDescriptor::try_new(kind, path, offset, size, card).ok();
    }
    task.size = u.arbitrary().unwrap_or(None);
    task.num_records = u.arbitrary().unwrap_or(None);
    let Ok(bytes) = task.to_bytes() else {
        panic!("every task encodes");
    };
    let back = match ScanTask::from_bytes(&bytes) {
        Ok(t) => t,
        Err(e) => panic!("a task's own bytes decode: {e}"),
    };
    assert_eq!(back.partition_values.len(), task.partition_values.len());
    for ((n1, a), (n2, b)) in task.partition_values.iter().zip(&back.partition_values) {
        assert_eq!(n1, n2);
        assert!(same(a, b), "{a:?} came back as {b:?}");
    }
    assert_eq!(back.deletion_vector, task.deletion_vector);
    assert_eq!((back.size, back.num_records), (task.size, task.num_records));
});
