//! Feeds arbitrary text to the predicate parser, binds whatever parses to a
//! schema of every literal type (and a struct), then runs every pass over
//! it: pruning over file statistics, exact evaluation on a batch, display,
//! and parsing the displayed form back (which must bind and evaluate to
//! the same rows). The only acceptable outcomes are `Ok` or an error
//! blaming the predicate; a panic, a stack overflow, a disagreement, or an
//! evaluation error that blames dar (`BatchMismatch`, `Arrow`: the batch
//! has the schema the predicate was bound to) is a finding.

#![no_main]

use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Date32Array, Float64Array, Int32Array, Int64Array, RecordBatch,
    StringArray, StructArray, TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit};
use dar_prune::{FileStatistics, Predicate, PruneError, parse_expr};
use libfuzzer_sys::fuzz_target;

fn inner() -> Fields {
    vec![Field::new("x", DataType::Int32, true)].into()
}

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("i", DataType::Int64, true),
        Field::new("n", DataType::Int32, true),
        Field::new("f", DataType::Float64, true),
        Field::new("s", DataType::Utf8, true),
        Field::new("b", DataType::Boolean, true),
        Field::new("d", DataType::Date32, true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
        Field::new("st", DataType::Struct(inner()), true),
    ]))
}

fn batch() -> RecordBatch {
    let st = StructArray::new(
        inner(),
        vec![Arc::new(Int32Array::from(vec![Some(1), None, Some(-3), Some(7)])) as ArrayRef],
        None,
    );
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(vec![Some(0), Some(5), None, Some(-9)])),
        Arc::new(Int32Array::from(vec![Some(1), None, Some(2), Some(3)])),
        Arc::new(Float64Array::from(vec![Some(f64::NAN), Some(-0.0), Some(1.5), None])),
        Arc::new(StringArray::from(vec![Some("abc"), Some(""), None, Some("é")])),
        Arc::new(BooleanArray::from(vec![Some(true), Some(false), None, Some(true)])),
        Arc::new(Date32Array::from(vec![Some(0), Some(19_000), None, Some(-1)])),
        Arc::new(
            TimestampMicrosecondArray::from(vec![Some(0), Some(1_000_999), None, Some(-5)])
                .with_timezone("UTC"),
        ),
        Arc::new(st),
    ];
    RecordBatch::try_new(schema(), columns).expect("fixture batch")
}

fn files() -> FileStatistics {
    FileStatistics::builder(2)
        .with_num_records(Arc::new(Int64Array::from(vec![10, 10])))
        .with_min("i", Arc::new(Int64Array::from(vec![0, 100])))
        .with_max("i", Arc::new(Int64Array::from(vec![50, 200])))
        .with_null_count("i", Arc::new(Int64Array::from(vec![0, 3])))
        .with_min("s", Arc::new(StringArray::from(vec!["a", "m"])))
        .with_max("s", Arc::new(StringArray::from(vec!["l", "z"])))
        .build()
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(expr) = parse_expr(text) else {
        return;
    };
    let _ = expr.to_string();
    let Ok(p) = Predicate::try_new(expr, &schema()) else {
        return;
    };
    let outcome = p.prune(&files());
    assert_eq!(outcome.keep.len(), 2);
    let batch = batch();
    let rows = match p.evaluate(&batch) {
        Ok(rows) => rows,
        Err(e @ (PruneError::BatchMismatch { .. } | PruneError::Arrow { .. })) => {
            panic!("internal error evaluating `{text}`: {e}")
        }
        Err(_) => return,
    };
    assert_eq!(rows.len(), batch.num_rows());
    // The displayed form parses back to a predicate with the same rows.
    let shown = p.expr().to_string();
    let again = Predicate::parse(&shown, &schema())
        .unwrap_or_else(|e| panic!("`{shown}` (from `{text}`) does not parse back: {e}"));
    assert_eq!(again.evaluate(&batch).ok(), Some(rows), "`{shown}` from `{text}`");
});
