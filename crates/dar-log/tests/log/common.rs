//! Shared helpers: open a local table as an object store.

use std::path::Path as StdPath;
use std::sync::Arc;

use dar_log::{FileIndexMode, Result, Snapshot, SnapshotBuilder};
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::path::Path;

/// A store rooted at the table directory, and the (empty) root path.
pub fn local(dir: &StdPath) -> (Arc<dyn ObjectStore>, Path) {
    let store = LocalFileSystem::new_with_prefix(dir).unwrap();
    (Arc::new(store), Path::from(""))
}

/// Builder for the table in `dir`.
pub fn builder(dir: &StdPath) -> SnapshotBuilder {
    let (store, root) = local(dir);
    Snapshot::builder(store, root).with_file_index(FileIndexMode::Eager)
}

/// Load the latest version of the table in `dir`.
pub async fn load(dir: &StdPath) -> Result<Snapshot> {
    builder(dir).build().await
}
