//! A reverse proxy between the readers and the S3 server. It delays every
//! request by the link's latency (per request, on kept-alive
//! connections), streams every response body through one token bucket
//! shared by all connections (the link's bandwidth), and counts requests
//! and response bytes by object kind.
//!
//! `tc netem` is absent on these machines; a userspace proxy applies the
//! same emulation to every reader alike.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http_body_util::{BodyExt, BodyStream, StreamBody, combinators::UnsyncBoxBody};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde::Serialize;
use tokio::sync::Mutex;
use tokio::time::Instant;

/// Latency and bandwidth of the emulated link.
#[derive(Debug, Clone, Copy)]
pub struct Link {
    /// Added before each request is forwarded.
    pub latency: Duration,
    /// Shared response bandwidth; `None` is unlimited.
    pub bytes_per_sec: Option<u64>,
}

/// What a request fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// `_delta_log` commits, `_last_checkpoint`, and every LIST.
    Log,
    /// Checkpoint parts and sidecars.
    Checkpoint,
    /// Deletion-vector files.
    Dv,
    /// Parquet data files (footers, page indexes, pages).
    Data,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 4] = [Kind::Log, Kind::Checkpoint, Kind::Data, Kind::Dv];

    fn of(path: &str, query: Option<&str>) -> Kind {
        // GCS's JSON API names the object in one escaped path segment.
        let decoded = percent_decode(path);
        let path = decoded.as_str();
        let listing = query.is_some_and(|q| q.contains("list-type") || q.contains("prefix="));
        if listing {
            Kind::Log
        } else if path.contains(".checkpoint.") || path.contains("/_sidecars/") {
            Kind::Checkpoint
        } else if path.contains("/_delta_log/") {
            Kind::Log
        } else if path.contains("deletion_vector_") {
            Kind::Dv
        } else {
            Kind::Data
        }
    }
}

/// `path` with its `%XX` escapes decoded (left as they are where invalid).
fn percent_decode(path: &str) -> String {
    percent_encoding::percent_decode_str(path)
        .decode_utf8_lossy()
        .into_owned()
}

/// Requests and response bytes per [`Kind`].
#[derive(Debug, Default)]
pub struct Counters {
    requests: [AtomicU64; 4],
    bytes: [AtomicU64; 4],
}

/// A copy of the counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CounterSnapshot {
    /// Requests by kind (indexed like [`Kind::ALL`]).
    pub requests: [u64; 4],
    /// Response body bytes by kind.
    pub bytes: [u64; 4],
}

impl CounterSnapshot {
    /// `self - earlier`.
    pub fn since(&self, earlier: &CounterSnapshot) -> CounterSnapshot {
        let mut d = *self;
        for i in 0..4 {
            d.requests[i] -= earlier.requests[i];
            d.bytes[i] -= earlier.bytes[i];
        }
        d
    }
}

impl Kind {
    /// Its slot in the counters (its position in [`Kind::ALL`]).
    pub fn index(self) -> usize {
        match self {
            Kind::Log => 0,
            Kind::Checkpoint => 1,
            Kind::Data => 2,
            Kind::Dv => 3,
        }
    }
}

impl Counters {
    /// The current values.
    pub fn snapshot(&self) -> CounterSnapshot {
        let mut s = CounterSnapshot::default();
        for i in 0..4 {
            s.requests[i] = self.requests[i].load(Ordering::Relaxed);
            s.bytes[i] = self.bytes[i].load(Ordering::Relaxed);
        }
        s
    }
}

struct State {
    upstream: String,
    /// The `Host` sent upstream, when not the client's (the proxy's).
    host: Option<hyper::header::HeaderValue>,
    link: Link,
    counters: Arc<Counters>,
    /// When the shared link is next free.
    link_free_at: Mutex<Instant>,
    client: Client<HttpConnector, Incoming>,
}

/// A running proxy; stops on drop.
pub struct Proxy {
    endpoint: String,
    counters: Arc<Counters>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    /// Starts a proxy on a free port of 127.0.0.1 forwarding to `upstream`
    /// (`http://127.0.0.1:PORT`). With `upstream_host` the upstream gets
    /// its own `Host` header (fake-gcs-server routes by it); else the
    /// client's (S3 clients sign the proxy's).
    pub async fn start(upstream: &str, link: Link, upstream_host: bool) -> Result<Proxy, String> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| format!("proxy: {e}"))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let counters = Arc::new(Counters::default());
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let host = match upstream_host {
            false => None,
            true => {
                let authority = upstream
                    .split_once("://")
                    .map_or(upstream, |(_, rest)| rest)
                    .trim_end_matches('/');
                Some(
                    hyper::header::HeaderValue::from_str(authority)
                        .map_err(|e| format!("proxy: upstream {upstream}: {e}"))?,
                )
            }
        };
        let state = Arc::new(State {
            upstream: upstream.trim_end_matches('/').to_string(),
            host,
            link,
            counters: Arc::clone(&counters),
            link_free_at: Mutex::new(Instant::now()),
            client: Client::builder(TokioExecutor::new())
                .pool_idle_timeout(Duration::from_secs(30))
                .build(connector),
        });
        let task = tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    continue;
                };
                let _ = socket.set_nodelay(true);
                let state = Arc::clone(&state);
                tokio::spawn(async move {
                    let service =
                        hyper::service::service_fn(move |req| forward(Arc::clone(&state), req));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(socket), service)
                        .await;
                });
            }
        });
        Ok(Proxy {
            endpoint: format!("http://{addr}"),
            counters,
            task,
        })
    }

    /// `http://127.0.0.1:PORT` of the proxy.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Its counters.
    pub fn counters(&self) -> &Arc<Counters> {
        &self.counters
    }
}

