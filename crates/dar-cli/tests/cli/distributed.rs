//! `dar worker` child processes and `dar sql --workers`: the same rows as
//! a single process, and a worker killed during a query fails the query
//! with an error, never partial rows reported as complete.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};

use crate::{arg, dar, sample, write_table};

/// A `dar worker` child process on a free 127.0.0.1 port; killed on drop.
struct Worker {
    child: Child,
    address: String,
    /// Kept open: the worker's standard output.
    _stdout: BufReader<ChildStdout>,
}

impl Worker {
    fn start() -> Self {
        Self::start_with(&[], None)
    }

    /// A worker with `args` after `worker --listen 127.0.0.1:0`, and
    /// `DAR_WORKER_TOKEN` set to `token` (or unset).
    fn start_with(args: &[&str], token: Option<&str>) -> Self {
        Self::spawn(Command::new(env!("CARGO_BIN_EXE_dar")), args, token)
    }

    /// A worker bounded to 8 GiB of address space (an allocation past it
    /// fails and aborts the worker, on any machine).
    fn start_bounded() -> Self {
        let dar = Path::new(env!("CARGO_BIN_EXE_dar"));
        let command =
            dar_testkit::child::bounded_command(dar, dar_testkit::child::CHILD_ADDRESS_SPACE);
        Self::spawn(command, &[], None)
    }

