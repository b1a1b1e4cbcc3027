//! What a table URI says, before any store exists: backend kind, redacted
//! URL, root path inside the store, bucket.

use std::path::{Component, PathBuf};

use object_store::path::Path;
use url::Url;

use super::Backend;
use crate::error::{Error, Result};
use crate::options::redact_uri;

/// What a URI says, before any store exists.
#[derive(Debug)]
pub(super) struct Location {
    pub(super) backend: Backend,
    /// Redacted URL.
    pub(super) url: Url,
    pub(super) root: Path,
    #[cfg_attr(
        not(any(feature = "aws", feature = "gcp")),
        expect(dead_code, reason = "only S3 and GCS take a bucket")
    )]
    pub(super) bucket: String,
    /// The URI as given (only handed to cloud builders, never displayed).
    #[cfg_attr(not(feature = "azure"), allow(dead_code, reason = "used by azure"))]
    pub(super) raw: String,
}

impl Location {
    /// The part of a store's identity the URI gives: scheme, user name
    /// (an abfss container), host and port, and for an Azure https URI
    /// its container segment. Never a password or query.
    #[cfg_attr(
        not(any(feature = "aws", feature = "azure", feature = "gcp")),
        expect(dead_code, reason = "only cloud stores are identified by their URI")
    )]
    pub(super) fn identity(&self) -> String {
        let u = &self.url;
        let user = if u.password().is_none() {
            u.username()
        } else {
            ""
        };
        let container = match (u.scheme(), self.backend) {
            ("https", Backend::Azure) => u
                .path_segments()
                .and_then(|mut s| s.next())
                .unwrap_or_default(),
            _ => "",
        };
        format!(
            "{}://{user}@{}{}/{container}",
            u.scheme(),
            u.host_str().unwrap_or(""),
            u.port().map(|p| format!(":{p}")).unwrap_or_default(),
        )
    }
}

fn invalid(uri: &str, reason: impl Into<String>) -> Error {
    Error::InvalidUri {
        uri: redact_uri(uri),
        reason: reason.into(),
    }
}

pub(super) fn parse_location(uri: &str) -> Result<Location> {
    if uri.trim().is_empty() {
        return Err(invalid(uri, "empty URI"));
    }
    if !uri.contains("://") && !uri.starts_with("file:") {
        return local_location(uri, PathBuf::from(uri));
    }
    let url = Url::parse(uri).map_err(|e| invalid(uri, e.to_string()))?;
    let redacted = Url::parse(&redact_uri(uri)).map_err(|e| invalid(uri, e.to_string()))?;
    let url_root =
        |url: &Url| Path::from_url_path(url.path()).map_err(|e| invalid(uri, e.to_string()));
    match url.scheme() {
        "file" => {
            let p = url
                .to_file_path()
                .map_err(|()| invalid(uri, "not a local file path"))?;
            local_location(uri, p)
        }
        "memory" => {
            let mut parts: Vec<&str> = url.host_str().into_iter().collect();
            parts.extend(url.path().split('/').filter(|s| !s.is_empty()));
            let root =
                Path::from_url_path(parts.join("/")).map_err(|e| invalid(uri, e.to_string()))?;
            Ok(Location {
                backend: Backend::Memory,
                url: redacted,
                root,
                bucket: String::new(),
                raw: uri.to_string(),
            })
        }
        "s3" | "s3a" | "gs" => {
            let bucket = url
                .host_str()
                .filter(|h| !h.is_empty())
                .ok_or_else(|| invalid(uri, "missing bucket name"))?
                .to_string();
            Ok(Location {
                backend: if url.scheme() == "gs" {
                    Backend::Gcs
                } else {
                    Backend::S3
                },
                root: url_root(&url)?,
                url: redacted,
                bucket,
                raw: uri.to_string(),
            })
        }
        "az" | "adl" | "azure" | "abfs" | "abfss" => {
            let container = url.host_str().filter(|h| !h.is_empty());
            if container.is_none() {
                return Err(invalid(uri, "missing container or account"));
            }
            Ok(Location {
                backend: Backend::Azure,
                root: url_root(&url)?,
                url: redacted,
                bucket: String::new(),
                raw: uri.to_string(),
            })
        }
        "https" if azure_https_host(url.host_str()) => {
            // https://<account>.blob.core.windows.net/<container>/<path>:
            // the first segment is the container, the rest the root.
            let mut segments = url.path_segments().into_iter().flatten();
            let container = segments.next().unwrap_or_default();
            if container.is_empty() {
                return Err(invalid(
                    uri,
                    "missing container: expected https://<account>.blob.core.windows.net/<container>/<path>",
                ));
            }
            let rest: Vec<&str> = segments.filter(|s| !s.is_empty()).collect();
            let root =
                Path::from_url_path(rest.join("/")).map_err(|e| invalid(uri, e.to_string()))?;
            Ok(Location {
                backend: Backend::Azure,
                root,
                url: redacted,
                bucket: String::new(),
                raw: uri.to_string(),
            })
        }
        "https" | "http" => Err(invalid(
            uri,
            "http(s) URIs name Azure Blob Storage accounts only (https://<account>.blob.core.windows.net/<container>/<path>, or .dfs.core.windows.net); other stores have their own schemes (s3://, gs://, az://)",
        )),
        other => Err(Error::UnsupportedScheme {
            uri: redact_uri(uri),
            scheme: other.to_string(),
        }),
    }
}

fn local_location(uri: &str, path: PathBuf) -> Result<Location> {
    let abs = std::path::absolute(&path).map_err(|e| invalid(uri, e.to_string()))?;
    // Lexical normalisation: object_store paths cannot hold `.` or `..`.
    let mut norm = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                norm.pop();
            }
            other => norm.push(other),
        }
    }
    let url = Url::from_directory_path(&norm)
        .map_err(|()| invalid(uri, "cannot form a file URL from this path"))?;
    let root = Path::from_absolute_path(&norm).map_err(|e| invalid(uri, e.to_string()))?;
    Ok(Location {
        backend: Backend::Local,
        url,
        root,
        bucket: String::new(),
        raw: uri.to_string(),
    })
}

/// Whether `host` is an Azure Blob / ADLS Gen2 (or OneLake) account host,
/// the https URIs object_store's Azure builder understands.
fn azure_https_host(host: Option<&str>) -> bool {
    host.and_then(|h| h.split_once('.'))
        .is_some_and(|(account, domain)| {
            !account.is_empty()
                && matches!(
                    domain,
                    "blob.core.windows.net"
                        | "dfs.core.windows.net"
                        | "blob.fabric.microsoft.com"
                        | "dfs.fabric.microsoft.com"
                )
        })
}
