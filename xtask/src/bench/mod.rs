//! `cargo xtask bench`: every reader on every case, side by side in one run
//! (see `../shared/docs/benchmarks.md` for the method).

mod charts;
mod env;
pub mod network_floor;
mod report;
mod scaling;
pub mod serve;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::ValueEnum;
use serde::Serialize;

use crate::checksum::Checksum;
use crate::fixtures::{Manifest, TableEntry};
use crate::readers::{self, ReadSpec, Reader, RunContext};
use crate::s3::emulators::Emulator;
use crate::s3::{Link, Proxy, S3Storage};
use crate::scale::Scale;
use crate::workload::{self, Action, Case};

/// Where the tables are read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Storage {
    /// The local file system.
    Local,
    /// The in-process S3 server on 127.0.0.1, through the counting proxy.
    S3,
    /// The same behind about 200 ms per request and 150 Mbit/s.
    S3Slow,
    /// Azurite (Azure Blob), through the counting proxy.
    Azure,
    /// fake-gcs-server (GCS), through the counting proxy.
    Gcs,
}

impl Storage {
    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Storage::Local => "local",
            Storage::S3 => "s3",
            Storage::S3Slow => "s3-slow",
            Storage::Azure => "azure",
            Storage::Gcs => "gcs",
        }
    }

    fn link(self) -> Option<Link> {
        match self {
            Storage::Local => None,
            Storage::S3 | Storage::Azure | Storage::Gcs => Some(Link {
                latency: Duration::ZERO,
                bytes_per_sec: None,
            }),
            Storage::S3Slow => Some(crate::s3::slow_link()),
        }
    }
}

impl Storage {
    /// The server a remote storage reads from (S3 and s3-slow share one).
    fn server_kind(self) -> &'static str {
        match self {
            Storage::Azure => "azure",
            Storage::Gcs => "gcs",
            _ => "s3",
        }
    }
}

/// A running remote store with the fixtures in it.
enum Server {
    /// dar-io's S3 server.
    S3(S3Storage),
    /// Azurite or fake-gcs-server.
    Emulator(Emulator),
}

impl Server {
    fn endpoint(&self) -> String {
        match self {
            Server::S3(s) => s.endpoint().to_string(),
            Server::Emulator(e) => e.endpoint(),
        }
    }

    fn uri(&self, prefix: &str) -> String {
        match self {
            Server::S3(_) => format!("s3://{}/{prefix}", crate::s3::BUCKET),
            Server::Emulator(e) => e.uri(prefix),
        }
    }

    fn options_via(&self, endpoint: &str) -> BTreeMap<String, String> {
        match self {
            Server::S3(s) => s.options_via(endpoint),
            Server::Emulator(e) => e.options_via(endpoint),
        }
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Fixture scale.
    pub scale: Scale,
    /// Workload ids (`W1`, `W5`) or case ids (`W5.grouped`); empty = all.
    pub workloads: Vec<String>,
    /// Readers to run.
    pub readers: Vec<Reader>,
    /// Measured rounds per reader and case (after one discarded warm-up
    /// that also checks the result).
    pub rounds: usize,
    /// Storages, in order.
    pub storage: Vec<Storage>,
    /// Fixtures directory.
    pub fixtures: PathBuf,
    /// Output directory.
    pub out: PathBuf,
    /// Initialized tables: open once, time a first and a second query.
    pub session: bool,
}

/// One measured (or failed) run: a row of `runs.csv`.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    /// Storage name.
    pub storage: &'static str,
    /// Case id.
    pub case: String,
    /// Reader name.
    pub reader: &'static str,
    /// 0 = the warm-up that checks the result (not timed); 1.. = rounds.
    pub round: usize,
    /// `ok`, `unsupported`, `timeout`, `wrong` or `failed`.
    pub status: &'static str,
    /// Rows returned.
    pub rows: u64,
    /// Seconds from open to the last batch (whole process for the CLI rows).
    pub secs: f64,
    /// CPU seconds in the same span.
    pub cpu_secs: f64,
    /// Peak RSS of the process, MiB.
    pub peak_rss_mib: f64,
    /// Whole-process wall and CPU seconds (launcher).
    pub process_secs: f64,
    /// Whole-process CPU seconds.
    pub process_cpu_secs: f64,
    /// Requests by kind (S3 only): log, checkpoint, data, dv.
    pub requests: [u64; 4],
    /// Response bytes by kind (S3 only).
    pub bytes: [u64; 4],
    /// The reader's error, or what was wrong.
    pub note: String,
    /// Session mode: the first query's seconds and CPU seconds (`secs` and
    /// `cpu_secs` are the second's).
    #[serde(skip)]
    pub first: Option<(f64, f64)>,
}

