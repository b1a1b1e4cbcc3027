//! `dar scan`: the rows of a snapshot, through `dar-scan`, into one of the
//! output formats.

use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Instant;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use dar_scan::{ChangeScan, ScanError, ScanMetrics, ScanOptions, ScanPlan, Table};
use futures::StreamExt;
use futures::future::Either;
use futures::stream::BoxStream;

use super::Streams;
use crate::cli::{RowsArgs, ScanArgs, ScanFormat};
use crate::error::CliError;
use crate::output::{OutputFile, batch_sink};
use crate::progress::Progress;
use crate::stats::{Opened, WallTimes, write_stats};

/// Runs `dar scan`.
pub async fn run(args: &ScanArgs, streams: &mut Streams<'_>) -> Result<(), CliError> {
    check_args(args)?;
    let started = Instant::now();
    let table = crate::table::open_for(&args.table, args.filter.as_deref()).await?;
    let open = Opened::of(&table);
    let opened = Instant::now();
    let plan = plan(&table, args)?;
    let planned = Instant::now();

    let rows = Rows::new(&args.rows, expected_rows(&plan, args));
    let source = Source::Plan(&plan);
    rows.write(&table, source, streams, &open, [started, opened, planned])
        .await
}

/// What rows are written from: a scan's plan, or a change data feed run
/// commit by commit (whose files are found as its commits are read).
#[derive(Clone, Copy)]
pub(crate) enum Source<'a> {
    /// A planned scan.
    Plan(&'a ScanPlan),
    /// An opened change feed.
    Changes(&'a ChangeScan),
}

impl Source<'_> {
    fn schema(&self) -> &SchemaRef {
        match self {
            Self::Plan(p) => p.schema(),
            Self::Changes(c) => c.schema(),
        }
    }

    fn metrics(&self) -> &ScanMetrics {
        match self {
            Self::Plan(p) => p.metrics(),
            Self::Changes(c) => c.metrics(),
        }
    }

    fn execute(&self) -> BoxStream<'static, dar_scan::Result<RecordBatch>> {
        match self {
            Self::Plan(p) => p.execute(),
            Self::Changes(c) => c.execute(),
        }
    }

    /// The files to read, when known before reading (0: not known).
    fn files(&self) -> usize {
        match self {
            Self::Plan(p) => p.tasks().len(),
            Self::Changes(_) => 0,
        }
    }
}

/// Where and how a planned scan's rows go: what `dar scan` and
/// `dar changes` share.
pub(crate) struct Rows<'a> {
    /// The output format.
    pub format: ScanFormat,
    /// `--output`, else standard output.
    pub output: Option<&'a Path>,
    /// The rows the progress bar expects, when known.
    pub expected_rows: Option<u64>,
    /// `--stats`: the scan's statistics on standard error afterwards.
    pub stats: bool,
}

impl<'a> Rows<'a> {
    /// The rows of the `--format`, `--output` and `--stats` flags.
    pub(crate) fn new(args: &'a RowsArgs, expected_rows: Option<u64>) -> Self {
        Self {
            format: args.format,
            output: crate::cli::output_file(&args.output),
            expected_rows,
            stats: args.stats,
        }
    }

    /// Writes the rows of `source`, then the statistics if asked: `open`
    /// is what opening the table did, `[started, opened, planned]` time
    /// the stages before the rows.
    pub(crate) async fn write(
        &self,
        table: &Table,
        source: Source<'_>,
        streams: &mut Streams<'_>,
        open: &Opened,
        [started, opened, planned]: [Instant; 3],
    ) -> Result<(), CliError> {
        match self.output {
            Some(path) => {
                let progress = Progress::new(
                    streams.stderr_is_terminal && self.format != ScanFormat::Null,
                    source.files(),
                    self.expected_rows,
                );
                write_file(table, source, self.format, path, progress, interrupted()).await?;
            }
            None => {
                let progress = Progress::new(false, 0, None);
                copy_rows(
                    source,
                    self.format,
                    Box::new(&mut *streams.stdout),
                    progress,
                )
                .await?;
            }
        }
        if self.stats {
            let times = WallTimes {
                open: opened - started,
                plan: planned - opened,
                scan: planned.elapsed(),
            };
            write_stats(
                &mut *streams.stderr,
                &source.metrics().snapshot(),
                open,
                times,
            )
            .map_err(|e| CliError::write("stats", e))?;
        }
        Ok(())
    }
}

