//! Many clients, freshness, the memory pool, cancellation, admission and
//! the admin port.

use std::time::{Duration, Instant};

use dar_serve::{ServeOptions, TableConfig};
use futures::StreamExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::kit::{batch, client, open_stream, query, rows, start, write_table};

/// The value of the metric line starting with `prefix` in `text`.
fn metric(text: &str, prefix: &str) -> f64 {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no metric {prefix} in:\n{text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_concurrent_clients_get_the_sequential_results() {
    let dir = tempfile::tempdir().unwrap();
    write_table(dir.path(), "t", &[0..500, 500..1000, 1000..1200]).await;
    write_table(dir.path(), "u", &[0..50]).await;
    let uri = |n: &str| dir.path().join(n).display().to_string();
    let running = start(
        ServeOptions::new()
            .with_table(TableConfig::new("t", uri("t")))
            .with_table(TableConfig::new("u", uri("u"))),
    )
    .await;
    let queries = [
        "SELECT * FROM t WHERE id % 7 = 0",
        "SELECT count(*), sum(value) FROM t",
        "SELECT name FROM t WHERE id BETWEEN 400 AND 620",
        "SELECT t.id, u.name FROM t JOIN u ON t.id = u.id",
        "SELECT id / 100 AS bucket, count(*) FROM t GROUP BY id / 100",
        "SELECT * FROM u ORDER BY id DESC LIMIT 5",
    ];
    let mut c = client(running.address).await;
    let mut expected = Vec::new();
    for q in queries {
        expected.push(rows(&mut c, q).await);
    }
    let expected = std::sync::Arc::new(expected);
    let mut tasks = Vec::new();
    for worker in 0..16 {
        let expected = std::sync::Arc::clone(&expected);
        let address = running.address;
        tasks.push(tokio::spawn(async move {
            let mut c = client(address).await;
            for round in 0..6 {
                let i = (worker + round) % queries.len();
                assert_eq!(
                    rows(&mut c, queries[i]).await,
                    expected[i],
                    "{}",
                    queries[i]
                );
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let text = running.server.metrics_text();
    assert_eq!(
        metric(&text, "dar_serve_queries_total{outcome=\"ok\"}"),
        (16 * 6 + queries.len()) as f64
    );
    assert_eq!(metric(&text, "dar_serve_queries_running"), 0.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_new_commit_is_seen_within_the_refresh_interval() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = write_table(dir.path(), "t", &[0..10]).await;
    let uri = dir.path().join("t").display().to_string();
    let interval = Duration::from_millis(200);
    let running = start(
        ServeOptions::new()
            .with_table(TableConfig::new("t", &uri))
            .with_refresh_interval(interval),
    )
    .await;
    let mut c = client(running.address).await;
    assert_eq!(rows(&mut c, "SELECT count(*) FROM t").await, vec!["10"]);
    // Let a few refreshes find nothing new first: no new version.
    tokio::time::sleep(interval * 3).await;
    let before = running.server.metrics_text();
    assert_eq!(metric(&before, "dar_serve_table_version{table=\"t\"}"), 1.0);
    let requests = |text: &str| metric(text, "dar_serve_store_requests_total{table=\"t\"}");
    // Idle refreshes list the log after the version and read nothing.
    tokio::time::sleep(interval * 2).await;
    let idle = running.server.metrics_text();
    assert_eq!(
        requests(&idle),
        requests(&before),
        "idle refreshes read objects"
    );
    assert!(
        metric(&idle, "dar_serve_store_lists_total{table=\"t\"}")
            > metric(&before, "dar_serve_store_lists_total{table=\"t\"}")
    );
    writer.append(&batch(10..25)).await.unwrap();
    let committed = Instant::now();
    // The refresh that finds the commit reads only that commit.
    loop {
        let text = running.server.metrics_text();
        if metric(&text, "dar_serve_table_version{table=\"t\"}") == 2.0 {
            assert_eq!(requests(&text) - requests(&idle), 1.0, "{text}");
            break;
        }
        assert!(committed.elapsed() < interval + Duration::from_secs(2));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    loop {
        if rows(&mut c, "SELECT count(*) FROM t").await == vec!["25"] {
            break;
        }
        assert!(
            committed.elapsed() < interval + Duration::from_secs(2),
            "the commit was not seen after {:?}",
            committed.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let after = running.server.metrics_text();
    assert_eq!(metric(&after, "dar_serve_table_version{table=\"t\"}"), 2.0);
    assert!(metric(&after, "dar_serve_table_refresh_lag_seconds{table=\"t\"}") < 1.5);
    // Time travel still reads the first version.
    assert_eq!(
        rows(&mut c, "SELECT count(*) FROM delta_scan('t', 1)").await,
        vec!["10"]
    );
    // A checkpoint written since does not make the refresh read it: the
    // one new commit is still the one request.
    let settled = running.server.metrics_text();
    writer.checkpoint().await.unwrap();
    writer.append(&batch(25..30)).await.unwrap();
    let committed = Instant::now();
    loop {
        let text = running.server.metrics_text();
        if metric(&text, "dar_serve_table_version{table=\"t\"}") == 3.0 {
            assert_eq!(requests(&text) - requests(&settled), 1.0, "{text}");
            break;
        }
        assert!(committed.elapsed() < interval + Duration::from_secs(2));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(rows(&mut c, "SELECT count(*) FROM t").await, vec!["30"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_query_over_the_memory_limit_fails_alone() {
    let dir = tempfile::tempdir().unwrap();
    write_table(dir.path(), "t", &[0..20_000, 20_000..40_000]).await;
    let uri = dir.path().join("t").display().to_string();
    let running = start(
        ServeOptions::new()
            .with_table(TableConfig::new("t", &uri))
            .with_memory_limit(256 * 1024),
    )
    .await;
    let address = running.address;
    let big = tokio::spawn(async move {
        let mut c = client(address).await;
        query(&mut c, "SELECT name, id FROM t ORDER BY name DESC, id").await
    });
    let mut c = client(address).await;
    for _ in 0..5 {
        assert_eq!(
            rows(&mut c, "SELECT count(*) FROM t WHERE id < 100").await,
            vec!["100"]
        );
    }
    let err = big.await.unwrap().unwrap_err().to_string();
    assert!(err.contains("--memory-limit"), "{err}");
    // The server still answers.
    assert_eq!(rows(&mut c, "SELECT max(id) FROM t").await, vec!["39999"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_client_that_goes_away_stops_its_query() {
    let dir = tempfile::tempdir().unwrap();
    let commits: Vec<_> = (0..40).map(|i| i * 1000..(i + 1) * 1000).collect();
    write_table(dir.path(), "t", &commits).await;
    let uri = dir.path().join("t").display().to_string();
    let running = start(ServeOptions::new().with_table(TableConfig::new("t", &uri))).await;
    let mut c = client(running.address).await;
    let info = c
        .execute("SELECT * FROM t".to_string(), None)
        .await
        .unwrap();
    let ticket = info.endpoint[0].ticket.clone().unwrap();
    let mut stream = c.do_get(ticket).await.unwrap();
    stream.next().await.unwrap().unwrap();
    drop(stream);
    drop(c);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let text = running.server.metrics_text();
        if metric(&text, "dar_serve_queries_total{outcome=\"cancelled\"}") == 1.0 {
            assert_eq!(metric(&text, "dar_serve_queries_running"), 0.0);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the query was not stopped:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The scan stopped fetching: the store's bytes no longer grow.
    let bytes = |text: &str| metric(text, "dar_serve_store_bytes_total{table=\"t\"}");
    let stopped = bytes(&running.server.metrics_text());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(bytes(&running.server.metrics_text()), stopped);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_full_queue_is_refused_with_resource_exhausted() {
    let dir = tempfile::tempdir().unwrap();
    // Big enough that its result does not fit the connection's buffers:
    // the unread stream keeps the query (and its slot) running.
    write_table(dir.path(), "t", &[0..200_000, 200_000..400_000]).await;
    let uri = dir.path().join("t").display().to_string();
    let running = start(
        ServeOptions::new()
            .with_table(TableConfig::new("t", &uri))
            .with_max_concurrent_queries(1)
            .with_max_queued_queries(0),
    )
    .await;
    let mut holder = client(running.address).await;
    // The stream holds the only slot until it is read or dropped.
    let held = open_stream(&mut holder, "SELECT * FROM t").await;
    let mut c = client(running.address).await;
    let err = query(&mut c, "SELECT 1").await.unwrap_err().to_string();
    assert!(err.contains("busy"), "{err}");
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match query(&mut c, "SELECT 1").await {
            Ok(_) => break,
            Err(e) => assert!(Instant::now() < deadline, "{e}"),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let text = running.server.metrics_text();
    assert!(metric(&text, "dar_serve_queries_total{outcome=\"refused\"}") >= 1.0);
}

async fn http_get(address: std::net::SocketAddr, path: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    stream
        .write_all(
            format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_admin_port_reports_health_and_metrics() {
    let dir = tempfile::tempdir().unwrap();
    write_table(dir.path(), "t", &[0..10]).await;
    let uri = dir.path().join("t").display().to_string();
    let running = start(ServeOptions::new().with_table(TableConfig::new("t", &uri))).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let admin = listener.local_addr().unwrap();
    let server = running.server.clone();
    let task = tokio::spawn(async move {
        server
            .serve_admin(listener, std::future::pending())
            .await
            .unwrap();
    });
    let mut c = client(running.address).await;
    // The second run finds the data file's footer cached.
    rows(&mut c, "SELECT * FROM t").await;
    rows(&mut c, "SELECT * FROM t").await;
    let health = http_get(admin, "/health").await;
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    assert!(health.contains("\"name\":\"t\",\"version\":1"), "{health}");
    let metrics = http_get(admin, "/metrics").await;
    assert!(metrics.starts_with("HTTP/1.1 200"), "{metrics}");
    let body = metrics.split("\r\n\r\n").nth(1).unwrap();
    assert_eq!(metric(body, "dar_serve_queries_total{outcome=\"ok\"}"), 2.0);
    assert_eq!(
        metric(body, "dar_serve_query_seconds_count{outcome=\"ok\"}"),
        2.0
    );
    assert!(metric(body, "dar_serve_store_requests_total{table=\"t\"}") > 0.0);
    // Each cache of each table: hits, misses and their ratio.
    let cache =
        |name: &str, cache: &str| metric(body, &format!("{name}{{table=\"t\",cache=\"{cache}\"}}"));
    let (hits, misses) = (
        cache("dar_serve_cache_hits_total", "footer"),
        cache("dar_serve_cache_misses_total", "footer"),
    );
    assert!(hits >= 1.0 && misses >= 1.0, "{body}");
    assert_eq!(
        cache("dar_serve_cache_hit_ratio", "footer"),
        hits / (hits + misses)
    );
    for c in ["range", "dv"] {
        let ratio = cache("dar_serve_cache_hit_ratio", c);
        assert!(
            ratio.is_nan() || (0.0..=1.0).contains(&ratio),
            "{c}: {body}"
        );
    }
    assert!(body.contains("dar_serve_queries_queued 0"), "{body}");
    let missing = http_get(admin, "/nothing").await;
    assert!(missing.starts_with("HTTP/1.1 404"), "{missing}");
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_query_reads_one_snapshot_while_a_refresh_lands() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = write_table(dir.path(), "t", &[0..100_000, 100_000..200_000]).await;
    let uri = dir.path().join("t").display().to_string();
    let running = start(
        ServeOptions::new()
            .with_table(TableConfig::new("t", &uri))
            .with_refresh_interval(Duration::from_millis(100)),
    )
    .await;
    let mut c = client(running.address).await;
    let mut stream = open_stream(&mut c, "SELECT * FROM t").await;
    let mut total = stream.next().await.unwrap().unwrap().num_rows();
    writer.append(&batch(200_000..200_500)).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while metric(
        &running.server.metrics_text(),
        "dar_serve_table_version{table=\"t\"}",
    ) < 3.0
    {
        assert!(Instant::now() < deadline, "the refresh did not land");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    while let Some(b) = stream.next().await {
        total += b.unwrap().num_rows();
    }
    assert_eq!(
        total, 200_000,
        "the query read the snapshot it was planned on"
    );
    let mut c = client(running.address).await;
    assert_eq!(rows(&mut c, "SELECT count(*) FROM t").await, vec!["200500"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_query_past_its_timeout_is_stopped_even_if_the_client_stalls() {
    let dir = tempfile::tempdir().unwrap();
    write_table(dir.path(), "t", &[0..200_000, 200_000..400_000]).await;
    let uri = dir.path().join("t").display().to_string();
    let running = start(
        ServeOptions::new()
            .with_table(TableConfig::new("t", &uri))
            .with_query_timeout(Duration::from_millis(700)),
    )
    .await;
    let mut c = client(running.address).await;
    let mut stream = open_stream(&mut c, "SELECT * FROM t").await;
    // The client reads nothing: the query must still stop at the timeout.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = running.server.metrics_text();
        if metric(&text, "dar_serve_queries_total{outcome=\"timeout\"}") == 1.0 {
            assert_eq!(metric(&text, "dar_serve_queries_running"), 0.0);
            break;
        }
        assert!(Instant::now() < deadline, "not stopped:\n{text}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The client then gets what was sent, then the error.
    let mut error = None;
    while let Some(b) = stream.next().await {
        if let Err(e) = b {
            error = Some(e.to_string());
            break;
        }
    }
    let error = error.expect("an error after the batches sent");
    assert!(error.contains("query timeout"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn shutdown_lets_running_queries_finish_up_to_the_drain_timeout() {
    let dir = tempfile::tempdir().unwrap();
    write_table(dir.path(), "t", &[0..100_000, 100_000..200_000]).await;
    let uri = dir.path().join("t").display().to_string();
    let options = ServeOptions::new()
        .with_table(TableConfig::new("t", &uri))
        .with_query_log(false);
    for (drain, read) in [
        (Duration::from_secs(20), true),
        (Duration::from_millis(300), false),
    ] {
        let server = dar_serve::Server::open(options.clone())
            .await
            .unwrap()
            .with_drain_timeout(drain);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let watched = server.clone();
        let serving = tokio::spawn(async move {
            server
                .serve(listener, async move {
                    let _ = stopped.await;
                })
                .await
        });
        let mut c = client(address).await;
        let mut stream = open_stream(&mut c, "SELECT * FROM t").await;
        let mut total = stream.next().await.unwrap().unwrap().num_rows();
        // The clock starts before the signal: the server may begin its
        // drain before this thread runs again.
        let asked = Instant::now();
        stop.send(()).unwrap();
        if read {
            // The query in flight finishes: the server streams every row,
            // the client reads them all (the connection closes lingering,
            // never resetting over the reply's last frames), and the query
            // counts as ok.
            while let Some(b) = stream.next().await {
                total += b.unwrap().num_rows();
            }
            assert_eq!(total, 200_000);
            serving.await.unwrap().unwrap();
            let text = watched.metrics_text();
            assert_eq!(
                metric(&text, "dar_serve_queries_total{outcome=\"ok\"}"),
                1.0,
                "{text}"
            );
        } else {
            // A client that stops reading does not hold the server past
            // the drain timeout.
            serving.await.unwrap().unwrap();
            let waited = asked.elapsed();
            assert!(
                waited >= drain && waited < drain + Duration::from_secs(5),
                "{waited:?}"
            );
        }
    }
}
