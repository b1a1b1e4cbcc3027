//! `dar_datafusion::sql` reads by default: DDL, DML, `COPY` and `SET` are
//! refused in one line; `QueryOptions` allows them, but a write never lands
//! inside a Delta table (registered, or read by the statement).

use std::path::Path;

use dar_datafusion::QueryOptions;
use datafusion::prelude::SessionContext;

use crate::tables;
use dar_testdata::copy_dir;

async fn run(ctx: &SessionContext, sql: &str, options: QueryOptions) -> Result<usize, String> {
    let df = dar_datafusion::sql(ctx, sql, options)
        .await
        .map_err(|e| e.to_string())?;
    let batches = df.collect().await.map_err(|e| e.to_string())?;
    Ok(batches.iter().map(|b| b.num_rows()).sum())
}

/// The files under `dir`, recursively.
fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p.display().to_string());
        }
    }
    out.sort();
    out
}

async fn session(table: &Path) -> SessionContext {
    let ctx = SessionContext::new();
    dar_datafusion::register_dar(&ctx);
    let t = dar_scan::Table::open(table.to_str().unwrap())
        .await
        .unwrap();
    dar_datafusion::register_delta_table(&ctx, "trips", t).unwrap();
    ctx
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reading_only_by_default() {
    let t = tables().await;
    let copy = tempfile::tempdir().unwrap();
    copy_dir(&t.sample, copy.path());
    let before = files(copy.path());
    let ctx = session(copy.path()).await;
    let read = QueryOptions::new();
    let out = tempfile::tempdir().unwrap();
    let target = out.path().join("x.json");
    let log = copy.path().join("_delta_log/00000000000000000099.json");
    for (sql, refused) in [
        (
            format!("COPY (SELECT 1 AS a) TO '{}'", target.display()),
            "COPY refused",
        ),
        (
            format!(
                "COPY (SELECT * FROM trips) TO '{}' STORED AS JSON",
                log.display()
            ),
            "COPY refused",
        ),
        (
            format!("EXPLAIN COPY (SELECT 1 AS a) TO '{}'", target.display()),
            "COPY refused",
        ),
        (
            "INSERT INTO trips SELECT * FROM trips".into(),
            "DML (Insert Into) refused",
        ),
        (
            "CREATE VIEW v AS SELECT 1".into(),
            "DDL (CreateView) refused",
        ),
        (
            format!(
                "CREATE EXTERNAL TABLE e STORED AS DELTA LOCATION '{}'",
                copy.path().display()
            ),
            "DDL (CreateExternalTable) refused",
        ),
        ("DROP TABLE trips".into(), "DDL (DropTable) refused"),
        (
            "SET datafusion.execution.batch_size = 1".into(),
            "statement (SetVariable) refused",
        ),
        (
            "PREPARE p AS SELECT 1".into(),
            "statement (Prepare) refused",
        ),
    ] {
        let err = run(&ctx, &sql, read).await.unwrap_err();
        assert!(err.contains(refused), "{sql}: {err}");
        assert!(err.contains("only reads tables"), "{sql}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert!(!target.exists());
    assert_eq!(files(copy.path()), before, "nothing written into the table");
    // Reading stays: queries, EXPLAIN, DESCRIBE, the table function.
    assert_eq!(run(&ctx, "SELECT * FROM trips", read).await, Ok(300));
    assert!(
        run(&ctx, "EXPLAIN SELECT * FROM trips", read)
            .await
            .unwrap()
            > 0
    );
    assert!(run(&ctx, "DESCRIBE trips", read).await.unwrap() > 0);
    let q = format!("SELECT * FROM delta_scan('{}')", copy.path().display());
    assert_eq!(run(&ctx, &q, read).await, Ok(300));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_when_allowed_but_never_into_a_delta_table() {
    let t = tables().await;
    let copy = tempfile::tempdir().unwrap();
    let root = copy.path().join("table");
    std::fs::create_dir(&root).unwrap();
    copy_dir(&t.sample, &root);
    let other = copy.path().join("other");
    std::fs::create_dir(&other).unwrap();
    copy_dir(&t.sample, &other);
    let before = (files(&root), files(&other));
    let link = copy.path().join("link");
    std::os::unix::fs::symlink(&root, &link).unwrap();

    let ctx = session(&root).await;
    let writes = QueryOptions::new().with_writes(true);
    let inside = [
        root.join("_delta_log/00000000000000000099.json")
            .display()
            .to_string(),
        format!("file://{}/x.json", root.display()),
        format!("{}/sub/../x.parquet", root.display()),
        format!("{}/_delta_log/00000000000000000099.json", link.display()),
    ];
    for target in &inside {
        let sql = format!("COPY (SELECT * FROM trips) TO '{target}' STORED AS JSON");
        let err = run(&ctx, &sql, writes).await.unwrap_err();
        assert!(err.contains("inside a Delta table"), "{target}: {err}");
    }
    // A table the statement reads, registered or not.
    let sql = format!(
        "COPY (SELECT * FROM delta_scan('{0}')) TO '{0}/_delta_log/00000000000000000099.json' STORED AS JSON",
        other.display()
    );
    let err = run(&ctx, &sql, writes).await.unwrap_err();
    assert!(err.contains("inside a Delta table"), "{err}");
    assert_eq!((files(&root), files(&other)), before);

    // Elsewhere: written.
    let out = copy.path().join("out.json");
    let sql = format!(
        "COPY (SELECT trip_id FROM trips) TO '{}' STORED AS JSON",
        out.display()
    );
    assert_eq!(run(&ctx, &sql, writes).await, Ok(1));
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 300);
    // DDL and statements follow their own switches.
    let ddl = QueryOptions::new().with_ddl(true);
    assert_eq!(
        run(&ctx, "CREATE VIEW v AS SELECT 1 AS a", ddl).await,
        Ok(0)
    );
    assert_eq!(run(&ctx, "SELECT * FROM v", ddl).await, Ok(1));
    let set = QueryOptions::new().with_statements(true);
    assert!(
        run(&ctx, "SET datafusion.execution.batch_size = 7", set)
            .await
            .is_ok()
    );
    assert!(
        run(&ctx, "COPY (SELECT 1) TO '/dev/null'", ddl)
            .await
            .is_err()
    );
}
