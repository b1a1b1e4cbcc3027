//! A dar worker: a datafusion-distributed worker that knows dar's codec,
//! served over gRPC (Arrow Flight) on a TCP listener.
//!
//! What a worker trusts, and what it checks on every call:
//!
//! 1. the token ([`WorkerOptions::with_token`]): a call without it is
//!    refused before its body is read. A worker listening beyond loopback
//!    refuses to start without one ([`Error::TokenRequired`]);
//! 2. the message limit: no gRPC message larger than
//!    [`WorkerOptions::with_max_message_bytes`] is read or sent;
//! 3. the plan: only plans whose storage access is dar's Delta scan run
//!    ([`crate::check_plan`]).
//!
//! With [`WorkerOptions::with_tls`] the worker speaks only TLS. It calls its
//! peers (the workers of earlier stages) with the same token, the CA of
//! [`WorkerOptions::with_tls_ca`] and the same limit.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use dar_io::StorageOptions;
use datafusion_distributed::{DistributedExt, Worker, WorkerQueryContext};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Server;
use tonic::transport::server::{Router, TcpIncoming};

use futures::TryStreamExt;

use crate::allow::AllowList;
use crate::auth::{CheckToken, Token};
use crate::codec::DeltaScanCodec;
use crate::error::Error;
use crate::linger::LingeringStream;
use crate::stores::WorkerStores;
use crate::tls::{ServerTls, TlsCa};
use crate::wire::{ClientOptions, DEFAULT_MAX_MESSAGE_BYTES, WorkerChannels};

/// How a worker serves: the storage options it reads tables with, the
/// token callers must present, its TLS identity, the CA it trusts for its
/// `https://` peers, and the largest gRPC message it reads or sends.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    storage: StorageOptions,
    data_cache: Option<dar_io::RangeCache>,
    token: Option<Token>,
    tls: Option<ServerTls>,
    ca: Option<TlsCa>,
    max_message_bytes: usize,
}

impl WorkerOptions {
    /// Tables opened with `storage` (and the environment's usual
    /// variables); no token (loopback only), no TLS, messages up to
    /// [`DEFAULT_MAX_MESSAGE_BYTES`].
    pub fn new(storage: StorageOptions) -> Self {
        Self {
            storage,
            data_cache: None,
            token: None,
            tls: None,
            ca: None,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }

    /// Reads every table through `cache` (see
    /// [`WorkerStores::with_data_cache`]; default: a memory cache for tables
    /// on object storage).
    pub fn with_data_cache(mut self, cache: dar_io::RangeCache) -> Self {
        self.data_cache = Some(cache);
        self
    }

    /// Requires `token` on every call (and sends it to peers).
    pub fn with_token(mut self, token: Token) -> Self {
        self.token = Some(token);
        self
    }

    /// Serves TLS only, with this certificate and key.
    pub fn with_tls(mut self, tls: ServerTls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Trusts `ca` (and only it) for `https://` peers.
    pub fn with_tls_ca(mut self, ca: TlsCa) -> Self {
        self.ca = Some(ca);
        self
    }

    /// Reads and sends gRPC messages of at most `bytes` bytes.
    pub fn with_max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }

    /// How this worker calls its peers.
    fn peers(&self) -> ClientOptions {
        let mut client = ClientOptions::new().with_max_message_bytes(self.max_message_bytes);
        if let Some(token) = &self.token {
            client = client.with_token(token.clone());
        }
        if let Some(ca) = &self.ca {
            client = client.with_tls_ca(ca.clone());
        }
        client
    }
}

/// Whether a worker on `address` needs a token: beyond loopback (any
/// address that is not 127.0.0.0/8 or ::1, the unspecified 0.0.0.0 and ::
/// included), anyone who reaches the port could otherwise run plans.
pub fn needs_token(address: SocketAddr) -> bool {
    !address.ip().to_canonical().is_loopback()
}

/// The datafusion-distributed worker for `stores`: every query's session
/// gets dar's codec, the plan allow-list and dar's channels to peers.
fn worker(stores: Arc<WorkerStores>, peers: ClientOptions) -> Worker {
    let name: Arc<str> = Arc::from(stores.name());
    let codec = DeltaScanCodec::new(stores);
    let channels = WorkerChannels::new(peers);
    Worker::from_session_builder(move |ctx: WorkerQueryContext| {
        let state = ctx
            .builder
            .with_distributed_user_codec(codec.clone())
            .with_distributed_channel_resolver(channels.clone())
            .with_distributed_worker_plan_rewrite_handler(AllowList {
                worker: Arc::clone(&name),
            })
            .build();
        async move { Ok(state) }
    })
    .with_version(concat!("dar ", env!("CARGO_PKG_VERSION")))
}

/// The gRPC server of a worker on `address`, refusing what `options`
/// forbid.
fn router(
    address: SocketAddr,
    stores: Arc<WorkerStores>,
    options: &WorkerOptions,
) -> Result<Router, Error> {
    if options.token.is_none() && needs_token(address) {
        return Err(Error::TokenRequired { address });
    }
    let mut server = Server::builder();
    if let Some(tls) = &options.tls {
        server = server
            .tls_config(tls.server_config())
            .map_err(|source| Error::Tls { address, source })?;
    }
    let check = CheckToken::new(options.token.clone(), stores.name());
    let service = worker(stores, options.peers())
        .into_worker_server()
        .max_decoding_message_size(options.max_message_bytes)
        .max_encoding_message_size(options.max_message_bytes);
    Ok(server.add_service(InterceptedService::new(service, check)))
}

/// Serves a worker on `listener` until `shutdown` completes. Tables are
/// opened with `storage` (and the environment's usual variables); no
/// token, so `listener` must be on loopback (see [`serve_with`]).
///
/// # Errors
///
/// As [`serve_with`].
pub async fn serve(
    listener: TcpListener,
    storage: StorageOptions,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), Error> {
    serve_with(listener, WorkerOptions::new(storage), shutdown).await
}

/// Serves a worker on `listener` with `options` until `shutdown` completes.
///
/// # Errors
///
/// [`Error::TokenRequired`] for a listener beyond loopback without a
/// token, [`Error::Tls`] for a TLS identity that does not work,
/// [`Error::Serve`] when serving fails.
pub async fn serve_with(
    listener: TcpListener,
    options: WorkerOptions,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), Error> {
    let address = listener.local_addr().map_err(Error::Listener)?;
    let stores = Arc::new(stores_for(address, &options));
    router(address, stores, &options)?
        .serve_with_incoming_shutdown(incoming(listener), shutdown)
        .await
        .map_err(|source| Error::Serve { address, source })
}

fn stores_for(address: SocketAddr, options: &WorkerOptions) -> WorkerStores {
    let stores = WorkerStores::new(format!("worker {address}"), options.storage.clone());
    match &options.data_cache {
        Some(cache) => stores.with_data_cache(cache.clone()),
        None => stores,
    }
}

/// A worker running in this process (see [`WorkerHandle::start`]); it
/// stops when dropped.
#[derive(Debug)]
pub struct WorkerHandle {
    address: SocketAddr,
    stores: Arc<WorkerStores>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<(), Error>>>,
}

impl WorkerHandle {
    /// Starts a worker on `listener` in the background of the current
    /// tokio runtime, without a token (so on loopback only).
    ///
    /// # Errors
    ///
    /// As [`WorkerHandle::start_with`].
    pub fn start(listener: TcpListener, storage: StorageOptions) -> Result<Self, Error> {
        Self::start_with(listener, WorkerOptions::new(storage))
    }

