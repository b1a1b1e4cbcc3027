//! Storage options that never print their secrets.
//!
//! Options are `key -> value` strings as object_store's builders take them
//! (`aws_access_key_id`, `region`, `endpoint`, ...). Keys are compared in
//! lower case. `Debug` shows every key but only the values of keys known to be
//! harmless (region, endpoint, flags); every other value prints as
//! `<redacted>`. An allow-list, not a deny-list: a new secret-bearing key can
//! never slip through.

use std::collections::BTreeMap;
use std::fmt;

/// Placeholder printed instead of a secret.
pub const REDACTED: &str = "<redacted>";

/// Keys whose values are safe to print (lower case, without `aws_`/`azure_`/`google_` prefix).
const PUBLIC_KEYS: &[&str] = &[
    "region",
    "default_region",
    "endpoint",
    "endpoint_url",
    "allow_http",
    "virtual_hosted_style_request",
    "bucket",
    "bucket_name",
    "s3_express",
    "unsigned_payload",
    "skip_signature",
    "checksum_algorithm",
    "conditional_put",
    "request_payer",
    "imdsv1_fallback",
    "metadata_endpoint",
    "container_name",
    "account_name",
    "storage_account_name",
    "use_emulator",
    "use_fabric_endpoint",
    "disable_tagging",
];

/// Caller-supplied storage options (credentials, endpoint, region, flags).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct StorageOptions {
    map: BTreeMap<String, String>,
}

impl StorageOptions {
    /// An empty option set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one option (key lower-cased), consuming and returning `self`.
    pub fn with(mut self, key: impl AsRef<str>, value: impl Into<String>) -> Self {
        self.insert(key, value);
        self
    }

    /// Adds or replaces one option (key lower-cased).
    pub fn insert(&mut self, key: impl AsRef<str>, value: impl Into<String>) {
        self.map
            .insert(key.as_ref().to_ascii_lowercase(), value.into());
    }

    /// The value of `key` (case-insensitive).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.map.get(&key.to_ascii_lowercase()).map(String::as_str)
    }

    /// Removes and returns `key` (case-insensitive).
    pub fn remove(&mut self, key: &str) -> Option<String> {
        self.map.remove(&key.to_ascii_lowercase())
    }

    /// All options, keys lower case.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.map.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Number of options.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether there are no options.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Whether the value of `key` may be printed.
    pub fn is_public_key(key: &str) -> bool {
        let key = key.to_ascii_lowercase();
        let bare = ["aws_", "azure_", "google_"]
            .iter()
            .find_map(|p| key.strip_prefix(p))
            .unwrap_or(&key);
        PUBLIC_KEYS.contains(&bare)
    }
}

impl<K: AsRef<str>, V: Into<String>> FromIterator<(K, V)> for StorageOptions {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut options = Self::new();
        for (k, v) in iter {
            options.insert(k, v);
        }
        options
    }
}

impl fmt::Debug for StorageOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for (k, v) in &self.map {
            if Self::is_public_key(k) && is_endpoint_key(k) {
                map.entry(k, &redact_uri(v));
            } else if Self::is_public_key(k) {
                map.entry(k, v);
            } else {
                map.entry(k, &REDACTED);
            }
        }
        map.finish()
    }
}

/// Removes credentials from a URI for display: the password of the user-info
/// part and every query value (SAS tokens, signatures) become `<redacted>`.
/// A string that does not parse as a URL is returned unchanged only when it
/// is a plain path (no `scheme://`, no `@`, no `?`); otherwise all of it
/// after the scheme is redacted, since what cannot be parsed cannot be
/// told apart from a secret.
pub fn redact_uri(uri: &str) -> String {
    let Ok(mut url) = url::Url::parse(uri) else {
        return match uri.split_once("://") {
            Some((scheme, _))
                if scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) =>
            {
                format!("{scheme}://{REDACTED}")
            }
            Some(_) => REDACTED.to_string(),
            None if uri.contains(['@', '?']) => REDACTED.to_string(),
            None => uri.to_string(),
        };
    };
    // `user:pw@host/t` parses as a URL of scheme `user` without authority:
    // credentials in disguise.
    if url.cannot_be_a_base() && uri.contains('@') {
        return REDACTED.to_string();
    }
    // A user name alone is not secret (abfss:// puts the container there);
    // with a password both go.
    if url.password().is_some() {
        // These fail only for URLs that cannot carry user info, which we have
        // just seen this one does.
        let _ = url.set_password(Some(REDACTED));
        let _ = url.set_username(REDACTED);
    }
    if url.query().is_some() {
        let pairs: Vec<String> = url
            .query_pairs()
            .map(|(k, _)| format!("{k}={REDACTED}"))
            .collect();
        url.set_query(Some(&pairs.join("&")));
    }
    // The URL writer percent-encodes the marker in user info.
    url.to_string().replace("%3Credacted%3E", REDACTED)
}

