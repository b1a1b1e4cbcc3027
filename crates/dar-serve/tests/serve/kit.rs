//! A server started in this process on 127.0.0.1:0, Flight SQL clients to
//! it, and tables written by dar-testkit.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_flight::FlightInfo;
use arrow_flight::sql::client::FlightSqlServiceClient;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use dar_serve::{ServeOptions, Server};
use dar_testkit::TableWriter;
use futures::TryStreamExt;
use object_store::local::LocalFileSystem;
use object_store::path::Path as StorePath;
use tokio::sync::oneshot;
use tonic::transport::Channel;

/// A running server; stops when dropped.
pub struct Running {
    pub address: SocketAddr,
    pub server: Server,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.task.abort();
    }
}

/// Opens and serves `options` on 127.0.0.1:0.
pub async fn start(options: ServeOptions) -> Running {
    let server = Server::open(options.with_query_log(false)).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let serving = server.clone();
    let task = tokio::spawn(async move {
        serving
            .serve(listener, async move {
                let _ = stopped.await;
            })
            .await
            .unwrap();
    });
    Running {
        address,
        server,
        stop: Some(stop),
        task,
    }
}

/// A Flight SQL client of `address`.
pub async fn client(address: SocketAddr) -> FlightSqlServiceClient<Channel> {
    let channel = Channel::from_shared(format!("http://{address}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    FlightSqlServiceClient::new(channel)
}

/// Every batch of every endpoint of `info`.
pub async fn fetch(
    client: &mut FlightSqlServiceClient<Channel>,
    info: FlightInfo,
) -> Result<Vec<RecordBatch>, arrow_flight::error::FlightError> {
    let mut batches = Vec::new();
    for endpoint in info.endpoint {
        let ticket = endpoint.ticket.expect("a ticket");
        let stream = client.do_get(ticket).await?;
        batches.extend(stream.try_collect::<Vec<_>>().await?);
    }
    Ok(batches)
}

/// Runs `sql` and opens the stream of its first endpoint, unread.
pub async fn open_stream(
    client: &mut FlightSqlServiceClient<Channel>,
    sql: &str,
) -> arrow_flight::decode::FlightRecordBatchStream {
    let info = client.execute(sql.to_string(), None).await.unwrap();
    let ticket = info.endpoint[0].ticket.clone().expect("a ticket");
    client.do_get(ticket).await.unwrap()
}

/// Runs `sql` and returns its rows.
pub async fn query(
    client: &mut FlightSqlServiceClient<Channel>,
    sql: &str,
) -> Result<Vec<RecordBatch>, arrow_flight::error::FlightError> {
    let info = client.execute(sql.to_string(), None).await?;
    fetch(client, info).await
}

/// The rows of `batches` as sorted text lines, cells joined by `,`.
pub fn lines(batches: &[RecordBatch]) -> Vec<String> {
    let text = arrow_cast::pretty::pretty_format_batches(batches)
        .unwrap()
        .to_string();
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with('|'))
        .skip(1)
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    lines.sort();
    lines
}

/// The rows of `sql`, as sorted text lines.
pub async fn rows(client: &mut FlightSqlServiceClient<Channel>, sql: &str) -> Vec<String> {
    lines(&query(client, sql).await.unwrap())
}

pub fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("value", DataType::Int64, true),
    ]))
}

/// Rows `ids` with names `name-<id>` and values `id * 10`.
pub fn batch(ids: std::ops::Range<i64>) -> RecordBatch {
    let names: Vec<String> = ids.clone().map(|i| format!("name-{i:06}")).collect();
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from_iter_values(ids.clone())),
            Arc::new(StringArray::from(names)),
            Arc::new(Int64Array::from_iter_values(ids.map(|i| i * 10))),
        ],
    )
    .unwrap()
}

/// A table `name` under `dir` with one commit per range.
pub async fn write_table(dir: &Path, name: &str, commits: &[std::ops::Range<i64>]) -> TableWriter {
    let store = Arc::new(LocalFileSystem::new_with_prefix(dir).unwrap());
    let mut writer = TableWriter::builder(store, StorePath::from(name), schema())
        .with_deletion_vectors(true)
        .create()
        .await
        .unwrap();
    for ids in commits {
        writer.append(&batch(ids.clone())).await.unwrap();
    }
    writer
}
