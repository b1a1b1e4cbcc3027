//! Real Azure Blob and GCS protocol servers for tests: [`Azurite`] (the
//! npm package `azurite`, its `azurite-blob` command) and [`FakeGcs`]
//! (`fake-gcs-server`), started as child processes on a free port of
//! 127.0.0.1 and stopped when dropped.
//!
//! Tests find the servers through environment variables, as `.ci/run`
//! sets them: `DAR_AZURITE` (the `azurite-blob` script) and
//! `DAR_FAKE_GCS_SERVER` (the `fake-gcs-server` binary). Without one,
//! [`Azurite::start`] / [`FakeGcs::start`] return `Ok(None)` after printing
//! `SKIPPED: ...` to stderr, unless `DAR_REQUIRE_STORES=1` or `CI` is set:
//! then a missing server is an error, so CI cannot skip them silently.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

use crate::options::StorageOptions;

/// Whether a missing server must fail the test (CI, or
/// `DAR_REQUIRE_STORES=1`) rather than skip it.
pub fn stores_required() -> bool {
    std::env::var("DAR_REQUIRE_STORES").is_ok_and(|v| v == "1")
        || std::env::var("CI").is_ok_and(|v| !v.is_empty())
}

/// The server binary named by `var`, or `None` (skipped, said on stderr)
/// when it is unset and not required.
fn server_binary(var: &str, what: &str) -> io::Result<Option<PathBuf>> {
    match std::env::var_os(var) {
        Some(p) if Path::new(&p).is_file() => Ok(Some(PathBuf::from(p))),
        Some(p) => Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("{var}={} is not a file ({what})", Path::new(&p).display()),
        )),
        None if stores_required() => Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("{var} is not set ({what}) and DAR_REQUIRE_STORES=1 or CI is set"),
        )),
        None => {
            eprintln!("SKIPPED: {var} is not set ({what}); .ci/run installs it");
            Ok(None)
        }
    }
}

fn free_port() -> io::Result<u16> {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    Ok(l.local_addr()?.port())
}

/// `start` on a free port of 127.0.0.1, again on another when the port
/// was taken by another server between the probe and the bind
/// ([`wait_ready`] says so with `AddrInUse`): at most four tries.
fn on_a_free_port<T>(start: impl Fn(u16) -> io::Result<T>) -> io::Result<T> {
    let mut tries = 0;
    loop {
        tries += 1;
        match start(free_port()?) {
            Err(e) if e.kind() == io::ErrorKind::AddrInUse && tries < 4 => continue,
            other => return other,
        }
    }
}

/// Waits until `port` accepts connections, or `child` exits, or 60 s pass.
fn wait_ready(child: &mut Child, port: u16, what: &str) -> io::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    loop {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            // Another server that took the same free port would answer
            // too: the child must still run once its port answers.
            std::thread::sleep(Duration::from_millis(300));
            if let Some(status) = child.try_wait()? {
                return Err(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!(
                        "{what} exited after port {port} answered (taken by another?): {status}"
                    ),
                ));
            }
            return Ok(());
        }
        if let Some(status) = child.try_wait()? {
            return Err(io::Error::other(format!(
                "{what} exited before listening on {port}: {status}"
            )));
        }
        if Instant::now() > deadline {
            return Err(io::Error::other(format!(
                "{what} did not listen on {port} within 60 s"
            )));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// One HTTP/1.1 request to 127.0.0.1:`port` (`Connection: close`); the
/// status code and body.
fn http(
    port: u16,
    method: &str,
    path_and_query: &str,
    headers: &[(&str, String)],
    body: &[u8],
) -> io::Result<(u16, String)> {
    let mut s = TcpStream::connect((Ipv4Addr::LOCALHOST, port))?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut req = format!(
        "{method} {path_and_query} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes())?;
    s.write_all(body)?;
    let mut response = Vec::new();
    s.read_to_end(&mut response)?;
    let text = String::from_utf8_lossy(&response).to_string();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| io::Error::other(format!("not an HTTP response: {text:.200}")))?;
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Ok((status, body))
}

/// The files under `dir`, recursively, as (path relative to `dir` with `/`
/// separators, absolute path).
fn files_under(dir: &Path) -> io::Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    let mut stack = vec![(String::new(), dir.to_path_buf())];
    while let Some((rel, path)) = stack.pop() {
        for entry in std::fs::read_dir(&path)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let child_rel = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            if entry.file_type()?.is_dir() {
                stack.push((child_rel, entry.path()));
            } else {
                out.push((child_rel, entry.path()));
            }
        }
    }
    Ok(out)
}

