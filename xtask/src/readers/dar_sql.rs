//! The `dar-sql` reader in session mode: dar's DataFusion provider,
//! registered once in one `SessionContext` (not timed), the query run
//! twice on it, as an application that serves SQL over an opened table
//! does. (Outside sessions `dar-sql` is the `dar sql` process.)

use std::sync::Arc;

use dar_datafusion::DeltaTableProvider;
use dar_scan::TableOptions;
use datafusion::prelude::SessionContext;

use super::dar::{drain, run_twice};
use super::{ReadSpec, RunnerResult, runtime, storage_options};

/// The SQL text of `spec` over the table registered as `t`, or over
/// `table_changes(...)` for a change feed; whether the table must be
/// registered as `t` (not for `table_changes`).
pub(super) fn sql_text(spec: &ReadSpec) -> (String, bool) {
    let cols: Vec<String> = spec
        .columns
        .iter()
        .map(|c| format!("\"{}\"", c.replace('"', "\"\"")))
        .collect();
    let source = match spec.changes_from {
        None => "t".to_string(),
        Some(from) => format!("table_changes('{}', {from})", spec.uri.replace('\'', "''")),
    };
    let mut sql = format!("SELECT {} FROM {source}", cols.join(", "));
    if let Some(f) = &spec.filter {
        sql.push_str(&format!(" WHERE {f}"));
    }
    if let Some(l) = spec.limit {
        sql.push_str(&format!(" LIMIT {l}"));
    }
    (sql, spec.changes_from.is_none())
}

/// `xtask read dar-sql SPEC` (session mode only).
pub fn read_dar_sql(spec: &ReadSpec) -> Result<RunnerResult, String> {
    if !spec.session {
        return Err("dar-sql runs in-process only in session mode (else `dar sql`)".into());
    }
    let (sql, register) = sql_text(spec);
    if !register {
        return Err("dar-sql sessions read tables, not change feeds".into());
    }
    runtime()?.block_on(async {
        let options = TableOptions::new().with_storage_options(storage_options(spec));
        let provider = DeltaTableProvider::open(&spec.uri, options)
            .await
            .map_err(|e| e.to_string())?;
        let ctx = SessionContext::new();
        ctx.register_table("t", Arc::new(provider))
            .map_err(|e| e.to_string())?;
        run_twice(spec.verify, async |out| {
            let frame = ctx.sql(&sql).await.map_err(|e| e.to_string())?;
            let stream = frame.execute_stream().await.map_err(|e| e.to_string())?;
            drain(stream, out).await
        })
        .await
    })
}
