//! `--output` never destroys what was there, a closed standard output is
//! an error, and output column names are unique (issue 10, items 8 and 9).

use std::fs;
use std::path::{Path, PathBuf};

use crate::{arg, dar, sample, sample_copy};

/// The data file of partition folder `day` of a sample table copy.
fn data_file(table: &Path, day: &str) -> PathBuf {
    fs::read_dir(table.join(day))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "parquet"))
        .unwrap()
}

/// A copy of the sample table whose scan fails half-way (its last data
/// file removed).
fn failing_table() -> tempfile::TempDir {
    let t = sample_copy();
    fs::remove_file(data_file(t.path(), "day=2024-01-04")).unwrap();
    t
}

fn scan_to(table: &Path, out: &Path) -> assert_cmd::assert::Assert {
    dar()
        .args(["scan", &arg(table), "--format", "csv", "--output"])
        .arg(out)
        .assert()
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_failing_scan_leaves_an_existing_file_unchanged() {
    let t = failing_table();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rows.csv");
    fs::write(&out, "precious").unwrap();
    scan_to(t.path(), &out).failure().code(1);
    assert_eq!(fs::read_to_string(&out).unwrap(), "precious");
    assert_eq!(entries(dir.path()), ["rows.csv"], "no partial file left");
}

#[test]
fn a_successful_scan_replaces_the_file_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rows.csv");
    fs::write(&out, "old").unwrap();
    scan_to(&sample(), &out).success();
    assert_eq!(fs::read_to_string(&out).unwrap().lines().count(), 301);
    assert_eq!(entries(dir.path()), ["rows.csv"]);
}

#[cfg(unix)]
#[test]
fn a_symlink_target_survives_a_failing_scan() {
    let t = failing_table();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target.csv");
    let link = dir.path().join("link.csv");
    fs::write(&target, "precious").unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    scan_to(t.path(), &link).failure().code(1);
    assert_eq!(fs::read_to_string(&target).unwrap(), "precious");
    assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(entries(dir.path()), ["link.csv", "target.csv"]);
}

#[cfg(unix)]
#[test]
fn a_device_survives_a_failing_scan() {
    use std::os::unix::fs::FileTypeExt;
    let t = failing_table();
    scan_to(t.path(), Path::new("/dev/null")).failure().code(1);
    let m = fs::metadata("/dev/null").unwrap();
    assert!(m.file_type().is_char_device());
}

#[test]
fn output_inside_the_table_is_refused_and_the_data_is_untouched() {
    let t = sample_copy();
    let data = data_file(t.path(), "day=2024-01-01");
    let before = fs::read(&data).unwrap();
    let out = scan_to(t.path(), &data).failure().code(1);
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.contains("inside the table being read"), "{err}");
    assert_eq!(fs::read(&data).unwrap(), before);
    // Also a new file anywhere below the root, and through a symlink.
    let fresh = t.path().join("_delta_log").join("rows.csv");
    scan_to(t.path(), &fresh).failure().code(1);
    assert!(!fresh.exists());
    #[cfg(unix)]
    {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("innocent.parquet");
        std::os::unix::fs::symlink(&data, &link).unwrap();
        scan_to(t.path(), &link).failure().code(1);
        assert_eq!(fs::read(&data).unwrap(), before);
    }
    // The table still reads.
    dar()
        .args(["scan", &arg(t.path()), "--format", "null"])
        .assert()
        .success()
        .stdout("300\n");
}

#[cfg(target_os = "linux")]
#[test]
fn a_write_error_names_the_output_file() {
    let out = scan_to(&sample(), Path::new("/dev/full")).failure().code(1);
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.contains("'/dev/full'"), "{err}");
    assert!(err.to_lowercase().contains("no space"), "{err}");
}

/// Runs `dar ARGS REDIRECT` through `sh`; returns the exit code and stderr.
#[cfg(target_os = "linux")]
fn sh_dar(args: &str, redirect: &str) -> (Option<i32>, String) {
    let bin = assert_cmd::cargo::cargo_bin("dar");
    let out = std::process::Command::new("sh")
        .args(["-c", &format!("exec \"$0\" {args} {redirect}")])
        .arg(bin)
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stderr).unwrap())
}

