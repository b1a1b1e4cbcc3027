#![allow(
    clippy::single_range_in_vec_init,
    reason = "one byte range per read is what these tests read"
)]

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use super::*;
use crate::identity::{ObjectVersion, StoreId};
use crate::testing::files_under;

fn key(store: &str, size: u64) -> ObjectId {
    ObjectId::new(StoreId::new(store), "t/a.parquet")
        .with_size(Some(size))
        .with_version(Some(ObjectVersion::Modified(7)))
}

fn data(len: usize, salt: u8) -> Bytes {
    Bytes::from(
        (0..len)
            .map(|i| (i % 251) as u8 ^ salt)
            .collect::<Vec<u8>>(),
    )
}

fn private_dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn entries(root: &Path) -> Vec<PathBuf> {
    files_under(&root.join(NAMESPACE))
        .into_iter()
        .filter(|p| EntryName::parse(p.file_name().unwrap().to_str().unwrap()).is_some())
        .collect()
}

/// Bytes of the entries under `root`.
fn held_bytes(root: &Path) -> u64 {
    entries(root)
        .iter()
        .map(|p| p.metadata().unwrap().len())
        .sum()
}

fn write(tier: &DiskTier, key: &ObjectId, start: u64, bytes: &Bytes, tag: &str) {
    tier.insert(key, start, bytes.clone(), tag);
    tier.flush();
}

fn get(tier: &DiskTier, key: &ObjectId, tag: &str, range: Range<u64>) -> DiskRead {
    let holdings = tier.holdings(key);
    tier.read(key, tag, &holdings, &[range]).pop().unwrap()
}

#[test]
fn an_entry_is_served_only_to_its_identity_and_tag() {
    let dir = private_dir();
    let tier = DiskTier::open(dir.path(), None).unwrap();
    let k = key("s3 http://127.0.0.1:1 b", 100_000);
    let bytes = data(100_000, 1);
    write(&tier, &k, 0, &bytes, "etag:one");
    let DiskRead::Hit(b) = get(&tier, &k, "etag:one", 70_000..70_100) else {
        panic!("expected a hit");
    };
    assert_eq!(b, bytes.slice(70_000..70_100));
    // Another tag (the object was rewritten), another endpoint, another
    // size, another log version: all misses, and the entry stays.
    assert!(matches!(get(&tier, &k, "etag:two", 0..10), DiskRead::Miss));
    for other in [
        key("s3 http://127.0.0.1:2 b", 100_000),
        key("s3 http://127.0.0.1:1 b", 100_001),
        k.clone().with_version(Some(ObjectVersion::Modified(8))),
    ] {
        assert!(matches!(
            get(&tier, &other, "etag:one", 0..10),
            DiskRead::Miss
        ));
    }
    assert_eq!(entries(dir.path()).len(), 1);
    // Both versions of the object are kept side by side.
    write(&tier, &k, 0, &data(100_000, 2), "etag:two");
    let DiskRead::Hit(b) = get(&tier, &k, "etag:two", 0..10) else {
        panic!("expected a hit");
    };
    assert_eq!(b, data(100_000, 2).slice(0..10));
    assert_eq!(entries(dir.path()).len(), 2);
}

