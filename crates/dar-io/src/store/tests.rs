use super::*;
use crate::Error;

const SECRET: &str = "wJalrXUtnFEMI-K7MDENG-SECRET";
const KEY_ID: &str = "AKIAIOSFODNN7EXAMPLE";

fn no_env(b: TableStoreBuilder) -> TableStoreBuilder {
    b.with_env(Vec::new())
}

#[test]
fn relative_and_absolute_paths_are_local() {
    let t = no_env(TableStore::builder("some/rel/../table"))
        .build()
        .unwrap();
    assert_eq!(t.backend(), Backend::Local);
    let cwd = std::env::current_dir().unwrap();
    let want = cwd.join("some/table");
    assert_eq!(t.url().to_file_path().unwrap(), want);
    assert_eq!(
        t.root().as_ref(),
        want.to_str().unwrap().trim_start_matches('/')
    );

    let t = TableStore::open("/tmp/x/./tbl", StorageOptions::new()).unwrap();
    assert_eq!(t.root().as_ref(), "tmp/x/tbl");
    assert_eq!(t.url().as_str(), "file:///tmp/x/tbl/");
}

#[test]
fn file_urls_are_local() {
    let t = TableStore::open("file:///tmp/some%20dir/tbl", StorageOptions::new()).unwrap();
    assert_eq!(t.backend(), Backend::Local);
    assert_eq!(t.root().as_ref(), "tmp/some dir/tbl");
    assert_eq!(
        t.child("part-0.parquet").as_ref(),
        "tmp/some dir/tbl/part-0.parquet"
    );
}

#[test]
fn memory_urls() {
    let t = TableStore::open("memory://", StorageOptions::new()).unwrap();
    assert_eq!(t.backend(), Backend::Memory);
    assert_eq!(t.root().as_ref(), "");
    assert_eq!(t.child("_delta_log/0.json").as_ref(), "_delta_log/0.json");
    let t = TableStore::open("memory://name/pre/fix", StorageOptions::new()).unwrap();
    assert_eq!(t.root().as_ref(), "name/pre/fix");
}

#[test]
fn s3_url_with_options_and_env() {
    let t = no_env(TableStore::builder("s3://bucket/pre/fix"))
        .with_options(
            StorageOptions::new()
                .with("aws_endpoint", "http://127.0.0.1:9")
                .with("aws_allow_http", "true")
                .with("aws_region", "us-east-1")
                .with("aws_access_key_id", KEY_ID)
                .with("aws_secret_access_key", SECRET)
                .with("aws_virtual_hosted_style_request", "false"),
        )
        .build()
        .unwrap();
    assert_eq!(t.backend(), Backend::S3);
    assert_eq!(t.root().as_ref(), "pre/fix");
    assert_eq!(t.url().as_str(), "s3://bucket/pre/fix");
    assert!(format!("{}", t.store()).contains("bucket"));

    let t = TableStore::builder("s3a://b2/t")
        .with_env(vec![
            ("AWS_REGION".to_string(), "eu-west-1".to_string()),
            (
                "AWS_ENDPOINT_URL".to_string(),
                "http://127.0.0.1:9".to_string(),
            ),
            ("AWS_ALLOW_HTTP".to_string(), "true".to_string()),
            ("AWS_NOT_A_KEY".to_string(), "ignored".to_string()),
            ("HOME".to_string(), "/root".to_string()),
        ])
        .build()
        .unwrap();
    assert_eq!(t.root().as_ref(), "t");
}

#[test]
fn bad_uris_name_the_uri() {
    let e = TableStore::open("ftp://host/table", StorageOptions::new()).unwrap_err();
    assert!(
        matches!(e, Error::UnsupportedScheme { ref scheme, .. } if scheme == "ftp"),
        "{e}"
    );
    assert!(e.to_string().contains("ftp://host/table"), "{e}");

    let e = TableStore::open("s3:///nobucket", StorageOptions::new()).unwrap_err();
    assert!(matches!(e, Error::InvalidUri { .. }), "{e}");
    assert!(e.to_string().contains("missing bucket"), "{e}");

    let e = TableStore::open("  ", StorageOptions::new()).unwrap_err();
    assert!(matches!(e, Error::InvalidUri { .. }), "{e}");

    let e = TableStore::open(
        "s3://b/t",
        StorageOptions::new().with("aws_bogus_key", SECRET),
    )
    .unwrap_err();
    assert!(
        matches!(e, Error::UnknownOption { ref key, .. } if key == "aws_bogus_key"),
        "{e}"
    );
    assert!(!format!("{e} {e:?}").contains(SECRET));
}

