//! Test support (feature `testing`): a store that injects faults into reads,
//! a store that records them ([`RecordingStore`]), an in-process S3 server,
//! Azurite and fake-gcs-server as child processes ([`stores`]) and a
//! Parquet file with exact page boundaries.
//!
//! [`FaultStore`] wraps any store and applies a script of [`Fault`]s, one per
//! `get_opts` call (HEADs included), in order; when the script is empty calls
//! pass through. It lets tests of retries, error naming and truncation
//! detection run without a network.

use std::collections::HashSet;
use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{GetOptions, GetResult, GetResultPayload, ObjectStore};

use crate::ObjectClass;

use crate::wrapper::wrapper_store;

mod paged_parquet;
mod recording;
mod s3_server;
pub mod stores;

pub use paged_parquet::paged_parquet;
pub use recording::{RecordedGet, RecordedList, RecordingStore};
pub use s3_server::S3Server;
pub use stores::{Azurite, FakeGcs};

/// Every file (links included, never followed) under `dir`, sorted: what
/// a test of the disk cache walks to damage or count entries.
pub fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => todo.push(e.path()),
                Ok(_) => out.push(e.path()),
                Err(_) => {}
            }
        }
    }
    out.sort();
    out
}

/// One injected fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// The connection is reset before any response.
    ConnectionReset,
    /// The server answers 503 Slow Down.
    ServiceUnavailable,
    /// The body ends after `keep` bytes although the response claims the full range.
    TruncatedBody {
        /// Bytes delivered.
        keep: u64,
    },
    /// The body fails with a reset after `keep` bytes.
    ResetMidBody {
        /// Bytes delivered before the error.
        keep: u64,
    },
    /// The response is delayed by this long, then served normally.
    Slow(Duration),
}

/// A store wrapper that injects scripted faults into reads.
pub struct FaultStore<T> {
    inner: T,
    rendezvous: Option<Rendezvous>,
    /// One request served at a time, each taking this long (a local
    /// emulator's server time).
    serial: Option<(tokio::sync::Mutex<()>, Duration)>,
    script: Mutex<VecDeque<Fault>>,
    injected: AtomicU64,
    calls: AtomicU64,
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
    pages_in_flight: AtomicU64,
    max_pages_in_flight: AtomicU64,
}

#[derive(Debug, thiserror::Error)]
#[error("injected fault: {0}")]
struct Injected(&'static str);

fn generic(msg: &'static str) -> object_store::Error {
    object_store::Error::Generic {
        store: "FaultStore",
        source: Box::new(Injected(msg)),
    }
}

impl<T: ObjectStore> FaultStore<T> {
    /// Wraps `inner` with an empty script.
    pub fn new(inner: T) -> Self {
        Self {
            inner,
            rendezvous: None,
            serial: None,
            script: Mutex::new(VecDeque::new()),
            injected: AtomicU64::new(0),
            calls: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
            max_in_flight: AtomicU64::new(0),
            pages_in_flight: AtomicU64::new(0),
            max_pages_in_flight: AtomicU64::new(0),
        }
    }

    /// Appends faults to the script.
    pub fn with_faults(self, faults: impl IntoIterator<Item = Fault>) -> Self {
        self.push_faults(faults);
        self
    }

    /// Appends faults to the script of a shared store.
    pub fn push_faults(&self, faults: impl IntoIterator<Item = Fault>) {
        if let Ok(mut s) = self.script.lock() {
            s.extend(faults);
        }
    }

    /// Faults injected so far.
    pub fn injected(&self) -> u64 {
        self.injected.load(Ordering::Relaxed)
    }

    /// `get_opts` calls seen so far.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// Most `get_opts` calls seen running at the same time (until the
    /// response headers are returned).
    pub fn max_in_flight(&self) -> u64 {
        self.max_in_flight.load(Ordering::Relaxed)
    }

    /// As [`Self::max_in_flight`], of the reads tagged
    /// [`ObjectClass::PageData`] alone.
    pub fn max_pages_in_flight(&self) -> u64 {
        self.max_pages_in_flight.load(Ordering::Relaxed)
    }

    async fn inject(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        match self.next_fault() {
            None => self.inner.get_opts(location, options).await,
            Some(Fault::ConnectionReset) => Err(generic("connection reset by peer")),
            Some(Fault::ServiceUnavailable) => {
                Err(generic("HTTP 503 Service Unavailable: SlowDown"))
            }
            Some(Fault::Slow(d)) => {
                tokio::time::sleep(d).await;
                self.inner.get_opts(location, options).await
            }
            Some(Fault::TruncatedBody { keep }) => {
                let (mut r, body) = body_of(self.inner.get_opts(location, options).await?).await?;
                let cut = body.slice(..(keep as usize).min(body.len()));
                r.payload =
                    GetResultPayload::Stream(futures::stream::once(async move { Ok(cut) }).boxed());
                Ok(r)
            }
            Some(Fault::ResetMidBody { keep }) => {
                let (mut r, body) = body_of(self.inner.get_opts(location, options).await?).await?;
                let cut = body.slice(..(keep as usize).min(body.len()));
                let items = vec![Ok(cut), Err(generic("connection reset mid-body"))];
                r.payload = GetResultPayload::Stream(futures::stream::iter(items).boxed());
                Ok(r)
            }
        }
    }

    fn next_fault(&self) -> Option<Fault> {
        let f = self.script.lock().ok()?.pop_front()?;
        self.injected.fetch_add(1, Ordering::Relaxed);
        Some(f)
    }
}

/// Page-data GETs of distinct objects (or distinct ranges) that must all
/// be waiting at once.
struct Rendezvous {
    parties: usize,
    timeout: Duration,
    /// Whether distinct ranges of one object count as parties.
    by_range: bool,
    /// Parties arrived, and whether all met.
    state: Mutex<(HashSet<String>, bool)>,
    met: Condvar,
}

impl Rendezvous {
    /// Blocks the calling thread until `parties` distinct objects (or
    /// ranges) have arrived or the timeout passes.
    fn arrive(&self, location: &Path, range: Option<&object_store::GetRange>) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        let party = if self.by_range {
            format!("{location}@{range:?}")
        } else {
            location.to_string()
        };
        if state.1 || !state.0.insert(party) {
            return;
        }
        if state.0.len() >= self.parties {
            state.1 = true;
            self.met.notify_all();
            return;
        }
        let _ = self.met.wait_timeout_while(state, self.timeout, |s| !s.1);
    }
}