/// The parts of `value` (an endpoint URL given as a storage option or
/// environment variable) that must never be printed: its user info and its
/// query string. Empty for plain URLs.
pub(crate) fn endpoint_secrets(value: &str) -> Vec<String> {
    let Ok(url) = url::Url::parse(value) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if !url.username().is_empty() || url.password().is_some() {
        let userinfo = match url.password() {
            Some(p) => format!("{}:{p}", url.username()),
            None => url.username().to_string(),
        };
        out.push(userinfo);
    }
    if let Some(q) = url.query().filter(|q| !q.is_empty()) {
        out.push(q.to_string());
    }
    out
}

/// Whether the storage option (or environment variable) `key` holds an
/// Azure SAS token (`azure_storage_sas_key`, `azure_storage_sas_token`,
/// `sas_key`, `sas_token`, any case).
pub(crate) fn is_sas_key(key: &str) -> bool {
    matches!(
        key.to_ascii_lowercase().as_str(),
        "azure_storage_sas_key" | "azure_storage_sas_token" | "sas_key" | "sas_token"
    )
}

/// The parts of a SAS token that must never be printed, in every spelling
/// an error may quote them: object_store sends the token's pairs as query
/// parameters of each request URL (form-encoded), and its request errors
/// quote that URL. The whole token, and its `sig` value raw, decoded and
/// form-encoded.
pub(crate) fn sas_secrets(token: &str) -> Vec<String> {
    let mut out = vec![token.to_string()];
    let decoded = percent_decode(token);
    for pair in decoded.trim_start_matches('?').split('&') {
        if let Some((k, v)) = pair.trim().split_once('=')
            && k == "sig"
            && !v.is_empty()
        {
            out.push(v.to_string());
            out.push(url::form_urlencoded::byte_serialize(v.as_bytes()).collect());
        }
    }
    for pair in token.trim_start_matches('?').split('&') {
        if let Some(("sig", v)) = pair.trim().split_once('=')
            && !v.is_empty()
        {
            out.push(v.to_string());
        }
    }
    out.sort();
    out.dedup();
    out
}

/// `%XX` sequences decoded (as object_store decodes a SAS token); `+` kept.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether the storage option (or environment variable) `key` names an
/// endpoint URL.
pub(crate) fn is_endpoint_key(key: &str) -> bool {
    key.to_ascii_lowercase().contains("endpoint")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_redacts_secrets_but_shows_public_values() {
        let options = StorageOptions::new()
            .with("AWS_SECRET_ACCESS_KEY", "s3cr3t-value")
            .with("aws_access_key_id", "AKIAEXAMPLE")
            .with("aws_session_token", "tok-123")
            .with("region", "eu-west-1")
            .with("aws_endpoint", "http://127.0.0.1:9000");
        let dbg = format!("{options:?}");
        assert!(!dbg.contains("s3cr3t-value"), "{dbg}");
        assert!(!dbg.contains("AKIAEXAMPLE"), "{dbg}");
        assert!(!dbg.contains("tok-123"), "{dbg}");
        assert!(dbg.contains("eu-west-1"), "{dbg}");
        assert!(dbg.contains("127.0.0.1:9000"), "{dbg}");
        assert!(dbg.contains("aws_secret_access_key"), "{dbg}");
        assert_eq!(options.get("Aws_Secret_Access_Key"), Some("s3cr3t-value"));
    }

    #[test]
    fn sas_secrets_cover_every_spelling_of_the_signature() {
        let token = "sv=2023-11-03&sp=rl&se=2099-01-01T00%3A00%3A00Z&sr=c&sig=ab%2Bc%2Fd%3D";
        let secrets = sas_secrets(token);
        for want in [token, "ab+c/d=", "ab%2Bc%2Fd%3D"] {
            assert!(secrets.iter().any(|s| s == want), "{want} in {secrets:?}");
        }
        assert!(is_sas_key("AZURE_STORAGE_SAS_TOKEN") && is_sas_key("sas_key"));
        assert!(!is_sas_key("azure_storage_account_key"));
        assert_eq!(percent_decode("a%3Db%2"), "a=b%2");
    }

    #[test]
    fn redact_uri_hides_userinfo_and_query_values() {
        let r = redact_uri("s3://AKIA:topsecret@bucket/table?sig=abc&x=1");
        assert!(!r.contains("topsecret"), "{r}");
        assert!(!r.contains("AKIA"), "{r}");
        assert!(!r.contains("abc"), "{r}");
        assert!(r.contains("bucket/table"), "{r}");
        assert_eq!(redact_uri("/tmp/table"), "/tmp/table");
        assert_eq!(redact_uri("s3://bucket/t"), "s3://bucket/t");
    }
}
