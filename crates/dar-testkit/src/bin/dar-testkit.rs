//! `dar-testkit`: writes the repository's sample table, or a table of many
//! small files with one deleted row each (the W4 benchmark's shape).
//!
//! ```text
//! cargo run -p dar-testkit -- sample examples/data/sample
//! cargo run -p dar-testkit -- many /tmp/many 1000 5000
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
    \x20      dar-testkit many <DIR> <FILES> <ROWS>\n\
    'sample' writes the sample table (a partitioned 'trips' table with deletion\n\
    vectors and a checkpoint) to DIR, replacing a table already there. 'many'\n\
    writes FILES files of ROWS rows (columns id, grp, part) with one row of each\n\
    deleted by a deletion vector, into an empty or new DIR.";

/// What to write.
enum Command {
    Sample(PathBuf),
    Many(PathBuf, usize, usize),
}

fn parse(args: &[String]) -> Option<Command> {
    match args {
        [command, dir] if command == "sample" => Some(Command::Sample(PathBuf::from(dir))),
        [command, dir, files, rows] if command == "many" => {
            let files = files.parse().ok().filter(|f| *f > 0)?;
            let rows = rows.parse().ok().filter(|r| *r >= 2)?;
            Some(Command::Many(PathBuf::from(dir), files, rows))
        }
        _ => None,
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(command) = parse(&args) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("error: cannot start the runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let written = match command {
        Command::Sample(dir) => runtime.block_on(write_sample_dir(&dir)),
        Command::Many(dir, files, rows) => runtime.block_on(write_many_dir(&dir, files, rows)),
    };
    match written {
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

/// Writes `dar_testkit::write_many_files` into `dir` (new or empty).
async fn write_many_dir(dir: &FsPath, files: usize, rows: usize) -> Result<String, BoxError> {
    if dir.exists() && std::fs::read_dir(dir)?.next().is_some() {
        return Err(format!("{} is not empty; not writing there", dir.display()).into());
    }
    std::fs::create_dir_all(dir)?;
    let store = Arc::new(LocalFileSystem::new_with_prefix(dir)?);
    let table = dar_testkit::write_many_files(store, Path::default(), files, rows).await?;
    Ok(format!(
        "wrote {}: {files} files of {rows} rows, {} live rows (one deleted per file)",
        dir.display(),
        table.live_rows()
    ))
}