impl<T: ObjectStore> FaultStore<T> {
    /// Makes the first page-data GETs of `parties` distinct objects meet:
    /// each blocks its **thread** until all have arrived (or `timeout`
    /// passes). They can only meet if `parties` threads issue them at once,
    /// so [`FaultStore::rendezvous_met`] tells a test that files were read
    /// and decoded in parallel, not interleaved on one thread.
    pub fn with_page_rendezvous(mut self, parties: usize, timeout: Duration) -> Self {
        self.rendezvous = Some(Rendezvous {
            parties,
            timeout,
            by_range: false,
            state: Mutex::new((HashSet::new(), false)),
            met: Condvar::new(),
        });
        self
    }

    /// As [`FaultStore::with_page_rendezvous`], but the parties are
    /// distinct byte ranges, of one object or several: parts of one file
    /// read on different threads meet.
    pub fn with_page_range_rendezvous(self, parties: usize, timeout: Duration) -> Self {
        let mut s = self.with_page_rendezvous(parties, timeout);
        if let Some(r) = &mut s.rendezvous {
            r.by_range = true;
        }
        s
    }

    /// Serves one GET at a time, each after `per_request` of server time,
    /// as a single-threaded emulator does: requests in flight queue.
    pub fn with_serial_service(mut self, per_request: Duration) -> Self {
        self.serial = Some((tokio::sync::Mutex::new(()), per_request));
        self
    }

    /// Whether the page rendezvous happened.
    pub fn rendezvous_met(&self) -> bool {
        self.rendezvous
            .as_ref()
            .and_then(|r| r.state.lock().ok().map(|s| s.1))
            .unwrap_or(false)
    }
}

impl<T: ObjectStore> fmt::Debug for FaultStore<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FaultStore({})", self.inner)
    }
}

async fn body_of(r: GetResult) -> object_store::Result<(GetResult, Bytes)> {
    let meta = r.meta.clone();
    let range = r.range.clone();
    let attributes = r.attributes.clone();
    let bytes = r.bytes().await?;
    let empty = GetResult {
        payload: GetResultPayload::Stream(futures::stream::empty().boxed()),
        meta,
        range,
        attributes,
    };
    Ok((empty, bytes))
}

impl<T: ObjectStore> FaultStore<T> {
    /// `get_opts`: counts calls and in-flight requests around the scripted fault.
    async fn get_counting(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        if let Some(r) = &self.rendezvous
            && options.extensions.get::<ObjectClass>() == Some(&ObjectClass::PageData)
        {
            r.arrive(location, options.range.as_ref());
        }
        let now = self.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        self.max_in_flight.fetch_max(now, Ordering::Relaxed);
        let page = options.extensions.get::<ObjectClass>() == Some(&ObjectClass::PageData);
        if page {
            let now = self.pages_in_flight.fetch_add(1, Ordering::Relaxed) + 1;
            self.max_pages_in_flight.fetch_max(now, Ordering::Relaxed);
        }
        let result = match &self.serial {
            Some((turn, per_request)) => {
                let _turn = turn.lock().await;
                tokio::time::sleep(*per_request).await;
                match self.inject(location, options).await {
                    // The body is sent within the turn.
                    Ok(r) => body_of(r).await.map(|(mut empty, bytes)| {
                        empty.payload = GetResultPayload::Stream(
                            futures::stream::once(async { Ok(bytes) }).boxed(),
                        );
                        empty
                    }),
                    Err(e) => Err(e),
                }
            }
            None => self.inject(location, options).await,
        };
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
        if page {
            self.pages_in_flight.fetch_sub(1, Ordering::Relaxed);
        }
        result
    }
}

wrapper_store!(FaultStore, get = get_counting);
