//! Helpers shared by the CLI test files: the corpora, running the binary,
//! reading its output, comparing JSON exactly, golden files.
#![allow(dead_code)] // each test file uses a different subset

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::{json, Value};

pub const INTEROP: &str = "HURRAY_INTEROP_DIR";
pub const CASES: &str = "HURRAY_CASES_DIR";
/// Set to rewrite the golden files from the current output.
pub const UPDATE_GOLDEN: &str = "HURRAY_UPDATE_GOLDEN";

/// The corpus directory named by `var`, or `None` (after saying so) when unset.
pub fn corpus(var: &str) -> Option<PathBuf> {
    let Some(dir) = std::env::var_os(var) else {
        // Straight to stderr: the harness captures `println!` of passing tests.
        let _ = writeln!(std::io::stderr(), "skipped: {var} not set");
        return None;
    };
    // Relative to the workspace root, as `.ci/run` sets it (tests run in the crate's folder).
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(dir);
    assert!(
        dir.join("manifest.json").is_file(),
        "{var}={} holds no manifest.json",
        dir.display()
    );
    Some(dir)
}

pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

pub fn path(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    assert!(p.is_file(), "missing corpus file {}", p.display());
    p
}

pub fn manifest(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

pub fn entry<'m>(manifest: &'m Value, file: &str) -> &'m Value {
    files(manifest)
        .find(|f| f["file"] == file)
        .unwrap_or_else(|| panic!("{file} not in the manifest"))
}

pub fn files(manifest: &Value) -> impl Iterator<Item = &Value> {
    manifest["files"].as_array().unwrap().iter()
}

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hurray-inspect"))
}

/// Runs `hurray-inspect ARGS FILE`.
pub fn inspect(args: &[&str], file: &Path) -> Output {
    bin().args(args).arg(file).output().unwrap()
}

pub fn stdout(out: &Output) -> &str {
    std::str::from_utf8(&out.stdout).unwrap()
}

pub fn stderr(out: &Output) -> &str {
    std::str::from_utf8(&out.stderr).unwrap()
}

pub fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(out)))
}

/// Asserts exit 0 and an empty stderr; returns stdout parsed as JSON.
pub fn ok_json(args: &[&str], file: &Path) -> Value {
    let out = inspect(args, file);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?} {}: {}",
        file.display(),
        stderr(&out)
    );
    assert_eq!(stderr(&out), "", "{args:?}");
    json_of(&out)
}

/// Asserts exit status 1 and exactly one stderr line `error: FILE: ...`
/// naming a byte offset; returns the message after `error: FILE: `.
pub fn assert_one_error_line(out: &Output, file: &Path) -> String {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(1), "{}: stderr {err}", file.display());
    assert_eq!(err.lines().count(), 1, "{}: {err}", file.display());
    let prefix = format!("error: {}: ", file.display());
    let message = err.trim_end().strip_prefix(&prefix).unwrap_or_else(|| panic!("{err}"));
    assert!(message.contains("offset"), "{}: {err}", file.display());
    message.to_owned()
}

/// Asserts that `--json` printed the object of an error that came before
/// any output: `error` is `message` (the stderr line after `FILE: `), and
/// `error_at` gives the field, offset and rule that the message names.
pub fn assert_json_failure(out: &Output, message: &str) {
    let v = json_of(out);
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert!(
        keys.iter().all(|k| ["error", "error_at", "tensor"].contains(k)),
        "{keys:?}"
    );
    assert_eq!(v["error"], message);
    let at = &v["error_at"];
    if let Some(field) = at["field"].as_str() {
        let offset = at["offset"].as_u64().unwrap();
        assert!(message.contains(&format!("{field} at offset {offset}")), "{v}");
    }
    let rule = at["rule"].as_str().unwrap();
    assert!(message.ends_with(&format!("({rule})")), "{v}");
    if let Some(tensor) = v["tensor"].as_str() {
        assert!(message.starts_with(&format!("tensor '{tensor}'")), "{v}");
    }
}

/// Asserts exit status 2 and one stderr line `error: FILE: ...`; returns
/// the message after the prefix.
pub fn assert_usage_error(out: &Output, file: &Path) -> String {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{}: stderr {err}", file.display());
    assert_eq!(err.lines().count(), 1, "{}: {err}", file.display());
    assert!(out.stdout.is_empty(), "{}", stdout(out));
    let prefix = format!("error: {}: ", file.display());
    err.trim_end()
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{err}"))
        .to_owned()
}

/// The manifest spells non-finite floats "NaN", "Infinity", "-Infinity";
/// the CLI "nan", "inf", "-inf".
pub fn cli_value(v: &Value) -> Value {
    match v {
        Value::String(s) if s == "NaN" => json!("nan"),
        Value::String(s) if s == "Infinity" => json!("inf"),
        Value::String(s) if s == "-Infinity" => json!("-inf"),
        Value::Array(items) => items.iter().map(cli_value).collect(),
        other => other.clone(),
    }
}

/// Like `==`, but numbers must also agree in kind (integer or float) and
/// floats bit for bit, so `-0.0` differs from `0.0` and `1` from `1.0`.
pub fn assert_same(actual: &Value, expected: &Value, at: &str) {
    match (actual, expected) {
        (Value::Number(a), Value::Number(b)) => {
            let same = match (a.as_f64(), a.is_f64(), b.is_f64()) {
                (Some(x), true, true) => b.as_f64().is_some_and(|y| x.to_bits() == y.to_bits()),
                (_, false, false) => a == b,
                _ => false,
            };
            assert!(same, "{at}: {a} != {b}");
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "{at}: {actual} != {expected}");
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                assert_same(x, y, &format!("{at}[{i}]"));
            }
        }
        (Value::Object(a), Value::Object(b)) => {
            let keys = |m: &serde_json::Map<String, Value>| m.keys().cloned().collect::<Vec<_>>();
            assert_eq!(keys(a), keys(b), "{at}: keys differ");
            for (k, x) in a {
                assert_same(x, &b[k], &format!("{at}.{k}"));
            }
        }
        _ => assert_eq!(actual, expected, "{at}"),
    }
}

/// Compares stdout with `tests/golden/{golden}`, where `{FILE}` stands for
/// the path. With `HURRAY_UPDATE_GOLDEN=1` the file is rewritten instead.
pub fn assert_golden(out: &Output, golden: &str, file: &Path) {
    let golden_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(golden);
    let file_text = file.display().to_string();
    if std::env::var_os(UPDATE_GOLDEN).is_some() {
        std::fs::write(&golden_path, stdout(out).replace(&file_text, "{FILE}")).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&golden_path)
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e} (run with {UPDATE_GOLDEN}=1 to create it)",
                golden_path.display()
            )
        })
        .replace("{FILE}", &file_text);
    assert_eq!(
        stdout(out),
        expected,
        "differs from {} (run with {UPDATE_GOLDEN}=1 to accept the new output)",
        golden_path.display()
    );
}