/// A case's floors on one storage.
#[derive(Debug, Clone, Default)]
pub struct Floors {
    /// The arrow-rs reader's median seconds.
    pub arrow_rs_secs: Option<f64>,
    /// The computed network floor (S3 storages).
    pub network: Option<network_floor::NetworkFloor>,
}

/// The queries of a session, in order (`<case>/first`, `<case>/second`).
pub const SESSION_PHASES: [&str; 2] = ["first", "second"];

/// The cases a report shows: in session mode each case twice, its first
/// and its second query.
fn reported(cases: &[Case], session: bool) -> Vec<Case> {
    if !session {
        return cases.to_vec();
    }
    cases
        .iter()
        .flat_map(|c| {
            SESSION_PHASES.iter().map(move |phase| Case {
                id: format!("{}/{phase}", c.id),
                ..c.clone()
            })
        })
        .collect()
}

/// The rows of `runs.csv` for one run: itself, or in session mode one row
/// per query (the first from its phase times; requests and bytes cover the
/// whole session, open included, on both).
fn session_rows(opts: &BenchOptions, run: Run) -> Vec<Run> {
    if !opts.session {
        return vec![run];
    }
    let mut first = run.clone();
    first.case = format!("{}/{}", run.case, SESSION_PHASES[0]);
    if let Some((secs, cpu)) = run.first {
        first.secs = secs;
        first.cpu_secs = cpu;
    }
    let mut second = run;
    second.case = format!("{}/{}", second.case, SESSION_PHASES[1]);
    vec![first, second]
}

