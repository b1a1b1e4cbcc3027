//! Wide tables through SQL: what a plan does per column is constant, so
//! planning and running `SELECT *` grows with the columns, never with
//! their square (issue 33, item 9). The tests count the work (column
//! expressions planned, passes over the files' statistics), not time; the
//! time is in `benches/benches/sql_wide.rs`.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use dar_scan::Table;
use dar_testkit::TableWriter;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::{ExecutionPlan, StatisticsArgs};
use datafusion::prelude::SessionContext;
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;

use crate::agree::lines;

const ROWS: usize = 20;

/// A table at `dir/t` of `width` long columns `c0..` with statistics on
/// every column, two files of [`ROWS`] rows (`c{j}` of row `r` is
/// `r * width + j`).
async fn wide_table(dir: &Path, width: usize) -> Table {
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir).unwrap());
    let schema = Arc::new(Schema::new(
        (0..width)
            .map(|j| Field::new(format!("c{j}"), DataType::Int64, true))
            .collect::<Vec<_>>(),
    ));
    let mut w = TableWriter::builder(store, object_store::path::Path::from("t"), schema.clone())
        .with_num_indexed_cols(width)
        .create()
        .await
        .unwrap();
    for file in 0..2 {
        let columns: Vec<ArrayRef> = (0..width)
            .map(|j| {
                Arc::new(Int64Array::from_iter_values(
                    (0..ROWS).map(|r| ((file * ROWS + r) * width + j) as i64),
                )) as ArrayRef
            })
            .collect();
        w.append(&RecordBatch::try_new(schema.clone(), columns).unwrap())
            .await
            .unwrap();
    }
    Table::open(dir.join("t").to_str().unwrap()).await.unwrap()
}

/// A session with `table` registered as `t` and dar's table functions.
fn session(table: Table) -> SessionContext {
    let ctx = SessionContext::new();
    dar_datafusion::register_dar(&ctx);
    dar_datafusion::register_delta_table(&ctx, "t", table).unwrap();
    ctx
}

/// Column references in the expressions of every node of `plan`
/// (subqueries included).
fn column_refs(plan: &LogicalPlan) -> usize {
    let mut n = 0;
    plan.apply_with_subqueries(|node| {
        n += node
            .expressions()
            .iter()
            .map(|e| e.column_refs().len())
            .sum::<usize>();
        Ok(TreeNodeRecursion::Continue)
    })
    .unwrap();
    n
}

/// `SELECT *` is planned without an expression per column: DataFusion's
/// planner expands `*` into one and deduplicates the list pairwise
/// (quadratic in the columns), so `dar_datafusion::sql` plans the plain
/// form without that projection. The column expressions a plan holds are
/// the same at 10 and 300 columns (they were 10 and 300 per projection),
/// and the rows are all there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn select_star_plans_no_expression_per_column() {
    let queries = [
        "SELECT * FROM t",
        "SELECT * FROM t WHERE c0 >= 5 LIMIT 3",
        "SELECT * FROM t AS x WHERE x.c1 < 1000 LIMIT 4 OFFSET 1",
        "SELECT * FROM t WHERE c0 IN (SELECT c0 FROM t WHERE c1 > 10)",
        "WITH w AS (SELECT c0, c1 FROM t) SELECT * FROM w",
    ];
    let mut counts = Vec::new();
    for width in [10, 300] {
        let dir = tempfile::tempdir().unwrap();
        let ctx = session(wide_table(dir.path(), width).await);
        let mut at_width = Vec::new();
        for q in queries {
            let df = dar_datafusion::sql(&ctx, q, dar_datafusion::QueryOptions::new())
                .await
                .unwrap();
            at_width.push(column_refs(df.logical_plan()));
            let columns = if q.starts_with("WITH") { 2 } else { width };
            assert_eq!(df.schema().fields().len(), columns, "{q}");
            let batches = df.collect().await.unwrap();
            assert!(batches.iter().all(|b| b.num_columns() == columns), "{q}");
        }
        counts.push(at_width);
        let all = lines(&ctx, "SELECT * FROM t").await.unwrap();
        assert_eq!(all.len(), 2 * ROWS);
    }
    assert_eq!(
        counts[0], counts[1],
        "column expressions at 10 vs 300 columns, per query"
    );
}

