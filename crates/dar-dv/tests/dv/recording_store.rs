//! A store wrapper that records every read (path and byte range) and can
//! delay reads, so tests can assert the I/O pattern and exercise races.

#![allow(clippy::unwrap_used, clippy::panic, reason = "test helper")]

use std::fmt;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetRange, GetResult, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions, Result,
};

/// One recorded read: the path and the requested range (`None` = whole object).
pub type Request = (String, Option<Range<u64>>);

/// Wraps a store; records each `get_opts` call.
#[derive(Debug)]
pub struct RecordingStore {
    inner: Arc<dyn ObjectStore>,
    requests: Mutex<Vec<Request>>,
    delay: Mutex<Duration>,
}

impl RecordingStore {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn ObjectStore>) -> Self {
        Self {
            inner,
            requests: Mutex::default(),
            delay: Mutex::default(),
        }
    }

    /// The reads so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    /// Makes every later read wait `delay` first.
    pub fn set_delay(&self, delay: Duration) {
        *self.delay.lock().unwrap() = delay;
    }
}

impl fmt::Display for RecordingStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RecordingStore({})", self.inner)
    }
}

#[async_trait]
impl ObjectStore for RecordingStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        let range = match &options.range {
            None => None,
            Some(GetRange::Bounded(r)) => Some(r.clone()),
            Some(other) => panic!("unexpected range kind {other:?}"),
        };
        self.requests
            .lock()
            .unwrap()
            .push((location.to_string(), range));
        let delay = *self.delay.lock().unwrap();
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        self.inner.get_opts(location, options).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> Result<()> {
        self.inner.rename_opts(from, to, options).await
    }
}
