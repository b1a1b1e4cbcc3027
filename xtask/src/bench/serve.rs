//! `cargo xtask bench --serve`: `dar serve` under 1, 4 and 16 concurrent
//! Flight SQL clients (the ADBC driver from PyPI), beside the readers an
//! application would embed instead with the same client threads: DuckDB
//! (the table `ATTACH`ed with `PIN_SNAPSHOT`, a cursor per thread) and
//! deltalake (one `DeltaTable`, a `QueryBuilder` per thread). Each client
//! runs the case's query once untimed, then all start together and run it
//! back to back: queries per second and p50 / p95 / p99 latency of the warm
//! query. Writes `serve.csv`, `serve.md` (with the server's CPU and peak
//! RSS) and latency charts (`charts/serve-<storage>-<case>.svg`) into the
//! output directory.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{BenchOptions, Storage};
use crate::fixtures::Manifest;
use crate::readers::RunContext;
use crate::s3::{Proxy, S3Storage};
use crate::workload::{self, Action, Case};

/// The clients' script, written beside `peers.py` in the venv.
pub const SERVE_CLIENTS_PY: &str = include_str!("../../python/serve_clients.py");

/// How the serve bench loads the server.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Concurrent clients, one run each (default 1, 4, 16).
    pub clients: Vec<usize>,
    /// Timed queries per client in a run.
    pub queries: usize,
    /// `dar serve --memory-limit`.
    pub memory_limit: String,
}

/// The readers, in report order.
const READERS: [&str; 3] = ["dar-serve", "duckdb", "delta-rs"];

/// One run: a row of `serve.csv`.
#[derive(Debug, Clone, Serialize)]
pub struct ServeRun {
    storage: &'static str,
    case: String,
    reader: &'static str,
    clients: usize,
    status: &'static str,
    queries: u64,
    qps: f64,
    p50_ms: f64,
    p95_ms: f64,
    p99_ms: f64,
    /// The client process's CPU seconds over the timed span.
    client_cpu_secs: f64,
    /// The server's CPU seconds over the whole client process (its
    /// connections and warm-up queries included; dar-serve only).
    server_cpu_secs: Option<f64>,
    secs: f64,
    note: String,
}

/// What `serve_clients.py` reports.
#[derive(Debug, Deserialize)]
struct ClientsResult {
    queries: u64,
    secs: f64,
    qps: f64,
    p50: f64,
    p95: f64,
    p99: f64,
    cpu_secs: f64,
}

/// A running `dar serve`, stopped (SIGTERM, then killed) on drop.
struct Served {
    child: Child,
    address: String,
}

impl Served {
    /// Starts `dar serve` on a free port with `tables` (`name`, `uri`)
    /// and `options` for every table; waits until it listens.
    fn start(
        dar: &Path,
        tables: &[(String, String)],
        options: &BTreeMap<String, String>,
        memory_limit: &str,
        log: &Path,
    ) -> Result<Served, String> {
        let log_file = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let mut cmd = Command::new(dar);
        cmd.args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--memory-limit",
            memory_limit,
        ]);
        for (name, uri) in tables {
            cmd.args(["--table", &format!("{name}={uri}")]);
        }
        for (k, v) in options {
            cmd.args(["--storage-option", &format!("{k}={v}")]);
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log_file)
            .spawn()
            .map_err(|e| format!("{}: {e}", dar.display()))?;
        let stdout = child.stdout.take().ok_or("dar serve: no stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let mut address = None;
        for line in lines.by_ref() {
            let line = line.map_err(|e| e.to_string())?;
            eprintln!("bench serve: {line}");
            if let Some(a) = line.strip_prefix("listening on ") {
                address = Some(a.trim().to_string());
                break;
            }
        }
        // Keep reading: a full pipe would stop the server.
        std::thread::spawn(move || for _ in lines {});
        match address {
            Some(address) => Ok(Served { child, address }),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                Err(format!(
                    "dar serve ended before listening (see {})",
                    log.display()
                ))
            }
        }
    }

    /// The server's CPU seconds so far (`/proc/PID/stat`).
    fn cpu_secs(&self, ticks_per_sec: f64) -> Option<f64> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).ok()?;
        // Fields after the command name (which may hold spaces).
        let rest = stat.rsplit_once(')')?.1;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let utime: f64 = fields.get(11)?.parse().ok()?;
        let stime: f64 = fields.get(12)?.parse().ok()?;
        Some((utime + stime) / ticks_per_sec)
    }

    /// The server's peak RSS in MiB (`VmHWM`).
    fn peak_rss_mib(&self) -> Option<f64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib / 1024.0)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The query of `case` over `source`.
