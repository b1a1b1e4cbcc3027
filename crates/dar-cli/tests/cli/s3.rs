//! `s3://` tables through a real S3 protocol server (s3s-fs on 127.0.0.1),
//! configured by `AWS_*` environment variables or `--storage-option`.

use std::net::SocketAddr;

use assert_cmd::Command;

use crate::sample;

const ACCESS_KEY: &str = "dar-cli-test-access-key";
const SECRET_KEY: &str = "dar-cli-test-SECRET-never-printed";

/// An S3 server whose bucket `bucket` holds the sample table under
/// `sample/`; stopped on drop.
struct Server {
    endpoint: String,
    _dir: tempfile::TempDir,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve_sample(bucket: &str) -> Server {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    use hyper_util::server::conn::auto::Builder;
    use s3s::S3;

    let dir = tempfile::tempdir().unwrap();
    let fs = s3s_fs::FileSystem::new(dir.path()).unwrap();
    let create = s3s::S3Request {
        input: s3s::dto::CreateBucketInput::builder()
            .bucket(bucket.to_string())
            .build()
            .unwrap(),
        method: http::Method::PUT,
        uri: format!("/{bucket}").parse().unwrap(),
        headers: http::HeaderMap::new(),
        extensions: http::Extensions::new(),
        credentials: None,
        region: None,
        service: None,
        trailing_headers: None,
    };
    fs.create_bucket(create).await.unwrap();
    // s3s-fs keeps each object as a file under <dir>/<bucket>/<key>.
    crate::copy_dir(&sample(), &dir.path().join(bucket).join("sample"));

    let mut builder = s3s::service::S3ServiceBuilder::new(fs);
    builder.set_auth(s3s::auth::SimpleAuth::from_single(ACCESS_KEY, SECRET_KEY));
    let service = builder.build();
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let http = Builder::new(TokioExecutor::new());
        while let Ok((socket, _)) = listener.accept().await {
            let _ = socket.set_nodelay(true);
            let conn = http
                .serve_connection(TokioIo::new(socket), service.clone())
                .into_owned();
            tokio::spawn(async move {
                let _ = conn.await;
            });
        }
    });
    Server {
        endpoint: format!("http://{addr}"),
        _dir: dir,
        task,
    }
}

/// `dar` with no `AWS_*` variables from the caller's environment.
fn dar_without_aws_env() -> Command {
    let mut c = crate::dar();
    for (k, _) in std::env::vars() {
        if k.starts_with("AWS_") {
            c.env_remove(k);
        }
    }
    c
}

/// Runs `cmd` off the async runtime (the server runs on it meanwhile).
async fn run(mut cmd: Command) -> std::process::Output {
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_table_from_environment_variables() {
    let server = serve_sample("env-bucket").await;
    let mut cmd = dar_without_aws_env();
    cmd.args(["scan", "s3://env-bucket/sample", "--format", "null"])
        .env("AWS_ENDPOINT_URL", &server.endpoint)
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", ACCESS_KEY)
        .env("AWS_SECRET_ACCESS_KEY", SECRET_KEY);
    let out = run(cmd).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "300\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_table_from_storage_options() {
    let server = serve_sample("opt-bucket").await;
    let mut cmd = dar_without_aws_env();
    cmd.args(["files", "s3://opt-bucket/sample", "--format", "json"]);
    for o in [
        format!("aws_endpoint={}", server.endpoint),
        "aws_allow_http=true".to_string(),
        "aws_region=us-east-1".to_string(),
        format!("aws_access_key_id={ACCESS_KEY}"),
        format!("aws_secret_access_key={SECRET_KEY}"),
    ] {
        cmd.args(["--storage-option", &o]);
    }
    let out = run(cmd).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_credentials_fail_on_one_line_without_the_secret() {
    let server = serve_sample("auth-bucket").await;
    let wrong = "WRONG-SECRET-value-never-printed";
    let mut cmd = dar_without_aws_env();
    cmd.args(["info", "s3://auth-bucket/sample"])
        .env("AWS_ENDPOINT_URL", &server.endpoint)
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", ACCESS_KEY)
        .env("AWS_SECRET_ACCESS_KEY", wrong);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("dar: error: "), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.contains(wrong) && !err.contains("SECRET"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}