/// Runs the bench; returns the output directory.
pub fn run(opts: &BenchOptions, manifest: &Manifest, ctx: &RunContext) -> Result<PathBuf, String> {
    std::fs::create_dir_all(&opts.out).map_err(|e| format!("{}: {e}", opts.out.display()))?;
    let sizes = opts.scale.sizes();
    let cases: Vec<Case> = workload::cases(manifest.tables.contains_key("w6_300k"), &sizes)
        .into_iter()
        .filter(|c| {
            opts.workloads.is_empty()
                || opts
                    .workloads
                    .iter()
                    .any(|w| w == &c.id || w == workload::workload_of(&c.id))
        })
        .collect();
    if cases.is_empty() {
        return Err(format!(
            "no case matches --workloads {}",
            opts.workloads.join(",")
        ));
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let mut runs = Vec::new();
    let mut floors: BTreeMap<(Storage, String), Floors> = BTreeMap::new();
    let report_cases = reported(&cases, opts.session);
    let s3_cases: Vec<&Case> = cases.iter().filter(|c| c.on_s3).collect();
    let mut uploads: Vec<(PathBuf, String)> = Vec::new();
    for c in &s3_cases {
        let t = manifest.table(&c.table)?;
        let up = (opts.fixtures.join(&t.dir), t.dir.clone());
        if !uploads.contains(&up) {
            uploads.push(up);
        }
    }
    // One server per store, started at its first storage and kept.
    let mut servers: BTreeMap<&'static str, Server> = BTreeMap::new();
    for &storage in &opts.storage {
        let (proxy, link) = match storage.link() {
            None => (None, None),
            Some(link) => {
                if s3_cases.is_empty() {
                    continue;
                }
                let kind = storage.server_kind();
                if !servers.contains_key(kind) {
                    let server = match storage {
                        Storage::Azure => Server::Emulator(rt.block_on(Emulator::azure(&uploads))?),
                        Storage::Gcs => Server::Emulator(Emulator::gcs(&uploads)?),
                        _ => Server::S3(rt.block_on(S3Storage::start(&uploads))?),
                    };
                    servers.insert(kind, server);
                }
                let server = servers.get(kind).ok_or("no server")?;
                let upstream_host = storage == Storage::Gcs;
                let proxy = rt.block_on(Proxy::start(&server.endpoint(), link, upstream_host))?;
                (Some((proxy, kind)), Some(link))
            }
        };
        for case in &cases {
            if storage != Storage::Local && !case.on_s3 {
                continue;
            }
            let table = manifest.table(&case.table)?;
            let (uri, options) = match &proxy {
                Some((p, kind)) => {
                    let server = servers.get(kind).ok_or("no server")?;
                    (
                        server.uri(&table.dir),
                        Some(server.options_via(p.endpoint())),
                    )
                }
                None => (opts.fixtures.join(&table.dir).display().to_string(), None),
            };
            let proxy = proxy.as_ref().map(|(p, _)| p);
            let mut floor = Floors::default();
            if let Some(link) = link.filter(|l| !l.latency.is_zero())
                && !opts.session
            {
                floor.network = Some(network_floor::of_case(&opts.fixtures, table, case, link)?);
            }
            let case_runs = run_case(opts, ctx, storage, case, table, &uri, options, proxy)?;
            floor.arrow_rs_secs = report::median(
                case_runs
                    .iter()
                    .filter(|r| {
                        r.reader == Reader::ArrowRs.name() && r.round > 0 && r.status == "ok"
                    })
                    .map(|r| r.secs),
            );
            floors.insert((storage, case.id.clone()), floor);
            runs.extend(case_runs.into_iter().flat_map(|r| session_rows(opts, r)));
            report::write_csv(&opts.out.join("runs.csv"), &runs)?;
        }
    }
    let summary = report::summary(opts, &report_cases, &runs, &floors);
    std::fs::write(opts.out.join("summary.md"), summary).map_err(|e| e.to_string())?;
    charts::write_all(&opts.out, &opts.storage, &report_cases, &runs, &floors)?;
    env::write(&opts.out.join("env.json"), opts, ctx)?;
    Ok(opts.out.clone())
}

/// `cargo xtask report`: `summary.md` and the charts again, from the
/// `runs.csv` of one or more runs (for instance a run stopped early, and
/// the run that did the remaining workloads), into `opts.out`.
pub fn report(opts: &BenchOptions, manifest: &Manifest, inputs: &[PathBuf]) -> Result<(), String> {
    let mut runs = Vec::new();
    for csv in inputs {
        runs.extend(report::read_csv(csv)?);
    }
    let session = runs
        .iter()
        .any(|r| r.case.ends_with(&format!("/{}", SESSION_PHASES[1])));
    let present = |c: &Case| runs.iter().any(|r| r.case == c.id);
    let cases: Vec<Case> = reported(
        &workload::cases(manifest.tables.contains_key("w6_300k"), &opts.scale.sizes()),
        session,
    )
    .into_iter()
    .filter(present)
    .collect();
    let mut floors = BTreeMap::new();
    for &storage in &opts.storage {
        for case in &cases {
            let mut floor = Floors::default();
            if let Some(link) = storage.link().filter(|l| !l.latency.is_zero())
                && !session
            {
                let table = manifest.table(&case.table)?;
                floor.network = Some(network_floor::of_case(&opts.fixtures, table, case, link)?);
            }
            floor.arrow_rs_secs = report::median(
                runs.iter()
                    .filter(|r| r.storage == storage.name() && r.case == case.id)
                    .filter(|r| {
                        r.reader == Reader::ArrowRs.name() && r.round > 0 && r.status == "ok"
                    })
                    .map(|r| r.secs),
            );
            floors.insert((storage, case.id.clone()), floor);
        }
    }
    std::fs::create_dir_all(&opts.out).map_err(|e| format!("{}: {e}", opts.out.display()))?;
    report::write_csv(&opts.out.join("runs.csv"), &runs)?;
    let summary = report::summary(opts, &cases, &runs, &floors);
    std::fs::write(opts.out.join("summary.md"), summary).map_err(|e| e.to_string())?;
    charts::write_all(&opts.out, &opts.storage, &cases, &runs, &floors)
}

/// What a correct result of `case` is: rows, and the checksum when the
/// result is fixed (not for `LIMIT`).
fn expected(case: &Case, table: &TableEntry) -> Result<(u64, Option<Checksum>), String> {
    let restrict = |c: &Checksum| {
        let mut out = c.clone();
        out.columns
            .retain(|name, _| case.columns.iter().any(|k| k.to_lowercase() == *name));
        out
    };
    match (case.action, &case.filter, case.limit) {
        (Action::Files, _, _) => {
            let c = table
                .queries
                .get(crate::workload::workload_of(&case.id))
                .ok_or_else(|| format!("{}: no expected listing", case.table))?;
            Ok((c.rows, Some(c.clone())))
        }
        (Action::Count, _, _) => {
            let c = table
                .queries
                .get(crate::fixtures::W8_COUNT)
                .ok_or_else(|| format!("{}: no expected count", case.table))?;
            Ok((c.rows, Some(c.clone())))
        }
        (Action::Plan, _, _) => {
            let c = table
                .queries
                .get(crate::fixtures::W8_PLAN)
                .ok_or_else(|| format!("{}: no expected plan", case.table))?;
            Ok((c.rows, Some(c.clone())))
        }
        (Action::Changes, None, None) => {
            let c = table
                .queries
                .get("W7")
                .ok_or_else(|| format!("{}: no expected changes", case.table))?;
            Ok((c.rows, Some(restrict(c))))
        }
        (Action::Changes, _, _) => Err(format!(
            "{}: no expected changes for a filter or limit",
            case.id
        )),
        (Action::Scan, Some(_), _) => {
            let c = table
                .queries
                .get(workload::workload_of(&case.id))
                .ok_or_else(|| format!("{}: no expected result for {}", case.table, case.id))?;
            Ok((c.rows, Some(restrict(c))))
        }
        (Action::Scan, None, Some(l)) => Ok(((l as u64).min(table.rows), None)),
        (Action::Scan, None, None) => Ok((table.rows, Some(restrict(&table.checksum)))),
    }
}

#[allow(clippy::too_many_arguments)]
fn run_case(
    opts: &BenchOptions,
    ctx: &RunContext,
    storage: Storage,
    case: &Case,
    table: &TableEntry,
    uri: &str,
    storage_options: Option<BTreeMap<String, String>>,
    proxy: Option<&Proxy>,
) -> Result<Vec<Run>, String> {
    let (rows, checksum) = expected(case, table)?;
    let spec = |reader: Reader, verify: bool| ReadSpec {
        reader,
        action: case.action,
        uri: uri.to_string(),
        columns: case.columns.clone(),
        filter: case.filter.clone(),
        limit: case.limit,
        changes_from: case.changes_from,
        verify,
        session: opts.session,
        storage: storage_options.clone(),
        files: if reader.is_floor() {
            table.files.clone()
        } else {
            Vec::new()
        },
    };
    let mut out = Vec::new();
    let mut live: Vec<Reader> = Vec::new();
    let blank = |reader: Reader, round: usize, status: &'static str, note: String| Run {
        storage: storage.name(),
        case: case.id.clone(),
        reader: reader.name(),
        round,
        status,
        rows: 0,
        secs: 0.0,
        cpu_secs: 0.0,
        peak_rss_mib: 0.0,
        process_secs: 0.0,
        process_cpu_secs: 0.0,
        requests: [0; 4],
        bytes: [0; 4],
        note,
        first: None,
    };
    // Warm-up, which also checks the result; a reader that fails here is
    // reported and not timed.
    for &reader in &opts.readers {
        let session_refusal = || {
            if case.action != Action::Scan {
                Some("session mode times scans")
            } else {
                reader.cannot_hold_a_session()
            }
        };
        if let Some(why) = reader
            .cannot_run(case)
            .or_else(|| opts.session.then(session_refusal).flatten())
        {
            out.push(blank(reader, 0, "unsupported", why.into()));
            continue;
        }
        let before = proxy.map(|p| p.counters().snapshot());
        match readers::run(ctx, &spec(reader, true)) {
            Err(e) => {
                // A reader slower than the timeout is not one that rejects the table.
                let status = if e.starts_with("timed out") {
                    "timeout"
                } else {
                    "unsupported"
                };
                eprintln!(
                    "bench {} {} {}: {status}: {e}",
                    storage.name(),
                    case.id,
                    reader.name()
                );
                out.push(blank(reader, 0, status, e));
            }
            Ok(o) => {
                let mut got = o.checksum.clone().unwrap_or_default();
                if case.action == Action::Changes {
                    // Change readers also return `_commit_timestamp`, which
                    // the manifest leaves out (file times are the copy's).
                    got.columns
                        .retain(|name, _| case.columns.iter().any(|k| k.to_lowercase() == *name));
                }
                let wrong = if got.rows != rows {
                    Some(format!("{} rows, expected {rows}", got.rows))
                } else {
                    checksum
                        .as_ref()
                        .map(|c| got.diff(c))
                        .filter(|d| !d.is_empty())
                };
                let mut r = measured(storage, case, reader, 0, &o, before, proxy);
                if let Some(w) = wrong {
                    eprintln!(
                        "bench {} {} {}: WRONG: {w}",
                        storage.name(),
                        case.id,
                        reader.name()
                    );
                    r.status = "wrong";
                    r.note = w;
                } else {
                    live.push(reader);
                }
                out.push(r);
            }
        }
    }
    // Rounds in a rotated order: each reader in each position equally often.
    for round in 1..=opts.rounds {
        for i in 0..live.len() {
            let reader = live[(i + round - 1) % live.len()];
            let before = proxy.map(|p| p.counters().snapshot());
            match readers::run(ctx, &spec(reader, false)) {
                Ok(o) if o.result.rows == rows => {
                    out.push(measured(storage, case, reader, round, &o, before, proxy));
                }
                Ok(o) => out.push(blank(
                    reader,
                    round,
                    "wrong",
                    format!("{} rows, expected {rows}", o.result.rows),
                )),
                Err(e) => out.push(blank(reader, round, "failed", e)),
            }
        }
        eprintln!(
            "bench {} {}: round {round}/{} done",
            storage.name(),
            case.id,
            opts.rounds
        );
    }
    Ok(out)
}