fn sql(case: &Case, source: &str) -> String {
    let cols: Vec<String> = case
        .columns
        .iter()
        .map(|c| format!("\"{}\"", c.replace('"', "\"\"")))
        .collect();
    let mut sql = format!("SELECT {} FROM {source}", cols.join(", "));
    if let Some(f) = &case.filter {
        sql.push_str(&format!(" WHERE {f}"));
    }
    if let Some(l) = case.limit {
        sql.push_str(&format!(" LIMIT {l}"));
    }
    sql
}

/// Clock ticks per second of `/proc/PID/stat`.
fn ticks_per_sec() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// Runs the serve bench; returns the output directory.
pub fn run(
    opts: &BenchOptions,
    serve: &ServeOptions,
    manifest: &Manifest,
    ctx: &RunContext,
) -> Result<PathBuf, String> {
    std::fs::create_dir_all(&opts.out).map_err(|e| format!("{}: {e}", opts.out.display()))?;
    let script = ctx
        .peers_py
        .parent()
        .ok_or("peers.py has no folder")?
        .join("serve_clients.py");
    std::fs::write(&script, SERVE_CLIENTS_PY).map_err(|e| format!("{}: {e}", script.display()))?;
    // The W3 and W5 queries by default: the application-serving shapes.
    let wanted: Vec<String> = if opts.workloads.is_empty() {
        vec!["W3".into(), "W5".into()]
    } else {
        opts.workloads.clone()
    };
    let cases: Vec<Case> = workload::cases(false, &opts.scale.sizes())
        .into_iter()
        .filter(|c| c.action == Action::Scan && c.on_s3)
        .filter(|c| {
            wanted
                .iter()
                .any(|w| w == &c.id || w == workload::workload_of(&c.id))
        })
        .collect();
    if cases.is_empty() {
        return Err(format!(
            "--serve: no scan case matches --workloads {}",
            wanted.join(",")
        ));
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let mut uploads: Vec<(PathBuf, String)> = Vec::new();
    let mut tables: Vec<String> = Vec::new();
    for c in &cases {
        let t = manifest.table(&c.table)?;
        if !tables.contains(&c.table) {
            tables.push(c.table.clone());
            uploads.push((opts.fixtures.join(&t.dir), t.dir.clone()));
        }
    }
    let ticks = ticks_per_sec();
    let mut runs: Vec<ServeRun> = Vec::new();
    let mut servers: Vec<(Storage, Option<f64>)> = Vec::new();
    let mut s3: Option<S3Storage> = None;
    for &storage in &opts.storage {
        let proxy: Option<Proxy> = match storage {
            Storage::Local => None,
            Storage::S3 | Storage::S3Slow => {
                if s3.is_none() {
                    s3 = Some(rt.block_on(S3Storage::start(&uploads))?);
                }
                let server = s3.as_ref().ok_or("no S3 server")?;
                let link = storage.link().ok_or("no link")?;
                Some(rt.block_on(Proxy::start(server.endpoint(), link, false))?)
            }
            Storage::Azure | Storage::Gcs => {
                return Err(format!(
                    "--serve runs on local, s3 and s3-slow (not {})",
                    storage.name()
                ));
            }
        };
        let uri_of = |dir: &str| match proxy {
            None => opts.fixtures.join(dir).display().to_string(),
            Some(_) => format!("s3://{}/{dir}", crate::s3::BUCKET),
        };
        let options = match (&proxy, &s3) {
            (Some(p), Some(server)) => server.options_via(p.endpoint()),
            _ => BTreeMap::new(),
        };
        let served_tables: Vec<(String, String)> = tables
            .iter()
            .map(|t| Ok((t.clone(), uri_of(&manifest.table(t)?.dir))))
            .collect::<Result<_, String>>()?;
        let log = opts.out.join(format!("serve-{}.log", storage.name()));
        let served = Served::start(
            &ctx.dar,
            &served_tables,
            &options,
            &serve.memory_limit,
            &log,
        )?;
        for case in &cases {
            let table = manifest.table(&case.table)?;
            let (rows, _) = super::expected(case, table)?;
            for reader in READERS {
                for &clients in &serve.clients {
                    let mut spec = serde_json::json!({
                        "reader": reader,
                        "clients": clients,
                        "queries": serve.queries,
                        "rows": rows,
                    });
                    if reader == "dar-serve" {
                        spec["server"] = format!("grpc://{}", served.address).into();
                        spec["sql"] = sql(case, &case.table).into();
                    } else {
                        spec["uri"] = uri_of(&table.dir).into();
                        spec["sql"] = sql(case, "t").into();
                        if !options.is_empty() {
                            spec["storage"] =
                                serde_json::to_value(&options).map_err(|e| e.to_string())?;
                        }
                    }
                    let cpu_before = served.cpu_secs(ticks);
                    let run = run_clients(ctx, &script, &spec, storage, case, reader, clients);
                    let run = ServeRun {
                        server_cpu_secs: (reader == "dar-serve")
                            .then(|| Some(served.cpu_secs(ticks)? - cpu_before?))
                            .flatten(),
                        ..run
                    };
                    eprintln!(
                        "bench serve {} {} {reader} x{clients}: {} qps {:.1}, p50 {:.1} ms, p99 {:.1} ms {}",
                        storage.name(),
                        case.id,
                        run.status,
                        run.qps,
                        run.p50_ms,
                        run.p99_ms,
                        run.note
                    );
                    runs.push(run);
                    write_csv(&opts.out.join("serve.csv"), &runs)?;
                }
            }
        }
        servers.push((storage, served.peak_rss_mib()));
        drop(served);
    }
    std::fs::write(
        opts.out.join("serve.md"),
        summary(opts, serve, &runs, &servers),
    )
    .map_err(|e| e.to_string())?;
    write_charts(&opts.out, &runs)?;
    Ok(opts.out.clone())
}

/// One run of `serve_clients.py`.
fn run_clients(
    ctx: &RunContext,
    script: &Path,
    spec: &serde_json::Value,
    storage: Storage,
    case: &Case,
    reader: &'static str,
    clients: usize,
) -> ServeRun {
    let mut run = ServeRun {
        storage: storage.name(),
        case: case.id.clone(),
        reader,
        clients,
        status: "failed",
        queries: 0,
        qps: 0.0,
        p50_ms: 0.0,
        p95_ms: 0.0,
        p99_ms: 0.0,
        client_cpu_secs: 0.0,
        server_cpu_secs: None,
        secs: 0.0,
        note: String::new(),
    };
    let out = Command::new(&ctx.python)
        .arg(script)
        .arg(spec.to_string())
        .stdin(Stdio::null())
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            run.note = format!("{}: {e}", ctx.python.display());
            return run;
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = |prefix: &str| {
        stderr
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix(prefix).map(str::to_string))
    };
    match last("RESULT ").map(|r| serde_json::from_str::<ClientsResult>(&r)) {
        Some(Ok(r)) => {
            run.status = "ok";
            run.queries = r.queries;
            run.qps = r.qps;
            run.p50_ms = r.p50 * 1000.0;
            run.p95_ms = r.p95 * 1000.0;
            run.p99_ms = r.p99 * 1000.0;
            run.client_cpu_secs = r.cpu_secs;
            run.secs = r.secs;
        }
        Some(Err(e)) => run.note = format!("bad result: {e}"),
        None => {
            // As the reader runs report a failure: its ERROR line, else
            // the exit status and the last lines it wrote.
            run.note = last("ERROR ").unwrap_or_else(|| {
                let lines: Vec<&str> = stderr.lines().collect();
                let tail = &lines[lines.len().saturating_sub(5)..];
                format!("exit {}: {}", out.status, tail.join(" | "))
            })
        }
    }
    run
}

