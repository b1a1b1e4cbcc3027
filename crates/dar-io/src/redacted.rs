//! [`RedactedStore`]: the backend store, when its configuration holds text
//! that must never be printed — the user info or query of an endpoint URL
//! (`aws_endpoint`, `AWS_ENDPOINT_URL`, `aws_metadata_endpoint`, ...),
//! which object_store quotes in its request errors (`Error performing GET
//! http://user:pass@host/...`). Every error it returns, from every method,
//! has that text replaced by `<redacted>`; the error's kind (not found,
//! precondition, ...) is kept.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use futures::StreamExt;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions, Result,
};

use crate::options::REDACTED;

/// An error message with the secrets taken out.
#[derive(Debug)]
struct Scrubbed(String);

impl fmt::Display for Scrubbed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Scrubbed {}

/// Wraps a store; scrubs `secrets` from its errors.
#[derive(Debug)]
pub(crate) struct RedactedStore {
    inner: Arc<dyn ObjectStore>,
    secrets: Arc<[String]>,
}

impl RedactedStore {
    /// `inner`, its errors scrubbed of `secrets` (non-empty strings).
    pub(crate) fn new(inner: Arc<dyn ObjectStore>, secrets: Vec<String>) -> Self {
        Self {
            inner,
            secrets: secrets.into_iter().filter(|s| !s.is_empty()).collect(),
        }
    }
}

/// `e` with every secret in its message (and its causes') replaced.
fn scrub(secrets: &[String], e: object_store::Error) -> object_store::Error {
    use object_store::Error as E;
    let text = |source: &(dyn std::error::Error + 'static)| {
        let mut msg = source.to_string();
        let mut cause = source.source();
        while let Some(c) = cause {
            let t = c.to_string();
            if !msg.contains(&t) {
                msg.push_str(": ");
                msg.push_str(&t);
            }
            cause = c.source();
        }
        for s in secrets {
            msg = msg.replace(s.as_str(), REDACTED);
        }
        Box::new(Scrubbed(msg))
    };
    match e {
        E::NotFound { path, source } => E::NotFound {
            path,
            source: text(source.as_ref()),
        },
        E::AlreadyExists { path, source } => E::AlreadyExists {
            path,
            source: text(source.as_ref()),
        },
        E::Precondition { path, source } => E::Precondition {
            path,
            source: text(source.as_ref()),
        },
        E::NotModified { path, source } => E::NotModified {
            path,
            source: text(source.as_ref()),
        },
        E::PermissionDenied { path, source } => E::PermissionDenied {
            path,
            source: text(source.as_ref()),
        },
        E::Unauthenticated { path, source } => E::Unauthenticated {
            path,
            source: text(source.as_ref()),
        },
        E::NotSupported { source } => E::NotSupported {
            source: text(source.as_ref()),
        },
        E::Generic { store, source } => E::Generic {
            store,
            source: text(source.as_ref()),
        },
        other => E::Generic {
            store: "dar-io",
            source: text(&other),
        },
    }
}

impl RedactedStore {
    fn clean<T>(&self, r: Result<T>) -> Result<T> {
        r.map_err(|e| scrub(&self.secrets, e))
    }

    fn clean_stream<T: Send + 'static>(
        &self,
        s: BoxStream<'static, Result<T>>,
    ) -> BoxStream<'static, Result<T>> {
        let secrets = Arc::clone(&self.secrets);
        s.map(move |r| r.map_err(|e| scrub(&secrets, e))).boxed()
    }
}

impl fmt::Display for RedactedStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RedactedStore")
    }
}

#[async_trait]
impl ObjectStore for RedactedStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        self.clean(self.inner.put_opts(location, payload, opts).await)
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.clean(self.inner.put_multipart_opts(location, opts).await)
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        let mut got = self.clean(self.inner.get_opts(location, options).await)?;
        // A body that fails mid-stream carries the request's error too.
        if let object_store::GetResultPayload::Stream(s) = got.payload {
            got.payload = object_store::GetResultPayload::Stream(self.clean_stream(s));
        }
        Ok(got)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        self.clean_stream(self.inner.delete_stream(locations))
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.clean_stream(self.inner.list(prefix))
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, Result<ObjectMeta>> {
        self.clean_stream(self.inner.list_with_offset(prefix, offset))
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.clean(self.inner.list_with_delimiter(prefix).await)
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.clean(self.inner.copy_opts(from, to, options).await)
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> Result<()> {
        self.clean(self.inner.rename_opts(from, to, options).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_lose_the_secrets_and_keep_their_kind() {
        let secrets = vec!["user:pw".to_string(), "sig=tok".to_string()];
        let generic = object_store::Error::Generic {
            store: "S3",
            source: "Error performing GET http://user:pw@127.0.0.1:1/?sig=tok/b/k".into(),
        };
        let text = scrub(&secrets, generic).to_string();
        assert!(!text.contains("pw") && !text.contains("tok"), "{text}");
        assert!(
            text.contains("127.0.0.1:1") && text.contains(REDACTED),
            "{text}"
        );
        let missing = object_store::Error::NotFound {
            path: "b/k".into(),
            source: "GET http://user:pw@h/b/k: 404".into(),
        };
        let err = scrub(&secrets, missing);
        assert!(matches!(err, object_store::Error::NotFound { .. }), "{err}");
        assert!(!err.to_string().contains("pw"), "{err}");
    }
}
