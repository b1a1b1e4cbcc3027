//! A dar worker: a datafusion-distributed worker that knows dar's codec,
//! served over gRPC (Arrow Flight) on a TCP listener.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use dar_io::StorageOptions;
use datafusion_distributed::{DistributedExt, Worker, WorkerQueryContext};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::transport::Server;
use tonic::transport::server::TcpIncoming;

use crate::codec::DeltaScanCodec;
use crate::error::Error;
use crate::stores::WorkerStores;

/// The datafusion-distributed worker for `stores`: every query's session
/// gets dar's codec.
fn worker(stores: Arc<WorkerStores>) -> Worker {
    let codec = DeltaScanCodec::new(stores);
    Worker::from_session_builder(move |ctx: WorkerQueryContext| {
        let codec = codec.clone();
        async move { Ok(ctx.builder.with_distributed_user_codec(codec).build()) }
    })
    .with_version(concat!("dar ", env!("CARGO_PKG_VERSION")))
}

/// Serves a worker on `listener` until `shutdown` completes. Tables are
/// opened with `storage` (and the environment's usual variables).
pub async fn serve(
    listener: TcpListener,
    storage: StorageOptions,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), Error> {
    let stores = Arc::new(stores_for(&listener, storage)?);
    run(listener, stores, shutdown).await
}

fn stores_for(listener: &TcpListener, storage: StorageOptions) -> Result<WorkerStores, Error> {
    let address = listener.local_addr().map_err(Error::Listener)?;
    Ok(WorkerStores::new(format!("worker {address}"), storage))
}

async fn run(
    listener: TcpListener,
    stores: Arc<WorkerStores>,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), Error> {
    let address = listener.local_addr().map_err(Error::Listener)?;
    Server::builder()
        .add_service(worker(stores).into_worker_server())
        .serve_with_incoming_shutdown(TcpIncoming::from(listener), shutdown)
        .await
        .map_err(|source| Error::Serve { address, source })
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
    /// tokio runtime.
    pub fn start(listener: TcpListener, storage: StorageOptions) -> Result<Self, Error> {
        let address = listener.local_addr().map_err(Error::Listener)?;
        let stores = Arc::new(stores_for(&listener, storage)?);
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(run(listener, Arc::clone(&stores), async {
            // A dropped sender stops the worker too.
            let _ = stopped.await;
        }));
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
