//! Cloud backends: S3, Azure and GCS stores built from the environment
//! and the caller's options, with their identities; endpoint values
//! checked and errors scrubbed of quoted values.

use std::sync::Arc;

use object_store::ObjectStore;

use super::{Location, TableStoreBuilder};
use crate::error::{Error, Result};
use crate::identity::StoreId;
#[cfg(any(feature = "aws", feature = "azure", feature = "gcp", test))]
use crate::options::is_endpoint_key;

impl TableStoreBuilder {
    #[cfg(feature = "aws")]
    pub(super) fn s3(
        &self,
        loc: &Location,
        uri: String,
    ) -> Result<(Arc<dyn ObjectStore>, StoreId)> {
        let b = self.configure(object_store::aws::AmazonS3Builder::new())?;
        build(b.with_bucket_name(loc.bucket.clone()), loc, uri)
    }

    #[cfg(not(feature = "aws"))]
    pub(super) fn s3(
        &self,
        _loc: &Location,
        uri: String,
    ) -> Result<(Arc<dyn ObjectStore>, StoreId)> {
        Err(Error::FeatureDisabled {
            uri,
            feature: "aws",
        })
    }

    #[cfg(feature = "azure")]
    pub(super) fn azure(
        &self,
        loc: &Location,
        uri: String,
    ) -> Result<(Arc<dyn ObjectStore>, StoreId)> {
        let b = self.configure(object_store::azure::MicrosoftAzureBuilder::new())?;
        build(b.with_url(loc.raw.clone()), loc, uri)
    }

    #[cfg(not(feature = "azure"))]
    pub(super) fn azure(
        &self,
        _loc: &Location,
        uri: String,
    ) -> Result<(Arc<dyn ObjectStore>, StoreId)> {
        Err(Error::FeatureDisabled {
            uri,
            feature: "azure",
        })
    }

    #[cfg(feature = "gcp")]
    pub(super) fn gcs(
        &self,
        loc: &Location,
        uri: String,
    ) -> Result<(Arc<dyn ObjectStore>, StoreId)> {
        let b = self.configure(object_store::gcp::GoogleCloudStorageBuilder::new())?;
        build(b.with_bucket_name(loc.bucket.clone()), loc, uri)
    }

    #[cfg(not(feature = "gcp"))]
    pub(super) fn gcs(
        &self,
        _loc: &Location,
        uri: String,
    ) -> Result<(Arc<dyn ObjectStore>, StoreId)> {
        Err(Error::FeatureDisabled {
            uri,
            feature: "gcp",
        })
    }

    /// Configures a cloud builder: the policy's connect timeout, then the
    /// environment (unknown variables with the backend's prefix are
    /// ignored, as object_store's `from_env` does), then caller options
    /// (unknown keys are an error: a typo must not silently fall back to
    /// defaults), then the retry policy. The caller sets the bucket / URL
    /// afterwards so options cannot override it.
    #[cfg(any(feature = "aws", feature = "azure", feature = "gcp"))]
    fn configure<B: CloudBuilder>(&self, mut b: B) -> Result<B> {
        if let Ok(key) = "connect_timeout".parse::<B::Key>() {
            b = b.with_key(key, self.retry.connect_timeout_option());
        }
        for (k, v) in self.env_with_prefix(B::ENV_PREFIX) {
            if let Ok(key) = k.to_ascii_lowercase().parse::<B::Key>() {
                check_endpoint(&k, &v)?;
                b = b.with_key(key, v);
            }
        }
        for (k, v) in self.options.iter() {
            let key = k.parse::<B::Key>().map_err(|_| Error::UnknownOption {
                key: k.to_string(),
                backend: B::BACKEND,
            })?;
            check_endpoint(k, v)?;
            b = b.with_key(key, v.to_string());
        }
        Ok(b.with_http_retry(self.retry.http_config()))
    }
}

