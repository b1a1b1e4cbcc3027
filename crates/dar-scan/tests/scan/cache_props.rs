//! The disk cache against an uncached reader, under random histories:
//! tables written, recreated at the same place with the same file names
//! and sizes, files rewritten in place, the endpoint changed (two S3
//! servers with one bucket and path), and the cache's own entries damaged
//! (truncated, flipped, swapped, replaced by a link, a FIFO, a device or a
//! sparse file). After every step a cached reader (a new table over the
//! cache folder, as a new process) returns exactly what an uncached one
//! returns, and nothing outside the cache's namespace is ever removed or
//! changed.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use dar_io::testing::{S3Server, files_under};
use dar_io::{RangeCache, TableStore};
use dar_scan::{Table, TableOptions};
use dar_testkit::{Codec, DvStorage, ParquetOptions, TableWriter};
use futures::TryStreamExt;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt};
use proptest::prelude::*;

use crate::common::int64s;

const ROWS: i64 = 2_000;

/// What a step does.
#[derive(Debug, Clone)]
enum Step {
    /// Drop and write the table on `endpoint` anew: ids from `offset`,
    /// the same file names and sizes whatever the offset.
    Recreate { endpoint: usize, offset: i64 },
    /// Rewrite data file `file` of the table on `endpoint` in place with
    /// the same-sized file of another offset.
    Rewrite {
        endpoint: usize,
        file: usize,
        offset: i64,
    },
    /// Damage cache entry `entry` (modulo their count).
    Tamper { entry: usize, how: Damage },
    /// Read the table on `endpoint` with and without the cache.
    Scan { endpoint: usize },
}

#[derive(Debug, Clone, Copy)]
enum Damage {
    Truncate,
    Flip(usize),
    SwapWithNext,
    RenameOverNext,
    LinkToDevZero,
    LinkToCanary,
    Fifo,
    Sparse,
}

fn step() -> impl Strategy<Value = Step> {
    let damage = prop_oneof![
        Just(Damage::Truncate),
        any::<usize>().prop_map(Damage::Flip),
        Just(Damage::SwapWithNext),
        Just(Damage::RenameOverNext),
        Just(Damage::LinkToDevZero),
        Just(Damage::LinkToCanary),
        Just(Damage::Fifo),
        Just(Damage::Sparse),
    ];
    prop_oneof![
        (0..2usize, 0..4i64).prop_map(|(endpoint, o)| Step::Recreate {
            endpoint,
            offset: o * 1_000_000
        }),
        (0..2usize, 0..2usize, 0..4i64).prop_map(|(endpoint, file, o)| Step::Rewrite {
            endpoint,
            file,
            offset: o * 1_000_000 + 7
        }),
        (any::<usize>(), damage).prop_map(|(entry, how)| Step::Tamper { entry, how }),
        (0..2usize).prop_map(|endpoint| Step::Scan { endpoint }),
        (0..2usize).prop_map(|endpoint| Step::Scan { endpoint }),
    ]
}

/// The table's writer options: fixed-width values, no compression, no
/// dictionary, so every offset writes files of the same sizes.
fn writer_options() -> ParquetOptions {
    ParquetOptions::default()
        .with_codec(Codec::Uncompressed)
        .with_dictionary(false)
        .with_page_rows(250)
}

/// Writes the table `t` into `store`: two files of ids from `offset`, a
/// deletion vector in a DV file, a checkpoint.
async fn write_table(store: Arc<dyn ObjectStore>, offset: i64) {
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let mut t = TableWriter::builder(store, ObjectPath::from("t"), schema.clone())
        .with_parquet_options(writer_options())
        .with_deletion_vectors(true)
        .create()
        .await
        .unwrap();
    let mut first = None;
    for f in 0..2 {
        let ids = Int64Array::from_iter_values(offset + f * ROWS..offset + (f + 1) * ROWS);
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(ids)]).unwrap();
        let commit = t.append(&batch).await.unwrap();
        first.get_or_insert(commit.added[0].path.clone());
    }
    t.delete_rows(&first.unwrap(), &[3, 700], DvStorage::File)
        .await
        .unwrap();
    t.checkpoint().await.unwrap();
}

/// The objects under `t/` of `store`, deleted.
async fn drop_table(store: &Arc<dyn ObjectStore>) {
    let objects: Vec<ObjectPath> = store
        .list(Some(&ObjectPath::from("t")))
        .map_ok(|m| m.location)
        .try_collect()
        .await
        .unwrap();
    for o in objects {
        store.delete(&o).await.unwrap();
    }
}

