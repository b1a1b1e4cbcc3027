//! [`CheckpointIo`]: how checkpoint and sidecar Parquet is fetched, through
//! dar-io's [`ParquetReader`] like every other Parquet file: its range
//! planner, body-length checks, footer cache and metering (every request
//! tagged [`ObjectClass::Checkpoint`]).

use std::sync::{Arc, OnceLock};

use dar_io::{CostModel, MetadataCache, ObjectClass, ParquetReader};
use object_store::ObjectStore;
use object_store::path::Path;

/// Checkpoint files up to this size are read with a single request and
/// decoded from memory: a footer request plus column-chunk requests cost
/// more round trips than the few extra bytes.
pub const WHOLE_FILE_LIMIT: u64 = 4 * 1024 * 1024;

/// The footer cache and cost model checkpoint reads share. Clones share the
/// cache, so loads of one table through one [`crate::SnapshotBuilder`] (and
/// its clones) parse each checkpoint footer once; hand it a table's
/// [`dar_io::TableStore::metadata_cache`] to share that table's.
#[derive(Debug, Clone, Default)]
pub struct CheckpointIo {
    /// Made at the first checkpoint read (a log without checkpoints needs
    /// none), and shared by clones from then on.
    cache: Arc<OnceLock<MetadataCache>>,
    cost: Option<Arc<CostModel>>,
}

impl CheckpointIo {
    /// A fresh 64 MiB footer cache and dar-io's remote cost defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Shares `cache` for checkpoint footers.
    pub fn with_metadata_cache(mut self, cache: MetadataCache) -> Self {
        self.cache = Arc::new(OnceLock::from(cache));
        self
    }

    /// Plans range reads of large checkpoints with `cost` (for example the
    /// table store's, which learns from its requests).
    pub fn with_cost_model(mut self, cost: Arc<CostModel>) -> Self {
        self.cost = Some(cost);
        self
    }

    /// The footer cache.
    pub fn metadata_cache(&self) -> &MetadataCache {
        self.cache.get_or_init(MetadataCache::default)
    }

    /// A reader of the checkpoint part or sidecar at `path` of `size` bytes.
    pub(crate) fn reader(
        &self,
        store: &Arc<dyn ObjectStore>,
        path: &Path,
        size: u64,
    ) -> ParquetReader {
        let reader = ParquetReader::new(Arc::clone(store), path.clone())
            .with_size(Some(size))
            .with_cache(Some(self.metadata_cache().clone()))
            .with_object_class(ObjectClass::Checkpoint)
            .with_whole_object_threshold(WHOLE_FILE_LIMIT);
        match &self.cost {
            Some(cost) => reader.with_cost_model(Arc::clone(cost)),
            None => reader,
        }
    }
}
