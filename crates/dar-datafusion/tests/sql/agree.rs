//! Pushed down or not, a query has the same rows: the same SQL over a
//! Delta table (filters handed to dar, `Exact` ones dropped from the plan)
//! and over a `MemTable` holding the table's rows (DataFusion filters them
//! itself), compared as sorted text lines.
//!
//! DataFusion is itself not SQL's order everywhere: it compares `-0.0`
//! and `0.0` equal in `=` and `<` on plain float arrays, but not in
//! dictionaries or in `IN` lists of more than three floats (bits). The
//! reference therefore holds partition columns plain, and tests compare
//! long float lists with their `OR` form.

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::{DataType, Field, Schema};
use datafusion::datasource::MemTable;
use datafusion::physical_plan::displayable;
use datafusion::prelude::SessionContext;

/// A session with `name` (the Delta table at `uri`) and `name_mem` (its
/// rows in memory, nothing pushed down). Queries run through
/// `dar_datafusion::sql`, as `dar sql` runs them.
pub async fn contexts(uri: &str, name: &str) -> SessionContext {
    let ctx = SessionContext::new();
    let table = dar_scan::Table::open(uri).await.unwrap();
    dar_datafusion::register_delta_table(&ctx, name, table).unwrap();
    let all = ctx
        .sql(&format!("SELECT * FROM {name}"))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    // The reference holds partition columns plain, not as dictionaries:
    // DataFusion's comparisons put -0.0 and 0.0 together for plain float
    // arrays only.
    let schema = ctx.table_provider(name).await.unwrap().schema();
    let plain = Arc::new(Schema::new(
        schema
            .fields()
            .iter()
            .map(|f| match f.data_type() {
                DataType::Dictionary(_, v) => f.as_ref().clone().with_data_type(v.as_ref().clone()),
                _ => f.as_ref().clone(),
            })
            .collect::<Vec<Field>>(),
    ));
    let all: Vec<RecordBatch> = all
        .iter()
        .map(|b| {
            let columns = b
                .columns()
                .iter()
                .zip(plain.fields())
                .map(|(c, f)| arrow_cast::cast(c, f.data_type()).unwrap())
                .collect();
            RecordBatch::try_new(plain.clone(), columns).unwrap()
        })
        .collect();
    let mem = MemTable::try_new(plain, vec![all]).unwrap();
    ctx.register_table(format!("{name}_mem"), Arc::new(mem))
        .unwrap();
    ctx
}

/// The rows of `sql` as sorted text lines (or the error, as text).
pub async fn lines(ctx: &SessionContext, sql: &str) -> Result<Vec<String>, String> {
    let df = dar_datafusion::sql(ctx, sql, dar_datafusion::QueryOptions::new())
        .await
        .map_err(|e| e.to_string())?;
    let batches: Vec<RecordBatch> = df.collect().await.map_err(|e| e.to_string())?;
    let options = FormatOptions::default().with_null("NULL");
    let mut out = Vec::new();
    for b in &batches {
        let formatters: Vec<ArrayFormatter> = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options).unwrap())
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

/// The physical plan of `sql`, as text.
pub async fn plan(ctx: &SessionContext, sql: &str) -> String {
    let plan = dar_datafusion::sql(ctx, sql, dar_datafusion::QueryOptions::new())
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    displayable(plan.as_ref()).indent(true).to_string()
}

/// `SELECT {select} FROM {table} WHERE {filter}` over the Delta table and
/// over its rows in memory: the same rows (or an error both ways). Returns the
/// Delta table's rows.
pub async fn same_rows(
    ctx: &SessionContext,
    table: &str,
    select: &str,
    filter: &str,
) -> Vec<String> {
    let q = |t: &str| format!("SELECT {select} FROM {t} WHERE {filter}");
    let delta = lines(ctx, &q(table)).await;
    let mem = lines(ctx, &q(&format!("{table}_mem"))).await;
    match (&delta, &mem) {
        (Ok(d), Ok(m)) => assert_eq!(d, m, "WHERE {filter}: pushed down (left) vs not"),
        // DataFusion's own errors (a cast it chose that overflows) happen
        // either way (which row overflows first may differ).
        (Err(_), Err(_)) => {}
        _ => panic!("WHERE {filter}: pushed down {delta:?}, not pushed {mem:?}"),
    }
    delta.unwrap_or_default()
}
