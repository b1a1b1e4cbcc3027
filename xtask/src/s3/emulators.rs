//! The Azure Blob and GCS servers of `cargo xtask bench --storage
//! azure|gcs`: Azurite and fake-gcs-server (the ones `.ci/run` installs;
//! `DAR_AZURITE` and `DAR_FAKE_GCS_SERVER` name their binaries), started
//! on 127.0.0.1 through dar-io's test harness, with the fixtures uploaded,
//! and read through the same counting proxy as S3, so that the request
//! counts of each store stand side by side.

use std::collections::BTreeMap;
use std::path::PathBuf;

use dar_io::testing::{Azurite, FakeGcs};

use super::BUCKET;

/// A running emulator with the fixtures in it.
pub enum Emulator {
    /// Azurite's blob service; the fixtures in container [`BUCKET`].
    Azure(Azurite),
    /// fake-gcs-server; the fixtures in bucket [`BUCKET`].
    Gcs(FakeGcs),
}

impl Emulator {
    /// Starts Azurite and uploads each `(local dir, key prefix)`.
    pub async fn azure(uploads: &[(PathBuf, String)]) -> Result<Emulator, String> {
        let server = Azurite::start()
            .map_err(|e| format!("Azurite: {e}"))?
            .ok_or("Azurite: set DAR_AZURITE to its azurite-blob (.ci/run installs it)")?;
        server
            .create_container(BUCKET)
            .map_err(|e| format!("Azurite: {e}"))?;
        let started = std::time::Instant::now();
        for (dir, prefix) in uploads {
            server
                .upload_dir(dir, BUCKET, prefix)
                .await
                .map_err(|e| format!("Azurite: uploading {}: {e}", dir.display()))?;
        }
        eprintln!("azure: uploaded the fixtures in {:.1?}", started.elapsed());
        Ok(Emulator::Azure(server))
    }

    /// Starts fake-gcs-server and uploads each `(local dir, key prefix)`.
    pub fn gcs(uploads: &[(PathBuf, String)]) -> Result<Emulator, String> {
        let server = FakeGcs::start()
            .map_err(|e| format!("fake-gcs-server: {e}"))?
            .ok_or(
                "fake-gcs-server: set DAR_FAKE_GCS_SERVER to its binary (.ci/run installs it)",
            )?;
        server
            .create_bucket(BUCKET)
            .map_err(|e| format!("fake-gcs-server: {e}"))?;
        let started = std::time::Instant::now();
        for (dir, prefix) in uploads {
            server
                .upload_dir(dir, BUCKET, prefix)
                .map_err(|e| format!("fake-gcs-server: uploading {}: {e}", dir.display()))?;
        }
        eprintln!("gcs: uploaded the fixtures in {:.1?}", started.elapsed());
        Ok(Emulator::Gcs(server))
    }

    /// `http://127.0.0.1:PORT` of the server itself (what the proxy
    /// forwards to).
    pub fn endpoint(&self) -> String {
        match self {
            Emulator::Azure(a) => a.blob_storage_url(),
            Emulator::Gcs(g) => g.base_url(),
        }
    }

    /// The URI of the table uploaded under `prefix`.
    pub fn uri(&self, prefix: &str) -> String {
        match self {
            Emulator::Azure(_) => format!("az://{BUCKET}/{prefix}"),
            Emulator::Gcs(_) => format!("gs://{BUCKET}/{prefix}"),
        }
    }

    /// Storage options for a reader that reaches the server at `endpoint`
    /// (the proxy's): object_store's keys, which dar and the Rust-based
    /// peers take alike.
    pub fn options_via(&self, endpoint: &str) -> BTreeMap<String, String> {
        let (options, key, value) = match self {
            Emulator::Azure(a) => (
                a.storage_options(),
                "azure_storage_endpoint",
                format!("{endpoint}/{}", Azurite::ACCOUNT),
            ),
            Emulator::Gcs(g) => (g.storage_options(), "google_base_url", endpoint.to_string()),
        };
        let mut map: BTreeMap<String, String> = options
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        map.insert(key.into(), value);
        map
    }
}