    /// `command` (the `dar` binary) run as a worker.
    fn spawn(mut command: Command, args: &[&str], token: Option<&str>) -> Self {
        command
            .args(["worker", "--listen", "127.0.0.1:0"])
            .args(args)
            .env_remove("DAR_WORKER_TOKEN");
        if let Some(token) = token {
            command.env("DAR_WORKER_TOKEN", token);
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let address = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        Self {
            child,
            address,
            _stdout: stdout,
        }
    }

    /// Whether the worker process is still running.
    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

fn addresses(workers: &[Worker]) -> String {
    workers
        .iter()
        .map(|w| w.address.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

fn sorted_lines(bytes: &[u8]) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8(bytes.to_vec())
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

#[test]
fn sql_on_worker_processes_gives_the_rows_of_one_process() {
    let workers: Vec<Worker> = (0..2).map(|_| Worker::start()).collect();
    let trips = format!("trips={}", arg(&sample()));
    for query in [
        "SELECT day, count(*) AS n, sum(passengers) AS p FROM trips GROUP BY day",
        "SELECT trip_id, vendor, fare FROM trips WHERE passengers > 2 AND fare > 10",
        "SELECT vendor, count(*) AS n FROM trips t JOIN (SELECT DISTINCT day FROM trips WHERE trip_id % 2 = 0) d ON t.day = d.day GROUP BY vendor",
    ] {
        let local = dar()
            .args(["sql", query, "--table", &trips, "--format", "csv"])
            .assert()
            .success();
        let remote = dar()
            .args(["sql", query, "--table", &trips, "--format", "csv"])
            .args(["--workers", &addresses(&workers)])
            .assert()
            .success();
        let want = sorted_lines(&local.get_output().stdout);
        assert!(want.len() > 1, "{query}: no rows");
        assert_eq!(sorted_lines(&remote.get_output().stdout), want, "{query}");
    }
}

/// `dar sql --workers` opens its tables on the coordinator as `dar sql`
/// does: the statistics of the columns the query filters on decode with
/// the checkpoint's counts, the plan parses none again, and the workers
/// count the rows of the two files it keeps.
#[test]
fn sql_on_workers_decodes_its_filter_columns_stats_at_open() {
    let workers: Vec<Worker> = (0..2).map(|_| Worker::start()).collect();
    let addresses = addresses(&workers);
    crate::sql::assert_filter_columns_stats_decoded_at_open(&["--workers", &addresses]);
}

/// Files whose reads are large enough for dar-io's buffer pool (160 KB of
/// uncompressed ids each): `dar scan`, `dar sql` and `dar sql --workers`
/// give every id once.
#[test]
fn large_local_reads_give_the_same_rows_through_scan_sql_and_workers() {
    let dir = tempfile::tempdir().unwrap();
    let options = dar_testkit::ParquetOptions::default()
        .with_codec(dar_testkit::Codec::Uncompressed)
        .with_dictionary(false);
    let rows = 20_000i64;
    let table = crate::write_id_table(dir.path(), 4, rows, 0, Some(options));
    let n = 4 * rows;
    let want_ids: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    let scanned = dar()
        .args(["scan", &table, "--format", "csv"])
        .assert()
        .success();
    let mut ids: Vec<String> = sorted_lines(&scanned.get_output().stdout)
        .into_iter()
        .filter(|l| l != "id")
        .collect();
    ids.sort_by_key(|l| l.parse::<i64>().unwrap());
    assert_eq!(ids, want_ids);

    let query = "SELECT count(*) AS n, sum(id) AS s, min(id) AS lo, max(id) AS hi FROM t";
    let mut want = vec![
        "n,s,lo,hi".to_string(),
        format!("{n},{},0,{}", n * (n - 1) / 2, n - 1),
    ];
    want.sort();
    let t = format!("t={table}");
    let local = dar()
        .args(["sql", query, "--table", &t, "--format", "csv"])
        .assert()
        .success();
    assert_eq!(sorted_lines(&local.get_output().stdout), want);
    let workers: Vec<Worker> = (0..2).map(|_| Worker::start()).collect();
    assert_eq!(on_workers(&workers, query, &[t]), want);
}

#[test]
fn workers_with_a_cache_dir_keep_what_they_fetch_there() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().to_str().unwrap();
    let workers: Vec<Worker> = (0..2)
        .map(|_| Worker::start_with(&["--data-cache-mib", "16", "--cache-dir", dir], None))
        .collect();
    let trips = format!("trips={}", arg(&sample()));
    let query = "SELECT trip_id, vendor, fare FROM trips WHERE passengers > 2 AND fare > 10";
    let run = || {
        let out = dar()
            .args(["sql", query, "--table", &trips, "--format", "csv"])
            .args(["--workers", &addresses(&workers)])
            .assert()
            .success();
        sorted_lines(&out.get_output().stdout)
    };
    let first = run();
    assert!(first.len() > 1);
    assert_eq!(run(), first);
    // Workers write entries in the background: wait (boundedly) for them.
    let namespace = cache.path().join(dar_io::RangeCache::NAMESPACE);
    let entries = || {
        dar_io::testing::files_under(&namespace)
            .iter()
            .filter(|f| std::fs::read(f).is_ok_and(|b| b.starts_with(b"DARCACHE")))
            .count()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while entries() == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(entries() > 0, "the workers kept nothing in {dir}");

    // A cache directory that cannot be made stops the worker, naming it.
    let blocker = cache.path().join("a-file");
    std::fs::write(&blocker, b"x").unwrap();
    let bad = blocker.join("sub");
    let out = dar()
        .args([
            "worker",
            "--listen",
            "127.0.0.1:0",
            "--cache-dir",
            bad.to_str().unwrap(),
        ])
        .assert()
        .failure();
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.contains("a-file"), "{err}");
}

#[test]
fn bad_worker_addresses_are_one_line_errors() {
    let out = dar()
        .args(["sql", "SELECT 1", "--workers", "not a host"])
        .assert()
        .failure();
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.contains("--workers"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn a_worker_that_cannot_listen_says_where() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let out = dar()
        .args(["worker", "--listen", &address])
        .assert()
        .failure();
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        err.starts_with(&format!("dar: error: dar worker on {address}: ")),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// CPU time (user + system, in clock ticks) of process `pid`.
#[cfg(target_os = "linux")]
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which is in parentheses).
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn a_worker_killed_during_a_query_fails_it_with_an_error() {
    use std::time::{Duration, Instant};

    let dir = tempfile::tempdir().unwrap();
    let table = write_table(dir.path(), 12, 25_000);
    let mut workers: Vec<Worker> = (0..3).map(|_| Worker::start()).collect();
    let before: Vec<u64> = workers.iter().map(|w| cpu_ticks(w.child.id())).collect();
    // A filter DataFusion evaluates on the workers, slow on purpose: a
    // regular expression over 4 KB strings, anchored at both ends so it
    // reads them whole (seconds of work in a debug build).
    let query = "SELECT grp, count(*) AS n FROM t \
                 WHERE regexp_like(repeat(grp, 2000), '^(g[0-9])+$') GROUP BY grp";
    let mut sql = Command::new(env!("CARGO_BIN_EXE_dar"))
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .args([
            "sql",
            query,
            "--table",
            &format!("t={table}"),
            "--format",
            "csv",
        ])
        .args(["--workers", &addresses(&workers)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the worker to kill is busy with the query (its CPU time
    // grows), so that it dies mid-query, not before it.
    let victim = 1;
    let pid = workers[victim].child.id();
    let started = Instant::now();
    while cpu_ticks(pid) < before[victim] + 50 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "worker {} never got busy",
            workers[victim].address
        );
        assert!(sql.try_wait().unwrap().is_none(), "the query ended early");
        std::thread::sleep(Duration::from_millis(50));
    }
    let killed = workers[victim].address.clone();
    workers[victim].kill();

    // The query fails by itself, promptly, with one line naming the worker.
    let started = Instant::now();
    let status = loop {
        if let Some(status) = sql.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the query did not fail after worker {killed} died"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stdout = String::new();
    sql.stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let mut stderr = String::new();
    sql.stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    let error = stderr.trim().lines().last().unwrap_or_default();
    assert!(error.starts_with("dar: error: query failed: "), "{stderr}");
    assert!(
        error.contains(&format!("worker {killed} no longer reachable")),
        "{stderr}"
    );
    // Nothing else, except at times datafusion-distributed 4.0's own report
    // of a panic while it tears the failed query down (its coordinator joins
    // a task that was cancelled), which does not change the outcome.
    let upstream = |l: &str| {
        l.contains("panicked at") && l.contains("join_set.rs")
            || l.contains("was cancelled")
            || l.starts_with("note: run with `RUST_BACKTRACE")
            || l.trim().is_empty()
    };
    let others: Vec<&str> = stderr
        .trim()
        .lines()
        .rev()
        .skip(1)
        .filter(|l| !upstream(l))
        .collect();
    assert!(others.is_empty(), "{stderr}");
    // No result rows (at most the CSV header).
    assert!(stdout.lines().count() <= 1, "{stdout}");
}

/// Reads `from` to its end on a thread of its own, so that a child
/// writing more than a pipe holds never blocks on it.
fn drain(from: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut from = from;
        let mut bytes = Vec::new();
        let _ = from.read_to_end(&mut bytes);
        bytes
    })
}

/// A streaming query (no aggregate, no ORDER BY: rows reach the
/// coordinator while the workers still scan) whose worker is killed
/// midway exits 1 with the error and writes no row: `dar sql --workers`
/// holds its output until the query has succeeded.
#[cfg(target_os = "linux")]
#[test]
fn a_worker_killed_during_a_streaming_query_writes_no_row() {
    use std::time::{Duration, Instant};

    let dir = tempfile::tempdir().unwrap();
    let table = write_table(dir.path(), 12, 25_000);
    let mut workers: Vec<Worker> = (0..3).map(|_| Worker::start()).collect();
    let before: Vec<u64> = workers.iter().map(|w| cpu_ticks(w.child.id())).collect();
    // The slow filter of the test above, without the aggregate: every
    // batch that passes it is a result batch.
    let query = "SELECT id, grp FROM t WHERE regexp_like(repeat(grp, 2000), '^(g[0-9])+$')";
    let mut sql = Command::new(env!("CARGO_BIN_EXE_dar"))
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .args([
            "sql",
            query,
            "--table",
            &format!("t={table}"),
            "--format",
            "csv",
        ])
        .args(["--workers", &addresses(&workers)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = drain(sql.stdout.take().unwrap());
    let stderr = drain(sql.stderr.take().unwrap());
    // Kill a worker once every worker has done a good share of its work
    // (a second and a half of CPU each): by then result batches have
    // reached the coordinator, but the query is far from done.
    let victim = 1;
    let started = Instant::now();
    while workers
        .iter()
        .zip(&before)
        .any(|(w, b)| cpu_ticks(w.child.id()) < b + 150)
    {
        assert!(
            started.elapsed() < Duration::from_secs(180),
            "the workers never got busy"
        );
        assert!(sql.try_wait().unwrap().is_none(), "the query ended early");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(sql.try_wait().unwrap().is_none(), "the query ended early");
    let killed = workers[victim].address.clone();
    workers[victim].kill();

    let started = Instant::now();
    let status = loop {
        if let Some(status) = sql.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the query did not fail after worker {killed} died"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = String::from_utf8(stdout.join().unwrap()).unwrap();
    let stderr = String::from_utf8(stderr.join().unwrap()).unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("worker {killed} no longer reachable")),
        "{stderr}"
    );
    // Not one row, not even the CSV header.
    assert_eq!(
        stdout.len(),
        0,
        "{} lines on stdout of a failed query, the first: {:?}",
        stdout.lines().count(),
        stdout.lines().next()
    );
}

/// A table partitioned by a double and a float column whose values are
/// NaN, ±Infinity, -0.0, 0.0 and ordinary numbers; 30 rows, one file per
/// pair of values.
fn write_special_floats(dir: &Path) -> String {
    use std::sync::Arc;

    use arrow_array::{Float32Array, Float64Array, Int64Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};

    let doubles = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0, 1.5];
    let floats = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 2.5];
    let mut d = Vec::new();
    let mut f = Vec::new();
    for x in doubles {
        for y in floats {
            d.push(x);
            f.push(y);
        }
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = std::sync::Arc::new(
            object_store::local::LocalFileSystem::new_with_prefix(dir).unwrap(),
        );
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("d", DataType::Float64, true),
            Field::new("f", DataType::Float32, true),
        ]));
        let mut table = dar_testkit::TableWriter::builder(
            store,
            object_store::path::Path::from("t"),
            schema.clone(),
        )
        .with_partition_columns(["d", "f"])
        .create()
        .await
        .unwrap();
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from_iter_values(0..d.len() as i64)),
                Arc::new(Float64Array::from(d)),
                Arc::new(Float32Array::from(f)),
            ],
        )
        .unwrap();
        table.append(&batch).await.unwrap();
    });
    arg(&dir.join("t"))
}

