//! The `--stats` report of `dar scan`: what was pruned, deleted, read, and
//! where the time went.

use std::io::Write;
use std::time::Duration;

use dar_io::{IoSnapshot, ObjectClass};
use dar_scan::{MetricsSnapshot, Stage};

use crate::commands::human_bytes;

/// What opening the table did, for the report.
#[derive(Debug, Clone, Default)]
pub struct Opened {
    /// The I/O of opening the table (the log).
    pub io: IoSnapshot,
    /// Columns whose file statistics the open parsed (those of the
    /// command's filter, see [`crate::table::open_for`]).
    pub stats_columns_parsed: u64,
}

impl Opened {
    /// What the open of `table` did so far.
    pub fn of(table: &dar_scan::Table) -> Self {
        Self {
            io: table.store().metrics().snapshot(),
            stats_columns_parsed: table
                .snapshot()
                .file_index()
                .map_or(0, |i| i.stats.parsed_columns() as u64),
        }
    }
}

/// Wall-clock times measured by the command itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct WallTimes {
    /// Opening the table (log replay, file index).
    pub open: Duration,
    /// Planning (file pruning).
    pub plan: Duration,
    /// Reading and writing the rows.
    pub scan: Duration,
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn io_line(io: &IoSnapshot) -> String {
    let classes: Vec<String> = ObjectClass::ALL
        .iter()
        .map(|c| (c, io.class(*c)))
        .filter(|(_, s)| s.requests > 0)
        .map(|(c, s)| format!("{} {} ({})", c.name(), s.requests, human_bytes(s.bytes)))
        .collect();
    let detail = if classes.is_empty() {
        String::new()
    } else {
        format!(": {}", classes.join(", "))
    };
    let requests = io.requests();
    let lists = match io.lists {
        0 => String::new(),
        1 => "; 1 listing".to_string(),
        n => format!("; {n} listings"),
    };
    format!(
        "{requests} request{}, {}{detail}{lists}",
        if requests == 1 { "" } else { "s" },
        human_bytes(io.bytes())
    )
}

/// What the byte-range cache served and missed, when it was used.
fn cache_line(io: &IoSnapshot) -> Option<String> {
    let c = &io.cache;
    if c.hits + c.disk_hits + c.misses + c.corrupt == 0 {
        return None;
    }
    let mut line = format!(
        "{} hit{} ({}) in memory, {} on disk ({}), {} miss{} ({})",
        c.hits,
        if c.hits == 1 { "" } else { "s" },
        human_bytes(c.hit_bytes),
        c.disk_hits,
        human_bytes(c.disk_hit_bytes),
        c.misses,
        if c.misses == 1 { "" } else { "es" },
        human_bytes(c.miss_bytes)
    );
    if c.validations > 0 {
        line.push_str(&format!(
            ", {} object{} checked with the store (HEAD)",
            c.validations,
            if c.validations == 1 { "" } else { "s" }
        ));
    }
    if c.corrupt > 0 {
        line.push_str(&format!(
            ", {} damaged cache files fetched again",
            c.corrupt
        ));
    }
    if c.evictions > 0 {
        line.push_str(&format!(", {} evicted", c.evictions));
    }
    Some(line)
}

/// Writes the report. `opened` is what opening the table did (its I/O:
/// the log's); `m.io` is the I/O of the scan itself.
pub fn write_stats(
    w: &mut dyn Write,
    m: &MetricsSnapshot,
    opened: &Opened,
    times: WallTimes,
) -> std::io::Result<()> {
    writeln!(w, "scan stats:")?;
    writeln!(
        w,
        "  files:      {} in snapshot, {} pruned by partition values and stats, {} read{}",
        m.files_total,
        m.files_pruned,
        m.files_read,
        if m.files_answered_from_log > 0 {
            format!(", {} counted from the log alone", m.files_answered_from_log)
        } else {
            String::new()
        }
    )?;
    // By the open (the filter's columns) and by the plan.
    let parsed = opened.stats_columns_parsed + m.stats_columns_parsed;
    if let Some(per_file) = m.index_bytes.checked_div(m.files_total) {
        writeln!(
            w,
            "  file index: {per_file} bytes per file, stats of {parsed} column{} parsed for this scan",
            if parsed == 1 { "" } else { "s" }
        )?;
    }
    if m.stats_files_unavailable > 0 {
        writeln!(
            w,
            "  {} files kept without column statistics: their checkpoint file changed since the open",
            m.stats_files_unavailable
        )?;
    }
    writeln!(
        w,
        "  row groups: {} in files read, {} pruned",
        m.row_groups_total, m.row_groups_pruned
    )?;
    writeln!(
        w,
        "  pages:      {} examined, {} pruned ({} rows skipped)",
        m.pages_total, m.pages_pruned, m.rows_skipped_by_pages
    )?;
    writeln!(
        w,
        "  rows:       {} deleted by deletion vectors, {} filtered by the predicate, {} returned in {} batch{}",
        m.rows_deleted_by_dv,
        m.rows_filtered,
        m.rows_output,
        m.batches_output,
        if m.batches_output == 1 { "" } else { "es" }
    )?;
    writeln!(w, "  io (log):   {}", io_line(&opened.io))?;
    writeln!(w, "  io (scan):  {}", io_line(&m.io))?;
    if let Some(line) = cache_line(&m.io) {
        writeln!(w, "  cache:      {line}")?;
    }
    writeln!(
        w,
        "  time:       open {}, plan {}, scan {}",
        ms(times.open),
        ms(times.plan),
        ms(times.scan)
    )?;
    let stages: Vec<String> = Stage::ALL
        .iter()
        .map(|s| (s, m.time(*s)))
        .filter(|(_, d)| !d.is_zero())
        .map(|(s, d)| format!("{} {}", s.name(), ms(d)))
        .collect();
    if !stages.is_empty() {
        writeln!(w, "  stages:     {} (summed over files)", stages.join(", "))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_names_every_counter() {
        // non_exhaustive: built by assignment.
        let mut m = MetricsSnapshot::default();
        m.files_total = 4;
        m.files_pruned = 3;
        m.files_read = 1;
        m.rows_deleted_by_dv = 2;
        m.rows_output = 7;
        m.batches_output = 1;
        m.index_bytes = 800;
        m.stats_columns_parsed = 1;
        let mut out = Vec::new();
        write_stats(&mut out, &m, &Opened::default(), WallTimes::default()).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("4 in snapshot, 3 pruned by partition values and stats, 1 read"));
        assert!(text.contains("file index: 200 bytes per file, stats of 1 column parsed"));
        assert!(text.contains("2 deleted by deletion vectors"));
        assert!(text.contains("7 returned in 1 batch\n"));
        assert!(text.contains("io (scan):  0 requests, 0 B"));
        assert!(!text.contains("without column statistics"));
        m.stats_files_unavailable = 3;
        let mut out = Vec::new();
        write_stats(&mut out, &m, &Opened::default(), WallTimes::default()).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("3 files kept without column statistics"),
            "{text}"
        );
    }
}
