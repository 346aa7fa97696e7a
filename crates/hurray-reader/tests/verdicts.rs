//! The verdict of every file the project can read, as text, pinned in
//! `tests/golden/verdicts.txt`: for each file of the fixtures, the invalid
//! fixtures and (when their variables are set) the two corpora, the strict
//! and the permissive verdict of a full check (open, every tensor, every
//! byte of data): `ok`, or the error's message. Restructuring the reader
//! must leave this list as it is, message for message;
//! `HURRAY_UPDATE_GOLDEN=1` rewrites it (then read the diff).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use hurray_reader::{AlignedBytes, HurrayFile, Options};

fn verdict(bytes: &[u8], options: Options) -> String {
    let check = || -> hurray_reader::Result<()> {
        let file = HurrayFile::parse(bytes, options)?;
        for e in file.entries() {
            file.tensor(e.name())?;
        }
        file.validate()
    };
    match check() {
        Ok(()) => "ok".to_string(),
        Err(e) => e.to_string().replace('\n', "\\n"),
    }
}

fn verdicts(set: &str, dir: &Path, out: &mut BTreeMap<String, String>) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".hry"))
        .collect();
    names.sort();
    for name in names {
        let path = dir.join(&name);
        let bytes = AlignedBytes::from_reader(std::fs::File::open(&path).unwrap()).unwrap();
        // `AlignedBytes::read` reads every byte, or refuses a file without
        // the file magic after its first bytes with the very error the
        // parse of every byte gives.
        match AlignedBytes::read(&path) {
            Ok(read) => assert_eq!(&read[..], &bytes[..], "{set}/{name}"),
            Err(e) => {
                assert_eq!(
                    HurrayFile::parse(&bytes, Options::permissive()).err(),
                    Some(e.clone()),
                    "{set}/{name}"
                );
                assert_eq!(
                    HurrayFile::parse(&bytes, Options::strict()).err(),
                    Some(e),
                    "{set}/{name}"
                );
            }
        }
        for (mode, options) in [("strict", Options::strict()), ("permissive", Options::permissive())] {
            out.insert(format!("{set}/{name}\t{mode}"), verdict(&bytes, options));
        }
    }
}

fn corpus(var: &str) -> Option<PathBuf> {
    let Some(dir) = std::env::var_os(var) else {
        eprintln!("skipped: {var} not set (its files' verdicts are not compared)");
        return None;
    };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(dir);
    assert!(
        dir.join("manifest.json").is_file(),
        "{var}={} holds no manifest.json",
        dir.display()
    );
    Some(dir)
}

#[test]
fn every_verdict_is_as_pinned() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let golden_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/verdicts.txt");
    let mut now = BTreeMap::new();
    verdicts("fixtures", &root.join("fixtures"), &mut now);
    verdicts("fixtures/invalid", &root.join("fixtures/invalid"), &mut now);
    let mut sets = vec!["fixtures", "fixtures/invalid"];
    for (var, set) in [("HURRAY_INTEROP_DIR", "interop"), ("HURRAY_CASES_DIR", "cases")] {
        if let Some(dir) = corpus(var) {
            verdicts(set, &dir, &mut now);
            sets.push(set);
        }
    }
    if std::env::var_os("HURRAY_UPDATE_GOLDEN").is_some() {
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
        let (file, mode, value) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
        if sets
            .iter()
            .any(|s| file.rsplit_once('/').is_some_and(|(set, _)| set == *s))
        {
            pinned.insert(format!("{file}\t{mode}"), value.to_string());
        }
    }
    let mut problems = Vec::new();
    for (k, v) in &now {
        match pinned.get(k) {
            Some(p) if p == v => {}
            Some(p) => problems.push(format!("{k}:\n  now    {v}\n  pinned {p}")),
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
        "{} verdicts changed:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
