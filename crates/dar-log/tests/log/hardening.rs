//! Regressions of the hardening issue (issue 10): paths are URIs, covered
//! commits are never read, sidecars live in `_delta_log/_sidecars/`.

use dar_log::{FileLocation, LogError};
use object_store::path::Path;
use serde_json::json;

use crate::writer::{TestLog, add, checkpoint_bytes, metadata, protocol, remove};

/// The object paths of the snapshot's files, sorted.
async fn object_paths(log: &TestLog) -> Vec<String> {
    let s = log.builder().build().await.unwrap();
    let fi = s.file_index().unwrap();
    let mut out: Vec<String> = (0..fi.len())
        .map(|i| fi.object_path(i).into_owned())
        .collect();
    out.sort();
    out
}

/// Item 1: an `add` and a `remove` naming one file in two spellings cancel,
/// whichever spelling each uses (the table root is `file:///t/`).
#[tokio::test]
async fn spellings_of_one_path_cancel_in_replay() {
    let log = TestLog::new();
    log.commit(
        0,
        &[
            protocol(),
            metadata(false),
            add("a.parquet", None),
            add("p%20q.parquet", None),
            add("b.parquet", None),
            add("file:///t/c.parquet", None),
            add("d%2Fx.parquet", None),
            add("keep.parquet", None),
        ],
    )
    .await;
    log.commit(
        1,
        &[
            remove("/t/a.parquet", None),
            remove("p q.parquet", None),
            remove("file:/t/b.parquet", None),
            remove("c.parquet", None),
            remove("./sub/../d%2fx.parquet", None),
        ],
    )
    .await;
    assert_eq!(object_paths(&log).await, ["t/keep.parquet"]);
}

/// Item 1, checkpoint side: a checkpoint's adds are matched against newer
/// removes by their canonical URI too.
#[tokio::test]
async fn checkpoint_adds_cancel_against_other_spellings() {
    let log = TestLog::new();
    let actions = [
        protocol(),
        metadata(false),
        add("file:///t/a.parquet", None),
        add("p%20q.parquet", None),
        add("keep.parquet", None),
    ];
    log.commit(0, &actions).await;
    log.checkpoint(0, &actions).await;
    log.commit(
        1,
        &[remove("a.parquet", None), remove("/t/p q.parquet", None)],
    )
    .await;
    assert_eq!(object_paths(&log).await, ["t/keep.parquet"]);
}

/// Item 3 (log side): a file on another store keeps its origin, never
/// becomes a key of the table's store; a file elsewhere on the table's own
/// store (a shallow clone) resolves to its own key.
#[tokio::test]
async fn files_on_other_stores_keep_their_origin() {
    let log = TestLog::new();
    log.commit(
        0,
        &[
            protocol(),
            metadata(false),
            add("s3://other-bucket/k.parquet", None),
            add("/elsewhere/x.parquet", None),
        ],
    )
    .await;
    let s = log.builder().build().await.unwrap();
    let fi = s.file_index().unwrap();
    let mut rows: Vec<(Option<String>, String)> = (0..fi.len())
        .map(|i| {
            let origin = fi.store_origin(i).map(str::to_string);
            (origin, fi.object_path(i).into_owned())
        })
        .collect();
    rows.sort();
    assert_eq!(
        rows,
        [
            (None, "elsewhere/x.parquet".to_string()),
            (
                Some("s3://other-bucket".to_string()),
                "k.parquet".to_string()
            )
        ]
    );
    assert_eq!(
        s.paths().locate("s3://other-bucket/k.parquet").unwrap(),
        FileLocation::OtherStore {
            origin: "s3://other-bucket".into(),
            path: Path::from("k.parquet")
        }
    );
}

