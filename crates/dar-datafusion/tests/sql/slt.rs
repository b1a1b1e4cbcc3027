//! The `.slt` suite under `tests/slt`: a sqllogictest runner over a
//! DataFusion session with dar registered.
//!
//! Every file runs in a fresh session holding `sample` (the repository's
//! sample table), the dar-testkit tables `people` and `orders`, and
//! `people_plain` (`people` without view types or dictionary partition
//! columns). Paths are substituted (`control substitution on`): `$SAMPLE`,
//! `$KIT` (the folder of the testkit tables) and `$TESTDATA` (the shared
//! test tables; files that use it are skipped loudly when it is absent).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_cast::display::{ArrayFormatter, FormatOptions};
use async_trait::async_trait;
use dar_datafusion::{DeltaScanOptions, DeltaTableProvider, register_dar, register_delta_table};
use dar_scan::Table;
use datafusion::error::DataFusionError;
use datafusion::prelude::{SessionConfig, SessionContext};
use sqllogictest::{AsyncDB, DBOutput, DefaultColumnType, Runner};

/// A DataFusion session as a sqllogictest database.
pub struct DarDb {
    ctx: SessionContext,
}

#[async_trait]
impl AsyncDB for DarDb {
    type Error = DataFusionError;
    type ColumnType = DefaultColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<DefaultColumnType>, DataFusionError> {
        let df = self.ctx.sql(sql).await?;
        let columns = df.schema().fields().len();
        let batches = df.collect().await?;
        if columns == 0 {
            return Ok(DBOutput::StatementComplete(0));
        }
        let options = FormatOptions::default().with_null("NULL");
        let mut rows = Vec::new();
        for batch in &batches {
            let formatters = batch
                .columns()
                .iter()
                .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
                .collect::<Result<Vec<_>, _>>()?;
            for row in 0..batch.num_rows() {
                rows.push(
                    formatters
                        .iter()
                        .map(|f| {
                            let s = f.value(row).to_string();
                            if s.is_empty() {
                                "(empty)".to_string()
                            } else {
                                s
                            }
                        })
                        .collect(),
                );
            }
        }
        Ok(DBOutput::Rows {
            types: vec![DefaultColumnType::Any; columns],
            rows,
        })
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &str {
        "dar-datafusion"
    }
}

/// Where the suite's tables are.
#[derive(Debug, Clone)]
pub struct Tables {
    /// The sample table.
    pub sample: PathBuf,
    /// The folder holding the testkit tables.
    pub kit: PathBuf,
    /// The shared test data, when present.
    pub testdata: Option<PathBuf>,
}

/// A session with dar and the suite's tables registered.
pub async fn session(tables: &Tables) -> SessionContext {
    // Two partitions whatever the machine, so plans are the same everywhere.
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
    register_dar(&ctx);
    register_delta_table(&ctx, "sample", open(&tables.sample).await).unwrap();
    let people = open(&tables.kit.join("people")).await;
    register_delta_table(&ctx, "people", people.clone()).unwrap();
    let plain = DeltaScanOptions::new()
        .with_view_types(false)
        .with_dictionary_partitions(false);
    ctx.register_table(
        "people_plain",
        Arc::new(DeltaTableProvider::with_options(people, plain)),
    )
    .unwrap();
    register_delta_table(&ctx, "orders", open(&tables.kit.join("orders")).await).unwrap();
    ctx
}

async fn open(path: &Path) -> Table {
    Table::open(path.to_str().unwrap()).await.unwrap()
}

/// Runs the `.slt` file `path`; the error is the runner's report.
pub async fn run_file(path: &Path, tables: &Tables) -> Result<(), String> {
    let text = std::fs::read_to_string(path).unwrap();
    let testdata = match (&tables.testdata, text.contains("$TESTDATA")) {
        (Some(t), _) => t.display().to_string(),
        (None, true) => {
            eprintln!("SKIPPED: {} needs the shared test data", path.display());
            return Ok(());
        }
        (None, false) => String::new(),
    };
    let t = tables.clone();
    let mut runner = Runner::new(move || {
        let t = t.clone();
        async move {
            Ok::<_, DataFusionError>(DarDb {
                ctx: session(&t).await,
            })
        }
    });
    runner.set_var("SAMPLE".into(), tables.sample.display().to_string());
    runner.set_var("KIT".into(), tables.kit.display().to_string());
    runner.set_var("TESTDATA".into(), testdata);
    runner
        .run_file_async(path)
        .await
        .map_err(|e| e.display(false).to_string())
}