/// Statistics for every column of a plan are parsed from the files in one
/// pass, not one pass per column (each of which read every file's whole
/// statistics: columns² work on a table with statistics on every column).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_statistics_parse_every_column_in_one_pass() {
    for width in [10, 200] {
        let dir = tempfile::tempdir().unwrap();
        let table = wide_table(dir.path(), width).await;
        let ctx = session(table.clone());
        let plan =
            dar_datafusion::sql(&ctx, "SELECT * FROM t", dar_datafusion::QueryOptions::new())
                .await
                .unwrap()
                .create_physical_plan()
                .await
                .unwrap();
        // Every column's bounds are exact (no DV, no predicate): the
        // statistics were read, from the right columns.
        let scan = scan_node(&plan);
        let stats = scan
            .statistics_from_inputs(&[], &StatisticsArgs::new().with_partition(None))
            .unwrap();
        assert_eq!(stats.column_statistics.len(), width);
        for j in [0, width / 2, width - 1] {
            let c = &stats.column_statistics[j];
            assert_eq!(
                c.min_value,
                datafusion::common::stats::Precision::Exact((j as i64).into()),
                "c{j}"
            );
            assert_eq!(
                c.max_value,
                datafusion::common::stats::Precision::Exact(
                    (((2 * ROWS - 1) * width + j) as i64).into()
                ),
                "c{j}"
            );
        }
        let index = table.snapshot().file_index().unwrap();
        assert_eq!(index.stats.parsed_columns(), width);
        assert_eq!(index.stats.parse_passes(), 1, "{width} columns");
    }
}

/// The `DeltaScanExec` of `plan`.
fn scan_node(plan: &Arc<dyn ExecutionPlan>) -> Arc<dyn ExecutionPlan> {
    if plan.name() == "DeltaScanExec" {
        return Arc::clone(plan);
    }
    match plan.children().as_slice() {
        [child] => scan_node(child),
        _ => panic!("no DeltaScanExec in {}", plan.name()),
    }
}