fn write_csv(path: &Path, runs: &[ServeRun]) -> Result<(), String> {
    let mut out = String::from(
        "storage,case,reader,clients,status,queries,qps,p50_ms,p95_ms,p99_ms,client_cpu_secs,server_cpu_secs,secs,note\n",
    );
    for r in runs {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{:.3},{:.3},{:.3},{:.3},{:.3},{},{:.3},\"{}\"",
            r.storage,
            r.case,
            r.reader,
            r.clients,
            r.status,
            r.queries,
            r.qps,
            r.p50_ms,
            r.p95_ms,
            r.p99_ms,
            r.client_cpu_secs,
            r.server_cpu_secs
                .map_or(String::new(), |c| format!("{c:.3}")),
            r.secs,
            r.note.replace('"', "'")
        );
    }
    std::fs::write(path, out).map_err(|e| format!("{}: {e}", path.display()))
}

/// `serve.md`: one table per storage and case, the readers side by side.
fn summary(
    opts: &BenchOptions,
    serve: &ServeOptions,
    runs: &[ServeRun],
    servers: &[(Storage, Option<f64>)],
) -> String {
    let mut out = format!(
        "# dar serve under concurrent clients ({} scale, {} timed queries per client)\n\n\
         `dar serve --memory-limit {}`; clients through the ADBC Flight SQL driver. \
         Peers with the same client threads: DuckDB (one connection, the table ATTACHed \
         with PIN_SNAPSHOT, a cursor per thread) and deltalake (one DeltaTable, a \
         QueryBuilder per thread). Latencies of the warm query (each client ran it once first); \
         the server's CPU covers the whole client process, warm-up included.\n",
        opts.scale.name(),
        serve.queries,
        serve.memory_limit
    );
    for (storage, rss) in servers {
        let _ = writeln!(
            out,
            "\n## {}\n\nServer peak RSS: {}\n",
            storage.name(),
            rss.map_or("unknown".into(), |r| format!("{r:.0} MiB"))
        );
        let mut cases: Vec<&str> = Vec::new();
        for r in runs.iter().filter(|r| r.storage == storage.name()) {
            if !cases.contains(&r.case.as_str()) {
                cases.push(&r.case);
            }
        }
        for case in cases {
            let _ = writeln!(
                out,
                "### {case}\n\n| reader | clients | QPS | p50 ms | p95 ms | p99 ms | p99/p50 | server CPU s | note |\n|---|---|---|---|---|---|---|---|---|"
            );
            for r in runs
                .iter()
                .filter(|r| r.storage == storage.name() && r.case == case)
            {
                let ratio = if r.p50_ms > 0.0 {
                    r.p99_ms / r.p50_ms
                } else {
                    0.0
                };
                let server = r
                    .server_cpu_secs
                    .map_or(String::new(), |c| format!("{c:.2}"));
                let _ = writeln!(
                    out,
                    "| {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} | {server} | {} |",
                    r.reader, r.clients, r.qps, r.p50_ms, r.p95_ms, r.p99_ms, ratio, r.note
                );
            }
            out.push('\n');
        }
    }
    out
}

