//! `s3://` tables through a real S3 protocol server
//! (`dar_io::testing::S3Server`, s3s-fs on 127.0.0.1), configured by `AWS_*`
//! environment variables or `--storage-option`.

use assert_cmd::Command;
use dar_io::testing::S3Server;

use crate::sample;

/// A server whose bucket `bucket` holds the sample table under `sample/`.
async fn serve_sample(bucket: &str) -> S3Server {
    let server = S3Server::start().await.unwrap();
    server.create_bucket(bucket).await.unwrap();
    server.upload_dir(&sample(), bucket, "sample").unwrap();
    server
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
        .envs(server.env());
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
    for (k, v) in server.storage_options().iter() {
        cmd.args(["--storage-option", &format!("{k}={v}")]);
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
        .envs(server.env())
        .env("AWS_SECRET_ACCESS_KEY", wrong);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("dar: error: "), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.contains(wrong), "{err}");
    assert!(!err.contains(S3Server::SECRET_KEY), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}
