//! Filters pushed into dar return what DataFusion returns without them:
//! every form DataFusion's simplifier hands the scan (NULL literals in
//! boolean positions, `x = NULL`, short `IN` lists as `OR`s, boolean
//! literals, `NOT` pushed in), floats in SQL's order (`-0.0 = 0.0`, NaN
//! above all, in data, statistics and partition values), and numbers
//! compared across numeric types, over a hand-written table whose
//! statistics say what writers say (`min = max = -0.0`, `-0.0` as a zero
//! minimum and `0.0` as a zero maximum, NaN left out).

use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Decimal128Array, Float64Array, Int32Array, Int64Array, RecordBatch,
    StringArray,
};
use arrow_schema::{DataType, Field, Schema};
use dar_datafusion::DeltaTableProvider;
use dar_testkit::HandTable;
use datafusion::catalog::TableProvider;
use datafusion::physical_plan::collect;
use datafusion::prelude::{SessionContext, col, lit};
use serde_json::{Value, json};

use crate::agree::{contexts, lines, plan, same_rows};

/// One data file: ids, x (double), n (int), fare (decimal(8, 2), cents),
/// s, b; its partition values (p double, q int) and x's stats bounds.
struct File {
    id: Vec<i64>,
    x: Vec<Option<f64>>,
    n: Vec<Option<i32>>,
    fare: Vec<Option<i128>>,
    s: Vec<Option<&'static str>>,
    b: Vec<Option<bool>>,
    p: Value,
    q: Value,
    x_bounds: Option<(f64, f64)>,
}

fn files() -> Vec<File> {
    vec![
        // Stats min = max = -0.0 (a writer that keeps the zero's sign).
        File {
            id: vec![1, 2, 3],
            x: vec![Some(-0.0), Some(-0.0), None],
            n: vec![Some(1), Some(2), Some(3)],
            fare: vec![Some(1000), Some(1001), None],
            s: vec![Some("a"), Some("ab"), None],
            b: vec![Some(true), Some(false), None],
            p: json!("-0.0"),
            q: json!("1"),
            x_bounds: Some((-0.0, -0.0)),
        },
        // NaN left out of the bounds, as Parquet and Delta writers do.
        File {
            id: vec![4, 5, 6],
            x: vec![Some(0.0), Some(1.5), Some(f64::NAN)],
            n: vec![Some(2), Some(3), Some(4)],
            fare: vec![Some(999), Some(1000), Some(-1)],
            s: vec![Some("b"), Some(""), Some("ünï")],
            b: vec![Some(true), Some(true), Some(false)],
            p: json!("0.0"),
            q: json!("2"),
            x_bounds: Some((0.0, 1.5)),
        },
        // The Parquet spec's zeros: -0.0 as the minimum, 0.0 as the maximum.
        File {
            id: vec![7, 8],
            x: vec![Some(0.0), Some(-0.0)],
            n: vec![None, Some(5)],
            fare: vec![Some(0), Some(9_999_999)],
            s: vec![Some("abc"), Some("z")],
            b: vec![None, Some(true)],
            p: json!("NaN"),
            q: Value::Null,
            x_bounds: Some((-0.0, 0.0)),
        },
        File {
            id: vec![9, 10, 11],
            x: vec![Some(f64::NEG_INFINITY), Some(-1.0), Some(f64::INFINITY)],
            n: vec![Some(-1), Some(i32::MAX), Some(i32::MIN)],
            fare: vec![Some(-9_999_999), Some(250), Some(1005)],
            s: vec![Some("ab"), None, Some("abd")],
            b: vec![Some(false), None, Some(true)],
            p: Value::Null,
            q: json!("3"),
            x_bounds: None,
        },
        File {
            id: vec![12],
            x: vec![Some(2.5)],
            n: vec![Some(0)],
            fare: vec![Some(1)],
            s: vec![Some("c")],
            b: vec![Some(false)],
            p: json!("Infinity"),
            q: json!("-2147483648"),
            x_bounds: Some((2.5, 2.5)),
        },
    ]
}