/// `<out>/charts/serve-<storage>-<case>.svg`: per reader, the p50 (solid)
/// and p99 (dashed) latency of the warm query against the clients.
fn write_charts(out: &Path, runs: &[ServeRun]) -> Result<(), String> {
    use plotters::prelude::*;
    let dir = out.join("charts");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut panels: Vec<(&str, &str)> = Vec::new();
    for r in runs.iter().filter(|r| r.status == "ok") {
        if !panels.contains(&(r.storage, r.case.as_str())) {
            panels.push((r.storage, &r.case));
        }
    }
    let colors = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
    ];
    for (storage, case) in panels {
        let path = dir.join(format!("serve-{storage}-{case}.svg"));
        let mine: Vec<&ServeRun> = runs
            .iter()
            .filter(|r| r.status == "ok" && r.storage == storage && r.case == case)
            .collect();
        let top = mine.iter().map(|r| r.p99_ms).fold(1.0f64, f64::max) * 1.5;
        let most = mine.iter().map(|r| r.clients).max().unwrap_or(1) as f64;
        let draw = || -> Result<(), Box<dyn std::error::Error>> {
            let root = SVGBackend::new(&path, (720, 420)).into_drawing_area();
            root.fill(&WHITE)?;
            let mut chart = ChartBuilder::on(&root)
                .caption(
                    format!("{case} on {storage}: warm latency (ms; p50 solid, p99 dashed)"),
                    ("sans-serif", 17),
                )
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(60)
                .build_cartesian_2d((0.9f64..most * 1.1).log_scale(), (0.1f64..top).log_scale())?;
            chart
                .configure_mesh()
                .x_desc("concurrent clients")
                .y_desc("ms")
                .draw()?;
            for (k, reader) in READERS.iter().enumerate() {
                let points: Vec<&&ServeRun> = mine.iter().filter(|r| r.reader == *reader).collect();
                if points.is_empty() {
                    continue;
                }
                let color = colors[k % colors.len()];
                let p50: Vec<(f64, f64)> = points
                    .iter()
                    .map(|r| (r.clients as f64, r.p50_ms.max(0.1)))
                    .collect();
                let p99: Vec<(f64, f64)> = points
                    .iter()
                    .map(|r| (r.clients as f64, r.p99_ms.max(0.1)))
                    .collect();
                chart
                    .draw_series(LineSeries::new(p50, color.stroke_width(2)))?
                    .label(*reader)
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                    });
                chart.draw_series(DashedLineSeries::new(p99, 6, 4, color.stroke_width(2)))?;
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()?;
            root.present()?;
            Ok(())
        };
        draw().map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// `cargo xtask report --serve`: `serve.md` and the charts again from the