/// NaN, ±Infinity and -0.0 partition values (double and float) cross to
/// the workers: the same rows as in one process.
#[test]
fn special_float_partition_values_give_the_rows_of_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let table = format!("t={}", write_special_floats(dir.path()));
    let workers: Vec<Worker> = (0..2).map(|_| Worker::start()).collect();
    let queries = [
        "SELECT id, d, f FROM t",
        "SELECT d, f, count(*) AS n FROM t GROUP BY d, f",
        "SELECT id, d, f FROM t WHERE d > 0 OR f < 0",
        "SELECT id, f FROM t WHERE d <> 1.5",
    ];
    for query in queries {
        let plan = dar()
            .args(["sql", query, "--table", &table, "--explain"])
            .args(["--workers", &addresses(&workers)])
            .assert()
            .success();
        let plan = String::from_utf8(plan.get_output().stdout.clone()).unwrap();
        assert!(plan.contains("DistributedLeafExec"), "{query}: {plan}");
        let local = dar()
            .args(["sql", query, "--table", &table, "--format", "csv"])
            .assert()
            .success();
        let remote = dar()
            .args(["sql", query, "--table", &table, "--format", "csv"])
            .args(["--workers", &addresses(&workers)])
            .assert()
            .success();
        let want = sorted_lines(&local.get_output().stdout);
        assert!(want.len() > 1, "{query}: no rows");
        assert_eq!(sorted_lines(&remote.get_output().stdout), want, "{query}");
    }
    // Every special value was read.
    let all = dar()
        .args(["sql", queries[0], "--table", &table, "--format", "csv"])
        .args(["--workers", &addresses(&workers)])
        .assert()
        .success();
    let rows = sorted_lines(&all.get_output().stdout);
    assert_eq!(rows.len(), 31, "{rows:?}");
    let doubles: std::collections::BTreeSet<&str> =
        rows.iter().filter_map(|r| r.split(',').nth(1)).collect();
    for value in ["NaN", "inf", "-inf", "-0.0", "0.0", "1.5"] {
        assert!(doubles.contains(value), "no d = {value}: {doubles:?}");
    }
}

