//! Paths in the log are URI references (protocol digest §1, §2.9).
//!
//! Every `add.path`, `remove.path` and DV `p` path is resolved against the
//! table root URI as RFC 3986 says, then percent-decoded once:
//!
//! ```text
//! root  file:///data/t/
//! a.parquet              -> file:///data/t/a.parquet   key "a.parquet"
//! p%20q.parquet          -> file:///data/t/p q.parquet key "p q.parquet"
//! /data/t/a.parquet      -> file:///data/t/a.parquet   key "a.parquet"   (keeps scheme and authority)
//! file:/data/t/a.parquet -> file:///data/t/a.parquet   key "a.parquet"
//! /data/u/b.parquet      -> file:///data/u/b.parquet   key "/data/u/b.parquet" (same store, outside the root)
//! s3://other/k           -> s3://other/k               key "s3://other/k"      (another store)
//! ```
//!
//! Replay keys files by the canonical result ([`TablePaths::replay_key`]), so
//! an `add` and a `remove` that spell one file differently cancel, as in
//! Delta-Spark. Plain relative names (nearly every real log) take a fast
//! path that neither parses nor allocates.

use std::borrow::Cow;

use object_store::path::Path;
use url::Url;

use crate::add_columns::FileKey;
use crate::error::{LogError, Result};

/// Where a log path points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileLocation {
    /// An object of the table's own store (inside the table root or not).
    TableStore(Path),
    /// An object of another store: its origin (`scheme://authority`, e.g.
    /// `s3://other-bucket`) and its key there.
    OtherStore {
        /// `scheme://authority` of the store holding the object.
        origin: String,
        /// The object's key inside that store.
        path: Path,
    },
}

/// Resolves log paths against one table root.
#[derive(Debug, Clone)]
pub struct TablePaths {
    url: Url,
    root: Path,
    /// `root/` (empty for the store root): the prefix of in-table keys.
    prefix: String,
}

/// Scheme aliases that name one store kind.
fn scheme_kind(scheme: &str) -> &str {
    match scheme {
        "s3a" | "s3n" => "s3",
        other => other,
    }
}

fn origin(url: &Url) -> String {
    let mut o = format!("{}://", scheme_kind(url.scheme()));
    if !url.username().is_empty() {
        o.push_str(url.username());
        o.push('@');
    }
    o.push_str(url.host_str().unwrap_or(""));
    if let Some(port) = url.port() {
        o.push_str(&format!(":{port}"));
    }
    o
}

/// Whether `b` may stand in a plain relative name: an ASCII letter or
/// digit, `-`, `_`, `.`, `=`, or the `/` between segments. Branch-free, so
/// that a loop over bytes vectorizes.
#[inline(always)]
fn plain_or_slash(b: u8) -> bool {
    (b.wrapping_sub(b'0') < 10)
        | ((b | 0x20).wrapping_sub(b'a') < 26)
        | (b == b'-')
        | (b == b'_')
        | (b == b'.')
        | (b == b'=')
        | (b == b'/')
}

/// A segment other than empty, `.` and `..`.
fn plain_segment(seg: &[u8]) -> bool {
    !matches!(seg, b"" | b"." | b"..")
}

/// A relative path whose segments need no percent-decoding and are valid
/// object-store segments as they stand (the common case: Spark's
/// `part-…-c000.snappy.parquet` under `col=value/` directories). It runs
/// for every file of a log: the bytes are checked 16 at a time with no
/// branch a byte (the last 16 overlapping the others, a shorter name
/// padded), then the segments, when there is a `/`.
pub(crate) fn is_plain_relative(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    let mut slash = false;
    let mut chunks = bytes.chunks_exact(16);
    for chunk in &mut chunks {
        if !plain_chunk(chunk, &mut slash) {
            return false;
        }
    }
    if !chunks.remainder().is_empty() {
        let last = if bytes.len() >= 16 {
            &bytes[bytes.len() - 16..]
        } else {
            // Padded with a plain byte: the check sees the name's bytes.
            let mut padded = [b'a'; 16];
            padded[..bytes.len()].copy_from_slice(bytes);
            return plain_chunk(&padded, &mut slash) && segments_plain(bytes, slash);
        };
        if !plain_chunk(last, &mut slash) {
            return false;
        }
    }
    segments_plain(bytes, slash)
}