pub fn write(dir: &std::path::Path) {
    let mut t = HandTable::new(dir).unwrap();
    let field = |n: &str, ty: &str| HandTable::field(n, json!(ty), json!({}));
    let fields = json!([
        field("id", "long"),
        field("x", "double"),
        field("n", "integer"),
        field("fare", "decimal(8,2)"),
        field("s", "string"),
        field("b", "boolean"),
        field("p", "double"),
        field("q", "integer"),
    ]);
    let mut actions = vec![
        HandTable::protocol(),
        HandTable::metadata(fields, &["p", "q"], json!({})),
    ];
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("x", DataType::Float64, true),
        Field::new("n", DataType::Int32, true),
        Field::new("fare", DataType::Decimal128(8, 2), true),
        Field::new("s", DataType::Utf8, true),
        Field::new("b", DataType::Boolean, true),
    ]));
    for (i, f) in files().into_iter().enumerate() {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(f.id.clone())),
            Arc::new(Float64Array::from(f.x.clone())),
            Arc::new(Int32Array::from(f.n.clone())),
            Arc::new(
                Decimal128Array::from(f.fare.clone())
                    .with_precision_and_scale(8, 2)
                    .unwrap(),
            ),
            Arc::new(StringArray::from(f.s.clone())),
            Arc::new(BooleanArray::from(f.b.clone())),
        ];
        let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
        let path = format!("part-{i}.parquet");
        let size = t.write_parquet(&path, &batch).unwrap();
        let ids = &f.id;
        let (lo, hi) = (ids[0], ids[ids.len() - 1]);
        let nulls = f.x.iter().filter(|v| v.is_none()).count();
        let mut stats = json!({
            "numRecords": ids.len(),
            "minValues": {"id": lo},
            "maxValues": {"id": hi},
            "nullCount": {"id": 0, "x": nulls},
        });
        if let Some((min, max)) = f.x_bounds {
            stats["minValues"]["x"] = json!(min);
            stats["maxValues"]["x"] = json!(max);
        }
        actions.push(HandTable::add(
            &path,
            size,
            json!({"p": f.p, "q": f.q}),
            Some(stats),
        ));
    }
    t.commit(&actions).unwrap();
}

