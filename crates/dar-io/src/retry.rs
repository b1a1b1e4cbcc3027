//! Retries for reads, and a length check on every body.
//!
//! object_store's HTTP backends already retry failed HTTP requests (see
//! [`object_store::RetryConfig`], set through
//! [`crate::TableStoreBuilder::with_http_retry`]). This layer sits above any
//! backend and adds what the HTTP client cannot know:
//!
//! - a body whose length differs from the range the server said it sent is
//!   a fault ([`Error::Truncated`]), retried, and never returned as data;
//! - an error in the middle of a body is retried like an error before it;
//! - an optional per-attempt timeout turns a stalled response into a retry;
//! - a fault that outlives every attempt surfaces as
//!   [`Error::RetriesExhausted`] naming the object.
//!
//! Errors that retrying cannot fix (not found, permission, precondition,
//! invalid path, not supported) pass through at once. Bodies are collected in
//! memory to be checked, which is what every caller in dar does anyway.

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{GetOptions, GetResult, GetResultPayload, ObjectStore};

use crate::error::Error;
use crate::wrapper::wrapper_store;

/// How often and how patiently reads are retried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in total (at least 1).
    pub max_attempts: u32,
    /// Wait before the second attempt; doubled each time.
    pub initial_backoff: Duration,
    /// Longest wait between attempts.
    pub max_backoff: Duration,
    /// Time limit of one attempt including its body (`None`: no limit).
    pub attempt_timeout: Option<Duration>,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(50),
            max_backoff: Duration::from_secs(2),
            attempt_timeout: Some(Duration::from_secs(60)),
        }
    }
}

impl RetryPolicy {
    /// Sets the number of attempts (at least 1).
    pub fn with_max_attempts(mut self, n: u32) -> Self {
        self.max_attempts = n.max(1);
        self
    }

    /// Sets the first backoff (doubled per attempt, capped by `max_backoff`).
    pub fn with_initial_backoff(mut self, d: Duration) -> Self {
        self.initial_backoff = d;
        self
    }

    /// Sets the longest backoff.
    pub fn with_max_backoff(mut self, d: Duration) -> Self {
        self.max_backoff = d;
        self
    }

    /// Sets the per-attempt timeout.
    pub fn with_attempt_timeout(mut self, d: Option<Duration>) -> Self {
        self.attempt_timeout = d;
        self
    }

    fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u32
            .checked_shl(attempt.saturating_sub(1))
            .unwrap_or(u32::MAX);
        self.initial_backoff
            .checked_mul(factor)
            .unwrap_or(self.max_backoff)
            .min(self.max_backoff)
    }
}

/// Whether retrying may help.
fn is_transient(e: &object_store::Error) -> bool {
    matches!(
        e,
        object_store::Error::Generic { .. } | object_store::Error::JoinError { .. }
    )
}

/// An [`ObjectStore`] that retries reads and checks body lengths.
pub struct RetryStore<T> {
    inner: T,
    policy: RetryPolicy,
}

impl<T: ObjectStore> RetryStore<T> {
    /// Wraps `inner` with `policy`.
    pub fn new(inner: T, policy: RetryPolicy) -> Self {
        Self { inner, policy }
    }

    /// The policy.
    pub fn policy(&self) -> &RetryPolicy {
        &self.policy
    }

    /// One attempt: the request and, for streamed bodies, the whole body.
    async fn attempt(&self, location: &Path, options: GetOptions) -> Result<GetResult, Attempt> {
        let head = options.head;
        let result = self
            .inner
            .get_opts(location, options)
            .await
            .map_err(Attempt::Store)?;
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
        let body = collect(stream, expected).await.map_err(Attempt::Store)?;
        if body.len() as u64 != expected {
            return Err(Attempt::Truncated {
                expected,
                actual: body.len() as u64,
                range,
            });
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

enum Attempt {
    Store(object_store::Error),
    Truncated {
        expected: u64,
        actual: u64,
        range: std::ops::Range<u64>,
    },
    Timeout(Duration),
}

impl<T: ObjectStore> fmt::Debug for RetryStore<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Display, not Debug, of the inner store: Debug of a cloud client may
        // show credential ids.
        f.debug_struct("RetryStore")
            .field("inner", &format_args!("{}", self.inner))
            .field("policy", &self.policy)
            .finish()
    }
}

impl<T: ObjectStore> RetryStore<T> {
    /// `get_opts`: attempts with backoff and a timeout, checking body length.
    async fn get_with_retry(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let max = self.policy.max_attempts.max(1);
        let mut attempt = 1;
        loop {
            let fut = self.attempt(location, options.clone());
            let outcome = match self.policy.attempt_timeout {
                Some(t) => match tokio::time::timeout(t, fut).await {
                    Ok(r) => r,
                    Err(_) => Err(Attempt::Timeout(t)),
                },
                None => fut.await,
            };
            let err: Box<dyn std::error::Error + Send + Sync> = match outcome {
                Ok(r) => return Ok(r),
                Err(Attempt::Store(e)) if !is_transient(&e) => return Err(e),
                Err(Attempt::Store(e)) => Box::new(e),
                Err(Attempt::Truncated {
                    expected,
                    actual,
                    range,
                }) => Box::new(Error::Truncated {
                    path: location.to_string(),
                    range,
                    expected,
                    actual,
                }),
                Err(Attempt::Timeout(timeout)) => Box::new(Error::Timeout {
                    path: location.to_string(),
                    timeout,
                }),
            };
            if attempt >= max {
                return Err(Error::RetriesExhausted {
                    path: location.to_string(),
                    attempts: attempt,
                    source: err,
                }
                .into_object_store());
            }
            tokio::time::sleep(self.policy.backoff(attempt)).await;
            attempt += 1;
        }
    }
}

wrapper_store!(RetryStore, get = get_with_retry);
