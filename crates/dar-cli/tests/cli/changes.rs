//! `dar changes`: the change data feed of every kernel CDF table through
//! the binary, row for row against `dar-scan` (whose rows are pinned
//! exactly in its own tests), an exact CSV, and each refusal.

use std::fs::File;

use arrow_array::RecordBatch;
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use dar_scan::ChangeBound;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::{arg, dar};

/// Sorted rows as text, every column but `_commit_timestamp`, and the
/// timestamps on their own (sorted).
fn rows(batches: &[RecordBatch]) -> (Vec<String>, Vec<String>) {
    let opts = FormatOptions::default().with_null("NULL");
    let (mut out, mut times) = (Vec::new(), Vec::new());
    for b in batches {
        let schema = b.schema();
        let fmts: Vec<(bool, ArrayFormatter<'_>)> = (0..b.num_columns())
            .map(|i| {
                (
                    schema.field(i).name() == "_commit_timestamp",
                    ArrayFormatter::try_new(b.column(i).as_ref(), &opts).unwrap(),
                )
            })
            .collect();
        for r in 0..b.num_rows() {
            let mut cells = Vec::new();
            for (is_time, f) in &fmts {
                if *is_time {
                    times.push(f.value(r).to_string());
                } else {
                    cells.push(f.value(r).to_string());
                }
            }
            out.push(cells.join("|"));
        }
    }
    out.sort();
    times.sort();
    (out, times)
}

const RANGES: &[(&str, u64, Option<u64>)] = &[
    ("cdf-table", 0, None),
    ("cdf-table-simple", 0, Some(2)),
    ("cdf-table-simple", 1, Some(1)),
    ("cdf-table-partitioned", 0, Some(2)),
    ("cdf-table-non-partitioned", 0, None),
    ("cdf-table-update-ops", 0, Some(2)),
    ("cdf-table-data-change", 0, Some(1)),
    ("cdf-table-delete-unconditional", 0, None),
    ("cdf-table-delete-conditional-all-rows", 0, None),
    ("cdf-table-delete-conditional-two-rows", 0, None),
    ("cdf-table-with-dv", 0, None),
    ("cdf-table-with-cdc-and-dvs", 0, None),
    ("cdf-table-backtick-column-names", 0, None),
    ("cdf-column-mapping-id-mode", 1, None),
    ("cdf-column-mapping-name-mode", 1, None),
    ("cdf-column-mapping-name-mode-3-7", 1, None),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kernel_cdf_table_gives_the_library_rows() {
    for (name, start, end) in RANGES {
        let Some(path) = dar_testdata::table(&format!("kernel/{name}")) else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("changes.parquet");
        let mut cmd = dar();
        cmd.args(["changes", &arg(&path), "--from", &start.to_string()]);
        if let Some(e) = end {
            cmd.args(["--to", &e.to_string()]);
        }
        cmd.args(["--format", "parquet", "--output"]).arg(&out);
        cmd.assert().success().stdout("").stderr("");
        let got: Vec<RecordBatch> =
            ParquetRecordBatchReaderBuilder::try_new(File::open(&out).unwrap())
                .unwrap()
                .build()
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
        let table = dar_scan::Table::open(&arg(&path)).await.unwrap();
        let want = table
            .changes(ChangeBound::Version(*start), end.map(ChangeBound::Version))
            .build()
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        assert!(!want.is_empty(), "{name}");
        assert_eq!(rows(&got), rows(&want), "{name} {start}..{end:?}");
    }
}

/// The CSV of `cdf-table-simple`, exactly (timestamps aside): ten inserts
/// at 0, their deletes at 1, five inserts at 2.
#[test]
fn csv_of_a_range_is_exact() {
    let Some(path) = dar_testdata::table("kernel/cdf-table-simple") else {
        return;
    };
    let out = dar()
        .args(["changes", &arg(&path), "--from", "0", "--format", "csv"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("id,_change_type,_commit_version,_commit_timestamp")
    );
    let mut got: Vec<String> = lines
        .map(|l| l.rsplit_once(',').unwrap().0.to_string())
        .collect();
    got.sort();
    let mut want: Vec<String> = (0..10)
        .map(|i| format!("{i},insert,0"))
        .chain((0..10).map(|i| format!("{i},delete,1")))
        .chain((20..25).map(|i| format!("{i},insert,2")))
        .collect();
    want.sort();
    assert_eq!(got, want);
    // A filter on the change columns, and the projection.
    let out = dar()
        .args(["changes", &arg(&path), "--from", "0", "--columns", "id"])
        .args([
            "--filter",
            "_commit_version = 2 AND id > 22",
            "--format",
            "csv",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let got: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.rsplit_once(',').unwrap().0)
        .collect();
    assert_eq!(got, ["23,insert,2", "24,insert,2"]);
}

#[test]
fn refusals_name_the_version() {
    let (Some(cdf), Some(simple)) = (
        dar_testdata::table("kernel/table-with-cdf"),
        dar_testdata::table("kernel/cdf-table-simple"),
    ) else {
        return;
    };
    let cases: &[(&std::path::Path, &[&str], &str)] = &[
        // Refused at its start, before any row (a range that reaches
        // version 2 later is refused there, after the rows before it: the
        // feed runs commit by commit, and this table's data files are not
        // in the test data).
        (
            &cdf,
            &["--from", "2", "--to", "3"],
            "change data feed is not enabled at version 2",
        ),
        (
            &cdf,
            &["--from", "3", "--to", "4"],
            "at version 3, column 'id' becomes non-nullable by end version 4",
        ),
        (
            &simple,
            &["--from", "3"],
            "start version 3 is beyond the latest version 2",
        ),
        (
            &simple,
            &["--from", "1", "--to", "0"],
            "start version 1 is after end version 0",
        ),
        (
            &simple,
            &["--from", "0", "--to-timestamp", "0"],
            "is before the first commit",
        ),
        (
            &simple,
            &["--from-timestamp", "yesterday"],
            "invalid --from-timestamp 'yesterday'",
        ),
    ];
    for (table, flags, message) in cases {
        let assert = dar()
            .args(["changes", &arg(table)])
            .args(*flags)
            .assert()
            .failure()
            .code(1);
        let err = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
        assert!(err.starts_with("dar: error: "), "{flags:?}: {err}");
        assert!(err.contains(message), "{flags:?}: {err}");
    }
    // No start at all: a usage error naming the flag.
    let assert = dar()
        .args(["changes", &arg(&simple)])
        .assert()
        .failure()
        .code(1);
    let err = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    assert!(err.contains("--from"), "{err}");
}

/// `(version, _commit_timestamp in ms)` of every row the Parquet file at
/// `path` holds, sorted.
fn commit_times(path: &std::path::Path) -> Vec<(u64, i64)> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Int64Type, TimestampMicrosecondType};
    let mut out = Vec::new();
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
        .unwrap()
        .build()
        .unwrap();
    for b in reader {
        let b = b.unwrap();
        let versions = b["_commit_version"].as_primitive::<Int64Type>();
        let times = b["_commit_timestamp"].as_primitive::<TimestampMicrosecondType>();
        for i in 0..b.num_rows() {
            out.push((versions.value(i) as u64, times.value(i) / 1000));
        }
    }
    out.sort();
    out
}

/// In-commit timestamps switched on at version 3 and off at 8: `dar
/// changes` gives each commit the kind of timestamp in force at it (file
/// times for 0-2 and 8-9, in-commit timestamps for 3-7), whichever range;
/// `dar info` reports a version's own commit time and where commit times
/// come from.
#[test]
fn each_commit_has_its_own_kind_of_timestamp() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("t");
    let expected = dar_testkit::write_ict_toggled_table(&table).unwrap();
    for (from, to) in [(0, 9), (4, 8), (7, 9)] {
        let out = dir.path().join(format!("{from}-{to}.parquet"));
        dar()
            .args(["changes", &arg(&table), "--from", &from.to_string()])
            .args(["--to", &to.to_string(), "--format", "parquet", "--output"])
            .arg(&out)
            .assert()
            .success();
        let want: Vec<(u64, i64)> = expected
            .iter()
            .copied()
            .filter(|(v, _)| (from..=to).contains(v))
            .collect();
        assert_eq!(commit_times(&out), want, "{from}..={to}");
    }
    let info = |version: u64| -> serde_json::Value {
        let out = dar()
            .args([
                "info",
                &arg(&table),
                "--json",
                "--version",
                &version.to_string(),
            ])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        serde_json::from_slice(&out).unwrap()
    };
    for version in [1, 5, 9] {
        let v = info(version);
        let want = chrono::DateTime::from_timestamp_millis(expected[version as usize].1)
            .unwrap()
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        assert_eq!(v["commit_timestamp"], want.as_str(), "version {version}");
        assert_eq!(v["change_data_feed"], true);
        let since = (3..8).contains(&version).then_some(3);
        assert_eq!(v["in_commit_timestamps_since"], serde_json::json!(since));
    }
}

/// `dar changes` reads no log file its table's open just read: the
/// commits the open's replay kept are not fetched again, nor
/// `_last_checkpoint` (the scan's I/O has no log class), and the open's
/// own log reads are the missing hint and the three commits. Nor does
/// it list the log again: without `--to` the feed ends at the version
/// the open found, and takes the open's listing.
#[test]
fn the_feed_reads_no_log_file_the_open_read() {
    let Some(path) = dar_testdata::table("kernel/cdf-table-simple") else {
        return;
    };
    let out = dar()
        .args(["changes", &arg(&path), "--from", "0", "--stats"])
        .args(["--format", "csv", "--output", "-"])
        .assert()
        .success()
        .get_output()
        .stderr
        .clone();
    let text = String::from_utf8(out).unwrap();
    let line = |prefix: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} line in {text}"))
            .to_string()
    };
    let log = line("io (log):");
    assert!(
        log.contains("log 4 ") && log.contains("; 1 listing"),
        "{text}"
    );
    let scan = line("io (scan):");
    assert!(
        !scan.contains("log ") && !scan.contains("listing"),
        "{scan}"
    );
    assert!(scan.contains("footer"), "{scan}");
}
