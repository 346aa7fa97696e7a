//! Every output of the tool, pinned: for every file of the fixtures, the
//! invalid fixtures and (when their variables are set) the two corpora,
//! five command lines run in the file's folder on its bare name, and the
//! exit code, stdout and stderr of each reduced to a 64-bit FNV-1a hash in
//! `tests/golden/fingerprints.txt`. A change to any byte of any output
//! fails here, naming the file and the command; `HURRAY_UPDATE_GOLDEN=1`
//! rewrites the list (then read the diff). Restructuring the tool must
//! leave this list as it is.

mod support {
    pub mod harness;
}

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use support::harness::{bin, corpus, fixtures_dir, CASES, INTEROP, UPDATE_GOLDEN};

const COMMANDS: [&[&str]; 5] = [
    &[],
    &["--validate"],
    &["--json"],
    &["--json", "--validate"],
    &["--permissive", "--validate"],
];

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// `set/file<TAB>args<TAB>exit<TAB>stdout hash<TAB>stderr hash` for every
/// `.hry` file of `dir`, in name order.
fn fingerprints(set: &str, dir: &Path, out: &mut BTreeMap<String, String>) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".hry"))
        .collect();
    names.sort();
    for name in names {
        for args in COMMANDS {
            let run = bin().current_dir(dir).args(args).arg(&name).output().unwrap();
            let key = format!("{set}/{name}\t{}", args.join(" "));
            let value = format!(
                "{}\t{:016x}\t{:016x}",
                run.status.code().map_or("signal".to_string(), |c| c.to_string()),
                fnv1a(&run.stdout),
                fnv1a(&run.stderr)
            );
            out.insert(key, value);
        }
    }
}

#[test]
fn every_output_is_as_pinned() {
    let golden_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/fingerprints.txt");
    let mut now = BTreeMap::new();
    let fixtures = fixtures_dir();
    fingerprints("fixtures", &fixtures, &mut now);
    fingerprints("fixtures/invalid", &fixtures.join("invalid"), &mut now);
    let mut sets = vec!["fixtures", "fixtures/invalid"];
    for (var, set) in [(INTEROP, "interop"), (CASES, "cases")] {
        if let Some(dir) = corpus(var) {
            fingerprints(set, &dir, &mut now);
            sets.push(set);
        }
    }
    if std::env::var_os(UPDATE_GOLDEN).is_some() {
        let mut text = String::new();
        for (k, v) in &now {
            let _ = writeln!(text, "{k}\t{v}");
        }
        std::fs::write(&golden_path, text).unwrap();
        return;
    }
    let golden = std::fs::read_to_string(&golden_path).unwrap();
    let mut pinned = BTreeMap::new();
    for line in golden.lines() {
        let mut parts = line.splitn(3, '\t');
        let (file, args, value) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
        // Only the sets present in this run (the corpora need their variables).
        if sets
            .iter()
            .any(|s| file.rsplit_once('/').is_some_and(|(set, _)| set == *s))
        {
            pinned.insert(format!("{file}\t{args}"), value.to_string());
        }
    }
    let mut problems = Vec::new();
    for (k, v) in &now {
        match pinned.get(k) {
            Some(p) if p == v => {}
            Some(p) => problems.push(format!("{k}: now {v}, pinned {p}")),
            None => problems.push(format!("{k}: not pinned")),
        }
    }
    problems.extend(
        pinned
            .keys()
            .filter(|k| !now.contains_key(*k))
            .map(|k| format!("{k}: pinned, gone")),
    );
    assert!(
        problems.is_empty(),
        "{} outputs changed:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
