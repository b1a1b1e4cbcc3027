//! `s3://` tables through a real S3 protocol server
//! (`dar_io::testing::S3Server`, s3s-fs on 127.0.0.1), configured by `AWS_*`
//! environment variables or `--storage-option`.

use assert_cmd::Command;
use dar_io::testing::S3Server;

use crate::sample;

/// A server whose bucket `bucket` holds the sample table under `sample/`.
async fn serve_sample(bucket: &str) -> S3Server {
    let server = S3Server::start().await.unwrap();
    server.create_bucket(bucket).await.unwrap();
    server.upload_dir(&sample(), bucket, "sample").unwrap();
    server
}

/// `dar` with no `AWS_*` variables from the caller's environment.
fn dar_without_aws_env() -> Command {
    let mut c = crate::dar();
    for (k, _) in std::env::vars() {
        if k.starts_with("AWS_") {
            c.env_remove(k);
        }
    }
    c
}

/// Runs `cmd` off the async runtime (the server runs on it meanwhile).
async fn run(mut cmd: Command) -> std::process::Output {
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_table_from_environment_variables() {
    let server = serve_sample("env-bucket").await;
    let mut cmd = dar_without_aws_env();
    cmd.args(["scan", "s3://env-bucket/sample", "--format", "null"])
        .envs(server.env());
    let out = run(cmd).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "300\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_table_from_storage_options() {
    let server = serve_sample("opt-bucket").await;
    let mut cmd = dar_without_aws_env();
    cmd.args(["files", "s3://opt-bucket/sample", "--format", "json"]);
    for (k, v) in server.storage_options().iter() {
        cmd.args(["--storage-option", &format!("{k}={v}")]);
    }
    let out = run(cmd).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_credentials_fail_on_one_line_without_the_secret() {
    let server = serve_sample("auth-bucket").await;
    let wrong = "WRONG-SECRET-value-never-printed";
    let mut cmd = dar_without_aws_env();
    cmd.args(["info", "s3://auth-bucket/sample"])
        .envs(server.env())
        .env("AWS_SECRET_ACCESS_KEY", wrong);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("dar: error: "), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.contains(wrong), "{err}");
    assert!(!err.contains(S3Server::SECRET_KEY), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// The `io (scan)` and `cache` lines of `dar ... --stats` output.
fn stats_lines(stderr: &[u8]) -> (String, String) {
    let text = String::from_utf8_lossy(stderr).to_string();
    let line = |prefix: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} line in {text}"))
            .to_string()
    };
    (line("io (scan):"), line("cache:"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_run_with_a_cache_dir_fetches_no_footer_or_page() {
    let server = serve_sample("cache-bucket").await;
    let cache = tempfile::tempdir().unwrap();
    let scan = || {
        let mut cmd = dar_without_aws_env();
        cmd.args([
            "scan",
            "s3://cache-bucket/sample",
            "--format",
            "csv",
            "--stats",
        ])
        .args([
            "--filter",
            "trip_id BETWEEN 165 AND 175",
            "--columns",
            "trip_id,fare",
        ])
        .arg("--cache-dir")
        .arg(cache.path())
        .envs(server.env());
        cmd
    };
    let first = run(scan()).await;
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let (io, cache_line) = stats_lines(&first.stderr);
    assert!(io.contains("page_data") || io.contains("footer"), "{io}");
    assert!(cache_line.contains("0 on disk"), "{cache_line}");

    let second = run(scan()).await;
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    assert_eq!(second.stdout, first.stdout);
    let (io, cache_line) = stats_lines(&second.stderr);
    // No footer or page byte is fetched: the sample is one whole-object
    // read, and its one request now is the HEAD that checks the file is
    // the version the cache holds.
    assert!(io.contains("1 request, 0 B: footer 1 (0 B)"), "{io}");
    assert!(!cache_line.contains(" 0 on disk"), "{cache_line}");
    assert!(
        cache_line.contains("1 object checked with the store"),
        "{cache_line}"
    );

    // `dar sql` reads the same directory.
    let mut sql = dar_without_aws_env();
    sql.args([
        "sql",
        "SELECT count(*) AS n FROM t WHERE trip_id BETWEEN 165 AND 175",
        "--table",
        "t=s3://cache-bucket/sample",
        "--format",
        "csv",
    ])
    .arg("--cache-dir")
    .arg(cache.path())
    .envs(server.env());
    let out = run(sql).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "n\n8\n");

    // A directory that cannot be made is an error naming it.
    let file = cache.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let mut bad = dar_without_aws_env();
    bad.args(["info", "s3://cache-bucket/sample", "--cache-dir"])
        .arg(file.join("sub"))
        .envs(server.env());
    let out = run(bad).await;
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("cache directory") && err.contains("a-file"),
        "{err}"
    );
}

/// `dar changes` over S3 fetches a data file once when the feed reads it
/// in two commits (added in one, removed in the next): the second read
/// comes from the memory tier a feed keeps, and the rows are the local
/// copy's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_fetches_a_file_it_reads_in_two_commits_once() {
    let Some(path) = dar_testdata::table("kernel/cdf-table-simple") else {
        return;
    };
    let server = S3Server::start().await.unwrap();
    server.create_bucket("feed-bucket").await.unwrap();
    server.upload_dir(&path, "feed-bucket", "cdf").unwrap();
    let feed = |table: &str| {
        let mut cmd = dar_without_aws_env();
        cmd.args(["changes", table, "--from", "0", "--stats"])
            .args(["--format", "csv", "--output", "-"])
            .envs(server.env());
        cmd
    };
    let local = run(feed(&path.display().to_string())).await;
    let remote = run(feed("s3://feed-bucket/cdf")).await;
    for out in [&local, &remote] {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The rows without `_commit_timestamp`, the last column: these commits
    // have no in-commit timestamps, and an upload's modification time is
    // not the local file's.
    let sorted = |out: &std::process::Output| {
        let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.rsplit_once(',').map_or(l, |(rest, _)| rest).to_string())
            .collect();
        lines.sort();
        lines
    };
    assert_eq!(sorted(&remote), sorted(&local));
    assert_eq!(sorted(&local).len(), 26);
    // Version 0 adds the table's two files and version 1 removes both:
    // each is fetched for its insert rows and found in memory for its
    // delete rows.
    let (io, cache_line) = stats_lines(&remote.stderr);
    let hits: u64 = cache_line
        .trim_start()
        .trim_start_matches("cache:")
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no hit count in {cache_line}"));
    assert!(hits >= 2, "{cache_line} / {io}");
}