/// Puts every file under `dir` into `store` under `prefix`.
async fn upload(store: &dyn ObjectStore, dir: &Path, prefix: &str) -> io::Result<()> {
    for (rel, path) in files_under(dir)? {
        let key = if prefix.is_empty() {
            rel
        } else {
            format!("{}/{rel}", prefix.trim_end_matches('/'))
        };
        let bytes = std::fs::read(&path)?;
        // The object is named as the file is (`%` and all), as dar names
        // the objects it reads: not percent-encoded again.
        let location = object_store::path::Path::parse(&key)
            .map_err(|e| io::Error::other(format!("object name {key}: {e}")))?;
        store
            .put(&location, PutPayload::from(bytes))
            .await
            .map_err(|e| io::Error::other(format!("PUT {key}: {e}")))?;
    }
    Ok(())
}

/// A child process killed (and reaped) on drop.
#[derive(Debug)]
struct Server {
    child: Child,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Azurite's Blob service on 127.0.0.1, its data in a temporary directory.
#[derive(Debug)]
pub struct Azurite {
    server: Server,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Azurite {
    /// The emulator's well-known account.
    pub const ACCOUNT: &str = "devstoreaccount1";
    /// The emulator's well-known account key (public: Azurite's documented
    /// default). Tests check it never appears in output all the same.
    pub const ACCOUNT_KEY: &str =
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

    /// Starts `azurite-blob` (path in `DAR_AZURITE`) on a free port with
    /// telemetry off and its data in a temporary directory. `Ok(None)`:
    /// not configured, skipped (see the module documentation).
    pub fn start() -> io::Result<Option<Self>> {
        let Some(bin) = server_binary("DAR_AZURITE", "Azurite's azurite-blob")? else {
            return Ok(None);
        };
        on_a_free_port(|port| Self::start_on(&bin, port)).map(Some)
    }

    fn start_on(bin: &Path, port: u16) -> io::Result<Self> {
        let dir = tempfile::tempdir()?;
        let mut child = Command::new(bin)
            .args(["--blobHost", "127.0.0.1", "--blobPort", &port.to_string()])
            .arg("--location")
            .arg(dir.path())
            .args([
                "--silent",
                "--disableTelemetry",
                "--skipApiVersionCheck",
                "--loose",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| io::Error::other(format!("cannot run {}: {e}", bin.display())))?;
        let ready = wait_ready(&mut child, port, "azurite-blob");
        let server = Server { child };
        ready?;
        Ok(Self {
            server,
            port,
            _dir: dir,
        })
    }

    /// `http://127.0.0.1:<port>/devstoreaccount1`: the account's endpoint
    /// (`azure_storage_endpoint`).
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}/{}", self.port, Self::ACCOUNT)
    }

    /// `http://127.0.0.1:<port>`: what `AZURITE_BLOB_STORAGE_URL` must say
    /// for `azure_storage_use_emulator=true`.
    pub fn blob_storage_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Options that reach the account with its key: `azure_storage_account_name`,
    /// `azure_storage_account_key`, `azure_storage_endpoint`, `azure_allow_http`.
    pub fn storage_options(&self) -> StorageOptions {
        self.endpoint_options()
            .with("azure_storage_account_key", Self::ACCOUNT_KEY)
    }

