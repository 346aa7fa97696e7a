//! Every spec section the code cites in a string (the rules errors name,
//! `"layouts/csc.md § Storage Invariants (2)"`) is a heading of that spec
//! file, and a subsection is cited as its path from the `##` heading above
//! it: `"file-format.md § File Header › File Flags"`, never a bare
//! `§ File Flags`. Checks the reader's and the writer's `src/` against the
//! spec in `HURRAY_SPEC_DIR` (`.ci/run` sets `../shared/spec`); skipped,
//! with a line saying so, when the variable is unset.

use std::io::Write;
use std::path::{Path, PathBuf};

/// A heading of a spec file: its level (`##` is 2) and its text.
struct Heading {
    level: usize,
    text: String,
}

fn headings(markdown: &str) -> Vec<Heading> {
    markdown
        .lines()
        .filter_map(|line| {
            let level = line.bytes().take_while(|&b| b == b'#').count();
            let text = line.get(level..)?.strip_prefix(' ')?;
            (level >= 2).then(|| Heading {
                level,
                text: text.trim().to_owned(),
            })
        })
        .collect()
}

/// Whether `cited` names `heading`: equal, or its start before a
/// parenthesis (`Storage Invariants (2)` cites `Storage Invariants`,
/// `CSC (0x08)` cites `CSC (\`0x08\`)`). Backticks do not count.
fn names(cited: &str, heading: &str) -> bool {
    let plain = |s: &str| s.replace('`', "");
    let (cited, heading) = (plain(cited), plain(heading));
    let bare = |s: &str| s.split(" (").next().unwrap_or_default().trim().to_owned();
    cited == heading || bare(&cited) == heading || bare(&cited) == bare(&heading)
}

/// Checks that `path` (`["File Header", "File Flags"]`) is a chain of
/// headings: the first at level 2, each next one inside the one before.
fn resolve(headings: &[Heading], path: &[&str]) -> Result<(), String> {
    let (mut from, mut to, mut parent_level) = (0, headings.len(), 1);
    for (depth, name) in path.iter().enumerate() {
        let inside = headings.get(from..to).unwrap_or_default();
        let found = inside
            .iter()
            .position(|h| h.level > parent_level && names(name, &h.text))
            .ok_or_else(|| format!("no heading '{name}' there"))?;
        let heading = &inside[found];
        if depth == 0 && heading.level != 2 {
            let parent = headings[..from + found]
                .iter()
                .rev()
                .find(|h| h.level < heading.level)
                .map_or("?", |h| h.text.as_str());
            return Err(format!("'{name}' is a subsection: cite '{parent} › {name}'"));
        }
        let start = from + found;
        let end = headings[start + 1..to]
            .iter()
            .position(|h| h.level <= heading.level)
            .map_or(to, |p| start + 1 + p);
        (from, to, parent_level) = (start + 1, end, heading.level);
    }
    Ok(())
}

/// The citations in string literals of `source`: `(line, file, path)` for
/// each `FILE.md § A › B` inside quotes, the path ending at the first of
/// `" ; , : ( ) '`.
fn citations(source: &str) -> Vec<(usize, String, Vec<String>)> {
    let mut out = Vec::new();
    for (n, line) in source.lines().enumerate() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        for (at, _) in line.match_indices(".md § ") {
            let before = &line[..at];
            if before.matches('"').count() % 2 == 0 {
                continue; // not inside a string literal
            }
            let file_start = before
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || "-/_*".contains(c)))
                .map_or(0, |p| p + 1);
            let file = format!("{}.md", &before[file_start..]);
            let rest = &line[at + ".md § ".len()..];
            let end = rest.find(['"', ';', ',', ':', '(', ')', '\'']).unwrap_or(rest.len());
            let path = rest[..end].split('›').map(|s| s.trim().to_owned()).collect();
            out.push((n + 1, file, path));
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    entries
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect()
}

#[test]
fn every_cited_section_is_a_heading_of_the_spec() {
    let Some(spec) = std::env::var_os("HURRAY_SPEC_DIR") else {
        let _ = writeln!(
            std::io::stderr(),
            "skipped: HURRAY_SPEC_DIR not set (set it to the spec folder to run this test)"
        );
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let spec = root.join(spec);
    assert!(
        spec.join("NOTES.md").is_file(),
        "HURRAY_SPEC_DIR is set but {} has no NOTES.md",
        spec.display()
    );
    let mut sources = Vec::new();
    for krate in ["hurray-reader", "hurray-writer"] {
        rust_files(&root.join("crates").join(krate).join("src"), &mut sources);
    }
    let (mut checked, mut wrong) = (0, Vec::new());
    for source in &sources {
        let text = std::fs::read_to_string(source).unwrap();
        for (line, file, path) in citations(&text) {
            let path: Vec<&str> = path.iter().map(String::as_str).collect();
            // `quantization/*.md § Referenced Buffers`: some file there has it.
            let files = match file.split_once("*.md") {
                Some((dir, _)) => markdown_files(&spec.join(dir)),
                None => vec![spec.join(&file)],
            };
            let mut result = Err(format!("no file {file}"));
            for md in &files {
                result = std::fs::read_to_string(md)
                    .map_err(|e| format!("{file}: {e}"))
                    .and_then(|markdown| resolve(&headings(&markdown), &path));
                if result.is_ok() {
                    break;
                }
            }
            if let Err(why) = result {
                let shown = source.strip_prefix(&root).unwrap_or(source).display();
                wrong.push(format!("{shown}:{line}: {file} § {}: {why}", path.join(" › ")));
            }
            checked += 1;
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {checked} citations:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    // The reader's rule table alone cites more than 80 sections.
    assert!(checked > 80, "only {checked} citations found");
}

#[test]
fn a_bare_subsection_is_refused() {
    let spec = headings("## File Header\n### File Flags\n## Trailer\n## Index Section\n### Index Encoding\n");
    assert_eq!(resolve(&spec, &["File Header", "File Flags"]), Ok(()));
    assert_eq!(resolve(&spec, &["Trailer"]), Ok(()));
    assert_eq!(
        resolve(&spec, &["File Flags"]),
        Err("'File Flags' is a subsection: cite 'File Header › File Flags'".to_owned())
    );
    // A subsection under the wrong parent, and one that is not there.
    assert!(resolve(&spec, &["Trailer", "File Flags"]).is_err());
    assert!(resolve(&spec, &["File Header", "Index Encoding"]).is_err());
    assert!(resolve(&spec, &["Footer"]).is_err());
    assert_eq!(
        citations(r#"    rule: "layouts/csc.md § Storage Invariants (2)", // csc.md § Buffer Size"#),
        [(1, "layouts/csc.md".to_owned(), vec!["Storage Invariants".to_owned()])]
    );
}
