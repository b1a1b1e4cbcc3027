//! Tokens, refused writes, and garbage messages (the server stays up).

use arrow_flight::flight_service_client::FlightServiceClient;
use arrow_flight::sql::{Any, CommandStatementQuery, ProstMessageExt};
use arrow_flight::{Action, FlightDescriptor, Ticket};
use dar_distributed::Token;
use dar_serve::{ServeOptions, TableConfig};
use prost::Message;
use tonic::Code;
use tonic::transport::Channel;

use crate::kit::{client, query, rows, start, write_table};

const SECRET: &str = "serve-secret-token-0123456789";

fn code(e: &arrow_flight::error::FlightError) -> Option<Code> {
    match e {
        arrow_flight::error::FlightError::Tonic(status) => Some(status.code()),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn calls_without_the_token_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    write_table(dir.path(), "t", &[0..10]).await;
    let uri = dir.path().join("t").display().to_string();
    let running = start(
        ServeOptions::new()
            .with_table(TableConfig::new("t", &uri))
            .with_token(Token::new(SECRET).unwrap()),
    )
    .await;
    let mut c = client(running.address).await;
    let none = query(&mut c, "SELECT 1").await.unwrap_err();
    assert_eq!(code(&none), Some(Code::Unauthenticated), "{none}");
    assert!(none.to_string().contains("has none"), "{none}");
    c.set_token("not-the-right-token-at-all".into());
    let wrong = query(&mut c, "SELECT 1").await.unwrap_err();
    assert_eq!(code(&wrong), Some(Code::Unauthenticated), "{wrong}");
    assert!(!wrong.to_string().contains(SECRET));
    c.set_token(SECRET.into());
    assert_eq!(rows(&mut c, "SELECT count(*) FROM t").await, vec!["10"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ddl_dml_and_copy_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    write_table(dir.path(), "t", &[0..10]).await;
    let uri = dir.path().join("t").display().to_string();
    let running = start(ServeOptions::new().with_table(TableConfig::new("t", &uri))).await;
    let mut c = client(running.address).await;
    let target = dir.path().join("out.csv").display().to_string();
    for sql in [
        "CREATE TABLE x AS SELECT 1".to_string(),
        "CREATE VIEW v AS SELECT * FROM t".to_string(),
        "DROP TABLE t".to_string(),
        "INSERT INTO t VALUES (1, 'a', 2)".to_string(),
        format!("COPY t TO '{target}'"),
        "SET datafusion.execution.batch_size = 1".to_string(),
    ] {
        let err = query(&mut c, &sql).await.unwrap_err();
        assert_eq!(code(&err), Some(Code::InvalidArgument), "{sql}: {err}");
        assert!(err.to_string().contains("refused"), "{sql}: {err}");
        let err = c.execute_update(sql.clone(), None).await.unwrap_err();
        assert!(err.to_string().contains("refused"), "{sql}: {err}");
    }
    let err = c.execute_update("SELECT 1".into(), None).await.unwrap_err();
    assert!(err.to_string().contains("only reads"), "{err}");
    assert!(!std::path::Path::new(&target).exists());
    assert_eq!(rows(&mut c, "SELECT count(*) FROM t").await, vec!["10"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn garbage_messages_get_errors_and_the_server_stays_up() {
    let dir = tempfile::tempdir().unwrap();
    write_table(dir.path(), "t", &[0..10]).await;
    let uri = dir.path().join("t").display().to_string();
    let running = start(
        ServeOptions::new()
            .with_table(TableConfig::new("t", &uri))
            .with_max_message_bytes(1 << 20),
    )
    .await;
    let channel = Channel::from_shared(format!("http://{}", running.address))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut raw = FlightServiceClient::new(channel);

    // A ticket that is no protobuf, one truncated, one of an unknown type.
    let query = CommandStatementQuery {
        query: "SELECT * FROM t".into(),
        transaction_id: None,
    }
    .as_any()
    .encode_to_vec();
    let unknown = Any {
        type_url: "type.googleapis.com/no.such.Command".into(),
        value: vec![1, 2, 3].into(),
    }
    .encode_to_vec();
    let handle = arrow_flight::sql::TicketStatementQuery {
        statement_handle: vec![0xff, 0xfe].into(),
    }
    .as_any()
    .encode_to_vec();
    for bytes in [
        b"\xff\xff garbage".to_vec(),
        query[..query.len() / 2].to_vec(),
        unknown.clone(),
        handle,
        Vec::new(),
    ] {
        let err = raw.do_get(Ticket::new(bytes.clone())).await.unwrap_err();
        assert_ne!(err.code(), Code::Ok);
        let err = raw
            .get_flight_info(FlightDescriptor::new_cmd(bytes.clone()))
            .await
            .unwrap_err();
        assert_ne!(err.code(), Code::Ok);
    }
    let err = raw
        .do_action(Action::new("NoSuchAction", vec![1, 2, 3]))
        .await
        .unwrap_err();
    assert_ne!(err.code(), Code::Ok);
    let err = raw
        .do_action(Action::new("CreatePreparedStatement", vec![0xff, 0x01]))
        .await
        .unwrap_err();
    assert_ne!(err.code(), Code::Ok);
    // A prepared statement handle the server never gave.
    let bogus = arrow_flight::sql::CommandPreparedStatementQuery {
        prepared_statement_handle: b"999999".to_vec().into(),
    }
    .as_any()
    .encode_to_vec();
    let err = raw.do_get(Ticket::new(bogus)).await.unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err}");
    // An oversized message.
    let big = CommandStatementQuery {
        query: format!("SELECT '{}'", "x".repeat(2 << 20)),
        transaction_id: None,
    }
    .as_any()
    .encode_to_vec();
    let err = raw
        .get_flight_info(FlightDescriptor::new_cmd(big))
        .await
        .unwrap_err();
    assert_ne!(err.code(), Code::Ok);

    let mut c = client(running.address).await;
    assert_eq!(rows(&mut c, "SELECT count(*) FROM t").await, vec!["10"]);
}

/// A CA and a server certificate for 127.0.0.1 signed by it: (ca PEM,
/// cert file, key file).
fn certificates(dir: &std::path::Path) -> (String, std::path::PathBuf, std::path::PathBuf) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair, SanType};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    params
        .subject_alt_names
        .push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
    let cert = params.signed_by(&key, &issuer).unwrap();
    let (cert_file, key_file) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert_file, cert.pem()).unwrap();
    std::fs::write(&key_file, key.serialize_pem()).unwrap();
    (ca_cert.pem(), cert_file, key_file)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tls_serves_clients_that_trust_its_ca() {
    use tonic::transport::{Certificate, ClientTlsConfig};
    let dir = tempfile::tempdir().unwrap();
    write_table(dir.path(), "t", &[0..10]).await;
    let uri = dir.path().join("t").display().to_string();
    let (ca, cert, key) = certificates(dir.path());
    let running = start(
        ServeOptions::new()
            .with_table(TableConfig::new("t", &uri))
            .with_tls(dar_distributed::ServerTls::from_pem_files(&cert, &key).unwrap())
            .with_token(Token::new(SECRET).unwrap()),
    )
    .await;
    let channel = Channel::from_shared(format!("https://{}", running.address))
        .unwrap()
        .tls_config(ClientTlsConfig::new().ca_certificate(Certificate::from_pem(ca)))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut c = arrow_flight::sql::client::FlightSqlServiceClient::new(channel);
    c.set_token(SECRET.into());
    assert_eq!(rows(&mut c, "SELECT count(*) FROM t").await, vec!["10"]);
    // Plain text to a TLS server gets nothing.
    let plain = Channel::from_shared(format!("http://{}", running.address))
        .unwrap()
        .connect()
        .await;
    if let Ok(channel) = plain {
        let mut c = arrow_flight::sql::client::FlightSqlServiceClient::new(channel);
        c.set_token(SECRET.into());
        assert!(query(&mut c, "SELECT 1").await.is_err());
    }
}
