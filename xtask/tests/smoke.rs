//! A `--scale quick` smoke run of `cargo xtask bench`: one workload, every
//! reader but `dar-polars` (the default set), one round. Nothing about time is asserted; every reader must
//! return the checked result (rows and checksum), and the run must write
//! its CSV, summary, charts and environment.
//!
//! It needs `python3` (the peers' virtual environment is created from PyPI
//! on first use, under `<target>/bench/venv`) and the `dar` binary next to
//! the xtask binary, which `cargo test --workspace` builds.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test"
)]

use std::path::PathBuf;
use std::process::Command;

/// The rows of a `runs.csv` (split at commas) and a column's index by name.
fn runs(csv: &str) -> (impl Fn(&str) -> usize + '_, Vec<Vec<&str>>) {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = move |name: &str| header.iter().position(|h| *h == name).unwrap();
    (col, lines.map(|l| l.split(',').collect()).collect())
}

/// Runs `xtask bench ARGS --out DIR --dar-bin DAR` with the `dar` next to
/// the xtask binary; returns the output folder.
fn bench(args: &[&str]) -> tempfile::TempDir {
    let xtask = PathBuf::from(env!("CARGO_BIN_EXE_xtask"));
    let dar = xtask.with_file_name("dar");
    assert!(
        dar.exists(),
        "{} is missing: run the whole suite (`cargo test --workspace`) or `cargo build -p dar-cli` first",
        dar.display()
    );
    let out = tempfile::tempdir().unwrap();
    let status = Command::new(&xtask)
        .arg("bench")
        .args(args)
        .arg("--out")
        .arg(out.path())
        .arg("--dar-bin")
        .arg(&dar)
        .status()
        .unwrap();
    assert!(status.success(), "xtask bench {args:?} failed: {status}");
    out
}

#[test]
fn quick_bench_every_reader_returns_the_checked_result() {
    let out = bench(&[
        "--scale",
        "quick",
        "--workloads",
        "W5.grouped",
        "--rounds",
        "1",
        "--storage",
        "local,s3",
    ]);

    let csv = std::fs::read_to_string(out.path().join("runs.csv")).unwrap();
    let (col, rows) = runs(&csv);
    for storage in ["local", "s3"] {
        for reader in [
            "dar", "dar-cli", "dar-sql", "delta-rs", "polars", "duckdb", "daft", "arrow-rs",
        ] {
            let mine: Vec<&Vec<&str>> = rows
                .iter()
                .filter(|r| r[col("storage")] == storage && r[col("reader")] == reader)
                .collect();
            // The checked warm-up and one round.
            assert_eq!(mine.len(), 2, "{storage} {reader}: {mine:?}");
            for r in mine {
                assert_eq!(r[col("status")], "ok", "{storage} {reader}: {r:?}");
                assert_eq!(r[col("case")], "W5.grouped");
            }
        }
    }
    // Over S3 the proxy saw every reader's requests.
    let s3_data: Vec<u64> = rows
        .iter()
        .filter(|r| r[col("storage")] == "s3")
        .map(|r| r[col("requests_data")].parse().unwrap())
        .collect();
    assert!(s3_data.iter().all(|&n| n > 0), "{s3_data:?}");

    let summary = std::fs::read_to_string(out.path().join("summary.md")).unwrap();
    assert!(summary.contains("### W5.grouped"), "{summary}");
    assert!(summary.contains("| dar |"), "{summary}");
    let env = std::fs::read_to_string(out.path().join("env.json")).unwrap();
    assert!(env.contains("deltalake==1.6.6"), "{env}");
    for chart in ["local-W5.grouped.svg", "s3-W5.grouped.svg"] {
        let svg = std::fs::read_to_string(out.path().join("charts").join(chart)).unwrap();
        assert!(svg.contains("<svg"), "{chart}");
    }
}