/// Item 2: a checkpoint at version N replaces every commit at or below N,
/// even commit N: garbage there does not stop loading, scanning or time
/// travel to N, and its commitInfo is read leniently on demand.
#[tokio::test]
async fn commits_covered_by_a_checkpoint_are_never_parsed() {
    let log = TestLog::new();
    let actions = [protocol(), metadata(false), add("a.parquet", None)];
    // Version 0: a metaData without schemaString, then a line that is no JSON.
    log.put(
        "_delta_log/00000000000000000000.json",
        "{\"metaData\":{\"id\":\"x\"}}\nnot json at all\n",
    )
    .await;
    log.checkpoint(0, &actions).await;
    log.commit(1, &[add("b.parquet", None)]).await;
    assert_eq!(object_paths(&log).await, ["t/a.parquet", "t/b.parquet"]);
    let v0 = log.builder().with_version(0).build().await.unwrap();
    assert_eq!(v0.file_index().unwrap().len(), 1);
    assert!(v0.commit_info().await.is_none());
    assert!(v0.commit_timestamp_ms().await.is_ok());

    // A covered commit whose commitInfo is readable but whose other lines
    // are not: the info is found, loading still ignores the rest.
    log.put(
        "_delta_log/00000000000000000000.json",
        "{\"commitInfo\":{\"timestamp\":1234}}\n{\"add\":{\"path\":\n",
    )
    .await;
    let v0 = log.builder().with_version(0).build().await.unwrap();
    assert_eq!(v0.commit_info().await.unwrap().timestamp, Some(1234));
}

fn v2_checkpoint(sidecar: &str, size: usize) -> String {
    let lines = [
        protocol(),
        metadata(false),
        json!({"checkpointMetadata": {"version": 0}}),
        json!({"sidecar": {"path": sidecar, "sizeInBytes": size, "modificationTime": 0}}),
    ];
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// Item 4: a sidecar outside `_delta_log/_sidecars/` is an error naming it;
/// one inside (by name or by full URI) is read.
#[tokio::test]
async fn sidecars_must_live_in_the_sidecar_folder() {
    let uuid = "00000000-0000-0000-0000-000000000001";
    for outside in [
        "../../elsewhere.parquet",
        "file:///t/_delta_log/x.parquet",
        "file:///other/_delta_log/_sidecars/s.parquet",
        "s3://bucket/t/_delta_log/_sidecars/s.parquet",
    ] {
        let log = TestLog::new();
        log.commit(0, &[protocol(), metadata(false)]).await;
        log.put(
            &format!("_delta_log/00000000000000000000.checkpoint.{uuid}.json"),
            v2_checkpoint(outside, 10),
        )
        .await;
        let err = log.builder().build().await.unwrap_err();
        assert!(
            matches!(err, LogError::InvalidPath { .. }),
            "{outside}: {err}"
        );
        assert!(err.to_string().contains(outside), "{err}");
        assert!(err.to_string().contains("_sidecars"), "{err}");
    }
    let sidecar = checkpoint_bytes(&[add("a.parquet", None)]);
    for inside in ["s.parquet", "file:///t/_delta_log/_sidecars/s.parquet"] {
        let log = TestLog::new();
        log.commit(0, &[protocol(), metadata(false)]).await;
        log.put(
            &format!("_delta_log/00000000000000000000.checkpoint.{uuid}.json"),
            v2_checkpoint(inside, sidecar.len()),
        )
        .await;
        log.put("_delta_log/_sidecars/s.parquet", sidecar.clone())
            .await;
        assert_eq!(object_paths(&log).await, ["t/a.parquet"], "{inside}");
    }
}

/// Item 12: a corrupted checkpoint says which file and that it is corrupt,
/// not only what the decoder tripped on.
#[tokio::test]
async fn corrupt_checkpoint_names_the_file_and_says_corrupt() {
    let actions = [protocol(), metadata(false), add("a.parquet", None)];
    let good = checkpoint_bytes(&actions);
    let n = good.len();
    let truncated: Vec<u8> = good[..n / 2]
        .iter()
        .chain(&good[n - 8..])
        .copied()
        .collect();
    let mut scrambled = good.clone();
    for b in &mut scrambled[n / 3..n / 3 + 40] {
        *b = 0xAB;
    }
    for bytes in [truncated, scrambled] {
        let log = TestLog::new();
        log.commit(0, &actions).await;
        log.put("_delta_log/00000000000000000000.checkpoint.parquet", bytes)
            .await;
        let err = log.builder().build().await.unwrap_err().to_string();
        assert!(
            err.contains("00000000000000000000.checkpoint.parquet") && err.contains("corrupt"),
            "{err}"
        );
    }
}

/// An `add` and a `remove` of the same logical file (same path, same DV) in
/// one commit leave the file live whatever their order: the remove shadows
/// older commits only. (Found by dar-scan's randomized scan test: deleting
/// an already deleted row rewrites an identical inline DV.)
#[tokio::test]
async fn add_and_remove_of_one_key_in_one_commit_keep_the_file() {
    let dv = json!({"storageType": "i", "pathOrInlineDv": "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", "sizeInBytes": 40, "cardinality": 1});
    for remove_first in [true, false] {
        let log = TestLog::new();
        log.commit(
            0,
            &[
                protocol(),
                metadata(false),
                add("a.parquet", Some(dv.clone())),
            ],
        )
        .await;
        let (a, r) = (
            add("a.parquet", Some(dv.clone())),
            remove("a.parquet", Some(dv.clone())),
        );
        let actions = if remove_first { [r, a] } else { [a, r] };
        log.commit(1, &actions).await;
        assert_eq!(
            object_paths(&log).await,
            ["t/a.parquet"],
            "remove first: {remove_first}"
        );
    }
}

/// A store whose listing of the whole log answers late, so that the
/// listing from the `_last_checkpoint` hint wins the race.
#[derive(Debug)]
struct SlowFullListing<T> {
    inner: T,
}

impl<T: std::fmt::Display> std::fmt::Display for SlowFullListing<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SlowFullListing({})", self.inner)
    }
}

