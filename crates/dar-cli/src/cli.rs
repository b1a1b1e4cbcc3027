//! The command line, as clap derive types.
//!
//! Everything here is plain data: parsing a value that could carry a secret
//! (a storage option) is left to [`crate::table`], so that clap never echoes
//! it in an error.

use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand, ValueEnum};

/// `dar`: read Delta Lake tables from a terminal.
#[derive(Debug, Parser)]
#[command(
    name = "dar",
    version,
    about = "Read Delta Lake tables: what is in a table, its files, and its rows",
    long_about = None,
    propagate_version = false
)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Version, protocol, schema, partitioning, properties, file and row
    /// counts of a snapshot.
    Info(InfoArgs),
    /// The active files of a snapshot (paths, sizes, partition values, row
    /// counts, deletion vectors).
    Files(FilesArgs),
    /// The rows of a snapshot: projection, filter, limit, several output
    /// formats.
    Scan(ScanArgs),
    /// The change data feed between two versions: every inserted, deleted
    /// and updated row, with `_change_type`, `_commit_version` and
    /// `_commit_timestamp` (tables with `delta.enableChangeDataFeed`).
    Changes(ChangesArgs),
    /// A SQL query (DataFusion) over Delta tables: tables named with
    /// `--table NAME=URI`, or `delta_scan('uri' [, version | 'timestamp'])` in the query.
    #[cfg(feature = "sql")]
    Sql(SqlArgs),
    /// A worker for `dar sql --workers`: runs query stages (Delta scans
    /// included) sent by a coordinating `dar sql`, reading tables with its
    /// own storage options and environment. Runs until Ctrl-C.
    #[cfg(feature = "distributed")]
    Worker(WorkerArgs),
    /// Serve Delta tables over Arrow Flight SQL (ADBC, JDBC and other
    /// Flight SQL clients): tables opened once and kept fresh, read-only
    /// SQL, many clients at once. Runs until Ctrl-C or SIGTERM.
    #[cfg(feature = "serve")]
    Serve(ServeArgs),
}

/// `dar serve`.
#[cfg(feature = "serve")]
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// A table to serve, as `NAME=URI` (repeatable); SQL names it NAME.
    #[arg(long = "table", value_name = "NAME=URI")]
    pub tables: Vec<String>,

    /// A TOML file with tables (`[[table]]` with `name`, `uri` and its own
    /// `[table.storage_options]`) and server settings; see docs/serve.md.
    #[arg(long, value_name = "FILE.toml")]
    pub config: Option<PathBuf>,

    /// The Flight SQL address (port 0: any free port; the address is
    /// printed on standard output once listening).
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:50051")]
    pub listen: String,

    /// The admin address (`GET /health`, `GET /metrics`); none by default.
    #[arg(long, value_name = "HOST:PORT")]
    pub admin_listen: Option<String>,

    /// A storage option for every table (repeatable).
    #[arg(long = "storage-option", value_name = "KEY=VALUE")]
    pub storage_options: Vec<String>,

    /// Keep fetched byte ranges in files under DIR across restarts.
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// How often each table looks for new commits (default 1s).
    #[arg(long, value_name = "DURATION")]
    pub refresh_interval: Option<String>,

    /// The memory DataFusion's operators may hold in all (sorts, joins,
    /// aggregations), such as 2GiB; a query over it fails alone.
    #[arg(long, value_name = "SIZE")]
    pub memory_limit: Option<String>,

    /// Queries that run at once (default 16); more wait in a bounded queue
    /// (`--max-queued-queries`), then are refused with RESOURCE_EXHAUSTED.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_concurrent_queries: Option<u32>,

    /// Queries that may wait for a slot (default 64); past them a query is
    /// refused at once with RESOURCE_EXHAUSTED.
    #[arg(long, value_name = "N")]
    pub max_queued_queries: Option<u32>,

    /// The longest a query may run (default 30s).
    #[arg(long, value_name = "DURATION")]
    pub query_timeout: Option<String>,

    /// How long in-flight queries may finish after Ctrl-C or SIGTERM
    /// (default 30s).
    #[arg(long, value_name = "DURATION")]
    pub drain_timeout: Option<String>,

    /// A file holding the bearer token every call must carry (at least 16
    /// printable ASCII characters).
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,

    /// Serve TLS only, with this certificate chain (PEM); needs `--tls-key`.
    #[arg(long, value_name = "PATH", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// The private key (PEM) of `--tls-cert`.
    #[arg(long, value_name = "PATH", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// Let `delta_scan()` and `table_changes()` read any URI, not only the
    /// served tables.
    #[arg(long)]
    pub allow_any_table: bool,
}

