//! `dar changes`: the change data feed of a version range, through
//! `dar-scan`'s [`dar_scan::ChangesBuilder`], into the output formats of
//! `dar scan`, commit by commit ([`dar_scan::ChangeScan::execute`]): the
//! first rows are written before the later commits are read.

use std::time::Instant;

use dar_scan::{ChangeBound, ChangeScan, Table};

use super::Streams;
use super::scan::{Rows, Source, check_output, plan_error, scan_options};
use crate::cli::{ChangesArgs, TableArgs};
use crate::error::CliError;

/// Parses a `--from-timestamp` / `--to-timestamp` value, its errors naming
/// the flag.
fn timestamp(flag: &'static str, text: &str) -> Result<i64, CliError> {
    dar_scan::parse_timestamp_ms(text).map_err(|error| CliError::TableOption { flag, error })
}

/// The range of the flags.
fn bounds(args: &ChangesArgs) -> Result<(ChangeBound, Option<ChangeBound>), CliError> {
    let start = match (&args.from, &args.from_timestamp) {
        (Some(v), _) => ChangeBound::Version(*v),
        (None, Some(t)) => ChangeBound::TimestampMs(timestamp("--from-timestamp", t)?),
        (None, None) => {
            return Err(CliError::InvalidArgument {
                argument: "--from",
                reason: "give the first version (--from V) or time (--from-timestamp T)".into(),
            });
        }
    };
    let end = match (&args.to, &args.to_timestamp) {
        (Some(v), _) => Some(ChangeBound::Version(*v)),
        (None, Some(t)) => Some(ChangeBound::TimestampMs(timestamp("--to-timestamp", t)?)),
        (None, None) => None,
    };
    Ok((start, end))
}

/// The feed opened: its range resolved and its end checked; its commits
/// are read as its rows are written. Without an end, through the version
/// the table's open found (the latest when `dar changes` starts), whose
/// listing the feed then takes instead of listing the log again.
async fn open(table: &Table, args: &ChangesArgs) -> Result<ChangeScan, CliError> {
    let (start, end) = bounds(args)?;
    let end = end.unwrap_or(ChangeBound::Version(table.version()));
    let options = scan_options(
        args.columns.as_deref(),
        args.filter.as_deref(),
        args.limit,
        args.rows.format.view_types(),
    )?;
    table
        .changes(start, Some(end))
        .with_options(options)
        .open()
        .await
        .map_err(|e| plan_error(table, args.filter.as_deref(), e))
}

/// Runs `dar changes`.
pub async fn run(args: &ChangesArgs, streams: &mut Streams<'_>) -> Result<(), CliError> {
    check_output(args.rows.format, crate::cli::output_file(&args.rows.output))?;
    bounds(args)?;
    let started = Instant::now();
    let table = crate::table::open_for_feed(&TableArgs {
        table: args.table.clone(),
        version: None,
        timestamp: None,
        storage_options: args.storage_options.clone(),
        confine_paths: args.confine_paths,
        cache: args.cache.clone(),
    })
    .await?;
    let open_done = crate::stats::Opened::of(&table);
    let opened = Instant::now();
    let scan = open(&table, args).await?;
    let planned = Instant::now();
    let rows = Rows::new(&args.rows, None);
    let source = Source::Changes(&scan);
    rows.write(
        &table,
        source,
        streams,
        &open_done,
        [started, opened, planned],
    )
    .await
}
