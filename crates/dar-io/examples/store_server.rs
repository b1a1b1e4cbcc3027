//! A test helper for tests outside Rust (the Python package's pytest
//! suite): runs Azurite or fake-gcs-server ([`dar_io::testing::stores`])
//! on 127.0.0.1 until its standard input closes.
//!
//! ```text
//! cargo run -p dar-io --example store_server -- azure|gcs CONTAINER [DIR PREFIX]...
//! ```
//!
//! Starts the server named by `DAR_AZURITE` (azure) or
//! `DAR_FAKE_GCS_SERVER` (gcs), creates `CONTAINER` (the bucket, for gcs),
//! copies each `DIR` into it under `PREFIX`, then prints to standard output
//! the storage options that reach it, one `KEY=VALUE` line each as for
//! `dar --storage-option`, then for azure `@sas=TOKEN` (a read/list SAS of
//! the container) and `@expired_sas=TOKEN` (one that expired in 2001), and
//! a last line `READY`. Without the server's variable it prints one line
//! `SKIP <reason>` and exits (an error instead when `DAR_REQUIRE_STORES=1`
//! or `CI` is set). The server stops, and its data is removed, when standard
//! input reaches its end (the test closes the pipe, or dies).

use std::error::Error;
use std::io::{Read, Write};
use std::path::Path;

use dar_io::StorageOptions;
use dar_io::testing::{Azurite, FakeGcs};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn Error>> {
    let usage = "usage: store_server azure|gcs CONTAINER [DIR PREFIX]...";
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [kind, container, uploads @ ..] = args.as_slice() else {
        return Err(usage.into());
    };
    if uploads.len() % 2 != 0 {
        return Err(format!("{usage} (DIR without PREFIX)").into());
    }
    let mut stdout = std::io::stdout();
    let mut extra: Vec<(String, String)> = Vec::new();
    // The server lives in `_guard` until standard input closes.
    let (options, _guard): (StorageOptions, Box<dyn std::any::Any>) = match kind.as_str() {
        "azure" => {
            let Some(server) = Azurite::start()? else {
                writeln!(stdout, "SKIP DAR_AZURITE is not set")?;
                return Ok(());
            };
            server.create_container(container)?;
            for pair in uploads.chunks(2) {
                server
                    .upload_dir(Path::new(&pair[0]), container, &pair[1])
                    .await?;
            }
            extra.push((
                "sas".into(),
                server.container_sas(container, "2099-01-01T00:00:00Z")?,
            ));
            extra.push((
                "expired_sas".into(),
                server.container_sas(container, "2001-01-01T00:00:00Z")?,
            ));
            (server.storage_options(), Box::new(server))
        }
        "gcs" => {
            let Some(server) = FakeGcs::start()? else {
                writeln!(stdout, "SKIP DAR_FAKE_GCS_SERVER is not set")?;
                return Ok(());
            };
            server.create_bucket(container)?;
            for pair in uploads.chunks(2) {
                server.upload_dir(Path::new(&pair[0]), container, &pair[1])?;
            }
            (server.storage_options(), Box::new(server))
        }
        _ => return Err(usage.into()),
    };
    for (key, value) in options.iter() {
        writeln!(stdout, "{key}={value}")?;
    }
    for (key, value) in &extra {
        writeln!(stdout, "@{key}={value}")?;
    }
    writeln!(stdout, "READY")?;
    stdout.flush()?;
    tokio::task::spawn_blocking(|| {
        let mut sink = Vec::new();
        std::io::stdin().read_to_end(&mut sink)
    })
    .await??;
    Ok(())
}
