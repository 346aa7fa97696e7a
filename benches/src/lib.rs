//! Shared code of the `hurray-reader` benchmarks (issue #4).
//!
//! - [`Ctx`]: full run (`cargo bench`, which passes `--bench`) or smoke run
//!   (`cargo test`, which does not): where inputs live and how big they are.
//! - [`data`]: deterministic matrices streamed through `hurray-writer`
//!   (generator callbacks, no giant `Vec`s), cached on disk outside the repo.
//! - [`kernels`]: ceilings (plain sums over the index bytes), a naive
//!   element-by-element invariant check, a two-thread validation split by
//!   position, and SpMV (not in the library), written against the public
//!   slices only.
//! - [`timing`]: medians over repeated runs for the bins that print JSON.
//!
//! Run everything with `benches/report.sh`; see `docs/performance.md`.
//! One `unsafe` block: the cache hint of [`kernels::gather_sum`]'s
//! prefetching ceiling, as in the library.

#![deny(unsafe_code)]

pub mod data;
pub mod kernels;
pub mod timing;

use std::path::{Path, PathBuf};

/// How a bench binary was started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunMode {
    /// `cargo bench`: real inputs in the cache folder, real measurements.
    Full,
    /// `cargo test` (criterion's test mode): tiny inputs in a tempdir, each
    /// routine run once.
    Smoke,
}

impl RunMode {
    /// `cargo bench` passes `--bench` to `harness = false` targets; `cargo
    /// test` does not. `--test` or `--list` (criterion's own flags) also
    /// mean "do not generate gigabytes".
    pub fn from_args() -> Self {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let has = |flag: &str| args.iter().any(|a| a == flag);
        if has("--bench") && !has("--test") && !has("--list") {
            RunMode::Full
        } else {
            RunMode::Smoke
        }
    }

    /// True for [`RunMode::Full`].
    pub fn is_full(self) -> bool {
        self == RunMode::Full
    }
}

/// The context of one bench binary: mode and input folder.
#[derive(Debug)]
pub struct Ctx {
    /// Full or smoke.
    pub mode: RunMode,
    dir: PathBuf,
    _tmp: Option<tempfile::TempDir>,
}

impl Ctx {
    /// Detects the mode from the arguments; full runs use [`cache_dir`],
    /// smoke runs a fresh tempdir (deleted on drop).
    ///
    /// # Panics
    /// When the folder cannot be created.
    pub fn from_args() -> Self {
        Self::new(RunMode::from_args())
    }

    /// A context for `mode`.
    ///
    /// # Panics
    /// When the folder cannot be created.
    pub fn new(mode: RunMode) -> Self {
        match mode {
            RunMode::Full => {
                let dir = cache_dir();
                std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
                eprintln!("hurray-benches: full run, inputs in {}", dir.display());
                Ctx { mode, dir, _tmp: None }
            }
            RunMode::Smoke => {
                let tmp = tempfile::tempdir().expect("tempdir");
                Ctx {
                    mode,
                    dir: tmp.path().to_path_buf(),
                    _tmp: Some(tmp),
                }
            }
        }
    }

    /// Where inputs are generated.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `spec` in [`dir`](Self::dir), generated if missing; in a
    /// full run also settled in the page cache
    /// ([`data::settle_page_cache`]).
    ///
    /// # Panics
    /// On generation or I/O errors.
    pub fn matrix(&self, spec: data::MatrixSpec) -> PathBuf {
        let path = spec.ensure(self.dir()).expect("generate input");
        if self.mode.is_full() {
            data::settle_page_cache(&path).expect("settle input in the page cache");
        }
        path
    }

    /// `full` in a full run, `smoke` otherwise.
    pub fn pick<T>(&self, full: T, smoke: T) -> T {
        if self.mode.is_full() {
            full
        } else {
            smoke
        }
    }
}

/// The cache folder for generated inputs: `$HURRAY_BENCH_DIR`, else
/// `~/.cache/hurray-bench` (`$XDG_CACHE_HOME/hurray-bench` when set). Never
/// inside the repository.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("HURRAY_BENCH_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("hurray-bench");
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    home.join(".cache").join("hurray-bench")
}

/// Where full runs of the non-criterion binaries (`heap`, `hurray-time`,
/// the peers script) leave their JSON results for the `report` binary.
pub fn results_dir() -> PathBuf {
    cache_dir().join("results")
}

/// Writes `value` as pretty JSON to `results_dir()/name`, creating the folder.
///
/// # Panics
/// On I/O errors.
pub fn write_result(name: &str, value: &serde_json::Value) -> PathBuf {
    let dir = results_dir();
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    let path = dir.join(name);
    let text = serde_json::to_string_pretty(value).expect("serialise");
    std::fs::write(&path, text + "\n").unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    path
}

/// splitmix64: the deterministic hash behind every generated matrix.
#[inline]
pub fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A human size label: `8MiB`, `2GiB`, `16KiB`.
pub fn size_label(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (unit, name) in UNITS {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{name}", bytes / unit);
        }
    }
    format!("{bytes}B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(size_label(8 << 20), "8MiB");
        assert_eq!(size_label(8 << 30), "8GiB");
        assert_eq!(size_label(16 << 10), "16KiB");
        assert_eq!(size_label(100), "100B");
    }
}
