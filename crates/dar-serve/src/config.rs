//! What a server serves and how: [`ServeOptions`] (built in code or read
//! from a TOML file with [`ServeOptions::from_toml`]) and its tables
//! ([`TableConfig`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use dar_distributed::{ServerTls, Token};
use dar_io::StorageOptions;
use dar_scan::TableOptions;

use crate::error::Error;

/// The default interval between two refreshes of a table.
pub const DEFAULT_REFRESH_INTERVAL: Duration = Duration::from_secs(1);
/// The default number of queries that run at once.
pub const DEFAULT_MAX_CONCURRENT_QUERIES: usize = 16;
/// The default number of queries that wait for a slot before new ones are
/// refused with `RESOURCE_EXHAUSTED`.
pub const DEFAULT_MAX_QUEUED_QUERIES: usize = 64;
/// The default time a query may take, from its first batch asked to its
/// last sent.
pub const DEFAULT_QUERY_TIMEOUT: Duration = Duration::from_secs(30);
/// The default largest gRPC message read or sent (16 MiB).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 << 20;

/// One served table: the name SQL uses and where it lives, with storage
/// options of its own (added to the server's). `Debug` never shows the
/// storage options (they may hold credentials).
#[derive(Clone)]
pub struct TableConfig {
    pub(crate) name: String,
    pub(crate) uri: String,
    pub(crate) storage: Vec<(String, String)>,
}

impl std::fmt::Debug for TableConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableConfig")
            .field("name", &self.name)
            .field("uri", &dar_io::redact_uri(&self.uri))
            .finish_non_exhaustive()
    }
}

impl TableConfig {
    /// The table at `uri`, named `name` in SQL.
    pub fn new(name: impl Into<String>, uri: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            uri: uri.into(),
            storage: Vec::new(),
        }
    }

    /// Adds a storage option for this table only.
    pub fn with_storage_option(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.storage.push((key.into(), value.into()));
        self
    }

    /// The name SQL uses.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// How a server serves (see the crate docs). `Debug` shows no secret.
#[derive(Clone)]
pub struct ServeOptions {
    pub(crate) tables: Vec<TableConfig>,
    pub(crate) storage: Vec<(String, String)>,
    pub(crate) cache_dir: Option<PathBuf>,
    pub(crate) refresh_interval: Duration,
    pub(crate) memory_limit: Option<usize>,
    pub(crate) max_concurrent: usize,
    pub(crate) max_queued: usize,
    pub(crate) query_timeout: Duration,
    pub(crate) token: Option<Token>,
    pub(crate) tls: Option<ServerTls>,
    pub(crate) allow_any_table: bool,
    pub(crate) max_message_bytes: usize,
    pub(crate) log_queries: bool,
}

impl std::fmt::Debug for ServeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeOptions")
            .field("tables", &self.tables)
            .field("storage_options", &self.storage.len())
            .field("refresh_interval", &self.refresh_interval)
            .field("memory_limit", &self.memory_limit)
            .field("max_concurrent", &self.max_concurrent)
            .field("max_queued", &self.max_queued)
            .field("query_timeout", &self.query_timeout)
            .field("token", &self.token.is_some())
            .field("tls", &self.tls.is_some())
            .field("allow_any_table", &self.allow_any_table)
            .finish_non_exhaustive()
    }
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            tables: Vec::new(),
            storage: Vec::new(),
            cache_dir: None,
            refresh_interval: DEFAULT_REFRESH_INTERVAL,
            memory_limit: None,
            max_concurrent: DEFAULT_MAX_CONCURRENT_QUERIES,
            max_queued: DEFAULT_MAX_QUEUED_QUERIES,
            query_timeout: DEFAULT_QUERY_TIMEOUT,
            token: None,
            tls: None,
            allow_any_table: false,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            log_queries: true,
        }
    }
}

impl ServeOptions {
    /// No tables yet, the defaults of this module's constants, no token,
    /// no TLS, no memory limit.
    pub fn new() -> Self {
        Self::default()
    }

    /// Serves `table`.
    pub fn with_table(mut self, table: TableConfig) -> Self {
        self.tables.push(table);
        self
    }

    /// A storage option for every table (a table's own options win).
    pub fn with_storage_option(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.storage.push((key.into(), value.into()));
        self
    }

