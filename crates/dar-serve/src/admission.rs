//! Admission control: at most N queries run; at most M wait for a slot;
//! past that a query is refused at once with `RESOURCE_EXHAUSTED`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tonic::Status;

/// The slots queries run in and the queue before them.
#[derive(Debug)]
pub(crate) struct Admission {
    slots: Arc<Semaphore>,
    max_running: usize,
    max_queued: usize,
    queued: AtomicUsize,
}

/// A query's slot, given back when dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    _permit: OwnedSemaphorePermit,
}

impl Admission {
    pub(crate) fn new(max_running: usize, max_queued: usize) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(max_running)),
            max_running,
            max_queued,
            queued: AtomicUsize::new(0),
        }
    }

    /// Waits for a slot, or refuses when `max_queued` queries wait already.
    pub(crate) async fn admit(&self) -> Result<Slot, Status> {
        if let Ok(permit) = Arc::clone(&self.slots).try_acquire_owned() {
            return Ok(Slot { _permit: permit });
        }
        let waiting = self.queued.fetch_add(1, Ordering::SeqCst);
        if waiting >= self.max_queued {
            self.queued.fetch_sub(1, Ordering::SeqCst);
            return Err(Status::resource_exhausted(format!(
                "the server is busy: {} queries are running and {} are waiting \
                 (--max-concurrent-queries, and its queue); try again later",
                self.max_running, self.max_queued
            )));
        }
        // Leaving the queue whether the wait ends or is dropped (the
        // client went away while waiting).
        struct Leave<'a>(&'a AtomicUsize);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        let _leave = Leave(&self.queued);
        let permit = Arc::clone(&self.slots)
            .acquire_owned()
            .await
            .map_err(|_| Status::unavailable("the server is shutting down"))?;
        Ok(Slot { _permit: permit })
    }

    /// Queries waiting for a slot now.
    pub(crate) fn queued(&self) -> usize {
        self.queued.load(Ordering::SeqCst)
    }

    /// Queries running now.
    pub(crate) fn running(&self) -> usize {
        self.max_running - self.slots.available_permits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_full_queue_refuses_at_once() {
        let admission = Arc::new(Admission::new(1, 1));
        let first = admission.admit().await.unwrap();
        assert_eq!(admission.running(), 1);
        let waiting = {
            let a = Arc::clone(&admission);
            tokio::spawn(async move { a.admit().await.map(|_| ()) })
        };
        while admission.queued() == 0 {
            tokio::task::yield_now().await;
        }
        let refused = admission.admit().await.unwrap_err();
        assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
        assert!(refused.message().contains("busy"), "{refused:?}");
        drop(first);
        waiting.await.unwrap().unwrap();
        assert_eq!(admission.queued(), 0);
        assert_eq!(admission.running(), 0);
    }
}
