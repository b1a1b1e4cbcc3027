//! The cache's own folder inside the one the user names, and every file
//! operation in it.
//!
//! ```text
//! DIR/                      the user's folder: created private if missing;
//!                           refused if owned by another user or writable by
//!                           group or others
//! DIR/dar-cache-v2/         the namespace: created 0700 by dar, refused if it
//!   DAR-CACHE               is a link, not private, or lacks this marker
//!   lock                    taken while the shared usage is updated or trimmed
//!   usage                   bytes held and the budget, for every process
//!   <h:2>/<h:016x>/         one folder per object identity (h = xxh64)
//!     <entry name>          see `entry`
//! ```
//!
//! Nothing outside the namespace is ever written or removed. Inside it,
//! every folder and file is opened relative to an open folder with
//! `O_NOFOLLOW`, so a link planted anywhere is never followed; entries are
//! opened non-blocking and must be regular files (a FIFO or a device is
//! skipped, never read).

use std::ffi::CStr;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use super::entry::EntryName;

/// The namespace folder's name: the format is in it, so a later format
/// lives beside this one instead of misreading it.
pub(crate) const NAMESPACE: &str = "dar-cache-v2";
const MARKER: &str = "DAR-CACHE";
const MARKER_TEXT: &[u8] = b"dar byte-range cache, format 2.\n\
Every entry below this folder was written by dar, which deletes only entries it can prove it wrote.\n\
Delete this whole folder to clear the cache.\n";
const LOCK: &str = "lock";
const USAGE: &str = "usage";
/// Temporary entries start with this; a leftover one (a process killed
/// while writing) is removed by a later trim.
pub(super) const TMP_PREFIX: &str = ".tmp-";

/// Why a cache folder cannot be used.
#[derive(Debug)]
pub(super) enum OpenError {
    /// A file-system error.
    Io(io::Error),
    /// The folder is not safe to use: why.
    Refused(String),
}

impl From<io::Error> for OpenError {
    fn from(e: io::Error) -> Self {
        Self::Io(e)
    }
}

impl From<rustix::io::Errno> for OpenError {
    fn from(e: rustix::io::Errno) -> Self {
        Self::Io(e.into())
    }
}

/// The open namespace folder.
#[derive(Debug)]
pub(super) struct Namespace {
    /// The folder the user named.
    pub root: PathBuf,
    fd: OwnedFd,
}

const DIR_FLAGS: OFlags = OFlags::DIRECTORY
    .union(OFlags::RDONLY)
    .union(OFlags::CLOEXEC)
    .union(OFlags::NOFOLLOW);

/// Checks that the folder behind `fd` belongs to this user and is writable
/// by no one else.
fn check_private(fd: impl AsFd, what: &str) -> Result<(), OpenError> {
    let st = rustix::fs::fstat(fd)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
        return Err(OpenError::Refused(format!("{what} is not a folder")));
    }
    let me = rustix::process::geteuid().as_raw();
    if st.st_uid != me {
        return Err(OpenError::Refused(format!(
            "{what} belongs to user {} (this process runs as {me}); a cache another user controls can serve rows dar never fetched",
            st.st_uid
        )));
    }
    let mode = st.st_mode & 0o777;
    if mode & 0o022 != 0 {
        return Err(OpenError::Refused(format!(
            "{what} is writable by {} (mode {mode:o}); another user could plant or swap cache entries: use a private folder (chmod go-w), such as ~/.cache/dar",
            if mode & 0o002 != 0 {
                "everyone"
            } else {
                "its group"
            }
        )));
    }
    Ok(())
}

fn not_found(e: &rustix::io::Errno) -> bool {
    *e == rustix::io::Errno::NOENT
}