#[test]
fn a_worker_beyond_loopback_without_a_token_refuses_to_start() {
    // Refused before it binds: nothing ever listens on 0.0.0.0.
    let out = dar()
        .env_remove("DAR_WORKER_TOKEN")
        .args(["worker", "--listen", "0.0.0.0:0"])
        .timeout(std::time::Duration::from_secs(30))
        .assert()
        .failure();
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        err.starts_with(
            "dar: error: dar worker on 0.0.0.0:0: listening beyond loopback needs a token"
        ),
        "{err}"
    );
    assert!(err.contains("--token-file PATH"), "{err}");
    assert!(err.contains("DAR_WORKER_TOKEN"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(out.get_output().stdout.is_empty());

    // A token is never taken from the command line.
    let out = dar()
        .args(["worker", "--token", "a-token-long-enough-0123"])
        .assert()
        .failure();
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.contains("--token"), "{err}");
    assert!(!err.contains("a-token-long-enough-0123"), "{err}");
}

/// A CA, and a certificate for 127.0.0.1 signed by it, as PEM files in
/// `dir`: (ca, cert, key).
fn certificates(dir: &Path) -> (String, String, String) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};

    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .subject_alt_names
        .push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
    let cert = params.signed_by(&key, &issuer).unwrap();
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        arg(&path)
    };
    (
        write("ca.pem", ca.pem()),
        write("cert.pem", cert.pem()),
        write("key.pem", key.serialize_pem()),
    )
}

