//! The server's counters, and their Prometheus text form for `GET
//! /metrics`.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::admission::Admission;
use crate::tables::{ServedTable, Tables};

/// How a query ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Every batch was sent.
    Ok,
    /// It failed (planning or execution).
    Error,
    /// The client went away first.
    Cancelled,
    /// It ran past `--query-timeout`.
    Timeout,
    /// Admission refused it.
    Refused,
}

impl Outcome {
    const ALL: [Outcome; 5] = [
        Outcome::Ok,
        Outcome::Error,
        Outcome::Cancelled,
        Outcome::Timeout,
        Outcome::Refused,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error => "error",
            Outcome::Cancelled => "cancelled",
            Outcome::Timeout => "timeout",
            Outcome::Refused => "refused",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Upper bounds of the latency histogram's buckets, in seconds.
const BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0, 30.0,
];

#[derive(Debug, Default, Clone, Copy)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

/// Query counts and latencies by outcome.
#[derive(Debug, Default)]
pub(crate) struct Metrics {
    by_outcome: Mutex<[Histogram; 5]>,
}

impl Metrics {
    /// Counts one query that ended with `outcome` after `elapsed`.
    pub(crate) fn record(&self, outcome: Outcome, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        let mut all = self
            .by_outcome
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let h = &mut all[outcome.index()];
        h.count += 1;
        h.sum += seconds;
        for (bound, count) in BUCKETS.iter().zip(h.counts.iter_mut()) {
            if seconds <= *bound {
                *count += 1;
            }
        }
    }

    /// Every metric in Prometheus' text format (version 0.0.4).
    pub(crate) fn render(&self, tables: &Tables, admission: &Admission) -> String {
        let mut out = String::new();
        let all = *self
            .by_outcome
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = writeln!(out, "# HELP dar_serve_queries_total Queries by outcome.");
        let _ = writeln!(out, "# TYPE dar_serve_queries_total counter");
        for o in Outcome::ALL {
            let _ = writeln!(
                out,
                "dar_serve_queries_total{{outcome=\"{}\"}} {}",
                o.name(),
                all[o.index()].count
            );
        }
        let _ = writeln!(
            out,
            "# HELP dar_serve_query_seconds Query latency (plan to last batch) by outcome."
        );
        let _ = writeln!(out, "# TYPE dar_serve_query_seconds histogram");
        for o in Outcome::ALL {
            let h = &all[o.index()];
            for (bound, count) in BUCKETS.iter().zip(h.counts.iter()) {
                let _ = writeln!(
                    out,
                    "dar_serve_query_seconds_bucket{{outcome=\"{}\",le=\"{bound}\"}} {count}",
                    o.name()
                );
            }
            let _ = writeln!(
                out,
                "dar_serve_query_seconds_bucket{{outcome=\"{}\",le=\"+Inf\"}} {}",
                o.name(),
                h.count
            );
            let _ = writeln!(
                out,
                "dar_serve_query_seconds_sum{{outcome=\"{}\"}} {}",
                o.name(),
                h.sum
            );
            let _ = writeln!(
                out,
                "dar_serve_query_seconds_count{{outcome=\"{}\"}} {}",
                o.name(),
                h.count
            );
        }
        gauge(
            &mut out,
            "dar_serve_queries_running",
            "Queries running now.",
            admission.running() as u64,
        );
        gauge(
            &mut out,
            "dar_serve_queries_queued",
            "Queries waiting for a slot now.",
            admission.queued() as u64,
        );
        table_metrics(&mut out, tables);
        out
    }
}

fn gauge(out: &mut String, name: &str, help: &str, value: u64) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} gauge");
    let _ = writeln!(out, "{name} {value}");
}

/// Per table: version, refresh lag, refreshes, and its store's requests,
/// bytes and cache counts (dar-io's metered store, over all queries and
/// refreshes of the table).
fn table_metrics(out: &mut String, tables: &Tables) {
    type Read = fn(&crate::tables::ServedTable, &dar_io::IoSnapshot) -> f64;
    let families: [(&str, &str, &str, Read); 7] = [
        (
            "dar_serve_table_version",
            "gauge",
            "The version queries read.",
            |t, _| t.version() as f64,
        ),
        (
            "dar_serve_table_refresh_lag_seconds",
            "gauge",
            "Time since the table was last known current.",
            |t, _| t.lag().as_secs_f64(),
        ),
        (
            "dar_serve_table_refreshes_total",
            "counter",
            "Refreshes tried.",
            |t, _| t.refreshes.load(std::sync::atomic::Ordering::Relaxed) as f64,
        ),
        (
            "dar_serve_table_refresh_errors_total",
            "counter",
            "Refreshes that failed.",
            |t, _| t.refresh_errors.load(std::sync::atomic::Ordering::Relaxed) as f64,
        ),
        (
            "dar_serve_store_requests_total",
            "counter",
            "GET and HEAD requests to the store.",
            |_, io| io.requests() as f64,
        ),
        (
            "dar_serve_store_lists_total",
            "counter",
            "LIST requests to the store.",
            |_, io| io.lists as f64,
        ),
        (
            "dar_serve_store_bytes_total",
            "counter",
            "Bytes received from the store.",
            |_, io| io.bytes() as f64,
        ),
    ];
    let snapshots: Vec<_> = tables
        .iter()
        .map(|t| {
            let io = t.provider().table().store().metrics().snapshot();
            (t, io)
        })
        .collect();
    for (name, kind, help, read) in families {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        for (t, io) in &snapshots {
            let _ = writeln!(out, "{name}{{table=\"{}\"}} {}", t.name, read(t, io));
        }
    }
    cache_metrics(out, &snapshots);
}

/// Per table and cache (`range`: byte ranges in memory and on disk;
/// `footer`: Parquet footers and page indexes; `dv`: decoded deletion
/// vectors), hits, misses and the hit ratio since the server started (NaN
/// before the first lookup).
fn cache_metrics(out: &mut String, snapshots: &[(&Arc<ServedTable>, dar_io::IoSnapshot)]) {
    /// A cache's name, hits and misses.
    type Counts<'a> = [(&'a str, u64, u64); 3];
    let counts: Vec<(&str, Counts)> = snapshots
        .iter()
        .map(|(t, io)| {
            let table = t.provider().table();
            let footer = table.store().metadata_cache().stats();
            let dv = table.dv_cache().stats();
            (
                t.name.as_str(),
                [
                    ("range", io.cache.hits + io.cache.disk_hits, io.cache.misses),
                    ("footer", footer.hits, footer.misses),
                    ("dv", dv.hits, dv.loads),
                ],
            )
        })
        .collect();
    type Value = fn(u64, u64) -> f64;
    let families: [(&str, &str, &str, Value); 3] = [
        (
            "dar_serve_cache_hits_total",
            "counter",
            "Lookups a cache answered.",
            |hits, _| hits as f64,
        ),
        (
            "dar_serve_cache_misses_total",
            "counter",
            "Lookups a cache did not answer (fetched or decoded instead).",
            |_, misses| misses as f64,
        ),
        (
            "dar_serve_cache_hit_ratio",
            "gauge",
            "Hits over lookups since the server started (NaN before the first).",
            |hits, misses| hits as f64 / (hits + misses) as f64,
        ),
    ];
    for (name, kind, help, value) in families {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        for (table, caches) in &counts {
            for (cache, hits, misses) in caches {
                let _ = writeln!(
                    out,
                    "{name}{{table=\"{table}\",cache=\"{cache}\"}} {}",
                    value(*hits, *misses)
                );
            }
        }
    }
}
