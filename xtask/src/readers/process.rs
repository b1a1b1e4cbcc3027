//! One measured run: the reader's command, started through the launcher,
//! its output checked (rows, checksum) when verifying.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::launch::Usage;
use super::{ReadSpec, Reader, RunnerResult};
use crate::checksum::Checksum;
use crate::workload::Action;

/// Where the programs of the readers are.
#[derive(Debug, Clone)]
pub struct RunContext {
    /// This xtask binary (launcher, dar runner, floor).
    pub xtask: PathBuf,
    /// The release `dar` binary.
    pub dar: PathBuf,
    /// The peers' Python interpreter (in the venv).
    pub python: PathBuf,
    /// `peers.py`.
    pub peers_py: PathBuf,
    /// Scratch directory for the launcher's reports.
    pub scratch: PathBuf,
    /// A run that takes longer is killed and reported as failing.
    pub timeout: Duration,
}

/// A finished run.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Rows, timed span and its CPU (whole process for the CLI rows).
    pub result: RunnerResult,
    /// The launcher's measurement of the process.
    pub usage: Usage,
    /// The result's checksum, when verifying.
    pub checksum: Option<Checksum>,
}

fn program(ctx: &RunContext, spec: &ReadSpec) -> Result<(PathBuf, Vec<String>), String> {
    let json = serde_json::to_string(spec).map_err(|e| e.to_string())?;
    let storage_args = || {
        spec.storage
            .iter()
            .flatten()
            .flat_map(|(k, v)| ["--storage-option".to_string(), format!("{k}={v}")])
            .collect::<Vec<_>>()
    };
    let format = if spec.verify { "arrow" } else { "null" };
    Ok(match spec.reader {
        Reader::Dar => (ctx.xtask.clone(), vec!["read".into(), "dar".into(), json]),
        Reader::DarSql if spec.session => (
            ctx.xtask.clone(),
            vec!["read".into(), "dar-sql".into(), json],
        ),
        Reader::ArrowRs => (ctx.xtask.clone(), vec!["read".into(), "floor".into(), json]),
        Reader::DeltaRs
        | Reader::Polars
        | Reader::Duckdb
        | Reader::Daft
        | Reader::DarPolars
        | Reader::DarPython => (
            ctx.python.clone(),
            vec![ctx.peers_py.display().to_string(), json],
        ),
        Reader::DarCli => {
            let mut a = match spec.action {
                Action::Files => vec![
                    "files".into(),
                    spec.uri.clone(),
                    "--format".into(),
                    "csv".into(),
                ],
                Action::Count => vec!["info".into(), spec.uri.clone(), "--json".into()],
                Action::Plan => vec![
                    "files".into(),
                    spec.uri.clone(),
                    "--filter".into(),
                    spec.filter.clone().unwrap_or_default(),
                    "--format".into(),
                    "json".into(),
                ],
                Action::Scan | Action::Changes => {
                    let mut a = match spec.changes_from {
                        None => vec!["scan".into(), spec.uri.clone()],
                        Some(from) => vec![
                            "changes".into(),
                            spec.uri.clone(),
                            "--from".into(),
                            from.to_string(),
                        ],
                    };
                    a.extend(["--columns".into(), spec.columns.join(",")]);
                    if let Some(f) = &spec.filter {
                        a.extend(["--filter".into(), f.clone()]);
                    }
                    if let Some(l) = spec.limit {
                        a.extend(["--limit".into(), l.to_string()]);
                    }
                    a.extend(["--format".into(), format.into()]);
                    a
                }
            };
            a.extend(storage_args());
            (ctx.dar.clone(), a)
        }
        Reader::DarSql => {
            let (sql, register) = super::dar_sql::sql_text(spec);
            let mut a = vec!["sql".into(), sql, "--format".into(), format.into()];
            if register {
                a.extend(["--table".into(), format!("t={}", spec.uri)]);
            }
            a.extend(storage_args());
            (ctx.dar.clone(), a)
        }
    })
}

