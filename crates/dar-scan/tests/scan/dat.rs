//! DAT cases: every version against `expected/vN` and `expected/latest`,
//! compared order-independently.

use std::path::Path;

use super::common::*;

async fn check_version(case: &Path, version: Option<u64>, expected_dir: &str) {
    let table_dir = case.join("delta");
    let table = match version {
        Some(v) => open_version(&table_dir, v).await,
        None => open(&table_dir).await,
    };
    let plan = table.scan().build().unwrap();
    let got = collect(&plan).await;
    let target: Vec<arrow_schema::Field> = table
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    let expected: Vec<_> = read_parquet(
        &case
            .join("expected")
            .join(expected_dir)
            .join("table_content.parquet"),
    )
    .iter()
    .map(|b| cast_like(b, &target))
    .collect();
    let got_rows = rows(&got);
    let expected_rows = rows(&expected);
    assert_eq!(
        got_rows,
        expected_rows,
        "{} at {expected_dir}: rows differ",
        case.display()
    );
    assert_eq!(
        num_rows(&got),
        plan.metrics().snapshot().rows_output as usize
    );
}

async fn check_case(name: &str) {
    let Some(case) = table_path(&format!("dat/{name}")) else {
        return;
    };
    let mut versions: Vec<u64> = std::fs::read_dir(case.join("expected"))
        .unwrap()
        .filter_map(|e| {
            e.unwrap()
                .file_name()
                .to_str()?
                .strip_prefix('v')?
                .parse()
                .ok()
        })
        .collect();
    versions.sort_unstable();
    assert!(!versions.is_empty());
    for v in versions {
        check_version(&case, Some(v), &format!("v{v}")).await;
    }
    check_version(&case, None, "latest").await;
}

#[tokio::test]
async fn basic_append() {
    check_case("basic_append").await;
}

#[tokio::test]
async fn basic_partitioned() {
    check_case("basic_partitioned").await;
}

#[tokio::test]
async fn multi_partitioned() {
    check_case("multi_partitioned").await;
}

#[tokio::test]
async fn with_schema_change() {
    check_case("with_schema_change").await;
}
