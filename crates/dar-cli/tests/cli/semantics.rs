//! SQL's meaning of values, the same in `dar scan --filter` and `dar sql`:
//! `-0.0 = 0.0` and NaN above every value (in data, statistics and
//! partition values), numbers compared across numeric types, boolean and
//! far-off timestamp partition values, statistics that contradict
//! themselves; over tables written by hand (`dar_testkit::HandTable`).

use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Decimal128Array, Float64Array, Int32Array, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use dar_testkit::HandTable;
use serde_json::json;

use crate::{arg, dar};

/// One file of the table: ids, x (double), n (int), fare (decimal(8, 2) in
/// cents); partition values of p (double), b (boolean), ts (timestamp);
/// the stats bounds of x.
type File = (
    Vec<i64>,
    Vec<Option<f64>>,
    Vec<i32>,
    Vec<i128>,
    [&'static str; 3],
    Option<(f64, f64)>,
);

/// Partition p -0.0 with stats min = max = -0.0; p 0.0 with the spec's
/// zeros (-0.0 min, 0.0 max) and a NaN left out of the bounds; p NaN.
fn files() -> Vec<File> {
    vec![
        (
            vec![1, 2],
            vec![Some(-0.0), Some(-0.0)],
            vec![1, 2],
            vec![1000, 1001],
            ["-0.0", "true", "0001-01-01T00:00:00.000000Z"],
            Some((-0.0, -0.0)),
        ),
        (
            vec![3, 4, 5],
            vec![Some(0.0), Some(-0.0), Some(f64::NAN)],
            vec![3, 4, 5],
            vec![999, 1005, 2000],
            ["0.0", "false", "9999-12-31T23:59:59.999999Z"],
            Some((-0.0, 0.0)),
        ),
        (
            vec![6, 7],
            vec![Some(-1.5), Some(2.5)],
            vec![-3, 100],
            vec![-1, 0],
            ["NaN", "true", "2024-01-01T00:00:00.000000Z"],
            Some((-1.5, 2.5)),
        ),
    ]
}

fn write_table(dir: &Path) {
    let mut t = HandTable::new(dir).unwrap();
    let f = |n: &str, ty: &str| HandTable::field(n, json!(ty), json!({}));
    let fields = json!([
        f("id", "long"),
        f("x", "double"),
        f("n", "integer"),
        f("fare", "decimal(8,2)"),
        f("p", "double"),
        f("b", "boolean"),
        f("ts", "timestamp"),
    ]);
    let mut actions = vec![
        HandTable::protocol(),
        HandTable::metadata(fields, &["p", "b", "ts"], json!({})),
    ];
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("x", DataType::Float64, true),
        Field::new("n", DataType::Int32, true),
        Field::new("fare", DataType::Decimal128(8, 2), true),
    ]));
    for (i, (ids, x, n, fare, [p, b, ts], bounds)) in files().into_iter().enumerate() {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(ids.clone())),
            Arc::new(Float64Array::from(x)),
            Arc::new(Int32Array::from(n)),
            Arc::new(
                Decimal128Array::from(fare)
                    .with_precision_and_scale(8, 2)
                    .unwrap(),
            ),
        ];
        let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
        let path = format!("part-{i}.parquet");
        let size = t.write_parquet(&path, &batch).unwrap();
        let mut stats = json!({"numRecords": ids.len(), "nullCount": {"x": 0}});
        if let Some((lo, hi)) = bounds {
            stats["minValues"] = json!({"x": lo});
            stats["maxValues"] = json!({"x": hi});
        }
        let values = json!({"p": p, "b": b, "ts": ts});
        actions.push(HandTable::add(&path, size, values, Some(stats)));
    }
    t.commit(&actions).unwrap();
}

/// The sorted ids `dar scan --filter` returns.
fn scan_ids(table: &Path, filter: &str) -> Vec<i64> {
    let out = dar()
        .args(["scan", &arg(table), "--columns", "id", "--format", "csv"])
        .args(["--filter", filter])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let mut ids: Vec<i64> = text.lines().skip(1).map(|l| l.parse().unwrap()).collect();
    ids.sort();
    ids
}

