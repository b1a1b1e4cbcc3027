//! One running query as the stream a `DoGet` returns ([`run`]):
//! DataFusion's batches as they are produced, ended by the query timeout
//! or by the client going away, which drop DataFusion's stream so the scan
//! stops fetching; then the admission slot is given back, the outcome
//! counted and the query's log line written.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use arrow_flight::error::FlightError;
use dar_datafusion::DeltaTableProvider;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::datasource::source_as_provider;
use datafusion::execution::SendableRecordBatchStream;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::ExecutionPlan;
use futures::StreamExt;
use tokio::time::sleep_until;
use tonic::Status;

use crate::admission::Slot;
use crate::metrics::{Metrics, Outcome};
use crate::session::{Versions, status};

/// What the log line and the metrics need to know of a query.
#[derive(Debug)]
pub(crate) struct QueryRecord {
    pub(crate) id: u64,
    pub(crate) kind: &'static str,
    pub(crate) sql: String,
    /// The Delta tables the statement reads and their versions (from its
    /// logical plan: a count answered from the log's statistics read the
    /// table too, with no scan in the physical plan).
    pub(crate) tables: BTreeSet<(String, u64)>,
    /// The physical plan, once planned: its Delta scans' metrics go into
    /// the log line.
    pub(crate) plan: Option<Arc<dyn ExecutionPlan>>,
    pub(crate) started: Instant,
    pub(crate) log: bool,
    pub(crate) metrics: Arc<Metrics>,
}

impl QueryRecord {
    /// Counts and logs a query that ended before it streamed.
    pub(crate) fn finish(self, outcome: Outcome, rows: u64, error: Option<&str>) {
        let elapsed = self.started.elapsed();
        self.metrics.record(outcome, elapsed);
        if !self.log {
            return;
        }
        let tables: Vec<String> = self
            .tables
            .iter()
            .map(|(name, version)| format!("{{\"name\":{},\"version\":{version}}}", json(name)))
            .collect();
        let error = error
            .map(|e| format!(",\"error\":{}", json(e)))
            .unwrap_or_default();
        let read = |name: &str| {
            self.plan
                .as_ref()
                .map_or(0, |p| metric_sum(p.as_ref(), name))
        };
        let io = format!(
            "\"requests\":{},\"bytes\":{},\"cache_hits\":{}",
            read("requests"),
            read("bytes_scanned"),
            read("cache_hits") + read("cache_disk_hits")
        );
        eprintln!(
            "{{\"query\":{},\"kind\":\"{}\",\"outcome\":\"{}\",\"rows\":{rows},\"ms\":{:.3},{io},\"tables\":[{}],\"sql\":{}{error}}}",
            self.id,
            self.kind,
            outcome.name(),
            elapsed.as_secs_f64() * 1000.0,
            tables.join(","),
            json(&self.sql),
        );
    }
}

/// The Delta tables `plan` reads (`delta_scan()` and `table_changes()`
/// included), each once with the version read: a served table by its name
/// (`served`: name, URI, version), another (`--allow-any-table`) by its URI
/// without credentials.
pub(crate) fn tables_read(plan: &LogicalPlan, served: &Versions) -> BTreeSet<(String, u64)> {
    let mut read = BTreeSet::new();
    // The closure never fails: the walk's own result carries nothing.
    let _ = plan.apply_with_subqueries(|node| {
        if let LogicalPlan::TableScan(scan) = node
            && let Ok(provider) = source_as_provider(&scan.source)
            && let Some(delta) =
                (provider.as_ref() as &dyn std::any::Any).downcast_ref::<DeltaTableProvider>()
        {
            let table = delta.table();
            let uri = table.uri();
            let name = served
                .iter()
                .find(|(_, served_uri, _)| served_uri == uri)
                .map_or_else(|| dar_io::redact_uri(uri), |(name, _, _)| name.clone());
            read.insert((name, table.version()));
        }
        Ok(TreeNodeRecursion::Continue)
    });
    read
}

/// The sum of metric `name` over `plan` and its children (dar's Delta
/// scans report `requests`, `bytes_scanned`, `cache_hits`, ...).
fn metric_sum(plan: &dyn ExecutionPlan, name: &str) -> usize {
    let own = plan
        .metrics()
        .and_then(|m| m.sum_by_name(name))
        .map_or(0, |v| v.as_usize());
    own + plan
        .children()
        .into_iter()
        .map(|c| metric_sum(c.as_ref(), name))
        .sum::<usize>()
}

/// `text` as a JSON string.
fn json(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A running query's batches, for a `DoGet` response (see [`run`]).
pub(crate) type Batches = futures::stream::BoxStream<'static, Result<RecordBatch, FlightError>>;

/// Batches a query keeps ready ahead of its client.
const AHEAD: usize = 2;

/// Runs `stream` on a task of its own and returns its batches. The task
/// stops the query (dropping DataFusion's stream, so its scans stop
/// fetching) when the client goes away (the returned stream is dropped),
/// when the query errs, or at the timeout, whether or not the client is
/// reading; then it gives back the admission slot, counts the outcome and
/// writes the log line. An error or a timeout reaches the client after the
/// batches already sent, never as a silently shorter result.
pub(crate) fn run(
    mut stream: SendableRecordBatchStream,
    timeout: Duration,
    record: QueryRecord,
    slot: Slot,
) -> Batches {
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<RecordBatch, FlightError>>(AHEAD);
    let deadline = tokio::time::Instant::from_std(record.started) + timeout;
    tokio::spawn(async move {
        let timed_out = || {
            Status::deadline_exceeded(format!(
                "the query ran longer than the server's query timeout ({timeout:?}) and was stopped"
            ))
        };
        let mut rows = 0u64;
        let (outcome, failure) = loop {
            let next = tokio::select! {
                biased;
                () = tx.closed() => break (Outcome::Cancelled, None),
                () = sleep_until(deadline) => break (Outcome::Timeout, Some(timed_out())),
                next = stream.next() => next,
            };
            match next {
                None => break (Outcome::Ok, None),
                Some(Err(e)) => break (Outcome::Error, Some(status(&e))),
                Some(Ok(batch)) => {
                    let n = batch.num_rows() as u64;
                    tokio::select! {
                        biased;
                        sent = tx.send(Ok(batch)) => match sent {
                            Ok(()) => rows += n,
                            Err(_) => break (Outcome::Cancelled, None),
                        },
                        () = sleep_until(deadline) => break (Outcome::Timeout, Some(timed_out())),
                    }
                }
            }
        };
        // The query stops here: its scans, its memory and its slot go.
        drop(stream);
        drop(slot);
        record.finish(outcome, rows, failure.as_ref().map(|f| f.message()));
        if let Some(failure) = failure {
            // After the batches already queued; a client that never reads
            // again keeps only this task waiting, not the query.
            let _ = tx.send(Err(FlightError::Tonic(Box::new(failure)))).await;
        }
    });
    futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(json("a\"b\\c\nd\u{1}"), "\"a\\\"b\\\\c\\nd\\u0001\"");
    }
}
