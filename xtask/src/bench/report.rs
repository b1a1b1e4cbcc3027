//! `runs.csv` and `summary.md`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::{BenchOptions, Floors, Run, Storage};
use crate::readers::Reader;
use crate::s3::Kind;
use crate::workload::Case;

/// The median of `values` (None when empty).
pub fn median(values: impl Iterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = values.collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// Writes every run as CSV.
pub fn write_csv(path: &Path, runs: &[Run]) -> Result<(), String> {
    let mut out = String::from(
        "storage,case,reader,round,status,rows,secs,cpu_secs,peak_rss_mib,process_secs,process_cpu_secs,\
         requests_log,requests_checkpoint,requests_data,requests_dv,bytes_log,bytes_checkpoint,bytes_data,bytes_dv,note\n",
    );
    for r in runs {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{:.6},{:.6},{:.1},{:.6},{:.6},{},{},{},{},{},{},{},{},\"{}\"",
            r.storage,
            r.case,
            r.reader,
            r.round,
            r.status,
            r.rows,
            r.secs,
            r.cpu_secs,
            r.peak_rss_mib,
            r.process_secs,
            r.process_cpu_secs,
            r.requests[0],
            r.requests[1],
            r.requests[2],
            r.requests[3],
            r.bytes[0],
            r.bytes[1],
            r.bytes[2],
            r.bytes[3],
            r.note.replace('"', "'")
        );
    }
    std::fs::write(path, out).map_err(|e| format!("{}: {e}", path.display()))
}

/// Medians of one reader on one case.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Median seconds.
    pub secs: f64,
    /// Fastest and slowest round.
    pub min: f64,
    /// Slowest round.
    pub max: f64,
    /// Median CPU seconds.
    pub cpu: f64,
    /// Median peak RSS, MiB.
    pub rss: f64,
    /// Median requests by kind.
    pub requests: [u64; 4],
    /// Median bytes by kind.
    pub bytes: [u64; 4],
    /// Timed rounds that failed (left out of the medians).
    pub failed_rounds: usize,
}

/// Stats of the timed rounds of `reader` on (`storage`, `case`), or the
/// reason it has none.
pub fn stats(runs: &[Run], storage: Storage, case: &str, reader: Reader) -> Result<Stats, String> {
    let mine: Vec<&Run> = runs
        .iter()
        .filter(|r| r.storage == storage.name() && r.case == case && r.reader == reader.name())
        .collect();
    // A reader whose checked warm-up failed is not timed at all; a timed
    // round that failed is counted and left out of the medians.
    if let Some(bad) = mine.iter().find(|r| r.status != "ok" && r.round == 0) {
        return Err(format!("{}: {}", bad.status, bad.note));
    }
    let timed: Vec<&Run> = mine
        .iter()
        .copied()
        .filter(|r| r.round > 0 && r.status == "ok")
        .collect();
    let failed_rounds = mine
        .iter()
        .filter(|r| r.round > 0 && r.status != "ok")
        .count();
    if timed.is_empty() {
        return Err(match mine.iter().find(|r| r.status != "ok") {
            Some(bad) => format!("{}: {}", bad.status, bad.note),
            None => "not run".into(),
        });
    }
    let med = |f: &dyn Fn(&Run) -> f64| median(timed.iter().map(|r| f(r))).unwrap_or(0.0);
    let mut s = Stats {
        secs: med(&|r| r.secs),
        min: timed.iter().map(|r| r.secs).fold(f64::INFINITY, f64::min),
        max: timed.iter().map(|r| r.secs).fold(0.0, f64::max),
        cpu: med(&|r| r.cpu_secs),
        rss: med(&|r| r.peak_rss_mib),
        failed_rounds,
        ..Default::default()
    };
    for i in 0..4 {
        s.requests[i] = med(&|r| r.requests[i] as f64) as u64;
        s.bytes[i] = med(&|r| r.bytes[i] as f64) as u64;
    }
    Ok(s)
}

