//! [`ObjectId`]: one version of one object of one store, the key of every
//! cache (footers and page indexes, byte ranges in memory and on disk).
//!
//! ```text
//! ObjectId = StoreId   which store: scheme, endpoint, account, bucket
//!          + path      the object's path in that store
//!          + size      from the log or a listing, when known
//!          + version   ETag / version id from a listing or a response,
//!                      else the log's modificationTime
//! ```
//!
//! Two stores that answer for the same bucket and path (two S3-compatible
//! endpoints, two Azure accounts) have different [`StoreId`]s, so their
//! objects never share an entry. A table dropped and recreated at the same
//! place gets new modification times in its log; a file rewritten in
//! place gets a new ETag, which the disk tier checks before serving a byte
//! (see `range_cache`).

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Which store an object lives in: what tells two stores apart (scheme,
/// endpoint, account, bucket or container), credentials never included.
///
/// Built by [`crate::TableStoreBuilder::build`] from the URI and the
/// resolved configuration. A store the caller supplies
/// ([`crate::TableStoreBuilder::with_store`]) gets a [`StoreId::unique`]
/// one unless the caller names it ([`crate::TableStoreBuilder::with_store_id`]).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StoreId(Arc<str>);

impl StoreId {
    /// A store identity from its describing text (for example
    /// `s3 http://127.0.0.1:9000 bucket`). The text must not hold secrets:
    /// it is written into cache files.
    pub fn new(text: impl Into<String>) -> Self {
        Self(Arc::from(text.into()))
    }

    /// An identity no other store of this process shares (for stores whose
    /// objects are known only to this process, such as `memory://`, or
    /// stores a caller supplied without naming them). Disk entries under
    /// it are never found by another process.
    pub fn unique() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        Self::new(format!(
            "process-local pid={} n={n} t={}",
            std::process::id(),
            process_start_nanos()
        ))
    }

    /// The describing text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Nanoseconds since the epoch at the first call in this process: with the
/// pid, tells apart two processes that reuse one pid.
fn process_start_nanos() -> u128 {
    static START: std::sync::OnceLock<u128> = std::sync::OnceLock::new();
    *START.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    })
}

impl fmt::Debug for StoreId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StoreId({})", self.0)
    }
}

impl fmt::Display for StoreId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Which version of an object some bytes belong to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ObjectVersion {
    /// The ETag or version id a store gave (in a listing or a response).
    Tag(String),
    /// The modification time a Delta log records for the file (`add.modificationTime`,
    /// milliseconds since the epoch), where no tag is known before a request.
    Modified(i64),
}

impl ObjectVersion {
    /// The version a store gave for a listed or fetched object: its
    /// version id, else its ETag, else its modification time and size.
    pub fn of(meta: &object_store::ObjectMeta) -> Self {
        Self::Tag(store_tag(meta))
    }
}

impl fmt::Display for ObjectVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Tag(t) => write!(f, "tag:{t}"),
            Self::Modified(ms) => write!(f, "modified:{ms}"),
        }
    }
}

/// One version of one object of one store: the key of every cache (see
/// the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectId {
    /// The store.
    pub store: StoreId,
    /// The object's path in the store.
    pub path: String,
    /// The object's size, when known (Delta `add.size`, a listing).
    pub size: Option<u64>,
    /// The object's version, when known.
    pub version: Option<ObjectVersion>,
}

impl ObjectId {
    /// The identity of `path` in `store`, size and version unknown.
    pub fn new(store: StoreId, path: impl Into<String>) -> Self {
        Self {
            store,
            path: path.into(),
            size: None,
            version: None,
        }
    }

    /// With a known size.
    pub fn with_size(mut self, size: Option<u64>) -> Self {
        self.size = size;
        self
    }

    /// With a known version.
    pub fn with_version(mut self, version: Option<ObjectVersion>) -> Self {
        self.version = version;
        self
    }

    /// The identity as one line of text per field (what disk entries
    /// record and compare; no field holds a newline that is not escaped).
    pub(crate) fn text(&self) -> String {
        format!(
            "store {}\npath {}\nsize {}\nversion {}",
            escape(self.store.as_str()),
            escape(&self.path),
            self.size.map_or_else(|| "-".to_string(), |s| s.to_string()),
            self.version
                .as_ref()
                .map_or_else(|| "-".to_string(), |v| escape(&v.to_string()))
        )
    }
}

/// `s` with backslashes and newlines escaped, so a field cannot forge the
/// next line of [`ObjectId::text`].
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n")
}

/// The tag that identifies the bytes a store returned for `meta`: its
/// version id, else its ETag, else its modification time (a store that
/// gives neither still changes that on a rewrite).
pub(crate) fn store_tag(meta: &object_store::ObjectMeta) -> String {
    match (&meta.version, &meta.e_tag) {
        (Some(v), _) => format!("version:{v}"),
        (None, Some(e)) => format!("etag:{e}"),
        (None, None) => format!(
            "modified:{}:{}",
            meta.last_modified.timestamp_nanos_opt().unwrap_or(0),
            meta.size
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_tells_fields_apart_and_cannot_be_forged() {
        let a = ObjectId::new(StoreId::new("s3 e1 b"), "t/a.parquet")
            .with_size(Some(10))
            .with_version(Some(ObjectVersion::Modified(5)));
        let mut b = a.clone();
        b.store = StoreId::new("s3 e2 b");
        assert_ne!(a.text(), b.text());
        let forged = ObjectId::new(StoreId::new("s3 e1 b\npath t/a.parquet"), "x");
        assert!(!forged.text().contains("\npath t/a.parquet\n"));
        assert_ne!(StoreId::unique(), StoreId::unique());
    }
}
