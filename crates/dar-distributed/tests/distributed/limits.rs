//! No gRPC message over the limit is read or sent: a call declaring a
//! 4 GiB message is refused from its length prefix (the worker never waits
//! for the rest), and a coordinator refuses a result batch, or a plan,
//! over its own limit.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use dar_datafusion::register_delta_table;
use dar_distributed::{ClientOptions, WorkerOptions};
use dar_io::StorageOptions;
use dar_scan::Table;
use datafusion::prelude::SessionContext;
use http_body::{Body as _, Frame};

use crate::common::{
    coordinator, coordinator_with, single, start_workers, start_workers_with, write_many_files,
};

/// A request body: `bytes`, then the end.
struct Bytes1(Option<Bytes>);

impl http_body::Body for Bytes1 {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Poll::Ready(self.get_mut().0.take().map(|b| Ok(Frame::data(b))))
    }
}

/// The status a worker answers to a `CoordinatorChannel` call whose body
/// is `body`.
async fn call_worker(address: std::net::SocketAddr, body: Vec<u8>) -> tonic::Status {
    let mut channel = tonic::transport::Endpoint::from_shared(format!("http://{address}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let request = http::Request::builder()
        .method("POST")
        .uri(format!(
            "http://{address}/worker.WorkerService/CoordinatorChannel"
        ))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(tonic::body::Body::new(Bytes1(Some(Bytes::from(body)))))
        .unwrap();
    let ready = tower::ServiceExt::ready(&mut channel).await.unwrap();
    let response = tower::Service::call(ready, request).await.unwrap();
    let (parts, mut body) = response.into_parts();
    // A trailers-only answer has the status in its headers; otherwise it
    // comes after the body.
    if let Some(status) = tonic::Status::from_header_map(&parts.headers) {
        return status;
    }
    while let Some(frame) = futures::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await
    {
        if let Ok(trailers) = frame.unwrap().into_trailers()
            && let Some(status) = tonic::Status::from_header_map(&trailers)
        {
            return status;
        }
    }
    panic!("no status in the answer")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_declared_over_the_limit_is_refused_before_it_is_read() {
    let workers = start_workers(1, &StorageOptions::new()).await;
    // The prefix of a 4 GiB message, and 64 KiB of it.
    let mut body = vec![0, 0xff, 0xff, 0xff, 0xff];
    body.resize(5 + 64 * 1024, 0);
    let status = call_worker(workers[0].address(), body).await;
    // Refused from the length alone (without the limit the worker would
    // wait for 4 GiB, then see the body end early).
    let message = status.message();
    assert!(message.contains("message length too large"), "{status:?}");
    assert!(message.contains("found 4294967295 bytes"), "{status:?}");
    assert!(
        message.contains("the limit is: 268435456 bytes"),
        "{status:?}"
    );
}

async fn run(ctx: &SessionContext, many: &str, sql: &str) -> datafusion::common::Result<usize> {
    register_delta_table(ctx, "many", Table::open(many).await.unwrap()).unwrap();
    let batches = ctx.sql(sql).await?.collect().await?;
    Ok(batches.iter().map(|b| b.num_rows()).sum())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_and_plans_over_the_limit_fail_the_query() {
    let dir = tempfile::tempdir().unwrap();
    // Four files of 6,000 rows, each row with three random doubles
    // (computed on the workers): batches of about 150 KiB that no
    // compression shrinks much; a plan of a few KiB per worker.
    let many = write_many_files(dir.path(), 4, 6_000).await;
    let rows = "SELECT id, random() AS a, random() AS b, random() AS c FROM many";
    let workers = start_workers(2, &StorageOptions::new()).await;
    let expected = run(&single(), &many, rows).await.unwrap();
    assert_eq!(
        run(&coordinator(&workers), &many, rows).await.unwrap(),
        expected
    );

    // The coordinator accepts 64 KiB: the plan goes out, a batch does not
    // come back.
    let small = ClientOptions::new().with_max_message_bytes(64 * 1024);
    let err = run(&coordinator_with(&workers, "http", small), &many, rows)
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("bytes from worker 127.0.0.1:"), "{err}");
    assert!(err.contains("is over the limit of 65536 bytes"), "{err}");

    // 1 KiB: the plan itself is over it, and is not sent.
    let tiny = ClientOptions::new().with_max_message_bytes(1024);
    let err = run(&coordinator_with(&workers, "http", tiny), &many, rows)
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("bytes for worker 127.0.0.1:"), "{err}");
    assert!(err.contains("is over the limit of 1024 bytes"), "{err}");

    // A worker that sends at most 64 KiB refuses to send such a batch.
    let limited = WorkerOptions::new(StorageOptions::new()).with_max_message_bytes(64 * 1024);
    let workers = start_workers_with(2, &limited).await;
    let err = run(&coordinator(&workers), &many, rows)
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("message length too large"), "{err}");
}
