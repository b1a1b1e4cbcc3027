//! An in-process S3 server for tests: the real S3 protocol over HTTP on
//! 127.0.0.1 (s3s + s3s-fs), so tests exercise object_store's S3 client
//! without a network or a mock.

use std::io;
use std::net::SocketAddr;
use std::path::Path;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder as ConnBuilder;
use s3s::S3;
use s3s::auth::SimpleAuth;
use s3s::service::S3ServiceBuilder;

use crate::options::StorageOptions;

/// An S3 server on a free port of 127.0.0.1, serving a temporary directory;
/// stopped (and the directory removed) on drop.
///
/// It accepts only [`S3Server::ACCESS_KEY`] / [`S3Server::SECRET_KEY`] and
/// serves path-style requests. Start it inside a tokio runtime; when a
/// blocking client (a child process, a sync API) talks to it, use a
/// multi-thread runtime so the server keeps running meanwhile.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use dar_io::testing::S3Server;
/// use object_store::ObjectStoreExt;
///
/// let server = S3Server::start().await?;
/// server.create_bucket("bucket").await?;
/// let table = dar_io::TableStore::builder("s3://bucket/t")
///     .with_env(Vec::new()) // ignore the developer's AWS_* variables
///     .with_options(server.storage_options())
///     .build()?;
/// let path = table.child("x.json");
/// table.store().put(&path, "{}".into()).await?;
/// assert_eq!(table.store().head(&path).await?.size, 2);
/// # Ok(())
/// # }
/// ```
pub struct S3Server {
    endpoint: String,
    root: tempfile::TempDir,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for S3Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Server")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl S3Server {
    /// The only access key id the server accepts.
    pub const ACCESS_KEY: &str = "dar-test-access-key";
    /// The secret key paired with [`S3Server::ACCESS_KEY`] (tests check it
    /// never appears in output).
    pub const SECRET_KEY: &str = "dar-test-secret-key-never-printed";
    /// The region clients should sign for.
    pub const REGION: &str = "us-east-1";

    /// Starts a server with no buckets on a free port of 127.0.0.1.
    pub async fn start() -> io::Result<Self> {
        let root = tempfile::tempdir()?;
        let mut b = S3ServiceBuilder::new(file_system(root.path())?);
        b.set_auth(SimpleAuth::from_single(Self::ACCESS_KEY, Self::SECRET_KEY));
        let service = b.build();

        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            let http = ConnBuilder::new(TokioExecutor::new());
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    continue;
                };
                // Without NODELAY every request on a reused connection
                // stalls ~40 ms (Nagle + delayed ACK).
                let _ = socket.set_nodelay(true);
                let conn = http
                    .serve_connection(TokioIo::new(socket), service.clone())
                    .into_owned();
                tokio::spawn(async move {
                    let _ = conn.await;
                });
            }
        });
        Ok(Self {
            endpoint: format!("http://{addr}"),
            root,
            task,
        })
    }

    /// Creates `bucket` through the S3 API (the code an HTTP CreateBucket
    /// request reaches).
    pub async fn create_bucket(&self, bucket: &str) -> io::Result<()> {
        let fail =
            |e: &dyn std::fmt::Debug| io::Error::other(format!("CreateBucket {bucket}: {e:?}"));
        let input = s3s::dto::CreateBucketInput::builder()
            .bucket(bucket.to_string())
            .build()
            .map_err(|e| fail(&e))?;
        let req = s3s::S3Request {
            input,
            method: http::Method::PUT,
            uri: format!("/{bucket}").parse().map_err(|e| fail(&e))?,
            headers: http::HeaderMap::new(),
            extensions: http::Extensions::new(),
            credentials: None,
            region: None,
            service: None,
            trailing_headers: None,
        };
        file_system(self.root.path())?
            .create_bucket(req)
            .await
            .map_err(|e| fail(&e))?;
        Ok(())
    }

    /// Copies the files under `dir` (recursively) into `bucket` under
    /// `prefix` (`"tables/t1"`; `""` for the bucket root). The bucket must
    /// exist. s3s-fs keeps each object as the file `<root>/<bucket>/<key>`,
    /// so this writes files directly rather than sending PUTs.
    pub fn upload_dir(&self, dir: &Path, bucket: &str, prefix: &str) -> io::Result<()> {
        let bucket_dir = self.root.path().join(bucket);
        if !bucket_dir.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("bucket {bucket} does not exist"),
            ));
        }
        copy_dir(dir, &bucket_dir.join(prefix))
    }

    /// `http://127.0.0.1:<port>`.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Options that point an `s3://` table at this server with valid
    /// credentials (`aws_endpoint`, `aws_allow_http`, `aws_region`,
    /// `aws_access_key_id`, `aws_secret_access_key`).
    pub fn storage_options(&self) -> StorageOptions {
        self.settings()
            .into_iter()
            .fold(StorageOptions::new(), |o, (k, _, v)| o.with(k, v))
    }

    /// The same settings as `AWS_*` environment variables (`AWS_ENDPOINT_URL`,
    /// `AWS_ALLOW_HTTP`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`), for `TableStoreBuilder::with_env` or a
    /// child process.
    pub fn env(&self) -> Vec<(String, String)> {
        self.settings()
            .into_iter()
            .map(|(_, k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// (option key, environment variable, value).
    fn settings(&self) -> [(&'static str, &'static str, &str); 5] {
        [
            ("aws_endpoint", "AWS_ENDPOINT_URL", &self.endpoint),
            ("aws_allow_http", "AWS_ALLOW_HTTP", "true"),
            ("aws_region", "AWS_REGION", Self::REGION),
            ("aws_access_key_id", "AWS_ACCESS_KEY_ID", Self::ACCESS_KEY),
            (
                "aws_secret_access_key",
                "AWS_SECRET_ACCESS_KEY",
                Self::SECRET_KEY,
            ),
        ]
    }
}

fn file_system(root: &Path) -> io::Result<s3s_fs::FileSystem> {
    s3s_fs::FileSystem::new(root)
        .map_err(|e| io::Error::other(format!("s3s-fs cannot use {}: {e:?}", root.display())))
}

fn copy_dir(from: &Path, to: &Path) -> io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}
