//! A test helper for tests outside Rust (the Python package's pytest
//! suite): runs [`dar_io::testing::S3Server`] on 127.0.0.1 until its
//! standard input closes.
//!
//! ```text
//! cargo run -p dar-io --example s3_server -- BUCKET [DIR PREFIX]...
//! ```
//!
//! Creates `BUCKET`, copies each `DIR` into it under `PREFIX`, then prints
//! to standard output the storage options that reach the server, one
//! `KEY=VALUE` line each as for `dar --storage-option` (`aws_endpoint`,
//! `aws_allow_http`, `aws_region`, `aws_access_key_id`,
//! `aws_secret_access_key`), and a last line `READY`. The server stops, and its
//! temporary directory is removed, when standard input reaches its end
//! (the test closes the pipe, or dies).

use std::error::Error;
use std::io::{Read, Write};

use dar_io::testing::S3Server;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((bucket, uploads)) = args.split_first() else {
        return Err("usage: s3_server BUCKET [DIR PREFIX]...".into());
    };
    if uploads.len() % 2 != 0 {
        return Err("usage: s3_server BUCKET [DIR PREFIX]... (DIR without PREFIX)".into());
    }
    let server = S3Server::start().await?;
    server.create_bucket(bucket).await?;
    for pair in uploads.chunks(2) {
        server.upload_dir(std::path::Path::new(&pair[0]), bucket, &pair[1])?;
    }
    let mut stdout = std::io::stdout();
    for (key, value) in server.storage_options().iter() {
        writeln!(stdout, "{key}={value}")?;
    }
    writeln!(stdout, "READY")?;
    stdout.flush()?;
    // Serve until the test closes our standard input.
    tokio::task::spawn_blocking(|| {
        let mut sink = Vec::new();
        std::io::stdin().read_to_end(&mut sink)
    })
    .await??;
    drop(server);
    Ok(())
}
