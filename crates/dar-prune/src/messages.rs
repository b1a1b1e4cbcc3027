//! A predicate's text in error messages: quoted shortened when long, and
//! the place a parse error points at (` (near "> 5")`).
//!
//! [`PruneError`] knows the line and column of a parse error, not the text
//! the caller parsed; a caller that still has the text (a scan builder, a
//! command line, a Python argument) shapes its message with these.

use std::fmt;

use crate::error::PruneError;

/// Characters of a predicate an error quotes at most.
const PREDICATE_LIMIT: usize = 80;
/// Characters from the offending token on that an error quotes at most.
const NEAR_LIMIT: usize = 30;

/// Where in a predicate's text an error points, as [`error_site`] finds it.
/// Displays as `near "> 5"` or `at the end`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorSite {
    /// The text from the offending token on (shortened when long).
    Near(String),
    /// The text ended where more was expected.
    AtEnd,
}

impl fmt::Display for ErrorSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Near(text) => write!(f, "near \"{text}\""),
            Self::AtEnd => f.write_str("at the end"),
        }
    }
}

/// Where `error`, raised while parsing `predicate`, points: the text from
/// the offending token on, or its end. `None` for errors without a
/// position (an unknown column, a type mismatch) or whose position is not
/// in `predicate`.
///
/// ```
/// let text = "fare > > 5";
/// let error = dar_prune::parse_expr(text).unwrap_err();
/// let site = dar_prune::error_site(text, &error).unwrap();
/// assert_eq!(site.to_string(), "near \"> 5\"");
/// ```
pub fn error_site(predicate: &str, error: &PruneError) -> Option<ErrorSite> {
    let (line, column) = match error {
        PruneError::Parse { line, column, .. } | PruneError::Unsupported { line, column, .. } => {
            (*line, *column)
        }
        _ => return None,
    };
    if line == 0 || column == 0 {
        return None;
    }
    let text = predicate.lines().nth(usize::try_from(line - 1).ok()?)?;
    let rest: String = text
        .chars()
        .skip(usize::try_from(column - 1).ok()?)
        .collect();
    if rest.trim().is_empty() {
        Some(ErrorSite::AtEnd)
    } else {
        Some(ErrorSite::Near(shorten(rest.trim_end(), NEAR_LIMIT)))
    }
}

/// `predicate` as an error message quotes it: whole when short, else its
/// first 80 characters, `...` and its length in bytes.
///
/// ```
/// assert_eq!(dar_prune::quote_predicate("fare > 1"), "fare > 1");
/// let long = "fare > 1 AND ".repeat(100);
/// assert!(dar_prune::quote_predicate(&long).ends_with("... (1300 bytes)"));
/// ```
pub fn quote_predicate(predicate: &str) -> String {
    shorten(predicate, PREDICATE_LIMIT)
}

/// At most `limit` characters of `text`, then `...` and its full length.
fn shorten(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}... ({} bytes)", &text[..cut], text.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_error(line: u64, column: u64) -> PruneError {
        PruneError::Parse {
            line,
            column,
            message: String::new(),
        }
    }

    #[test]
    fn site_points_at_the_token_or_the_end() {
        assert_eq!(
            error_site("fare >> 5", &parse_error(1, 6)),
            Some(ErrorSite::Near(">> 5".into()))
        );
        assert_eq!(
            error_site("fare >", &parse_error(1, 7)),
            Some(ErrorSite::AtEnd)
        );
        assert_eq!(
            error_site("a = 1\nAND b >", &parse_error(2, 5)),
            Some(ErrorSite::Near("b >".into()))
        );
        // Positions outside the text, unknown positions, other errors.
        assert_eq!(error_site("a", &parse_error(3, 1)), None);
        assert_eq!(error_site("a", &parse_error(0, 0)), None);
        let unknown = PruneError::UnknownColumn {
            column: "x".into(),
            suggestions: vec![],
        };
        assert_eq!(error_site("x = 1", &unknown), None);
    }

    #[test]
    fn long_text_is_shortened_with_its_length() {
        let long = "fare > 1 AND ".repeat(1000);
        let short = quote_predicate(&long);
        assert!(short.len() < 120, "{short}");
        assert!(
            short.ends_with(&format!("... ({} bytes)", long.len())),
            "{short}"
        );
        assert_eq!(quote_predicate("fare > 1"), "fare > 1");
        let near = error_site(&format!("a >{}", "x".repeat(100)), &parse_error(1, 3));
        assert_eq!(
            near.map(|s| s.to_string()),
            Some(format!(
                "near \"{}... (101 bytes)\"",
                &format!(">{}", "x".repeat(29))
            ))
        );
    }
}