/// `dar worker`.
#[cfg(feature = "distributed")]
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The address to listen on (port 0: any free port; the address is
    /// printed on standard output once listening).
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:50051")]
    pub listen: String,

    /// A storage option for every table this worker reads (repeatable), for
    /// example `aws_region=eu-west-1`. The usual `AWS_*` environment
    /// variables are read too; options given here win.
    #[arg(long = "storage-option", value_name = "KEY=VALUE")]
    pub storage_options: Vec<String>,

    /// Memory budget in MiB of the cache of fetched pages and small files
    /// that the tables this worker reads share (0 turns it off). Default:
    /// 256 for tables on object storage only; with this flag or
    /// --cache-dir, every table reads through the cache.
    #[arg(long, value_name = "MIB")]
    pub data_cache_mib: Option<u64>,

    /// The on-disk cache, for every table this worker reads.
    #[command(flatten)]
    pub cache: CacheArgs,

    /// A file holding the token every call must carry (a shared secret of
    /// at least 16 printable ASCII characters; give `dar sql --workers` the
    /// same). Without it, `DAR_WORKER_TOKEN` is read. Required when
    /// listening beyond loopback.
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,

    /// Serve TLS only, with this certificate chain (PEM); needs `--tls-key`.
    #[arg(long, value_name = "PATH", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// The private key (PEM) of `--tls-cert`.
    #[arg(long, value_name = "PATH", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// Trust this CA (PEM), instead of the system's roots, for the
    /// `https://` workers this one reads from (the other workers of a query).
    #[arg(long, value_name = "PATH")]
    pub tls_ca: Option<PathBuf>,

    /// The largest gRPC message (a plan, a batch of rows) the worker reads
    /// or sends, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 256,
          value_parser = clap::value_parser!(u32).range(1..=4095))]
    pub max_message_mib: u32,
}

/// Which table, at which version, with which storage options.
#[derive(Debug, Clone, Args)]
pub struct TableArgs {
    /// The table: a path, or a file://, s3://, az://, abfss://,
    /// https://<account>.blob.core.windows.net/... or gs:// URI.
    #[arg(value_name = "TABLE")]
    pub table: String,

    /// Read this version (time travel).
    #[arg(long, value_name = "N", conflicts_with = "timestamp")]
    pub version: Option<u64>,

    /// Read the newest version committed at or before this time: RFC 3339
    /// (`2024-01-31T12:00:00Z`) or milliseconds since the epoch.
    #[arg(long, value_name = "T")]
    pub timestamp: Option<String>,

    /// A storage option for the object store (repeatable), for example
    /// `aws_region=eu-west-1`. The usual `AWS_*` environment variables are
    /// read too; options given here win.
    #[arg(long = "storage-option", value_name = "KEY=VALUE")]
    pub storage_options: Vec<String>,

    /// Refuse any data or deletion-vector file outside the table root
    /// (absolute paths elsewhere, files on other stores), for tables you do
    /// not trust. Without it such paths, legal in Delta (shallow clones), are
    /// read from the table's store.
    #[arg(long)]
    pub confine_paths: bool,

    /// The on-disk cache.
    #[command(flatten)]
    pub cache: CacheArgs,
}

