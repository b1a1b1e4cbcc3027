//! `env.json`: the machine and every reader's version.

use std::path::Path;
use std::process::Command;

use serde_json::json;

use super::BenchOptions;
use crate::readers::RunContext;

fn first_line(cmd: &mut Command) -> String {
    cmd.output()
        .ok()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or_default()
                .trim()
                .to_string()
        })
        .unwrap_or_default()
}

fn proc_field(file: &str, key: &str) -> String {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split(':').nth(1))
        .map(|v| v.trim().to_string())
        .unwrap_or_default()
}

/// Writes `env.json`.
pub fn write(path: &Path, opts: &BenchOptions, ctx: &RunContext) -> Result<(), String> {
    let venv = crate::venv::Venv {
        dir: ctx
            .python
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_default(),
    };
    let env = json!({
        "date_utc": chrono::Utc::now().to_rfc3339(),
        "scale": opts.scale.name(),
        "rounds": opts.rounds,
        "storage": opts.storage.iter().map(|s| s.name()).collect::<Vec<_>>(),
        "s3_slow_link": {"latency_ms": 200, "mbit_per_s": 150},
        "dar": {
            "version": env!("CARGO_PKG_VERSION"),
            "commit": first_line(Command::new("git").args(["rev-parse", "--short", "HEAD"])),
            "cli": first_line(Command::new(&ctx.dar).arg("--version")),
        },
        "peers": venv.versions(),
        "python": first_line(Command::new(&ctx.python).arg("--version")),
        "rustc": first_line(Command::new("rustc").arg("--version")),
        "cpu": proc_field("/proc/cpuinfo", "model name"),
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "memory": proc_field("/proc/meminfo", "MemTotal"),
        "kernel": first_line(Command::new("uname").arg("-r")),
    });
    let text = serde_json::to_string_pretty(&env).map_err(|e| e.to_string())?;
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}
