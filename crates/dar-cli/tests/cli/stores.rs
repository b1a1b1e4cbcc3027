//! `az://`, `abfs[s]://`, `https://<account>.blob.core.windows.net/...` and
//! `gs://` tables through real servers the tests start: Azurite and
//! fake-gcs-server (`dar_io::testing::stores`; `.ci/run` installs them and
//! sets `DAR_AZURITE` / `DAR_FAKE_GCS_SERVER`). The shared DV,
//! column-mapping and V2-checkpoint tables are uploaded to each and read
//! through `dar scan` and `dar sql`; their rows must be the local read's.
//! Errors (missing container or bucket, wrong key, expired SAS, bad
//! credentials) are one line naming the store, never a secret.

use std::path::PathBuf;

use assert_cmd::Command;
use dar_io::StorageOptions;
use dar_io::testing::{Azurite, FakeGcs};

use crate::{arg, sample};

/// The tables uploaded to each store: `(name in the store, local path)`.
fn tables() -> Vec<(&'static str, PathBuf)> {
    let mut out = vec![("sample", sample())];
    for (name, shared) in [
        ("dv", "kernel/table-with-dv-small"),
        ("cm", "kernel/cdf-column-mapping-name-mode-3-7"),
        ("v2", "kernel/v2-checkpoints-parquet-with-sidecars"),
    ] {
        if let Some(p) = dar_testdata::table(shared) {
            out.push((name, p));
        }
    }
    out
}

/// `dar` without any cloud variables of the caller's environment.
fn dar_clean() -> Command {
    let mut c = crate::dar();
    for (k, _) in std::env::vars() {
        if ["AWS_", "AZURE_", "GOOGLE_", "AZURITE_"]
            .iter()
            .any(|p| k.starts_with(p))
        {
            c.env_remove(k);
        }
    }
    c
}

fn with_options(mut c: Command, options: &StorageOptions) -> Command {
    for (k, v) in options.iter() {
        c.args(["--storage-option", &format!("{k}={v}")]);
    }
    c
}