/// Writes the rows into `path` through an [`OutputFile`]: the file at
/// `path` changes only if every row was written, and `interrupt` (Ctrl-C)
/// stops the scan leaving nothing behind.
pub(super) async fn write_file(
    table: &Table,
    source: Source<'_>,
    format: ScanFormat,
    path: &Path,
    progress: Progress,
    interrupt: impl Future<Output = ()>,
) -> Result<(), CliError> {
    let root = table
        .store()
        .url()
        .to_file_path()
        .ok()
        .filter(|_| table.store().url().scheme() == "file");
    let mut file = OutputFile::create(path, root.as_slice())?;
    let written = {
        let copy = copy_rows(
            source,
            format,
            Box::new(BufWriter::new(file.writer())),
            progress,
        );
        let copy = std::pin::pin!(copy);
        let interrupt = std::pin::pin!(interrupt);
        match futures::future::select(interrupt, copy).await {
            Either::Left(((), _)) => Err(CliError::Interrupted),
            Either::Right((result, _)) => result.map_err(|e| e.in_file(path)),
        }
    };
    // On an error `file` is dropped here, which removes only its
    // temporary file.
    written?;
    file.commit()
}

/// Resolves on Ctrl-C (never, if the signal cannot be watched).
pub(crate) async fn interrupted() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

fn check_args(args: &ScanArgs) -> Result<(), CliError> {
    check_output(args.rows.format, crate::cli::output_file(&args.rows.output))
}

/// Whether `--format` and `--output` fit together (shared by `dar sql`).
pub(super) fn check_output(format: ScanFormat, output: Option<&Path>) -> Result<(), CliError> {
    match (format, output) {
        (ScanFormat::Parquet, None) => Err(CliError::InvalidArgument {
            argument: "--format",
            reason: "parquet needs --output FILE (a Parquet file cannot be streamed)".into(),
        }),
        (ScanFormat::Null, Some(_)) => Err(CliError::InvalidArgument {
            argument: "--output",
            reason: "--format null writes no rows, only their count to standard output".into(),
        }),
        (_, Some(p)) if is_dir(p) => Err(CliError::InvalidArgument {
            argument: "--output",
            reason: format!("'{}' is a directory", p.display()),
        }),
        _ => Ok(()),
    }
}

fn is_dir(p: &Path) -> bool {
    std::fs::metadata(p).map(|m| m.is_dir()).unwrap_or(false)
}

/// Rows the scan will return, when the log says so exactly (no filter).
fn expected_rows(plan: &ScanPlan, args: &ScanArgs) -> Option<u64> {
    if args.filter.is_some() {
        return None;
    }
    let total: Option<u64> = plan.tasks().iter().map(|t| t.live_rows()).sum();
    match (total, args.limit) {
        (Some(t), Some(l)) => Some(t.min(l as u64)),
        (t, _) => t,
    }
}

