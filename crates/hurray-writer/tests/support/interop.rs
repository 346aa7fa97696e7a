//! The shared interop corpus (`HURRAY_INTEROP_DIR`): where it is, and
//! reading its files.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The interop directory from `HURRAY_INTEROP_DIR`, or `None` (after
/// printing a skip line) when it is not set. A relative path is taken from
/// the workspace root, where `.ci/run` runs.
pub fn interop_dir(test: &str) -> Option<PathBuf> {
    match std::env::var_os("HURRAY_INTEROP_DIR") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            Some(if dir.is_relative() {
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(dir)
            } else {
                dir
            })
        }
        None => {
            // Straight to stderr: the harness captures `println!` of passing tests.
            let _ = writeln!(std::io::stderr(), "{test}: skipped: HURRAY_INTEROP_DIR not set");
            None
        }
    }
}

/// Reads a reference file; panics if it is missing (the variable is set).
pub fn read_interop(dir: &Path, file: &str) -> Vec<u8> {
    let path = dir.join(file);
    std::fs::read(&path)
        .unwrap_or_else(|e| panic!("HURRAY_INTEROP_DIR is set but {} cannot be read: {e}", path.display()))
}