#[cfg(target_os = "linux")]
#[test]
fn a_closed_stdout_is_an_error() {
    let s = arg(&sample());
    for args in [format!("scan {s} --format csv"), format!("info {s}")] {
        let (code, err) = sh_dar(&args, ">&-");
        assert_eq!(code, Some(1), "{args}: {err}");
        assert!(err.contains("standard output is closed"), "{err}");
    }
    // Redirected to /dev/null, or not needed: fine.
    let (code, err) = sh_dar(&format!("scan {s} --format csv"), ">/dev/null");
    assert_eq!(code, Some(0), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let out = arg(&dir.path().join("rows.csv"));
    let (code, err) = sh_dar(&format!("scan {s} --format csv --output {out}"), ">&-");
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(fs::read_to_string(&out).unwrap().lines().count(), 301);
    // Every command that takes --output needs no standard output then.
    let Some(cdf) = dar_testdata::table("kernel/cdf-table-simple") else {
        return;
    };
    let changes = arg(&dir.path().join("changes.csv"));
    let (code, err) = sh_dar(
        &format!(
            "changes {} --from 0 --format csv --output {changes}",
            arg(&cdf)
        ),
        ">&-",
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(fs::read_to_string(&changes).unwrap().starts_with("id,"));
    let (code, err) = sh_dar(
        &format!("changes {} --from 0 --format csv", arg(&cdf)),
        ">&-",
    );
    assert_eq!(code, Some(1), "{err}");
    #[cfg(feature = "sql")]
    {
        let counted = arg(&dir.path().join("count.csv"));
        let (code, err) = sh_dar(
            &format!(
                "sql 'SELECT count(*) AS n FROM t' --table t={s} --format csv --output {counted}"
            ),
            ">&-",
        );
        assert_eq!(code, Some(0), "{err}");
        assert_eq!(fs::read_to_string(&counted).unwrap(), "n\n300\n");
    }
}

#[test]
fn duplicate_output_columns_are_refused() {
    let out = dar()
        .args([
            "scan",
            &arg(&sample()),
            "--columns",
            "trip_id, fare,trip_id",
        ])
        .assert()
        .failure()
        .code(1);
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.contains("'trip_id' is listed twice"), "{err}");
}

/// Writes a one-file table of `rows` ids into `dir`.
#[cfg(unix)]
fn big_table(dir: &Path, rows: i64) {
    crate::write_id_table(dir, 1, rows, 0, None);
}

#[cfg(unix)]
#[test]
fn ctrl_c_leaves_the_old_file_and_no_partial_one() {
    use std::time::{Duration, Instant};

    let tables = tempfile::tempdir().unwrap();
    big_table(tables.path(), 3_000_000);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rows.csv");
    fs::write(&out, "precious").unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("dar"))
        .args([
            "scan",
            &arg(&tables.path().join("t")),
            "--format",
            "csv",
            "--output",
        ])
        .arg(&out)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The temporary file appears once the scan writes (the handler is
    // installed by then); interrupt it there.
    let started = Instant::now();
    while entries(dir.path()).len() < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no temporary file"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "dar ended before Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    let err = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert_eq!(fs::read_to_string(&out).unwrap(), "precious");
    assert_eq!(entries(dir.path()), ["rows.csv"], "no partial file left");
}

/// `--output -` is standard output, as in most tools, for every command
/// that writes rows: the rows are those without the flag, and no file
/// named `-` appears in the working directory.
#[test]
fn output_dash_is_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let feed = dir.path().join("feed");
    dar_testkit::write_ict_toggled_table(&feed).unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let mut commands: Vec<Vec<String>> = vec![
        vec!["scan".into(), arg(&sample())],
        vec!["changes".into(), arg(&feed), "--from".into(), "0".into()],
    ];
    if cfg!(feature = "sql") {
        commands.push(vec![
            "sql".into(),
            "SELECT count(*) AS n FROM t".into(),
            "--table".into(),
            format!("t={}", arg(&sample())),
        ]);
    }
    for command in commands {
        let rows = |extra: &[&str]| {
            dar()
                .current_dir(cwd.path())
                .args(&command)
                .args(["--format", "csv"])
                .args(extra)
                .assert()
                .success()
                .get_output()
                .stdout
                .clone()
        };
        let plain = rows(&[]);
        assert!(!plain.is_empty(), "{command:?}");
        assert_eq!(rows(&["--output", "-"]), plain, "{command:?}");
        assert_eq!(rows(&["-o", "-"]), plain, "{command:?}");
        assert!(entries(cwd.path()).is_empty(), "{command:?}");
    }
    // Parquet still needs a file.
    dar()
        .current_dir(cwd.path())
        .args([
            "scan",
            &arg(&sample()),
            "--format",
            "parquet",
            "--output",
            "-",
        ])
        .assert()
        .failure()
        .code(1);
    assert!(entries(cwd.path()).is_empty());
}