fn measured(
    storage: Storage,
    case: &Case,
    reader: Reader,
    round: usize,
    o: &readers::Outcome,
    before: Option<crate::s3::proxy::CounterSnapshot>,
    proxy: Option<&Proxy>,
) -> Run {
    let io = match (before, proxy) {
        (Some(b), Some(p)) => p.counters().snapshot().since(&b),
        _ => Default::default(),
    };
    Run {
        storage: storage.name(),
        case: case.id.clone(),
        reader: reader.name(),
        round,
        status: "ok",
        rows: o.result.rows,
        secs: o.result.secs,
        cpu_secs: o.result.cpu_secs,
        peak_rss_mib: o.usage.maxrss_kib as f64 / 1024.0,
        process_secs: o.usage.wall_secs,
        process_cpu_secs: o.usage.cpu_secs,
        requests: io.requests,
        bytes: io.bytes,
        note: String::new(),
        first: o.result.first.map(|p| (p.secs, p.cpu_secs)),
    }
}

/// `<target>/bench/<UTC timestamp>`.
pub fn default_out() -> PathBuf {
    let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S").to_string();
    crate::target_dir().join("bench").join(stamp)
}

/// The `dar` binary: `--dar-bin`, else the one next to this xtask (same
/// profile), brought up to date with cargo first when `build` (a no-op
/// when it is): a binary left from an older tree would time old code.
pub fn find_dar(explicit: Option<&Path>, build: bool) -> Result<PathBuf, String> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = exe.parent().ok_or("xtask has no directory")?;
    let dar = dir.join("dar");
    if !build {
        return Ok(dar);
    }
    let release = dir.ends_with("release");
    eprintln!(
        "bench: building the dar CLI ({})",
        if release { "release" } else { "debug" }
    );
    let mut cmd =
        std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.args(["build", "--locked", "-p", "dar-cli", "--bin", "dar"]);
    if release {
        cmd.arg("--release");
    }
    let status = cmd
        .status()
        .map_err(|e| format!("cargo build -p dar-cli: {e}"))?;
    if !status.success() || !dar.exists() {
        return Err(format!(
            "cargo build -p dar-cli failed ({status}); pass --dar-bin"
        ));
    }
    Ok(dar)
}