/// The fastest peer on a case (name, stats).
pub fn best_peer(
    runs: &[Run],
    storage: Storage,
    case: &str,
    readers: &[Reader],
) -> Option<(Reader, Stats)> {
    readers
        .iter()
        .filter(|r| r.is_peer())
        .filter_map(|&r| stats(runs, storage, case, r).ok().map(|s| (r, s)))
        .min_by(|a, b| a.1.secs.total_cmp(&b.1.secs))
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 20) as f64
}

/// `summary.md`.
pub fn summary(
    opts: &BenchOptions,
    cases: &[Case],
    runs: &[Run],
    floors: &BTreeMap<(Storage, String), Floors>,
) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# dar benchmark: scale `{}`, {} rounds\n",
        opts.scale.name(),
        opts.rounds
    );
    let _ = writeln!(
        md,
        "Times are medians of the measured rounds (one warm-up that checks rows and checksum is discarded), \
         from opening the table to the last batch; `dar-cli` and `dar-sql` are whole processes. \
         **vs best peer** is the best peer's median divided by the reader's (above 1: faster than every peer). \
         **x arrow-rs** is the reader's time as a multiple of the arrow-rs floor; **x net** of the computed network floor \
         (bytes / bandwidth + rounds x latency), and **bytes x net** its bytes as a multiple of the floor's. \
         CPU is the CPU time of the same span; CPU/wall above 1 means more than one core busy.\n"
    );
    for &storage in &opts.storage {
        let storage_cases: Vec<&Case> = cases
            .iter()
            .filter(|c| storage == Storage::Local || c.on_s3)
            .collect();
        if storage_cases.is_empty() {
            continue;
        }
        let _ = writeln!(md, "## Storage: {}\n", storage.name());
        for case in storage_cases {
            let floor = floors
                .get(&(storage, case.id.clone()))
                .cloned()
                .unwrap_or_default();
            let _ = writeln!(md, "### {} ({})\n", case.id, describe(case));
            if let Some(n) = floor.network {
                let _ = writeln!(
                    md,
                    "Network floor: {:.2} MiB in {} rounds = {:.3} s.\n",
                    mib(n.bytes),
                    n.rounds,
                    n.secs
                );
            }
            let s3 = storage != Storage::Local;
            let _ = write!(
                md,
                "| reader | median s | min-max s | vs best peer | x arrow-rs |"
            );
            if floor.network.is_some() {
                let _ = write!(md, " x net | bytes x net |");
            }
            let _ = write!(md, " CPU s | CPU/wall | peak RSS MiB |");
            if s3 {
                let _ = write!(
                    md,
                    " requests (log/ckpt/data/dv) | MiB (log/ckpt/data/dv) |"
                );
            }
            let _ = writeln!(md);
            let cols = 8 + if floor.network.is_some() { 2 } else { 0 } + if s3 { 2 } else { 0 };
            let _ = writeln!(md, "|{}", "---|".repeat(cols));
            let best = best_peer(runs, storage, &case.id, &opts.readers);
            for &reader in &opts.readers {
                match stats(runs, storage, &case.id, reader) {
                    Err(why) => {
                        let _ = writeln!(
                            md,
                            "| {} | {} |{}",
                            reader.name(),
                            short(&why),
                            " |".repeat(cols - 2)
                        );
                    }
                    Ok(s) => {
                        let vs = best
                            .as_ref()
                            .map_or("-".into(), |(_, b)| format!("{:.2}x", b.secs / s.secs));
                        let xf = floor
                            .arrow_rs_secs
                            .map_or("-".into(), |f| format!("{:.2}", s.secs / f));
                        let name = match s.failed_rounds {
                            0 => reader.name().to_string(),
                            n => {
                                format!("{} ({n} of {} rounds failed)", reader.name(), opts.rounds)
                            }
                        };
                        let _ = write!(
                            md,
                            "| {name} | {:.3} | {:.3}-{:.3} | {vs} | {xf} |",
                            s.secs, s.min, s.max
                        );
                        if let Some(n) = floor.network {
                            let total: u64 = s.bytes.iter().sum();
                            let _ = write!(
                                md,
                                " {:.2} | {:.2} |",
                                s.secs / n.secs,
                                total as f64 / n.bytes.max(1) as f64
                            );
                        }
                        let _ = write!(
                            md,
                            " {:.3} | {:.2} | {:.0} |",
                            s.cpu,
                            s.cpu / s.secs.max(1e-9),
                            s.rss
                        );
                        if s3 {
                            let r: Vec<String> = Kind::ALL
                                .iter()
                                .map(|&k| s.requests[k.index()].to_string())
                                .collect();
                            let b: Vec<String> = Kind::ALL
                                .iter()
                                .map(|&k| format!("{:.1}", mib(s.bytes[k.index()])))
                                .collect();
                            let _ = write!(md, " {} | {} |", r.join("/"), b.join("/"));
                        }
                        let _ = writeln!(md);
                    }
                }
            }
            if let Some((peer, _)) = best {
                let _ = writeln!(md, "\nBest peer: {}.", peer.name());
            }
            let _ = writeln!(md);
        }
    }
    md
}