struct World {
    servers: Vec<S3Server>,
    /// Where same-sized replacement files are written first.
    scratch: tempfile::TempDir,
}

impl World {
    async fn start() -> Self {
        let mut servers = Vec::new();
        for _ in 0..2 {
            let s = S3Server::start().await.unwrap();
            s.create_bucket("bkt").await.unwrap();
            servers.push(s);
        }
        Self {
            servers,
            scratch: tempfile::tempdir().unwrap(),
        }
    }

    fn store(&self, endpoint: usize) -> TableStore {
        TableStore::builder("s3://bkt/t")
            .with_env(Vec::new())
            .with_options(self.servers[endpoint].storage_options())
            .build()
            .unwrap()
    }

    /// The bucket's store (root `""`), for the writer.
    fn bucket(&self, endpoint: usize) -> Arc<dyn ObjectStore> {
        let ts = TableStore::builder("s3://bkt")
            .with_env(Vec::new())
            .with_options(self.servers[endpoint].storage_options())
            .build()
            .unwrap();
        Arc::clone(ts.store())
    }

    async fn recreate(&self, endpoint: usize, offset: i64) {
        let store = self.bucket(endpoint);
        drop_table(&store).await;
        write_table(store, offset).await;
    }

    /// Replaces data file `file` on `endpoint` with the file of the same
    /// name written for `offset` (same size), through the S3 API.
    async fn rewrite(&self, endpoint: usize, file: usize, offset: i64) {
        let store = self.bucket(endpoint);
        let mut data: Vec<_> = store
            .list(Some(&ObjectPath::from("t")))
            .try_collect::<Vec<_>>()
            .await
            .unwrap()
            .into_iter()
            .filter(|m| {
                m.location.as_ref().ends_with(".parquet")
                    && !m.location.as_ref().contains("_delta_log")
            })
            .collect();
        if data.is_empty() {
            return;
        }
        data.sort_by(|a, b| a.location.cmp(&b.location));
        let victim = &data[file % data.len()];
        let local: Arc<dyn ObjectStore> = Arc::new(
            object_store::local::LocalFileSystem::new_with_prefix(self.scratch.path()).unwrap(),
        );
        drop_table(&local).await;
        write_table(Arc::clone(&local), offset).await;
        let replacement = local.get(&victim.location).await;
        let Ok(replacement) = replacement else { return };
        let bytes = replacement.bytes().await.unwrap();
        assert_eq!(
            bytes.len() as u64,
            victim.size,
            "the writer must repeat sizes"
        );
        store.put(&victim.location, bytes.into()).await.unwrap();
    }
}

/// What a read of the whole table returned: row count, sum and sum of
/// squares of the ids (a digest that tells any two id sets here apart).
type Digest = (usize, i64, i64);

/// The table on `endpoint` read whole, or the error's kind.
async fn read(world: &World, endpoint: usize, cache: Option<&Path>) -> Result<Digest, String> {
    let options = TableOptions::new().with_data_cache_bytes(0);
    let options = match cache {
        Some(dir) => options.with_cache_dir(dir).with_cache_dir_bytes(96 * 1024),
        None => options,
    };
    let table = match Table::from_store(world.store(endpoint), options).await {
        Ok(t) => t,
        Err(e) => return Err(format!("{:?}", e.kind())),
    };
    let plan = table
        .scan()
        .build()
        .map_err(|e| format!("{:?}", e.kind()))?;
    let batches: Vec<RecordBatch> = plan
        .execute()
        .try_collect()
        .await
        .map_err(|e| format!("{:?}", e.kind()))?;
    let ids = int64s(&batches, 0);
    table.store().range_cache().flush().await;
    Ok((
        ids.len(),
        ids.iter().sum(),
        ids.iter()
            .map(|i| i.wrapping_mul(*i))
            .fold(0, i64::wrapping_add),
    ))
}

/// Cache entries: files in the namespace starting with dar's magic.
fn entries(cache: &Path) -> Vec<PathBuf> {
    files_under(&cache.join(RangeCache::NAMESPACE))
        .into_iter()
        .filter(|p| {
            p.symlink_metadata().is_ok_and(|m| m.is_file())
                && std::fs::read(p).is_ok_and(|b| b.starts_with(b"DARCACHE"))
        })
        .collect()
}

