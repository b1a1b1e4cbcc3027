//! Locates the shared Delta test tables (`../shared/testdata`) for dar's tests.
//!
//! The tables are read in place, never copied into the repository. The folder
//! is `$DAR_TESTDATA` when set, else `../shared/testdata` next to the workspace
//! root. Where it is absent (a user's fresh clone), tests that need it print a
//! loud `SKIPPED` line and return early; with `DAR_REQUIRE_TESTDATA=1` (as
//! `.ci/run` sets) a missing folder fails the test instead.
//!
//! ```
//! // In a test: skip (loudly) when the shared tables are not here.
//! let Some(table) = dar_testdata::table("kernel/table-with-dv-small") else {
//!     return;
//! };
//! assert!(table.join("_delta_log").is_dir());
//! ```

use std::path::{Path, PathBuf};

/// Environment variable naming the test-data folder.
pub const TESTDATA_ENV: &str = "DAR_TESTDATA";
/// Environment variable that turns a missing test-data folder into a failure.
pub const REQUIRE_ENV: &str = "DAR_REQUIRE_TESTDATA";

/// The test-data folder, if present: `$DAR_TESTDATA`, else `../shared/testdata`
/// beside the workspace root.
pub fn root() -> Option<PathBuf> {
    let dir = match std::env::var_os(TESTDATA_ENV) {
        Some(dir) => PathBuf::from(dir),
        None => workspace_root().join("../shared/testdata"),
    };
    if dir.is_dir() {
        return Some(dir);
    }
    missing(&dir.display().to_string());
    None
}

/// A table (or any path) under the test-data folder, e.g. `"dat/basic_append"`
/// or `"kernel/table-with-dv-small"`. Returns `None` (after printing why) when
/// the folder or the path is absent and `DAR_REQUIRE_TESTDATA` is not `1`.
///
/// # Panics
///
/// When the data is absent and `DAR_REQUIRE_TESTDATA=1`: CI must not pass
/// by skipping.
pub fn table(relative: &str) -> Option<PathBuf> {
    let path = root()?.join(relative);
    if path.exists() {
        Some(path)
    } else {
        missing(&path.display().to_string());
        None
    }
}

/// The workspace root: the nearest folder holding `Cargo.lock` above the
/// package under test.
///
/// It starts from the `CARGO_MANIFEST_DIR` that cargo sets when it runs a
/// test, not the one baked in when this crate was compiled: a target dir
/// shared by several clones may hold a build of this crate made in another
/// clone, whose paths would point there.
pub fn workspace_root() -> PathBuf {
    let start = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    start
        .ancestors()
        .find(|dir| dir.join("Cargo.lock").is_file())
        .map(Path::to_path_buf)
        .unwrap_or(start)
}

/// Copies the folder `from` into `to` (made if missing), recursively: a
/// test that changes a table works on a copy, never on the shared one.
///
/// # Panics
///
/// When a file cannot be read or written (a test's setup failed).
#[expect(clippy::unwrap_used, reason = "test setup: a failure is the test's")]
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// Replaces `file` by a copy of itself: the same bytes, another file (a
/// new inode), as a writer that rewrites a file in place leaves it.
///
/// # Panics
///
/// When the file cannot be copied or renamed (a test's setup failed).
#[expect(clippy::unwrap_used, reason = "test setup: a failure is the test's")]
pub fn replace_by_copy(file: &Path) {
    let copy = file.with_extension("copy");
    std::fs::copy(file, &copy).unwrap();
    std::fs::rename(&copy, file).unwrap();
}

/// True when a missing test-data folder must fail the run.
pub fn required() -> bool {
    std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "1")
}

#[expect(
    clippy::panic,
    reason = "test-only crate: failing loudly in CI is the point"
)]
fn missing(what: &str) {
    if required() {
        panic!("{REQUIRE_ENV}=1 but the shared test data is missing: {what}");
    }
    eprintln!(
        "SKIPPED: shared test data not found at {what} (set {TESTDATA_ENV}, or {REQUIRE_ENV}=1 to fail instead)"
    );
}
