//! `dar scan --output FILE`: never destroy what was there.
//!
//! 1. The path is resolved through symbolic links to the file that would be
//!    written; a path inside the local table being read is refused (writing
//!    there would corrupt the table).
//! 2. A device, FIFO or socket (`/dev/null`, a named pipe) is written in
//!    place and never removed.
//! 3. Anything else is written to a new temporary file in the target's
//!    folder, which is renamed over the target only once every row is
//!    written and synced. On failure or Ctrl-C only that temporary file is
//!    removed (dropping it does), so an existing file keeps its old bytes.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use crate::error::CliError;

/// The file a scan writes to (see the module docs).
#[derive(Debug)]
pub struct OutputFile {
    /// The path as given (for messages).
    shown: PathBuf,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    /// Written beside `target`, renamed over it at the end.
    Replace {
        temp: NamedTempFile,
        target: PathBuf,
    },
    /// A device or pipe, written in place.
    InPlace(File),
}

impl OutputFile {
    /// Prepares `path` for writing; `table_roots` are the local folders of
    /// the tables being read (a path inside one is refused).
    pub fn create(path: &Path, table_roots: &[PathBuf]) -> Result<Self, CliError> {
        let failed = |source: io::Error| CliError::CreateOutput {
            path: path.to_path_buf(),
            source,
        };
        let target = resolve(path).map_err(failed)?;
        if let Some(root) = table_roots
            .iter()
            .filter_map(|r| std::fs::canonicalize(r).ok())
            .find(|root| target.starts_with(root))
        {
            return Err(CliError::InvalidArgument {
                argument: "--output",
                reason: format!(
                    "'{}' is inside the table being read ('{}'); write somewhere else",
                    path.display(),
                    root.display()
                ),
            });
        }
        let existing = std::fs::metadata(&target).ok();
        let kind = match &existing {
            Some(m) if m.is_dir() => {
                return Err(CliError::InvalidArgument {
                    argument: "--output",
                    reason: format!("'{}' is a directory", path.display()),
                });
            }
            Some(m) if !m.is_file() => Kind::InPlace(
                OpenOptions::new()
                    .write(true)
                    .open(&target)
                    .map_err(failed)?,
            ),
            _ => {
                let dir = target.parent().unwrap_or(Path::new("."));
                let name = target
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let prefix = format!(".{name}.");
                let mut builder = tempfile::Builder::new();
                builder.prefix(&prefix).suffix(".dar-partial");
                // The final file gets the usual mode (0666 less the umask)
                // rather than the private 0600 of temporary files.
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    builder.permissions(std::fs::Permissions::from_mode(0o666));
                }
                let temp = builder.tempfile_in(dir).map_err(failed)?;
                if let Some(m) = &existing {
                    // Replacing a file keeps its permissions.
                    temp.as_file()
                        .set_permissions(m.permissions())
                        .map_err(failed)?;
                }
                Kind::Replace { temp, target }
            }
        };
        Ok(Self {
            shown: path.to_path_buf(),
            kind,
        })
    }

    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.shown
    }

    /// Where rows go until [`OutputFile::commit`].
    pub fn writer(&mut self) -> &mut File {
        match &mut self.kind {
            Kind::Replace { temp, .. } => temp.as_file_mut(),
            Kind::InPlace(f) => f,
        }
    }

    /// Makes the written rows the file at the path: syncs and renames the
    /// temporary file over the target. Dropping an `OutputFile` without
    /// committing removes the temporary file and nothing else.
    pub fn commit(self) -> Result<(), CliError> {
        let failed = |source: io::Error| CliError::WriteOutput {
            path: self.shown.clone(),
            source: Box::new(source),
        };
        match self.kind {
            Kind::InPlace(_) => Ok(()),
            Kind::Replace { temp, target } => {
                temp.as_file().sync_all().map_err(failed)?;
                temp.persist(&target).map_err(|e| failed(e.error))?;
                Ok(())
            }
        }
    }
}

/// The file `path` stands for: symbolic links followed (so a link's target
/// is what gets replaced, and the link stays), made absolute.
fn resolve(path: &Path) -> io::Result<PathBuf> {
    if std::fs::symlink_metadata(path).is_ok() {
        // Fails for a dangling link: nothing is created through it.
        return std::fs::canonicalize(path);
    }
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "the path does not name a file")
    })?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Ok(std::fs::canonicalize(parent)?.join(name))
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn existing_file_survives_until_commit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.csv");
        std::fs::write(&path, "old").unwrap();
        let mut out = OutputFile::create(&path, &[]).unwrap();
        out.writer().write_all(b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        drop(out);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "temp removed"
        );

        let mut out = OutputFile::create(&path, &[]).unwrap();
        out.writer().write_all(b"new").unwrap();
        out.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn symlink_is_kept_and_its_target_replaced_only_on_commit() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.csv");
        let link = dir.path().join("link.csv");
        std::fs::write(&target, "old").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        drop(OutputFile::create(&link, &[]).unwrap());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old");
        let mut out = OutputFile::create(&link, &[]).unwrap();
        out.writer().write_all(b"new").unwrap();
        out.commit().unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "new");
    }

    #[test]
    fn inside_the_table_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("part-0.parquet");
        std::fs::write(&data, "PAR1").unwrap();
        let err = OutputFile::create(&data, &[dir.path().to_path_buf()]).unwrap_err();
        assert!(err.to_string().contains("inside the table"), "{err}");
        let err = OutputFile::create(&dir.path().join("new.csv"), &[dir.path().to_path_buf()])
            .unwrap_err();
        assert!(err.to_string().contains("inside the table"), "{err}");
        assert_eq!(std::fs::read(&data).unwrap(), b"PAR1");
    }

    #[cfg(unix)]
    #[test]
    fn a_device_is_written_in_place_and_never_removed() {
        let mut out = OutputFile::create(Path::new("/dev/null"), &[]).unwrap();
        out.writer().write_all(b"x").unwrap();
        drop(out);
        assert!(Path::new("/dev/null").exists());
        let out = OutputFile::create(Path::new("/dev/null"), &[]).unwrap();
        out.commit().unwrap();
        assert!(Path::new("/dev/null").exists());
    }
}
