//! `LIMIT n`: passes batches until `n` rows are out, slices the last one,
//! then drops the inner stream, which cancels every read and decode still
//! in flight (files being opened, pages being fetched). Also ends the
//! stream after the first error, so no rows follow an error.

use std::pin::Pin;
use std::task::{Context, Poll};

use arrow_array::RecordBatch;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};

use crate::errors::error::Result;
use crate::execution::metrics::ScanMetrics;

/// The output stream of a scan or task.
pub(crate) struct LimitStream {
    inner: Option<BoxStream<'static, Result<RecordBatch>>>,
    remaining: Option<usize>,
    metrics: ScanMetrics,
}

impl LimitStream {
    pub(crate) fn new(
        inner: BoxStream<'static, Result<RecordBatch>>,
        limit: Option<usize>,
        metrics: ScanMetrics,
    ) -> Self {
        Self {
            inner: (limit != Some(0)).then_some(inner),
            remaining: limit,
            metrics,
        }
    }
}

impl Stream for LimitStream {
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let batch = match inner.poll_next_unpin(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(None) => {
                self.inner = None;
                return Poll::Ready(None);
            }
            Poll::Ready(Some(Err(e))) => {
                self.inner = None;
                return Poll::Ready(Some(Err(e)));
            }
            Poll::Ready(Some(Ok(b))) => b,
        };
        let batch = match self.remaining {
            Some(left) if batch.num_rows() >= left => {
                self.inner = None;
                self.remaining = Some(0);
                batch.slice(0, left)
            }
            Some(left) => {
                self.remaining = Some(left - batch.num_rows());
                batch
            }
            None => batch,
        };
        self.metrics.add_rows_output(batch.num_rows() as u64);
        self.metrics.add_batches_output(1);
        Poll::Ready(Some(Ok(batch)))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::Int32Array;
    use futures::TryStreamExt;

    use super::*;

    fn batch(n: i32) -> RecordBatch {
        RecordBatch::try_from_iter([("a", Arc::new(Int32Array::from_iter_values(0..n)) as _)])
            .unwrap()
    }

    #[tokio::test]
    async fn slices_and_stops() {
        let metrics = ScanMetrics::new(dar_io::IoMetrics::new());
        let inner = futures::stream::iter(vec![Ok(batch(3)), Ok(batch(3)), Ok(batch(3))]).boxed();
        let out: Vec<RecordBatch> = LimitStream::new(inner, Some(4), metrics.clone())
            .try_collect()
            .await
            .unwrap();
        assert_eq!(
            out.iter().map(|b| b.num_rows()).collect::<Vec<_>>(),
            vec![3, 1]
        );
        assert_eq!(metrics.snapshot().rows_output, 4);
        let inner = futures::stream::iter(vec![Ok(batch(3))]).boxed();
        let out: Vec<RecordBatch> = LimitStream::new(inner, Some(0), metrics)
            .try_collect()
            .await
            .unwrap();
        assert!(out.is_empty());
    }
}