/// Splits `--columns`: comma-separated, blanks around names ignored. Each
/// name is an output column name, so a name may appear only once.
pub fn parse_columns(text: &str) -> Result<Vec<String>, CliError> {
    let columns: Vec<String> = text.split(',').map(|c| c.trim().to_string()).collect();
    if columns.iter().any(String::is_empty) {
        return Err(CliError::InvalidArgument {
            argument: "--columns",
            reason: format!("'{text}' has an empty column name"),
        });
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(dup) = columns.iter().find(|c| !seen.insert(c.as_str())) {
        return Err(CliError::InvalidArgument {
            argument: "--columns",
            reason: format!("'{dup}' is listed twice (output column names must be unique)"),
        });
    }
    Ok(columns)
}

fn plan(table: &Table, args: &ScanArgs) -> Result<ScanPlan, CliError> {
    let options = scan_options(
        args.columns.as_deref(),
        args.filter.as_deref(),
        args.limit,
        args.rows.format.view_types(),
    )?;
    table
        .scan()
        .with_options(options)
        .build()
        .map_err(|e| plan_error(table, args.filter.as_deref(), e))
}

/// The scan options of `--columns`, `--filter` and `--limit` (and the
/// output format's view types), the same for `dar scan` and `dar changes`.
pub fn scan_options(
    columns: Option<&str>,
    filter: Option<&str>,
    limit: Option<usize>,
    view_types: bool,
) -> Result<ScanOptions, CliError> {
    let mut options = ScanOptions::new().with_view_types(view_types);
    if let Some(c) = columns {
        options = options.with_columns(parse_columns(c)?);
    }
    if let Some(f) = filter {
        options = options.with_predicate_sql(f);
    }
    if let Some(l) = limit {
        options = options.with_limit(l);
    }
    Ok(options)
}

/// The error for a failed `ScanBuilder::build` of `table` with the filter
/// text `filter`: an unknown column with the nearest names, an invalid
/// filter pointing at the offending token (dar-prune's
/// [`quote_predicate`](dar_prune::quote_predicate) and
/// [`error_site`](dar_prune::error_site), as in
/// [`dar_scan::build_error_message`], worded with the flags), otherwise the
/// scan error.
pub fn plan_error(table: &Table, filter: Option<&str>, error: ScanError) -> CliError {
    match error {
        ScanError::UnknownColumn { column } => CliError::UnknownColumn {
            nearest: dar_prune::nearest_columns(table.schema().fields(), &column),
            column,
        },
        ScanError::Predicate { source } => {
            let filter = filter.unwrap_or_default();
            CliError::Filter {
                near: dar_prune::error_site(filter, &source)
                    .map(|site| format!(" ({site})"))
                    .unwrap_or_default(),
                filter: dar_prune::quote_predicate(filter),
                source,
            }
        }
        other => CliError::Scan(other),
    }
}

pub(super) async fn copy_rows(
    source: Source<'_>,
    format: ScanFormat,
    out: Box<dyn Write + Send + '_>,
    mut progress: Progress,
) -> Result<(), CliError> {
    let mut sink = batch_sink(format, source.schema(), out)?;
    let mut stream = source.execute();
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        sink.write(&batch)?;
        progress.update(&source.metrics().snapshot());
    }
    progress.finish();
    sink.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_split() {
        assert_eq!(parse_columns("a, b.c").unwrap(), ["a", "b.c"]);
        assert!(parse_columns("a,,b").is_err());
        let e = parse_columns("a,b, a").unwrap_err();
        assert!(e.to_string().contains("'a' is listed twice"), "{e}");
    }

    #[tokio::test]
    async fn an_interrupted_scan_leaves_the_old_file_and_no_other() {
        let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/sample");
        let table = Table::open(sample).await.unwrap();
        let plan = table.scan().build().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("rows.csv");
        std::fs::write(&out, "precious").unwrap();
        let progress = Progress::new(false, 0, None);
        let ctrl_c = std::future::ready(());
        let err = write_file(
            &table,
            Source::Plan(&plan),
            ScanFormat::Csv,
            &out,
            progress,
            ctrl_c,
        )
        .await
        .unwrap_err();
        assert!(matches!(err, CliError::Interrupted), "{err}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "precious");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // Not interrupted: the rows replace the file.
        let progress = Progress::new(false, 0, None);
        let never = std::future::pending::<()>();
        write_file(
            &table,
            Source::Plan(&plan),
            ScanFormat::Csv,
            &out,
            progress,
            never,
        )
        .await
        .unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 301);
    }
}