fn tamper(cache: &Path, outside: &Path, entry: usize, how: Damage) {
    let all = entries(cache);
    if all.is_empty() {
        return;
    }
    let file = &all[entry % all.len()];
    let next = &all[(entry + 1) % all.len()];
    match how {
        Damage::Truncate => {
            let len = file.metadata().unwrap().len();
            std::fs::OpenOptions::new()
                .write(true)
                .open(file)
                .unwrap()
                .set_len(len / 2)
                .unwrap();
        }
        Damage::Flip(at) => {
            let mut b = std::fs::read(file).unwrap();
            let i = at % b.len();
            b[i] ^= 0x5a;
            std::fs::write(file, b).unwrap();
        }
        Damage::SwapWithNext => {
            let (a, b) = (std::fs::read(file).unwrap(), std::fs::read(next).unwrap());
            std::fs::write(file, b).unwrap();
            std::fs::write(next, a).unwrap();
        }
        Damage::RenameOverNext => {
            if file != next {
                std::fs::rename(file, next).unwrap();
            }
        }
        Damage::LinkToDevZero | Damage::LinkToCanary | Damage::Fifo | Damage::Sparse => {
            std::fs::remove_file(file).unwrap();
            match how {
                Damage::LinkToDevZero => std::os::unix::fs::symlink("/dev/zero", file).unwrap(),
                Damage::LinkToCanary => {
                    std::os::unix::fs::symlink(outside.join("canary"), file).unwrap();
                }
                Damage::Fifo => assert!(
                    std::process::Command::new("mkfifo")
                        .arg(file)
                        .status()
                        .unwrap()
                        .success()
                ),
                _ => std::fs::File::create(file)
                    .unwrap()
                    .set_len(1 << 36)
                    .unwrap(),
            }
        }
    }
}

/// The user's files around the cache: beside the namespace, and outside it
/// behind a link planted in it.
fn plant(cache: &Path, outside: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    std::fs::write(cache.join("notes.txt"), b"the user's notes").unwrap();
    std::fs::write(outside.join("canary"), b"DARCACHE, but not dar's").unwrap();
    std::fs::write(
        outside.join("0000000000000000-0000000000000010-0000000000000000"),
        b"x",
    )
    .unwrap();
    vec![
        (cache.join("notes.txt"), b"the user's notes".to_vec()),
        (outside.join("canary"), b"DARCACHE, but not dar's".to_vec()),
        (
            outside.join("0000000000000000-0000000000000010-0000000000000000"),
            b"x".to_vec(),
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn a_cached_reader_returns_what_an_uncached_one_does(
        steps in proptest::collection::vec(step(), 1..10),
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let world = World::start().await;
            world.recreate(0, 0).await;
            world.recreate(1, 0).await;
            let cache = tempfile::tempdir().unwrap();
            let outside = tempfile::tempdir().unwrap();
            let kept = plant(cache.path(), outside.path());
            // The namespace exists after a first read; then a linked folder
            // is planted in it too.
            let first = read(&world, 0, Some(cache.path())).await;
            prop_assert_eq!(&first, &read(&world, 0, None).await);
            // Where an object folder's fan-out folder would be (one of
            // dar's two-hex names not taken yet).
            let namespace = cache.path().join(RangeCache::NAMESPACE);
            let fan = (0..=255u8)
                .map(|b| namespace.join(format!("{b:02x}")))
                .find(|p| p.symlink_metadata().is_err())
                .unwrap();
            std::os::unix::fs::symlink(outside.path(), fan).unwrap();
            for step in steps.iter().chain([&Step::Scan { endpoint: 0 }, &Step::Scan { endpoint: 1 }]) {
                match step {
                    Step::Recreate { endpoint, offset } => world.recreate(*endpoint, *offset).await,
                    Step::Rewrite { endpoint, file, offset } => {
                        world.rewrite(*endpoint, *file, *offset).await;
                    }
                    Step::Tamper { entry, how } => tamper(cache.path(), outside.path(), *entry, *how),
                    Step::Scan { endpoint } => {
                        let uncached = read(&world, *endpoint, None).await;
                        let cached = read(&world, *endpoint, Some(cache.path())).await;
                        prop_assert_eq!(cached, uncached, "after {:?}", steps);
                    }
                }
                for (path, bytes) in &kept {
                    prop_assert_eq!(&std::fs::read(path).unwrap(), bytes, "{:?} changed", path);
                }
            }
            Ok(())
        })?;
    }
}
