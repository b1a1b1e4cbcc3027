//! `dar serve` as a child process: what it prints (each table's version,
//! the admin and Flight SQL addresses, the real port for port 0), its admin
//! port, SIGTERM, and configuration errors. The Flight SQL protocol itself
//! is tested in crates/dar-serve and by the Python ADBC tests.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::{arg, dar, sample};

fn http_get(address: &str, path: &str) -> String {
    let mut stream = TcpStream::connect(address).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

#[test]
fn serve_prints_versions_and_addresses_then_stops_on_sigterm() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dar"))
        .args(["serve", "--table"])
        .arg(format!("trips={}", arg(&sample())))
        .args([
            "--listen",
            "127.0.0.1:0",
            "--admin-listen",
            "127.0.0.1:0",
            "--refresh-interval",
            "200ms",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = || {
        let mut l = String::new();
        stdout.read_line(&mut l).unwrap();
        l.trim().to_string()
    };
    let table = line();
    assert!(
        table.starts_with("table trips at version ") && table.contains("(opened in "),
        "{table}"
    );
    let admin = line();
    let admin = admin
        .strip_prefix("admin on ")
        .unwrap_or_else(|| panic!("{admin}"))
        .to_string();
    let listening = line();
    let address = listening
        .strip_prefix("listening on 127.0.0.1:")
        .unwrap_or_else(|| panic!("{listening}"));
    assert_ne!(address, "0", "the real port is printed");
    TcpStream::connect(format!("127.0.0.1:{address}")).unwrap();
    let health = http_get(&admin, "/health");
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    assert!(health.contains("\"name\":\"trips\""), "{health}");
    let metrics = http_get(&admin, "/metrics");
    assert!(
        metrics.contains("dar_serve_table_version{table=\"trips\"}"),
        "{metrics}"
    );

    let term = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{status:?}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "dar serve did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn serve_reads_tables_from_a_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("serve.toml");
    std::fs::write(
        &config,
        format!(
            "refresh_interval = \"500ms\"\n[[table]]\nname = \"trips\"\nuri = \"{}\"\n\
             [table.storage_options]\naws_region = \"eu-west-1\"\n",
            arg(&sample())
        ),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_dar"))
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(&config)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    let mut second = String::new();
    stdout.read_line(&mut second).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(first.starts_with("table trips at version "), "{first}");
    assert!(second.starts_with("listening on 127.0.0.1:"), "{second}");
}

#[test]
fn serve_configuration_errors_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[[table]]\nname = \"t\"\nuri = 3\n").unwrap();
    let out = dar()
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.toml") && err.contains("`uri`"), "{err}");

    let out = dar()
        .args(["serve", "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no table to serve"), "{err}");

    let out = dar()
        .args([
            "serve",
            "--table",
            "s3://secret@bucket/t",
            "--listen",
            "127.0.0.1:0",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("entry 1 is not NAME=URI"), "{err}");
    assert!(!err.contains("secret"), "{err}");

    let out = dar()
        .args(["serve", "--listen", "127.0.0.1:0", "--table"])
        .arg(format!("t={}", arg(&dir.path().join("missing"))))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("table 't'"), "{err}");

    let out = dar()
        .args(["serve", "--memory-limit", "lots", "--table"])
        .arg(format!("t={}", arg(&sample())))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--memory-limit"), "{err}");
}
