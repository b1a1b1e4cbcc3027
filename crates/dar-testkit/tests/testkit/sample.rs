//! The committed sample table (`examples/data/sample`) is exactly what
//! `cargo run -p dar-testkit -- sample examples/data/sample` writes.

use dar_testkit::sample::write_sample;
use object_store::path::Path;

use crate::*;

#[tokio::test]
async fn committed_sample_is_up_to_date() {
    let dir = dar_testdata::workspace_root().join("examples/data/sample");
    let store = memory();
    write_sample(store.clone(), Path::from("s")).await.unwrap();
    let written = snapshot_store(&store, &Path::from("s")).await;
    let mut on_disk = Vec::new();
    let mut pending = vec![dir.clone()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let relative = path
                    .strip_prefix(&dir)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .replace('\\', "/");
                on_disk.push((
                    format!("s/{relative}"),
                    Bytes::from(std::fs::read(&path).unwrap()),
                ));
            }
        }
    }
    on_disk.sort();
    let names = |files: &[(String, Bytes)]| files.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    assert_eq!(
        names(&on_disk),
        names(&written),
        "regenerate with: cargo run -p dar-testkit -- sample examples/data/sample"
    );
    assert!(
        on_disk == written,
        "sample bytes differ; regenerate with: cargo run -p dar-testkit -- sample examples/data/sample"
    );
    let total: usize = on_disk.iter().map(|f| f.1.len()).sum();
    assert!(total < 200_000, "the sample stays tiny: {total} bytes");
}
