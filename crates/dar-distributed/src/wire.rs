//! The calls to workers: one channel per worker URL, through which every
//! call of a coordinator (and of a worker to its peers) goes.
//!
//! datafusion-distributed makes its gRPC clients without a message limit;
//! this channel adds what a caller needs:
//!
//! * the token, as `authorization: Bearer <token>` on every call;
//! * TLS for `https://` workers (the private CA if given, else the
//!   system's roots);
//! * a bound on every gRPC message, sent or received. Each gRPC message
//!   is framed as
//!
//!   ```text
//!   +------------+----------------------+------------------+
//!   | compressed | length (u32, BE)     | message          |
//!   | 1 byte     | 4 bytes              | `length` bytes   |
//!   +------------+----------------------+------------------+
//!   ```
//!
//!   and [`FrameCheck`] reads the length of each as the body streams by,
//!   so a message declared larger than the limit fails the call before
//!   any of it is held (the worker's own server enforces the same limit
//!   with tonic's).

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use datafusion::common::{DataFusionError, Result};
use datafusion_distributed::grpc::{BoxCloneSyncChannel, create_worker_client};
use datafusion_distributed::{ChannelResolver, WorkerChannel};
use futures::future::BoxFuture;
use http::HeaderValue;
use http_body::{Frame, SizeHint};
use tokio::sync::OnceCell;
use tonic::Status;
use tonic::body::Body;
use tonic::transport::{Channel, Endpoint};
use url::Url;

use crate::auth::Token;
use crate::tls::{TlsCa, client_config};

/// The largest gRPC message a worker or a coordinator sends or accepts by
/// default: 256 MiB. A message is a plan (about 460 bytes per file of a
/// worker's share) or one record batch (a batch of DataFusion's 8192 rows
/// up to about 32 KiB a row).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 256 * 1024 * 1024;

/// How long connecting to a worker may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How a coordinator (or a worker, calling its peers) calls workers: the
/// token it sends, the CA it trusts for `https://` workers, and the largest
/// message it sends or accepts.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    pub(crate) token: Option<Token>,
    pub(crate) ca: Option<TlsCa>,
    pub(crate) max_message_bytes: usize,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            token: None,
            ca: None,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }
}

impl ClientOptions {
    /// No token, the system's roots for `https://` workers, messages up to
    /// [`DEFAULT_MAX_MESSAGE_BYTES`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Sends `token` on every call.
    pub fn with_token(mut self, token: Token) -> Self {
        self.token = Some(token);
        self
    }

    /// Trusts `ca` (and only it) for `https://` workers.
    pub fn with_tls_ca(mut self, ca: TlsCa) -> Self {
        self.ca = Some(ca);
        self
    }

    /// Sends and accepts gRPC messages of at most `bytes` bytes.
    pub fn with_max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }
}

/// The [`ChannelResolver`] of dar's sessions: one channel per worker URL,
/// made on first use and kept.
#[derive(Clone)]
pub(crate) struct WorkerChannels {
    options: Arc<ClientOptions>,
    channels: Arc<Mutex<HashMap<Url, Arc<OnceCell<WireChannel>>>>>,
}

impl WorkerChannels {
    pub(crate) fn new(options: ClientOptions) -> Self {
        Self {
            options: Arc::new(options),
            channels: Arc::default(),
        }
    }

    async fn channel(&self, url: &Url) -> Result<WireChannel> {
        let cell = {
            let mut channels = self.channels.lock().unwrap_or_else(PoisonError::into_inner);
            Arc::clone(channels.entry(url.clone()).or_default())
        };
        // A failed connection leaves the cell empty: the next call tries
        // again.
        cell.get_or_try_init(|| self.connect(url)).await.cloned()
    }

    async fn connect(&self, url: &Url) -> Result<WireChannel> {
        let worker = worker_name(url);
        let failed = |what: &str, e: &dyn std::error::Error| {
            DataFusionError::Execution(format!("{what} {worker}: {}", chain(e)))
        };
        let mut endpoint = Endpoint::from_shared(url.to_string())
            .map_err(|e| failed("invalid address of", &e))?
            .connect_timeout(CONNECT_TIMEOUT)
            .tcp_nodelay(true);
        match url.scheme() {
            "http" => {}
            "https" => {
                endpoint = endpoint
                    .tls_config(client_config(self.options.ca.as_ref()))
                    .map_err(|e| failed("cannot set up TLS for", &e))?;
            }
            other => {
                return Err(DataFusionError::Configuration(format!(
                    "{worker}: scheme '{other}' is neither http nor https"
                )));
            }
        }
        let channel = endpoint
            .connect()
            .await
            .map_err(|e| failed("cannot connect to", &e))?;
        Ok(WireChannel {
            inner: channel,
            authorization: self.options.token.as_ref().map(|t| t.header().clone()),
            limit: self.options.max_message_bytes,
            worker: Arc::from(worker),
            refused: Arc::default(),
        })
    }
}

