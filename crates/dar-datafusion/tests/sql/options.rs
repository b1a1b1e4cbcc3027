//! Table options in SQL: `delta_scan('uri', version | 'timestamp')` and
//! `STORED AS DELTA OPTIONS ('version' ..., 'timestamp' ...)` parse with
//! dar-scan's one parser, so a timestamp is RFC 3339 or milliseconds since
//! the epoch, as on the `dar` command line and in Python.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use dar_testkit::{DEFAULT_START_MS, TableWriter};
use datafusion::prelude::SessionContext;

/// A table with in-commit timestamps, so its commit times are known:
/// version 0 (empty) at 2024-01-01T00:00:00Z, version 1 (3 rows) a minute
/// later, version 2 (+2 rows) two minutes later.
async fn timed_table(dir: &Path) -> PathBuf {
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
    let store: Arc<dyn object_store::ObjectStore> =
        Arc::new(object_store::local::LocalFileSystem::new_with_prefix(dir).unwrap());
    let mut writer =
        TableWriter::builder(store, object_store::path::Path::from("t"), schema.clone())
            .with_in_commit_timestamps(true)
            .create()
            .await
            .unwrap();
    for values in [vec![1, 2, 3], vec![4, 5]] {
        let batch =
            RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(values))]).unwrap();
        writer.append(&batch).await.unwrap();
    }
    dir.join("t")
}

async fn count(ctx: &SessionContext, sql: &str) -> i64 {
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap()
        .value(0)
}

async fn error(ctx: &SessionContext, sql: &str) -> String {
    let result = match ctx.sql(sql).await {
        Ok(df) => df.collect().await.map(|_| ()),
        Err(e) => Err(e),
    };
    result.unwrap_err().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timestamps_travel_in_time_as_rfc_3339_or_milliseconds() {
    let dir = tempfile::tempdir().unwrap();
    let table = timed_table(dir.path()).await;
    let uri = table.display();
    let ctx = SessionContext::new();
    dar_datafusion::register_dar(&ctx);

    // Between version 1 (00:01) and version 2 (00:02): version 1.
    let ms = DEFAULT_START_MS + 90_000;
    for t in [
        "2024-01-01T00:01:30Z".to_string(),
        "2024-01-01T01:01:30+01:00".to_string(),
        ms.to_string(),
    ] {
        let sql = format!("SELECT count(*) FROM delta_scan('{uri}', '{t}')");
        assert_eq!(count(&ctx, &sql).await, 3, "{t}");
    }
    assert_eq!(
        count(
            &ctx,
            &format!("SELECT count(*) FROM delta_scan('{uri}', '2024-01-01T00:02:00Z')")
        )
        .await,
        5
    );
    assert_eq!(
        count(
            &ctx,
            &format!("SELECT count(*) FROM delta_scan('{uri}', 1)")
        )
        .await,
        3
    );

    for (name, options) in [
        (
            "by_rfc3339",
            "'timestamp' '2024-01-01T00:01:30Z'".to_string(),
        ),
        ("by_ms", format!("'timestamp' '{ms}'")),
        ("by_version", "'version' '1'".to_string()),
    ] {
        let ddl = format!(
            "CREATE EXTERNAL TABLE {name} STORED AS DELTA LOCATION '{uri}' OPTIONS ({options})"
        );
        ctx.sql(&ddl).await.unwrap().collect().await.unwrap();
        assert_eq!(
            count(&ctx, &format!("SELECT count(*) FROM {name}")).await,
            3,
            "{options}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_versions_and_timestamps_say_so_without_flags() {
    let dir = tempfile::tempdir().unwrap();
    let table = timed_table(dir.path()).await;
    let uri = table.display();
    let ctx = SessionContext::new();
    dar_datafusion::register_dar(&ctx);

    let e = error(
        &ctx,
        &format!("SELECT * FROM delta_scan('{uri}', 'yesterday')"),
    )
    .await;
    assert!(
        e.contains("invalid timestamp 'yesterday': neither RFC 3339"),
        "{e}"
    );
    let e = error(
        &ctx,
        &format!("SELECT * FROM delta_scan('{uri}', '99999-01-01T00:00:00Z')"),
    )
    .await;
    assert!(e.contains("RFC 3339 years run from 0000 to 9999"), "{e}");
    let e = error(&ctx, &format!("SELECT * FROM delta_scan('{uri}', -1)")).await;
    assert!(
        e.contains("invalid version '-1': expected a non-negative integer"),
        "{e}"
    );
    let e = error(&ctx, &format!("SELECT * FROM delta_scan('{uri}', 1.5)")).await;
    assert!(
        e.contains("must be a version (an integer literal) or a timestamp"),
        "{e}"
    );
    // Before the first commit: the log's own error.
    let e = error(
        &ctx,
        &format!("SELECT * FROM delta_scan('{uri}', '2023-12-31T00:00:00Z')"),
    )
    .await;
    assert!(e.contains("before the table history"), "{e}");

    for (options, wanted) in [
        ("'timestamp' 'yesterday'", "invalid timestamp 'yesterday'"),
        (
            "'version' 'x'",
            "invalid version 'x': expected a non-negative integer",
        ),
        (
            "'version' '1', 'timestamp' '0'",
            "version and timestamp cannot both be given",
        ),
    ] {
        let ddl = format!(
            "CREATE EXTERNAL TABLE bad STORED AS DELTA LOCATION '{uri}' OPTIONS ({options})"
        );
        let e = error(&ctx, &ddl).await;
        assert!(e.contains(wanted), "{options}: {e}");
        assert!(
            e.contains("CREATE EXTERNAL TABLE bad STORED AS DELTA"),
            "{e}"
        );
        assert!(!e.contains("--"), "{e}");
    }
}
