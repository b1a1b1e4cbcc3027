//! The coordinating session: where the workers are, and how a dar scan is
//! divided among them.
//!
//! datafusion-distributed asks two questions of every leaf node. How many
//! tasks does its stage want? One per file, capped by the planner at the
//! number of workers; a scan with a `LIMIT` stays on one task (it opens
//! files one at a time until the limit is met). Then, for the final count,
//! one variant of the leaf per task: [`DeltaScanExec::split`] gives each
//! task its own files, so every file is read by exactly one worker.

use std::sync::Arc;
use std::time::Duration;

use dar_datafusion::DeltaScanExec;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::{SessionState, SessionStateBuilder};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::SessionConfig;
use datafusion_distributed::{
    DesiredTaskCountEvent, DesiredTaskCountEventResponse, DistributedExt, DistributedLeafExec,
    ScaleUpLeafNodeEvent, ScaleUpLeafNodeEventResponse, SessionStateBuilderExt, WorkerResolver,
};
use url::Url;

use crate::codec::DeltaScanCodec;
use crate::wire::{ClientOptions, WorkerChannels};

/// A fixed list of worker URLs.
#[derive(Debug, Clone)]
struct StaticWorkers(Vec<Url>);

impl WorkerResolver for StaticWorkers {
    fn get_urls(&self) -> Result<Vec<Url>> {
        Ok(self.0.clone())
    }
}

/// Parses `host:port` (or a full `http://host:port` URL, or
/// `https://host:port` for a worker that serves TLS) into a worker URL.
pub fn worker_url(address: &str) -> Result<Url> {
    let text = if address.contains("://") {
        address.to_string()
    } else {
        format!("http://{address}")
    };
    let url = Url::parse(&text).map_err(|e| {
        DataFusionError::Configuration(format!("worker address '{address}' is not host:port: {e}"))
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(DataFusionError::Configuration(format!(
            "worker address '{address}' is neither host:port nor an http:// or https:// URL"
        )));
    }
    if url.host_str().is_none() || url.port_or_known_default().is_none() {
        return Err(DataFusionError::Configuration(format!(
            "worker address '{address}' is not host:port"
        )));
    }
    Ok(url)
}

/// How [`unreachable_workers`] probes: connection attempts, the pause
/// between them, and how long one may take.
const PROBES: usize = 5;
const PROBE_PAUSE: Duration = Duration::from_millis(200);
const PROBE_TIMEOUT: Duration = Duration::from_millis(500);

/// Whether the worker at `url` accepts TCP connections throughout the
/// probes. A process that is dying may still accept one (its listening
/// socket goes last); a dead one refuses. A busy worker still accepts:
/// the kernel completes the handshake (a request would wait behind its
/// work, so a request is no test of life under load).
async fn accepts(url: &Url) -> bool {
    let host = url.host_str().unwrap_or_default();
    let port = url.port_or_known_default().unwrap_or_default();
    for attempt in 0..PROBES {
        if attempt > 0 {
            tokio::time::sleep(PROBE_PAUSE).await;
        }
        let connect = tokio::net::TcpStream::connect((host, port));
        if !matches!(
            tokio::time::timeout(PROBE_TIMEOUT, connect).await,
            Ok(Ok(_))
        ) {
            return false;
        }
    }
    true
}

/// The workers of `urls` that refuse connections now (probed for about a
/// second). A transport error from a worker that died mid-query (a broken
/// HTTP/2 stream) does not say which worker it was; after a failed query
/// this does.
pub async fn unreachable_workers(urls: &[Url]) -> Vec<Url> {
    let probes = urls
        .iter()
        .map(|url| async move { (!accepts(url).await).then(|| url.clone()) });
    futures::future::join_all(probes)
        .await
        .into_iter()
        .flatten()
        .collect()
}

fn desired_task_count(ev: DesiredTaskCountEvent) -> Option<Result<DesiredTaskCountEventResponse>> {
    let scan = ev.plan.downcast_ref::<DeltaScanExec>()?;
    let files = scan.scan_plan().tasks().len();
    Some(Ok(
        if scan.scan_plan().context().spec().limit().is_some() || files <= 1 {
            DesiredTaskCountEventResponse::maximum(1)
        } else {
            DesiredTaskCountEventResponse::desired(files)
        },
    ))
}

fn scale_up(ev: ScaleUpLeafNodeEvent) -> Option<Result<ScaleUpLeafNodeEventResponse>> {
    let scan = ev.plan.downcast_ref::<DeltaScanExec>()?;
    let variants = scan
        .split(ev.task_count)
        .into_iter()
        .map(|s| Arc::new(s) as Arc<dyn ExecutionPlan>);
    Some(
        DistributedLeafExec::try_new(Arc::clone(ev.plan), variants)
            .map(|leaf| ScaleUpLeafNodeEventResponse::new(Arc::new(leaf))),
    )
}

/// A session that plans queries and runs their stages on `workers`, with
/// dar's codec and scan splitting registered. Register tables on it as
/// usual (`dar_datafusion::register_delta_table`, `register_dar`). It
/// calls the workers without a token, over TLS for `https://` URLs
/// (the system's roots), with messages up to
/// [`crate::DEFAULT_MAX_MESSAGE_BYTES`]; see [`coordinator_state_with`].
pub fn coordinator_state(config: SessionConfig, workers: Vec<Url>) -> SessionState {
    coordinator_state_with(config, workers, ClientOptions::new())
}

/// [`coordinator_state`] that calls the workers with `client`: its token
/// on every call, its CA for `https://` workers, its message limit.
pub fn coordinator_state_with(
    config: SessionConfig,
    workers: Vec<Url>,
    client: ClientOptions,
) -> SessionState {
    SessionStateBuilder::new()
        .with_default_features()
        .with_config(config)
        .with_distributed_worker_resolver(StaticWorkers(workers))
        .with_distributed_channel_resolver(WorkerChannels::new(client))
        .with_distributed_planner()
        .with_distributed_user_codec(DeltaScanCodec::coordinator())
        .with_distributed_desired_task_count_handler(desired_task_count)
        .with_distributed_scale_up_leaf_node_handler(scale_up)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn unreachable_workers_are_named() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let worker = crate::WorkerHandle::start(listener, dar_io::StorageOptions::new()).unwrap();
        let up = worker_url(&worker.address().to_string()).unwrap();
        // A port that was free a moment ago: nothing listens there.
        let gone = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            worker_url(&l.local_addr().unwrap().to_string()).unwrap()
        };
        let down = unreachable_workers(&[up, gone.clone()]).await;
        assert_eq!(down, [gone]);
    }

    #[test]
    fn worker_addresses() {
        assert_eq!(
            worker_url("127.0.0.1:50051").unwrap().as_str(),
            "http://127.0.0.1:50051/"
        );
        assert_eq!(
            worker_url("http://w1:7000").unwrap().as_str(),
            "http://w1:7000/"
        );
        assert_eq!(
            worker_url("https://w1:7000").unwrap().as_str(),
            "https://w1:7000/"
        );
        let err = worker_url("not a host").unwrap_err().to_string();
        assert!(err.contains("'not a host'"), "{err}");
        let err = worker_url("ftp://w1:7000").unwrap_err().to_string();
        assert!(err.contains("neither host:port"), "{err}");
    }
}
