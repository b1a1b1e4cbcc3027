//! Rows: the same through the server as through a direct scan, prepared
//! statements, metadata, time travel, and the table functions' limits.

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_flight::sql::{CommandGetDbSchemas, CommandGetTables};
use dar_scan::Table;
use dar_serve::{ServeOptions, TableConfig};
use futures::TryStreamExt;

use crate::kit::{client, fetch, lines, query, rows, start, write_table};

async fn direct_scan(uri: &str) -> Vec<String> {
    let table = Table::open(uri).await.unwrap();
    let plan = table.scan().build().unwrap();
    let batches: Vec<RecordBatch> = plan.execute().try_collect().await.unwrap();
    lines(&batches)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn statements_return_the_rows_of_a_direct_scan() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = write_table(dir.path(), "t", &[0..50, 50..120]).await;
    let path = writer.files().next().unwrap().path.clone();
    writer
        .delete_rows(&path, &[3, 4], dar_testkit::DvStorage::Inline)
        .await
        .unwrap();
    let uri = dir.path().join("t").display().to_string();
    let running = start(ServeOptions::new().with_table(TableConfig::new("t", &uri))).await;
    let mut c = client(running.address).await;
    let served = rows(&mut c, "SELECT * FROM t").await;
    assert_eq!(served.len(), 118);
    assert_eq!(served, direct_scan(&uri).await);
    // The catalog-qualified name is the same table.
    assert_eq!(rows(&mut c, "SELECT * FROM dar.public.t").await, served);
    assert_eq!(
        rows(&mut c, "SELECT count(*) AS n FROM t WHERE id >= 100").await,
        vec!["20".to_string()]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_shared_table_matches_a_direct_scan() {
    let names = [
        "dat/basic_append/delta",
        "dat/basic_partitioned/delta",
        "dat/multi_partitioned/delta",
        "dat/with_schema_change/delta",
        "kernel/table-with-dv-small",
        "kernel/basic-decimal-table",
        "kernel/basic_partitioned",
        "kernel/partition_cm/name",
        "kernel/v2-checkpoints-json-with-sidecars",
        "kernel/data-reader-timestamp_ntz",
    ];
    let mut options = ServeOptions::new();
    let mut found = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let Some(path) = dar_testdata::table(name) else {
            continue;
        };
        let uri = path.display().to_string();
        options = options.with_table(TableConfig::new(format!("t{i}"), &uri));
        found.push((format!("t{i}"), uri));
    }
    if found.is_empty() {
        assert!(!dar_testdata::required(), "the shared test data is missing");
        eprintln!("skipped: no shared test data (DAR_TESTDATA)");
        return;
    }
    let running = start(options).await;
    let mut c = client(running.address).await;
    for (name, uri) in &found {
        let served = rows(&mut c, &format!("SELECT * FROM {name}")).await;
        assert_eq!(served, direct_scan(uri).await, "table {uri}");
    }
}

fn ids(batches: &[RecordBatch]) -> Vec<i64> {
    batches
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .values()
                .to_vec()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn prepared_statements_bind_parameters() {
    let dir = tempfile::tempdir().unwrap();
    write_table(dir.path(), "t", &[0..100]).await;
    let uri = dir.path().join("t").display().to_string();
    let running = start(ServeOptions::new().with_table(TableConfig::new("t", &uri))).await;
    let mut c = client(running.address).await;
    for sql in [
        "SELECT id FROM t WHERE id >= $1 AND name <> $2 ORDER BY id",
        "SELECT id FROM t WHERE id >= ? AND name <> ? ORDER BY id",
    ] {
        let mut prepared = c.prepare(sql.to_string(), None).await.unwrap();
        let params = prepared.parameter_schema().unwrap().clone();
        assert_eq!(params.fields().len(), 2, "{sql}: {params:?}");
        assert_eq!(prepared.dataset_schema().unwrap().field(0).name(), "id");
        for (from, skip, expected) in [
            (95, "name-000096", vec![95, 97, 98, 99]),
            (98, "nobody", vec![98, 99]),
        ] {
            let binding = RecordBatch::try_from_iter(vec![
                ("$1", std::sync::Arc::new(Int64Array::from(vec![from])) as _),
                (
                    "$2",
                    std::sync::Arc::new(StringArray::from(vec![skip])) as _,
                ),
            ])
            .unwrap();
            prepared.set_parameters(binding).unwrap();
            let info = prepared.execute().await.unwrap();
            assert_eq!(ids(&fetch(&mut c, info).await.unwrap()), expected, "{sql}");
        }
        prepared.close().await.unwrap();
    }
    // One row of parameters at a time, said so.
    let mut prepared = c
        .prepare("SELECT id FROM t WHERE id = $1".into(), None)
        .await
        .unwrap();
    let two_rows = RecordBatch::try_from_iter(vec![(
        "$1",
        std::sync::Arc::new(Int64Array::from(vec![1, 2])) as _,
    )])
    .unwrap();
    prepared.set_parameters(two_rows).unwrap();
    let err = prepared.execute().await.unwrap_err().to_string();
    assert!(err.contains("one row of parameters"), "{err}");
    prepared.close().await.unwrap();
    // A closed statement is gone.
    let mut prepared = c.prepare("SELECT 1".into(), None).await.unwrap();
    let mut again = c.prepare("SELECT 2".into(), None).await.unwrap();
    again.execute().await.unwrap();
    prepared.execute().await.unwrap();
    prepared.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn metadata_commands_describe_the_served_tables() {
    let dir = tempfile::tempdir().unwrap();
    write_table(dir.path(), "a", &[0..3]).await;
    write_table(dir.path(), "b", &[0..3]).await;
    let uri = |n: &str| dir.path().join(n).display().to_string();
    let running = start(
        ServeOptions::new()
            .with_table(TableConfig::new("alpha", uri("a")))
            .with_table(TableConfig::new("beta", uri("b"))),
    )
    .await;
    let mut c = client(running.address).await;
    let info = c.get_catalogs().await.unwrap();
    assert_eq!(lines(&fetch(&mut c, info).await.unwrap()), vec!["dar"]);
    let info = c
        .get_db_schemas(CommandGetDbSchemas {
            catalog: None,
            db_schema_filter_pattern: None,
        })
        .await
        .unwrap();
    assert_eq!(
        lines(&fetch(&mut c, info).await.unwrap()),
        vec!["dar,public"]
    );
    let info = c
        .get_tables(CommandGetTables {
            catalog: None,
            db_schema_filter_pattern: None,
            table_name_filter_pattern: Some("al%".into()),
            table_types: vec![],
            include_schema: true,
        })
        .await
        .unwrap();
    let batches = fetch(&mut c, info).await.unwrap();
    assert_eq!(batches.iter().map(RecordBatch::num_rows).sum::<usize>(), 1);
    let batch = &batches[0];
    let names = batch
        .column_by_name("table_name")
        .unwrap()
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap();
    assert_eq!(names.value(0), "alpha");
    let schema_bytes = batch
        .column_by_name("table_schema")
        .unwrap()
        .as_any()
        .downcast_ref::<arrow_array::BinaryArray>()
        .unwrap()
        .value(0)
        .to_vec();
    let schema = arrow_flight::IpcMessage(schema_bytes.into());
    let schema = arrow_schema::Schema::try_from(schema).unwrap();
    let fields: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(fields, ["id", "name", "value"]);

    let info = c.get_table_types().await.unwrap();
    assert_eq!(lines(&fetch(&mut c, info).await.unwrap()), vec!["TABLE"]);
    let info = c.get_sql_info(vec![]).await.unwrap();
    let batches = fetch(&mut c, info).await.unwrap();
    assert!(batches.iter().map(RecordBatch::num_rows).sum::<usize>() >= 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn table_functions_read_served_tables_only_and_travel_in_time() {
    let dir = tempfile::tempdir().unwrap();
    write_table(dir.path(), "t", &[0..10, 10..30]).await;
    write_table(dir.path(), "other", &[0..5]).await;
    let uri = dir.path().join("t").display().to_string();
    let other = dir.path().join("other").display().to_string();
    let running = start(ServeOptions::new().with_table(TableConfig::new("t", &uri))).await;
    let mut c = client(running.address).await;
    let count = |n: usize| vec![n.to_string()];
    assert_eq!(
        rows(&mut c, "SELECT count(*) AS n FROM delta_scan('t', 1)").await,
        count(10)
    );
    assert_eq!(
        rows(&mut c, "SELECT count(*) AS n FROM delta_scan('t')").await,
        count(30)
    );
    let err = query(&mut c, &format!("SELECT * FROM delta_scan('{other}')"))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("is not a table this server serves"), "{err}");
    assert!(err.contains("--allow-any-table"), "{err}");
    let err = query(
        &mut c,
        &format!("SELECT * FROM table_changes('{other}', 0)"),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("is not a table this server serves"), "{err}");
    drop(running);

    let open = start(
        ServeOptions::new()
            .with_table(TableConfig::new("t", &uri))
            .with_any_table(true),
    )
    .await;
    let mut c = client(open.address).await;
    assert_eq!(
        rows(
            &mut c,
            &format!("SELECT count(*) AS n FROM delta_scan('{other}')")
        )
        .await,
        count(5)
    );
}
