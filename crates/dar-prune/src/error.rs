//! The crate's one error type.

use arrow_schema::{ArrowError, DataType};

/// Errors raised while building, validating, parsing or evaluating a predicate.
///
/// Pruning itself never returns an error: statistics that cannot be used keep
/// the container and are counted in [`crate::PruningMetrics`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PruneError {
    /// The predicate names a column that the schema does not have.
    #[error("unknown column `{column}`{}", suggest(.suggestions))]
    UnknownColumn {
        /// The dotted column path as written.
        column: String,
        /// The nearest existing column paths (closest first), possibly empty.
        suggestions: Vec<String>,
    },
    /// A path step goes into a column that is not a struct.
    #[error(
        "column `{column}` is of type {data_type}, not a struct, so `{column}.{field}` does not exist"
    )]
    NotAStruct {
        /// The dotted path of the non-struct column.
        column: String,
        /// Its type.
        data_type: DataType,
        /// The field that was asked for inside it.
        field: String,
    },
    /// A literal cannot be compared with a column of this type.
    #[error("cannot compare column `{column}` of type {column_type} with {literal_type} literal {literal}{}", reason_suffix(.reason))]
    IncompatibleTypes {
        /// The dotted column path.
        column: String,
        /// The column's Arrow type.
        column_type: DataType,
        /// The literal's type.
        literal_type: DataType,
        /// The literal, rendered as text.
        literal: String,
        /// Why the literal could not be converted (for example out of range), if known.
        reason: Option<String>,
    },
    /// An operator was applied to a column whose type it does not support
    /// (for example `LIKE` on an integer column, or `col` alone as a
    /// predicate when `col` is not boolean).
    #[error("{operation} is not supported on column `{column}` of type {data_type}")]
    UnsupportedOperation {
        /// What was attempted (`LIKE`, "a predicate", ...).
        operation: String,
        /// The dotted column path.
        column: String,
        /// The column's Arrow type.
        data_type: DataType,
    },
    /// The expression has a shape the evaluator does not accept (for example
    /// a comparison whose operand is itself a comparison).
    #[error("{message}")]
    InvalidExpr {
        /// What is wrong.
        message: String,
    },
    /// The text form could not be parsed.
    #[error("cannot parse predicate at line {line}, column {column}: {message}")]
    Parse {
        /// 1-based line of the offending token (0 when unknown).
        line: u64,
        /// 1-based column of the offending token (0 when unknown).
        column: u64,
        /// What is wrong, including the token where it helps.
        message: String,
    },
    /// The text parsed, but uses SQL that this predicate language does not have.
    #[error("unsupported SQL at line {line}, column {column}: {what}")]
    Unsupported {
        /// 1-based line of the offending construct (0 when unknown).
        line: u64,
        /// 1-based column of the offending construct (0 when unknown).
        column: u64,
        /// The unsupported construct and, where possible, what to use instead.
        what: String,
    },
    /// The predicate nests deeper than [`crate::MAX_EXPR_DEPTH`] levels
    /// (`NOT`s, parentheses, an `OR` inside an `AND` inside ...). Flat
    /// `AND`/`OR` chains of any length do not count against it.
    #[error(
        "the predicate nests deeper than {limit} levels (NOT, parentheses, AND inside OR); long AND/OR chains are fine, deep nesting is not"
    )]
    TooDeep {
        /// The limit, [`crate::MAX_EXPR_DEPTH`].
        limit: usize,
    },
    /// Parentheses right after a keyword (`NOT (`, `CAST(`) nest deeper than
    /// [`crate::MAX_KEYWORD_PAREN_DEPTH`] levels. sqlparser parses each such
    /// parenthesis twice when something inside fails, so their nesting is
    /// bounded more tightly than nesting in general.
    #[error(
        "the predicate nests parentheses after a keyword (like `NOT (` or `CAST(`) deeper than {limit} levels"
    )]
    TooDeepAfterKeyword {
        /// The limit, [`crate::MAX_KEYWORD_PAREN_DEPTH`].
        limit: usize,
    },
    /// A batch handed to the exact evaluator does not fit the predicate
    /// (missing column, or a column of an unexpected type).
    #[error("cannot evaluate predicate on column `{column}`: {message}")]
    BatchMismatch {
        /// The dotted column path.
        column: String,
        /// What did not fit.
        message: String,
    },
    /// An Arrow kernel failed.
    #[error("arrow error while {context}: {source}")]
    Arrow {
        /// What was being done.
        context: String,
        /// The kernel's error.
        #[source]
        source: ArrowError,
    },
}

fn suggest(s: &[String]) -> String {
    if s.is_empty() {
        String::new()
    } else {
        format!(
            " (did you mean {}?)",
            s.iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

fn reason_suffix(r: &Option<String>) -> String {
    r.as_ref().map(|r| format!(": {r}")).unwrap_or_default()
}

impl PruneError {
    pub(crate) fn arrow(context: impl Into<String>, source: ArrowError) -> Self {
        Self::Arrow {
            context: context.into(),
            source,
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = PruneError> = std::result::Result<T, E>;
