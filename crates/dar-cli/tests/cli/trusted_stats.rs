//! Statistics `dar` must not believe as written (issue 33, items 6, 7 and
//! 10): `dar info`'s row count, `dar scan --filter` rows and `dar sql`
//! aggregates, on tables whose statistics lie and on widened columns whose
//! old bounds come from a checkpoint's `stats_parsed`.

use serde_json::Value;

use crate::{arg, copy_dir, dar};

fn stdout(args: &[&str]) -> String {
    let out = dar().args(args).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

fn info_json(table: &str) -> Value {
    serde_json::from_str(&stdout(&["info", table, "--json"])).unwrap()
}

/// Rows `dar scan` returns for `filter`.
fn scanned(table: &str, filter: &str) -> u64 {
    stdout(&["scan", table, "--format", "null", "--filter", filter])
        .trim()
        .parse()
        .unwrap()
}

/// Issue 33 item 10: a negative `numRecords` is impossible, so the row
/// count is never exact (it was "3 (exact)", the bad file counted as 0):
/// the file counts as one without `numRecords`, named in the text form.
#[test]
fn a_negative_num_records_is_never_an_exact_count() {
    let tmp = tempfile::tempdir().unwrap();
    let truth =
        dar_testkit::write_bad_stats_table(tmp.path(), dar_testkit::BadStats::NegativeNumRecords)
            .unwrap();
    let t = arg(tmp.path());
    let v = info_json(&t);
    assert_eq!(v["num_rows_exact"], false, "{v}");
    assert_eq!(v["files_without_num_records"], 1, "{v}");
    assert_eq!(v["files_with_impossible_num_records"], 1, "{v}");
    assert_eq!(v["num_records"], 3, "{v}");
    let text = stdout(&["info", &t]);
    assert!(
        text.contains(&format!(
            "(estimated: 1 of 2 files have no numRecords (1 an impossible, negative one, as '{}');",
            dar_testkit::BAD_STATS_FILE
        )),
        "{text}"
    );
    // The scan reads the file: every row is there.
    assert_eq!(
        stdout(&["scan", &t, "--format", "null"]).trim(),
        truth.rows().to_string()
    );
}

/// Issue 33 items 7 and 10 through `dar`: whatever way one file's
/// statistics lie, `dar info` gives an exact count only when it is true,
/// and `dar scan --filter` keeps every matching row.
#[test]
fn statistics_that_lie_never_prune_nor_count_exactly() {
    for case in dar_testkit::BadStats::ALL {
        let tmp = tempfile::tempdir().unwrap();
        let truth = dar_testkit::write_bad_stats_table(tmp.path(), case).unwrap();
        let t = arg(tmp.path());
        let v = info_json(&t);
        if v["num_rows_exact"] == true {
            assert_eq!(v["num_rows"], truth.rows(), "{case:?}: {v}");
        }
        for x in truth.values.iter().flatten() {
            let filter = format!("x = {x}");
            assert_eq!(
                scanned(&t, &filter),
                truth.equal_to(*x),
                "{case:?}: {filter}"
            );
        }
    }
}

/// `dar sql` answers `count(x)`, `min(x)`, `max(x)` and `count(*)` with
/// the data's values (DataFusion answers them from exact statistics; the
/// lying ones must not be exact). `nullCount` above the rows once made
/// `count(x)` subtract past zero.
#[cfg(feature = "sql")]
#[test]
fn sql_aggregates_of_statistics_that_lie_are_the_data_s() {
    for case in dar_testkit::BadStats::ALL {
        let tmp = tempfile::tempdir().unwrap();
        let truth = dar_testkit::write_bad_stats_table(tmp.path(), case).unwrap();
        let table = format!("t={}", arg(tmp.path()));
        let out = stdout(&[
            "sql",
            "SELECT count(*) AS n, count(x) AS c, min(x) AS lo, max(x) AS hi FROM t",
            "--table",
            &table,
            "--format",
            "csv",
        ]);
        let show = |v: Option<i64>| v.map_or(String::new(), |v| v.to_string());
        assert_eq!(
            out,
            format!(
                "n,c,lo,hi\n{},{},{},{}\n",
                truth.rows(),
                truth.non_null(),
                show(truth.min()),
                show(truth.max())
            ),
            "{case:?}"
        );
    }
}

/// Issue 33 item 6 through `dar scan`: the kit's widened float table with a
/// `stats_parsed` checkpoint, and the shared `type-widening` table with one
/// written for it, return the rows of equalities on the floats they hold.
#[tokio::test]
async fn widened_floats_from_stats_parsed_keep_their_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let options = dar_testkit::CheckpointOptions::default()
        .with_stats_json(false)
        .with_stats_parsed(true);
    dar_testkit::write_widened_float_table(tmp.path(), &options, false)
        .await
        .unwrap();
    let t = arg(tmp.path());
    for (filter, rows) in [
        (format!("x = {:?}", f64::from(0.7f32)), 1),
        (format!("x = {:?}", f64::from(0.1f32)), 1),
        (
            format!("x IN ({:?}, {:?})", f64::from(0.7f32), f64::from(0.1f32)),
            2,
        ),
        ("x = 0.1".to_string(), 1),
    ] {
        assert_eq!(scanned(&t, &filter), rows, "{filter}");
    }

    let Some(shared) = dar_testdata::table("kernel/type-widening") else {
        return;
    };
    let copy = tempfile::tempdir().unwrap();
    copy_dir(&shared, copy.path());
    dar_testkit::write_log_checkpoint(copy.path()).unwrap();
    let t = arg(copy.path());
    let json = stdout(&[
        "scan",
        &t,
        "--format",
        "json",
        "--columns",
        "int_long,float_double",
        "--filter",
        "float_double = 3.4000000953674316",
    ]);
    assert_eq!(
        json,
        "{\"int_long\":2,\"float_double\":3.4000000953674316}\n"
    );
    assert_eq!(
        scanned(&t, "float_double IN (3.4000000953674316, 1.234567890123)"),
        2
    );
}
