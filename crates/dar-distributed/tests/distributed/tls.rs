//! Workers that serve TLS (a private CA made by the test, a certificate for
//! 127.0.0.1): a coordinator that trusts the CA gets the rows of one
//! process (peers call each other over TLS too); a plain-text client, or
//! one that trusts only the system's roots, gets an error and no rows.

use std::path::{Path, PathBuf};

use dar_datafusion::register_delta_table;
use dar_distributed::{ClientOptions, ServerTls, TlsCa, Token, WorkerOptions};
use dar_io::StorageOptions;
use dar_scan::Table;
use datafusion::prelude::SessionContext;

use crate::common::{coordinator_with, lines, single, start_workers_with, write_many_files};

const SECRET: &str = "tls-worker-secret-0123456789";
const QUERY: &str = "SELECT grp, count(*) AS n, sum(id) AS s FROM many GROUP BY grp";

/// A CA and a worker certificate for 127.0.0.1 signed by it, as PEM files
/// in `dir`: (ca, cert, key).
pub fn certificates(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair, SanType};

    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "dar test CA");
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca_params, ca_key);

    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    params
        .subject_alt_names
        .push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
    let cert = params.signed_by(&key, &issuer).unwrap();

    let paths = (
        dir.join("ca.pem"),
        dir.join("cert.pem"),
        dir.join("key.pem"),
    );
    std::fs::write(&paths.0, ca_cert.pem()).unwrap();
    std::fs::write(&paths.1, cert.pem()).unwrap();
    std::fs::write(&paths.2, key.serialize_pem()).unwrap();
    paths
}

async fn run(ctx: &SessionContext, many: &str) -> datafusion::common::Result<Vec<String>> {
    register_delta_table(ctx, "many", Table::open(many).await.unwrap()).unwrap();
    let batches = ctx.sql(QUERY).await?.collect().await?;
    Ok(lines(&batches))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_workers_serve_clients_that_trust_their_ca_and_no_one_else() {
    let dir = tempfile::tempdir().unwrap();
    let many = write_many_files(dir.path(), 6, 20).await;
    let (ca, cert, key) = certificates(dir.path());
    let ca = TlsCa::from_pem_file(&ca).unwrap();
    let token = Token::new(SECRET).unwrap();
    let options = WorkerOptions::new(StorageOptions::new())
        .with_token(token.clone())
        .with_tls(ServerTls::from_pem_files(&cert, &key).unwrap())
        .with_tls_ca(ca.clone());
    let workers = start_workers_with(2, &options).await;
    let client = ClientOptions::new().with_token(token).with_tls_ca(ca);

    let expected = run(&single(), &many).await.unwrap();
    let got = run(&coordinator_with(&workers, "https", client.clone()), &many)
        .await
        .unwrap();
    assert_eq!(got, expected);

    // Plain text to a TLS worker.
    let err = run(&coordinator_with(&workers, "http", client.clone()), &many)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        workers
            .iter()
            .any(|w| err.contains(&w.address().to_string())),
        "{err}"
    );
    assert!(!err.contains(SECRET), "{err}");

    // TLS, but the worker's CA is not trusted: the system's roots only.
    let roots = ClientOptions::new().with_token(Token::new(SECRET).unwrap());
    let err = run(&coordinator_with(&workers, "https", roots), &many)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("certificate") || err.contains("UnknownIssuer"),
        "{err}"
    );
}
