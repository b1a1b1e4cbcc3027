//! proptest strategies: batches with nulls, NaNs, signed zeros, long and
//! non-ASCII strings, sub-millisecond timestamps and nested structs; and
//! random predicates over them, numbers compared with literals of every
//! numeric type (`i > 2.5`, `dec < 1.005`, `g = 0.1`, `i = 1e30`).

use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array, Int32Array,
    RecordBatch, StringArray, StructArray, TimestampMicrosecondArray,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use dar_prune::{CmpOp, Expr, Scalar, col, lit};
use proptest::prelude::*;
use proptest::sample::select;

pub const COLUMNS: [&str; 9] = ["i", "f", "s", "d", "ts", "dec", "b", "st.x", "g"];

fn st_fields() -> Fields {
    vec![Field::new("x", DataType::Int32, true)].into()
}

pub fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("i", DataType::Int32, true),
        Field::new("f", DataType::Float64, true),
        Field::new("s", DataType::Utf8, true),
        Field::new("d", DataType::Date32, true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
        Field::new("dec", DataType::Decimal128(10, 2), true),
        Field::new("b", DataType::Boolean, true),
        Field::new("st", DataType::Struct(st_fields()), true),
        Field::new("g", DataType::Float32, true),
    ]))
}

fn int() -> BoxedStrategy<i32> {
    (-20i32..20).boxed()
}
fn float() -> BoxedStrategy<f64> {
    prop_oneof![
        6 => (-40i32..40).prop_map(|v| f64::from(v) / 2.0),
        1 => select(vec![f64::NAN, -f64::NAN, 0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY]),
    ]
    .boxed()
}
fn float32() -> BoxedStrategy<f32> {
    prop_oneof![
        6 => (-40i32..40).prop_map(|v| v as f32 / 4.0),
        1 => select(vec![0.1f32, 0.3, -0.1, 16_777_216.0, 16_777_218.0]),
        1 => select(vec![f32::NAN, -f32::NAN, 0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY]),
    ]
    .boxed()
}
fn string() -> BoxedStrategy<String> {
    let chars = select(vec![
        'a',
        'b',
        'c',
        'é',
        '\u{7F}',
        '\u{FFFD}',
        '\u{10000}',
        '\u{10FFFD}',
    ]);
    prop_oneof![
        3 => prop::collection::vec(select(vec!['a', 'b', 'c']), 0..4).prop_map(|v| v.into_iter().collect()),
        2 => prop::collection::vec(chars, 0..45).prop_map(|v| v.into_iter().collect()),
        3 => (0usize..12, select(vec!['a', 'b'])).prop_map(|(n, c)| format!("{}{c}", "a".repeat(28 + n))),
    ]
    .boxed()
}
fn date() -> BoxedStrategy<i32> {
    (-5i32..30).boxed()
}
fn micros() -> BoxedStrategy<i64> {
    (0i64..8, prop_oneof![Just(0i64), Just(999), 0i64..1000])
        .prop_map(|(ms, us)| ms * 1000 + us)
        .boxed()
}
fn decimal() -> BoxedStrategy<i128> {
    (-2000i128..2000).boxed()
}

type Order<T> = Option<fn(&T, &T) -> std::cmp::Ordering>;

fn column<T: std::fmt::Debug + Clone + 'static>(
    rows: usize,
    values: BoxedStrategy<T>,
    order: Order<T>,
) -> BoxedStrategy<Vec<Option<T>>> {
    (
        prop::collection::vec(prop::option::weighted(0.85, values), rows),
        any::<bool>(),
    )
        .prop_map(move |(mut v, sort)| {
            if let (true, Some(order)) = (sort, order) {
                // Clustered data is what lets pruning skip anything at all.
                v.sort_by(|a, b| match (a, b) {
                    (Some(a), Some(b)) => order(a, b),
                    (a, b) => a.is_some().cmp(&b.is_some()),
                });
            }
            v
        })
        .boxed()
}

pub fn batch(max_rows: usize) -> impl Strategy<Value = RecordBatch> {
    (1..max_rows).prop_flat_map(|rows| {
        (
            column(rows, int(), Some(Ord::cmp)),
            column(rows, float(), Some(f64::total_cmp)),
            column(rows, string(), Some(Ord::cmp)),
            column(rows, date(), Some(Ord::cmp)),
            column(rows, micros(), Some(Ord::cmp)),
            column(rows, decimal(), Some(Ord::cmp)),
            column(rows, any::<bool>().boxed(), None),
            (
                column(rows, int(), Some(Ord::cmp)),
                prop::collection::vec(prop::bool::weighted(0.9), rows),
            ),
            column(rows, float32(), Some(f32::total_cmp)),
        )
            .prop_map(|(i, f, s, d, ts, dec, b, (x, st_valid), g)| {
                let st = StructArray::new(
                    st_fields(),
                    vec![Arc::new(Int32Array::from(x)) as ArrayRef],
                    Some(NullBuffer::from(st_valid)),
                );
                let columns: Vec<ArrayRef> = vec![
                    Arc::new(Int32Array::from(i)),
                    Arc::new(Float64Array::from(f)),
                    Arc::new(StringArray::from(s)),
                    Arc::new(Date32Array::from(d)),
                    Arc::new(TimestampMicrosecondArray::from(ts).with_timezone("UTC")),
                    Arc::new(
                        Decimal128Array::from(dec)
                            .with_precision_and_scale(10, 2)
                            .unwrap(),
                    ),
                    Arc::new(BooleanArray::from(b)),
                    Arc::new(st),
                    Arc::new(Float32Array::from(g)),
                ];
                RecordBatch::try_new(schema(), columns).unwrap()
            })
    })
}

