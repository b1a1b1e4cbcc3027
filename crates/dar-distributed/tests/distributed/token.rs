//! A worker with a token refuses every call without it (a wrong one, or
//! none), and serves a coordinator that has it, its peers included (the
//! shuffle of a GROUP BY runs worker to worker).

use dar_datafusion::register_delta_table;
use dar_distributed::{ClientOptions, Token, WorkerOptions};
use dar_io::StorageOptions;
use dar_scan::Table;
use datafusion::prelude::SessionContext;

use crate::common::{coordinator_with, lines, single, start_workers_with, write_many_files};

const SECRET: &str = "worker-secret-0123456789abcdef";
const OTHER: &str = "another-secret-0123456789abcdef";
const QUERY: &str = "SELECT grp, count(*) AS n, sum(id) AS s FROM many GROUP BY grp";

async fn run(ctx: &SessionContext, many: &str) -> datafusion::common::Result<Vec<String>> {
    register_delta_table(ctx, "many", Table::open(many).await.unwrap()).unwrap();
    let batches = ctx.sql(QUERY).await?.collect().await?;
    Ok(lines(&batches))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_without_the_workers_token_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let many = write_many_files(dir.path(), 6, 20).await;
    let options = WorkerOptions::new(StorageOptions::new()).with_token(Token::new(SECRET).unwrap());
    let workers = start_workers_with(2, &options).await;

    let expected = run(&single(), &many).await.unwrap();
    let with = ClientOptions::new().with_token(Token::new(SECRET).unwrap());
    let got = run(&coordinator_with(&workers, "http", with), &many)
        .await
        .unwrap();
    assert_eq!(got, expected);

    let wrong = ClientOptions::new().with_token(Token::new(OTHER).unwrap());
    let err = run(&coordinator_with(&workers, "http", wrong), &many)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("refused the call: its token is not the one it requires"),
        "{err}"
    );
    assert!(
        workers
            .iter()
            .any(|w| err.contains(&format!("worker {}", w.address()))),
        "{err}"
    );
    for secret in [SECRET, OTHER] {
        assert!(!err.contains(secret), "{err}");
    }

    let err = run(
        &coordinator_with(&workers, "http", ClientOptions::new()),
        &many,
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("refused the call: it requires a token and the call has none"),
        "{err}"
    );
}
