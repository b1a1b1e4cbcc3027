//! The crate's one error type.
//!
//! Errors from the crates below (`dar-io`, `dar-log`, `dar-prune`,
//! `dar-dv`, parquet, arrow) are wrapped with what the scan was doing and,
//! for per-file work, the data file's object path. Table URIs are kept in
//! redacted form (`dar_io::redact_uri`), so an error never carries
//! credentials.

/// Errors from `dar-scan`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScanError {
    /// The table's object store could not be opened.
    #[error("cannot open table '{uri}': {source}")]
    Open {
        /// The table URI, redacted.
        uri: String,
        /// The `dar-io` error.
        #[source]
        source: Box<dar_io::Error>,
    },

    /// The Delta log could not be loaded (or the table uses a feature that
    /// dar cannot read).
    #[error("cannot load the Delta log of '{uri}': {source}")]
    Log {
        /// The table URI, redacted.
        uri: String,
        /// The `dar-log` error.
        #[source]
        source: Box<dar_log::LogError>,
    },

    /// A projected column is not in the table schema.
    #[error("projected column '{column}' is not in the table schema")]
    UnknownColumn {
        /// The column path as given.
        column: String,
    },

    /// The predicate does not parse or does not fit the table schema.
    #[error("invalid predicate: {source}")]
    Predicate {
        /// The `dar-prune` error.
        #[source]
        source: Box<dar_prune::PruneError>,
    },

    /// A scan option is out of range.
    #[error("invalid scan option {option}: {reason}")]
    InvalidOption {
        /// The option.
        option: &'static str,
        /// Why.
        reason: String,
    },

    /// The log places a data file on another store than the table's, and
    /// no store was configured for that store's origin.
    #[error(
        "data file '{path}' is on another store ({origin}) than the table; \
         dar reads it only from a store configured for {origin}"
    )]
    OtherStore {
        /// The path as written in the log.
        path: String,
        /// `scheme://authority` of that store.
        origin: String,
    },

    /// The task decoding a data file stopped abnormally (a panic in a
    /// decoder); the file's rows are incomplete, so the scan fails.
    #[error("reading data file '{path}' failed: its task stopped ({reason})")]
    TaskFailed {
        /// The data file's object path.
        path: String,
        /// What the runtime reported.
        reason: String,
    },

    /// A data or DV file lies outside the table root while the table was
    /// opened with paths confined to it.
    #[error(
        "{what} '{path}' lies outside the table root, and the table is opened \
         with paths confined to its root"
    )]
    OutsideRoot {
        /// "data file" or "deletion vector".
        what: &'static str,
        /// The path as written in the log.
        path: String,
    },

    /// A column the table declares not null is missing from a data file or
    /// null in it.
    #[error(
        "data file '{path}' holds {nulls} null(s) in column '{column}', \
         which the table schema declares not null"
    )]
    NullInNonNullable {
        /// The data file's object path.
        path: String,
        /// The logical column path.
        column: String,
        /// How many rows of the batch broke the constraint.
        nulls: usize,
    },

    /// A column the table declares not null is missing from a data file.
    #[error(
        "data file '{path}' lacks column '{column}', which the table schema \
         declares not null"
    )]
    MissingNonNullable {
        /// The data file's object path.
        path: String,
        /// The logical column.
        column: String,
    },

    /// Reading a data file's bytes failed (missing, truncated, unreadable).
    #[error("cannot read data file '{path}': {}", .source.reason())]
    Io {
        /// The data file's location (an absolute path for local tables, a
        /// URL otherwise).
        path: String,
        /// The `dar-io` error.
        #[source]
        source: Box<dar_io::Error>,
    },

    /// Decoding a data file failed (corrupt pages, bad footer).
    #[error("cannot decode data file '{path}': {source}")]
    Parquet {
        /// The data file's object path.
        path: String,
        /// The parquet error.
        #[source]
        source: Box<parquet::errors::ParquetError>,
    },

    /// A data file's deletion vector could not be loaded (missing DV file,
    /// wrong checksum, bad bitmap).
    #[error("cannot load the deletion vector of data file '{path}': {source}")]
    DeletionVector {
        /// The data file's object path.
        path: String,
        /// The `dar-dv` error.
        #[source]
        source: Box<dar_dv::DvError>,
    },

    /// A data file's column cannot be read as the table's column type.
    #[error(
        "data file '{path}': column '{column}' has type {found} that cannot be read as {expected}"
    )]
    SchemaMismatch {
        /// The data file's object path.
        path: String,
        /// The logical column path.
        column: String,
        /// The type in the file.
        found: String,
        /// The table's type.
        expected: String,
    },

    /// A data file has fewer or more rows than the log says.
    #[error("data file '{path}' has {actual} rows but the log records {expected}")]
    RowCountMismatch {
        /// The data file's object path.
        path: String,
        /// `numRecords` from the log.
        expected: u64,
        /// Rows in the Parquet footer.
        actual: u64,
    },

    /// Evaluating the residual predicate on a batch failed.
    #[error("cannot evaluate the predicate on data file '{path}': {source}")]
    Evaluate {
        /// The data file's object path.
        path: String,
        /// The `dar-prune` error.
        #[source]
        source: Box<dar_prune::PruneError>,
    },

    /// An Arrow kernel failed while shaping a batch.
    #[error("arrow error while {context} ('{path}'): {source}")]
    Arrow {
        /// What was being done.
        context: &'static str,
        /// The data file's object path (empty when not about one file).
        path: String,
        /// The arrow error.
        #[source]
        source: Box<arrow_schema::ArrowError>,
    },

    /// A [`crate::ScanTask`] carries data that does not fit the scan (for
    /// example a partition value of the wrong type).
    #[error("invalid scan task for '{path}': {reason}")]
    InvalidTask {
        /// The data file's object path.
        path: String,
        /// What is wrong.
        reason: String,
    },

    /// Encoded scan specs or tasks (bytes from another process) that do
    /// not parse.
    #[error("invalid encoded scan: {reason}")]
    Spec {
        /// What is wrong.
        reason: String,
    },

    /// Encoded scan specs or tasks of a format this build does not read
    /// (written by another version of dar).
    #[error(
        "encoded scan of format {found} (written by {producer}) cannot be read by dar {} (scan format {supported}); run the same dar version on every machine",
        env!("CARGO_PKG_VERSION")
    )]
    SpecFormat {
        /// The format of the bytes.
        found: u32,
        /// The dar version that wrote them, as it names itself.
        producer: String,
        /// The format this build reads.
        supported: u32,
    },

    /// A table option given as text (a version, a timestamp, a storage
    /// option entry) does not parse; see [`crate::TableOptions::from_pairs`].
    #[error("{source}")]
    TableOption {
        /// What is wrong with it.
        #[from]
        source: crate::errors::option_error::TableOptionError,
    },
}

/// Result alias for `dar-scan`.
pub type Result<T, E = ScanError> = std::result::Result<T, E>;

impl ScanError {
    pub(crate) fn arrow(
        context: &'static str,
        path: impl Into<String>,
        source: arrow_schema::ArrowError,
    ) -> Self {
        Self::Arrow {
            context,
            path: path.into(),
            source: Box::new(source),
        }
    }

    /// Maps a parquet error raised while reading `path`: an I/O failure
    /// surfaced through parquet's `External` wrapper is unwrapped back into
    /// [`ScanError::Io`].
    pub(crate) fn parquet(path: &str, source: parquet::errors::ParquetError) -> Self {
        match source {
            parquet::errors::ParquetError::External(e) => match e.downcast::<dar_io::Error>() {
                Ok(io) => Self::Io {
                    path: path.to_string(),
                    source: io,
                },
                Err(e) => Self::Parquet {
                    path: path.to_string(),
                    source: Box::new(parquet::errors::ParquetError::External(e)),
                },
            },
            other => Self::Parquet {
                path: path.to_string(),
                source: Box::new(other),
            },
        }
    }
}
