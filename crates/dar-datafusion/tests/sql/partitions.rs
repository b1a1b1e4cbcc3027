//! Every partition type with its whole range of values, read through SQL:
//! a hand-written table (`dar_testkit::HandTable`) with one file per row of
//! partition values (the smallest of each type, the largest, NaN and the
//! infinities, `-0.0`, empty and non-ASCII strings, year 1 and 9999
//! instants, NULL), each file holding one `id`.

use dar_testkit::{PARTITION_EXTREMES_COLUMNS as COLUMNS, write_partition_extremes};

use crate::agree::{contexts, lines, same_rows};

/// SQL literals of each column's values (and one value no file has).
fn literals(column: &str) -> Vec<String> {
    let v: &[&str] = match column {
        "b" => &["false", "true"],
        "i8" => &["-128", "127", "0", "-1", "100"],
        "i16" => &["-32768", "32767", "0", "-1", "100"],
        "i32" => &["-2147483648", "2147483647", "0", "-1", "100"],
        "i64" => &[
            "-9223372036854775808",
            "9223372036854775807",
            "0",
            "-1",
            "100",
        ],
        "f32" => &[
            "CAST('-3.4028235e38' AS REAL)",
            "CAST('3.4028235e38' AS REAL)",
            "CAST('NaN' AS REAL)",
            "CAST('-inf' AS REAL)",
            "0",
            "-0.0",
            "1.5",
        ],
        "f64" => &[
            "-1.7976931348623157e308",
            "1.7976931348623157e308",
            "'NaN'::double",
            "'inf'::double",
            "0",
            "-0.0",
            "2",
        ],
        "dec" => &[
            "CAST('-999999999999999999999999999999999999.99' AS DECIMAL(38, 2))",
            "CAST('999999999999999999999999999999999999.99' AS DECIMAL(38, 2))",
            "0",
            "1.5",
            "-1.50",
            "1.505",
        ],
        "s" => &["'a'", "'ünï €😀'", "'plain'", "''", "'z'", "'zz'"],
        "bin" => &["X'00'", "X'7f'", "X'6162'", "X'7a'", "X''"],
        "d" => &[
            "DATE '0001-01-01'",
            "DATE '9999-12-31'",
            "DATE '1970-01-01'",
            "DATE '2024-02-29'",
            "DATE '2000-01-01'",
        ],
        "ts" => &[
            "TIMESTAMP '0001-01-01T00:00:00Z'",
            "TIMESTAMP '9999-12-31T23:59:59.999999Z'",
            "TIMESTAMP '1970-01-01T00:00:00Z'",
            "TIMESTAMP '1969-12-31T23:59:59.999999Z'",
            "TIMESTAMP '2000-01-01T00:00:00Z'",
        ],
        "ntz" => &[
            "TIMESTAMP '0001-01-01 00:00:00'",
            "TIMESTAMP '9999-12-31 23:59:59.999999'",
            "TIMESTAMP '2024-02-29 12:30:00.000001'",
            "TIMESTAMP '2000-01-01 00:00:00'",
        ],
        other => panic!("no literals for {other}"),
    };
    v.iter().map(|s| s.to_string()).collect()
}

/// Every value reads back, and every filter on every column returns what
/// DataFusion returns from the same rows in memory (`dar_datafusion::sql`
/// reads `TIMESTAMP` as microseconds, so year 1 and 9999 compare).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_partition_type_reads_and_filters() {
    let dir = tempfile::tempdir().unwrap();
    write_partition_extremes(dir.path()).unwrap();
    let ctx = contexts(dir.path().to_str().unwrap(), "t").await;
    assert_eq!(
        lines(&ctx, "SELECT * FROM t").await.unwrap(),
        [
            "1|false|-128|-32768|-2147483648|-9223372036854775808|-3.4028235e38|-1.7976931348623157e308|-999999999999999999999999999999999999.99|a|00|0001-01-01|0001-01-01T00:00:00Z|0001-01-01T00:00:00",
            "2|true|127|32767|2147483647|9223372036854775807|3.4028235e38|1.7976931348623157e308|999999999999999999999999999999999999.99|ünï €😀|7f|9999-12-31|9999-12-31T23:59:59.999999Z|9999-12-31T23:59:59.999999",
            "3|true|0|0|0|0|NaN|NaN|0.00|plain|6162|1970-01-01|1970-01-01T00:00:00Z|1970-01-01T00:00:00",
            "4|false|1|1|1|1|-inf|inf|1.50|plain|6162|2024-02-29|2024-02-29T12:30:00.000001Z|2024-02-29T12:30:00.000001",
            "5|false|-1|-1|-1|-1|-0.0|-0.0|-1.50|z|7a|1969-12-31|1969-12-31T23:59:59.999999Z|1969-12-31T23:59:59.999999",
            "6|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL",
        ]
    );
    for (c, _) in COLUMNS {
        same_rows(&ctx, "t", "id", &format!("{c} IS NULL")).await;
        same_rows(&ctx, "t", "id", &format!("{c} IS NOT NULL")).await;
        let values = literals(c);
        for v in &values {
            for op in ["=", "<>", "<", "<=", ">", ">="] {
                same_rows(&ctx, "t", "id", &format!("{c} {op} {v}")).await;
            }
            same_rows(&ctx, "t", "id", &format!("{c} IN ({v}, NULL)")).await;
            same_rows(&ctx, "t", "id", &format!("NOT ({c} IN ({v}))")).await;
        }
        let (a, b) = (&values[0], &values[1]);
        let all = same_rows(&ctx, "t", "id", &format!("{c} BETWEEN {a} AND {b}")).await;
        assert!(!all.is_empty(), "{c} BETWEEN {a} AND {b}");
        same_rows(
            &ctx,
            "t",
            "*",
            &format!("{c} IS NOT DISTINCT FROM {}", values[0]),
        )
        .await;
    }
    // The extremes are found, pushed down or not.
    for (filter, id) in [
        ("ts = TIMESTAMP '0001-01-01T00:00:00Z'", "1"),
        ("ntz = TIMESTAMP '9999-12-31 23:59:59.999999'", "2"),
        (
            "ts > TIMESTAMP '2000-01-01T00:00:00Z' AND ts < TIMESTAMP '3000-01-01T00:00:00Z'",
            "4",
        ),
        ("d < DATE '0002-01-01'", "1"),
        ("b AND i8 = 127", "2"),
        ("f64 = 'NaN'::double", "3"),
        ("f32 > CAST('3.4028235e38' AS REAL)", "3"),
        (
            "dec = CAST('999999999999999999999999999999999999.99' AS DECIMAL(38, 2))",
            "2",
        ),
        ("s = 'ünï €😀'", "2"),
        ("bin = X'00'", "1"),
    ] {
        assert_eq!(same_rows(&ctx, "t", "id", filter).await, [id], "{filter}");
    }
    let zeros = same_rows(&ctx, "t", "id", "f64 = 0 AND f32 = 0").await;
    assert_eq!(zeros, ["5"]);
}

/// `min` and `max` of every partition column: answered from the
/// partition values (DataFusion takes them as exact statistics) and from
/// the rows, the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aggregates_of_every_partition_type() {
    let dir = tempfile::tempdir().unwrap();
    write_partition_extremes(dir.path()).unwrap();
    let ctx = contexts(dir.path().to_str().unwrap(), "t").await;
    for (c, _) in COLUMNS {
        let q = |t: &str| format!("SELECT min({c}), max({c}), count({c}) FROM {t}");
        assert_eq!(
            lines(&ctx, &q("t")).await,
            lines(&ctx, &q("t_mem")).await,
            "{c}"
        );
    }
}