#[test]
fn a_renamed_or_damaged_entry_is_never_served() {
    let dir = private_dir();
    let tier = DiskTier::open(dir.path(), None).unwrap();
    let k = key("file", 300_000);
    write(&tier, &k, 0, &data(100_000, 1), "etag:a");
    write(&tier, &k, 100_000, &data(100_000, 2), "etag:a");
    let files = entries(dir.path());
    assert_eq!(files.len(), 2);
    // Swap the two extents' names: each claims the other's columns.
    let tmp = files[0].with_extension("swap");
    std::fs::rename(&files[0], &tmp).unwrap();
    std::fs::rename(&files[1], &files[0]).unwrap();
    std::fs::rename(&tmp, &files[1]).unwrap();
    assert!(matches!(
        get(&tier, &k, "etag:a", 10..20),
        DiskRead::Corrupt
    ));
    assert!(matches!(
        get(&tier, &k, "etag:a", 100_010..100_020),
        DiskRead::Corrupt
    ));
    // dar's own damaged entries are removed, so a refetch can replace them.
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn another_keys_entry_under_the_same_name_is_a_miss_and_kept() {
    let dir = private_dir();
    let tier = DiskTier::open(dir.path(), None).unwrap();
    let k = key("file", 1_000);
    write(&tier, &k, 0, &data(1_000, 1), "etag:a");
    let file = entries(dir.path()).pop().unwrap();
    // As a hash collision would leave it: a valid entry of another
    // identity where this key's would be.
    std::fs::write(
        &file,
        entry::encode(&key("file", 9).text(), "etag:a", 0, &data(1_000, 1)),
    )
    .unwrap();
    assert!(matches!(get(&tier, &k, "etag:a", 0..10), DiskRead::Miss));
    assert!(file.exists());
}

#[test]
fn links_fifos_devices_and_sparse_files_are_never_read() {
    let dir = private_dir();
    let tier = DiskTier::open(dir.path(), None).unwrap();
    let k = key("file", 1 << 40);
    let len = 100_000u64;
    write(&tier, &k, 0, &data(len as usize, 1), "etag:a");
    let file = entries(dir.path()).pop().unwrap();
    let outside = private_dir();
    let target = outside.path().join("secret");
    std::fs::write(
        &target,
        entry::encode(&k.text(), "etag:a", 0, &data(len as usize, 9)),
    )
    .unwrap();
    let sparse = outside.path().join("sparse");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(1 << 40)
        .unwrap();
    let fifo = outside.path().join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let replace = |with: &dyn Fn(&Path)| {
        std::fs::remove_file(&file).ok();
        with(&file);
        get(&tier, &k, "etag:a", 10..20)
    };
    // A link is not an entry (never followed, never removed), a FIFO
    // neither (never opened for reading, so never waited on).
    for link_to in [&target, &sparse, &PathBuf::from("/dev/zero"), &fifo] {
        let got = replace(&|p| std::os::unix::fs::symlink(link_to, p).unwrap());
        assert!(matches!(got, DiskRead::Miss), "{link_to:?}: {got:?}");
        assert!(file.symlink_metadata().unwrap().file_type().is_symlink());
    }
    let got = replace(&|p| {
        assert!(
            std::process::Command::new("mkfifo")
                .arg(p)
                .status()
                .unwrap()
                .success()
        );
    });
    assert!(matches!(got, DiskRead::Miss), "{got:?}");
    // Found through a stale listing, a FIFO is opened without blocking and
    // refused.
    let name = EntryName::parse(file.file_name().unwrap().to_str().unwrap()).unwrap();
    let stale = Holdings { names: vec![name] };
    let got = tier.read(&k, "etag:a", &stale, &[10..20]).pop().unwrap();
    assert!(matches!(got, DiskRead::Corrupt), "{got:?}");
    // A huge sparse file in its place: its length is not the entry's, so
    // nothing past the header is read.
    let got = replace(&|p| {
        std::fs::File::create(p).unwrap().set_len(1 << 40).unwrap();
    });
    assert!(matches!(got, DiskRead::Corrupt), "{got:?}");
    assert!(std::fs::read(&target).unwrap().starts_with(entry::MAGIC));
}

#[test]
fn trimming_removes_only_what_dar_can_prove_it_wrote() {
    let dir = private_dir();
    let outside = private_dir();
    let canary = outside.path().join("keep.txt");
    std::fs::write(&canary, b"the user's").unwrap();
    let tier = DiskTier::open(dir.path(), Some(400_000)).unwrap();
    let ns = dir.path().join(NAMESPACE);
    // The user's own files beside and inside the namespace; a linked
    // folder where an object folder would be; entry-named files dar did
    // not write; a link with an entry's name.
    let planted_fan = ns.join("ab");
    std::os::unix::fs::symlink(outside.path(), &planted_fan).unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, b"mine").unwrap();
    std::fs::write(ns.join("readme"), b"mine").unwrap();
    let k = key("file", 10_000_000);
    write(&tier, &k, 0, &data(1_000, 0), "etag:a");
    let object_dir = entries(dir.path())[0].parent().unwrap().to_path_buf();
    let forged = object_dir.join(
        EntryName {
            start: 5_000_000,
            len: 10,
            tag: 1,
        }
        .render(),
    );
    std::fs::write(&forged, b"not a dar entry").unwrap();
    let linked = object_dir.join(
        EntryName {
            start: 6_000_000,
            len: 10,
            tag: 1,
        }
        .render(),
    );
    std::os::unix::fs::symlink(&canary, &linked).unwrap();
    let foreign = vec![
        notes.clone(),
        ns.join("readme"),
        forged.clone(),
        linked.clone(),
        canary.clone(),
    ];
    for i in 0..40u64 {
        write(
            &tier,
            &k,
            10_000 + i * 60_000,
            &data(50_000, i as u8),
            "etag:a",
        );
        assert!(tier.bytes() <= 400_000 + 60_000, "{}", tier.bytes());
    }
    // Entry-named files minus the forged one and the link.
    let held = entries(dir.path()).len() - 2;
    assert!((5..=8).contains(&held), "{held} entries held");
    for f in &foreign {
        assert!(f.symlink_metadata().is_ok(), "{f:?} was removed");
    }
    assert_eq!(std::fs::read(&canary).unwrap(), b"the user's");
    assert!(
        planted_fan
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // The newest is kept.
    assert!(matches!(
        get(
            &tier,
            &k,
            "etag:a",
            10_000 + 39 * 60_000..10_000 + 39 * 60_000 + 5
        ),
        DiskRead::Hit(_)
    ));
}

#[test]
fn processes_sharing_a_folder_share_one_budget() {
    let dir = private_dir();
    let small = DiskTier::open(dir.path(), Some(300_000)).unwrap();
    // A second process that sets no budget follows the folder's.
    let other = DiskTier::open(dir.path(), None).unwrap();
    // Extent `i` of one large object, 40 kB each.
    let extent = |tier: &DiskTier, i: u64| {
        let k = key("file", 1 << 30);
        write(tier, &k, i * 50_000, &data(40_000, i as u8), "etag:a");
    };
    for i in 0..20u64 {
        extent(if i % 2 == 0 { &small } else { &other }, i);
    }
    let on_disk = held_bytes(dir.path());
    assert!(on_disk <= 300_000 + 50_000, "{on_disk}");
    assert_eq!(other.bytes(), on_disk);
    // The budget belongs to the folder: a process that sets a larger one
    // raises it for every process.
    let _large = DiskTier::open(dir.path(), Some(10_000_000)).unwrap();
    for i in 20..40u64 {
        extent(&small, i);
    }
    let on_disk = held_bytes(dir.path());
    assert!(on_disk > 1_000_000, "{on_disk}");
    assert_eq!(small.bytes(), on_disk);
}

#[test]
fn unsafe_folders_are_refused_and_foreign_namespaces_untouched() {
    let refused = |p: &Path| match DiskTier::open(p, None) {
        Err(crate::Error::CacheDirRefused { reason, .. }) => reason,
        other => panic!("{p:?}: {other:?}"),
    };
    let dir = private_dir();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    assert!(refused(dir.path()).contains("writable by everyone"));
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o770)).unwrap();
    assert!(refused(dir.path()).contains("its group"));
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();

    // A namespace that is a link, or that dar did not create.
    let outside = private_dir();
    std::os::unix::fs::symlink(outside.path(), dir.path().join(NAMESPACE)).unwrap();
    assert!(refused(dir.path()).contains("not a folder dar created"));
    std::fs::remove_file(dir.path().join(NAMESPACE)).unwrap();
    std::fs::create_dir(dir.path().join(NAMESPACE)).unwrap();
    std::fs::write(dir.path().join(NAMESPACE).join("mine"), b"x").unwrap();
    assert!(refused(dir.path()).contains("not created by dar"));
    assert!(dir.path().join(NAMESPACE).join("mine").exists());

    // Owned by another user.
    let theirs = private_dir();
    let me = rustix::process::geteuid();
    let other_owned = if me.is_root() {
        rustix::fs::chown(theirs.path(), Some(rustix::fs::Uid::from_raw(4242)), None).unwrap();
        theirs.path().to_path_buf()
    } else {
        PathBuf::from("/")
    };
    assert!(refused(&other_owned).contains("belongs to user"));

    // A missing folder is created private, its namespace too.
    let fresh = private_dir().path().join("a").join("b");
    DiskTier::open(&fresh, None).unwrap();
    for p in [fresh.clone(), fresh.join(NAMESPACE)] {
        assert_eq!(
            p.metadata().unwrap().permissions().mode() & 0o777,
            0o700,
            "{p:?}"
        );
    }
}