    /// The account name, endpoint and `azure_allow_http`, without a
    /// credential (add a key, SAS or token).
    pub fn endpoint_options(&self) -> StorageOptions {
        StorageOptions::new()
            .with("azure_storage_account_name", Self::ACCOUNT)
            .with("azure_storage_endpoint", self.endpoint())
            .with("azure_allow_http", "true")
    }

    /// Creates `container` (the Blob REST API, signed with the account key).
    pub fn create_container(&self, container: &str) -> io::Result<()> {
        let date = chrono::Utc::now()
            .format("%a, %d %b %Y %H:%M:%S GMT")
            .to_string();
        let version = "2023-11-03";
        let string_to_sign = format!(
            "PUT\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:{date}\nx-ms-version:{version}\n/{a}/{a}/{container}\nrestype:container",
            a = Self::ACCOUNT
        );
        let auth = format!(
            "SharedKey {}:{}",
            Self::ACCOUNT,
            sign(Self::ACCOUNT_KEY, &string_to_sign)?
        );
        let (status, body) = http(
            self.port,
            "PUT",
            &format!("/{}/{container}?restype=container", Self::ACCOUNT),
            &[
                ("x-ms-date", date),
                ("x-ms-version", version.to_string()),
                ("Authorization", auth),
            ],
            b"",
        )?;
        if status != 201 {
            return Err(io::Error::other(format!(
                "create container {container}: HTTP {status}: {body:.300}"
            )));
        }
        Ok(())
    }

    /// Copies the files under `dir` into `container` under `prefix`.
    pub async fn upload_dir(&self, dir: &Path, container: &str, prefix: &str) -> io::Result<()> {
        let store = self.store(container)?;
        upload(store.as_ref(), dir, prefix).await
    }

    fn store(&self, container: &str) -> io::Result<Arc<dyn ObjectStore>> {
        let store = object_store::azure::MicrosoftAzureBuilder::new()
            .with_account(Self::ACCOUNT)
            .with_access_key(Self::ACCOUNT_KEY)
            .with_endpoint(self.endpoint())
            .with_allow_http(true)
            .with_container_name(container)
            .build()
            .map_err(|e| io::Error::other(e.to_string()))?;
        Ok(Arc::new(store))
    }

    /// A service SAS token for `container` (read and list) that expires at
    /// `expiry` (RFC 3339, e.g. `2099-01-01T00:00:00Z`; one in the past
    /// makes an expired token).
    pub fn container_sas(&self, container: &str, expiry: &str) -> io::Result<String> {
        let version = "2023-11-03";
        let string_to_sign = format!(
            "rl\n\n{expiry}\n/blob/{}/{container}\n\n\n\n{version}\nc\n\n\n\n\n\n\n",
            Self::ACCOUNT
        );
        let sig = sign(Self::ACCOUNT_KEY, &string_to_sign)?;
        let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        Ok(format!(
            "sv={version}&sp=rl&se={}&sr=c&sig={}",
            enc(expiry),
            enc(&sig)
        ))
    }

    /// Whether the server process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.server.child.try_wait(), Ok(None))
    }
}

/// Base64 HMAC-SHA256 of `text` with the base64 key `key`.
fn sign(key: &str, text: &str) -> io::Result<String> {
    let key = BASE64
        .decode(key)
        .map_err(|e| io::Error::other(format!("account key: {e}")))?;
    let tag = ring::hmac::sign(
        &ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &key),
        text.as_bytes(),
    );
    Ok(BASE64.encode(tag.as_ref()))
}

/// fake-gcs-server on 127.0.0.1 (HTTP, objects in memory).
#[derive(Debug)]
pub struct FakeGcs {
    server: Server,
    port: u16,
}

impl FakeGcs {
    /// Starts `fake-gcs-server` (path in `DAR_FAKE_GCS_SERVER`) on a free
    /// port. `Ok(None)`: not configured, skipped (see the module
    /// documentation).
    pub fn start() -> io::Result<Option<Self>> {
        let Some(bin) = server_binary("DAR_FAKE_GCS_SERVER", "the fake-gcs-server binary")? else {
            return Ok(None);
        };
        on_a_free_port(|port| Self::start_on(&bin, port)).map(Some)
    }