/// Runs `cmd` off the async runtime.
async fn run(mut cmd: Command) -> std::process::Output {
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

fn ok_stdout(out: &std::process::Output, context: &str) -> String {
    assert!(
        out.status.success(),
        "{context}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The rows of `dar scan TABLE --format json`, sorted (row order is no
/// part of a scan's contract).
fn sorted_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines.sort();
    lines
}

fn local_rows(path: &std::path::Path) -> Vec<String> {
    let out = dar_clean()
        .args(["scan", &arg(path), "--format", "json"])
        .output()
        .unwrap();
    sorted_lines(&ok_stdout(&out, "local scan"))
}

/// Every table's remote rows (through `dar scan`, with `options`) equal
/// its local rows, and `dar sql` counts the same rows remotely.
async fn same_rows_as_local(uri_of: impl Fn(&str) -> String, options: &StorageOptions) {
    for (name, local) in tables() {
        let uri = uri_of(name);
        let want = local_rows(&local);
        let mut c = dar_clean();
        c.args(["scan", &uri, "--format", "json"]);
        let c = with_options(c, options);
        let got = sorted_lines(&ok_stdout(&run(c).await, &uri));
        assert_eq!(got.len(), want.len(), "{uri}");
        assert_eq!(got, want, "{uri}");
        #[cfg(feature = "sql")]
        {
            let mut c = dar_clean();
            c.args([
                "sql",
                "SELECT count(*) AS n FROM t",
                "--table",
                &format!("t={uri}"),
                "--format",
                "csv",
            ]);
            let c = with_options(c, options);
            let text = ok_stdout(&run(c).await, &format!("sql {uri}"));
            assert_eq!(text, format!("n\n{}\n", want.len()), "{uri}");
        }
    }
}

/// The one-line error of a failing `dar` run; checks that none of
/// `secrets` is in it and that it names `store_hint`.
fn one_line_error(out: &std::process::Output, secrets: &[&str], store_hint: &str) -> String {
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8(out.stderr.clone()).unwrap();
    assert!(err.starts_with("dar: error: "), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for s in secrets {
        assert!(!err.contains(s), "secret {s:?} in {err}");
    }
    assert!(err.contains(store_hint), "{store_hint:?} not in {err}");
    err
}

async fn azurite_with_tables(container: &str) -> Option<Azurite> {
    let server = Azurite::start().unwrap()?;
    server.create_container(container).unwrap();
    for (name, local) in tables() {
        server.upload_dir(&local, container, name).await.unwrap();
    }
    Some(server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_tables_read_as_the_local_ones() {
    let Some(server) = azurite_with_tables("tables").await else {
        return;
    };
    // The account key as storage options, az:// URIs.
    same_rows_as_local(|t| format!("az://tables/{t}"), &server.storage_options()).await;
    // The same through the other spellings of the location.
    for uri in [
        "abfss://tables@devstoreaccount1.dfs.core.windows.net/dv",
        "https://devstoreaccount1.blob.core.windows.net/tables/dv",
        "abfs://tables/dv",
        "azure://tables/dv",
    ] {
        let mut c = dar_clean();
        c.args(["scan", uri, "--format", "json"]);
        let c = with_options(c, &server.storage_options());
        let got = sorted_lines(&ok_stdout(&run(c).await, uri));
        assert_eq!(
            got,
            local_rows(&dar_testdata::table("kernel/table-with-dv-small").unwrap()),
            "{uri}"
        );
    }
    // A SAS token that has not expired.
    let sas = server
        .container_sas("tables", "2099-01-01T00:00:00Z")
        .unwrap();
    let options = server
        .endpoint_options()
        .with("azure_storage_sas_token", sas);
    same_rows_as_local(|t| format!("az://tables/{t}"), &options).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_from_environment_variables_and_the_emulator_flag() {
    let Some(server) = azurite_with_tables("envtables").await else {
        return;
    };
    let local = local_rows(&sample());
    // AZURE_* variables: account, key, endpoint.
    let mut c = dar_clean();
    c.args(["scan", "az://envtables/sample", "--format", "json"])
        .env("AZURE_STORAGE_ACCOUNT_NAME", Azurite::ACCOUNT)
        .env("AZURE_STORAGE_ACCOUNT_KEY", Azurite::ACCOUNT_KEY)
        .env("AZURE_STORAGE_ENDPOINT", server.endpoint())
        .env("AZURE_ALLOW_HTTP", "true");
    assert_eq!(sorted_lines(&ok_stdout(&run(c).await, "env")), local);
    // azure_storage_use_emulator: Azurite's well-known account and key at
    // AZURITE_BLOB_STORAGE_URL.
    let mut c = dar_clean();
    c.args([
        "info",
        "az://envtables/sample",
        "--json",
        "--storage-option",
        "azure_storage_use_emulator=true",
    ])
    .env("AZURITE_BLOB_STORAGE_URL", server.blob_storage_url());
    let info: serde_json::Value =
        serde_json::from_str(&ok_stdout(&run(c).await, "emulator")).unwrap();
    assert_eq!(info["version"], 7);
    assert_eq!(info["num_rows"], 300);
    assert_eq!(info["table"], "az://envtables/sample");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_errors_are_one_line_without_secrets() {
    let Some(server) = azurite_with_tables("errtables").await else {
        return;
    };
    // A missing container.
    let mut c = dar_clean();
    c.args(["scan", "az://nosuchcontainer/sample", "--format", "null"]);
    let c = with_options(c, &server.storage_options());
    let err = one_line_error(
        &run(c).await,
        &[Azurite::ACCOUNT_KEY],
        "az://nosuchcontainer",
    );
    assert!(
        err.contains("not a Delta table") || err.contains("ContainerNotFound"),
        "{err}"
    );
    // A wrong key (valid base64, another secret).
    let wrong = "d3Jvbmcta2V5LW5ldmVyLXByaW50ZWQtYW55d2hlcmUtYXQtYWxsLTAxMjM0NTY3ODk=";
    let options = server
        .endpoint_options()
        .with("azure_storage_account_key", wrong);
    let mut c = dar_clean();
    c.args(["scan", "az://errtables/sample", "--format", "null"]);
    let c = with_options(c, &options);
    let err = one_line_error(
        &run(c).await,
        &[wrong, "d3Jvbmcta2V5"],
        "az://errtables/sample",
    );
    assert!(
        err.contains("403") || err.to_lowercase().contains("auth"),
        "{err}"
    );
    // An expired SAS token: its signature never shows, however spelled.
    let sas = server
        .container_sas("errtables", "2001-01-01T00:00:00Z")
        .unwrap();
    let sig = sas.split("sig=").nth(1).unwrap().to_string();
    let decoded: String = url::form_urlencoded::parse(format!("s={sig}").as_bytes())
        .map(|(_, v)| v.into_owned())
        .collect();
    let options = server
        .endpoint_options()
        .with("azure_storage_sas_token", sas.clone());
    let mut c = dar_clean();
    c.args(["scan", "az://errtables/sample", "--format", "null"]);
    let c = with_options(c, &options);
    let err = one_line_error(
        &run(c).await,
        &[&sas, &sig, &decoded],
        "az://errtables/sample",
    );
    assert!(
        err.contains("403") || err.to_lowercase().contains("auth"),
        "{err}"
    );
    // The same expired token from the environment.
    let mut c = dar_clean();
    c.args(["info", "az://errtables/sample"])
        .env("AZURE_STORAGE_ACCOUNT_NAME", Azurite::ACCOUNT)
        .env("AZURE_STORAGE_SAS_TOKEN", &sas)
        .env("AZURE_STORAGE_ENDPOINT", server.endpoint())
        .env("AZURE_ALLOW_HTTP", "true");
    one_line_error(
        &run(c).await,
        &[&sas, &sig, &decoded],
        "az://errtables/sample",
    );
    // A bearer token Azurite does not accept over http.
    let token = "bearer-token-never-printed-0123456789";
    let options = server.endpoint_options().with("azure_storage_token", token);
    let mut c = dar_clean();
    c.args(["info", "az://errtables/sample"]);
    let c = with_options(c, &options);
    one_line_error(&run(c).await, &[token], "az://errtables/sample");
    // A key that is not base64 is refused before any request.
    let options = server
        .endpoint_options()
        .with("azure_storage_account_key", "not base64 !!! secret-ish");
    let mut c = dar_clean();
    c.args(["info", "az://errtables/sample"]);
    let c = with_options(c, &options);
    one_line_error(&run(c).await, &["secret-ish"], "az://errtables/sample");
}

/// An RSA key in PKCS#8 PEM made by `openssl` for this test (no key is
/// committed), or `None` (skipped) without openssl unless stores are
/// required.
fn rsa_key_pem() -> Option<String> {
    let out = std::process::Command::new("openssl")
        .args([
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
        ])
        .output();
    match out {
        Ok(o) if o.status.success() => Some(String::from_utf8(o.stdout).unwrap()),
        other => {
            assert!(
                !dar_io::testing::stores::stores_required(),
                "openssl genpkey failed: {other:?}"
            );
            eprintln!("SKIPPED: openssl genpkey failed: {other:?}");
            None
        }
    }
}

async fn gcs_with_tables(bucket: &str) -> Option<FakeGcs> {
    let server = FakeGcs::start().unwrap()?;
    server.create_bucket(bucket).unwrap();
    for (name, local) in tables() {
        server.upload_dir(&local, bucket, name).unwrap();
    }
    Some(server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcs_tables_read_as_the_local_ones() {
    let Some(server) = gcs_with_tables("tables").await else {
        return;
    };
    // A service-account key as JSON content (object_store's emulator form).
    same_rows_as_local(|t| format!("gs://tables/{t}"), &server.storage_options()).await;
    // A real service-account key file: object_store signs its own token.
    let Some(pem) = rsa_key_pem() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("service-account.json");
    std::fs::write(&key_file, FakeGcs::service_account_key(&pem)).unwrap();
    let options = server
        .endpoint_options()
        .with("google_service_account", arg(&key_file));
    same_rows_as_local(|t| format!("gs://tables/{t}"), &options).await;
    // GOOGLE_* variables: the key file, the endpoint.
    let mut c = dar_clean();
    c.args(["scan", "gs://tables/dv", "--format", "json"])
        .env("GOOGLE_APPLICATION_CREDENTIALS", &key_file)
        .env("GOOGLE_BASE_URL", server.base_url())
        .env("GOOGLE_ALLOW_HTTP", "true");
    assert_eq!(
        sorted_lines(&ok_stdout(&run(c).await, "env")),
        local_rows(&dar_testdata::table("kernel/table-with-dv-small").unwrap())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcs_errors_are_one_line_without_secrets() {
    let Some(server) = gcs_with_tables("errbucket").await else {
        return;
    };
    let Some(pem) = rsa_key_pem() else {
        return;
    };
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let key_json = FakeGcs::service_account_key(&pem);
    let secrets = [&body[..40], &body[body.len() - 40..]];
    // A missing bucket.
    let options = server
        .endpoint_options()
        .with("google_service_account_key", key_json.clone());
    let mut c = dar_clean();
    c.args(["scan", "gs://nosuchbucket/sample", "--format", "null"]);
    let c = with_options(c, &options);
    one_line_error(&run(c).await, &secrets, "gs://nosuchbucket/sample");
    // A missing table in an existing bucket.
    let mut c = dar_clean();
    c.args(["info", "gs://errbucket/missing"]);
    let c = with_options(c, &options);
    let err = one_line_error(&run(c).await, &secrets, "gs://errbucket/missing");
    assert!(err.contains("not a Delta table"), "{err}");
    // A key whose private key is no key: refused before any request.
    let broken = key_json.replace("BEGIN PRIVATE KEY", "BEGIN BROKEN KEY");
    let options = server
        .endpoint_options()
        .with("google_service_account_key", broken);
    let mut c = dar_clean();
    c.args(["info", "gs://errbucket/sample"]);
    let c = with_options(c, &options);
    one_line_error(&run(c).await, &secrets, "gs://errbucket/sample");
    // A key file that does not exist.
    let options = server
        .endpoint_options()
        .with("google_service_account", "/nonexistent/key.json");
    let mut c = dar_clean();
    c.args(["info", "gs://errbucket/sample"]);
    let c = with_options(c, &options);
    one_line_error(&run(c).await, &[], "gs://errbucket/sample");
}