#[test]
fn entries_are_private_to_the_user() {
    let dir = private_dir();
    let tier = DiskTier::open(dir.path(), None).unwrap();
    write(&tier, &key("file", 100), 0, &data(100, 0), "etag:a");
    for f in files_under(&dir.path().join(NAMESPACE)) {
        assert_eq!(
            f.metadata().unwrap().permissions().mode() & 0o077,
            0,
            "{f:?}"
        );
    }
}

/// Opening a folder and the read path never wait for another process: one
/// holding the folder's lock (as a trim does while it walks the folder)
/// leaves a new tier opened, reading and queueing writes; its budget and
/// writes land on its writer's thread once the lock is free.
#[test]
fn opening_reading_and_writing_never_wait_on_the_folder() {
    let dir = private_dir();
    let first = DiskTier::open(dir.path(), Some(10_000_000)).unwrap();
    let k = key("file", 1 << 20);
    write(&first, &k, 0, &data(40_000, 1), "etag:a");
    let held = first.shared.ns.lock_file().unwrap();
    held.lock().unwrap();
    let (done, opened) = std::sync::mpsc::channel();
    let path = dir.path().to_path_buf();
    let k2 = k.clone();
    std::thread::spawn(move || {
        let tier = DiskTier::open(&path, Some(20_000_000)).unwrap();
        let hit = matches!(get(&tier, &k2, "etag:a", 100..200), DiskRead::Hit(_));
        tier.insert(&k2, 100_000, data(40_000, 2), "etag:a");
        let _ = done.send((tier, hit));
    });
    // A generous bound: waiting would mean until the lock is released,
    // which this test does only after.
    let (second, hit) = opened
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("opening, reading or queueing a write waited for the folder's lock");
    assert!(
        hit,
        "the entry on disk was not served while the lock was held"
    );
    // The writer's thread waits for the lock: nothing new is written yet
    // and the budget is the old one.
    assert_eq!(entries(dir.path()).len(), 1);
    assert_eq!(
        first.shared.ns.read_usage().map(|(_, budget)| budget),
        Some(10_000_000)
    );
    drop(held);
    second.flush();
    assert_eq!(entries(dir.path()).len(), 2);
    assert_eq!(
        second.shared.ns.read_usage(),
        Some((held_bytes(dir.path()), 20_000_000))
    );
    assert_eq!(second.bytes(), held_bytes(dir.path()));
}

/// Opening a folder reads its usage record and never counts its entries.
#[test]
fn opening_reads_the_usage_record_without_walking_the_folder() {
    let dir = private_dir();
    let first = DiskTier::open(dir.path(), None).unwrap();
    write(&first, &key("file", 1 << 20), 0, &data(40_000, 1), "etag:a");
    assert_eq!(first.bytes(), held_bytes(dir.path()));
    {
        let lock = first.shared.ns.lock_file().unwrap();
        lock.lock().unwrap();
        first
            .shared
            .ns
            .write_usage(123, DEFAULT_DISK_BUDGET)
            .unwrap();
    }
    let second = DiskTier::open(dir.path(), None).unwrap();
    // The record's figure, not a count of the entry on disk.
    assert_eq!(second.bytes(), 123);
}
