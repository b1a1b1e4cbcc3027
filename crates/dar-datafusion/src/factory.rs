//! `CREATE EXTERNAL TABLE t STORED AS DELTA LOCATION 'uri'`.

use std::sync::Arc;

use async_trait::async_trait;
use dar_scan::{Table, TableOptions};
use datafusion::catalog::{Session, TableProvider, TableProviderFactory};
use datafusion::common::{DataFusionError, Result};
use datafusion::logical_expr::CreateExternalTable;

use crate::options::DeltaScanOptions;
use crate::provider::{DeltaTableProvider, scan_error};

/// Makes [`DeltaTableProvider`]s for `STORED AS DELTA`. The schema and
/// partitioning come from the Delta log, so the statement gives neither.
/// `OPTIONS ('version' '3')` or `OPTIONS ('timestamp'
/// '2024-01-31T12:00:00Z')` (RFC 3339, or milliseconds since the epoch)
/// travel in time; any other option is a storage option (added to the
/// factory's own). The options parse as [`TableOptions::from_pairs`] has
/// it, as the `dar` command line and the Python module parse theirs.
#[derive(Debug, Clone, Default)]
pub struct DeltaTableFactory {
    base: TableOptions,
    options: DeltaScanOptions,
}

impl DeltaTableFactory {
    /// A factory whose tables open with `base` (storage options, caches;
    /// the statement's options are added to it) and scan with `options`.
    pub fn new(base: impl Into<TableOptions>, options: DeltaScanOptions) -> Self {
        Self {
            base: base.into(),
            options,
        }
    }
}

fn invalid(name: &str, detail: String) -> DataFusionError {
    DataFusionError::Plan(format!(
        "CREATE EXTERNAL TABLE {name} STORED AS DELTA: {detail}"
    ))
}

#[async_trait]
impl TableProviderFactory for DeltaTableFactory {
    async fn create(
        &self,
        _state: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> Result<Arc<dyn TableProvider>> {
        let name = cmd.name.to_string();
        if !cmd.schema.fields().is_empty() || !cmd.table_partition_cols.is_empty() {
            return Err(invalid(
                &name,
                "the schema and partition columns come from the Delta log; give neither".into(),
            ));
        }
        let location = match cmd.locations.as_slice() {
            [one] => one.clone(),
            other => {
                return Err(invalid(
                    &name,
                    format!("needs exactly one LOCATION, got {}", other.len()),
                ));
            }
        };
        // DataFusion may prefix statement options with `format.`.
        let pairs = cmd
            .options
            .iter()
            .map(|(key, value)| (key.strip_prefix("format.").unwrap_or(key), value));
        let options = self
            .base
            .clone()
            .with_pairs(pairs)
            .map_err(|e| invalid(&name, e.to_string()))?;
        // The opening future is not `Send` (a `TableProviderFactory` future
        // must be): run it on a blocking thread of the current runtime.
        let handle = tokio::runtime::Handle::current();
        let table = tokio::task::spawn_blocking(move || {
            handle.block_on(Table::open_with(&location, options))
        })
        .await
        .map_err(|e| DataFusionError::External(Box::new(e)))?
        .map_err(scan_error)?;
        Ok(Arc::new(DeltaTableProvider::with_options(
            table,
            self.options,
        )))
    }
}
