//! Opening the table named on the command line: storage options, version or
//! timestamp.

use dar_io::StorageOptions;
use dar_scan::{Table, TableOptions};

use crate::cli::{CacheArgs, TableArgs};
use crate::error::CliError;

/// Parses `--timestamp` ([`dar_scan::parse_timestamp_ms`]: RFC 3339 or
/// milliseconds since the epoch), its errors naming the flag.
pub fn parse_timestamp_ms(text: &str) -> Result<i64, CliError> {
    dar_scan::parse_timestamp_ms(text).map_err(|error| CliError::TableOption {
        flag: "--timestamp",
        error,
    })
}

/// Parses the `--storage-option KEY=VALUE` list
/// ([`dar_scan::parse_storage_options`]: errors never quote a value, a
/// malformed entry is named by its position).
pub fn parse_storage_options(entries: &[String]) -> Result<StorageOptions, CliError> {
    dar_scan::parse_storage_options(entries).map_err(|error| CliError::TableOption {
        flag: "--storage-option",
        error,
    })
}

/// `options` with the caches of a one-shot command: no memory tier (one
/// scan reads each byte once), the disk tier of `--cache-dir` if given.
pub fn with_cache(options: TableOptions, cache: &CacheArgs) -> TableOptions {
    with_disk_cache(options.with_data_cache_bytes(0), cache)
}

/// `options` with the disk tier of `--cache-dir` if given.
fn with_disk_cache(options: TableOptions, cache: &CacheArgs) -> TableOptions {
    match &cache.cache_dir {
        Some(dir) => {
            let options = options.with_cache_dir(dir);
            match cache.cache_dir_mib {
                Some(mib) => options.with_cache_dir_bytes(mib.saturating_mul(1024 * 1024)),
                None => options,
            }
        }
        None => options,
    }
}

/// The storage options and path confinement of `args`.
fn store_options(args: &TableArgs) -> Result<TableOptions, CliError> {
    Ok(TableOptions::new()
        .with_storage_options(parse_storage_options(&args.storage_options)?)
        .with_paths_confined_to_root(args.confine_paths))
}

/// The table options for `args` (version, storage options, confinement,
/// cache directory).
pub fn table_options(args: &TableArgs) -> Result<TableOptions, CliError> {
    let mut options = with_cache(store_options(args)?, &args.cache);
    if let Some(v) = args.version {
        options = options.with_version(v);
    }
    if let Some(t) = &args.timestamp {
        options = options.with_timestamp_ms(parse_timestamp_ms(t)?);
    }
    Ok(options)
}

/// Opens the table of `args`.
pub async fn open(args: &TableArgs) -> Result<Table, CliError> {
    open_for(args, None).await
}

/// Opens the table of `args` for one query with `filter`: the file
/// statistics of the columns it names are parsed while the table opens
/// (in the pass that decodes a checkpoint's counts, see
/// [`TableOptions::with_stats_for_predicate`]).
pub async fn open_for(args: &TableArgs, filter: Option<&str>) -> Result<Table, CliError> {
    let mut options = table_options(args)?;
    if let Some(f) = filter {
        options = options.with_stats_for_predicate(f);
    }
    Ok(Table::open_with(&args.table, options).await?)
}

/// Opens the table of `args` for a change data feed, with the library's
/// memory tier of fetched bytes (on object storage; off on local disk): a
/// feed reads a data file in each commit that adds or removes it, so a
/// file added and later removed within the range is fetched once, as by
/// the library and the Python package.
pub async fn open_for_feed(args: &TableArgs) -> Result<Table, CliError> {
    let options = with_disk_cache(store_options(args)?, &args.cache);
    Ok(Table::open_with(&args.table, options).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(
            parse_timestamp_ms("1700000000123").unwrap(),
            1_700_000_000_123
        );
        assert_eq!(
            parse_timestamp_ms("2024-01-31T12:00:00Z").unwrap(),
            1_706_702_400_000
        );
        let e = parse_timestamp_ms("99999999999999999999").unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        let e = parse_timestamp_ms("yesterday").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("invalid --timestamp 'yesterday': neither RFC 3339"),
            "{e}"
        );
    }

    #[test]
    fn storage_options_never_echo_values() {
        let o = parse_storage_options(&["AWS_REGION=eu-west-1".into(), "k==v".into()]).unwrap();
        assert_eq!(o.get("aws_region"), Some("eu-west-1"));
        assert_eq!(o.get("k"), Some("=v"));
        let e = parse_storage_options(&["a=b".into(), "SECRETVALUE".into()]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid --storage-option: entry 2 is not KEY=VALUE"
        );
        assert!(parse_storage_options(&["=x".into()]).is_err());
    }
}
