//! `dar-testkit`: writes the repository's sample table.
//!
//! ```text
//! cargo run -p dar-testkit -- sample examples/data/sample
//! ```
//!
//! The output is byte-identical on every run (fixed seed and timestamps).

use std::path::{Path as FsPath, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use dar_testkit::sample::{SAMPLE_CHECKPOINT_VERSION, write_sample};
use object_store::local::LocalFileSystem;
use object_store::path::Path;

const USAGE: &str = "usage: dar-testkit sample <DIR>\n\
    Writes the sample table (a partitioned 'trips' table with deletion vectors\n\
    and a checkpoint) to DIR, replacing a table already there.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = match args.as_slice() {
        [command, dir] if command == "sample" => PathBuf::from(dir),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("error: cannot start the runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(write_sample_dir(&dir)) {
        Ok(summary) => {
            println!("{summary}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            let mut message = format!("error: {err}");
            let mut source = std::error::Error::source(&*err);
            while let Some(cause) = source {
                message.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Replaces `dir` with the sample table; refuses to delete a non-empty
/// directory that is not a Delta table.
async fn write_sample_dir(dir: &FsPath) -> Result<String, BoxError> {
    if dir.exists() {
        let empty = std::fs::read_dir(dir)?.next().is_none();
        if !empty && !dir.join("_delta_log").is_dir() {
            return Err(format!(
                "{} exists and is not a Delta table; not replacing it",
                dir.display()
            )
            .into());
        }
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir)?;
    let store = Arc::new(LocalFileSystem::new_with_prefix(dir)?);
    let summary = write_sample(store, Path::default()).await?;
    Ok(format!(
        "wrote {} at version {}: {} files, {} rows ({} deleted by DVs), checkpoint at version {SAMPLE_CHECKPOINT_VERSION}",
        dir.display(),
        summary.version,
        summary.files,
        summary.live_rows,
        summary.deleted_rows,
    ))
}