type ProxyBody = UnsyncBoxBody<Bytes, hyper::Error>;

async fn forward(
    state: Arc<State>,
    req: Request<Incoming>,
) -> Result<Response<ProxyBody>, hyper::Error> {
    tokio::time::sleep(state.link.latency).await;
    let kind = Kind::of(req.uri().path(), req.uri().query());
    state.counters.requests[kind.index()].fetch_add(1, Ordering::Relaxed);
    let (mut parts, body) = req.into_parts();
    let target = format!(
        "{}{}",
        state.upstream,
        parts
            .uri
            .path_and_query()
            .map(|p| p.as_str())
            .unwrap_or("/")
    );
    parts.uri = match target.parse() {
        Ok(u) => u,
        Err(_) => return Ok(error_response("bad request URI")),
    };
    // The Host header stays the proxy's (the client signed it, SigV4)
    // unless the upstream routes by its own.
    if let Some(host) = &state.host {
        parts.headers.insert(hyper::header::HOST, host.clone());
    }
    let upstream = match state.client.request(Request::from_parts(parts, body)).await {
        Ok(r) => r,
        Err(e) => return Ok(error_response(&format!("upstream: {e}"))),
    };
    let (parts, body) = upstream.into_parts();
    let st = Arc::clone(&state);
    let frames = BodyStream::new(body).then(move |frame| {
        let st = Arc::clone(&st);
        async move {
            if let Ok(f) = &frame
                && let Some(data) = f.data_ref()
            {
                st.counters.bytes[kind.index()].fetch_add(data.len() as u64, Ordering::Relaxed);
                throttle(&st, data.len()).await;
            }
            frame
        }
    });
    Ok(Response::from_parts(
        parts,
        StreamBody::new(frames).boxed_unsync(),
    ))
}

/// Waits until `n` bytes have crossed the shared link.
async fn throttle(state: &State, n: usize) {
    let Some(rate) = state.link.bytes_per_sec else {
        return;
    };
    let done_at = {
        let mut free = state.link_free_at.lock().await;
        let start = (*free).max(Instant::now());
        *free = start + Duration::from_secs_f64(n as f64 / rate as f64);
        *free
    };
    tokio::time::sleep_until(done_at).await;
}

fn error_response(msg: &str) -> Response<ProxyBody> {
    let body = http_body_util::Full::new(Bytes::from(msg.to_string()))
        .map_err(|never| match never {})
        .boxed_unsync();
    let mut r = Response::new(body);
    *r.status_mut() = http::StatusCode::BAD_GATEWAY;
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Requests are counted by the object they fetch, whichever store's
    /// URL shape names it: S3 and Azure paths, and GCS's JSON API with the
    /// object name in one escaped segment.
    #[test]
    fn kinds_by_object_in_every_url_shape() {
        let cases = [
            (
                "/bench/t/_delta_log/00000000000000000001.json",
                None,
                Kind::Log,
            ),
            ("/devstoreaccount1/bench/t/part-0.parquet", None, Kind::Data),
            (
                "/bench",
                Some("list-type=2&prefix=t%2F_delta_log%2F"),
                Kind::Log,
            ),
            (
                "/download/storage/v1/b/bench/o/t%2F_delta_log%2F00000000000000000001.json",
                Some("alt=media"),
                Kind::Log,
            ),
            (
                "/download/storage/v1/b/bench/o/t%2Fdeletion_vector_1.bin",
                Some("alt=media"),
                Kind::Dv,
            ),
            (
                "/storage/v1/b/bench/o/t%2F_delta_log%2F00000000000000000010.checkpoint.parquet",
                None,
                Kind::Checkpoint,
            ),
            (
                "/download/storage/v1/b/bench/o/t%2Fpart-0.parquet",
                None,
                Kind::Data,
            ),
        ];
        for (path, query, kind) in cases {
            assert_eq!(Kind::of(path, query), kind, "{path}");
        }
        assert_eq!(percent_decode("a%2Fb%zz%4"), "a/b%zz%4");
    }
}