impl Namespace {
    /// Opens (creating what is missing) the namespace under `root`,
    /// checking every condition in the module docs.
    pub(super) fn open(root: &Path) -> Result<Self, OpenError> {
        if !root.exists() {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(root)?;
        }
        // The user's folder may be reached through a link of theirs; its
        // owner and mode are checked on the folder itself.
        let user = rustix::fs::open(
            root,
            OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        check_private(&user, "the cache folder")?;
        let created = match rustix::fs::mkdirat(&user, NAMESPACE, Mode::from_raw_mode(0o700)) {
            Ok(()) => true,
            Err(e) if e == rustix::io::Errno::EXIST => false,
            Err(e) => return Err(e.into()),
        };
        let fd = match rustix::fs::openat(&user, NAMESPACE, DIR_FLAGS, Mode::empty()) {
            Ok(fd) => fd,
            Err(e) if e == rustix::io::Errno::LOOP || e == rustix::io::Errno::NOTDIR => {
                return Err(OpenError::Refused(format!(
                    "'{NAMESPACE}' in it is not a folder dar created (a link or a file)"
                )));
            }
            Err(e) => return Err(e.into()),
        };
        check_private(&fd, &format!("'{NAMESPACE}' in it"))?;
        let ns = Self {
            root: root.to_path_buf(),
            fd,
        };
        ns.check_marker(created)?;
        Ok(ns)
    }

    /// The marker proves dar made the namespace: present with its exact
    /// text, or written now into a namespace that holds nothing else.
    fn check_marker(&self, created: bool) -> Result<(), OpenError> {
        let refused = || {
            OpenError::Refused(format!(
                "'{NAMESPACE}' in it was not created by dar (its '{MARKER}' marker is missing or altered); dar will not write into or delete from it"
            ))
        };
        match self.open_regular(MARKER) {
            Ok(Some(mut f)) => {
                let mut text = Vec::new();
                (&mut f)
                    .take(MARKER_TEXT.len() as u64 + 1)
                    .read_to_end(&mut text)?;
                if text == MARKER_TEXT {
                    Ok(())
                } else {
                    Err(refused())
                }
            }
            Ok(None) => Err(refused()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let only_ours = self
                    .names(&self.fd)?
                    .iter()
                    .all(|(n, _)| n.starts_with(TMP_PREFIX));
                if !created && !only_ours {
                    return Err(refused());
                }
                self.write_file(&self.fd, MARKER, MARKER_TEXT)?;
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Opens `name` in the namespace non-blocking without following a
    /// link; `None` when it is not a regular file.
    fn open_regular(&self, name: &str) -> io::Result<Option<File>> {
        open_regular_in(&self.fd, name)
    }

    /// The names in folder `dir` with their types (a link is a link).
    fn names(&self, dir: &OwnedFd) -> io::Result<Vec<(String, FileType)>> {
        let mut out = Vec::new();
        // A fresh open of the folder: a duplicated descriptor would share
        // (and leave at the end) the read position of this one.
        for e in rustix::fs::Dir::read_from(dir)? {
            let e = e?;
            let name = e.file_name();
            if name == c"." || name == c".." {
                continue;
            }
            let Some(text) = utf8(name) else { continue };
            let kind = match e.file_type() {
                FileType::Unknown => rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
                    .map_or(FileType::Unknown, |st| FileType::from_raw_mode(st.st_mode)),
                k => k,
            };
            out.push((text, kind));
        }
        Ok(out)
    }

    /// The folder of the object whose identity hashes to `hash`, created
    /// when `create`; `None` when absent (or not a real folder).
    pub(super) fn object_dir(&self, hash: u64, create: bool) -> io::Result<Option<OwnedFd>> {
        let hex = format!("{hash:016x}");
        let Some(fan) = self.sub_dir(&self.fd, &hex[..2], create)? else {
            return Ok(None);
        };
        self.sub_dir(&fan, &hex, create)
    }

    fn sub_dir(&self, parent: &OwnedFd, name: &str, create: bool) -> io::Result<Option<OwnedFd>> {
        match rustix::fs::openat(parent, name, DIR_FLAGS, Mode::empty()) {
            Ok(fd) => Ok(Some(fd)),
            Err(e) if not_found(&e) && create => {
                match rustix::fs::mkdirat(parent, name, Mode::from_raw_mode(0o700)) {
                    Ok(()) => {}
                    Err(e) if e == rustix::io::Errno::EXIST => {}
                    Err(e) => return Err(e.into()),
                }
                Ok(Some(rustix::fs::openat(
                    parent,
                    name,
                    DIR_FLAGS,
                    Mode::empty(),
                )?))
            }
            Err(e)
                if not_found(&e)
                    || e == rustix::io::Errno::LOOP
                    || e == rustix::io::Errno::NOTDIR =>
            {
                Ok(None)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The entries (regular files with an entry name) in object folder `dir`.
    pub(super) fn entries(&self, dir: &OwnedFd) -> io::Result<Vec<EntryName>> {
        Ok(self
            .names(dir)?
            .into_iter()
            .filter(|(_, kind)| *kind == FileType::RegularFile)
            .filter_map(|(n, _)| EntryName::parse(&n))
            .collect())
    }

    /// Opens entry `name` of object folder `dir` for reading: never
    /// following a link, never blocking on a FIFO; `None` unless it is a
    /// regular file.
    pub(super) fn open_entry(&self, dir: &OwnedFd, name: &EntryName) -> io::Result<Option<File>> {
        open_regular_in(dir, &name.render())
    }

    /// Writes `bytes` as `name` in `dir` unless that name exists: written
    /// aside (0600) and linked into place, so no reader sees half a file
    /// and nothing already there is replaced. Returns whether it was
    /// written.
    pub(super) fn write_file(&self, dir: &OwnedFd, name: &str, bytes: &[u8]) -> io::Result<bool> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let tmp = format!(
            "{TMP_PREFIX}{}-{}-{name}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let fd = rustix::fs::openat(
            dir,
            tmp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )?;
        let written = File::from(fd).write_all(bytes).and_then(|()| {
            match rustix::fs::linkat(dir, tmp.as_str(), dir, name, AtFlags::empty()) {
                Ok(()) => Ok(true),
                Err(e) if e == rustix::io::Errno::EXIST => Ok(false),
                Err(e) => Err(e.into()),
            }
        });
        // The temporary name was ours alone (O_EXCL).
        let _ = rustix::fs::unlinkat(dir, tmp.as_str(), AtFlags::empty());
        written
    }

    /// Removes `name` from `dir` (the caller proved it is dar's).
    pub(super) fn remove(&self, dir: &OwnedFd, name: &str) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(dir, name, AtFlags::empty())?)
    }

    /// The lock file, opened for [`File::lock`].
    pub(super) fn lock_file(&self) -> io::Result<File> {
        let fd = rustix::fs::openat(
            &self.fd,
            LOCK,
            OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
            Mode::from_raw_mode(0o600),
        )?;
        let f = File::from(fd);
        if !f.metadata()?.is_file() {
            return Err(io::Error::other("the cache's lock is not a regular file"));
        }
        Ok(f)
    }

    /// The usage record (bytes held, budget), if it reads whole. Call with
    /// the lock held.
    pub(super) fn read_usage(&self) -> Option<(u64, u64)> {
        let mut f = self.open_regular(USAGE).ok()??;
        let mut buf = Vec::new();
        (&mut f).take(64).read_to_end(&mut buf).ok()?;
        let text = std::str::from_utf8(&buf).ok()?;
        let (held, budget) = text.trim().split_once(' ')?;
        Some((held.parse().ok()?, budget.parse().ok()?))
    }

    /// Replaces the usage record. Call with the lock held.
    pub(super) fn write_usage(&self, held: u64, budget: u64) -> io::Result<()> {
        let tmp = format!("{TMP_PREFIX}usage-{}", std::process::id());
        let fd = rustix::fs::openat(
            &self.fd,
            tmp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )?;
        File::from(fd).write_all(format!("{held} {budget}\n").as_bytes())?;
        Ok(rustix::fs::renameat(
            &self.fd,
            tmp.as_str(),
            &self.fd,
            USAGE,
        )?)
    }

    /// Visits every file of every object folder with the folder open;
    /// folders that are links, or not of dar's names, are skipped. An
    /// object folder left empty is removed.
    pub(super) fn walk(
        &self,
        mut visit: impl FnMut(&OwnedFd, &EntryPath, FileType),
    ) -> io::Result<()> {
        for (fan, kind) in self.names(&self.fd)? {
            if kind != FileType::Directory || fan.len() != 2 || !is_hex(&fan) {
                continue;
            }
            let Some(fan_fd) = self.sub_dir(&self.fd, &fan, false)? else {
                continue;
            };
            for (object, kind) in self.names(&fan_fd)? {
                if kind != FileType::Directory || object.len() != 16 || !is_hex(&object) {
                    continue;
                }
                let Some(dir) = self.sub_dir(&fan_fd, &object, false)? else {
                    continue;
                };
                let names = self.names(&dir)?;
                if names.is_empty() {
                    // An object folder of dar's name holding nothing.
                    let _ = rustix::fs::unlinkat(&fan_fd, object.as_str(), AtFlags::REMOVEDIR);
                }
                for (name, kind) in names {
                    let at = EntryPath {
                        fan: fan.clone(),
                        object: object.clone(),
                        name,
                    };
                    visit(&dir, &at, kind);
                }
            }
        }
        Ok(())
    }

    /// Removes the file at `at` (the caller proved it is dar's), opening
    /// its folders again without following links.
    pub(super) fn remove_at(&self, at: &EntryPath) -> io::Result<()> {
        let Some(fan) = self.sub_dir(&self.fd, &at.fan, false)? else {
            return Ok(());
        };
        let Some(dir) = self.sub_dir(&fan, &at.object, false)? else {
            return Ok(());
        };
        self.remove(&dir, &at.name)
    }
}

/// Where a file of an object folder is, by name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct EntryPath {
    fan: String,
    object: String,
    /// The file's name.
    pub name: String,
}

fn is_hex(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn utf8(name: &CStr) -> Option<String> {
    name.to_str().ok().map(str::to_string)
}

/// Opens `name` in `dir` read-only, not following a link and not blocking
/// (a FIFO opens at once and is then refused); `None` unless it is a
/// regular file.
pub(super) fn open_regular_in(dir: &OwnedFd, name: &str) -> io::Result<Option<File>> {
    let fd = match rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(e) if e == rustix::io::Errno::LOOP => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let st = rustix::fs::fstat(&fd)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Ok(None);
    }
    Ok(Some(File::from(fd)))
}
