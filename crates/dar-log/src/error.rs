//! The one error type of this crate: every variant names the file, version,
//! line or feature it is about, and keeps its source.

/// Result alias for this crate.
pub type Result<T, E = LogError> = std::result::Result<T, E>;

/// Everything that can go wrong while reading a Delta log.
///
/// Messages never carry credentials: paths are object-store keys relative to
/// the store, never signed URLs.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LogError {
    /// The object store failed while listing or reading `path`.
    #[error("object store error on {path}: {source}")]
    Store {
        /// Object key (or listing prefix) involved.
        path: String,
        /// The store's error.
        #[source]
        source: object_store::Error,
    },
    /// `_delta_log/` holds no commit or checkpoint at all.
    #[error("not a Delta table: no commits or checkpoints under {log_dir}")]
    NoLog {
        /// The `_delta_log/` prefix that was listed.
        log_dir: String,
    },
    /// A commit version is missing after the chosen checkpoint (or from 0).
    #[error("missing commit version {missing} in {log_dir} (log is not contiguous)")]
    VersionGap {
        /// The `_delta_log/` prefix.
        log_dir: String,
        /// The first missing version.
        missing: u64,
    },
    /// There is no checkpoint and commit 0 is gone: the history is truncated.
    #[error(
        "cannot rebuild version {target}: no checkpoint at or below it and no commit 0 in {log_dir} (earliest commit is {earliest})"
    )]
    TruncatedHistory {
        /// The `_delta_log/` prefix.
        log_dir: String,
        /// Requested (or latest) version.
        target: u64,
        /// The earliest commit that exists.
        earliest: u64,
    },
    /// Time travel to a version that does not exist (yet or any more).
    #[error("version {requested} does not exist: table versions are {earliest}..={latest}")]
    VersionNotFound {
        /// The requested version.
        requested: u64,
        /// Earliest reconstructible version.
        earliest: u64,
        /// Latest version.
        latest: u64,
    },
    /// Time travel to a timestamp outside the table's history.
    #[error(
        "timestamp {requested_ms} ms is {relation} the table history ({earliest_ms}..={latest_ms} ms)"
    )]
    TimestampOutOfRange {
        /// Requested timestamp, ms since the epoch.
        requested_ms: i64,
        /// "before" or "after".
        relation: &'static str,
        /// Commit timestamp of the earliest reconstructible version.
        earliest_ms: i64,
        /// Commit timestamp of the latest version.
        latest_ms: i64,
    },
    /// A commit line (or `_last_checkpoint`, or a JSON checkpoint) is not valid JSON
    /// or has a known action with wrongly typed fields.
    #[error("malformed JSON in {path} at line {line}: {source}")]
    MalformedJson {
        /// The file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// A commit file is empty (zero bytes), which the protocol calls corrupt.
    #[error("empty commit file {path}")]
    EmptyCommit {
        /// The file.
        path: String,
    },
    /// A checkpoint or sidecar file could not be read as Parquet.
    #[error("checkpoint {path} is corrupt or truncated: it does not decode as Parquet ({source})")]
    CheckpointParquet {
        /// The checkpoint or sidecar file.
        path: String,
        /// Parquet's error (truncated file, bad footer, ...).
        #[source]
        source: parquet::errors::ParquetError,
    },
    /// A checkpoint's columns do not have the Delta checkpoint schema.
    #[error("checkpoint {path} has an unexpected schema: column {column}: {detail}")]
    CheckpointSchema {
        /// The checkpoint or sidecar file.
        path: String,
        /// The offending column (dotted path).
        column: String,
        /// What was expected.
        detail: String,
    },
    /// A value in a checkpoint or commit breaks the protocol (a null required field, ...).
    #[error("invalid action in {path}: {detail}")]
    InvalidAction {
        /// The file.
        path: String,
        /// What is wrong.
        detail: String,
    },
    /// The log's `metaData` has no `schemaString`: its files can be listed,
    /// but no row can be read.
    #[error(
        "the table's metaData at version {version} has no schemaString: its files can be listed, but its rows cannot be read"
    )]
    MissingSchema {
        /// The snapshot version.
        version: u64,
    },
    /// An active file's `add` action holds a value no writer can mean (a
    /// negative size).
    #[error("invalid add action for data file '{path}': {detail}")]
    InvalidAdd {
        /// The data file's path as written in the log.
        path: String,
        /// What is wrong.
        detail: String,
    },
    /// An active file's deletion-vector descriptor breaks the protocol (an
    /// unknown storage type, a negative size or cardinality).
    #[error("invalid deletion vector of data file '{path}': {source}")]
    InvalidDeletionVector {
        /// The data file's path as written in the log.
        path: String,
        /// What `dar-dv` refused.
        #[source]
        source: Box<dar_dv::DvError>,
    },
    /// No `protocol` action at the snapshot version.
    #[error("no protocol action found for version {version} of {log_dir}")]
    MissingProtocol {
        /// The `_delta_log/` prefix.
        log_dir: String,
        /// The snapshot version.
        version: u64,
    },
    /// No `metaData` action at the snapshot version.
    #[error("no metaData action found for version {version} of {log_dir}")]
    MissingMetadata {
        /// The `_delta_log/` prefix.
        log_dir: String,
        /// The snapshot version.
        version: u64,
    },
    /// The table needs a reader version this crate does not implement.
    #[error("unsupported minReaderVersion {reader_version} at version {version} (supported: 1-3)")]
    UnsupportedReaderVersion {
        /// The protocol's reader version.
        reader_version: i32,
        /// Snapshot version.
        version: u64,
    },
    /// The table lists a reader feature this crate does not implement.
    #[error("unsupported reader feature '{feature}' at version {version}")]
    UnsupportedFeature {
        /// The feature name, as written in `readerFeatures`.
        feature: String,
        /// Snapshot version.
        version: u64,
    },
    /// A table whose data files are not Parquet.
    #[error("unsupported table format provider '{provider}' (only parquet)")]
    UnsupportedFormat {
        /// `metaData.format.provider`.
        provider: String,
    },
    /// An Arrow kernel failed while building the file index.
    #[error("arrow error while {context}: {source}")]
    Arrow {
        /// What was being built.
        context: String,
        /// Arrow's error.
        #[source]
        source: arrow_schema::ArrowError,
    },
    /// A file path in the log cannot be resolved against the table root.
    #[error("invalid path '{path}' in the log: {detail}")]
    InvalidPath {
        /// The path as written in the log.
        path: String,
        /// Why it cannot be resolved.
        detail: String,
    },
    // ---- schema, partition values and stats (schema/, partition.rs, stats.rs) ----
    /// `schemaString` is not valid JSON.
    #[error("schemaString is not valid JSON: {source}")]
    SchemaJson {
        /// The parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// `schemaString` is JSON but not a valid Delta schema.
    #[error("invalid schema at field '{field}': {reason}")]
    InvalidSchema {
        /// Dotted logical path of the field (`<root>` for the top level).
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// A type name the protocol (and this reader) does not know.
    #[error("unsupported Delta type '{type_name}' for field '{field}'")]
    UnknownType {
        /// Dotted logical path of the field.
        field: String,
        /// The type string as written, e.g. `geometry(OGC:CRS84)`.
        type_name: String,
    },
    /// A column named by the metadata (partition columns, ...) is not in the schema.
    #[error("column '{column}' is not in the table schema")]
    ColumnNotFound {
        /// The column as named (dotted logical path).
        column: String,
    },
    /// `delta.columnMapping.mode` has a value other than none/name/id.
    #[error("unknown delta.columnMapping.mode '{mode}'")]
    UnknownColumnMappingMode {
        /// The property value.
        mode: String,
    },
    /// A field lacks the column-mapping metadata its mode requires.
    #[error("column mapping ({mode} mode) broken at field '{field}': {reason}")]
    ColumnMapping {
        /// Dotted logical path of the field.
        field: String,
        /// The table's mode.
        mode: crate::schema::ColumnMappingMode,
        /// What is missing or wrong.
        reason: String,
    },
    /// `delta.typeChanges` records a change that is not an allowed widening.
    #[error("field '{field}' has an invalid type change from {from_type} to {to_type}")]
    InvalidTypeChange {
        /// Dotted logical path (with the entry's `fieldPath`).
        field: String,
        /// `fromType` as written.
        from_type: String,
        /// `toType` as written.
        to_type: String,
    },
    /// `delta.typeChanges` is malformed.
    #[error("field '{field}' has malformed delta.typeChanges: {reason}")]
    InvalidTypeChangeMetadata {
        /// Dotted logical path of the field.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// A table property has a value that does not parse.
    #[error("table property {key} has an invalid value '{value}'")]
    InvalidTableProperty {
        /// The property name.
        key: String,
        /// The value as written.
        value: String,
    },
    /// A partition value does not parse as its column's type.
    #[error(
        "invalid partition value '{value}' for column '{column}' of type {data_type} in file {file}"
    )]
    PartitionValue {
        /// The data file (as its `add.path`), or other caller-given context.
        file: String,
        /// The partition column (logical name).
        column: String,
        /// The value as written.
        value: String,
        /// The column's Delta type.
        data_type: String,
    },
    // ---- change data feed (changes.rs) ----
    /// A change range that does not fit the table's history.
    #[error("invalid change range: {reason}")]
    ChangeRange {
        /// What is wrong, naming the versions or timestamps.
        reason: String,
    },
    /// A commit of a change range is gone from the log (log cleanup).
    #[error(
        "commit version {version} of the change range is missing from {log_dir} (removed by log cleanup?): its changes cannot be read"
    )]
    ChangeCommitMissing {
        /// The missing version.
        version: u64,
        /// The `_delta_log/` prefix.
        log_dir: String,
    },
    /// The change data feed is off at a version of the range.
    #[error(
        "change data feed is not enabled at version {version} (table property delta.enableChangeDataFeed is not true)"
    )]
    ChangeDataFeedDisabled {
        /// The version whose metadata has the feed off.
        version: u64,
    },
    /// The schema at a version of a change range cannot be read as the
    /// schema at its end.
    #[error(
        "the change range crosses a schema change it cannot reconcile: at version {version}, column '{column}' {reason} by end version {end}"
    )]
    ChangeFeedSchema {
        /// The version whose schema differs.
        version: u64,
        /// The end version of the range.
        end: u64,
        /// The column (logical name at the end version).
        column: String,
        /// What changes.
        reason: String,
    },
    /// An Arrow input (e.g. a checkpoint's `partitionValues`) has the wrong type.
    #[error("column '{column}' has Arrow type {found}, expected {expected}")]
    UnexpectedArrowType {
        /// The column (dotted path).
        column: String,
        /// What was expected.
        expected: String,
        /// What was found.
        found: String,
    },
    /// Two actions of one snapshot for one logical file (path and DV
    /// unique id) where the protocol allows one (§2.10): two adds that
    /// differ, in one commit or across one checkpoint's parts and
    /// sidecars, or a checkpoint that both adds and removes the file. Two
    /// identical adds are read once instead.
    #[error(
        "conflicting actions for data file '{path}' at version {version} ({}): {detail}",
        .files.join(" and ")
    )]
    ConflictingActions {
        /// The version of the commit or checkpoint.
        version: u64,
        /// The log files holding the two actions (one when both are in one).
        files: Vec<String>,
        /// The data file's path as written in the log.
        path: String,
        /// How the actions differ.
        detail: String,
    },
}

impl LogError {
    pub(crate) fn store(path: impl Into<String>, source: object_store::Error) -> Self {
        Self::Store {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn arrow(context: impl Into<String>, source: arrow_schema::ArrowError) -> Self {
        Self::Arrow {
            context: context.into(),
            source,
        }
    }
}