/// The sorted ids `dar sql` returns for `WHERE filter`.
#[cfg(feature = "sql")]
fn sql_ids(table: &Path, filter: &str) -> Vec<i64> {
    let text = sql_csv(table, &format!("SELECT id FROM t WHERE {filter}"));
    let mut ids: Vec<i64> = text.lines().skip(1).map(|l| l.parse().unwrap()).collect();
    ids.sort();
    ids
}

#[cfg(feature = "sql")]
fn sql_csv(table: &Path, query: &str) -> String {
    let out = dar()
        .args(["sql", query, "--format", "csv", "--table"])
        .arg(format!("t={}", arg(table)))
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

/// (filter, ids): `--filter` and `WHERE` mean the same (SQL's).
const CASES: &[(&str, &[i64])] = &[
    // -0.0 = 0.0, in data, in statistics and in partition values.
    ("x = 0", &[1, 2, 3, 4]),
    ("x = -0.0", &[1, 2, 3, 4]),
    ("x < 0", &[6]),
    ("x <= -0.0", &[1, 2, 3, 4, 6]),
    ("x > 0", &[5, 7]),
    ("x <> 0", &[5, 6, 7]),
    ("x IN (0, 2.5)", &[1, 2, 3, 4, 7]),
    ("x NOT IN (0)", &[5, 6, 7]),
    ("p = 0", &[1, 2, 3, 4, 5]),
    ("p < 0", &[]),
    ("p > 0", &[6, 7]),
    // NaN: equal to itself, above every other value.
    ("x = CAST('NaN' AS DOUBLE)", &[5]),
    ("x > CAST('Infinity' AS DOUBLE)", &[5]),
    ("p = CAST('NaN' AS DOUBLE)", &[6, 7]),
    // Numbers across numeric types, by value.
    ("n > 2.5", &[3, 4, 5, 7]),
    ("n = 2.5", &[]),
    ("n <> 2.5", &[1, 2, 3, 4, 5, 6, 7]),
    ("n IN (2, 2.5)", &[2]),
    ("n < 1e30", &[1, 2, 3, 4, 5, 6, 7]),
    ("fare < 10.005", &[1, 3, 6, 7]),
    ("fare > 10.005", &[2, 4, 5]),
    ("fare = 10.05", &[4]),
    // Boolean and far-off timestamp partition values.
    ("b", &[1, 2, 6, 7]),
    ("NOT b", &[3, 4, 5]),
    ("ts < TIMESTAMP '1000-01-01T00:00:00Z'", &[1, 2]),
    ("ts > TIMESTAMP '9999-12-31T23:59:59Z'", &[3, 4, 5]),
    // NULL in a list.
    ("n IN (1, NULL)", &[1]),
    ("n NOT IN (1, NULL)", &[]),
];

#[test]
fn scan_filter_means_what_sql_means() {
    let dir = tempfile::tempdir().unwrap();
    write_table(dir.path());
    for (filter, want) in CASES {
        assert_eq!(
            scan_ids(dir.path(), filter),
            *want,
            "dar scan --filter {filter:?}"
        );
    }
}

#[cfg(feature = "sql")]
#[test]
fn sql_means_what_scan_filter_means() {
    let dir = tempfile::tempdir().unwrap();
    write_table(dir.path());
    for (filter, want) in CASES {
        // dar-prune's spelling of a NaN literal; SQL's is the same here.
        assert_eq!(sql_ids(dir.path(), filter), *want, "dar sql WHERE {filter}");
    }
    // A form DataFusion cannot push down has the same rows.
    assert_eq!(sql_ids(dir.path(), "x + 0 = 0"), [1, 2, 3, 4]);
    assert_eq!(sql_ids(dir.path(), "p + 1 < 1"), Vec::<i64>::new());
}

/// Boolean partition columns and timestamps of year 1 and 9999 read whole,
/// through `dar scan` and `dar sql`.
#[test]
fn boolean_and_far_timestamp_partitions_read() {
    let dir = tempfile::tempdir().unwrap();
    write_table(dir.path());
    let out = dar()
        .args([
            "scan",
            &arg(dir.path()),
            "--columns",
            "id,b,ts",
            "--format",
            "csv",
        ])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort();
    assert!(lines.contains(&"1,true,0001-01-01T00:00:00Z"), "{text}");
    assert!(
        lines.contains(&"3,false,9999-12-31T23:59:59.999999Z"),
        "{text}"
    );
    #[cfg(feature = "sql")]
    {
        let text = sql_csv(
            dir.path(),
            "SELECT b, min(ts), max(ts), count(*) FROM t GROUP BY b ORDER BY b",
        );
        assert_eq!(
            text,
            "b,min(t.ts),max(t.ts),count(*)\nfalse,9999-12-31T23:59:59.999999Z,9999-12-31T23:59:59.999999Z,3\ntrue,0001-01-01T00:00:00Z,2024-01-01T00:00:00Z,4\n"
        );
    }
}

/// A file whose statistics say min 10 > max 5 (for data 1..3), and one whose
/// float minimum is NaN: `min`/`max` are the data's, and filters keep the
/// file.
#[cfg(feature = "sql")]
#[test]
fn aggregates_ignore_impossible_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = HandTable::new(dir.path()).unwrap();
    let fields = json!([
        HandTable::field("v", json!("long"), json!({})),
        HandTable::field("f", json!("double"), json!({})),
    ]);
    let schema = Arc::new(Schema::new(vec![
        Field::new("v", DataType::Int64, true),
        Field::new("f", DataType::Float64, true),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(vec![1, 2, 3])),
            Arc::new(Float64Array::from(vec![1.5, f64::NAN, -2.0])),
        ],
    )
    .unwrap();
    let size = t.write_parquet("part-0.parquet", &batch).unwrap();
    let stats = json!({
        "numRecords": 3,
        "minValues": {"v": 10, "f": "NaN"},
        "maxValues": {"v": 5, "f": 1.5},
        "nullCount": {"v": 0, "f": 0},
    });
    t.commit(&[
        HandTable::protocol(),
        HandTable::metadata(fields, &[], json!({})),
        HandTable::add(
            "part-0.parquet",
            size,
            serde_json::Value::Object(Default::default()),
            Some(stats),
        ),
    ])
    .unwrap();
    // Alone, `min`/`max` of an integer column would come from statistics
    // DataFusion takes as exact.
    let text = sql_csv(dir.path(), "SELECT min(v), max(v) FROM t");
    assert_eq!(text, "min(t.v),max(t.v)\n1,3\n");
    let text = sql_csv(dir.path(), "SELECT min(f), max(f) FROM t");
    assert_eq!(text, "min(t.f),max(t.f)\n-2.0,NaN\n");
    let text = sql_csv(
        dir.path(),
        "SELECT min(v), max(v), min(f), max(f), count(*) FROM t",
    );
    assert_eq!(
        text,
        "min(t.v),max(t.v),min(t.f),max(t.f),count(*)\n1,3,-2.0,NaN,3\n"
    );
    let text = sql_csv(
        dir.path(),
        "SELECT count(*) AS n FROM t WHERE v < 5 AND f < 0",
    );
    assert_eq!(text, "n\n1\n");
    assert_eq!(scan_ids_of(dir.path(), "v < 5 AND f < 0"), 1);
}

