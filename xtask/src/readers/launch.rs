//! The launcher: runs one reader process and reports its peak RSS and CPU
//! from `getrusage(RUSAGE_CHILDREN)`, which, in a launcher with only that
//! child, is the child's own. A child spawned directly by the (larger)
//! orchestrator would inherit its resident high-water mark through vfork.

use std::process::Command;
use std::time::Instant;

use nix::sys::resource::{UsageWho, getrusage};
use serde::{Deserialize, Serialize};

/// What the launcher measured of its child.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Peak resident set, KiB.
    pub maxrss_kib: u64,
    /// User + system CPU seconds of the whole process.
    pub cpu_secs: f64,
    /// Wall seconds from spawn to exit.
    pub wall_secs: f64,
    /// Exit code (-1 when killed by a signal).
    pub code: i32,
}

/// `xtask launch REPORT -- PROGRAM ARGS...`: runs the program with this
/// process's stdio, writes [`Usage`] as JSON to `report`, and exits with
/// the program's code.
pub fn launch(report: &std::path::Path, program: &str, args: &[String]) -> Result<i32, String> {
    let started = Instant::now();
    let status = Command::new(program)
        .args(args)
        .status()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    let wall = started.elapsed().as_secs_f64();
    let ru = getrusage(UsageWho::RUSAGE_CHILDREN).map_err(|e| format!("getrusage: {e}"))?;
    let secs = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 * 1e-6;
    let usage = Usage {
        maxrss_kib: ru.max_rss().max(0) as u64,
        cpu_secs: secs(ru.user_time()) + secs(ru.system_time()),
        wall_secs: wall,
        code: status.code().unwrap_or(-1),
    };
    let json = serde_json::to_string(&usage).map_err(|e| e.to_string())?;
    std::fs::write(report, json).map_err(|e| format!("{}: {e}", report.display()))?;
    Ok(usage.code)
}
