//! `dar changes`: the change data feed of a version range, through
//! `dar-scan`'s [`dar_scan::ChangesBuilder`], into the output formats of
//! `dar scan`.

use std::time::Instant;

use dar_scan::{ChangeBound, ScanPlan, Table};

use super::Streams;
use super::scan::{check_output, copy_rows, interrupted, parse_columns, plan_error, write_file};
use crate::cli::{ChangesArgs, ScanFormat, TableArgs};
use crate::error::CliError;
use crate::progress::Progress;
use crate::stats::{WallTimes, write_stats};

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

async fn plan(table: &Table, args: &ChangesArgs) -> Result<ScanPlan, CliError> {
    let (start, end) = bounds(args)?;
    let mut builder = table.changes(start, end);
    if let Some(c) = &args.columns {
        builder = builder.with_columns(parse_columns(c)?);
    }
    if let Some(f) = &args.filter {
        builder = builder.with_predicate_sql(f.clone());
    }
    if let Some(l) = args.limit {
        builder = builder.with_limit(l);
    }
    builder
        .build()
        .await
        .map_err(|e| plan_error(table, args.filter.as_deref(), e))
}

/// Runs `dar changes`.
pub async fn run(args: &ChangesArgs, streams: &mut Streams<'_>) -> Result<(), CliError> {
    check_output(args.format, args.output.as_deref())?;
    bounds(args)?;
    let started = Instant::now();
    let table = crate::table::open(&TableArgs {
        table: args.table.clone(),
        version: None,
        timestamp: None,
        storage_options: args.storage_options.clone(),
        confine_paths: args.confine_paths,
    })
    .await?;
    let open_io = table.store().metrics().snapshot();
    let opened = Instant::now();
    let plan = plan(&table, args).await?;
    let planned = Instant::now();
    match &args.output {
        Some(path) => {
            let progress = Progress::new(
                streams.stderr_is_terminal && args.format != ScanFormat::Null,
                plan.tasks().len(),
                None,
            );
            write_file(&table, &plan, args.format, path, progress, interrupted()).await?;
        }
        None => {
            let progress = Progress::new(false, 0, None);
            copy_rows(&plan, args.format, Box::new(&mut *streams.stdout), progress).await?;
        }
    }
    if args.stats {
        let times = WallTimes {
            open: opened - started,
            plan: planned - opened,
            scan: planned.elapsed(),
        };
        write_stats(
            &mut *streams.stderr,
            &plan.metrics().snapshot(),
            &open_io,
            times,
        )
        .map_err(|e| CliError::write("stats", e))?;
    }
    Ok(())
}
