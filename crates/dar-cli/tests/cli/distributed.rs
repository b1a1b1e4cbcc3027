//! `dar worker` child processes and `dar sql --workers`: the same rows as
//! a single process, and a worker killed during a query fails the query
//! with an error, never partial rows reported as complete.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};

use crate::{arg, dar, sample};

/// A `dar worker` child process on a free 127.0.0.1 port; killed on drop.
struct Worker {
    child: Child,
    address: String,
    /// Kept open: the worker's standard output.
    _stdout: BufReader<ChildStdout>,
}

impl Worker {
    fn start() -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_dar"))
            .args(["worker", "--listen", "127.0.0.1:0"])
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

/// Writes `files` files of `rows` rows: `id`, `grp` (5 values).
fn write_table(dir: &Path, files: usize, rows: usize) -> String {
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = Arc::new(object_store::local::LocalFileSystem::new_with_prefix(dir).unwrap());
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("grp", DataType::Utf8, false),
        ]));
        let mut table = dar_testkit::TableWriter::builder(
            store,
            object_store::path::Path::from("t"),
            schema.clone(),
        )
        .create()
        .await
        .unwrap();
        for f in 0..files {
            let ids = Int64Array::from_iter_values((f * rows) as i64..((f + 1) * rows) as i64);
            let groups = StringArray::from_iter_values((0..rows).map(|i| format!("g{}", i % 5)));
            let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(ids), Arc::new(groups)])
                .unwrap();
            table.append(&batch).await.unwrap();
        }
    });
    arg(&dir.join("t"))
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
