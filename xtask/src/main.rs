//! `cargo xtask`: the project's own tasks.
//!
//! * `cargo xtask fixtures [--scale quick|full] [--out DIR]` writes every
//!   benchmark table (deterministic, with dar-testkit and a TPC-H
//!   generator) and checks each with two peer readers.
//! * `cargo xtask bench [--scale quick|full] [--workloads W1,..]
//!   [--readers dar,delta-rs,..] [--rounds N] [--storage local,s3,s3-slow,azure,gcs]`
//!   measures dar against every peer and the floors, side by side, and
//!   writes `runs.csv`, `summary.md`, SVG charts and `env.json` under
//!   `target/bench/<timestamp>/`.
//! * `cargo xtask bench --serve [--clients 1,4,16] [--storage local,s3-slow]`
//!   loads `dar serve` with concurrent Flight SQL clients beside DuckDB and
//!   deltalake (`serve.csv`, `serve.md`).
//!
//! The plan is `../shared/docs/benchmarks.md`; `docs/benchmarks.md` holds
//! the latest full run.

mod bench;
mod checksum;
mod fixtures;
mod readers;
mod s3;
mod scale;
mod venv;
mod workload;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};

use crate::bench::{BenchOptions, Storage};
use crate::readers::{ReadSpec, Reader, RunContext};
use crate::scale::Scale;

/// jemalloc, as the `dar` binary, dar's wheel and the peers' native
/// libraries allocate (see `Cargo.toml`): the in-process readers are
/// measured on the allocator an engine embedding them would choose.
#[cfg(all(target_os = "linux", not(target_env = "musl")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask",
    about = "dar's benchmark fixtures and benchmark runner"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Write every benchmark table and check it with two peers.
    Fixtures {
        /// Table sizes.
        #[arg(long, value_enum, default_value_t = Scale::Quick)]
        scale: Scale,
        /// Directory (default `target/bench/fixtures-<scale>`).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Measure every reader on every workload.
    Bench {
        /// Table sizes.
        #[arg(long, value_enum, default_value_t = Scale::Quick)]
        scale: Scale,
        /// Workloads (`W1`..`W7`) or cases (`W5.grouped`); default all.
        #[arg(long, value_delimiter = ',')]
        workloads: Vec<String>,
        /// Readers; default all but `dar-polars` and `dar-python` (they
        /// build dar's wheel).
        #[arg(long, value_enum, value_delimiter = ',')]
        readers: Vec<Reader>,
        /// Measured rounds per reader and case (after one warm-up).
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        /// Storages.
        #[arg(long, value_enum, value_delimiter = ',', default_value = "local")]
        storage: Vec<Storage>,
        /// Fixtures directory (default `target/bench/fixtures-<scale>`).
        #[arg(long)]
        fixtures: Option<PathBuf>,
        /// Output directory (default `target/bench/<timestamp>`).
        #[arg(long)]
        out: Option<PathBuf>,
        /// The `dar` binary (default: next to this xtask, built if missing).
        #[arg(long)]
        dar_bin: Option<PathBuf>,
        /// A run that takes longer fails.
        #[arg(long, default_value_t = 900)]
        timeout_secs: u64,
        /// Initialized tables: each reader opens the table once, then runs
        /// the query twice; the cases are reported as `<case>/first` and
        /// `<case>/second` (readers with one process per query sit out).
        #[arg(long)]
        session: bool,
        /// `dar serve` under concurrent Flight SQL clients beside DuckDB
        /// and deltalake with the same client threads (W3 and W5 by
        /// default; local, s3 and s3-slow): queries per second and
        /// p50/p95/p99 latency, in `serve.csv` and `serve.md`.
        #[arg(long)]
        serve: bool,
        /// `--serve`: concurrent clients, one run each.
        #[arg(long, value_delimiter = ',', default_value = "1,4,16")]
        clients: Vec<usize>,
        /// `--serve`: timed queries per client in a run.
        #[arg(long, default_value_t = 20)]
        serve_queries: usize,
        /// `--serve`: the server's `--memory-limit`.
        #[arg(long, default_value = "2GiB")]
        serve_memory_limit: String,
    },
    /// Write `summary.md` and the charts again from `runs.csv` files.
    Report {
        /// Table sizes the runs used.
        #[arg(long, value_enum, default_value_t = Scale::Quick)]
        scale: Scale,
        /// Storages to report, in order.
        #[arg(long, value_enum, value_delimiter = ',', default_value = "local")]
        storage: Vec<Storage>,
        /// Rounds the runs used (for the title).
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        /// Fixtures directory (default `target/bench/fixtures-<scale>`).
        #[arg(long)]
        fixtures: Option<PathBuf>,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
        /// The `runs.csv` files (with `--serve`: `serve.csv` files).
        #[arg(required = true)]
        runs: Vec<PathBuf>,
        /// The runs are `cargo xtask bench --serve`'s: write `serve.md` and
        /// its latency charts.
        #[arg(long)]
        serve: bool,
    },
    /// One measured read by dar or the floor (used by `bench`).
    #[command(hide = true)]
    Read {
        /// `dar` or `floor`.
        which: String,
        /// The read, as JSON.
        spec: String,
    },
    /// Run a program and report its rusage (used by `bench`).
    #[command(hide = true)]
    Launch {
        /// Where the report goes.
        report: PathBuf,
        /// The program and its arguments.
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
}

/// Holds an exclusive lock on `<dir>.lock` (created with its parent
/// folder) until the returned file is dropped: processes that prepare the
/// same directory take turns.
pub fn lock_beside(dir: &std::path::Path) -> Result<std::fs::File, String> {
    let parent = dir.parent().ok_or("the folder has no parent folder")?;
    std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    let path = dir.with_extension("lock");
    let lock = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    lock.lock()
        .map_err(|e| format!("locking {}: {e}", path.display()))?;
    Ok(lock)
}

/// `<target>`: the directory above this executable's profile directory.
pub fn target_dir() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| {
            let profile = exe.parent()?;
            // Test binaries live one level deeper (`<target>/debug/deps`).
            let profile = if profile.ends_with("deps") {
                profile.parent()?
            } else {
                profile
            };
            Some(profile.parent()?.to_path_buf())
        })
        .unwrap_or_else(|| PathBuf::from("target"))
}

