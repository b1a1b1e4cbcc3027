//! The peers' Python virtual environment, created from PyPI with pinned
//! versions (`xtask/requirements-peers.txt`) and reused while the pins are
//! unchanged.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The pinned requirements.
pub const REQUIREMENTS: &str = include_str!("../requirements-peers.txt");
/// The script that runs one peer read.
pub const PEERS_PY: &str = include_str!("../python/peers.py");

/// A ready virtual environment.
#[derive(Debug, Clone)]
pub struct Venv {
    /// Its root.
    pub dir: PathBuf,
}

impl Venv {
    /// `<target>/bench/venv`, or `$DAR_BENCH_VENV`.
    pub fn default_dir() -> PathBuf {
        std::env::var_os("DAR_BENCH_VENV")
            .map(PathBuf::from)
            .unwrap_or_else(|| crate::target_dir().join("bench").join("venv"))
    }

    /// Creates (or reuses) the venv at `dir` and writes `peers.py` into it.
    /// Processes that ensure the same venv at once (the suite's bench
    /// tests on a new machine) take turns on a lock file beside it: one
    /// creates it, the others find it ready.
    pub fn ensure(dir: &Path) -> Result<Venv, String> {
        let _turn = crate::lock_beside(dir)?;
        let marker = dir.join(".requirements");
        let python = dir.join("bin").join("python");
        let ready =
            std::fs::read_to_string(&marker).is_ok_and(|m| m == REQUIREMENTS) && python.exists();
        if !ready {
            eprintln!("venv: creating {} from PyPI (pinned peers)", dir.display());
            if dir.exists() {
                std::fs::remove_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            }
            run(Command::new("python3").arg("-m").arg("venv").arg(dir))?;
            let req = dir.join("requirements-peers.txt");
            std::fs::write(&req, REQUIREMENTS).map_err(|e| e.to_string())?;
            run(pip_install(&python).arg("-r").arg(&req))?;
            std::fs::write(&marker, REQUIREMENTS).map_err(|e| e.to_string())?;
        }
        std::fs::write(dir.join("peers.py"), PEERS_PY).map_err(|e| e.to_string())?;
        Ok(Venv {
            dir: dir.to_path_buf(),
        })
    }

    /// The interpreter.
    pub fn python(&self) -> PathBuf {
        self.dir.join("bin").join("python")
    }

    /// The peer script.
    pub fn peers_py(&self) -> PathBuf {
        self.dir.join("peers.py")
    }

    /// `name==version` of each pinned package as installed.
    pub fn versions(&self) -> Vec<String> {
        let out = Command::new(self.python())
            .args(["-m", "pip", "freeze"])
            .output();
        let text = out
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        let pinned: Vec<&str> = REQUIREMENTS
            .lines()
            .filter_map(|l| l.split("==").next())
            .filter(|n| !n.starts_with('#') && !n.is_empty())
            .collect();
        text.lines()
            .filter(|l| {
                l.split("==")
                    .next()
                    .is_some_and(|n| pinned.iter().any(|p| p.eq_ignore_ascii_case(n)))
            })
            .map(str::to_string)
            .collect()
    }
}

impl Venv {
    /// Builds dar's Python module in the profile of this xtask binary, as
    /// the `dar` binary is (release for `cargo xtask`, debug in the test
    /// suite, where it reuses the suite's build), and installs it into
    /// this environment, for the `dar-polars` reader: the module measured
    /// is the one of this tree. The same PEP 517 build a user's
    /// `pip install ./crates/dar-python` and `.ci/run` make, in the shared
    /// target dir.
    pub fn install_dar_module(&self) -> Result<(), String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let release = exe.parent().is_some_and(|d| d.ends_with("release"));
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .ok_or("xtask has no workspace")?;
        eprintln!(
            "venv: building dar's Python module ({} wheel)",
            if release { "release" } else { "debug" }
        );
        // maturin's PEP 517 backend takes cargo arguments as `build-args`.
        let args = if release {
            "--locked"
        } else {
            "--locked --profile dev"
        };
        run(pip_install(&self.python())
            .args(["--force-reinstall", "--no-deps"])
            .arg(format!("--config-settings=build-args={args}"))
            .arg(root.join("crates/dar-python"))
            .env("CARGO_TARGET_DIR", crate::target_dir()))
    }
}

/// `python -m pip install --quiet`, for the arguments to follow.
fn pip_install(python: &Path) -> Command {
    let mut cmd = Command::new(python);
    cmd.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
    ]);
    cmd
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let status = cmd.status().map_err(|e| format!("{cmd:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?} failed ({status})"))
    }
}