/// An endpoint option (or variable) `key` must hold an http(s) URL that
/// parses, port included: object_store unwraps it deep in its credential
/// code, and a bad one panicked there (`http://127.0.0.1:99999`). The
/// value is never echoed.
#[cfg(any(feature = "aws", feature = "azure", feature = "gcp", test))]
fn check_endpoint(key: &str, value: &str) -> Result<()> {
    if !is_endpoint_key(key) {
        return Ok(());
    }
    let invalid = |reason: String| Error::InvalidOption {
        key: key.to_string(),
        reason,
    };
    let url = url::Url::parse(value).map_err(|e| invalid(format!("not a URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid(format!(
            "the scheme must be http or https, not '{}'",
            url.scheme()
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(invalid("the URL has no host".to_string()));
    }
    Ok(())
}

/// Builds a configured cloud store and its identity; `uri` (already
/// redacted) names it in errors.
#[cfg(any(feature = "aws", feature = "azure", feature = "gcp"))]
fn build<B: CloudBuilder>(
    b: B,
    loc: &Location,
    uri: String,
) -> Result<(Arc<dyn ObjectStore>, StoreId)> {
    let id = StoreId::new(format!("{} {}", loc.identity(), b.identity()));
    let store = b.build_store().map_err(|source| Error::BuildStore {
        uri,
        reason: redact_quoted(&source.to_string()),
    })?;
    Ok((store, id))
}

/// An endpoint URL as part of a store identity: scheme, host, port and
/// path, never user info or a query (they may hold secrets).
#[cfg(any(feature = "aws", feature = "azure", feature = "gcp"))]
fn endpoint_identity(value: Option<String>) -> String {
    match value.as_deref().map(url::Url::parse) {
        Some(Ok(u)) => format!(
            "{}://{}{}{}",
            u.scheme(),
            u.host_str().unwrap_or(""),
            u.port().map(|p| format!(":{p}")).unwrap_or_default(),
            u.path()
        ),
        Some(Err(_)) => "unparsed-endpoint".to_string(),
        None => "-".to_string(),
    }
}

/// `text` with every `"..."` and `'...'` span replaced by `<redacted>`:
/// object_store quotes the offending value when an option does not parse
/// (`failed to parse "maybe" as boolean`).
#[cfg(any(feature = "aws", feature = "azure", feature = "gcp", test))]
fn redact_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find(['"', '\'']) {
        let quote = rest[open..].chars().next().unwrap_or('"');
        let Some(len) = rest[open + 1..].find(quote) else {
            break;
        };
        out.push_str(&rest[..open]);
        out.push_str(crate::options::REDACTED);
        rest = &rest[open + 1 + len + 1..];
    }
    out.push_str(rest);
    out
}

/// What [`TableStoreBuilder::configure`] needs from object_store's cloud
/// builders, which share these methods by convention but not by trait.
#[cfg(any(feature = "aws", feature = "azure", feature = "gcp"))]
trait CloudBuilder: Sized {
    /// The backend's configuration key (`AmazonS3ConfigKey`, ...).
    type Key: std::str::FromStr;
    /// Environment variables read for this backend start with this.
    const ENV_PREFIX: &'static str;
    /// Backend name reported in [`Error::UnknownOption`].
    const BACKEND: &'static str;
    fn with_key(self, key: Self::Key, value: String) -> Self;
    fn with_http_retry(self, config: object_store::RetryConfig) -> Self;
    fn build_store(self) -> object_store::Result<Arc<dyn ObjectStore>>;
    /// What, beyond the URI's scheme and host, tells this store apart:
    /// endpoint, account, container or bucket (never a credential).
    fn identity(&self) -> String;
}

/// Implements [`CloudBuilder`] by forwarding to the builder's own methods.
macro_rules! cloud_builder {
    ($feature:literal, $builder:ty, $key:ty, $prefix:literal, $backend:literal, $identity:expr) => {
        #[cfg(feature = $feature)]
        impl CloudBuilder for $builder {
            type Key = $key;
            const ENV_PREFIX: &'static str = $prefix;
            const BACKEND: &'static str = $backend;
            fn with_key(self, key: $key, value: String) -> Self {
                self.with_config(key, value)
            }
            fn with_http_retry(self, config: object_store::RetryConfig) -> Self {
                self.with_retry(config)
            }
            fn build_store(self) -> object_store::Result<Arc<dyn ObjectStore>> {
                Ok(Arc::new(self.build()?))
            }
            fn identity(&self) -> String {
                let f: fn(&$builder) -> String = $identity;
                f(self)
            }
        }
    };
}

cloud_builder!(
    "aws",
    object_store::aws::AmazonS3Builder,
    object_store::aws::AmazonS3ConfigKey,
    "AWS_",
    "s3",
    |b| {
        use object_store::aws::AmazonS3ConfigKey as K;
        format!(
            "endpoint={} s3_endpoint={}",
            endpoint_identity(b.get_config_value(&K::Endpoint)),
            endpoint_identity(b.get_config_value(&K::S3Endpoint)),
        )
    }
);
cloud_builder!(
    "azure",
    object_store::azure::MicrosoftAzureBuilder,
    object_store::azure::AzureConfigKey,
    "AZURE_",
    "azure",
    |b| {
        use object_store::azure::AzureConfigKey as K;
        format!(
            "account={} container={} endpoint={} emulator={}",
            b.get_config_value(&K::AccountName).unwrap_or_default(),
            b.get_config_value(&K::ContainerName).unwrap_or_default(),
            endpoint_identity(b.get_config_value(&K::Endpoint)),
            b.get_config_value(&K::UseEmulator).unwrap_or_default(),
        )
    }
);
cloud_builder!(
    "gcp",
    object_store::gcp::GoogleCloudStorageBuilder,
    object_store::gcp::GoogleConfigKey,
    "GOOGLE_",
    "gcs",
    |b| {
        use object_store::gcp::GoogleConfigKey as K;
        format!(
            "base_url={}",
            endpoint_identity(b.get_config_value(&K::BaseUrl))
        )
    }
);
