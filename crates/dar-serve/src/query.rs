//! One running query as the stream a `DoGet` returns: DataFusion's batches
//! as they are produced, ended by the query timeout, and, when dropped
//! (the client went away, the transfer ended), dropping DataFusion's
//! stream so the scan stops fetching, giving back the admission slot,
//! counting the outcome and writing the query's log line.

use std::future::Future as _;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use arrow_array::RecordBatch;
use arrow_flight::error::FlightError;
use datafusion::execution::SendableRecordBatchStream;
use futures::Stream;
use tokio::time::Sleep;
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
    pub(crate) versions: Versions,
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
            .versions
            .iter()
            .map(|(name, version)| format!("{{\"name\":{},\"version\":{version}}}", json(name)))
            .collect();
        let error = error
            .map(|e| format!(",\"error\":{}", json(e)))
            .unwrap_or_default();
        eprintln!(
            "{{\"query\":{},\"kind\":\"{}\",\"outcome\":\"{}\",\"rows\":{rows},\"ms\":{:.3},\"tables\":[{}],\"sql\":{}{error}}}",
            self.id,
            self.kind,
            outcome.name(),
            elapsed.as_secs_f64() * 1000.0,
            tables.join(","),
            json(&self.sql),
        );
    }
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

/// A running query (see the module docs).
pub(crate) struct Running {
    inner: Option<SendableRecordBatchStream>,
    deadline: Pin<Box<Sleep>>,
    timeout: std::time::Duration,
    record: Option<QueryRecord>,
    rows: u64,
    outcome: Outcome,
    error: Option<String>,
    _slot: Slot,
}

impl Running {
    pub(crate) fn new(
        inner: SendableRecordBatchStream,
        timeout: std::time::Duration,
        record: QueryRecord,
        slot: Slot,
    ) -> Self {
        let deadline = Box::pin(tokio::time::sleep_until(
            tokio::time::Instant::from_std(record.started) + timeout,
        ));
        Self {
            inner: Some(inner),
            deadline,
            timeout,
            record: Some(record),
            rows: 0,
            // Dropped before its end: the client went away.
            outcome: Outcome::Cancelled,
            error: None,
            _slot: slot,
        }
    }

    fn end(&mut self, outcome: Outcome, error: Option<String>) {
        self.outcome = outcome;
        self.error = error;
        // Dropping DataFusion's stream stops its scans now.
        self.inner = None;
    }
}

impl Stream for Running {
    type Item = Result<RecordBatch, FlightError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let Some(inner) = this.inner.as_mut() else {
            return Poll::Ready(None);
        };
        if this.deadline.as_mut().poll(cx).is_ready() {
            let message = format!(
                "the query ran longer than the server's query timeout ({:?}) and was stopped",
                this.timeout
            );
            this.end(Outcome::Timeout, Some(message.clone()));
            return Poll::Ready(Some(Err(FlightError::Tonic(Box::new(
                Status::deadline_exceeded(message),
            )))));
        }
        match inner.as_mut().poll_next(cx) {
            Poll::Ready(Some(Ok(batch))) => {
                this.rows += batch.num_rows() as u64;
                Poll::Ready(Some(Ok(batch)))
            }
            Poll::Ready(Some(Err(e))) => {
                let status = status(&e);
                this.end(Outcome::Error, Some(status.message().to_string()));
                Poll::Ready(Some(Err(FlightError::Tonic(Box::new(status)))))
            }
            Poll::Ready(None) => {
                this.end(Outcome::Ok, None);
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.inner = None;
        if let Some(record) = self.record.take() {
            record.finish(self.outcome, self.rows, self.error.as_deref());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(json("a\"b\\c\nd\u{1}"), "\"a\\\"b\\\\c\\nd\\u0001\"");
    }
}