#[async_trait]
impl ChannelResolver for WorkerChannels {
    async fn get_worker_client_for_url(&self, url: &Url) -> Result<Box<dyn WorkerChannel>> {
        let channel = self.channel(url).await?;
        Ok(create_worker_client(BoxCloneSyncChannel::new(channel)))
    }
}

/// `worker host:port`, as errors name a worker.
fn worker_name(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port_or_known_default() {
        Some(port) => format!("worker {host}:{port}"),
        None => format!("worker {host}"),
    }
}

/// An error and its causes on one line (a transport error alone says only
/// "transport error").
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let next = s.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = s.source();
    }
    text
}

/// A channel to one worker: tonic's, with the token on every call and the
/// message limit on both bodies.
#[derive(Clone)]
struct WireChannel {
    inner: Channel,
    authorization: Option<HeaderValue>,
    limit: usize,
    worker: Arc<str>,
    /// The last message refused on its way to this worker, until a call
    /// fails: datafusion-distributed reports a plan that never arrived
    /// only through the worker's later complaint that it waited for one,
    /// which this reason then replaces.
    refused: Arc<Mutex<Option<Status>>>,
}

/// Whether `headers` (or trailers) end a call with an error.
fn failed(headers: &http::HeaderMap) -> bool {
    headers
        .get("grpc-status")
        .is_some_and(|code| code.as_bytes() != b"0")
}

impl tower::Service<http::Request<Body>> for WireChannel {
    type Response = http::Response<Body>;
    type Error = tonic::transport::Error;
    type Future = BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        tower::Service::poll_ready(&mut self.inner, cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let (mut parts, body) = request.into_parts();
        if let Some(value) = &self.authorization {
            parts
                .headers
                .insert(http::header::AUTHORIZATION, value.clone());
        }
        let over = Arc::new(OnceLock::new());
        let limit = Limit {
            bytes: self.limit,
            worker: Arc::clone(&self.worker),
            over: Arc::clone(&over),
            refused: Arc::clone(&self.refused),
        };
        let request = http::Request::from_parts(
            parts,
            Body::new(Checked::new(body, limit.clone(), Direction::Send)),
        );
        // The clone that was made ready serves this call (tower's rule).
        let ready = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, ready);
        Box::pin(async move {
            let response = inner.call(request).await;
            // A request over the limit ends the call with that reason,
            // whatever the transport made of the cut-off body.
            if let Some(status) = over.get() {
                return Ok(status.clone().into_http());
            }
            match response {
                Ok(response) if failed(response.headers()) => Ok(match limit.take_refused() {
                    Some(status) => status.into_http(),
                    None => response.map(Body::new),
                }),
                Ok(response) => {
                    Ok(response
                        .map(|body| Body::new(Checked::new(body, limit, Direction::Receive))))
                }
                // A transport error alone does not say which worker it was
                // (nor, as "transport error", much else): the call ends
                // with a status that does.
                Err(e) => Ok(limit
                    .take_refused()
                    .unwrap_or_else(|| {
                        Status::unavailable(format!(
                            "call to {} failed: {}",
                            limit.worker,
                            chain(&e)
                        ))
                    })
                    .into_http()),
            }
        })
    }
}

/// Which way a body goes.
#[derive(Debug, Clone, Copy)]
enum Direction {
    Send,
    Receive,
}

/// The limit of one call, the first message over it (in either body), and
/// the channel's last refused message.
#[derive(Clone)]
struct Limit {
    bytes: usize,
    worker: Arc<str>,
    over: Arc<OnceLock<Status>>,
    refused: Arc<Mutex<Option<Status>>>,
}

impl Limit {
    fn exceeded(&self, direction: Direction, length: u64) -> Status {
        let what = match direction {
            Direction::Send => format!("a gRPC message of {length} bytes for {}", self.worker),
            Direction::Receive => format!("a gRPC message of {length} bytes from {}", self.worker),
        };
        let status = Status::out_of_range(format!(
            "{what} is over the limit of {} bytes (the largest message dar sends or accepts)",
            self.bytes
        ));
        let status = self.over.get_or_init(|| status).clone();
        if matches!(direction, Direction::Send) {
            *self.refused.lock().unwrap_or_else(PoisonError::into_inner) = Some(status.clone());
        }
        status
    }