#[async_trait::async_trait]
impl<T: object_store::ObjectStore> object_store::ObjectStore for SlowFullListing<T> {
    async fn put_opts(
        &self,
        location: &Path,
        payload: object_store::PutPayload,
        opts: object_store::PutOptions,
    ) -> object_store::Result<object_store::PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: object_store::PutMultipartOptions,
    ) -> object_store::Result<Box<dyn object_store::MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: object_store::GetOptions,
    ) -> object_store::Result<object_store::GetResult> {
        self.inner.get_opts(location, options).await
    }

    fn delete_stream(
        &self,
        locations: futures::stream::BoxStream<'static, object_store::Result<Path>>,
    ) -> futures::stream::BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(
        &self,
        prefix: Option<&Path>,
    ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::ObjectMeta>> {
        use futures::StreamExt;
        let listing = self.inner.list(prefix);
        futures::stream::once(async move {
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            listing
        })
        .flatten()
        .boxed()
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::ObjectMeta>> {
        self.inner.list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(
        &self,
        prefix: Option<&Path>,
    ) -> object_store::Result<object_store::ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: object_store::CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

/// A version past the end names the table's whole range of versions,
/// whichever listing answered first (it said `1..=1` when the listing from
/// the hint at version 1 won, `0..=1` otherwise).
#[tokio::test]
async fn a_missing_version_names_the_whole_range_however_listings_race() {
    let Some(dir) = dar_testdata::table("kernel/app-txn-checkpoint") else {
        return;
    };
    let inner = object_store::local::LocalFileSystem::new_with_prefix(&dir).unwrap();
    let store = std::sync::Arc::new(SlowFullListing { inner });
    let err = dar_log::Snapshot::builder(store, Path::from(""))
        .with_version(99)
        .build()
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            LogError::VersionNotFound {
                requested: 99,
                earliest: 0,
                latest: 1
            }
        ),
        "{err}"
    );
}