/// The plain `SELECT *` form plans to what DataFusion plans for it: the
/// same optimized plan, output schema (qualifiers included) and rows, or
/// the same error; and every other form (joins whose `*` drops `USING`
/// duplicates, ORDER BY by position, DISTINCT, wildcard options, no FROM)
/// is planned as written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn select_star_plans_as_datafusion_does() {
    let dir = tempfile::tempdir().unwrap();
    let table = wide_table(dir.path(), 4).await;
    let uri = table.uri().to_string();
    // One partition: the files are read in order, so `LIMIT` and `OFFSET`
    // without `ORDER BY` keep the same rows both ways.
    let config = datafusion::prelude::SessionConfig::new().with_target_partitions(1);
    let ctx = SessionContext::new_with_config(config);
    dar_datafusion::register_dar(&ctx);
    dar_datafusion::register_delta_table(&ctx, "t", table).unwrap();
    // (query, planned without DataFusion's projection of `*`)
    let queries = [
        ("SELECT * FROM t".to_string(), true),
        ("SELECT * FROM t WHERE c0 > 30".to_string(), true),
        ("SELECT * FROM t LIMIT 2".to_string(), true),
        ("SELECT * FROM t LIMIT 2 OFFSET 1".to_string(), true),
        ("SELECT * FROM t OFFSET 35".to_string(), true),
        ("SELECT * FROM t WHERE c0 > 30 LIMIT 0".to_string(), true),
        ("SELECT * FROM t FETCH FIRST 3 ROWS ONLY".to_string(), false),
        ("SELECT * FROM t AS x WHERE x.c1 < 20".to_string(), true),
        (
            "WITH w AS (SELECT c1, c0 FROM t) SELECT * FROM w WHERE c0 < 50".to_string(),
            true,
        ),
        ("SELECT * FROM (SELECT c1, c0 FROM t) s".to_string(), true),
        (
            "SELECT * FROM t a JOIN t b ON a.c0 = b.c0".to_string(),
            true,
        ),
        ("SELECT * FROM t a JOIN t b USING (c0)".to_string(), false),
        ("SELECT * FROM t a NATURAL JOIN t b".to_string(), false),
        (
            "SELECT * FROM t a LEFT JOIN t b USING (c0, c1)".to_string(),
            false,
        ),
        (
            "SELECT * FROM t a, t b WHERE a.c0 = b.c0 + 4".to_string(),
            true,
        ),
        (
            "SELECT * FROM t WHERE c0 IN (SELECT c0 FROM t WHERE c1 > 10)".to_string(),
            true,
        ),
        (
            "SELECT * FROM t WHERE c0 = (SELECT max(c0) FROM t)".to_string(),
            true,
        ),
        ("SELECT * FROM t ORDER BY 1 DESC LIMIT 2".to_string(), false),
        ("SELECT * FROM t ORDER BY c2".to_string(), false),
        ("SELECT DISTINCT * FROM t".to_string(), false),
        ("SELECT * EXCLUDE (c1) FROM t".to_string(), false),
        ("SELECT * EXCEPT (c1, c2) FROM t".to_string(), false),
        ("SELECT *, c0 AS again FROM t".to_string(), false),
        ("SELECT t.* FROM t".to_string(), false),
        ("SELECT * FROM t GROUP BY c0, c1, c2, c3".to_string(), false),
        ("SELECT * FROM t HAVING c0 > 1".to_string(), false),
        (
            "SELECT * FROM t UNION ALL SELECT * FROM t".to_string(),
            false,
        ),
        (
            "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) v(x, y)".to_string(),
            true,
        ),
        ("SELECT *".to_string(), false),
        ("SELECT * FROM missing".to_string(), false),
        ("SELECT * FROM t WHERE nope > 1".to_string(), false),
        (
            format!("SELECT * FROM delta_scan('{uri}') WHERE c0 < 9"),
            true,
        ),
    ];
    for (q, fast) in &queries {
        let ours = dar_datafusion::sql(&ctx, q, dar_datafusion::QueryOptions::new()).await;
        let theirs = ctx.sql(q).await;
        let (ours, theirs) = match (ours, theirs) {
            (Ok(o), Ok(t)) => (o, t),
            (Err(o), Err(t)) => {
                assert_eq!(o.strip_backtrace(), t.strip_backtrace(), "{q}");
                continue;
            }
            (o, t) => panic!("{q}: dar {:?}, DataFusion {:?}", o.err(), t.err()),
        };
        let without = column_refs(ours.logical_plan()) < column_refs(theirs.logical_plan());
        assert_eq!(without, *fast, "{q}: planned without the projection");
        assert_eq!(ours.schema(), theirs.schema(), "{q}");
        let plan = |df: &datafusion::dataframe::DataFrame| {
            df.clone()
                .into_optimized_plan()
                .unwrap()
                .display_indent_schema()
                .to_string()
        };
        assert_eq!(plan(&ours), plan(&theirs), "{q}");
        assert_eq!(lines(&ctx, q).await, reference_lines(theirs).await, "{q}");
    }
}

/// The rows of a DataFrame DataFusion planned, as [`lines`] formats them.
async fn reference_lines(df: datafusion::dataframe::DataFrame) -> Result<Vec<String>, String> {
    let batches = df.collect().await.map_err(|e| e.to_string())?;
    let options = arrow_cast::display::FormatOptions::default().with_null("NULL");
    let mut out = Vec::new();
    for b in &batches {
        let formatters: Vec<_> = b
            .columns()
            .iter()
            .map(|c| arrow_cast::display::ArrayFormatter::try_new(c.as_ref(), &options).unwrap())
            .collect();
        for row in 0..b.num_rows() {
            let cells: Vec<String> = formatters
                .iter()
                .map(|f| f.value(row).to_string())
                .collect();
            out.push(cells.join("|"));
        }
    }
    out.sort();
    Ok(out)
}