/// The shared test data: `$DAR_TESTDATA`, else `../shared/testdata` next
/// to the workspace.
pub fn testdata_dir() -> PathBuf {
    std::env::var_os("DAR_TESTDATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../shared/testdata"
            ))
        })
}

fn main() -> ExitCode {
    match run(Cli::parse().command) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("ERROR {e}");
            ExitCode::from(2)
        }
    }
}

fn run(command: Command) -> Result<ExitCode, String> {
    match command {
        Command::Read { which, spec } => {
            let spec: ReadSpec =
                serde_json::from_str(&spec).map_err(|e| format!("bad spec: {e}"))?;
            let result = match which.as_str() {
                "dar" => readers::read_dar(&spec)?,
                "dar-sql" => readers::read_dar_sql(&spec)?,
                "floor" => readers::read_floor(&spec)?,
                other => return Err(format!("unknown runner {other}")),
            };
            readers::print_result(&result);
            Ok(ExitCode::SUCCESS)
        }
        Command::Launch { report, command } => {
            let (program, args) = command.split_first().ok_or("launch: no program")?;
            let code = readers::launch::launch(&report, program, args)?;
            Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
        }
        Command::Fixtures { scale, out } => {
            let venv = venv::Venv::ensure(&venv::Venv::default_dir())?;
            let dir = out.unwrap_or_else(|| fixtures::default_dir(scale));
            fixtures::run(scale, &dir, &venv)?;
            println!("{}", dir.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Report {
            scale,
            storage,
            rounds,
            fixtures,
            out,
            runs,
            serve,
        } => {
            let fixtures = fixtures.unwrap_or_else(|| fixtures::default_dir(scale));
            let manifest = fixtures::Manifest::load(&fixtures)?;
            let opts = BenchOptions {
                scale,
                workloads: Vec::new(),
                readers: Reader::ALL.to_vec(),
                rounds,
                storage,
                fixtures,
                out: out.clone(),
                session: false,
            };
            if serve {
                bench::serve::report(&opts, &runs)?;
            } else {
                bench::report(&opts, &manifest, &runs)?;
            }
            println!("{}", out.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench {
            scale,
            workloads,
            readers,
            rounds,
            storage,
            fixtures,
            out,
            dar_bin,
            timeout_secs,
            session,
            serve,
            clients,
            serve_queries,
            serve_memory_limit,
        } => {
            let venv = venv::Venv::ensure(&venv::Venv::default_dir())?;
            let fixtures = fixtures.unwrap_or_else(|| fixtures::default_dir(scale));
            let manifest = fixtures::run(scale, &fixtures, &venv)?;
            let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
            // By default every reader but `dar-polars`, which first builds
            // dar's Python wheel (minutes of compiling): name it to run it.
            let readers = if readers.is_empty() {
                Reader::ALL
                    .into_iter()
                    .filter(|r| !r.needs_dar_module())
                    .collect()
            } else {
                readers
            };
            if readers.iter().any(|r| r.needs_dar_module()) {
                venv.install_dar_module()?;
            }
            // Only the `dar-cli` and `dar-sql` readers and `dar serve` run
            // the binary.
            let runs_cli = serve
                || readers
                    .iter()
                    .any(|r| matches!(r, Reader::DarCli | Reader::DarSql));
            let ctx = RunContext {
                xtask: std::env::current_exe().map_err(|e| e.to_string())?,
                dar: bench::find_dar(dar_bin.as_deref(), runs_cli)?,
                python: venv.python(),
                peers_py: venv.peers_py(),
                scratch: scratch.path().to_path_buf(),
                timeout: Duration::from_secs(timeout_secs),
            };
            let opts = BenchOptions {
                scale,
                workloads,
                readers,
                rounds: rounds.max(1),
                storage,
                fixtures,
                out: out.unwrap_or_else(bench::default_out),
                session,
            };
            let dir = if serve {
                let serve = bench::serve::ServeOptions {
                    clients,
                    queries: serve_queries.max(1),
                    memory_limit: serve_memory_limit,
                };
                bench::serve::run(&opts, &serve, &manifest, &ctx)?
            } else {
                bench::run(&opts, &manifest, &ctx)?
            };
            println!("{}", dir.display());
            Ok(ExitCode::SUCCESS)
        }
    }
}
