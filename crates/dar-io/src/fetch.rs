//! Ranged reads of one object: every body length checked, planned
//! multi-range reads, and a class tag for the metered store.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::ObjectStore;
use object_store::path::Path;

use crate::class::ObjectClass;
use crate::cost::CostParams;
use crate::error::{Error, Result};
use crate::metered::ranged_get;
use crate::planner::plan_ranges;

/// Fetches `ranges` of the object at `path` as [`plan_ranges`] plans them
/// under `params` (merged over cheap gaps, split over idle lanes), up to
/// `params.max_concurrency` GETs in flight, each tagged `class` for a
/// [`crate::MeteredStore`] below. Returns one buffer per range, in input
/// order; overlapping and empty ranges are allowed. A short or long body is
/// [`Error::Truncated`], never data.
///
/// For deletion-vector files, checkpoint parts or any non-Parquet object
/// whose byte ranges are known up front.
pub async fn fetch_ranges(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    ranges: &[Range<u64>],
    params: &CostParams,
    class: ObjectClass,
) -> Result<Vec<Bytes>> {
    Fetcher::new(Arc::clone(store), path.clone())
        .fetch_planned(ranges, params, class)
        .await
}

/// One object of one store.
#[derive(Clone)]
pub(crate) struct Fetcher {
    pub(crate) store: Arc<dyn ObjectStore>,
    pub(crate) path: Path,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Display, not Debug, of the store: Debug of a cloud client may show
        // credential ids.
        f.debug_struct("Fetcher")
            .field("store", &format_args!("{}", self.store))
            .field("path", &self.path.as_ref())
            .finish()
    }
}

impl Fetcher {
    pub(crate) fn new(store: Arc<dyn ObjectStore>, path: Path) -> Self {
        Self { store, path }
    }

    /// One bounded GET, length-checked. An empty range costs no request.
    pub(crate) async fn fetch(&self, range: Range<u64>, class: ObjectClass) -> Result<Bytes> {
        if range.start >= range.end {
            return Ok(Bytes::new());
        }
        let store_err = |source| Error::Store {
            path: self.path.to_string(),
            source,
        };
        let res = self
            .store
            .get_opts(&self.path, ranged_get(range.clone(), class))
            .await
            .map_err(store_err)?;
        let body = res.bytes().await.map_err(store_err)?;
        let expected = range.end - range.start;
        if body.len() as u64 != expected {
            return Err(Error::Truncated {
                path: self.path.to_string(),
                range,
                expected,
                actual: body.len() as u64,
            });
        }
        Ok(body)
    }

    /// Planned multi-range read (see [`fetch_ranges`]).
    pub(crate) async fn fetch_planned(
        &self,
        ranges: &[Range<u64>],
        params: &CostParams,
        class: ObjectClass,
    ) -> Result<Vec<Bytes>> {
        let plan = plan_ranges(ranges, params).map_err(|e| match e {
            Error::InvalidRange { range, size, .. } => Error::InvalidRange {
                path: self.path.to_string(),
                range,
                size,
            },
            other => other,
        })?;
        let buffers: Vec<Bytes> = futures::stream::iter(plan.fetches.iter().cloned())
            .map(|r| self.fetch(r, class))
            .buffered(params.max_concurrency.max(1))
            .try_collect()
            .await?;
        plan.assemble(&buffers).map_err(|e| match e {
            Error::Truncated {
                range,
                expected,
                actual,
                ..
            } => Error::Truncated {
                path: self.path.to_string(),
                range,
                expected,
                actual,
            },
            other => other,
        })
    }
}

#[cfg(test)]
mod tests {
    use object_store::memory::InMemory;
    use object_store::{ObjectStoreExt, PutPayload};

    use super::*;
    use crate::MeteredStore;

    #[tokio::test]
    async fn dv_ranges_are_planned_tagged_and_exact() {
        let metered = MeteredStore::new(InMemory::new());
        let metrics = metered.metrics().clone();
        let store: Arc<dyn ObjectStore> = Arc::new(metered);
        let path = Path::from("t/deletion_vector_abc.bin");
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 253) as u8).collect();
        store
            .put(&path, PutPayload::from(data.clone()))
            .await
            .unwrap();
        // Three DVs in one file (offsets as in Delta descriptors), one
        // repeated; a serial model merges the two close ones.
        let ranges = [1..41, 50..90, 90_000..90_100, 1..41];
        let params = CostParams::remote()
            .with_max_concurrency(1)
            .with_max_amplification(1.5);
        let got = fetch_ranges(&store, &path, &ranges, &params, ObjectClass::DeletionVector)
            .await
            .unwrap();
        for (r, b) in ranges.iter().zip(&got) {
            assert_eq!(&b[..], &data[r.start as usize..r.end as usize]);
        }
        let s = metrics.snapshot().class(ObjectClass::DeletionVector);
        assert_eq!((s.requests, s.bytes), (2, 89 + 100));

        let beyond = vec![99_990..100_010, 0..1];
        let err = fetch_ranges(&store, &path, &beyond, &params, ObjectClass::Other)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("deletion_vector_abc.bin"), "{err}");
    }
}