    /// Keeps fetched byte ranges in `dir` across restarts too.
    pub fn with_cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }

    /// Refreshes each table every `interval`.
    pub fn with_refresh_interval(mut self, interval: Duration) -> Self {
        self.refresh_interval = interval;
        self
    }

    /// Gives DataFusion's operators (sorts, joins, aggregations) at most
    /// `bytes` in all; a query that needs more fails alone.
    pub fn with_memory_limit(mut self, bytes: usize) -> Self {
        self.memory_limit = Some(bytes);
        self
    }

    /// Runs at most `n` queries at once (at least 1).
    pub fn with_max_concurrent_queries(mut self, n: usize) -> Self {
        self.max_concurrent = n.max(1);
        self
    }

    /// Lets at most `n` queries wait for a slot; more are refused.
    pub fn with_max_queued_queries(mut self, n: usize) -> Self {
        self.max_queued = n;
        self
    }

    /// Fails a query still running after `timeout`.
    pub fn with_query_timeout(mut self, timeout: Duration) -> Self {
        self.query_timeout = timeout;
        self
    }

    /// Requires `token` on every call.
    pub fn with_token(mut self, token: Token) -> Self {
        self.token = Some(token);
        self
    }

    /// Serves TLS only, with this identity.
    pub fn with_tls(mut self, tls: ServerTls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Lets `delta_scan()` and `table_changes()` read any URI, not only the
    /// served tables.
    pub fn with_any_table(mut self, on: bool) -> Self {
        self.allow_any_table = on;
        self
    }

    /// Reads and sends gRPC messages of at most `bytes`.
    pub fn with_max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }

    /// Writes one line per query on standard error (on by default).
    pub fn with_query_log(mut self, on: bool) -> Self {
        self.log_queries = on;
        self
    }

    /// Whether a token is required.
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }

    /// Whether TLS is served.
    pub fn has_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// The tables to serve.
    pub fn tables(&self) -> &[TableConfig] {
        &self.tables
    }

    /// The options `table` opens with: the server's storage options, then
    /// the table's, and the on-disk cache.
    pub(crate) fn table_options(&self, table: &TableConfig) -> TableOptions {
        self.base_options(self.storage.iter().chain(&table.storage))
    }

    /// The options of a table `delta_scan` opens by URI
    /// (`--allow-any-table`): the server's storage options.
    pub(crate) fn any_table_options(&self) -> TableOptions {
        self.base_options(self.storage.iter())
    }

    fn base_options<'a>(&self, pairs: impl Iterator<Item = &'a (String, String)>) -> TableOptions {
        let mut storage = StorageOptions::new();
        for (k, v) in pairs {
            storage.insert(k.trim(), v);
        }
        let options = TableOptions::new().with_storage_options(storage);
        match &self.cache_dir {
            Some(dir) => options.with_cache_dir(dir),
            None => options,
        }
    }

    /// Adds what the TOML text `text` (read from `origin`, for errors)
    /// holds: top-level `refresh_interval = "1s"`, `memory_limit = "2GiB"`,
    /// `max_concurrent_queries = 16`, `query_timeout = "30s"`,
    /// `cache_dir = "DIR"`, `allow_any_table = false`, a `[storage_options]`
    /// table for every table, and one `[[table]]` per table with `name`,
    /// `uri` and its own `[table.storage_options]`.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming the key that is wrong.
    pub fn from_toml(mut self, text: &str, origin: &Path) -> Result<Self, Error> {
        let at = |detail: String| Error::Config(format!("{}: {detail}", origin.display()));
        let doc: toml_edit::DocumentMut = text
            .parse()
            .map_err(|e: toml_edit::TomlError| at(e.message().to_string()))?;
        for (key, item) in doc.iter() {
            match key {
                "refresh_interval" => {
                    self.refresh_interval = parse_duration(string(item, key).map_err(at)?)
                        .map_err(|e| at(format!("{key}: {e}")))?;
                }
                "query_timeout" => {
                    self.query_timeout = parse_duration(string(item, key).map_err(at)?)
                        .map_err(|e| at(format!("{key}: {e}")))?;
                }
                "memory_limit" => {
                    self.memory_limit = Some(
                        parse_bytes(string(item, key).map_err(at)?)
                            .map_err(|e| at(format!("{key}: {e}")))?,
                    );
                }
                "max_concurrent_queries" => {
                    self.max_concurrent = integer(item, key).map_err(at)?.max(1);
                }
                "max_queued_queries" => self.max_queued = integer(item, key).map_err(at)?,
                "cache_dir" => {
                    self.cache_dir = Some(PathBuf::from(string(item, key).map_err(at)?));
                }
                "allow_any_table" => {
                    self.allow_any_table = item
                        .as_bool()
                        .ok_or_else(|| at(format!("{key} must be true or false")))?;
                }
                "storage_options" => self.storage.extend(pairs(item, key).map_err(at)?),
                "table" => {
                    let tables = item
                        .as_array_of_tables()
                        .ok_or_else(|| at("`table` must be [[table]] entries".into()))?;
                    for (i, t) in tables.iter().enumerate() {
                        let entry = |k: &str| -> Result<String, Error> {
                            t.get(k)
                                .and_then(|v| v.as_str())
                                .map(str::to_string)
                                .ok_or_else(|| {
                                    at(format!("[[table]] {} has no string `{k}`", i + 1))
                                })
                        };
                        let mut table = TableConfig::new(entry("name")?, entry("uri")?);
                        for (k, _) in t.iter() {
                            if !matches!(k, "name" | "uri" | "storage_options") {
                                return Err(at(format!(
                                    "[[table]] '{}': unknown key `{k}`",
                                    table.name
                                )));
                            }
                        }
                        if let Some(options) = t.get("storage_options") {
                            table.storage = pairs(options, "storage_options").map_err(at)?;
                        }
                        self.tables.push(table);
                    }
                }
                other => return Err(at(format!("unknown key `{other}`"))),
            }
        }
        Ok(self)
    }
}

