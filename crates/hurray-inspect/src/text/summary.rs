//! The summary as text (`FILE`, `FILE --validate`): the file's facts, the
//! KV metadata, a table of the tensors, and the verdicts or the tensors
//! that could not be read.

use std::io::{self, Write};

use hurray_reader::KvValue;

use crate::report::header::dtype_name;
use crate::report::summary::{PaddingCheck, Report, TensorInfo, TensorReport};
use crate::shown::{display_name, human_bytes, truncate, NAME_MAX};
use crate::text::parts::{verdict_row, VALUE_MAX};
use crate::text::table::Table;

/// Array elements and bytes shown before `...`.
const ELEMENTS_SHOWN: usize = 16;

/// Writes the report of `file_name` as tables.
///
/// # Errors
/// Whatever `out` returns.
pub fn render(report: &Report<'_, '_>, file_name: &str, out: &mut impl Write) -> io::Result<()> {
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
        let table = Table::new(
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
        // One row per tensor, built twice (to measure, to write), never held.
        table.stream(|| report.tensors.iter().map(|t| tensor_row(&t)), out)?;
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
            unknown(),
            unknown(),
            unknown(),
            data_offset,
        ];
    };
    let shape = info.shape.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    // Buffers not located (an unresolved tensor, an unknown layout): what
    // its descriptor says, but no buffer figures.
    let (buffers, bytes) = match &info.buffers {
        Some(buffers) => (buffers.len().to_string(), human_bytes(info.total_bytes())),
        None => ("?".to_owned(), "?".to_owned()),
    };
    vec![
        name,
        dtype_with_scheme(info),
        info.layout.to_string(),
        truncate(&format!("[{shape}]"), NAME_MAX).into_owned(),
        info.nnz.map(|n| n.to_string()).unwrap_or_default(),
        buffers,
        bytes,
        data_offset,
    ]
}

/// The DTYPE of the summary table: the element type's name, and for a
/// quantized tensor its scheme, `int8 · per_tensor_affine`.
fn dtype_with_scheme(info: &TensorInfo) -> String {
    let dtype = dtype_name(info.element_type, info.type_tag);
    match &info.quantization {
        Some(scheme) => format!("{dtype} · {scheme}"),
        None => dtype,
    }
}

/// With `--validate`: one line per tensor, warnings, then the padding check.
fn validation(report: &Report<'_, '_>, padding: &PaddingCheck, out: &mut impl Write) -> io::Result<()> {
    let mode = if report.strict { "strict" } else { "permissive" };
    writeln!(out, "\nValidation ({mode} mode):")?;
    let padding_row = || match padding {
        PaddingCheck::Ok => vec!["(padding)".into(), "OK".into()],
        PaddingCheck::Invalid(e) => vec!["(padding)".into(), "INVALID".into(), e.to_string()],
        PaddingCheck::Skipped(why) => vec!["(padding)".into(), "SKIPPED".into(), format!("({why})")],
    };
    let tensors = &report.tensors;
    let rows = || {
        (0..tensors.len())
            .flat_map(|position| {
                // Most rows are `NAME  OK`: no need to resolve the tensor again.
                let t = match tensors.plain_ok(position) {
                    Some(name) => return vec![vec![display_name(name), "OK".into()]],
                    None => tensors.get(position),
                };
                let Some(t) = t else { return Vec::new() };
                let name = display_name(t.name);
                let info = t.info.as_ref();
                let verdict = verdict_row(
                    name.clone(),
                    t.error.as_ref(),
                    info.map(|i| i.layout),
                    info.and_then(|i| i.not_viewable),
                );
                let warnings = t.warnings.into_iter().map(|w| vec![name.clone(), "WARNING".into(), w]);
                std::iter::once(verdict).chain(warnings).collect()
            })
            .chain(std::iter::once_with(padding_row))
    };
    Table::new(&[], &[]).stream(rows, out)
}