/// Workers with a token (from a file) and TLS serve `dar sql` given the
/// same token (file or environment) and their CA; without the token, with
/// another, or in plain text the query fails with one line that shows no
/// token, and writes no row.
#[test]
fn workers_with_a_token_and_tls_serve_only_callers_with_both() {
    const SECRET: &str = "cli-worker-secret-0123456789";
    let dir = tempfile::tempdir().unwrap();
    let (ca, cert, key) = certificates(dir.path());
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{SECRET}\n")).unwrap();
    let token_file = arg(&token_file);
    let tls = [
        "--token-file",
        token_file.as_str(),
        "--tls-cert",
        cert.as_str(),
        "--tls-key",
        key.as_str(),
        "--tls-ca",
        ca.as_str(),
    ];
    let workers: Vec<Worker> = (0..2).map(|_| Worker::start_with(&tls, None)).collect();
    let https = |scheme: &str| {
        workers
            .iter()
            .map(|w| format!("{scheme}://{}", w.address))
            .collect::<Vec<_>>()
            .join(",")
    };
    let trips = format!("trips={}", arg(&sample()));
    let query = "SELECT day, count(*) AS n, sum(passengers) AS p FROM trips GROUP BY day";
    let sql = |workers: &str, extra: &[&str], token: Option<&str>| {
        let mut c = dar();
        c.env_remove("DAR_WORKER_TOKEN")
            .args(["sql", query, "--table", &trips, "--format", "csv"])
            .args(["--workers", workers])
            .args(extra);
        if let Some(t) = token {
            c.env("DAR_WORKER_TOKEN", t);
        }
        c.assert()
    };
    let local = dar()
        .args(["sql", query, "--table", &trips, "--format", "csv"])
        .assert()
        .success();
    let want = sorted_lines(&local.get_output().stdout);

    // The token from a file, then from the environment.
    let ok = sql(
        &https("https"),
        &["--token-file", &token_file, "--tls-ca", &ca],
        None,
    )
    .success();
    assert_eq!(sorted_lines(&ok.get_output().stdout), want);
    let ok = sql(&https("https"), &["--tls-ca", &ca], Some(SECRET)).success();
    assert_eq!(sorted_lines(&ok.get_output().stdout), want);

    let failures: [(&str, Vec<&str>, Option<&str>, &str); 4] = [
        (
            "https",
            vec!["--tls-ca", ca.as_str()],
            None,
            "requires a token and the call has none",
        ),
        (
            "https",
            vec!["--tls-ca", ca.as_str()],
            Some("another-secret-0123456789"),
            "its token is not the one it requires",
        ),
        // Plain text to a TLS worker.
        (
            "http",
            vec!["--token-file", token_file.as_str()],
            None,
            "worker 127.0.0.1:",
        ),
        // TLS without the private CA: the system's roots do not know it.
        (
            "https",
            vec!["--token-file", token_file.as_str()],
            None,
            "certificate",
        ),
    ];
    for (scheme, extra, token, expected) in failures {
        let out = sql(&https(scheme), &extra, token).failure();
        let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert!(err.starts_with("dar: error: query failed: "), "{err}");
        assert!(err.contains(expected), "{scheme} {extra:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(
            !err.contains(SECRET) && !err.contains("another-secret"),
            "{err}"
        );
        assert!(out.get_output().stdout.is_empty(), "{scheme} {extra:?}");
    }

    // A token file that is not one: named, its content never shown.
    let short = dir.path().join("short");
    std::fs::write(&short, "tiny-secret").unwrap();
    let out = sql(&https("https"), &["--token-file", &arg(&short)], None).failure();
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.contains("invalid --token-file"), "{err}");
    assert!(err.contains("at least 16"), "{err}");
    assert!(!err.contains("tiny-secret"), "{err}");
}

