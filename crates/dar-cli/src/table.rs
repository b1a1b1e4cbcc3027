//! Opening the table named on the command line: storage options, version or
//! timestamp.

use chrono::DateTime;
use dar_io::StorageOptions;
use dar_scan::{Table, TableOptions};

use crate::cli::TableArgs;
use crate::error::CliError;

/// Parses `--timestamp`: RFC 3339 (`2024-01-31T12:00:00Z`,
/// `2024-01-31T12:00:00.5+01:00`) or an integer number of milliseconds since
/// the epoch.
pub fn parse_timestamp_ms(text: &str) -> Result<i64, CliError> {
    let text = text.trim();
    let invalid = |reason: String| CliError::InvalidArgument {
        argument: "--timestamp",
        reason,
    };
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if !unsigned.is_empty() && unsigned.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse::<i64>().map_err(|_| {
            invalid(format!(
                "'{text}' milliseconds since the epoch is out of range (at most {} digits)",
                i64::MAX.to_string().len() - 1
            ))
        });
    }
    // RFC 3339 years have four digits; chrono calls a longer one "invalid
    // characters".
    let year_digits = unsigned.bytes().take_while(u8::is_ascii_digit).count();
    if year_digits > 4 && unsigned.as_bytes().get(year_digits) == Some(&b'-') {
        return Err(invalid(format!(
            "'{text}' is out of range (RFC 3339 years run from 0000 to 9999)"
        )));
    }
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.timestamp_millis())
        .map_err(|e| {
            invalid(format!(
                "'{text}' is neither RFC 3339 (like 2024-01-31T12:00:00Z) nor milliseconds since the epoch ({e})"
            ))
        })
}

/// Parses the `--storage-option KEY=VALUE` list. Errors never quote a value
/// (it may be a secret); a malformed entry is named by its position.
pub fn parse_storage_options(entries: &[String]) -> Result<StorageOptions, CliError> {
    let mut options = StorageOptions::new();
    for (i, entry) in entries.iter().enumerate() {
        match entry.split_once('=') {
            Some((key, value)) if !key.trim().is_empty() => {
                options.insert(key.trim(), value);
            }
            _ => {
                return Err(CliError::InvalidArgument {
                    argument: "--storage-option",
                    reason: format!("entry {} is not KEY=VALUE", i + 1),
                });
            }
        }
    }
    Ok(options)
}

/// The table options for `args` (version, storage options, confinement).
pub fn table_options(args: &TableArgs) -> Result<TableOptions, CliError> {
    let mut options = TableOptions::new()
        .with_storage_options(parse_storage_options(&args.storage_options)?)
        .with_paths_confined_to_root(args.confine_paths);
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
    let options = table_options(args)?;
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
        assert_eq!(parse_timestamp_ms("-5").unwrap(), -5);
        assert_eq!(
            parse_timestamp_ms("2024-01-31T12:00:00Z").unwrap(),
            1_706_702_400_000
        );
        assert_eq!(
            parse_timestamp_ms("2024-01-31T13:00:00.250+01:00").unwrap(),
            1_706_702_400_250
        );
        let e = parse_timestamp_ms("99999999999999999999").unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        let e = parse_timestamp_ms("10000-01-01T00:00:00Z").unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        assert!(!e.to_string().contains("invalid characters"), "{e}");
        let e = parse_timestamp_ms("2024-13-01T00:00:00Z").unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        let e = parse_timestamp_ms("yesterday").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("invalid --timestamp: 'yesterday'")
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