/// Runs `spec` once through the launcher. `Err` is the reader's own error
/// (it failed or rejected the table) or a wrong result.
pub fn run(ctx: &RunContext, spec: &ReadSpec) -> Result<Outcome, String> {
    let (prog, args) = program(ctx, spec)?;
    let report = tempfile::Builder::new()
        .prefix("launch-")
        .tempfile_in(&ctx.scratch)
        .map_err(|e| e.to_string())?
        .into_temp_path();
    // Its own process group, so that a timeout kills the reader too (the
    // launcher's child, which would otherwise hold the pipes open).
    let mut child = Command::new(&ctx.xtask)
        .process_group(0)
        .arg("launch")
        .arg(&*report)
        .arg("--")
        .arg(&prog)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the launcher: {e}"))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let (reader, action, verify) = (spec.reader, spec.action, spec.verify);
    let out_thread = std::thread::spawn(move || read_stdout(stdout, reader, action, verify));
    let err_thread = std::thread::spawn(move || {
        let mut lines = Vec::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            lines.push(line);
        }
        lines
    });
    let deadline = Instant::now() + ctx.timeout;
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(s);
        }
        if Instant::now() > deadline {
            if let Ok(pid) = i32::try_from(child.id()) {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = out_thread.join().map_err(|_| "stdout reader panicked")?;
    let stderr = err_thread.join().map_err(|_| "stderr reader panicked")?;
    let Some(status) = status else {
        return Err(format!("timed out after {:?}", ctx.timeout));
    };
    let usage: Usage = std::fs::read_to_string(&report)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    if let Some(e) = stderr.iter().rev().find_map(|l| l.strip_prefix("ERROR ")) {
        return Err(e.to_string());
    }
    if !status.success() {
        let tail: Vec<&str> = stderr
            .iter()
            .rev()
            .take(5)
            .rev()
            .map(String::as_str)
            .collect();
        return Err(format!("exit {}: {}", usage.code, tail.join(" | ")));
    }
    let (out_rows, checksum) = stdout?;
    let result = if spec.reader.whole_process() && !spec.session {
        RunnerResult {
            rows: out_rows,
            secs: usage.wall_secs,
            cpu_secs: usage.cpu_secs,
            first: None,
        }
    } else {
        let line = stderr
            .iter()
            .rev()
            .find_map(|l| l.strip_prefix("RESULT "))
            .ok_or_else(|| format!("no RESULT line; stderr: {}", stderr.join(" | ")))?;
        serde_json::from_str(line).map_err(|e| format!("bad RESULT line {line}: {e}"))?
    };
    Ok(Outcome {
        result,
        usage,
        checksum,
    })
}

/// Reads the reader's stdout: an IPC stream (or `dar files` CSV) when
/// verifying, else the CLI's row count (or nothing).
fn read_stdout(
    stdout: impl Read,
    reader: Reader,
    action: Action,
    verify: bool,
) -> Result<(u64, Option<Checksum>), String> {
    let mut stdout = BufReader::with_capacity(1 << 20, stdout);
    if reader == Reader::DarCli && action == Action::Count {
        // `dar info --json`: the files and rows it counted from the log.
        let mut text = String::new();
        stdout
            .read_to_string(&mut text)
            .map_err(|e| e.to_string())?;
        let info: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("dar info --json: {e}"))?;
        let field = |k: &str| {
            info.get(k)
                .and_then(serde_json::Value::as_i64)
                .ok_or_else(|| format!("dar info --json: no {k}"))
        };
        let batch = super::dar::count_row(field("files")?, field("num_rows")?)
            .map_err(|e| e.to_string())?;
        if !verify {
            return Ok((1, None));
        }
        let mut c = Checksum::default();
        c.add_batch(&batch)?;
        return Ok((1, Some(c)));
    }
    if reader == Reader::DarCli && action == Action::Plan {
        // `dar files --filter ... --format json`: one line per kept file.
        let mut files = 0i64;
        for line in (&mut stdout).lines() {
            let line = line.map_err(|e| e.to_string())?;
            files += i64::from(!line.trim().is_empty());
        }
        if !verify {
            return Ok((1, None));
        }
        let batch = super::dar::plan_row(files).map_err(|e| e.to_string())?;
        let mut c = Checksum::default();
        c.add_batch(&batch)?;
        return Ok((1, Some(c)));
    }
    if reader == Reader::DarCli && action == Action::Files {
        // CSV: a header, then one line per file; `num_records` by header position.
        let mut lines = (&mut stdout).lines();
        let header = lines
            .next()
            .transpose()
            .map_err(|e| e.to_string())?
            .unwrap_or_default();
        let at = header
            .split(',')
            .position(|h| h == "num_records")
            .ok_or("dar files: no num_records column")?;
        let mut values = Vec::new();
        for line in lines {
            let line = line.map_err(|e| e.to_string())?;
            let v = line.split(',').nth(at).ok_or("dar files: short line")?;
            // An empty field is a file without `numRecords` in its stats.
            values.push(match v {
                "" => None,
                v => Some(
                    v.parse::<i64>()
                        .map_err(|e| format!("dar files: {v}: {e}"))?,
                ),
            });
        }
        let rows = values.len() as u64;
        if !verify {
            return Ok((rows, None));
        }
        let batch = arrow_array::RecordBatch::try_from_iter([(
            "num_records",
            std::sync::Arc::new(arrow_array::Int64Array::from(values)) as arrow_array::ArrayRef,
        )])
        .map_err(|e| e.to_string())?;
        let mut c = Checksum::default();
        c.add_batch(&batch)?;
        return Ok((rows, Some(c)));
    }
    if !verify {
        let mut text = String::new();
        stdout
            .read_to_string(&mut text)
            .map_err(|e| e.to_string())?;
        // `dar scan/sql --format null` prints the row count.
        let rows = text
            .split_whitespace()
            .next()
            .and_then(|w| w.parse().ok())
            .unwrap_or(0);
        return Ok((rows, None));
    }
    let mut c = Checksum::default();
    if stdout.fill_buf().map_err(|e| e.to_string())?.is_empty() {
        return Ok((0, Some(c)));
    }
    let ipc = arrow_ipc::reader::StreamReader::try_new(stdout, None)
        .map_err(|e| format!("reading the result stream: {e}"))?;
    for batch in ipc {
        c.add_batch(&batch.map_err(|e| format!("reading the result stream: {e}"))?)?;
    }
    Ok((c.rows, Some(c)))
}