/// The first sentence of an error, at most 120 characters, for a table cell
/// (`runs.csv` keeps the whole text).
fn short(why: &str) -> String {
    let first = why.split(". ").next().unwrap_or(why).replace('|', "/");
    match first.char_indices().nth(120) {
        Some((at, _)) => format!("{}...", &first[..at]),
        None => first,
    }
}

fn describe(case: &Case) -> String {
    let mut d = format!("{} columns of `{}`", case.columns.len(), case.table);
    match (case.action, case.changes_from) {
        (crate::workload::Action::Files, _) => {
            d = format!("load the snapshot of `{}` and list its files", case.table);
        }
        (crate::workload::Action::Changes, Some(from)) => {
            d = format!(
                "the change data feed of `{}` from version {from} to the latest, {} columns",
                case.table,
                case.columns.len()
            );
        }
        _ => {}
    }
    if let Some(f) = &case.filter {
        d.push_str(&format!(", `{f}`"));
    }
    if let Some(l) = case.limit {
        d.push_str(&format!(", LIMIT {l}"));
    }
    d
}

/// Reads a `runs.csv` written by [`write_csv`].
pub fn read_csv(path: &Path) -> Result<Vec<Run>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate().skip(1) {
        let bad = |what: &str| format!("{} line {}: {what}", path.display(), n + 1);
        // The note is the last field, quoted, and may hold commas.
        let (fields, note) = match line.find(",\"") {
            Some(at) => (&line[..at], line[at + 2..].trim_end_matches('"')),
            None => (line, ""),
        };
        let f: Vec<&str> = fields.split(',').collect();
        if f.len() != 19 {
            return Err(bad("expected 20 fields"));
        }
        let num = |i: usize| f[i].parse::<f64>().map_err(|_| bad(f[i]));
        let int = |i: usize| f[i].parse::<u64>().map_err(|_| bad(f[i]));
        let storage = <Storage as clap::ValueEnum>::value_variants()
            .iter()
            .copied()
            .find(|s| s.name() == f[0])
            .ok_or_else(|| bad(f[0]))?;
        let reader = Reader::ALL
            .into_iter()
            .find(|r| r.name() == f[2])
            .ok_or_else(|| bad(f[2]))?;
        let status = ["ok", "unsupported", "timeout", "wrong", "failed"]
            .into_iter()
            .find(|s| *s == f[4])
            .ok_or_else(|| bad(f[4]))?;
        out.push(Run {
            storage: storage.name(),
            case: f[1].to_string(),
            reader: reader.name(),
            round: int(3)? as usize,
            status,
            rows: int(5)?,
            secs: num(6)?,
            cpu_secs: num(7)?,
            peak_rss_mib: num(8)?,
            process_secs: num(9)?,
            process_cpu_secs: num(10)?,
            requests: [int(11)?, int(12)?, int(13)?, int(14)?],
            bytes: [int(15)?, int(16)?, int(17)?, int(18)?],
            note: note.to_string(),
            first: None,
        });
    }
    Ok(out)
}