/// Issue 33, item 8 on workers: one data file of eight whose footer claims
/// 2^31-1 row groups, or whose page index claims 2^31-1 page locations,
/// read by a worker, is the query's one error line naming the file and
/// the worker, and both workers live on (a worker died of SIGABRT:
/// parquet allocated for the claim; each runs bounded to 8 GiB so that it
/// would on any machine).
#[test]
fn workers_refuse_a_claimed_length_and_live_on() {
    use dar_testkit::HandTable;
    use dar_testkit::claims::{CLAIM_MAX, CLAIMS, base_file, with_claim};
    use serde_json::json;

    let mut workers: Vec<Worker> = (0..2).map(|_| Worker::start_bounded()).collect();
    let base = base_file().unwrap();
    for name in ["row groups", "page locations"] {
        let claim = CLAIMS.iter().find(|c| c.name == name).unwrap();
        let hostile = with_claim(&base, claim, CLAIM_MAX).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let mut t = HandTable::new(tmp.path()).unwrap();
        let columns = json!([
            HandTable::field("id", json!("long"), json!({})),
            HandTable::field("s", json!("string"), json!({})),
        ]);
        let mut actions = vec![
            HandTable::protocol(),
            HandTable::metadata(columns, &[], json!({})),
        ];
        for i in 0..8 {
            let bytes = if i == 5 { &hostile } else { &base };
            let file = format!("part-{i}.parquet");
            std::fs::write(tmp.path().join(&file), bytes).unwrap();
            actions.push(HandTable::add(&file, bytes.len() as u64, json!({}), None));
        }
        t.commit(&actions).unwrap();
        let table = format!("t={}", arg(tmp.path()));
        let out = dar()
            .args([
                "sql",
                "SELECT count(*) FROM t WHERE id > 1",
                "--table",
                &table,
            ])
            .args(["--workers", &addresses(&workers)])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(
            err.contains("worker 127.0.0.1:")
                && err.contains("part-5.parquet")
                && err.contains("claims"),
            "{name}: {err}"
        );
        assert!(
            workers.iter_mut().all(Worker::alive),
            "{name}: a worker died"
        );
    }
}