/// Without `--validate`: the tensors that could not be resolved (descriptor or buffers).
fn unreadable(report: &Report<'_, '_>, out: &mut impl Write) -> io::Result<()> {
    let count = report.tensors.failed_count();
    if count == 0 {
        return Ok(());
    }
    writeln!(out, "\nUnreadable tensors ({count}):")?;
    let rows = || {
        report.tensors.failed().map(|t| {
            let error = t.error.as_ref().map(ToString::to_string).unwrap_or_default();
            vec![display_name(t.name), "INVALID".into(), error]
        })
    };
    Table::new(&[], &[]).stream(rows, out)
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

#[cfg(test)]
mod tests {
    use hurray_reader::{BufferRole, ElementType, Error, Layout};

    use super::*;
    use crate::report::summary::{BufferInfo, Tensors};

    fn render_to_string(report: &Report<'_, '_>) -> String {
        let mut out = Vec::new();
        render(report, "m.hry", &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn csc_tensor(name: &str) -> TensorReport<'_> {
        TensorReport {
            name,
            data_offset: 4096,
            resolved: true,
            info: Some(TensorInfo {
                element_type: Some(ElementType::Float32),
                type_tag: 0x03,
                layout: Layout::Csc,
                shape: vec![4, 5],
                nnz: Some(5),
                buffers: Some(vec![
                    BufferInfo {
                        role: BufferRole::Values,
                        element_type: Some(ElementType::Float32),
                        byte_size: 20,
                        alignment: 64,
                        offset: 4096,
                    },
                    BufferInfo {
                        role: BufferRole::Values,
                        element_type: Some(ElementType::Float32),
                        byte_size: 40,
                        alignment: 64,
                        offset: 8192,
                    },
                    BufferInfo {
                        role: BufferRole::Values,
                        element_type: Some(ElementType::Float32),
                        byte_size: 48,
                        alignment: 64,
                        offset: 12288,
                    },
                ]),
                not_viewable: None,
                quantization: None,
            }),
            validated: false,
            error: None,
            warnings: Vec::new(),
        }
    }

    fn report<'a>(tensors: Vec<TensorReport<'a>>, kv: Vec<(&'a str, KvValue<'a>)>) -> Report<'static, 'a> {
        Report {
            container_version: (1, 0),
            flags: vec!["HAS_INDEX_CRC32C".into()],
            data_buffer_alignment: 4096,
            strict: true,
            kv,
            tensors: Tensors::List(tensors),
            padding: None,
        }
    }

    #[test]
    fn summary_golden() {
        let dense = TensorReport {
            name: "w\u{0}1",
            data_offset: 16384,
            resolved: true,
            info: Some(TensorInfo {
                element_type: Some(ElementType::Bfloat16),
                type_tag: 0x02,
                layout: Layout::RowMajor,
                shape: vec![1024, 1024],
                nnz: None,
                buffers: Some(vec![BufferInfo {
                    role: BufferRole::Values,
                    element_type: Some(ElementType::Float32),
                    byte_size: 2 << 20,
                    alignment: 64,
                    offset: 16384,
                }]),
                not_viewable: None,
                quantization: None,
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
            resolved: false,
            info: None,
            error: Some(Error::NotFound { name: "C".into() }),
            ..csc_tensor("C")
        };
        let mut r = report(vec![csc_tensor("A"), bad, unreadable], Vec::new());
        r.padding = Some(PaddingCheck::Skipped(
            "a tensor's descriptor or buffers could not be located",
        ));
        let text = render_to_string(&r);
        let tail = text.split("Validation (strict mode):\n").nth(1).unwrap();
        assert_eq!(
            tail,
            "  A          OK
  B          INVALID  no tensor named 'B' in the index
  B          WARNING  advisory
  C          INVALID  no tensor named 'C' in the index
  (padding)  SKIPPED  (a tensor's descriptor or buffers could not be located)
"
        );
        assert!(
            text.contains("\n  C     ?        ?       ?         ?        ?      ?         4096\n"),
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
