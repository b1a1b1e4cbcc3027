//! The one retry policy of dar's reads.
//!
//! Retrying happens in exactly one place: object_store's HTTP client, which
//! [`RetryPolicy`] configures once per store (backoff with decorrelated
//! jitter, a cap on attempts and on total time, a connect timeout). That
//! client retries only what is transient: a connection refused, reset or
//! timed out, a 5xx, a 429, a body cut short mid-stream (resumed from where
//! it stopped). A 4xx, a local file error or a body that decodes wrongly is
//! never retried, and no dar layer retries on top (which once turned a
//! refused endpoint into 40 attempts over 17 s).
//!
//! Local and in-memory stores are not retried at all: their errors are
//! deterministic.

use std::time::Duration;

/// How often and how patiently remote requests are retried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in total (at least 1).
    pub max_attempts: u32,
    /// Wait before the second attempt; later waits are drawn at random
    /// between this and twice the previous wait (decorrelated jitter).
    pub initial_backoff: Duration,
    /// Longest wait between attempts.
    pub max_backoff: Duration,
    /// No new attempt starts this long after the first one.
    pub retry_timeout: Duration,
    /// Time allowed to open a connection (an unreachable endpoint fails
    /// after this, per attempt).
    pub connect_timeout: Duration,
}

impl Default for RetryPolicy {
    /// 4 attempts, 100 ms to 2 s apart, none started after 15 s; 2 s to
    /// connect. A refused endpoint fails in well under a second.
    fn default() -> Self {
        Self {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            retry_timeout: Duration::from_secs(15),
            connect_timeout: Duration::from_secs(2),
        }
    }
}

impl RetryPolicy {
    /// Sets the number of attempts (at least 1).
    pub fn with_max_attempts(mut self, n: u32) -> Self {
        self.max_attempts = n.max(1);
        self
    }

    /// Sets the first backoff.
    pub fn with_initial_backoff(mut self, d: Duration) -> Self {
        self.initial_backoff = d;
        self
    }

    /// Sets the longest backoff.
    pub fn with_max_backoff(mut self, d: Duration) -> Self {
        self.max_backoff = d;
        self
    }

    /// Sets the time after which no new attempt starts.
    pub fn with_retry_timeout(mut self, d: Duration) -> Self {
        self.retry_timeout = d;
        self
    }

    /// Sets the connect timeout.
    pub fn with_connect_timeout(mut self, d: Duration) -> Self {
        self.connect_timeout = d;
        self
    }

    /// The policy as object_store's HTTP retry configuration.
    #[cfg(any(feature = "aws", feature = "azure", feature = "gcp"))]
    pub fn http_config(&self) -> object_store::RetryConfig {
        object_store::RetryConfig {
            backoff: object_store::BackoffConfig {
                init_backoff: self.initial_backoff,
                max_backoff: self.max_backoff,
                base: 2.0,
            },
            max_retries: self.max_attempts.max(1) as usize - 1,
            retry_timeout: self.retry_timeout,
        }
    }

    /// The connect timeout in object_store's option syntax (`"2000ms"`).
    #[cfg(any(feature = "aws", feature = "azure", feature = "gcp"))]
    pub(crate) fn connect_timeout_option(&self) -> String {
        format!("{}ms", self.connect_timeout.as_millis().max(1))
    }
}