/// `--cache-dir`: fetched bytes kept on disk across runs.
#[derive(Debug, Clone, Default, Args)]
pub struct CacheArgs {
    /// Keep fetched footers, page indexes, pages, deletion vectors and
    /// checkpoints in files under DIR (in a `dar-cache-v2` folder of their
    /// own), so that later runs over the same tables skip those requests.
    /// DIR must be private to you (created so when missing) and outside
    /// the tables read. An entry is served only if the object's store,
    /// path, size and version match and its checksums hold.
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Budget of --cache-dir in MiB, for every process sharing the folder
    /// (default: the folder's own, 8192 for a new one); the least recently
    /// used entries go first.
    #[arg(long, value_name = "MIB", requires = "cache_dir")]
    pub cache_dir_mib: Option<u64>,
}

/// `dar info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// The table and version.
    #[command(flatten)]
    pub table: TableArgs,

    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Output formats of `dar files`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FilesFormat {
    /// An aligned text table.
    Table,
    /// One JSON object per line.
    Json,
    /// CSV with a header line.
    Csv,
}

/// `dar files`.
#[derive(Debug, Args)]
pub struct FilesArgs {
    /// The table and version.
    #[command(flatten)]
    pub table: TableArgs,

    /// Output format.
    #[arg(long, value_enum, default_value_t = FilesFormat::Table)]
    pub format: FilesFormat,

    /// Only the files a scan with this SQL predicate reads: those that
    /// partition values and the log's column statistics cannot rule out
    /// (a listed file may still hold no matching row).
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,
}

/// Output formats of `dar scan`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScanFormat {
    /// An aligned text table (all rows are held in memory to align them).
    Table,
    /// CSV with a header line; struct fields become `a.b` columns.
    Csv,
    /// One JSON object per line.
    Json,
    /// One Parquet file with the table's logical schema (needs `--output`).
    Parquet,
    /// An Arrow IPC stream.
    Arrow,
    /// Read every row and print only the row count (for timing).
    Null,
}

impl ScanFormat {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Table => "table",
            Self::Csv => "csv",
            Self::Json => "json",
            Self::Parquet => "parquet",
            Self::Arrow => "arrow",
            Self::Null => "null",
        }
    }

    /// Whether the scan decodes strings and binaries as views for this
    /// format: yes where dar writes text or nothing (decoding into views
    /// copies no value), no for the exported files, which keep the classic
    /// `string` / `binary` types every reader of a Parquet file or an Arrow
    /// stream takes (Arrow readers before views, pyarrow < 16).
    pub fn view_types(self) -> bool {
        !matches!(self, Self::Parquet | Self::Arrow)
    }
}

/// `dar scan`.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// The table and version.
    #[command(flatten)]
    pub table: TableArgs,

    /// Output columns in this order, comma-separated; `a.b` selects field
    /// `b` of struct column `a`. Default: every column.
    #[arg(long, value_name = "a,b.c")]
    pub columns: Option<String>,

    /// Only rows where this SQL predicate is true, for example
    /// `day = '2024-01-02' AND fare > 20`.
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,

    /// At most N rows.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,

    /// Where the rows go.
    #[command(flatten)]
    pub rows: RowsArgs,
}

/// Where a scan's rows go, and its metrics: `dar scan` and `dar changes`.
#[derive(Debug, Args)]
pub struct RowsArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ScanFormat::Table)]
    pub format: ScanFormat,

    /// Write to FILE instead of standard output (`-`: standard output).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Print the scan metrics (pruning, deletion vectors, I/O, time per
    /// stage) to standard error.
    #[arg(long)]
    pub stats: bool,
}

/// `dar changes`.
#[derive(Debug, Args)]
pub struct ChangesArgs {
    /// The table: a path, a file:// or an s3:// URI.
    #[arg(value_name = "TABLE")]
    pub table: String,

