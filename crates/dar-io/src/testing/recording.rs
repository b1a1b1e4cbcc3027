//! [`RecordingStore`]: records every read (path, range, class) and every
//! listing (prefix, offset), and can delay reads, so tests assert what was
//! read and listed, not only how often.

use std::fmt;
use std::ops::Range;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use object_store::path::Path;
use object_store::{GetOptions, GetRange, GetResult, ObjectStore};

use crate::ObjectClass;
use crate::wrapper::wrapper_store;

/// One recorded `get_opts` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedGet {
    /// The object path.
    pub path: String,
    /// The requested range (`None`: the whole object).
    pub range: Option<GetRange>,
    /// Whether it was a HEAD.
    pub head: bool,
    /// The class a reader tagged the request with, if any.
    pub class: Option<ObjectClass>,
}

impl RecordedGet {
    /// The range, when it is a bounded one.
    pub fn bounded(&self) -> Option<Range<u64>> {
        match &self.range {
            Some(GetRange::Bounded(r)) => Some(r.clone()),
            _ => None,
        }
    }

    /// The file name (the last path segment).
    pub fn file_name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

/// One recorded listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedList {
    /// The prefix listed.
    pub prefix: Option<String>,
    /// The offset of `list_with_offset` (keys after it), `None` for a
    /// listing from the first key.
    pub offset: Option<String>,
}

/// A store wrapper that records each `get_opts` call (GETs and HEADs) and
/// each listing in order, and can make later reads wait first.
pub struct RecordingStore<T> {
    inner: T,
    gets: Mutex<Vec<RecordedGet>>,
    lists: Mutex<Vec<RecordedList>>,
    delay: Mutex<Duration>,
}

impl<T: ObjectStore> RecordingStore<T> {
    /// Wraps `inner`.
    pub fn new(inner: T) -> Self {
        Self {
            inner,
            gets: Mutex::default(),
            lists: Mutex::default(),
            delay: Mutex::default(),
        }
    }

    /// The reads so far, in order.
    pub fn gets(&self) -> Vec<RecordedGet> {
        self.gets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The paths of the reads (HEADs excluded) whose file name satisfies
    /// `keep`, in order.
    pub fn paths_read(&self, keep: impl Fn(&str) -> bool) -> Vec<String> {
        self.gets()
            .into_iter()
            .filter(|g| !g.head && keep(g.file_name()))
            .map(|g| g.path)
            .collect()
    }

    /// The listings so far, in order.
    pub fn lists(&self) -> Vec<RecordedList> {
        self.lists
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Forgets the reads and listings so far.
    pub fn clear(&self) {
        self.gets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        self.lists
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    fn record_list(&self, prefix: Option<&Path>, offset: Option<&Path>) {
        self.lists
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(RecordedList {
                prefix: prefix.map(Path::to_string),
                offset: offset.map(Path::to_string),
            });
    }

    /// Writes are passed on unrecorded.
    fn pass_write(&self) {}

    /// Makes every later read wait `delay` first.
    pub fn set_delay(&self, delay: Duration) {
        *self.delay.lock().unwrap_or_else(PoisonError::into_inner) = delay;
    }

    /// The wrapped store.
    pub fn inner(&self) -> &T {
        &self.inner
    }

    async fn get_recording(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        self.gets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(RecordedGet {
                path: location.to_string(),
                range: options.range.clone(),
                head: options.head,
                class: options.extensions.get::<ObjectClass>().copied(),
            });
        let delay = *self.delay.lock().unwrap_or_else(PoisonError::into_inner);
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        self.inner.get_opts(location, options).await
    }
}

impl<T: ObjectStore> fmt::Debug for RecordingStore<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RecordingStore({})", self.inner)
    }
}

wrapper_store!(
    RecordingStore,
    get = get_recording,
    writes = pass_write,
    lists = record_list
);