    /// Starts a worker on `listener` with `options` in the background of
    /// the current tokio runtime.
    ///
    /// # Errors
    ///
    /// [`Error::TokenRequired`] for a listener beyond loopback without a
    /// token, [`Error::Tls`] for a TLS identity that does not work.
    pub fn start_with(listener: TcpListener, options: WorkerOptions) -> Result<Self, Error> {
        let address = listener.local_addr().map_err(Error::Listener)?;
        let stores = Arc::new(stores_for(address, &options));
        let router = router(address, Arc::clone(&stores), &options)?;
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            router
                .serve_with_incoming_shutdown(incoming(listener), async {
                    // A dropped sender stops the worker too.
                    let _ = stopped.await;
                })
                .await
                .map_err(|source| Error::Serve { address, source })
        });
        Ok(Self {
            address,
            stores,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// The address the worker listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The worker's stores and the scans it ran.
    pub fn stores(&self) -> &WorkerStores {
        &self.stores
    }

    /// Stops the worker and waits until it no longer serves.
    ///
    /// # Errors
    ///
    /// [`Error::Serve`] if serving had failed, [`Error::Task`] if its task
    /// panicked.
    pub async fn stop(mut self) -> Result<(), Error> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.task.take() {
            Some(task) => task.await.map_err(|e| Error::Task(e.to_string()))?,
            None => Ok(()),
        }
    }
}

impl Drop for WorkerHandle {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// The connections a gRPC server of dar (a worker, `dar serve`) accepts
/// on `listener`:
/// - with `TCP_NODELAY`: a reply's small frames (headers, the last batch,
///   trailers) leave at once. With Nagle's algorithm on they waited for
///   the client's delayed ACK, about 40 ms on every call;
/// - closed lingering ([`LingeringStream`]): a connection closed at
///   shutdown, right after a reply's last frame, had reset when a frame of
///   the client's crossed it, and the client lost the reply's end.
pub fn incoming(
    listener: TcpListener,
) -> impl futures::Stream<Item = std::io::Result<LingeringStream>> + Send + 'static {
    TcpIncoming::from(listener)
        .with_nodelay(Some(true))
        .map_ok(LingeringStream::new)
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;

    use super::*;

    #[tokio::test]
    async fn accepted_connections_send_without_delay() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let mut accepted = incoming(listener);
        let _client = tokio::net::TcpStream::connect(address).await.unwrap();
        let stream = accepted.next().await.unwrap().unwrap();
        assert!(stream.get_ref().nodelay().unwrap());
    }

    #[test]
    fn only_loopback_goes_without_a_token() {
        for loopback in [
            "127.0.0.1:1",
            "127.3.2.1:1",
            "[::1]:1",
            "[::ffff:127.0.0.1]:1",
        ] {
            assert!(!needs_token(loopback.parse().unwrap()), "{loopback}");
        }
        for beyond in [
            "0.0.0.0:1",
            "[::]:1",
            "10.1.2.3:1",
            "192.168.0.1:1",
            "[fe80::1]:1",
        ] {
            assert!(needs_token(beyond.parse().unwrap()), "{beyond}");
        }
    }

    #[tokio::test]
    async fn a_worker_beyond_loopback_without_a_token_does_not_start() {
        let address: SocketAddr = "0.0.0.0:50051".parse().unwrap();
        let options = WorkerOptions::new(StorageOptions::new());
        let stores = Arc::new(stores_for(address, &options));
        let err = router(address, Arc::clone(&stores), &options)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("0.0.0.0:50051 listens beyond loopback and has no token"),
            "{err}"
        );
        let with_token = options.with_token(Token::new("a-token-long-enough").unwrap());
        assert!(router(address, stores, &with_token).is_ok());
    }
}