fn decimal_literal(scale: i8) -> impl Fn(i128) -> Scalar {
    move |value| Scalar::Decimal128 {
        value,
        precision: 10,
        scale,
    }
}

/// Numbers past every column's range, and NaN (above every number).
fn extreme() -> BoxedStrategy<Scalar> {
    select(vec![
        Scalar::Float64(1e30),
        Scalar::Float64(-1e30),
        Scalar::Float64(f64::NAN),
        Scalar::Float64(f64::INFINITY),
        Scalar::Float64(f64::NEG_INFINITY),
        Scalar::Int64(3_000_000_000),
        Scalar::Int64(-3_000_000_000),
    ])
    .boxed()
}

/// Literals of the column's value domain, some of them of another numeric
/// type than the column's (plus the odd NULL).
fn literal(column: &str) -> BoxedStrategy<Scalar> {
    let value: BoxedStrategy<Scalar> = match column {
        "i" | "st.x" => prop_oneof![
            12 => int().prop_map(|v| Scalar::Int64(i64::from(v))),
            4 => (-250i128..250).prop_map(decimal_literal(1)),
            3 => (-90i32..90).prop_map(|v| Scalar::Float64(f64::from(v) / 4.0)),
            1 => extreme(),
        ]
        .boxed(),
        "f" => prop_oneof![
            12 => float().prop_map(Scalar::Float64),
            2 => int().prop_map(|v| Scalar::Int64(i64::from(v))),
            2 => (-250i128..250).prop_map(decimal_literal(1)),
        ]
        .boxed(),
        "g" => prop_oneof![
            4 => (-40i32..40).prop_map(|v| Scalar::Float64(f64::from(v) / 4.0)),
            3 => float32().prop_map(Scalar::Float32),
            2 => select(vec![0.1f64, 0.3, -0.1, 16_777_217.0]).prop_map(Scalar::Float64),
            2 => select(vec![1i128, 3, -1]).prop_map(decimal_literal(1)),
            1 => float().prop_map(Scalar::Float64),
        ]
        .boxed(),
        "s" => string().prop_map(Scalar::Utf8).boxed(),
        "d" => date().prop_map(Scalar::Date32).boxed(),
        "ts" => micros().prop_map(Scalar::Timestamp).boxed(),
        "dec" => prop_oneof![
            12 => decimal().prop_map(decimal_literal(2)),
            3 => (-20_000i128..20_000).prop_map(decimal_literal(3)),
            2 => int().prop_map(|v| Scalar::Int64(i64::from(v))),
            2 => (-90i32..90).prop_map(|v| Scalar::Float64(f64::from(v) / 4.0)),
            1 => prop_oneof![extreme(), Just(Scalar::Int64(1_000_000_000))],
        ]
        .boxed(),
        _ => any::<bool>().prop_map(Scalar::Boolean).boxed(),
    };
    prop_oneof![20 => value, 1 => Just(Scalar::Null)].boxed()
}

fn op() -> impl Strategy<Value = CmpOp> {
    select(vec![
        CmpOp::Eq,
        CmpOp::NotEq,
        CmpOp::Lt,
        CmpOp::LtEq,
        CmpOp::Gt,
        CmpOp::GtEq,
    ])
}

fn leaf() -> BoxedStrategy<Expr> {
    select(COLUMNS.to_vec())
        .prop_flat_map(|c| {
            let l = literal(c);
            let mut options: Vec<BoxedStrategy<Expr>> = vec![
                (op(), l.clone())
                    .prop_map(move |(op, v)| col(c).compare(op, lit(v)))
                    .boxed(),
                // Short lists, and long ones (past the sorted-lookup
                // threshold of the evaluator and the pruning rules).
                (
                    prop_oneof![
                        3 => prop::collection::vec(l.clone(), 1..4),
                        1 => prop::collection::vec(l.clone(), 9..30),
                    ],
                    any::<bool>(),
                )
                    .prop_map(move |(list, neg)| {
                        if neg {
                            col(c).not_in_list(list)
                        } else {
                            col(c).in_list(list)
                        }
                    })
                    .boxed(),
                any::<bool>()
                    .prop_map(move |neg| {
                        if neg {
                            col(c).is_not_null()
                        } else {
                            col(c).is_null()
                        }
                    })
                    .boxed(),
                (l.clone(), l, any::<bool>())
                    .prop_map(move |(a, b, neg)| {
                        if neg {
                            col(c).not_between(a, b)
                        } else {
                            col(c).between(a, b)
                        }
                    })
                    .boxed(),
            ];
            if c == "s" {
                options.push(
                    (string(), 0usize..6, any::<bool>())
                        .prop_map(|(s, n, neg)| {
                            let p: String = s.chars().take(n).collect();
                            if neg {
                                col("s").not_starts_with(p)
                            } else {
                                col("s").starts_with(p)
                            }
                        })
                        .boxed(),
                );
            }
            if c == "b" {
                options.push(Just(col("b")).boxed());
            }
            proptest::strategy::Union::new(options)
        })
        .boxed()
}

pub fn predicate() -> impl Strategy<Value = Expr> {
    leaf().prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| a.and(b)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| a.or(b)),
            prop::collection::vec(inner.clone(), 0..5).prop_map(Expr::and_all),
            prop::collection::vec(inner.clone(), 0..5).prop_map(Expr::or_any),
            inner.prop_map(Expr::not),
        ]
    })
}
