//! S3 storage for the bench: dar-io's in-process S3 server (s3s + s3s-fs on
//! 127.0.0.1) with the fixtures uploaded once through the S3 API, and a
//! proxy in front of it that every reader talks to (see [`proxy`]).

pub mod emulators;
pub mod proxy;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use dar_io::testing::S3Server;
use object_store::aws::AmazonS3Builder;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

pub use proxy::{Kind, Link, Proxy};

/// The bucket the fixtures are uploaded to.
pub const BUCKET: &str = "bench";

/// A running server with the fixtures in it.
pub struct S3Storage {
    server: S3Server,
}

impl S3Storage {
    /// Starts the server and uploads each `(local dir, key prefix)`.
    pub async fn start(uploads: &[(std::path::PathBuf, String)]) -> Result<S3Storage, String> {
        let server = S3Server::start()
            .await
            .map_err(|e| format!("S3 server: {e}"))?;
        server
            .create_bucket(BUCKET)
            .await
            .map_err(|e| e.to_string())?;
        let opts = server.storage_options();
        let get = |k: &str| opts.get(k).unwrap_or_default().to_string();
        let store: Arc<dyn ObjectStore> = Arc::new(
            AmazonS3Builder::new()
                .with_bucket_name(BUCKET)
                .with_endpoint(server.endpoint())
                .with_allow_http(true)
                .with_region(get("aws_region"))
                .with_access_key_id(get("aws_access_key_id"))
                .with_secret_access_key(get("aws_secret_access_key"))
                .build()
                .map_err(|e| e.to_string())?,
        );
        let started = std::time::Instant::now();
        let mut bytes = 0u64;
        for (dir, prefix) in uploads {
            bytes += upload_dir(&store, dir, prefix).await?;
        }
        eprintln!(
            "s3: uploaded {:.1} MiB through the S3 API in {:.1?}",
            bytes as f64 / (1 << 20) as f64,
            started.elapsed()
        );
        Ok(S3Storage { server })
    }

    /// `http://127.0.0.1:PORT` of the server itself.
    pub fn endpoint(&self) -> &str {
        self.server.endpoint()
    }

    /// Storage options for a reader that reaches the server at `endpoint`
    /// (the proxy's).
    pub fn options_via(&self, endpoint: &str) -> BTreeMap<String, String> {
        let mut map: BTreeMap<String, String> = self
            .server
            .storage_options()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        map.insert("aws_endpoint".into(), endpoint.into());
        map
    }
}

async fn upload_dir(store: &Arc<dyn ObjectStore>, dir: &Path, prefix: &str) -> Result<u64, String> {
    let mut bytes = 0u64;
    let mut stack = vec![(dir.to_path_buf(), prefix.to_string())];
    let mut puts = Vec::new();
    while let Some((d, p)) = stack.pop() {
        for entry in std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))? {
            let entry = entry.map_err(|e| e.to_string())?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let key = format!("{p}/{name}");
            if entry.file_type().map_err(|e| e.to_string())?.is_dir() {
                stack.push((entry.path(), key));
            } else {
                puts.push((entry.path(), key));
            }
        }
    }
    let mut uploads = futures::stream::iter(puts.into_iter().map(|(path, key)| {
        let store = Arc::clone(store);
        async move {
            let data = tokio::fs::read(&path)
                .await
                .map_err(|e| format!("{}: {e}", path.display()))?;
            let n = data.len() as u64;
            let location =
                object_store::path::Path::parse(&key).map_err(|e| format!("{key}: {e}"))?;
            store
                .put(&location, PutPayload::from(data))
                .await
                .map_err(|e| format!("PUT {key}: {e}"))?;
            Ok::<u64, String>(n)
        }
    }))
    .buffer_unordered(8);
    use futures::StreamExt;
    while let Some(n) = uploads.next().await {
        bytes += n?;
    }
    Ok(bytes)
}

/// The `s3-slow` link of the plan: about 200 ms per request and about
/// 150 Mbit/s shared by every connection.
pub fn slow_link() -> Link {
    Link {
        latency: Duration::from_millis(200),
        bytes_per_sec: Some(150_000_000 / 8),
    }
}