    fn start_on(bin: &Path, port: u16) -> io::Result<Self> {
        let mut child = Command::new(bin)
            .args(["-scheme", "http", "-host", "127.0.0.1", "-port"])
            .arg(port.to_string())
            .args(["-backend", "memory", "-log-level", "error"])
            .arg("-public-host")
            .arg(format!("127.0.0.1:{port}"))
            .arg("-external-url")
            .arg(format!("http://127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| io::Error::other(format!("cannot run {}: {e}", bin.display())))?;
        let ready = wait_ready(&mut child, port, "fake-gcs-server");
        let server = Server { child };
        ready?;
        Ok(Self { server, port })
    }

    /// `http://127.0.0.1:<port>` (`google_base_url`).
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// A service-account key that disables OAuth (`"disable_oauth": true`,
    /// object_store's convention for emulators): valid JSON of the shape
    /// users pass, with no request to a token service.
    pub fn emulator_service_account_key() -> String {
        serde_json::json!({
            "type": "service_account",
            "private_key_id": "dar-test",
            "private_key": "not-a-key",
            "client_email": "dar-test@example.invalid",
            "disable_oauth": true,
        })
        .to_string()
    }

    /// A service-account key for `private_key_pem` (an RSA key in PKCS#8
    /// PEM): object_store signs its own token with it (no token service).
    pub fn service_account_key(private_key_pem: &str) -> String {
        serde_json::json!({
            "type": "service_account",
            "private_key_id": "dar-test-key",
            "private_key": private_key_pem,
            "client_email": "dar-test@dar-test.iam.gserviceaccount.com",
        })
        .to_string()
    }

    /// Options that reach the server: `google_base_url`, `google_allow_http`
    /// and the emulator service-account key.
    pub fn storage_options(&self) -> StorageOptions {
        self.endpoint_options().with(
            "google_service_account_key",
            Self::emulator_service_account_key(),
        )
    }

    /// `google_base_url` and `google_allow_http`, without a credential.
    pub fn endpoint_options(&self) -> StorageOptions {
        StorageOptions::new()
            .with("google_base_url", self.base_url())
            .with("google_allow_http", "true")
    }

    /// Creates `bucket` (the JSON API; the server does not check
    /// credentials).
    pub fn create_bucket(&self, bucket: &str) -> io::Result<()> {
        let body = serde_json::json!({ "name": bucket }).to_string();
        let (status, text) = http(
            self.port,
            "POST",
            "/storage/v1/b?project=dar-test",
            &[("Content-Type", "application/json".to_string())],
            body.as_bytes(),
        )?;
        if status != 200 {
            return Err(io::Error::other(format!(
                "create bucket {bucket}: HTTP {status}: {text:.300}"
            )));
        }
        Ok(())
    }

    /// Copies the files under `dir` into `bucket` under `prefix` (the JSON
    /// API's media upload: the server does not take object_store's XML-API
    /// PUTs).
    pub fn upload_dir(&self, dir: &Path, bucket: &str, prefix: &str) -> io::Result<()> {
        for (rel, path) in files_under(dir)? {
            let key = if prefix.is_empty() {
                rel
            } else {
                format!("{}/{rel}", prefix.trim_end_matches('/'))
            };
            let name: String = url::form_urlencoded::byte_serialize(key.as_bytes()).collect();
            let bytes = std::fs::read(&path)?;
            let (status, text) = http(
                self.port,
                "POST",
                &format!("/upload/storage/v1/b/{bucket}/o?uploadType=media&name={name}"),
                &[("Content-Type", "application/octet-stream".to_string())],
                &bytes,
            )?;
            if status != 200 {
                return Err(io::Error::other(format!(
                    "upload {key}: HTTP {status}: {text:.300}"
                )));
            }
        }
        Ok(())
    }

    /// Whether the server process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.server.child.try_wait(), Ok(None))
    }
}
