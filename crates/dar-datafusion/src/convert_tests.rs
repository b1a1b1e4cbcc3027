use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit};
use dar_prune::{Expr, Scalar, col as dcol};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{Expr as DfExpr, TableProviderFilterPushDown as P, cast};
use datafusion::prelude::{col, lit};

use super::*;

fn dar_schema() -> Schema {
    Schema::new(vec![
        Field::new("i", DataType::Int32, true),
        Field::new("l", DataType::Int64, true),
        Field::new("s", DataType::Utf8, true),
        Field::new(
            "st",
            DataType::Struct(Fields::from(vec![Field::new("x", DataType::Int64, true)])),
            true,
        ),
        Field::new("day", DataType::Date32, true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
        Field::new("b", DataType::Boolean, true),
    ])
}

fn df_schema() -> Schema {
    crate::options::DeltaScanOptions::new().datafusion_schema(&dar_schema(), &["day".to_string()])
}

fn check(filter: DfExpr) -> (P, Option<Expr>) {
    let (dar, df) = (dar_schema(), df_schema());
    let schemas = Schemas {
        datafusion: &df,
        dar: &dar,
    };
    (
        classify(&filter, schemas),
        convert(&filter, schemas).map(|c| c.expr),
    )
}

fn get_field(base: DfExpr, name: &str) -> DfExpr {
    datafusion::functions::core::expr_fn::get_field(base, name)
}

#[test]
fn comparisons_and_logic_are_exact() {
    let (p, e) = check(col("l").gt(lit(5i64)));
    assert_eq!(p, P::Exact);
    assert_eq!(e, Some(dcol("l").gt(dar_prune::lit(5i64))));

    // A literal on the left is fine; dar normalizes it when binding.
    assert_eq!(check(lit(5i64).lt_eq(col("l"))).0, P::Exact);
    let f = col("i").eq(lit(1i32)).or(!col("s").is_null());
    assert_eq!(check(f).0, P::Exact);
    let (p, e) = check(col("i").in_list(vec![lit(1i32), lit(2i32)], true));
    assert_eq!(p, P::Exact);
    assert!(matches!(e, Some(Expr::InList { negated: true, ref list, .. }) if list.len() == 2));
    assert_eq!(check(col("l").between(lit(1i64), lit(9i64))).0, P::Exact);
    assert_eq!(check(col("b")).0, P::Exact);
    assert_eq!(check(col("s").is_not_null()).0, P::Exact);
}

#[test]
fn nested_fields_and_casts() {
    let (p, e) = check(get_field(col("st"), "x").gt_eq(lit(3i64)));
    assert_eq!(p, P::Exact);
    assert_eq!(e, Some(dcol("st.x").gt_eq(dar_prune::lit(3i64))));

    // A literal cast is evaluated; a dictionary partition column decoded
    // to its value type is the column itself.
    let day = cast(col("day"), DataType::Date32).eq(cast(lit("2024-01-02"), DataType::Date32));
    let (p, e) = check(day);
    assert_eq!(p, P::Exact);
    assert_eq!(
        e,
        Some(dcol("day").eq(Expr::Literal(Scalar::Date32(19_724))))
    );
    // Integer widening keeps order; narrowing does not convert.
    assert_eq!(
        check(cast(col("i"), DataType::Int64).gt(lit(7i64))).0,
        P::Exact
    );
    assert_eq!(
        check(cast(col("l"), DataType::Int32).gt(lit(7i32))).0,
        P::Unsupported
    );
}

#[test]
fn like_prefixes() {
    let (p, e) = check(col("s").like(lit("ab%")));
    assert_eq!(p, P::Exact);
    assert_eq!(e, Some(dcol("s").starts_with("ab")));
    // Only implied: DataFusion filters again.
    let (p, e) = check(col("s").like(lit("a%b")));
    assert_eq!(p, P::Inexact);
    assert_eq!(e, Some(dcol("s").starts_with("a")));
    assert_eq!(check(col("s").like(lit("ab_%"))).0, P::Inexact);
    assert_eq!(check(col("s").like(lit("ab"))).0, P::Inexact);
    // NOT of a weaker predicate is not implied.
    assert_eq!(check(col("s").not_like(lit("a%b"))).0, P::Unsupported);
    assert_eq!(check(col("s").not_like(lit("a%"))).0, P::Exact);
    assert_eq!(check(col("s").ilike(lit("a%"))).0, P::Unsupported);
}

#[test]
fn partial_conversions_are_inexact_or_unsupported() {
    // Column against column: dar-prune compares columns with literals.
    let other = col("i").gt(col("l"));
    assert_eq!(check(other.clone()).0, P::Unsupported);
    let (p, e) = check(col("l").gt(lit(1i64)).and(other.clone()));
    assert_eq!(p, P::Inexact);
    assert_eq!(e, Some(dcol("l").gt(dar_prune::lit(1i64))));
    assert_eq!(check(col("l").gt(lit(1i64)).or(other)).0, P::Unsupported);
    // A number past the column's range compares by value: no row matches.
    assert_eq!(check(col("i").gt(lit(10_000_000_000i64))).0, P::Exact);
    // A literal of another kind does not bind.
    assert_eq!(check(col("i").gt(lit("x"))).0, P::Unsupported);
    // An unknown column does not bind either.
    assert_eq!(check(col("nope").gt(lit(1i64))).0, P::Unsupported);
}

#[test]
fn literals_of_every_type() {
    let ts = ScalarValue::TimestampNanosecond(Some(1_000), Some("+00:00".into()));
    assert_eq!(scalar(&ts), Some(Scalar::Timestamp(1)));
    let sub_micro = ScalarValue::TimestampNanosecond(Some(1_001), None);
    assert_eq!(scalar(&sub_micro), None);
    assert_eq!(
        scalar(&ScalarValue::TimestampMillisecond(Some(2), None)),
        Some(Scalar::TimestampNtz(2_000))
    );
    assert_eq!(
        scalar(&ScalarValue::Date64(Some(86_400_000))),
        Some(Scalar::Date32(1))
    );
    assert_eq!(scalar(&ScalarValue::Date64(Some(1))), None);
    assert_eq!(
        scalar(&ScalarValue::Utf8View(Some("x".into()))),
        Some(Scalar::Utf8("x".into()))
    );
    assert_eq!(
        scalar(&ScalarValue::Decimal128(Some(-5), 5, 2)),
        Some(Scalar::Decimal128 {
            value: -5,
            precision: 5,
            scale: 2
        })
    );
    assert_eq!(scalar(&ScalarValue::Int32(None)), Some(Scalar::Null));
    assert_eq!(scalar(&ScalarValue::UInt64(Some(u64::MAX))), None);
    let dict = ScalarValue::Dictionary(
        Box::new(DataType::UInt16),
        Box::new(ScalarValue::Int16(Some(3))),
    );
    assert_eq!(scalar(&dict), Some(Scalar::Int16(3)));
    assert_eq!(
        scalar(&ScalarValue::FixedSizeBinary(2, Some(vec![1, 2]))),
        Some(Scalar::Binary(vec![1, 2]))
    );
}

/// Forms DataFusion's simplifier hands back for filters it was told are
/// exact: NULL literals in boolean positions (`x IN (1, NULL)` becomes
/// `x = 1 OR NULL`), bare boolean literals, `NOT NULL`.
#[test]
fn simplified_forms_stay_exact() {
    let null = lit(ScalarValue::Boolean(None));
    for f in [
        col("i").eq(lit(1i32)).or(null.clone()),
        col("i").not_eq(lit(1i32)).and(null.clone()),
        null.clone(),
        !null.clone(),
        lit(ScalarValue::Null),
        lit(true),
        lit(false).or(col("b")),
        col("i").eq(lit(ScalarValue::Int32(None))),
        cast(lit(ScalarValue::Null), DataType::Boolean),
        !col("b"),
    ] {
        assert_eq!(check(f.clone()).0, P::Exact, "{f}");
    }
}

/// Casts that keep every value and its order: the comparison moves to the
/// column, which dar-prune compares with the literal by value.
#[test]
fn lossless_numeric_casts_are_the_column() {
    let f = cast(col("i"), DataType::Float64).gt(lit(2.5f64));
    let (p, e) = check(f);
    assert_eq!(p, P::Exact);
    assert_eq!(e, Some(dcol("i").gt(dar_prune::lit(2.5f64))));
    let f = cast(col("i"), DataType::Decimal128(12, 2)).lt(lit(ScalarValue::Decimal128(
        Some(1005),
        12,
        2,
    )));
    assert_eq!(check(f).0, P::Exact);
    // Too few digits, or a cast that rounds: left to DataFusion.
    let f = cast(col("i"), DataType::Decimal128(5, 2)).lt(lit(ScalarValue::Decimal128(
        Some(1005),
        5,
        2,
    )));
    assert_eq!(check(f).0, P::Unsupported);
    let f = cast(col("l"), DataType::Float64).gt(lit(2.5f64));
    assert_eq!(check(f).0, P::Unsupported);
}