/// Rows `dar scan --filter` returns.
#[cfg(feature = "sql")]
fn scan_ids_of(table: &Path, filter: &str) -> usize {
    let out = dar()
        .args(["scan", &arg(table), "--format", "null", "--filter", filter])
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone())
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Every partition type with the ends of its range, read and filtered by
/// `dar scan` (and `dar sql`): `dar_testkit::write_partition_extremes`, one
/// file per row of partition values.
#[test]
fn every_partition_type_scans_and_filters() {
    const MAX_DEC: &str = dar_testkit::MAX_DECIMAL_38_2;
    let min_dec = format!("-{MAX_DEC}");
    let dir = tempfile::tempdir().unwrap();
    dar_testkit::write_partition_extremes(dir.path()).unwrap();

    let out = dar()
        .args(["scan", &arg(dir.path()), "--format", "csv"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert_eq!(text.lines().count(), 7, "{text}");
    assert!(text.contains(&format!("1,false,-128,-32768,-2147483648,-9223372036854775808,-3.4028235e38,-1.7976931348623157e308,{min_dec},a,00,0001-01-01,0001-01-01T00:00:00Z,0001-01-01T00:00:00")), "{text}");
    assert!(text.contains(&format!("2,true,127,32767,2147483647,9223372036854775807,3.4028235e38,1.7976931348623157e308,{MAX_DEC},ünï €😀,7f,9999-12-31,9999-12-31T23:59:59.999999Z,9999-12-31T23:59:59.999999")), "{text}");
    let max_dec = format!("dec = {MAX_DEC}");
    let min_dec_filter = format!("dec < -{}", &MAX_DEC[..MAX_DEC.len() - 1]);
    for (filter, ids) in [
        ("b = false", &[1, 4, 5][..]),
        ("NOT b", &[1, 4, 5]),
        ("i8 = -128 OR i16 = 32767", &[1, 2]),
        ("i32 = 2147483647", &[2]),
        ("i64 = -9223372036854775808", &[1]),
        ("i64 > 9223372036854775807", &[]),
        ("f32 = CAST('NaN' AS FLOAT)", &[3]),
        (
            "f32 = CAST('-Infinity' AS FLOAT) AND f64 = CAST('Infinity' AS DOUBLE)",
            &[4],
        ),
        ("f32 = 0 AND f64 = 0", &[5]),
        ("f32 < CAST('-3.4e38' AS FLOAT)", &[1, 4]),
        ("f64 > 1e308", &[2, 3, 4]),
        (&max_dec, &[2]),
        (&min_dec_filter, &[1]),
        ("s = 'ünï €😀'", &[2]),
        ("bin = X'00'", &[1]),
        ("d = DATE '0001-01-01' OR d > DATE '9999-12-30'", &[1, 2]),
        ("ts = TIMESTAMP '0001-01-01T00:00:00Z'", &[1]),
        ("ts > TIMESTAMP '9999-12-31T23:59:59.999998Z'", &[2]),
        ("ntz < TIMESTAMP_NTZ '1000-01-01 00:00:00'", &[1]),
        ("ntz = TIMESTAMP_NTZ '9999-12-31 23:59:59.999999'", &[2]),
        ("b IS NULL AND ts IS NULL AND dec IS NULL", &[6]),
        (
            "ts < TIMESTAMP '1970-01-01T00:00:00Z' AND ts > TIMESTAMP '1969-12-31T23:59:59.999998Z'",
            &[5],
        ),
    ] {
        assert_eq!(
            scan_ids(dir.path(), filter),
            ids,
            "dar scan --filter {filter:?}"
        );
    }
    #[cfg(feature = "sql")]
    {
        let text = sql_csv(dir.path(), "SELECT * FROM t ORDER BY id");
        let scanned = String::from_utf8(
            dar()
                .args(["scan", &arg(dir.path()), "--format", "csv"])
                .assert()
                .success()
                .get_output()
                .stdout
                .clone(),
        )
        .unwrap();
        let mut a: Vec<&str> = text.lines().collect();
        let mut b: Vec<&str> = scanned.lines().collect();
        a.sort();
        b.sort();
        assert_eq!(a, b, "dar sql and dar scan read the same rows");
        for (filter, ids) in [
            ("NOT b", &[1, 4, 5][..]),
            ("ts = TIMESTAMP '0001-01-01T00:00:00Z'", &[1]),
            ("ntz > TIMESTAMP '9999-12-31 00:00:00'", &[2]),
            ("f32 = 0 AND f64 = 0", &[5]),
            ("i64 = -9223372036854775808", &[1]),
        ] {
            assert_eq!(sql_ids(dir.path(), filter), ids, "dar sql WHERE {filter}");
        }
    }
}