#[cfg(not(feature = "gcp"))]
#[test]
fn gcs_without_feature_says_which_feature() {
    let e = TableStore::open("gs://bucket/t", StorageOptions::new()).unwrap_err();
    assert!(
        matches!(e, Error::FeatureDisabled { feature: "gcp", .. }),
        "{e}"
    );
}

#[cfg(not(feature = "azure"))]
#[test]
fn azure_without_feature_says_which_feature() {
    let e = TableStore::open(
        "abfss://c@acct.dfs.core.windows.net/t",
        StorageOptions::new(),
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::FeatureDisabled {
                feature: "azure",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn secrets_never_appear_in_debug_or_errors() {
    let options = StorageOptions::new()
        .with("aws_access_key_id", KEY_ID)
        .with("aws_secret_access_key", SECRET)
        .with("aws_session_token", SECRET)
        .with("aws_endpoint", "http://127.0.0.1:9")
        .with("aws_allow_http", "true");
    let b = no_env(TableStore::builder(format!(
        "s3://{KEY_ID}:{SECRET}@bucket/t?sig={SECRET}"
    )))
    .with_options(options.clone());
    let dbg = format!("{b:?}");
    assert!(!dbg.contains(SECRET) && !dbg.contains(KEY_ID), "{dbg}");

    let t = b.build().unwrap();
    let dbg = format!("{t:?} {} {}", t.url(), t.store());
    assert!(!dbg.contains(SECRET) && !dbg.contains(KEY_ID), "{dbg}");

    // Errors built from URIs with secrets.
    let e = TableStore::open(
        &format!("gopher://{KEY_ID}:{SECRET}@h/t?token={SECRET}"),
        options.clone(),
    )
    .unwrap_err();
    let msg = format!("{e} {e:?}");
    assert!(!msg.contains(SECRET) && !msg.contains(KEY_ID), "{msg}");
    assert!(msg.contains("gopher://"), "{msg}");

    // A store build failure (bad endpoint URL) with secrets in the options.
    let e = no_env(TableStore::builder(format!(
        "s3://{KEY_ID}:{SECRET}@bucket/t"
    )))
    .with_options(options.with("aws_endpoint", "not a url"))
    .build();
    if let Err(e) = e {
        let msg = format!("{e} {e:?}");
        assert!(!msg.contains(SECRET) && !msg.contains(KEY_ID), "{msg}");
    }
}

#[cfg(feature = "azure")]
#[test]
fn azure_urls_with_feature() {
    let t = no_env(TableStore::builder("az://container/pre/fix"))
        .with_options(
            StorageOptions::new()
                .with("azure_storage_account_name", "acct")
                .with(
                    "azure_storage_account_key",
                    "c2VjcmV0LWtleS1ub3QtcHJpbnRlZA==",
                ),
        )
        .build()
        .unwrap();
    assert_eq!(t.backend(), Backend::Azure);
    assert_eq!(t.root().as_ref(), "pre/fix");
    let dbg = format!("{t:?}");
    assert!(!dbg.contains("c2VjcmV0"), "{dbg}");
    let e = no_env(TableStore::builder("abfss://c@acct.dfs.core.windows.net/t"))
        .with_options(StorageOptions::new().with("azure_bogus", "x"))
        .build()
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::UnknownOption {
                backend: "azure",
                ..
            }
        ),
        "{e}"
    );
}

#[cfg(feature = "azure")]
#[test]
fn azure_https_urls_name_account_and_container() {
    let opts = || {
        StorageOptions::new()
            .with("azure_storage_account_name", "acct")
            .with(
                "azure_storage_account_key",
                "c2VjcmV0LWtleS1ub3QtcHJpbnRlZA==",
            )
    };
    for (uri, root) in [
        (
            "https://acct.blob.core.windows.net/container/pre/fix",
            "pre/fix",
        ),
        ("https://acct.dfs.core.windows.net/container/t/", "t"),
        ("https://acct.blob.core.windows.net/container", ""),
        ("abfss://container@acct.dfs.core.windows.net/a/b", "a/b"),
        ("az://container/a", "a"),
    ] {
        let t = no_env(TableStore::builder(uri))
            .with_options(opts())
            .build()
            .unwrap_or_else(|e| panic!("{uri}: {e}"));
        assert_eq!(t.backend(), Backend::Azure, "{uri}");
        assert_eq!(t.root().as_ref(), root, "{uri}");
    }
    let e = no_env(TableStore::builder("https://acct.blob.core.windows.net/"))
        .with_options(opts())
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("missing container"), "{e}");
    let e = TableStore::open("https://example.com/t", StorageOptions::new()).unwrap_err();
    assert!(
        e.to_string().contains("Azure Blob Storage accounts only"),
        "{e}"
    );
}

