//! [`DeltaScanCodec`]: dar's scan node across the network.
//!
//! datafusion-distributed ships each stage's plan to its worker as
//! protobuf; custom nodes go through a `PhysicalExtensionCodec`. This one
//! writes a [`DeltaScanExec`] with [`DeltaScanExec::encode`] (the scan spec
//! and the tasks of each partition, never the table, credentials or caches)
//! and reads it back on the worker with the worker's own store for the
//! table ([`WorkerStores`]).

use std::sync::Arc;

use dar_datafusion::DeltaScanExec;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};

use crate::stores::{ScanRecord, WorkerStores};

/// The `PhysicalExtensionCodec` of [`DeltaScanExec`]; register it on the
/// coordinating session and on every worker.
#[derive(Debug, Clone)]
pub struct DeltaScanCodec {
    stores: Arc<WorkerStores>,
}

impl DeltaScanCodec {
    /// A codec that decodes scans with `stores` (the worker's storage
    /// configuration). A coordinator only encodes; any stores will do.
    pub fn new(stores: Arc<WorkerStores>) -> Self {
        Self { stores }
    }

    /// The codec of a coordinating session, which only encodes.
    pub(crate) fn coordinator() -> Self {
        Self::new(Arc::new(WorkerStores::new(
            "the coordinator",
            dar_io::StorageOptions::new(),
        )))
    }
}

impl PhysicalExtensionCodec for DeltaScanCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        _ctx: &TaskContext,
        _proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if !inputs.is_empty() {
            return Err(DataFusionError::Internal(format!(
                "DeltaScanExec is a leaf, but {} children were sent to {}",
                inputs.len(),
                self.stores.name()
            )));
        }
        let exec = DeltaScanExec::decode(buf, |spec| self.stores.runtime(spec.table_uri()))
            .map_err(|e| match e {
                DataFusionError::Execution(m) => {
                    DataFusionError::Execution(format!("{}: {m}", self.stores.name()))
                }
                other => DataFusionError::Context(self.stores.name().to_string(), Box::new(other)),
            })?
            .with_location(self.stores.name());
        let plan = exec.scan_plan();
        self.stores.record(ScanRecord {
            table_uri: plan.context().spec().table_uri().to_string(),
            files: plan.tasks().iter().map(|t| t.log_path.clone()).collect(),
            metrics: plan.metrics().clone(),
        });
        Ok(Arc::new(exec))
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        _proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let Some(exec) = node.downcast_ref::<DeltaScanExec>() else {
            return Err(DataFusionError::Internal(format!(
                "dar's codec encodes DeltaScanExec only, not {}",
                node.name()
            )));
        };
        buf.extend_from_slice(&exec.encode()?);
        Ok(())
    }
}
