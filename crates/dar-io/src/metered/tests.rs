use futures::TryStreamExt;
use object_store::memory::InMemory;
use object_store::{ObjectStoreExt, PutPayload};

use super::*;

async fn fixture() -> (MeteredStore<InMemory>, Vec<Path>) {
    let inner = InMemory::new();
    let paths: Vec<Path> = [
        "t/_delta_log/00000000000000000000.json",
        "t/_delta_log/00000000000000000001.checkpoint.parquet",
        "t/part-0.parquet",
        "t/deletion_vector_1.bin",
        "t/other.txt",
    ]
    .into_iter()
    .map(Path::from)
    .collect();
    for (i, p) in paths.iter().enumerate() {
        inner
            .put(p, PutPayload::from(vec![i as u8; 1000 * (i + 1)]))
            .await
            .unwrap();
    }
    (MeteredStore::new(inner), paths)
}

#[tokio::test]
async fn known_access_pattern_gives_exact_counts() {
    let (store, p) = fixture().await;
    let before = store.metrics().snapshot();
    assert_eq!(before.requests(), 0);

    // log: one whole GET (1000 B) + one HEAD.
    store.get(&p[0]).await.unwrap().bytes().await.unwrap();
    store.head(&p[0]).await.unwrap();
    // checkpoint: a range of 100 B.
    store.get_range(&p[1], 0..100).await.unwrap();
    // data file: two page ranges and one footer range tagged by the reader.
    store.get_range(&p[2], 0..10).await.unwrap();
    store.get_range(&p[2], 100..300).await.unwrap();
    store
        .get_opts(&p[2], ranged_get(2900..3000, ObjectClass::Footer))
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    // dv: 40 B at an offset.
    store.get_range(&p[3], 1..41).await.unwrap();
    // other: missing object is an error.
    assert!(store.get(&Path::from("t/missing.txt")).await.is_err());
    // listing and a write.
    let _: Vec<_> = store
        .list(Some(&Path::from("t")))
        .try_collect()
        .await
        .unwrap();
    store
        .put(&Path::from("t/new.txt"), PutPayload::from_static(b"x"))
        .await
        .unwrap();

    let s = store.metrics().snapshot();
    let c = |c| s.class(c);
    // (requests, bytes) of one class.
    let rb = |class| (c(class).requests, c(class).bytes);
    assert_eq!(rb(ObjectClass::Log), (2, 1000));
    assert_eq!(rb(ObjectClass::Checkpoint), (1, 100));
    assert_eq!(rb(ObjectClass::PageData), (2, 210));
    assert_eq!(rb(ObjectClass::Footer), (1, 100));
    assert_eq!(rb(ObjectClass::DeletionVector), (1, 40));
    assert_eq!(
        (c(ObjectClass::Other).requests, c(ObjectClass::Other).errors),
        (1, 1)
    );
    assert_eq!(s.requests(), 8);
    assert_eq!(s.bytes(), 1450);
    assert_eq!((s.lists, s.writes), (1, 1));
    assert!(c(ObjectClass::Log).latency_max >= c(ObjectClass::Log).latency_mean());

    // `since` subtracts.
    store.get_range(&p[2], 0..5).await.unwrap();
    let d = store.metrics().snapshot().since(&s);
    assert_eq!((d.requests(), d.bytes()), (1, 5));
    assert!(format!("{d}").contains("page_data:1req/5B"), "{d}");
}

#[tokio::test]
async fn early_dropped_body_counts_only_what_was_read() {
    let (store, p) = fixture().await;
    let r = store.get(&p[4]).await.unwrap();
    drop(r);
    let s = store.metrics().snapshot();
    assert_eq!(s.class(ObjectClass::Other).requests, 1);
    assert_eq!(s.class(ObjectClass::Other).bytes, 0);
}

#[tokio::test]
async fn feeds_the_cost_model_waits_of_gets_and_no_heads() {
    let (store, p) = fixture().await;
    let cost = Arc::new(CostModel::new(crate::CostParams::remote()));
    let store = store.with_cost_model(Arc::clone(&cost));
    store.get_range(&p[2], 0..10).await.unwrap();
    store.head(&p[2]).await.unwrap();
    assert_eq!(cost.sample_counts(), (1, 0));
    // A whole-object GET teaches its wait when its headers come, before
    // (and whether or not) its body is read.
    let whole = store.get(&p[2]).await.unwrap();
    assert_eq!(cost.sample_counts(), (2, 0));
    drop(whole);
    assert_eq!(cost.sample_counts(), (2, 0));
}
