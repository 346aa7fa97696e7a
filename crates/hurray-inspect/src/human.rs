//! The human-readable rendering: aligned tables, sizes like `1.2 KiB`, long
//! values truncated, names and strings escaped so control bytes in a file
//! cannot reach the terminal.

use std::borrow::Cow;
use std::io::{self, Write};

use hurray_reader::KvValue;

use crate::model::{PaddingCheck, Report, TensorReport};

/// Longest tensor name, KV key or shape shown in a table, in characters.
const NAME_MAX: usize = 48;
/// Longest KV value shown, in characters.
const VALUE_MAX: usize = 72;
/// Array elements and bytes shown before `...`.
const ELEMENTS_SHOWN: usize = 16;

/// Writes the report of `file_name` as tables.
///
/// # Errors
/// Whatever `out` returns.
pub fn render(report: &Report<'_>, file_name: &str, out: &mut impl Write) -> io::Result<()> {
    let (major, minor) = report.container_version;
    let flags = if report.flags.is_empty() {
        "none".to_owned()
    } else {
        report.flags.join(" | ")
    };
    writeln!(out, "File: {file_name}")?;
    let mut facts = Table::new(&[], &[]);
    facts.row(vec!["container_version".into(), format!("{major}.{minor}")]);
    facts.row(vec!["file_flags".into(), flags]);
    facts.row(vec![
        "data_buffer_alignment".into(),
        report.data_buffer_alignment.to_string(),
    ]);
    facts.row(vec!["tensors".into(), report.tensors.len().to_string()]);
    facts.row(vec!["kv entries".into(), report.kv.len().to_string()]);
    facts.write(out)?;

    if !report.kv.is_empty() {
        writeln!(out, "\nKV metadata ({}):", report.kv.len())?;
        let mut kv = Table::new(&["KEY", "TYPE", "VALUE"], &[]);
        for (key, value) in &report.kv {
            kv.row(vec![
                truncate(&key.escape_debug().to_string(), NAME_MAX).into_owned(),
                kv_type(*value),
                truncate(&kv_value(*value), VALUE_MAX).into_owned(),
            ]);
        }
        kv.write(out)?;
    }

    writeln!(out, "\nTensors ({}):", report.tensors.len())?;
    if !report.tensors.is_empty() {
        let mut table = Table::new(
            &[
                "NAME",
                "DTYPE",
                "LAYOUT",
                "SHAPE",
                "NNZ",
                "BUFFERS",
                "BYTES",
                "DATA OFFSET",
            ],
            &[4, 5, 6, 7],
        );
        for t in &report.tensors {
            table.row(tensor_row(t));
        }
        table.write(out)?;
    }

    match &report.padding {
        Some(padding) => validation(report, padding, out),
        None => unreadable(report, out),
    }
}

fn tensor_row(t: &TensorReport<'_>) -> Vec<String> {
    let name = display_name(t.name);
    let data_offset = t.data_offset.to_string();
    let Some(info) = &t.info else {
        let unknown = || "?".to_owned();
        return vec![
            name,
            unknown(),
            unknown(),
            unknown(),
            String::new(),
            unknown(),
            unknown(),
            data_offset,
        ];
    };
    let shape = info.shape.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    vec![
        name,
        info.element_type.map_or_else(|| "?".to_owned(), |e| e.to_string()),
        info.layout.to_string(),
        truncate(&format!("[{shape}]"), NAME_MAX).into_owned(),
        info.nnz.map(|n| n.to_string()).unwrap_or_default(),
        info.buffers.len().to_string(),
        human_bytes(info.total_bytes()),
        data_offset,
    ]
}

/// With `--validate`: one line per tensor, warnings, then the padding check.
fn validation(report: &Report<'_>, padding: &PaddingCheck, out: &mut impl Write) -> io::Result<()> {
    let mode = if report.strict { "strict" } else { "permissive" };
    writeln!(out, "\nValidation ({mode} mode):")?;
    let mut table = Table::new(&[], &[]);
    for t in &report.tensors {
        let name = display_name(t.name);
        match (&t.error, t.info.as_ref().and_then(|i| i.not_viewable)) {
            (Some(e), _) => table.row(vec![name.clone(), "INVALID".into(), e.to_string()]),
            (None, Some(why)) => table.row(vec![name.clone(), "OK".into(), format!("(data not checked: {why})")]),
            (None, None) => table.row(vec![name.clone(), "OK".into()]),
        }
        for w in &t.warnings {
            table.row(vec![name.clone(), "WARNING".into(), w.clone()]);
        }
    }
    match padding {
        PaddingCheck::Ok => table.row(vec!["(padding)".into(), "OK".into()]),
        PaddingCheck::Invalid(e) => table.row(vec!["(padding)".into(), "INVALID".into(), e.to_string()]),
        PaddingCheck::Skipped(why) => table.row(vec!["(padding)".into(), "SKIPPED".into(), format!("({why})")]),
    }
    table.write(out)
}

