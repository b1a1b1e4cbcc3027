//! Table options given as text: which version ([`parse_version`]), which
//! point in time ([`parse_timestamp_ms`]), which storage settings
//! ([`parse_storage_options`], `KEY=VALUE` entries), or all three as
//! key/value pairs ([`TableOptions::from_pairs`], as SQL `OPTIONS (...)` or
//! a configuration map give them).
//!
//! The one parser behind the `dar` command line, the Python module and
//! `STORED AS DELTA`, so all three accept the same text and say the same
//! about text they refuse: a [`TableOptionError`] that names the option
//! generically (`invalid timestamp '...'`); a front end that spells the
//! option otherwise (`--timestamp`) words it with
//! [`TableOptionError::message_for`]. No error quotes a storage option's
//! value: values can be secrets.

use chrono::DateTime;
use dar_io::StorageOptions;

use crate::errors::option_error::{TableOption, TableOptionError};
use crate::table::TableOptions;

/// Characters of a version's or timestamp's text an error quotes at most.
const TEXT_LIMIT: usize = 64;

/// `text` as an error quotes it: trimmed, shortened when long.
fn quoted(text: &str) -> String {
    match text.char_indices().nth(TEXT_LIMIT) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}... ({} bytes)", &text[..cut], text.len()),
    }
}

/// Parses a version: a non-negative integer (blanks around it ignored).
///
/// # Errors
///
/// [`TableOptionError::Version`] for anything else,
/// [`TableOptionError::VersionOutOfRange`] beyond `u64::MAX`.
///
/// ```
/// assert_eq!(dar_scan::parse_version(" 3 ")?, 3);
/// assert!(dar_scan::parse_version("-1").is_err());
/// # Ok::<(), dar_scan::TableOptionError>(())
/// ```
pub fn parse_version(text: &str) -> Result<u64, TableOptionError> {
    let text = text.trim();
    let digits = text.strip_prefix('+').unwrap_or(text);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return digits
            .parse::<u64>()
            .map_err(|_| TableOptionError::VersionOutOfRange { text: quoted(text) });
    }
    Err(TableOptionError::Version { text: quoted(text) })
}

/// Parses a timestamp: RFC 3339 (`2024-01-31T12:00:00Z`,
/// `2024-01-31T12:00:00.5+01:00`) or an integer number of milliseconds
/// since the epoch; blanks around it ignored.
///
/// # Errors
///
/// [`TableOptionError::TimestampMillisOutOfRange`] for digits that do not
/// fit `i64`, [`TableOptionError::TimestampYearOutOfRange`] for a year of
/// more than four digits, [`TableOptionError::Timestamp`] for text that
/// is neither form (with the RFC 3339 parser's reason).
///
/// ```
/// assert_eq!(dar_scan::parse_timestamp_ms("2024-01-31T12:00:00Z")?, 1_706_702_400_000);
/// assert_eq!(dar_scan::parse_timestamp_ms("1706702400000")?, 1_706_702_400_000);
/// # Ok::<(), dar_scan::TableOptionError>(())
/// ```
pub fn parse_timestamp_ms(text: &str) -> Result<i64, TableOptionError> {
    let text = text.trim();
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if !unsigned.is_empty() && unsigned.bytes().all(|b| b.is_ascii_digit()) {
        return text
            .parse::<i64>()
            .map_err(|_| TableOptionError::TimestampMillisOutOfRange { text: quoted(text) });
    }
    // RFC 3339 years have four digits; chrono calls a longer one "invalid
    // characters".
    let year_digits = unsigned.bytes().take_while(u8::is_ascii_digit).count();
    if year_digits > 4 && unsigned.as_bytes().get(year_digits) == Some(&b'-') {
        return Err(TableOptionError::TimestampYearOutOfRange { text: quoted(text) });
    }
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.timestamp_millis())
        .map_err(|e| TableOptionError::Timestamp {
            text: quoted(text),
            reason: e.to_string(),
        })
}

/// Parses storage options given as `KEY=VALUE` entries (keys trimmed and
/// case-insensitive, values kept as given: `k==v` sets `k` to `=v`). An
/// entry without `=` or with an empty key is an error naming its position,
/// never its text.
///
/// # Errors
///
/// [`TableOptionError::StorageEntry`], naming the first malformed entry.
///
/// ```
/// let options = dar_scan::parse_storage_options(&["AWS_REGION=eu-west-1"])?;
/// assert_eq!(options.get("aws_region"), Some("eu-west-1"));
/// let e = dar_scan::parse_storage_options(&["a=b", "SECRET"]).unwrap_err();
/// assert_eq!(e.to_string(), "invalid storage option: entry 2 is not KEY=VALUE");
/// # Ok::<(), dar_scan::TableOptionError>(())
/// ```
pub fn parse_storage_options<S: AsRef<str>>(
    entries: &[S],
) -> Result<StorageOptions, TableOptionError> {
    let mut options = StorageOptions::new();
    for (i, entry) in entries.iter().enumerate() {
        match entry.as_ref().split_once('=') {
            Some((key, value)) if !key.trim().is_empty() => options.insert(key.trim(), value),
            _ => return Err(TableOptionError::StorageEntry { entry: i + 1 }),
        }
    }
    Ok(options)
}

