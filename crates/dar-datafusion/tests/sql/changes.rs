//! `table_changes('uri', start [, end])`: the change data feed of every
//! kernel CDF table in SQL, row for row against `dar-scan` (whose rows its
//! own tests pin exactly), pushdown of filters on the change columns and
//! the table's, projection, and the refusals.

use arrow_array::RecordBatch;
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use dar_scan::ChangeBound;
use datafusion::prelude::SessionContext;

/// Sorted rows as text (columns in order, `_commit_timestamp` left out
/// by the queries).
fn rows(batches: &[RecordBatch]) -> Vec<String> {
    let opts = FormatOptions::default().with_null("NULL");
    let mut out = Vec::new();
    for b in batches {
        let fmts: Vec<ArrayFormatter<'_>> = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &opts).unwrap())
            .collect();
        for r in 0..b.num_rows() {
            let cells: Vec<String> = fmts.iter().map(|f| f.value(r).to_string()).collect();
            out.push(cells.join("|"));
        }
    }
    out.sort();
    out
}

fn context() -> SessionContext {
    let ctx = SessionContext::new();
    dar_datafusion::register_dar(&ctx);
    ctx
}

async fn query(ctx: &SessionContext, sql: &str) -> datafusion::common::Result<Vec<RecordBatch>> {
    ctx.sql(sql).await?.collect().await
}