    /// The reason a message to this worker was refused, once.
    fn take_refused(&self) -> Option<Status> {
        self.refused
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

/// Reads the length prefix of each gRPC message in a byte stream cut
/// anywhere (see the module docs).
#[derive(Debug, Default)]
struct FrameCheck {
    /// The prefix read so far.
    prefix: [u8; 5],
    filled: usize,
    /// Bytes of the current message still to come.
    remaining: u64,
}

impl FrameCheck {
    /// Follows `data`; the declared length of the first message over
    /// `limit`, if any.
    fn feed(&mut self, mut data: &[u8], limit: usize) -> Result<(), u64> {
        while !data.is_empty() {
            if self.remaining > 0 {
                let n = usize::try_from(self.remaining)
                    .unwrap_or(usize::MAX)
                    .min(data.len());
                data = &data[n..];
                self.remaining -= n as u64;
                continue;
            }
            let n = (self.prefix.len() - self.filled).min(data.len());
            self.prefix[self.filled..self.filled + n].copy_from_slice(&data[..n]);
            self.filled += n;
            data = &data[n..];
            if self.filled == self.prefix.len() {
                self.filled = 0;
                let length = u64::from(u32::from_be_bytes([
                    self.prefix[1],
                    self.prefix[2],
                    self.prefix[3],
                    self.prefix[4],
                ]));
                if length > limit as u64 {
                    return Err(length);
                }
                self.remaining = length;
            }
        }
        Ok(())
    }
}

/// A body whose messages are checked against the call's [`Limit`].
struct Checked {
    inner: Body,
    limit: Limit,
    direction: Direction,
    frames: FrameCheck,
}

impl Checked {
    fn new(inner: Body, limit: Limit, direction: Direction) -> Self {
        Self {
            inner,
            limit,
            direction,
            frames: FrameCheck::default(),
        }
    }
}

impl http_body::Body for Checked {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        let this = self.get_mut();
        // A call whose request went over the limit fails its response too.
        if let Some(status) = this.limit.over.get() {
            return Poll::Ready(Some(Err(status.clone())));
        }
        let receiving = matches!(this.direction, Direction::Receive);
        let frame = match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
            Some(Ok(frame)) => frame,
            Some(Err(status)) => {
                if receiving && let Some(refused) = this.limit.take_refused() {
                    return Poll::Ready(Some(Err(refused)));
                }
                // A broken stream names the worker it was with.
                if status.message().contains(&*this.limit.worker) {
                    return Poll::Ready(Some(Err(status)));
                }
                let message = format!("{}: {}", this.limit.worker, status.message());
                return Poll::Ready(Some(Err(Status::new(status.code(), message))));
            }
            None => return Poll::Ready(None),
        };
        if let Some(data) = frame.data_ref()
            && let Err(length) = this.frames.feed(data, this.limit.bytes)
        {
            return Poll::Ready(Some(Err(this.limit.exceeded(this.direction, length))));
        }
        if receiving
            && frame.trailers_ref().is_some_and(failed)
            && let Some(refused) = this.limit.take_refused()
        {
            return Poll::Ready(Some(Err(refused)));
        }
        Poll::Ready(Some(Ok(frame)))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(len: u32) -> Vec<u8> {
        let mut m = vec![0];
        m.extend_from_slice(&len.to_be_bytes());
        m.extend(std::iter::repeat_n(7, len as usize));
        m
    }

    #[test]
    fn message_lengths_are_read_however_the_stream_is_cut() {
        let mut stream = message(10);
        stream.extend(message(0));
        stream.extend(message(100));
        stream.extend(message(30));
        for cut in 1..stream.len() {
            let mut check = FrameCheck::default();
            let result = stream
                .chunks(cut)
                .try_for_each(|chunk| check.feed(chunk, 100));
            assert_eq!(result, Ok(()), "chunks of {cut}");
            let mut check = FrameCheck::default();
            let result = stream
                .chunks(cut)
                .try_for_each(|chunk| check.feed(chunk, 99));
            assert_eq!(result, Err(100), "chunks of {cut}");
        }
        // A declared 4 GiB message is refused from its prefix alone.
        let mut check = FrameCheck::default();
        assert_eq!(
            check.feed(&[0, 0xff, 0xff, 0xff, 0xff], DEFAULT_MAX_MESSAGE_BYTES),
            Err(u64::from(u32::MAX))
        );
    }

    #[test]
    fn errors_name_the_worker_and_the_cause() {
        let url = Url::parse("https://w1:7000").unwrap();
        assert_eq!(worker_name(&url), "worker w1:7000");
        let io = std::io::Error::other("connection refused");
        let outer = DataFusionError::External(Box::new(io));
        assert!(chain(&outer).contains("connection refused"));
    }
}