#[test]
fn session_mode_times_a_first_and_a_second_query_on_one_opened_table() {
    let out = bench(&[
        "--scale",
        "quick",
        "--session",
        "--workloads",
        "W5.grouped",
        "--rounds",
        "1",
        "--storage",
        "s3",
        "--readers",
        "dar,dar-cli,dar-sql,delta-rs,polars,duckdb",
    ]);
    let csv = std::fs::read_to_string(out.path().join("runs.csv")).unwrap();
    let (col, rows) = runs(&csv);
    for reader in ["dar", "dar-sql", "delta-rs", "polars", "duckdb"] {
        for phase in ["first", "second"] {
            let case = format!("W5.grouped/{phase}");
            let mine: Vec<&Vec<&str>> = rows
                .iter()
                .filter(|r| r[col("reader")] == reader && r[col("case")] == case)
                .collect();
            // The checked warm-up and one round, each with its result.
            assert_eq!(mine.len(), 2, "{reader} {case}: {mine:?}");
            for r in mine {
                assert_eq!(r[col("status")], "ok", "{reader} {case}: {r:?}");
                assert!(r[col("secs")].parse::<f64>().unwrap() > 0.0, "{r:?}");
            }
        }
    }
    // A reader with one process per query sits the session out, saying why.
    let cli: Vec<&Vec<&str>> = rows
        .iter()
        .filter(|r| r[col("reader")] == "dar-cli")
        .collect();
    assert!(!cli.is_empty());
    assert!(
        cli.iter().all(|r| r[col("status")] == "unsupported"),
        "{cli:?}"
    );
    let summary = std::fs::read_to_string(out.path().join("summary.md")).unwrap();
    assert!(summary.contains("W5.grouped/second"), "{summary}");
    assert!(out.path().join("charts/s3-W5.grouped-second.svg").exists());
}

/// `--serve`: `dar serve` and the two peers, each with 1 and 2 concurrent
/// clients, locally and over S3; every run returns the expected rows on
/// every query (the clients check them) and reports its latencies.
#[test]
fn serve_mode_loads_dar_serve_and_the_peers_with_concurrent_clients() {
    let out = bench(&[
        "--scale",
        "quick",
        "--serve",
        "--workloads",
        "W3",
        "--storage",
        "local,s3",
        "--clients",
        "1,2",
        "--serve-queries",
        "2",
    ]);
    let csv = std::fs::read_to_string(out.path().join("serve.csv")).unwrap();
    let (col, rows) = runs(&csv);
    for storage in ["local", "s3"] {
        for reader in ["dar-serve", "duckdb", "delta-rs"] {
            for clients in [1usize, 2] {
                let mine: Vec<&Vec<&str>> = rows
                    .iter()
                    .filter(|r| {
                        r[col("storage")] == storage
                            && r[col("reader")] == reader
                            && r[col("clients")] == clients.to_string()
                    })
                    .collect();
                assert_eq!(mine.len(), 1, "{storage} {reader} x{clients}: {mine:?}");
                let r = mine[0];
                assert_eq!(r[col("status")], "ok", "{r:?}");
                assert_eq!(r[col("queries")], (clients * 2).to_string(), "{r:?}");
                let p50: f64 = r[col("p50_ms")].parse().unwrap();
                let p99: f64 = r[col("p99_ms")].parse().unwrap();
                assert!(p50 > 0.0 && p99 >= p50, "{r:?}");
            }
        }
    }
    let summary = std::fs::read_to_string(out.path().join("serve.md")).unwrap();
    assert!(summary.contains("### W3"), "{summary}");
    assert!(summary.contains("Server peak RSS: "), "{summary}");
    for chart in ["serve-local-W3.svg", "serve-s3-W3.svg"] {
        let svg = std::fs::read_to_string(out.path().join("charts").join(chart)).unwrap();
        assert!(svg.contains("<svg") && svg.contains("dar-serve"), "{chart}");
    }
    // The server logged each query it ran.
    let log = std::fs::read_to_string(out.path().join("serve-local.log")).unwrap();
    assert!(log.contains("\"outcome\":\"ok\""), "{log}");
}