/// Whether every byte of `chunk` (16 of them) may stand in a plain name;
/// sets `slash` when one is a `/`.
#[inline(always)]
fn plain_chunk(chunk: &[u8], slash: &mut bool) -> bool {
    let mut plain = true;
    for &b in &chunk[..16] {
        plain &= plain_or_slash(b);
        *slash |= b == b'/';
    }
    plain
}

/// Whether no segment of `bytes` (split at `/`, when `slash`) is empty,
/// `.` or `..`.
fn segments_plain(bytes: &[u8], slash: bool) -> bool {
    if slash {
        bytes.split(|&b| b == b'/').all(plain_segment)
    } else {
        plain_segment(bytes)
    }
}

impl TablePaths {
    /// Paths of the table whose root is `url` (the table's URI) and whose
    /// objects live under `root` in its store.
    pub fn new(url: &Url, root: &Path) -> Self {
        let mut url = url.clone();
        if !url.path().ends_with('/') {
            let dir = format!("{}/", url.path());
            url.set_path(&dir);
        }
        Self {
            url,
            root: root.clone(),
            prefix: if root.as_ref().is_empty() {
                String::new()
            } else {
                format!("{root}/")
            },
        }
    }

    /// Paths of a table known only by its root inside a store: the store is
    /// taken to be a local file system (`file:///root/`), so absolute URIs of
    /// any other scheme are on another store.
    pub fn for_store_root(root: &Path) -> Result<Self> {
        let url = Url::parse(&format!("file:///{root}/")).map_err(|e| LogError::InvalidPath {
            path: root.to_string(),
            detail: format!("not usable as a table root: {e}"),
        })?;
        Ok(Self::new(&url, root))
    }

    /// Paths of the table's sidecar folder, `_delta_log/_sidecars/`.
    pub fn sidecars(&self) -> Result<Self> {
        let url = self
            .url
            .join("_delta_log/_sidecars/")
            .map_err(|e| LogError::InvalidPath {
                path: self.url.to_string(),
                detail: e.to_string(),
            })?;
        let root = self.root.clone().join("_delta_log").join("_sidecars");
        Ok(Self::new(&url, &root))
    }

    /// The table root URI (ending in `/`).
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// The table root inside its store.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the log path `raw` points.
    pub fn locate(&self, raw: &str) -> Result<FileLocation> {
        if is_plain_relative(raw) {
            return Ok(FileLocation::TableStore(Path::from(format!(
                "{}{raw}",
                self.prefix
            ))));
        }
        let invalid = |detail: String| LogError::InvalidPath {
            path: raw.to_string(),
            detail,
        };
        // A URL parser reads `\` as `/` in file: and http: URLs; in a log
        // path it is a character of a name, as in Delta's own reader.
        let escaped;
        let reference = if raw.contains('\\') {
            escaped = raw.replace('\\', "%5C");
            escaped.as_str()
        } else {
            raw
        };
        let url = self
            .url
            .join(reference)
            .map_err(|e| invalid(e.to_string()))?;
        if url.query().is_some() || url.fragment().is_some() {
            return Err(invalid("a data file path has no query or fragment".into()));
        }
        let path = Path::from_url_path(url.path()).map_err(|e| invalid(e.to_string()))?;
        let origin = origin(&url);
        if origin == self::origin(&self.url) {
            Ok(FileLocation::TableStore(path))
        } else {
            Ok(FileLocation::OtherStore { origin, path })
        }
    }

