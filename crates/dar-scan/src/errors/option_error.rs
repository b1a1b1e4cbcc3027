//! [`TableOptionError`]: a table option given as text that does not parse
//! (see `options.rs`, the parser), in a module of its own so that
//! [`crate::ScanError`] can wrap it without depending on the parser.

use std::fmt;

/// The most digits of milliseconds since the epoch that always fit `i64`.
pub(crate) const MILLIS_DIGITS: usize = 18;

/// The table options that are given as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TableOption {
    /// The version to load.
    Version,
    /// The point in time to load the table at.
    Timestamp,
    /// A storage setting (credentials, endpoint, region, ...).
    StorageOption,
}

impl TableOption {
    /// The option's generic name in messages: `version`, `timestamp`,
    /// `storage option`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Version => "version",
            Self::Timestamp => "timestamp",
            Self::StorageOption => "storage option",
        }
    }
}

/// A table option given as text that does not parse. The message quotes a
/// version's or timestamp's text, never a storage option's value.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TableOptionError {
    /// A version that is not a non-negative integer.
    Version {
        /// The text given (trimmed, shortened when long).
        text: String,
    },
    /// A version larger than `u64::MAX`.
    VersionOutOfRange {
        /// The text given (trimmed, shortened when long).
        text: String,
    },
    /// A timestamp that is neither RFC 3339 nor milliseconds since the
    /// epoch.
    Timestamp {
        /// The text given (trimmed, shortened when long).
        text: String,
        /// What the RFC 3339 parser found wrong.
        reason: String,
    },
    /// Milliseconds since the epoch that do not fit 64 bits.
    TimestampMillisOutOfRange {
        /// The text given (trimmed, shortened when long).
        text: String,
    },
    /// An RFC 3339 timestamp whose year has more than four digits.
    TimestampYearOutOfRange {
        /// The text given (trimmed, shortened when long).
        text: String,
    },
    /// A storage option entry that is not `KEY=VALUE` with a non-empty
    /// key. Named by its position: the entry may hold a secret.
    StorageEntry {
        /// The entry's 1-based position.
        entry: usize,
    },
    /// Both a version and a timestamp were given.
    VersionAndTimestamp,
    /// The same option was given twice among key/value pairs.
    Repeated {
        /// The option.
        option: TableOption,
    },
}

impl TableOptionError {
    /// The option the error is about (a conflict: the timestamp).
    pub fn option(&self) -> TableOption {
        match self {
            Self::Version { .. } | Self::VersionOutOfRange { .. } => TableOption::Version,
            Self::Timestamp { .. }
            | Self::TimestampMillisOutOfRange { .. }
            | Self::TimestampYearOutOfRange { .. }
            | Self::VersionAndTimestamp => TableOption::Timestamp,
            Self::StorageEntry { .. } => TableOption::StorageOption,
            Self::Repeated { option } => *option,
        }
    }

    /// The message, naming the option as `name` (how the caller spells it:
    /// `--timestamp` on a command line). The [`fmt::Display`] form is this
    /// with the generic name ([`TableOption::name`]). A conflict names
    /// both options generically.
    ///
    /// ```
    /// let e = dar_scan::parse_timestamp_ms("yesterday").unwrap_err();
    /// assert!(e.to_string().starts_with("invalid timestamp 'yesterday': neither RFC 3339"));
    /// assert!(e.message_for("--timestamp").starts_with("invalid --timestamp 'yesterday'"));
    /// ```
    pub fn message_for(&self, name: &str) -> String {
        match self {
            Self::Version { text } => {
                format!("invalid {name} '{text}': expected a non-negative integer")
            }
            Self::VersionOutOfRange { text } => {
                let max = u64::MAX;
                format!("invalid {name} '{text}': out of range (at most {max})")
            }
            Self::Timestamp { text, reason } => format!(
                "invalid {name} '{text}': neither RFC 3339 (like 2024-01-31T12:00:00Z) nor \
                 milliseconds since the epoch ({reason})"
            ),
            Self::TimestampMillisOutOfRange { text } => format!(
                "invalid {name} '{text}': milliseconds since the epoch out of range (at most \
                 {MILLIS_DIGITS} digits)"
            ),
            Self::TimestampYearOutOfRange { text } => format!(
                "invalid {name} '{text}': out of range (RFC 3339 years run from 0000 to 9999)"
            ),
            Self::StorageEntry { entry } => {
                format!("invalid {name}: entry {entry} is not KEY=VALUE")
            }
            Self::VersionAndTimestamp => "version and timestamp cannot both be given".to_string(),
            Self::Repeated { .. } => format!("{name} is given twice"),
        }
    }
}

impl fmt::Display for TableOptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message_for(self.option().name()))
    }
}

impl std::error::Error for TableOptionError {}
