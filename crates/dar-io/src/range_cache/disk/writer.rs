//! The disk tier's writer: one background thread per open cache folder
//! that writes entries after their bytes went to the reader, so no scan
//! waits on the cache's disk.
//!
//! Queued bytes are bounded ([`MAX_PENDING`]); a write that would go past
//! the bound is dropped (the range is simply fetched again by a later
//! process). Dropping the tier waits for the queue to drain, so a process
//! that ends normally leaves what it fetched on disk.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use bytes::Bytes;

use super::Shared;

/// The most bytes waiting to be written at once.
pub(super) const MAX_PENDING: u64 = 256 * 1024 * 1024;

/// One entry to write.
#[derive(Debug)]
pub(super) struct Job {
    /// The identity's folder hash.
    pub hash: u64,
    /// The identity text.
    pub identity: String,
    /// The store's tag of the bytes.
    pub tag: String,
    /// Where the bytes start in the object.
    pub start: u64,
    /// The bytes.
    pub data: Bytes,
}

enum Message {
    Write(Job),
    Budget(Option<u64>),
    Flush(Sender<()>),
}

/// The queue and its thread.
#[derive(Debug)]
pub(super) struct Writer {
    queue: Mutex<Option<Sender<Message>>>,
    pending: Arc<AtomicU64>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Writer {
    /// Starts the thread that writes into `shared`'s folder.
    pub(super) fn start(shared: Arc<Shared>) -> Self {
        let (tx, rx) = channel();
        let pending = Arc::new(AtomicU64::new(0));
        let thread = {
            let pending = Arc::clone(&pending);
            std::thread::Builder::new()
                .name("dar-cache-writer".into())
                .spawn(move || run(&shared, &rx, &pending))
                .ok()
        };
        Self {
            // Without a thread nothing is queued: the tier only reads.
            queue: Mutex::new(thread.is_some().then_some(tx)),
            pending,
            thread: Mutex::new(thread),
        }
    }

    /// Queues `job` unless the queue holds [`MAX_PENDING`] bytes already.
    pub(super) fn send(&self, job: Job) {
        let len = job.data.len() as u64;
        let queued = self
            .pending
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |p| {
                (p + len <= MAX_PENDING).then_some(p + len)
            })
            .is_ok();
        if !queued {
            return;
        }
        let sent = lock(&self.queue)
            .as_ref()
            .is_some_and(|q| q.send(Message::Write(job)).is_ok());
        if !sent {
            self.pending.fetch_sub(len, Ordering::AcqRel);
        }
    }

    /// Records the folder's budget (and counts its entries if it has no
    /// usage record) on the writer's thread, before any later write.
    pub(super) fn set_budget(&self, budget: Option<u64>) {
        if let Some(q) = lock(&self.queue).as_ref() {
            let _ = q.send(Message::Budget(budget));
        }
    }

    /// Waits until everything queued before this call is written.
    pub(super) fn flush(&self) {
        let (done, wait) = channel();
        let sent = lock(&self.queue)
            .as_ref()
            .is_some_and(|q| q.send(Message::Flush(done)).is_ok());
        if sent {
            let _ = wait.recv();
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Closing the queue ends the thread once it has written the rest.
        lock(&self.queue).take();
        if let Some(t) = lock(&self.thread).take() {
            let _ = t.join();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn run(shared: &Shared, queue: &Receiver<Message>, pending: &AtomicU64) {
    for message in queue {
        match message {
            Message::Write(job) => {
                // A failed write (a full disk, a folder removed meanwhile)
                // only means the bytes are not kept.
                let _ = shared.write(&job);
                pending.fetch_sub(job.data.len() as u64, Ordering::AcqRel);
            }
            Message::Budget(budget) => {
                // A folder that cannot be accounted for is still read;
                // its writes will fail the same way and be dropped.
                let _ = shared.set_budget(budget);
            }
            Message::Flush(done) => {
                let _ = done.send(());
            }
        }
    }
}