    /// The canonical replay key of the log path `raw`: the decoded path
    /// relative to the table root for files inside it, `/` + the object key
    /// for other files of the table's store, and `origin/key` for files of
    /// other stores. Two spellings of one file give one key.
    pub fn replay_key<'a>(&self, raw: &'a str) -> Result<Cow<'a, str>> {
        if is_plain_relative(raw) {
            return Ok(Cow::Borrowed(raw));
        }
        Ok(Cow::Owned(match self.locate(raw)? {
            FileLocation::TableStore(p) => match p.as_ref().strip_prefix(&self.prefix) {
                Some(rel) if !rel.is_empty() => rel.to_string(),
                _ => format!("/{p}"),
            },
            FileLocation::OtherStore { origin, path } => format!("{origin}/{path}"),
        }))
    }

    /// The logical-file key (§2.10) of the log path `path` with an optional
    /// DV `(storageType, pathOrInlineDv, offset)`: the canonical path (see
    /// [`TablePaths::replay_key`]) and the DV unique id, whose `p` path is
    /// canonicalized the same way.
    pub fn file_key(&self, path: &str, dv: Option<(&str, &str, Option<i32>)>) -> Result<FileKey> {
        Ok(self.file_key_and_plainness(path, dv)?.0)
    }

    /// [`TablePaths::file_key`], and whether `path` is a plain relative
    /// name that needed no resolving (replay records it, so the file index
    /// does not check the path again).
    pub(crate) fn file_key_and_plainness(
        &self,
        path: &str,
        dv: Option<(&str, &str, Option<i32>)>,
    ) -> Result<(FileKey, bool)> {
        let mut packed = String::with_capacity(path.len() + dv.map_or(0, |d| d.1.len() + 16));
        let plain = self.key_into(path, dv, &mut packed)?;
        Ok((FileKey::from_packed(packed), plain))
    }

    /// Writes the logical-file key of [`TablePaths::file_key`] into `buf`
    /// (cleared first), packed as [`FileKey`] packs it, and says whether
    /// `path` is a plain relative name. With a buffer reused across rows,
    /// keys are built (and hashed) without allocating per row.
    pub(crate) fn key_into(
        &self,
        path: &str,
        dv: Option<(&str, &str, Option<i32>)>,
        buf: &mut String,
    ) -> Result<bool> {
        buf.clear();
        let key = self.replay_key(path)?;
        let plain = matches!(key, Cow::Borrowed(_));
        buf.push_str(&key);
        if let Some((storage, dv_path, offset)) = dv {
            // The DV unique id (`dar_dv::unique_id`), its `p` path canonical.
            buf.push('\0');
            buf.push_str(storage);
            if storage == "p" {
                buf.push_str(&self.replay_key(dv_path)?);
            } else {
                buf.push_str(dv_path);
            }
            if let Some(offset) = offset {
                use std::fmt::Write as _;
                // Writing to a String cannot fail.
                let _ = write!(buf, "@{offset}");
            }
        }
        Ok(plain)
    }

    /// Whether `location` lies inside the table root.
    pub fn is_inside_root(&self, location: &FileLocation) -> bool {
        match location {
            FileLocation::TableStore(p) => p.as_ref().starts_with(&self.prefix),
            FileLocation::OtherStore { .. } => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths() -> TablePaths {
        TablePaths::new(
            &Url::parse("file:///data/t").unwrap(),
            &Path::from("data/t"),
        )
    }

    #[test]
    fn spellings_of_one_file_share_a_key() {
        let p = paths();
        for raw in [
            "a.parquet",
            "/data/t/a.parquet",
            "file:/data/t/a.parquet",
            "file:///data/t/a.parquet",
            "./a.parquet",
            "x/../a.parquet",
            "%61.parquet",
        ] {
            assert_eq!(p.replay_key(raw).unwrap(), "a.parquet", "{raw}");
        }
        assert_eq!(p.replay_key("p%20q.parquet").unwrap(), "p q.parquet");
        assert_eq!(p.replay_key("p q.parquet").unwrap(), "p q.parquet");
        assert_eq!(p.replay_key("p%2520q.parquet").unwrap(), "p%20q.parquet");
    }

    /// A backslash is a character of a file name, not a separator (a URL
    /// parser turns it into `/` in file: and http: URLs).
    #[test]
    fn a_backslash_is_part_of_a_name() {
        let p = paths();
        assert_eq!(p.replay_key("dir\\a.parquet").unwrap(), "dir\\a.parquet");
        let FileLocation::TableStore(key) = p.locate("dir\\a.parquet").unwrap() else {
            panic!("on the table's store");
        };
        assert_eq!(key.as_ref(), "data/t/dir\\a.parquet");
        assert_ne!(
            p.replay_key("dir\\a.parquet").unwrap(),
            p.replay_key("dir/a.parquet").unwrap()
        );
    }

    #[test]
    fn absolute_path_reference_keeps_scheme_and_authority() {
        let p = TablePaths::new(
            &Url::parse("s3://bucket/tables/t/").unwrap(),
            &Path::from("tables/t"),
        );
        assert_eq!(
            p.locate("/tables/t/a.parquet").unwrap(),
            FileLocation::TableStore(Path::from("tables/t/a.parquet"))
        );
        assert_eq!(p.replay_key("/tables/t/a.parquet").unwrap(), "a.parquet");
        assert_eq!(
            p.replay_key("s3a://bucket/tables/t/a.parquet").unwrap(),
            "a.parquet"
        );
        assert_eq!(
            p.replay_key("/elsewhere/b.parquet").unwrap(),
            "/elsewhere/b.parquet"
        );
        assert_eq!(
            p.locate("s3://other/k").unwrap(),
            FileLocation::OtherStore {
                origin: "s3://other".into(),
                path: Path::from("k")
            }
        );
        assert_eq!(p.replay_key("s3://other/k").unwrap(), "s3://other/k");
        assert!(!p.is_inside_root(&p.locate("/elsewhere/b.parquet").unwrap()));
        assert!(p.is_inside_root(&p.locate("a.parquet").unwrap()));
    }

    #[test]
    fn other_hosts_of_file_urls_are_other_stores() {
        let p = paths();
        assert!(matches!(
            p.locate("file://otherhost/data/t/a.parquet").unwrap(),
            FileLocation::OtherStore { .. }
        ));
        assert!(matches!(
            p.locate("http://example.invalid/a.parquet").unwrap(),
            FileLocation::OtherStore { .. }
        ));
    }

    #[test]
    fn plain_relative_names() {
        for plain in [
            "a.parquet",
            "day=2024-01-02/part-0.snappy.parquet",
            "a/b_c-d=e/f",
        ] {
            assert!(is_plain_relative(plain), "{plain}");
        }
        for not in [
            "",
            "/a",
            "a/",
            "a//b",
            "./a",
            "a/./b",
            "a/..",
            "..",
            "p%20q",
            "p q",
            "s3://b/k",
            "a?b",
            "a#b",
            "é.parquet",
            "a\\b",
        ] {
            assert!(!is_plain_relative(not), "{not}");
        }
    }

    /// The byte-at-a-time definition `is_plain_relative` must agree with:
    /// segments of ASCII letters, digits, `-_.=`, none empty, `.` or `..`.
    fn plain_by_definition(raw: &str) -> bool {
        raw.split('/').all(|seg| {
            !matches!(seg, "" | "." | "..")
                && seg
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'='))
        })
    }

    proptest::proptest! {
        /// Names of every length (across the 16-byte steps), drawn from
        /// the allowed bytes, the separators and a few that are not
        /// allowed (`%`, space, `?`, a backslash, `:`, `@`, `[`, a
        /// backtick, `{`, a non-ASCII letter).
        #[test]
        fn plain_relative_agrees_with_its_definition(
            raw in "[a-zA-Z0-9._=/-]{0,40}|[aZ9./=%? \\\\:@\\[`{é_-]{0,40}"
        ) {
            proptest::prop_assert_eq!(is_plain_relative(&raw), plain_by_definition(&raw), "{:?}", raw);
        }
    }

    #[test]
    fn bad_paths_name_the_path() {
        let err = paths().locate("a.parquet?x=1").unwrap_err().to_string();
        assert!(err.contains("a.parquet?x=1"), "{err}");
    }
}