impl TableOptions {
    /// Options from key/value text pairs, as SQL `OPTIONS (...)` or a
    /// configuration map give them: `version` ([`parse_version`]),
    /// `timestamp` ([`parse_timestamp_ms`]), and every other key a storage
    /// option (its value kept as given). Keys are trimmed and
    /// case-insensitive.
    ///
    /// # Errors
    ///
    /// A version or timestamp that does not parse (as [`parse_version`] and
    /// [`parse_timestamp_ms`]), [`TableOptionError::VersionAndTimestamp`]
    /// when both are given, [`TableOptionError::Repeated`] when either is
    /// given twice.
    ///
    /// ```
    /// use dar_scan::{TableOptions, VersionSpec};
    ///
    /// let options = TableOptions::from_pairs([
    ///     ("timestamp", "2024-01-31T12:00:00Z"),
    ///     ("aws_region", "eu-west-1"),
    /// ])?;
    /// assert_eq!(options.version_spec(), VersionSpec::TimestampMs(1_706_702_400_000));
    /// assert_eq!(options.storage_options().get("aws_region"), Some("eu-west-1"));
    /// # Ok::<(), dar_scan::TableOptionError>(())
    /// ```
    pub fn from_pairs<K, V>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Self, TableOptionError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        Self::new().with_pairs(pairs)
    }

    /// [`Self::from_pairs`] onto these options: a version or timestamp
    /// among `pairs` replaces the one set before; storage options are added
    /// to those set before, a key given here winning.
    ///
    /// # Errors
    ///
    /// As [`Self::from_pairs`].
    pub fn with_pairs<K, V>(
        mut self,
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Self, TableOptionError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut storage = self.storage_options().clone();
        let mut version = None;
        let mut timestamp = None;
        for (key, value) in pairs {
            let key = key.as_ref().trim();
            let value = value.as_ref();
            if key.eq_ignore_ascii_case("version") {
                set_once(&mut version, TableOption::Version, parse_version(value)?)?;
            } else if key.eq_ignore_ascii_case("timestamp") {
                set_once(
                    &mut timestamp,
                    TableOption::Timestamp,
                    parse_timestamp_ms(value)?,
                )?;
            } else {
                storage.insert(key, value);
            }
        }
        self = match (version, timestamp) {
            (Some(_), Some(_)) => return Err(TableOptionError::VersionAndTimestamp),
            (Some(v), None) => self.with_version(v),
            (None, Some(t)) => self.with_timestamp_ms(t),
            (None, None) => self,
        };
        Ok(self.with_storage_options(storage))
    }
}