    /// First version of the range.
    #[arg(
        long,
        value_name = "V",
        required_unless_present = "from_timestamp",
        conflicts_with = "from_timestamp"
    )]
    pub from: Option<u64>,

    /// Start at the first commit at or after this time: RFC 3339
    /// (`2024-01-31T12:00:00Z`) or milliseconds since the epoch.
    #[arg(long, value_name = "T")]
    pub from_timestamp: Option<String>,

    /// Last version of the range (default: the latest).
    #[arg(long, value_name = "V", conflicts_with = "to_timestamp")]
    pub to: Option<u64>,

    /// End at the last commit at or before this time.
    #[arg(long, value_name = "T")]
    pub to_timestamp: Option<String>,

    /// Output columns of the table in this order, comma-separated; the
    /// change columns follow unless listed. Default: every column.
    #[arg(long, value_name = "a,b.c")]
    pub columns: Option<String>,

    /// Only changed rows where this SQL predicate is true; it may name
    /// `_change_type`, `_commit_version` and `_commit_timestamp`.
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,

    /// At most N rows.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,

    /// Where the rows go.
    #[command(flatten)]
    pub rows: RowsArgs,

    /// A storage option for the object store (repeatable).
    #[arg(long = "storage-option", value_name = "KEY=VALUE")]
    pub storage_options: Vec<String>,

    /// Refuse any data or deletion-vector file outside the table root.
    #[arg(long)]
    pub confine_paths: bool,

    /// The on-disk cache.
    #[command(flatten)]
    pub cache: CacheArgs,
}

/// `dar sql`.
#[cfg(feature = "sql")]
#[derive(Debug, Args)]
pub struct SqlArgs {
    /// The query, for example `SELECT day, count(*) FROM trips GROUP BY day`.
    #[arg(value_name = "SQL")]
    pub query: String,

    /// A table the query can name, as `NAME=URI` (repeatable). Tables can
    /// also be read inline with `delta_scan('uri' [, version | 'timestamp'])`.
    #[arg(long = "table", value_name = "NAME=URI")]
    pub tables: Vec<String>,

    /// Output format (`parquet` needs `--output`).
    #[arg(long, value_enum, default_value_t = ScanFormat::Table)]
    pub format: ScanFormat,

    /// Write to FILE instead of standard output (`-`: standard output).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// A storage option for every table of the query (repeatable), for
    /// example `aws_region=eu-west-1`.
    #[arg(long = "storage-option", value_name = "KEY=VALUE")]
    pub storage_options: Vec<String>,

    /// The on-disk cache, for every table of the query.
    #[command(flatten)]
    pub cache: CacheArgs,

    /// Print the physical plan, with the files, row groups and pages each
    /// Delta scan keeps (footers are read to know them), instead of the rows.
    #[arg(long)]
    pub explain: bool,

    /// Run the query's stages on these `dar worker`s (comma-separated
    /// `host:port`, or `https://host:port` for workers that serve TLS);
    /// every file is read by exactly one of them. Rows are written once the
    /// query has succeeded. Without it the query runs in this process.
    #[cfg(feature = "distributed")]
    #[arg(long, value_delimiter = ',', value_name = "HOST:PORT,...")]
    pub workers: Vec<String>,

    /// A file holding the workers' token (else `DAR_WORKER_TOKEN` is read).
    #[cfg(feature = "distributed")]
    #[arg(long, value_name = "PATH", requires = "workers")]
    pub token_file: Option<PathBuf>,

    /// Trust this CA (PEM), instead of the system's roots, for `https://`
    /// workers.
    #[cfg(feature = "distributed")]
    #[arg(long, value_name = "PATH", requires = "workers")]
    pub tls_ca: Option<PathBuf>,

    /// The largest gRPC message (a plan, a batch of rows) sent to or read
    /// from a worker, in MiB (default 256).
    #[cfg(feature = "distributed")]
    #[arg(long, value_name = "MIB", requires = "workers",
          value_parser = clap::value_parser!(u32).range(1..=4095))]
    pub max_message_mib: Option<u32>,
}

/// The file an `--output` flag names: `None` for standard output (no flag,
/// or `-` as the usual name for it).
pub fn output_file(output: &Option<PathBuf>) -> Option<&Path> {
    output.as_deref().filter(|p| p.as_os_str() != "-")
}
