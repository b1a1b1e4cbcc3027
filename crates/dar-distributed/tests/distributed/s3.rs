//! An `s3://` table on the in-process S3 server: workers read it with their
//! own credentials, and the plan they are sent carries none.

use dar_datafusion::register_delta_table;
use dar_io::testing::S3Server;
use dar_scan::{Table, TableOptions};

use crate::common::{
    coordinator, encoded_scans, is_distributed, lines, single, start_workers, write_many_files,
};

const QUERY: &str =
    "SELECT grp, count(*) AS n, sum(id) AS s FROM many WHERE part <> 3 GROUP BY grp";

/// A server whose bucket `tables` holds a generated table under `many/`,
/// and that table's local path.
async fn serve_table(dir: &std::path::Path) -> (S3Server, String) {
    let local = write_many_files(dir, 9, 30).await;
    let server = S3Server::start().await.unwrap();
    server.create_bucket("tables").await.unwrap();
    server
        .upload_dir(std::path::Path::new(&local), "tables", "many")
        .unwrap();
    (server, local)
}

async fn s3_table(server: &S3Server) -> Table {
    Table::open_with(
        "s3://tables/many",
        TableOptions::new().with_storage_options(server.storage_options()),
    )
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_read_s3_with_their_own_credentials_and_the_plan_has_none() {
    let dir = tempfile::tempdir().unwrap();
    let (server, local) = serve_table(dir.path()).await;
    let workers = start_workers(3, &server.storage_options()).await;
    let ctx = coordinator(&workers);
    register_delta_table(&ctx, "many", s3_table(&server).await).unwrap();
    let reference = single();
    register_delta_table(&reference, "many", Table::open(&local).await.unwrap()).unwrap();

    let df = ctx.sql(QUERY).await.unwrap();
    let plan = df.clone().create_physical_plan().await.unwrap();
    assert!(is_distributed(&plan));
    let got = lines(&df.collect().await.unwrap());
    let expected = lines(&reference.sql(QUERY).await.unwrap().collect().await.unwrap());
    assert_eq!(got, expected);

    // The workers read the files from S3.
    let read: u64 = workers
        .iter()
        .flat_map(|w| w.stores().recent_scans())
        .inspect(|s| assert_eq!(s.table_uri.trim_end_matches('/'), "s3://tables/many"))
        .map(|s| s.metrics.snapshot().files_read)
        .sum();
    assert_eq!(read, 8, "9 files, partition 3 pruned");

    // What the workers are sent: the table URI, never a credential.
    let encoded = encoded_scans(&plan);
    assert!(encoded.len() >= 2, "{} encoded scans", encoded.len());
    for bytes in &encoded {
        let text = String::from_utf8_lossy(bytes);
        assert!(text.contains("s3://tables/many"), "{text}");
        for secret in [S3Server::SECRET_KEY, S3Server::ACCESS_KEY] {
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{secret} in the encoded plan"
            );
        }
        assert!(!text.contains("aws_"), "{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_that_cannot_read_the_store_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _) = serve_table(dir.path()).await;
    // The workers' own credentials are wrong; the coordinator's are right
    // (it plans from the log). Two workers, so the scan is distributed.
    let wrong = server
        .storage_options()
        .with("aws_secret_access_key", "not-the-secret");
    let workers = start_workers(2, &wrong).await;
    let ctx = coordinator(&workers);
    register_delta_table(&ctx, "many", s3_table(&server).await).unwrap();
    let err = ctx
        .sql("SELECT sum(id) FROM many")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap_err()
        .to_string();
    assert!(
        workers
            .iter()
            .any(|w| err.contains(&format!("worker {}", w.address()))),
        "{err}"
    );
    assert!(err.contains("s3://tables/many/"), "{err}");
    assert!(!err.contains("not-the-secret"), "{err}");
    assert!(!err.contains(S3Server::SECRET_KEY), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_query_on_workers_fetches_no_page_again() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _) = serve_table(dir.path()).await;
    let workers = start_workers(2, &server.storage_options()).await;
    let ctx = coordinator(&workers);
    register_delta_table(&ctx, "many", s3_table(&server).await).unwrap();
    let first = lines(&ctx.sql(QUERY).await.unwrap().collect().await.unwrap());
    // Which files each worker has read so far.
    let mut read: Vec<std::collections::HashSet<String>> = vec![Default::default(); workers.len()];
    let mut seen = vec![0; workers.len()];
    let mut repeated = 0;
    for _ in 0..4 {
        for (i, w) in workers.iter().enumerate() {
            let scans = w.stores().recent_scans();
            for scan in &scans[seen[i]..] {
                read[i].extend(scan.files.iter().cloned());
            }
            seen[i] = scans.len();
        }
        assert_eq!(
            lines(&ctx.sql(QUERY).await.unwrap().collect().await.unwrap()),
            first
        );
        // A scan whose files its worker had all read before makes no
        // footer or page request: they come from the worker's cache.
        for (i, w) in workers.iter().enumerate() {
            for scan in &w.stores().recent_scans()[seen[i]..] {
                if scan.files.iter().all(|f| read[i].contains(f)) {
                    let io = scan.metrics.snapshot().io;
                    let fetched = io.class(dar_io::ObjectClass::PageData).requests
                        + io.class(dar_io::ObjectClass::Footer).requests;
                    assert_eq!(fetched, 0, "{io}");
                    assert!(io.cache.hits > 0, "{io}");
                    repeated += 1;
                }
            }
        }
    }
    assert!(repeated > 0, "no worker was given files it had read before");
}