#[cfg(feature = "gcp")]
#[test]
fn gcs_urls_with_feature() {
    let e = no_env(TableStore::builder("gs://bucket/t"))
        .with_options(StorageOptions::new().with("google_bogus", "x"))
        .build()
        .unwrap_err();
    assert!(
        matches!(e, Error::UnknownOption { backend: "gcs", .. }),
        "{e}"
    );
    let t = no_env(TableStore::builder("gs://bucket/pre/fix"))
        .with_options(StorageOptions::new().with("google_skip_signature", "true"))
        .build()
        .unwrap();
    assert_eq!(t.backend(), Backend::Gcs);
    assert_eq!(t.root().as_ref(), "pre/fix");
}

/// Endpoint URLs carry no secret into errors: user info and queries of
/// `aws_endpoint` and `AWS_ENDPOINT_URL` are scrubbed from request errors,
/// and an endpoint that does not parse (a port out of range once panicked
/// inside object_store) is refused, naming the option, never its value.
#[tokio::test]
async fn endpoint_secrets_never_reach_an_error() {
    use object_store::ObjectStoreExt;
    let endpoints = [
        (
            "aws_endpoint",
            "http://user:hunter2@127.0.0.1:1/?token=tok-9z",
        ),
        (
            "aws_metadata_endpoint",
            "http://md:pw-7q@127.0.0.1:1/?x=tok-9z",
        ),
    ];
    for (key, value) in endpoints {
        let t = no_env(TableStore::builder("s3://bucket/t"))
            .with_options(
                StorageOptions::new()
                    .with("aws_endpoint", "http://127.0.0.1:1")
                    .with(key, value)
                    .with("aws_allow_http", "true")
                    .with("aws_region", "us-east-1")
                    .with("aws_access_key_id", KEY_ID)
                    .with("aws_secret_access_key", SECRET),
            )
            .with_retry(RetryPolicy::default().with_max_attempts(1))
            .build()
            .unwrap();
        let err = t.store().get(&Path::from("t/x")).await.unwrap_err();
        let text = format!("{err} / {err:?}");
        for secret in ["hunter2", "pw-7q", "tok-9z", SECRET] {
            assert!(!text.contains(secret), "{key}: {text}");
        }
    }
    let t = TableStore::builder("s3://bucket/t")
        .with_env(vec![
            (
                "AWS_ENDPOINT_URL".to_string(),
                "http://u:pw-env@127.0.0.1:1/?sig=s1g".to_string(),
            ),
            ("AWS_ALLOW_HTTP".to_string(), "true".to_string()),
            ("AWS_REGION".to_string(), "us-east-1".to_string()),
            ("AWS_ACCESS_KEY_ID".to_string(), KEY_ID.to_string()),
            ("AWS_SECRET_ACCESS_KEY".to_string(), SECRET.to_string()),
        ])
        .with_retry(RetryPolicy::default().with_max_attempts(1))
        .build()
        .unwrap();
    let err = t.store().get(&Path::from("t/x")).await.unwrap_err();
    let text = format!("{err} / {err:?}");
    assert!(!text.contains("pw-env") && !text.contains("s1g"), "{text}");

    for bad in [
        "http://127.0.0.1:99999",
        "not a url",
        "ftp://127.0.0.1/",
        "http://",
    ] {
        let e = no_env(TableStore::builder("s3://bucket/t"))
            .with_options(StorageOptions::new().with("aws_endpoint", bad))
            .build()
            .unwrap_err();
        assert!(
            matches!(&e, Error::InvalidOption { key, .. } if key == "aws_endpoint"),
            "{bad}: {e}"
        );
        assert!(!e.to_string().contains(bad), "{e}");
    }
}