fn set_once<T>(
    slot: &mut Option<T>,
    option: TableOption,
    value: T,
) -> Result<(), TableOptionError> {
    if slot.replace(value).is_some() {
        return Err(TableOptionError::Repeated { option });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::VersionSpec;
    use crate::{ScanError, one_line};

    #[test]
    fn versions() {
        assert_eq!(parse_version("0").unwrap(), 0);
        assert_eq!(parse_version(" +12 ").unwrap(), 12);
        assert_eq!(parse_version(&u64::MAX.to_string()).unwrap(), u64::MAX);
        for bad in ["", "x", "-1", "1.5", "1e3", "0x10"] {
            let e = parse_version(bad).unwrap_err();
            assert!(
                matches!(e, TableOptionError::Version { .. }),
                "{bad}: {e:?}"
            );
            assert!(
                e.to_string().contains("expected a non-negative integer"),
                "{e}"
            );
        }
        let e = parse_version("18446744073709551616").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid version '18446744073709551616': out of range (at most 18446744073709551615)"
        );
    }

    #[test]
    fn timestamps() {
        assert_eq!(
            parse_timestamp_ms("1700000000123").unwrap(),
            1_700_000_000_123
        );
        assert_eq!(parse_timestamp_ms("-5").unwrap(), -5);
        assert_eq!(parse_timestamp_ms(" +5 ").unwrap(), 5);
        assert_eq!(
            parse_timestamp_ms("2024-01-31T12:00:00Z").unwrap(),
            1_706_702_400_000
        );
        assert_eq!(
            parse_timestamp_ms("2024-01-31T13:00:00.250+01:00").unwrap(),
            1_706_702_400_250
        );
        let e = parse_timestamp_ms("99999999999999999999").unwrap_err();
        assert!(
            matches!(e, TableOptionError::TimestampMillisOutOfRange { .. }),
            "{e:?}"
        );
        assert!(
            e.to_string().contains("out of range (at most 18 digits)"),
            "{e}"
        );
        // The largest 18-digit number fits, as the message promises.
        assert!(parse_timestamp_ms(&"9".repeat(18)).is_ok());
        let e = parse_timestamp_ms("10000-01-01T00:00:00Z").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid timestamp '10000-01-01T00:00:00Z': out of range (RFC 3339 years run from 0000 to 9999)"
        );
        let e = parse_timestamp_ms("2024-13-01T00:00:00Z").unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        let e = parse_timestamp_ms(" yesterday ").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid timestamp 'yesterday': neither RFC 3339 (like 2024-01-31T12:00:00Z) nor \
             milliseconds since the epoch (premature end of input)"
        );
        assert_eq!(
            e.message_for("--timestamp"),
            e.to_string().replace("timestamp", "--timestamp")
        );
    }

    #[test]
    fn long_text_is_quoted_shortened() {
        let long = format!("2024{}", "x".repeat(1000));
        let e = parse_timestamp_ms(&long).unwrap_err();
        assert!(e.to_string().len() < 250, "{e}");
        assert!(e.to_string().contains("(1004 bytes)"), "{e}");
    }

    #[test]
    fn storage_options_never_echo_values() {
        let o = parse_storage_options(&["AWS_REGION=eu-west-1", " k ==v"]).unwrap();
        assert_eq!(o.get("aws_region"), Some("eu-west-1"));
        assert_eq!(o.get("k"), Some("=v"));
        for bad in [&["a=b", "SECRETVALUE"][..], &["a=b", "=SECRETVALUE"]] {
            let e = parse_storage_options(bad).unwrap_err();
            assert_eq!(e, TableOptionError::StorageEntry { entry: 2 });
            assert_eq!(
                e.to_string(),
                "invalid storage option: entry 2 is not KEY=VALUE"
            );
            assert_eq!(
                e.message_for("--storage-option"),
                "invalid --storage-option: entry 2 is not KEY=VALUE"
            );
        }
    }

    #[test]
    fn pairs() {
        let o = TableOptions::from_pairs([(" Version ", "3"), ("AWS_REGION", "x")]).unwrap();
        assert_eq!(o.version_spec(), VersionSpec::Version(3));
        assert_eq!(o.storage_options().get("aws_region"), Some("x"));
        let o = TableOptions::from_pairs([("timestamp", "1970-01-01T00:00:01Z")]).unwrap();
        assert_eq!(o.version_spec(), VersionSpec::TimestampMs(1000));
        let none: [(&str, &str); 0] = [];
        assert_eq!(
            TableOptions::from_pairs(none).unwrap().version_spec(),
            VersionSpec::Latest
        );
        // Onto options set before: storage added to, a key given here wins.
        let base = TableOptions::new()
            .with_version(7)
            .with_storage_options(StorageOptions::new().with("a", "1").with("b", "2"));
        let o = base.with_pairs([("B", "3"), ("timestamp", "0")]).unwrap();
        assert_eq!(o.version_spec(), VersionSpec::TimestampMs(0));
        assert_eq!(o.storage_options().get("a"), Some("1"));
        assert_eq!(o.storage_options().get("b"), Some("3"));

        let e = TableOptions::from_pairs([("version", "1"), ("timestamp", "0")]).unwrap_err();
        assert_eq!(e, TableOptionError::VersionAndTimestamp);
        let e = TableOptions::from_pairs([("version", "1"), ("VERSION", "2")]).unwrap_err();
        assert_eq!(e.to_string(), "version is given twice");
        let e = TableOptions::from_pairs([("version", "x")]).unwrap_err();
        assert!(matches!(e, TableOptionError::Version { .. }), "{e:?}");
    }

    /// No message about an option names a command-line flag: the library's
    /// messages name options generically, front ends reword them.
    #[test]
    fn option_messages_never_name_a_flag() {
        let mut errors: Vec<TableOptionError> = Vec::new();
        for text in ["", "x", "-1", "99999999999999999999999", "1.5"] {
            errors.push(parse_version(text).unwrap_err());
        }
        for text in [
            "",
            "yesterday",
            "99999999999999999999999",
            "99999-01-01T00:00:00Z",
            "2024-13-01T00:00:00Z",
            "2024-01-31",
        ] {
            errors.push(parse_timestamp_ms(text).unwrap_err());
        }
        errors.push(parse_storage_options(&["novalue"]).unwrap_err());
        errors.push(TableOptions::from_pairs([("version", "1"), ("timestamp", "1")]).unwrap_err());
        errors
            .push(TableOptions::from_pairs([("timestamp", "1"), ("timestamp", "1")]).unwrap_err());
        assert_eq!(errors.len(), 14);
        for e in errors {
            let scan = ScanError::from(e);
            let line = one_line(&scan);
            assert!(!line.contains("--"), "{line}");
            assert!(!line.is_empty());
        }
    }
}