/// Filters of every shape, over data, partition and boolean columns.
const FILTERS: &[&str] = &[
    // -0.0 and 0.0, in data, statistics and partition values.
    "x = 0",
    "x = -0.0",
    "x = 0.0",
    "x <> 0",
    "x < 0",
    "x <= -0.0",
    "x > 0",
    "x >= 0",
    "x > -0.0",
    "x BETWEEN -0.0 AND 0",
    "x NOT BETWEEN 0 AND 0",
    "x IN (0, 2.5)",
    "x IN (-0.0)",
    "x NOT IN (0.0)",
    "x NOT IN (1.5, -1)",
    "p = 0",
    "p = -0.0",
    "p < 0",
    "p <= 0",
    "p > 0",
    "p <> 0",
    "p IN (0, 1)",
    // NaN: one value, above every other, +inf included.
    "x = 'NaN'::double",
    "x > 'Infinity'::double",
    "x >= 1e308",
    "x < 'NaN'::double",
    "x <> 'NaN'::double",
    "p = 'NaN'::double",
    "p > 1",
    "p < 'NaN'::double",
    "x IN ('NaN'::double, 1.5)",
    // NULL in every boolean position the simplifier leaves it.
    "id IN (1, NULL)",
    "id NOT IN (1, NULL)",
    "id IN (NULL)",
    "id NOT IN (NULL)",
    "id IN (1, 2, 3, 4, NULL)",
    "id NOT IN (1, 2, 3, 4, NULL)",
    "id = NULL",
    "NOT (id = NULL)",
    "id <> NULL OR id = 1",
    "NULL AND id = 1",
    "NULL OR id = 1",
    "NOT (NULL OR id > 3)",
    "id BETWEEN NULL AND 3",
    "id NOT BETWEEN 2 AND NULL",
    "q IN (1, NULL)",
    "q NOT IN (1, NULL)",
    "q = NULL",
    "x = NULL OR p = NULL",
    "(x IN (0, NULL)) IS NULL",
    "TRUE",
    "FALSE",
    "NOT FALSE",
    "id = 1 OR TRUE",
    "id = 1 AND FALSE",
    "CAST(NULL AS BOOLEAN)",
    "NOT (id IN (1, 2))",
    "NOT (NOT (id > 4))",
    "NOT (id > 4 AND n < 3)",
    // Booleans.
    "b",
    "NOT b",
    "b = true",
    "b = false",
    "b <> true",
    "b IS TRUE",
    "b IS NOT TRUE",
    "b IS FALSE",
    "b IS NOT FALSE",
    "b IS UNKNOWN",
    "b IS NULL",
    "b OR id = 9",
    "coalesce(b, false)",
    "CASE WHEN id = 1 THEN true ELSE b END",
    // Numbers across numeric types.
    "n > 2.5",
    "n >= 2.5",
    "n < 2.5",
    "n = 2.5",
    "n <> 2.5",
    "n IN (2, 2.5)",
    "n IN (2.5)",
    "n NOT IN (2.5)",
    "n = 3.0",
    "n > 1e10",
    "n < -1e10",
    "n BETWEEN 1.5 AND 3.5",
    "CAST(n AS DOUBLE) > 2.5",
    "fare < 10.005",
    "fare <= 10.00",
    "fare = 10.001",
    "fare > 10",
    "fare IN (10, 10.005)",
    "fare > 99999.995",
    "q > 2.5",
    "q < -2147483648.5",
    // Strings, ranges and the rest.
    "s LIKE 'a%'",
    "s LIKE 'ab'",
    "s NOT LIKE 'a%'",
    "s LIKE '%'",
    "s = ''",
    "s > 'ab' AND s < 'b'",
    "s IN ('a', 'z', NULL)",
    "id > 3 AND abs(x) < 2",
    "id > 3 OR abs(x) < 2",
    "id > 5 AND s LIKE 'a%b'",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pushed_down_filters_return_what_datafusion_returns() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path());
    let ctx = contexts(dir.path().to_str().unwrap(), "t").await;
    for f in FILTERS {
        same_rows(&ctx, "t", "id", f).await;
    }
    let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // DataFusion's own IN of more than three floats compares bits (so does
    // an OR of as many equalities, which it turns into an IN), so that -0.0
    // is not IN (0, ...) although -0.0 = 0 holds: dar answers as `=` does.
    let mut zeros = ids(&["1", "2", "4", "7", "8"]);
    zeros.sort();
    assert_eq!(
        lines(
            &ctx,
            "SELECT id FROM t WHERE x IN (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)"
        )
        .await,
        Ok(zeros.clone())
    );
    // The answers themselves, for the cases this is about.
    assert_eq!(same_rows(&ctx, "t", "id", "x = 0").await, zeros);
    assert_eq!(same_rows(&ctx, "t", "id", "x < 0").await, ids(&["10", "9"]));
    assert_eq!(
        same_rows(&ctx, "t", "id", "p = 0").await,
        ids(&["1", "2", "3", "4", "5", "6"])
    );
    assert_eq!(
        same_rows(&ctx, "t", "id", "id IN (1, NULL)").await,
        ids(&["1"])
    );
    assert!(
        same_rows(&ctx, "t", "id", "id NOT IN (1, NULL)")
            .await
            .is_empty()
    );
    assert_eq!(
        same_rows(&ctx, "t", "id", "x > 'Infinity'::double").await,
        ids(&["6"])
    );
    assert_eq!(same_rows(&ctx, "t", "id", "n > 2.5").await.len(), 5);
    assert_eq!(same_rows(&ctx, "t", "id", "fare < 10.005").await.len(), 8);
}

