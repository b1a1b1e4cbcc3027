//! [`DeltaScanExec`] as bytes, for a process that runs it elsewhere (a
//! datafusion-distributed worker, through `dar-distributed`'s codec).
//!
//! The bytes hold the scan's [`ScanSpec`], each partition's
//! [`ScanTask`]s, the schema DataFusion was promised and what `EXPLAIN`
//! shows. Never the table, the store, credentials or caches: the receiver
//! pairs the spec with its own [`ScanRuntime`] (its store for the table's
//! URI, opened with its own storage configuration).
//!
//! ```text
//! { "format": N, "producer": "dar x.y.z",    checked first (ScanSpec::check_format)
//!   "spec": { ... },                          ScanSpec
//!   "schema": { ... },                        DataFusion's output schema
//!   "partitions": [[task, ...], ...],         ScanTasks, one list per partition
//!   "description": { ... } }                  uri, version, predicate text, limit
//! ```

use std::sync::Arc;

use arrow_schema::Schema;
use dar_scan::{ScanContext, ScanPlan, ScanRuntime, ScanSpec, ScanTask};
use datafusion::common::{DataFusionError, Result};
use datafusion::physical_plan::ExecutionPlan;
use serde::{Deserialize, Serialize};

use crate::exec::{DeltaScanExec, ScanDescription};
use crate::provider::scan_error;

#[derive(Serialize, Deserialize)]
struct EncodedScan {
    format: u32,
    producer: String,
    spec: ScanSpec,
    schema: Schema,
    partitions: Vec<Vec<ScanTask>>,
    description: ScanDescription,
}

fn encoding_error(what: &str, e: serde_json::Error) -> DataFusionError {
    DataFusionError::Execution(format!("cannot {what} a Delta scan: {e}"))
}

impl DeltaScanExec {
    /// The scan as bytes for another process (see the module docs): spec,
    /// tasks per partition and output schema, and nothing of this process's
    /// store or credentials.
    pub fn encode(&self) -> Result<Vec<u8>> {
        let encoded = EncodedScan {
            format: ScanSpec::FORMAT,
            producer: format!("dar {}", env!("CARGO_PKG_VERSION")),
            spec: self.scan_plan().context().spec().clone(),
            schema: self.schema().as_ref().clone(),
            partitions: self.file_groups().to_vec(),
            description: self.description().clone(),
        };
        serde_json::to_vec(&encoded).map_err(|e| encoding_error("encode", e))
    }

    /// A scan from [`DeltaScanExec::encode`]'s bytes; `runtime` gives this
    /// process's store and caches for the spec's table. Bytes from another
    /// dar version are refused with an error naming both versions.
    /// Statistics are unknown (they served planning, which is done).
    pub fn decode(
        bytes: &[u8],
        runtime: impl FnOnce(&ScanSpec) -> Result<ScanRuntime>,
    ) -> Result<Self> {
        ScanSpec::check_format(bytes).map_err(scan_error)?;
        let encoded: EncodedScan =
            serde_json::from_slice(bytes).map_err(|e| encoding_error("decode", e))?;
        let runtime = runtime(&encoded.spec)?;
        let context = ScanContext::new(encoded.spec, runtime).map_err(scan_error)?;
        let tasks: Vec<ScanTask> = encoded.partitions.iter().flatten().cloned().collect();
        Ok(Self::from_groups(
            ScanPlan::new(context, tasks),
            encoded.partitions,
            Arc::new(encoded.schema),
            encoded.description,
        ))
    }
}