/// `dar sql --workers` on `tables` (`name=path`): CSV lines, sorted.
fn on_workers(workers: &[Worker], query: &str, tables: &[String]) -> Vec<String> {
    let mut command = dar();
    command.args(["sql", query, "--format", "csv"]);
    for t in tables {
        command.args(["--table", t]);
    }
    let out = command
        .args(["--workers", &addresses(workers)])
        .assert()
        .success();
    sorted_lines(&out.get_output().stdout)
}

/// Issue 33 items 6, 7 and 10 on workers: statistics that lie (a negative
/// `numRecords`, all NULL yet bounds, swapped bounds, ...) neither prune a
/// worker's rows nor answer an aggregate, and widened floats whose bounds
/// come from a checkpoint's `stats_parsed` keep their rows.
#[test]
fn workers_neither_prune_nor_answer_from_statistics_that_lie() {
    let workers: Vec<Worker> = (0..2).map(|_| Worker::start()).collect();
    for case in dar_testkit::BadStats::ALL {
        let tmp = tempfile::tempdir().unwrap();
        let truth = dar_testkit::write_bad_stats_table(tmp.path(), case).unwrap();
        let table = [format!("t={}", arg(tmp.path()))];
        let show = |v: Option<i64>| v.map_or(String::new(), |v| v.to_string());
        assert_eq!(
            on_workers(
                &workers,
                "SELECT count(*) AS n, count(x) AS c, min(x) AS lo, max(x) AS hi FROM t",
                &table
            ),
            vec![
                format!(
                    "{},{},{},{}",
                    truth.rows(),
                    truth.non_null(),
                    show(truth.min()),
                    show(truth.max())
                ),
                "n,c,lo,hi".to_string(),
            ],
            "{case:?}"
        );
        // One scan per value, each pruned on its own.
        let values: Vec<i64> = truth.values.iter().flatten().copied().collect();
        let query = values
            .iter()
            .map(|x| format!("SELECT {x} AS v, count(*) AS n FROM t WHERE x = {x}"))
            .collect::<Vec<_>>()
            .join(" UNION ALL ");
        let mut want: Vec<String> = values
            .iter()
            .map(|x| format!("{x},{}", truth.equal_to(*x)))
            .chain(["v,n".to_string()])
            .collect();
        want.sort();
        want.dedup();
        let mut got = on_workers(&workers, &query, &table);
        got.dedup();
        assert_eq!(got, want, "{case:?}");
    }

    let tmp = tempfile::tempdir().unwrap();
    let options = dar_testkit::CheckpointOptions::default()
        .with_stats_json(false)
        .with_stats_parsed(true);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(dar_testkit::write_widened_float_table(
            tmp.path(),
            &options,
            false,
        ))
        .unwrap();
    let table = [format!("t={}", arg(tmp.path()))];
    let (a, b) = (f64::from(0.7f32), f64::from(0.1f32));
    assert_eq!(
        on_workers(
            &workers,
            &format!(
                "SELECT 'eq' AS q, count(*) AS n FROM t WHERE x = {a:?} \
                 UNION ALL SELECT 'in', count(*) FROM t WHERE x IN ({a:?}, {b:?})"
            ),
            &table
        ),
        vec!["eq,1", "in,2", "q,n"]
    );
}