/// A query DataFusion cannot push down (`x + 0`, `abs`) has the rows of the
/// same filter pushed down, over the Delta table itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pushed_and_unpushable_forms_agree() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path());
    let ctx = contexts(dir.path().to_str().unwrap(), "t").await;
    for (pushed, kept) in [
        ("x = 0", "x + 0 = 0"),
        ("x < 0", "x + 0 < 0"),
        ("x <= 0 AND x >= 0", "abs(x) = 0"),
        ("p = 0", "abs(CAST(p AS DOUBLE)) = 0"),
        ("p < 0", "p + 1 < 1"),
        ("x < 0", "x + 1 < 1"),
        ("x = 'NaN'::double", "isnan(x)"),
        ("n > 2.5", "n + 0.0 > 2.5"),
        ("fare < 10.005", "fare + 0 < 10.005"),
    ] {
        let q = |f: &str| format!("SELECT id FROM t WHERE {f}");
        assert!(
            !plan(&ctx, &q(pushed)).await.contains("FilterExec"),
            "{pushed}"
        );
        assert!(plan(&ctx, &q(kept)).await.contains("FilterExec"), "{kept}");
        assert_eq!(
            lines(&ctx, &q(pushed)).await,
            lines(&ctx, &q(kept)).await,
            "{pushed} vs {kept}"
        );
    }
}

/// The forms the simplifier makes of `IN` lists with NULL are pushed down
/// whole: no filter is left to DataFusion, and none fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_lists_with_null_are_pushed_down_whole() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path());
    let ctx = contexts(dir.path().to_str().unwrap(), "t").await;
    for f in [
        "id IN (1, NULL)",
        "id NOT IN (1, NULL)",
        "id IN (NULL)",
        "id = NULL",
        "NOT (id = NULL)",
        "n > 2.5",
        "fare < 10.005",
        "CAST(n AS DOUBLE) > 2.5",
    ] {
        let shown = plan(&ctx, &format!("SELECT id FROM t WHERE {f}")).await;
        assert!(!shown.contains("FilterExec"), "{f}: {shown}");
    }
}

/// A filter handed to the scan that dar cannot apply exactly (DataFusion
/// may hand back a rewritten form of one it was told is exact) is applied
/// by a filter over the scan, never dropped or refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_filter_dar_cannot_apply_is_applied_over_the_scan() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path());
    let table = dar_scan::Table::open(dir.path().to_str().unwrap())
        .await
        .unwrap();
    let provider = DeltaTableProvider::new(table);
    let ctx = SessionContext::new();
    let state = ctx.state();
    let abs = datafusion::functions::math::expr_fn::abs(col("x"));
    // `|x| > 1` holds for ids 5, 6 (NaN), 9, 11 and 12.
    for (filter, limit, want) in [
        (abs.clone().gt(lit(1.0)), None, 5..=5),
        (
            abs.clone().gt(lit(1.0)).and(col("id").gt(lit(9i64))),
            None,
            2..=2,
        ),
        // A limit is a hint (DataFusion limits again above): at least that
        // many rows, all matching.
        (abs.gt(lit(1.0)), Some(2), 2..=5),
    ] {
        let plan = provider
            .scan(&state, Some(&vec![0]), &[filter], limit)
            .await
            .unwrap();
        assert_eq!(plan.schema().fields().len(), 1);
        let batches = collect(plan, ctx.task_ctx()).await.unwrap();
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        assert!(want.contains(&rows), "{rows} rows, want {want:?}");
        for b in &batches {
            let ids = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            assert!(
                ids.iter()
                    .all(|id| [5, 6, 9, 11, 12].contains(&id.unwrap()))
            );
        }
    }
}