/// What does not parse as a URI is printed only when it is a plain path.
#[test]
fn unparseable_uris_are_redacted_whole() {
    assert_eq!(redact_uri("/tmp/a table"), "/tmp/a table");
    for secret_bearing in [
        "s3://AKIA:sec ret@bu cket/t",
        "s3://user:pw@[::1/t",
        "user:pw@host/t",
        "tbl?sig=abc",
    ] {
        let r = redact_uri(secret_bearing);
        assert!(
            !r.contains("pw") && !r.contains("sec") && !r.contains("abc"),
            "{r}"
        );
        assert!(r.contains(crate::options::REDACTED), "{r}");
    }
    assert_eq!(
        redact_uri("s3://AKIA:topsecret@bucket/t"),
        "s3://<redacted>:<redacted>@bucket/t"
    );
}

/// The identity of the store `uri` with `options` builds (no environment).
fn store_id(uri: &str, options: &[(&str, &str)]) -> StoreId {
    let options = options
        .iter()
        .fold(StorageOptions::new(), |o, (k, v)| o.with(*k, *v));
    no_env(TableStore::builder(uri))
        .with_options(options)
        .build()
        .unwrap()
        .store_id()
        .clone()
}

#[test]
fn store_ids_tell_endpoints_accounts_containers_and_buckets_apart() {
    let s3 = |endpoint: &str, bucket: &str, key: &str| {
        store_id(
            &format!("s3://{bucket}/t"),
            &[
                ("aws_endpoint", endpoint),
                ("aws_allow_http", "true"),
                ("aws_region", "us-east-1"),
                ("aws_access_key_id", key),
                ("aws_secret_access_key", SECRET),
            ],
        )
    };
    let a = s3("http://127.0.0.1:9000", "b", KEY_ID);
    // The same store with other credentials is the same store.
    assert_eq!(a, s3("http://127.0.0.1:9000", "b", "AKIAOTHER"));
    // Another endpoint, port or bucket is another store.
    for other in [
        s3("http://127.0.0.1:9001", "b", KEY_ID),
        s3("http://127.0.0.2:9000", "b", KEY_ID),
        s3("http://127.0.0.1:9000", "c", KEY_ID),
        store_id("s3://b/t", &[("aws_region", "us-east-1")]),
    ] {
        assert_ne!(a, other);
    }
    // Secrets in an endpoint never reach the identity (it is written into
    // cache files).
    let with_user = s3("http://user:pw@127.0.0.1:9000/?sig=abc", "b", KEY_ID);
    for secret in [SECRET, KEY_ID, "pw", "sig", "abc"] {
        assert!(!with_user.as_str().contains(secret), "{with_user}");
        assert!(!a.as_str().contains(secret), "{a}");
    }

    let az = |uri: &str, account: &str| store_id(uri, &[("azure_storage_account_name", account)]);
    let base = az("az://c1/t", "acct1");
    for other in [
        az("az://c1/t", "acct2"),
        az("az://c2/t", "acct1"),
        az("abfss://c1@acct1.dfs.core.windows.net/t", "acct1"),
    ] {
        assert_ne!(base, other);
    }
    assert_ne!(
        store_id("https://acct.blob.core.windows.net/c1/t", &[]),
        store_id("https://acct.blob.core.windows.net/c2/t", &[])
    );
    assert_ne!(
        store_id("abfss://c1@acct.dfs.core.windows.net/t", &[]),
        store_id("abfss://c2@acct.dfs.core.windows.net/t", &[])
    );
    assert_ne!(
        store_id("gs://b/t", &[("google_base_url", "http://127.0.0.1:1")]),
        store_id("gs://b/t", &[("google_base_url", "http://127.0.0.1:2")])
    );
    // Each memory:// store is its own; local paths share the one file system.
    assert_ne!(store_id("memory://x/t", &[]), store_id("memory://x/t", &[]));
    assert_eq!(store_id("/tmp/a", &[]), store_id("/var/b", &[]));
    // A store the caller supplies is its own unless named.
    let supplied = || TableStoreBuilder::new("s3://b/t").with_store(Arc::new(InMemory::new()));
    assert_ne!(
        supplied().build().unwrap().store_id(),
        supplied().build().unwrap().store_id()
    );
    assert_eq!(
        supplied()
            .with_store_id(StoreId::new("mine"))
            .build()
            .unwrap()
            .store_id(),
        &StoreId::new("mine")
    );
}