/// Without `--validate`: the tensors whose descriptor could not be read.
fn unreadable(report: &Report<'_>, out: &mut impl Write) -> io::Result<()> {
    let failed: Vec<&TensorReport<'_>> = report.tensors.iter().filter(|t| t.error.is_some()).collect();
    if failed.is_empty() {
        return Ok(());
    }
    writeln!(out, "\nUnreadable tensors ({}):", failed.len())?;
    let mut table = Table::new(&[], &[]);
    for t in failed {
        let error = t.error.as_ref().map(ToString::to_string).unwrap_or_default();
        table.row(vec![display_name(t.name), "INVALID".into(), error]);
    }
    table.write(out)
}

fn display_name(name: &str) -> String {
    truncate(&name.escape_debug().to_string(), NAME_MAX).into_owned()
}

/// `string`, `int64`, ..., `array<int64>[3]`.
fn kv_type(value: KvValue<'_>) -> String {
    match value {
        KvValue::Array(a) => format!("array<{}>[{}]", a.element_type().as_str(), a.len()),
        other => other.kv_type().as_str().to_owned(),
    }
}

/// A compact rendering of a KV value: strings quoted and escaped, floats in
/// shortest round-trip form, bytes as hex, at most [`ELEMENTS_SHOWN`]
/// array elements or bytes.
fn kv_value(value: KvValue<'_>) -> String {
    match value {
        KvValue::String(s) => {
            // Escape only what can be shown, so a huge string costs little.
            let shown: String = s.chars().take(VALUE_MAX).collect();
            format!("\"{}\"", shown.escape_debug())
        }
        KvValue::Int64(n) => n.to_string(),
        KvValue::Uint64(n) => n.to_string(),
        KvValue::Float64(x) => format!("{x:?}"),
        KvValue::Bool(b) => b.to_string(),
        KvValue::Bytes(bytes) => {
            if bytes.is_empty() {
                return "(empty)".to_owned();
            }
            let hex: Vec<String> = bytes.iter().take(ELEMENTS_SHOWN).map(|b| format!("{b:02x}")).collect();
            let more = if bytes.len() > ELEMENTS_SHOWN {
                format!(" ... ({} bytes)", bytes.len())
            } else {
                String::new()
            };
            format!("{}{more}", hex.join(" "))
        }
        KvValue::Array(a) => {
            let mut items: Vec<String> = a.iter().take(ELEMENTS_SHOWN).map(kv_value).collect();
            if usize::try_from(a.len()).map_or(true, |n| n > ELEMENTS_SHOWN) {
                items.push(format!("... ({} elements)", a.len()));
            }
            format!("[{}]", items.join(", "))
        }
    }
}

/// Cuts `s` to at most `max` characters, marking the cut with `...`.
fn truncate(s: &str, max: usize) -> Cow<'_, str> {
    if s.chars().count() <= max {
        return Cow::Borrowed(s);
    }
    let mut cut: String = s.chars().take(max.saturating_sub(3)).collect();
    cut.push_str("...");
    Cow::Owned(cut)
}

/// `108 B`, `1.2 KiB`, `3.0 GiB`: one decimal, binary units.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let n = u128::from(n);
    let mut unit = 1024u128;
    for name in UNITS {
        // Tenths of this unit, rounded to nearest.
        let tenths = (n * 10 + unit / 2) / unit;
        if tenths < 10240 || name == "EiB" {
            return format!("{}.{} {name}", tenths / 10, tenths % 10);
        }
        unit *= 1024;
    }
    format!("{n} B")
}

/// Columns separated by two spaces; `right` lists right-aligned columns.
/// Rows may be shorter than the header; no trailing spaces are written.
struct Table {
    header: Vec<String>,
    right: Vec<usize>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn new(header: &[&str], right: &[usize]) -> Self {
        Table {
            header: header.iter().map(|h| (*h).to_owned()).collect(),
            right: right.to_vec(),
            rows: Vec::new(),
        }
    }

    fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn write(&self, out: &mut impl Write) -> io::Result<()> {
        let all = || std::iter::once(&self.header).chain(&self.rows);
        let columns = all().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                all()
                    .filter_map(|r| r.get(c))
                    .map(|cell| cell.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for row in all().filter(|r| !r.is_empty()) {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                let width = widths.get(c).copied().unwrap_or(0);
                let pad = " ".repeat(width.saturating_sub(cell.chars().count()));
                line.push_str("  ");
                if self.right.contains(&c) {
                    line.push_str(&pad);
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    line.push_str(&pad);
                }
            }
            writeln!(out, "{}", line.trim_end())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use hurray_reader::{ElementType, Error, Layout};

    use super::*;
    use crate::model::{BufferInfo, TensorInfo};

    fn render_to_string(report: &Report<'_>) -> String {
        let mut out = Vec::new();
        render(report, "m.hry", &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn csc_tensor(name: &str) -> TensorReport<'_> {
        TensorReport {
            name,
            data_offset: 4096,
            info: Some(TensorInfo {
                element_type: Some(ElementType::Float32),
                layout: Layout::Csc,
                shape: vec![4, 5],
                nnz: Some(5),
                buffers: vec![
                    BufferInfo {
                        byte_size: 20,
                        alignment: 64,
                        offset: 4096,
                    },
                    BufferInfo {
                        byte_size: 40,
                        alignment: 64,
                        offset: 8192,
                    },
                    BufferInfo {
                        byte_size: 48,
                        alignment: 64,
                        offset: 12288,
                    },
                ],
                not_viewable: None,
            }),
            validated: false,
            error: None,
            warnings: Vec::new(),
        }
    }

    fn report<'a>(tensors: Vec<TensorReport<'a>>, kv: Vec<(&'a str, KvValue<'a>)>) -> Report<'a> {
        Report {
            container_version: (1, 0),
            flags: vec!["HAS_INDEX_CRC32C".into()],
            data_buffer_alignment: 4096,
            strict: true,
            kv,
            tensors,
            padding: None,
        }
    }

    #[test]
    fn summary_golden() {
        let dense = TensorReport {
            name: "w\u{0}1",
            data_offset: 16384,
            info: Some(TensorInfo {
                element_type: Some(ElementType::Bfloat16),
                layout: Layout::RowMajor,
                shape: vec![1024, 1024],
                nnz: None,
                buffers: vec![BufferInfo {
                    byte_size: 2 << 20,
                    alignment: 64,
                    offset: 16384,
                }],
                not_viewable: None,
            }),
            validated: false,
            error: None,
            warnings: Vec::new(),
        };
        let kv = vec![
            ("general.name", KvValue::String("tab\there")),
            ("n", KvValue::Int64(-42)),
            ("nan", KvValue::Float64(f64::NAN)),
            ("tiny", KvValue::Float64(5e-324)),
            ("blob", KvValue::Bytes(&[0, 1, 0x7f, 0x80, 0xff])),
        ];
        let expected = "\
File: m.hry
  container_version      1.0
  file_flags             HAS_INDEX_CRC32C
  data_buffer_alignment  4096
  tensors                2
  kv entries             5

KV metadata (5):
  KEY           TYPE     VALUE
  general.name  string   \"tab\\there\"
  n             int64    -42
  nan           float64  NaN
  tiny          float64  5e-324
  blob          bytes    00 01 7f 80 ff

Tensors (2):
  NAME         DTYPE     LAYOUT     SHAPE         NNZ  BUFFERS    BYTES  DATA OFFSET
  csc_example  float32   csc        [4, 5]          5        3    108 B         4096
  w\\01         bfloat16  row_major  [1024, 1024]             1  2.0 MiB        16384
";
        assert_eq!(
            render_to_string(&report(vec![csc_tensor("csc_example"), dense], kv)),
            expected
        );
    }

    #[test]
    fn validation_lines() {
        let mut bad = csc_tensor("B");
        bad.error = Some(Error::NotFound { name: "B".into() });
        bad.warnings.push("advisory".into());
        let unreadable = TensorReport {
            info: None,
            error: Some(Error::NotFound { name: "C".into() }),
            ..csc_tensor("C")
        };
        let mut r = report(vec![csc_tensor("A"), bad, unreadable], Vec::new());
        r.padding = Some(PaddingCheck::Skipped("a tensor's descriptor could not be read"));
        let text = render_to_string(&r);
        let tail = text.split("Validation (strict mode):\n").nth(1).unwrap();
        assert_eq!(
            tail,
            "  A          OK
  B          INVALID  no tensor named 'B' in the index
  B          WARNING  advisory
  C          INVALID  no tensor named 'C' in the index
  (padding)  SKIPPED  (a tensor's descriptor could not be read)
"
        );
        assert!(
            text.contains("\n  C     ?        ?       ?                  ?      ?         4096\n"),
            "{text}"
        );
    }

    #[test]
    fn unreadable_tensors_listed_without_validate() {
        let mut bad = csc_tensor("B");
        bad.info = None;
        bad.error = Some(Error::NotFound { name: "B".into() });
        let text = render_to_string(&report(vec![bad], Vec::new()));
        assert!(
            text.ends_with("\nUnreadable tensors (1):\n  B  INVALID  no tensor named 'B' in the index\n"),
            "{text}"
        );
    }

    #[test]
    fn sizes_are_human_readable() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1024), "1.0 KiB");
        assert_eq!(human_bytes(1229), "1.2 KiB");
        assert_eq!(human_bytes(1024 * 1024 - 1), "1.0 MiB");
        assert_eq!(human_bytes(1288490189), "1.2 GiB");
        assert_eq!(human_bytes(u64::MAX), "16.0 EiB");
    }

    #[test]
    fn long_values_are_truncated() {
        let long = "x".repeat(1000);
        let shown = truncate(&kv_value(KvValue::String(&long)), VALUE_MAX).into_owned();
        assert_eq!(shown.chars().count(), VALUE_MAX);
        assert!(shown.starts_with("\"xxx") && shown.ends_with("..."));
        let bytes = [0xabu8; 40];
        assert_eq!(
            kv_value(KvValue::Bytes(&bytes)),
            format!("{} ... (40 bytes)", vec!["ab"; ELEMENTS_SHOWN].join(" "))
        );
        assert_eq!(truncate("Grüße", 5), "Grüße");
        assert_eq!(truncate("Grüße, 世界", 6), "Grü...");
    }
}
