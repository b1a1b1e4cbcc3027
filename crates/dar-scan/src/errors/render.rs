//! Errors as people read them: one line with the cause chain
//! ([`one_line`]), and a failed [`crate::ScanBuilder::build`] explained
//! with what the caller gave ([`build_error_message`]: the nearest column
//! names, the predicate's text and where a parse error points).
//!
//! The messages name options and inputs generically (`predicate`,
//! `timestamp`), never as one front end spells them; the `dar` command,
//! the Python module and SQL all print these lines.

use std::error::Error as StdError;
use std::fmt::Write as _;

use crate::errors::error::ScanError;
use crate::table::Table;

/// The error and its causes on one line: each cause is appended after `: `
/// unless the message so far already contains it (most errors of the dar
/// crates already print their source), and line breaks and runs of blanks
/// fold to one space.
///
/// ```
/// let e = dar_scan::parse_timestamp_ms("yesterday").unwrap_err();
/// let line = dar_scan::one_line(&dar_scan::ScanError::from(e));
/// assert!(line.starts_with("invalid timestamp 'yesterday'"));
/// ```
pub fn one_line(error: &(dyn StdError + 'static)) -> String {
    let mut line = error.to_string();
    let mut current = error.source();
    while let Some(cause) = current {
        let text = cause.to_string();
        // A cause that only frames its own source ("... of 'path': <its
        // source>"), whose source the line already says, adds nothing.
        let frames_known = cause.source().is_some_and(|inner| {
            let inner = inner.to_string();
            !inner.is_empty() && text.ends_with(&inner) && line.contains(&inner)
        });
        if !text.is_empty() && !line.contains(&text) && !frames_known {
            let _ = write!(line, ": {text}");
        }
        current = cause.source();
    }
    fold(&line)
}

/// `text` on one line, even when a lower layer's message is not.
fn fold(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The one-line message of `error` from [`crate::ScanBuilder::build`] on
/// `table`, where `predicate` is the predicate's SQL text if it was given
/// as text: an unknown column with the nearest column names, an invalid
/// predicate quoted with where a parse error points (`near "> 5"`),
/// anything else as [`one_line`].
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/sample");
/// let table = dar_scan::Table::open(sample).await?;
/// let filter = "fare > > 5";
/// let error = table.scan().with_predicate_sql(filter).build().unwrap_err();
/// let message = dar_scan::build_error_message(&table, Some(filter), &error);
/// assert!(message.starts_with(r#"invalid predicate "fare > > 5" (near "> 5"): "#));
/// # Ok(())
/// # }
/// ```
pub fn build_error_message(table: &Table, predicate: Option<&str>, error: &ScanError) -> String {
    match (error, predicate) {
        (ScanError::UnknownColumn { column }, _) => {
            let nearest = dar_prune::nearest_columns(table.schema().fields(), column);
            if nearest.is_empty() {
                return one_line(error);
            }
            let quoted: Vec<String> = nearest.iter().map(|n| format!("'{n}'")).collect();
            fold(&format!("{error} (nearest: {})", quoted.join(", ")))
        }
        (ScanError::Predicate { source }, Some(text)) => {
            let site = dar_prune::error_site(text, source)
                .map(|s| format!(" ({s})"))
                .unwrap_or_default();
            fold(&format!(
                "invalid predicate \"{}\"{site}: {}",
                dar_prune::quote_predicate(text),
                one_line(source.as_ref())
            ))
        }
        _ => one_line(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot read 'x': {source}")]
    struct Outer {
        source: std::io::Error,
    }

    #[test]
    fn chain_is_deduplicated_and_folded() {
        let e = Outer {
            source: std::io::Error::other("disk\n  full"),
        };
        assert_eq!(one_line(&e), "cannot read 'x': disk full");
        // A cause the message does not print is appended.
        let e = ScanError::Io {
            path: "/t/x.parquet".into(),
            source: Box::new(dar_io::Error::Store {
                path: "t/x.parquet".into(),
                source: object_store::Error::NotFound {
                    path: "t/x.parquet".into(),
                    source: Box::new(std::io::Error::other("gone")),
                },
            }),
        };
        let line = one_line(&e);
        assert!(
            line.starts_with(
                "cannot read data file '/t/x.parquet': not found (gone): object store request"
            ),
            "{line}"
        );
    }

    async fn sample() -> Table {
        let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/sample");
        Table::open(sample).await.unwrap()
    }

    #[tokio::test]
    async fn build_errors_say_what_was_given() {
        let table = sample().await;
        let message = |filter: &str| {
            let e = table.scan().with_predicate_sql(filter).build().unwrap_err();
            build_error_message(&table, Some(filter), &e)
        };
        assert_eq!(
            message("fare > > 5"),
            "invalid predicate \"fare > > 5\" (near \"> 5\"): cannot parse predicate at line 1, \
             column 8: Expected: an expression, found: >"
        );
        assert!(message("fare >").contains("(at the end)"));
        let m = message("fair > 5");
        assert!(
            m.starts_with("invalid predicate \"fair > 5\": unknown column `fair`"),
            "{m}"
        );
        assert_eq!(m.matches("invalid").count(), 1, "{m}");

        let e = table
            .scan()
            .with_columns(["trip_id", "fair"])
            .build()
            .unwrap_err();
        assert_eq!(
            build_error_message(&table, None, &e),
            "projected column 'fair' is not in the table schema (nearest: 'fare')"
        );
        let e = table
            .scan()
            .with_columns(["passenger_count"])
            .build()
            .unwrap_err();
        assert_eq!(
            build_error_message(&table, None, &e),
            "projected column 'passenger_count' is not in the table schema"
        );
        // Other errors are their one-line form.
        let e = table.scan().with_batch_size(0).build().unwrap_err();
        assert_eq!(build_error_message(&table, None, &e), one_line(&e));
    }

    /// The scan options a builder refuses are named as the library names
    /// them, never as a command-line flag.
    #[tokio::test]
    async fn option_messages_never_name_a_flag() {
        let table = sample().await;
        let errors = [
            table.scan().with_batch_size(0).build().unwrap_err(),
            table.scan().with_concurrency(0).build().unwrap_err(),
        ];
        for e in errors {
            assert!(matches!(e, ScanError::InvalidOption { .. }), "{e}");
            let line = build_error_message(&table, None, &e);
            assert!(!line.contains("--"), "{line}");
        }
    }
}