/// `serve.csv` of one or more runs (a run stopped early included; the
/// server's peak RSS is not in the CSV).
pub fn report(opts: &BenchOptions, inputs: &[PathBuf]) -> Result<(), String> {
    let mut runs = Vec::new();
    for path in inputs {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        for line in text.lines().skip(1) {
            runs.push(
                parse_row(line).ok_or_else(|| format!("{}: bad row {line}", path.display()))?,
            );
        }
    }
    std::fs::create_dir_all(&opts.out).map_err(|e| format!("{}: {e}", opts.out.display()))?;
    let servers: Vec<(Storage, Option<f64>)> = opts.storage.iter().map(|s| (*s, None)).collect();
    let serve = ServeOptions {
        clients: Vec::new(),
        queries: runs
            .iter()
            .find(|r| r.status == "ok")
            .map_or(0, |r| r.queries as usize / r.clients.max(1)),
        memory_limit: "as the run set it".into(),
    };
    let serve = &serve;
    std::fs::write(
        opts.out.join("serve.md"),
        summary(opts, serve, &runs, &servers),
    )
    .map_err(|e| e.to_string())?;
    write_charts(&opts.out, &runs)
}

/// A row of `serve.csv` as [`write_csv`] writes it.
fn parse_row(line: &str) -> Option<ServeRun> {
    let (fields, note) = line.split_once(",\"")?;
    let f: Vec<&str> = fields.split(',').collect();
    let name = |s: &str, all: &[&'static str]| all.iter().copied().find(|a| *a == s);
    let first = *f.first()?;
    let storage = [
        Storage::Local,
        Storage::S3,
        Storage::S3Slow,
        Storage::Azure,
        Storage::Gcs,
    ]
    .into_iter()
    .map(Storage::name)
    .find(|n| *n == first)?;
    let num = |i: usize| f.get(i)?.parse::<f64>().ok();
    Some(ServeRun {
        storage,
        case: f.get(1)?.to_string(),
        reader: name(f.get(2)?, &READERS)?,
        clients: f.get(3)?.parse().ok()?,
        status: name(f.get(4)?, &["ok", "failed"])?,
        queries: f.get(5)?.parse().ok()?,
        qps: num(6)?,
        p50_ms: num(7)?,
        p95_ms: num(8)?,
        p99_ms: num(9)?,
        client_cpu_secs: num(10)?,
        server_cpu_secs: num(11),
        secs: num(12)?,
        note: note.trim_end_matches('"').to_string(),
    })
}