fn string<'a>(item: &'a toml_edit::Item, key: &str) -> Result<&'a str, String> {
    item.as_str()
        .ok_or_else(|| format!("{key} must be a string"))
}

fn integer(item: &toml_edit::Item, key: &str) -> Result<usize, String> {
    item.as_integer()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| format!("{key} must be a non-negative integer"))
}

/// The string values of a TOML table (never echoed in errors: they may be
/// credentials).
fn pairs(item: &toml_edit::Item, key: &str) -> Result<Vec<(String, String)>, String> {
    let table = item
        .as_table_like()
        .ok_or_else(|| format!("{key} must be a table of strings"))?;
    table
        .iter()
        .map(|(k, v)| match v.as_str() {
            Some(s) => Ok((k.to_string(), s.to_string())),
            None => Err(format!("{key}.{k} must be a string")),
        })
        .collect()
}

/// A duration such as `500ms`, `1s`, `2m`, `1h` (a bare number is seconds).
///
/// # Errors
///
/// A message saying what is accepted.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not a duration such as 500ms, 1s, 2m or 1h"))?;
    let seconds = match unit.trim() {
        "ms" => value / 1000.0,
        "" | "s" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        _ => {
            return Err(format!(
                "'{text}' is not a duration such as 500ms, 1s, 2m or 1h"
            ));
        }
    };
    Duration::try_from_secs_f64(seconds).map_err(|_| format!("'{text}' is out of range"))
}

/// A size such as `512MiB`, `2GiB`, `100MB`, `4096` (bytes).
///
/// # Errors
///
/// A message saying what is accepted.
pub fn parse_bytes(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let invalid = || format!("'{text}' is not a size such as 512MiB, 2GiB or 4096");
    let value: f64 = number.parse().map_err(|_| invalid())?;
    let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "kib" => 1024.0,
        "m" | "mb" => 1e6,
        "mib" => 1024.0 * 1024.0,
        "g" | "gb" => 1e9,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(invalid()),
    };
    let bytes = value * scale;
    if !(bytes.is_finite() && bytes >= 1.0 && bytes < usize::MAX as f64) {
        return Err(invalid());
    }
    Ok(bytes as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_sizes_parse() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("1m").unwrap(), Duration::from_secs(60));
        assert!(parse_duration("soon").unwrap_err().contains("500ms"));
        assert_eq!(parse_bytes("2GiB").unwrap(), 2 << 30);
        assert_eq!(parse_bytes("100MB").unwrap(), 100_000_000);
        assert!(parse_bytes("lots").is_err());
        assert!(parse_bytes("0").is_err());
    }

    #[test]
    fn toml_holds_tables_with_their_own_options() {
        let text = r#"
            refresh_interval = "250ms"
            memory_limit = "64MiB"
            max_concurrent_queries = 4
            [storage_options]
            aws_region = "eu-west-1"
            [[table]]
            name = "trips"
            uri = "s3://bucket/trips"
            [table.storage_options]
            aws_access_key_id = "AKIA-SECRET"
            [[table]]
            name = "zones"
            uri = "/data/zones"
        "#;
        let options = ServeOptions::new()
            .from_toml(text, Path::new("serve.toml"))
            .unwrap();
        assert_eq!(options.refresh_interval, Duration::from_millis(250));
        assert_eq!(options.memory_limit, Some(64 << 20));
        assert_eq!(options.max_concurrent, 4);
        assert_eq!(options.tables.len(), 2);
        assert_eq!(options.tables[0].storage.len(), 1);
        assert!(!format!("{options:?}").contains("AKIA-SECRET"));

        let bad = ServeOptions::new()
            .from_toml("[[table]]\nname = \"t\"\nuri = 3\n", Path::new("bad.toml"))
            .unwrap_err()
            .to_string();
        assert!(bad.contains("bad.toml") && bad.contains("`uri`"), "{bad}");
        let unknown = ServeOptions::new()
            .from_toml("refresh = \"1s\"\n", Path::new("u.toml"))
            .unwrap_err()
            .to_string();
        assert!(unknown.contains("unknown key `refresh`"), "{unknown}");
        let secret = ServeOptions::new()
            .from_toml("[storage_options]\nkey = 3\n", Path::new("s.toml"))
            .unwrap_err()
            .to_string();
        assert!(secret.contains("storage_options.key"), "{secret}");
    }
}
