//! A length check on every body: a response whose body is shorter or
//! longer than the range the server said it sent is an error naming the
//! object ([`Error::Truncated`]), never data.
//!
//! It retries nothing (see [`crate::RetryPolicy`]): object_store's client
//! has already retried a body cut short by the network, so a wrong length
//! that reaches this layer is what the server sends. Bodies are collected
//! in memory to be checked, which is what every caller in dar does anyway.

use std::fmt;

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{GetOptions, GetResult, GetResultPayload, ObjectStore};

use crate::error::Error;
use crate::wrapper::wrapper_store;

/// An [`ObjectStore`] that checks the length of every body it returns.
pub struct CheckedStore<T> {
    inner: T,
}

impl<T: ObjectStore> CheckedStore<T> {
    /// Wraps `inner`.
    pub fn new(inner: T) -> Self {
        Self { inner }
    }

    /// `get_opts` with the body collected and its length checked.
    async fn get_checked(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let head = options.head;
        let result = self.inner.get_opts(location, options).await?;
        if head {
            return Ok(result);
        }
        let GetResult {
            payload,
            meta,
            range,
            attributes,
        } = result;
        let expected = range.end - range.start;
        let stream = match payload {
            GetResultPayload::Stream(s) => s,
            // Local files are read with read_exact by object_store itself.
            #[allow(unreachable_patterns, reason = "File exists only with the fs feature")]
            other => {
                return Ok(GetResult {
                    payload: other,
                    meta,
                    range,
                    attributes,
                });
            }
        };
        let body = collect(stream, expected).await?;
        if body.len() as u64 != expected {
            return Err(Error::Truncated {
                path: location.to_string(),
                range,
                expected,
                actual: body.len() as u64,
            }
            .into_object_store());
        }
        Ok(GetResult {
            payload: GetResultPayload::Stream(
                futures::stream::once(async move { Ok(body) }).boxed(),
            ),
            meta,
            range,
            attributes,
        })
    }
}

/// Collects a body, stopping early once it is longer than expected.
async fn collect(
    mut stream: BoxStream<'static, object_store::Result<Bytes>>,
    expected: u64,
) -> object_store::Result<Bytes> {
    let mut chunks: Vec<Bytes> = Vec::new();
    let mut len = 0u64;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        len += chunk.len() as u64;
        chunks.push(chunk);
        if len > expected {
            break;
        }
    }
    Ok(match chunks.len() {
        0 => Bytes::new(),
        1 => chunks.swap_remove(0),
        _ => {
            let mut v = Vec::with_capacity(len as usize);
            for c in chunks {
                v.extend_from_slice(&c);
            }
            Bytes::from(v)
        }
    })
}

impl<T: ObjectStore> fmt::Debug for CheckedStore<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Display, not Debug, of the inner store: Debug of a cloud client may
        // show credential ids.
        f.debug_struct("CheckedStore")
            .field("inner", &format_args!("{}", self.inner))
            .finish()
    }
}

wrapper_store!(CheckedStore, get = get_checked);