const RANGES: &[(&str, u64, Option<u64>)] = &[
    ("cdf-table", 0, None),
    ("cdf-table-simple", 0, Some(2)),
    ("cdf-table-partitioned", 0, Some(2)),
    ("cdf-table-non-partitioned", 0, None),
    ("cdf-table-update-ops", 0, Some(2)),
    ("cdf-table-data-change", 0, Some(1)),
    ("cdf-table-delete-unconditional", 0, None),
    ("cdf-table-delete-conditional-all-rows", 0, None),
    ("cdf-table-delete-conditional-two-rows", 0, None),
    ("cdf-table-with-dv", 0, None),
    ("cdf-table-with-cdc-and-dvs", 0, None),
    ("cdf-table-backtick-column-names", 0, None),
    ("cdf-column-mapping-id-mode", 1, None),
    ("cdf-column-mapping-name-mode", 1, None),
    ("cdf-column-mapping-name-mode-3-7", 1, None),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kernel_cdf_table_gives_the_library_rows() {
    let ctx = context();
    for (name, start, end) in RANGES {
        let Some(path) = dar_testdata::table(&format!("kernel/{name}")) else {
            return;
        };
        let uri = path.display();
        let end_arg = end.map(|e| format!(", {e}")).unwrap_or_default();
        let table = dar_scan::Table::open(&uri.to_string()).await.unwrap();
        let plan = table
            .changes(ChangeBound::Version(*start), end.map(ChangeBound::Version))
            .build()
            .await
            .unwrap();
        let columns: Vec<String> = plan
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .filter(|n| n != "_commit_timestamp")
            .map(|n| format!("\"{n}\""))
            .collect();
        let sql = format!(
            "SELECT {} FROM table_changes('{uri}', {start}{end_arg})",
            columns.join(", ")
        );
        let got = query(&ctx, &sql).await.unwrap();
        let want: Vec<RecordBatch> = plan
            .collect()
            .await
            .unwrap()
            .iter()
            .map(|b| {
                let keep: Vec<usize> = (0..b.num_columns())
                    .filter(|i| b.schema().field(*i).name() != "_commit_timestamp")
                    .collect();
                b.project(&keep).unwrap()
            })
            .collect();
        assert!(!want.is_empty(), "{name}");
        assert_eq!(rows(&got), rows(&want), "{sql}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_on_change_columns_are_pushed_down_and_exact() {
    let Some(path) = dar_testdata::table("kernel/cdf-table") else {
        return;
    };
    let ctx = context();
    let uri = path.display();
    let sql = format!(
        "SELECT id, _change_type, _commit_version FROM table_changes('{uri}', 0) \
         WHERE _commit_version = 2 AND _change_type = 'update_postimage'"
    );
    assert_eq!(
        rows(&query(&ctx, &sql).await.unwrap()),
        [
            "5|update_postimage|2",
            "6|update_postimage|2",
            "7|update_postimage|2"
        ]
    );
    // The version conjunct prunes files in the scan, with no FilterExec.
    let plan = query(&ctx, &format!("EXPLAIN {sql}")).await.unwrap();
    let text = arrow_cast::pretty::pretty_format_batches(&plan)
        .unwrap()
        .to_string();
    assert!(text.contains("DeltaScanExec"), "{text}");
    assert!(text.contains("17 pruned"), "{text}");
    assert!(!text.contains("FilterExec"), "{text}");
    // A time range by timestamps, end before start refused.
    let t = "2000-01-01T00:00:00Z";
    let sql = format!("SELECT count(*) FROM table_changes('{uri}', '{t}')");
    let n = query(&ctx, &sql).await.unwrap();
    assert_eq!(rows(&n), ["23"]);
    // The change columns are never null and typed as documented.
    let sql = format!("SELECT * FROM table_changes('{uri}', 1, 1) LIMIT 1");
    let batches = query(&ctx, &sql).await.unwrap();
    let schema = batches[0].schema();
    let types: Vec<String> = schema
        .fields()
        .iter()
        .skip(3)
        .map(|f| f.data_type().to_string())
        .collect();
    assert_eq!(types[1], "Int64");
    assert!(types[2].starts_with("Timestamp(µs"), "{types:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_and_bad_arguments() {
    let (Some(cdf), Some(simple)) = (
        dar_testdata::table("kernel/table-with-cdf"),
        dar_testdata::table("kernel/cdf-table-simple"),
    ) else {
        return;
    };
    let ctx = context();
    let cases = [
        (
            format!("SELECT * FROM table_changes('{}', 0, 2)", cdf.display()),
            "change data feed is not enabled at version 2",
        ),
        (
            format!("SELECT * FROM table_changes('{}', 3, 4)", cdf.display()),
            "column 'id' becomes non-nullable",
        ),
        (
            format!("SELECT * FROM table_changes('{}', 1, 0)", simple.display()),
            "start version 1 is after end version 0",
        ),
        (
            format!("SELECT * FROM table_changes('{}')", simple.display()),
            "takes 2 or 3 arguments, got 1",
        ),
        (
            format!("SELECT * FROM table_changes('{}', 1.5)", simple.display()),
            "the start must be a version",
        ),
        (
            format!(
                "SELECT * FROM table_changes('{}', 'soon')",
                simple.display()
            ),
            "neither RFC 3339",
        ),
    ];
    for (sql, message) in cases {
        let err = match query(&ctx, &sql).await {
            Ok(_) => panic!("{sql} succeeded"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains(message), "{sql}: {err}");
    }
}

fn find_scan(
    plan: &std::sync::Arc<dyn datafusion::physical_plan::ExecutionPlan>,
) -> Option<std::sync::Arc<dyn datafusion::physical_plan::ExecutionPlan>> {
    if plan.name() == "DeltaScanExec" {
        return Some(std::sync::Arc::clone(plan));
    }
    plan.children().into_iter().find_map(find_scan)
}

/// A change feed's `DeltaScanExec` as bytes (what dar-distributed ships to
/// workers): decoded with a store of its own, and split in two, it gives
/// the planner's rows, DV pairs and cdc files included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn encoded_change_scans_run_elsewhere_and_split() {
    use datafusion::physical_plan::collect;
    let Some(path) = dar_testdata::table("kernel/cdf-table-with-cdc-and-dvs") else {
        return;
    };
    let ctx = SessionContext::new_with_config(
        datafusion::prelude::SessionConfig::new().with_target_partitions(3),
    );
    dar_datafusion::register_dar(&ctx);
    let sql = format!(
        "SELECT id, comment, _change_type, _commit_version FROM table_changes('{}', 0)",
        path.display()
    );
    let plan = ctx
        .sql(&sql)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let expected = rows(
        &collect(std::sync::Arc::clone(&plan), ctx.task_ctx())
            .await
            .unwrap(),
    );
    assert_eq!(expected.len(), 43);
    let scan = find_scan(&plan).unwrap();
    let scan = scan
        .downcast_ref::<dar_datafusion::DeltaScanExec>()
        .unwrap();
    let bytes = scan.encode().unwrap();
    let decoded = dar_datafusion::DeltaScanExec::decode(&bytes, |spec| {
        let store =
            dar_io::TableStore::open(spec.table_uri(), dar_io::StorageOptions::new()).unwrap();
        Ok(dar_scan::ScanRuntime::new(store))
    })
    .unwrap();
    let got = collect(
        std::sync::Arc::new(decoded),
        SessionContext::new().task_ctx(),
    )
    .await
    .unwrap();
    assert_eq!(rows(&got), expected);
    let mut parts = Vec::new();
    for part in scan.split(2) {
        parts.extend(
            collect(std::sync::Arc::new(part), ctx.task_ctx())
                .await
                .unwrap(),
        );
    }
    assert_eq!(rows(&parts), expected);
}
