//! The `--json` rendering: CLI-owned `Serialize` structs built from the
//! [`Report`], written as one JSON object.
//!
//! Strings: every character a terminal may act on is written as `\uXXXX`
//! ([`escaped`]), so a tensor name or KV string cannot drive a terminal
//! that displays the JSON.
//!
//! KV values: strings as strings, integers exact (`int64` and `uint64`
//! extremes included), finite floats as numbers (`-0.0` keeps its sign),
//! NaN and infinities as the strings `"nan"`, `"inf"`, `"-inf"`, booleans,
//! bytes as an array of byte values (`[0, 255]`), arrays as JSON arrays.

use std::io::{self, Write};

use hurray_reader::{EntryField, Error, KvValue, Layout};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::Serialize;

use crate::report::entries::{Axis, Entries};
use crate::report::header::{dtype_name, verdict, Header};
use crate::report::lookup::Lookup;
use crate::report::summary::{BufferInfo, PaddingCheck, Report, TensorReport, Tensors};
use crate::report::tensor::TensorDetail;
use crate::values::Json;

#[derive(Serialize)]
struct JsonReport<'a> {
    file: JsonFile<'a>,
    kv: JsonKv<'a>,
    /// Each KV value's type, by key: what `kv` alone cannot tell apart
    /// (an int64 from a uint64, bytes from an array, NaN from a string).
    kv_types: JsonKvTypes<'a>,
    tensors: JsonTensors<'a>,
    /// With `--validate` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    padding: Option<JsonCheck>,
}

#[derive(Serialize)]
struct JsonFile<'a> {
    /// `"major.minor"`.
    container_version: String,
    flags: &'a [String],
    data_buffer_alignment: u64,
}

#[derive(Serialize)]
struct JsonTensor<'a> {
    name: &'a str,
    /// `None` when the descriptor could not be read; `unknown(0x..)` for
    /// an unknown tag (permissive).
    dtype: Option<String>,
    layout: Option<String>,
    shape: Option<&'a [u64]>,
    nnz: Option<u64>,
    /// A quantized tensor's scheme (`per_tensor_affine`); `null` for one
    /// that is not quantized, or whose descriptor cannot be read.
    quantization: Option<&'a str>,
    /// `None` when the buffers were not located.
    buffers: Option<Vec<JsonBuffer>>,
    /// With `--validate` only; `null` when the data could not be checked
    /// ([`verdict`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    valid: Option<Option<bool>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_at: Option<JsonErrorAt>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    warnings: &'a [String],
    /// With `--validate`: why the data was not checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    not_viewable: Option<&'static str>,
}

#[derive(Serialize)]
struct JsonBuffer {
    /// As in `--tensor`'s buffers.
    role: String,
    element_type: Option<&'static str>,
    byte_size: u64,
    alignment: u64,
    offset: u64,
}

/// `{"valid": true}`, `{"valid": false, "error": ...}` or
/// `{"valid": null, "skipped": why}`.
#[derive(Serialize)]
struct JsonCheck {
    valid: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_at: Option<JsonErrorAt>,
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<&'static str>,
}

/// The tensors, each built and written in turn ([`Tensors`]): a file of a
/// million tensors is never held as a million objects.
struct JsonTensors<'a>(&'a Tensors<'a, 'a>);

impl Serialize for JsonTensors<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for t in self.0.iter() {
            seq.serialize_element(&JsonTensor::new(&t))?;
        }
        seq.end()
    }
}

/// The KV entries as one object, keys in file order.
struct JsonKv<'a>(&'a [(&'a str, KvValue<'a>)]);

impl Serialize for JsonKv<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in self.0 {
            map.serialize_entry(key, &JsonKvValue(*value))?;
        }
        map.end()
    }
}

struct JsonKvTypes<'a>(&'a [(&'a str, KvValue<'a>)]);

impl Serialize for JsonKvTypes<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in self.0 {
            match value {
                KvValue::Array(a) => map.serialize_entry(key, &format!("array<{}>", a.element_type().as_str()))?,
                other => map.serialize_entry(key, other.kv_type().as_str())?,
            }
        }
        map.end()
    }
}

struct JsonKvValue<'a>(KvValue<'a>);

impl Serialize for JsonKvValue<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            KvValue::String(s) => serializer.serialize_str(s),
            KvValue::Int64(n) => serializer.serialize_i64(n),
            KvValue::Uint64(n) => serializer.serialize_u64(n),
            KvValue::Float64(x) if x.is_nan() => serializer.serialize_str("nan"),
            KvValue::Float64(x) if x.is_infinite() => serializer.serialize_str(if x > 0.0 { "inf" } else { "-inf" }),
            KvValue::Float64(x) => serializer.serialize_f64(x),
            KvValue::Bool(b) => serializer.serialize_bool(b),
            KvValue::Bytes(bytes) => serializer.collect_seq(bytes),
            KvValue::Array(a) => serializer.collect_seq(a.iter().map(JsonKvValue)),
        }
    }
}

impl<'a> JsonTensor<'a> {
    fn new(t: &'a TensorReport<'a>) -> Self {
        let info = t.info.as_ref();
        JsonTensor {
            name: t.name,
            dtype: info.map(|i| dtype_name(i.element_type, i.type_tag)),
            layout: info.map(|i| i.layout.to_string()),
            shape: info.map(|i| i.shape.as_slice()),
            nnz: info.and_then(|i| i.nnz),
            quantization: info.and_then(|i| i.quantization.as_deref()),
            buffers: info
                .and_then(|i| i.buffers.as_ref())
                .map(|b| b.iter().map(JsonBuffer::new).collect()),
            valid: t.validated.then(|| {
                verdict(
                    t.error.is_some(),
                    info.map(|i| i.layout),
                    info.and_then(|i| i.not_viewable),
                )
            }),
            error: t.error.as_ref().map(ToString::to_string),
            error_at: t.error.as_ref().and_then(JsonErrorAt::new),
            warnings: &t.warnings,
            not_viewable: info
                .and_then(|i| i.not_viewable)
                .filter(|_| t.validated && t.error.is_none()),
        }
    }
}

impl JsonBuffer {
    fn new(b: &BufferInfo) -> Self {
        JsonBuffer {
            role: b.role.to_string(),
            element_type: b.element_type.map(|t| t.as_str()),
            byte_size: b.byte_size,
            alignment: b.alignment,
            offset: b.offset,
        }
    }
}

impl JsonCheck {
    fn new(check: &PaddingCheck) -> Self {
        match check {
            PaddingCheck::Ok => JsonCheck {
                valid: Some(true),
                error: None,
                error_at: None,
                skipped: None,
            },
            PaddingCheck::Invalid(e) => JsonCheck {
                valid: Some(false),
                error: Some(e.to_string()),
                error_at: JsonErrorAt::new(e),
                skipped: None,
            },
            PaddingCheck::Skipped(why) => JsonCheck {
                valid: None,
                error: None,
                error_at: None,
                skipped: Some(why),
            },
        }
    }
}

/// Writes the report as one pretty-printed JSON object and a newline.
///
/// # Errors
/// Whatever `out` returns.
pub fn render(report: &Report<'_, '_>, out: &mut impl Write) -> io::Result<()> {
    let (major, minor) = report.container_version;
    let json = JsonReport {
        file: JsonFile {
            container_version: format!("{major}.{minor}"),
            flags: &report.flags,
            data_buffer_alignment: report.data_buffer_alignment,
        },
        kv: JsonKv(&report.kv),
        kv_types: JsonKvTypes(&report.kv),
        tensors: JsonTensors(&report.tensors),
        padding: report.padding.as_ref().map(JsonCheck::new),
    };
    write_pretty(out, &json)?;
    writeln!(out)
}

/// The object `--json` prints when the file fails before anything else
/// could be shown: it does not open, or the tensor a data command reads
/// does not resolve or breaks a rule in what the command reads.
#[derive(Serialize)]
struct JsonFailure<'a> {
    error: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_at: Option<JsonErrorAt>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tensor: Option<&'a str>,
}

/// `{"error": ..., "error_at": {...}, "tensor": ...}` for an error of the
/// file (the same message as the stderr line, without the file's name).
pub fn render_error(e: &Error, out: &mut impl Write) -> io::Result<()> {
    let json = JsonFailure {
        error: e.to_string(),
        error_at: JsonErrorAt::new(e),
        tensor: e.tensor(),
    };
    write_pretty(out, &json)?;
    writeln!(out)
}

/// The facts every per-tensor object starts with.
#[derive(Serialize)]
struct JsonHeader<'a> {
    name: &'a str,
    dtype: String,
    layout: String,
    shape: &'a [u64],
    nnz: Option<u64>,
}

impl<'a> JsonHeader<'a> {
    fn new(h: &'a Header<'a>) -> Self {
        JsonHeader {
            name: h.name,
            dtype: h.dtype_name(),
            layout: h.layout.to_string(),
            shape: &h.shape,
            nnz: h.nnz,
        }
    }
}

#[derive(Serialize)]
struct JsonDetail<'a> {
    name: &'a str,
    /// `None` when the descriptor could not be read.
    dtype: Option<String>,
    layout: Option<String>,
    shape: Option<&'a [u64]>,
    nnz: Option<u64>,
    index_entry: JsonIndexEntry,
    descriptor: Vec<JsonField<'a>>,
    /// `None` when the buffers were not located.
    buffers: Option<Vec<JsonBufferDetail>>,
    /// Composite heads only: `null` when the head did not resolve (its
    /// members are not known).
    #[serde(skip_serializing_if = "Option::is_none")]
    members: Option<Option<&'a [&'a str]>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    not_viewable: Option<&'static str>,
    /// With `--validate` only; `null` when the data could not be checked
    /// ([`verdict`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    valid: Option<Option<bool>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_at: Option<JsonErrorAt>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    warnings: &'a [String],
}

/// Where an error points, for scripts: the field as the spec names it, its
/// absolute byte offset and the rule cited (each `null` when the error has
/// none, e.g. a file too small has no field). Absent for errors about the
/// request or I/O, which have none of the three.
#[derive(Serialize)]
struct JsonErrorAt {
    field: Option<String>,
    offset: Option<u64>,
    rule: Option<&'static str>,
}

impl JsonErrorAt {
    fn new(e: &Error) -> Option<Self> {
        let at = JsonErrorAt {
            field: e.field().map(|f| f.to_string()),
            offset: e.offset(),
            rule: e.rule(),
        };
        (at.field.is_some() || at.offset.is_some() || at.rule.is_some()).then_some(at)
    }
}

#[derive(Serialize)]
struct JsonIndexEntry {
    position: usize,
    offset: u64,
    descriptor_offset: u64,
    descriptor_length: u64,
    data_offset: u64,
    data_length: u64,
    flags: u64,
    /// Where each of those fields is in the file.
    field_offsets: JsonEntryOffsets,
}

#[derive(Serialize)]
struct JsonEntryOffsets {
    descriptor_offset: u64,
    descriptor_length: u64,
    data_offset: u64,
    data_length: u64,
    flags: u64,
}

#[derive(Serialize)]
struct JsonField<'a> {
    field: String,
    offset: u64,
    /// Lowercase hex, two digits per byte, file order.
    bytes: String,
    meaning: &'a str,
}

#[derive(Serialize)]
struct JsonBufferDetail {
    index: u8,
    role: String,
    element_type: Option<&'static str>,
    /// `None` when the element type is unknown.
    count: Option<u64>,
    offset: u64,
    end: u64,
    byte_size: u64,
    alignment: u64,
}

/// Writes `--tensor NAME` as one JSON object.
///
/// # Errors
/// Whatever `out` returns.
pub fn render_detail(d: &TensorDetail<'_>, out: &mut impl Write) -> io::Result<()> {
    let e = &d.entry;
    let h = d.header.as_ref();
    let json = JsonDetail {
        name: e.name(),
        dtype: h.map(Header::dtype_name),
        layout: h.map(|h| h.layout.to_string()),
        shape: h.map(|h| h.shape.as_slice()),
        nnz: h.and_then(|h| h.nnz),
        index_entry: JsonIndexEntry {
            position: e.position(),
            offset: e.offset(),
            descriptor_offset: e.descriptor_offset(),
            descriptor_length: e.descriptor_length(),
            data_offset: e.data_offset(),
            data_length: e.data_length(),
            flags: e.field_value(EntryField::Flags),
            field_offsets: JsonEntryOffsets {
                descriptor_offset: e.field_offset(EntryField::DescriptorOffset),
                descriptor_length: e.field_offset(EntryField::DescriptorLength),
                data_offset: e.field_offset(EntryField::DataOffset),
                data_length: e.field_offset(EntryField::DataLength),
                flags: e.field_offset(EntryField::Flags),
            },
        },
        descriptor: d
            .fields
            .iter()
            .map(|f| JsonField {
                field: f.field.to_string(),
                offset: f.offset,
                bytes: f.bytes.iter().map(|b| format!("{b:02x}")).collect(),
                meaning: &f.meaning,
            })
            .collect(),
        buffers: d.buffers.as_ref().map(|buffers| {
            buffers
                .iter()
                .map(|b| JsonBufferDetail {
                    index: b.index,
                    role: b.role.to_string(),
                    element_type: b.element_type.map(|t| t.as_str()),
                    count: b.count,
                    offset: b.offset,
                    end: b.end(),
                    byte_size: b.byte_size,
                    alignment: b.alignment,
                })
                .collect()
        }),
        members: d
            .header
            .as_ref()
            .is_some_and(|h| h.layout == Layout::Composite)
            .then(|| d.resolved.then_some(&d.members[..])),
        not_viewable: d.not_viewable,
        valid: d.validated.then(|| {
            let layout = d.header.as_ref().map(|h| h.layout);
            verdict(d.first_error().is_some(), layout, d.not_viewable)
        }),
        error: d.first_error().map(ToString::to_string),
        error_at: d.first_error().and_then(JsonErrorAt::new),
        warnings: &d.warnings,
    };
    write_pretty(out, &json)?;
    writeln!(out)
}

#[derive(Serialize)]
struct JsonEntries<'a> {
    #[serde(flatten)]
    header: JsonHeader<'a>,
    /// `column`, `row`, `storage`, `leaf` or `logical`.
    order: &'static str,
    /// Stored entries (sparse) or elements (dense) of the whole tensor.
    total: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    column: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    row: Option<u64>,
    /// `[start, end)` positions of the slice in the values buffer.
    #[serde(skip_serializing_if = "Option::is_none")]
    positions: Option<[u64; 2]>,
}

#[derive(Serialize)]
struct JsonEntry<'a> {
    index: &'a [u64],
    position: u64,
    value: Json,
    /// `--head` of a quantized tensor: the real value.
    #[serde(skip_serializing_if = "Option::is_none")]
    dequantized: Option<Json>,
}

/// Writes `--head`, `--column` or `--row` as one JSON object. The entries
/// are written one by one as they are read (a slice may be long).
///
/// # Errors
/// Whatever `out` returns.
pub fn render_entries(e: &Entries<'_>, out: &mut impl Write) -> io::Result<()> {
    let slice = |axis: Axis| e.slice.as_ref().filter(|s| s.axis == axis).map(|s| s.index);
    let json = JsonEntries {
        header: JsonHeader::new(&e.header),
        order: e.order.as_str(),
        total: e.total,
        column: slice(Axis::Column),
        row: slice(Axis::Row),
        positions: e.slice.as_ref().map(|s| [s.positions.start, s.positions.end]),
    };
    // The object without its closing brace, then `entries`, each entry
    // indented as serde_json's pretty printer would (the test
    // `streamed_entries_equal_the_pretty_printer` holds the two equal).
    let head = pretty(&json)?;
    let open = head
        .strip_suffix(b"\n}")
        .ok_or_else(|| io::Error::other("serde_json's pretty object does not end in a line with `}`"))?;
    out.write_all(open)?;
    write!(out, ",\n  \"entries\": [")?;
    let mut separator = "";
    for x in e.entries.iter() {
        let entry = pretty(&JsonEntry {
            index: &x.index,
            position: x.position,
            value: Json(x.value, e.header.dtype),
            dequantized: x.dequantized.map(crate::values::json_real),
        })?;
        write!(out, "{separator}\n    ")?;
        // Every line break is serde_json's own: it escapes those in strings.
        for (k, line) in entry.split(|&b| b == b'\n').enumerate() {
            if k > 0 {
                out.write_all(b"\n    ")?;
            }
            out.write_all(line)?;
        }
        separator = ",";
    }
    let close = if separator.is_empty() { "]" } else { "\n  ]" };
    writeln!(out, "{close}\n}}")
}

#[derive(Serialize)]
struct JsonLookup<'a> {
    #[serde(flatten)]
    header: JsonHeader<'a>,
    index: &'a [u64],
    /// False for a sparse tensor's implicit zero.
    stored: bool,
    position: Option<u64>,
    /// The implicit zero is `0`.
    value: Json,
    /// A quantized tensor's real value (0.0 for an implicit zero).
    #[serde(skip_serializing_if = "Option::is_none")]
    dequantized: Option<Json>,
}

/// Writes `--get` as one JSON object.
///
/// # Errors
/// Whatever `out` returns.
pub fn render_lookup(l: &Lookup<'_>, out: &mut impl Write) -> io::Result<()> {
    let json = JsonLookup {
        header: JsonHeader::new(&l.header),
        index: &l.index,
        stored: l.value.is_some(),
        position: l.position,
        // An implicit zero in the tensor's own type: `false`, `0`, `0.0`, `[0.0, 0.0]`.
        value: Json(
            l.value.unwrap_or_else(|| {
                l.header
                    .dtype
                    .map_or(hurray_reader::Value::UInt(0), hurray_reader::Value::zero)
            }),
            l.header.dtype,
        ),
        dequantized: l.dequantized.map(crate::values::json_real),
    };
    write_pretty(out, &json)?;
    writeln!(out)
}

/// Writes `value` pretty-printed (two-space indent), except that an array
/// of numbers, strings, booleans and nulls stays on one line: `"shape": [4,
/// 5]` (an array's first element decides: no array this tool writes mixes
/// scalars with arrays or objects). Streamed through [`Pretty`]: nothing the size of the
/// document is held in memory (a KV array of 50 M booleans once took 1 GB
/// here, built whole and then rewritten).
///
/// # Errors
/// Whatever `out` returns.
pub fn write_pretty(out: &mut impl Write, value: &impl Serialize) -> io::Result<()> {
    let mut buffered = io::BufWriter::new(out);
    value.serialize(&mut serde_json::Serializer::with_formatter(
        &mut buffered,
        Pretty::default(),
    ))?;
    buffered.flush()
}

/// Writes `value` as compact JSON (no spaces or line breaks), its strings
/// escaped as [`write_pretty`] escapes them (for the pieces of `--dump`).
///
/// # Errors
/// Whatever `out` returns.
pub fn write_compact<T: Serialize + ?Sized>(out: &mut impl Write, value: &T) -> io::Result<()> {
    value.serialize(&mut serde_json::Serializer::with_formatter(out, Compact))?;
    Ok(())
}

/// Whether `c` is written as `\uXXXX` in a JSON string: the C0 controls
/// (U+0000–U+001F), DEL (U+007F) and the C1 controls (U+0080–U+009F),
/// which a terminal may act on (escape sequences: U+001B, U+009B); the
/// bidirectional embeddings, overrides and isolates (U+202A–U+202E,
/// U+2066–U+2069), which reorder what is shown; and the line and paragraph
/// separators U+2028 and U+2029, which JSON allows raw but which break
/// lines (and JavaScript strings). The human output escapes the same
/// characters and more.
pub fn escaped(c: char) -> bool {
    matches!(
        c,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}'
    )
}

/// Writes `fragment`, a run of a string that serde_json leaves unescaped,
/// with every [`escaped`] character as `\uXXXX`.
fn write_fragment<W: ?Sized + Write>(w: &mut W, fragment: &str) -> io::Result<()> {
    let mut start = 0;
    for (i, c) in fragment.char_indices() {
        if escaped(c) {
            w.write_all(fragment.get(start..i).unwrap_or_default().as_bytes())?;
            write!(w, "\\u{:04x}", u32::from(c))?;
            start = i.saturating_add(c.len_utf8());
        }
    }
    w.write_all(fragment.get(start..).unwrap_or_default().as_bytes())
}

/// Writes a character serde_json escapes itself: `\"` and `\\` as
/// usual, every control character as `\u00XX` (not `\n`, `\t`: one form
/// for all of them).
fn write_escape<W: ?Sized + Write>(w: &mut W, escape: serde_json::ser::CharEscape) -> io::Result<()> {
    use serde_json::ser::CharEscape;
    let byte: u8 = match escape {
        CharEscape::Quote => return w.write_all(b"\\\""),
        CharEscape::ReverseSolidus => return w.write_all(b"\\\\"),
        CharEscape::Solidus => return w.write_all(b"/"),
        CharEscape::Backspace => 0x08,
        CharEscape::FormFeed => 0x0c,
        CharEscape::LineFeed => 0x0a,
        CharEscape::CarriageReturn => 0x0d,
        CharEscape::Tab => 0x09,
        CharEscape::AsciiControl(b) => b,
    };
    write!(w, "\\u{byte:04x}")
}

/// serde_json's compact layout with [`escaped`] strings.
struct Compact;

impl serde_json::ser::Formatter for Compact {
    fn write_string_fragment<W: ?Sized + Write>(&mut self, w: &mut W, fragment: &str) -> io::Result<()> {
        write_fragment(w, fragment)
    }

    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        escape: serde_json::ser::CharEscape,
    ) -> io::Result<()> {
        write_escape(w, escape)
    }
}

/// `value` as [`write_pretty`] writes it (for pieces of a document).
fn pretty(value: &impl Serialize) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    value.serialize(&mut serde_json::Serializer::with_formatter(&mut out, Pretty::default()))?;
    Ok(out)
}

/// The output's layout, a `serde_json` formatter: objects as its pretty
/// printer lays them out; an array on one line when its first element is a
/// scalar, one element per line when it is an array or an object. An
/// array's layout is decided at its first element, which the formatter
/// learns of only when that element starts: until then (`Open::Array`)
/// the separator is held back.
#[derive(Default)]
struct Pretty {
    /// The arrays and objects open, innermost last.
    open: Vec<Open>,
    /// Whether the innermost open array or object has an element yet.
    has_value: bool,
}

/// An open array or object.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    Object,
    /// An array whose first element has not started: a value that starts
    /// while it is innermost is that first element.
    Array,
    /// An array on one line.
    OneLine,
    /// An array with a line per element.
    Lines,
}

impl Pretty {
    fn indent(&self, w: &mut (impl Write + ?Sized)) -> io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..self.open.len() {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    /// A value starts: when it is the first element of the innermost array,
    /// it decides that array's layout, a line per element when it is an
    /// array or an object (`container`).
    fn element(&mut self, w: &mut (impl Write + ?Sized), container: bool) -> io::Result<()> {
        let Some(top @ Open::Array) = self.open.last_mut() else {
            return Ok(());
        };
        *top = if container { Open::Lines } else { Open::OneLine };
        if container {
            self.indent(w)?;
        }
        Ok(())
    }

    fn begin(&mut self, w: &mut (impl Write + ?Sized), open: Open, bracket: &[u8]) -> io::Result<()> {
        self.element(w, true)?;
        self.open.push(open);
        self.has_value = false;
        w.write_all(bracket)
    }

    fn end(&mut self, w: &mut (impl Write + ?Sized), bracket: &[u8]) -> io::Result<()> {
        let open = self.open.pop();
        if self.has_value && matches!(open, Some(Open::Object | Open::Lines)) {
            self.indent(w)?;
        }
        w.write_all(bracket)
    }
}

/// Every scalar first settles a pending array's layout, then writes as
/// `serde_json`'s compact formatter does.
macro_rules! scalars {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {
        $(
            fn $name<W: ?Sized + Write>(&mut self, w: &mut W $(, $arg: $ty)*) -> io::Result<()> {
                self.element(w, false)?;
                serde_json::ser::CompactFormatter.$name(w $(, $arg)*)
            }
        )*
    };
}

impl serde_json::ser::Formatter for Pretty {
    scalars! {
        write_null();
        write_bool(value: bool);
        write_i8(value: i8);
        write_i16(value: i16);
        write_i32(value: i32);
        write_i64(value: i64);
        write_i128(value: i128);
        write_u8(value: u8);
        write_u16(value: u16);
        write_u32(value: u32);
        write_u64(value: u64);
        write_u128(value: u128);
        write_f32(value: f32);
        write_f64(value: f64);
        write_number_str(value: &str);
        write_raw_fragment(fragment: &str);
    }

    fn begin_string<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.element(w, false)?;
        w.write_all(b"\"")
    }

    fn write_string_fragment<W: ?Sized + Write>(&mut self, w: &mut W, fragment: &str) -> io::Result<()> {
        write_fragment(w, fragment)
    }

    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        escape: serde_json::ser::CharEscape,
    ) -> io::Result<()> {
        write_escape(w, escape)
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.begin(w, Open::Array, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.end(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        match self.open.last() {
            Some(Open::OneLine) => w.write_all(if first { b"" } else { b", " }),
            Some(Open::Lines) => {
                w.write_all(if first { b"" } else { b"," })?;
                self.indent(w)
            }
            // The first element: its start decides (`element`).
            _ => Ok(()),
        }
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.begin(w, Open::Object, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.end(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        w.write_all(if first { b"" } else { b"," })?;
        self.indent(w)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use hurray_reader::{BufferRole, ElementType, Error, Layout};
    use serde_json::{json, Value};

    use super::*;
    use crate::report::summary::TensorInfo;

    /// `render_entries` writes its object in pieces; the bytes must be those
    /// serde_json's pretty printer gives the whole object: no entries, one,
    /// and entries whose value spans several lines (a complex number).
    #[test]
    fn streamed_entries_equal_the_pretty_printer() {
        use crate::report::entries::{Entries, Entry, Listed, Order, Slice};
        use hurray_reader::Value as V;

        #[derive(Serialize)]
        struct Whole<'a> {
            #[serde(flatten)]
            head: JsonEntries<'a>,
            entries: Vec<JsonEntry<'a>>,
        }
        let header = |dtype| Header {
            name: "A",
            dtype: Some(dtype),
            layout: Layout::Csc,
            shape: vec![4, 5],
            nnz: Some(3),
            type_tag: 0,
        };
        let entry = |row, position, value| Entry {
            index: vec![row, 1],
            position,
            value,
            dequantized: None,
        };
        let cases = [
            (ElementType::Float32, vec![]),
            (ElementType::Float32, vec![entry(2, 0, V::Float(-0.5))]),
            (
                ElementType::Complex128,
                vec![
                    entry(0, 1, V::Complex { re: 1.0, im: -2.0 }),
                    entry(3, 2, V::Complex { re: f64::NAN, im: 0.0 }),
                ],
            ),
        ];
        for (dtype, entries) in cases {
            let e = Entries {
                header: header(dtype),
                order: Order::Column,
                total: 3,
                slice: Some(Slice {
                    axis: Axis::Column,
                    index: 1,
                    positions: 0..3,
                }),
                entries: Listed::Collected(entries.clone()),
            };
            let mut streamed = Vec::new();
            render_entries(&e, &mut streamed).unwrap();
            let whole = Whole {
                head: JsonEntries {
                    header: JsonHeader::new(&e.header),
                    order: "column",
                    total: 3,
                    column: Some(1),
                    row: None,
                    positions: Some([0, 3]),
                },
                entries: entries
                    .iter()
                    .map(|x| JsonEntry {
                        index: &x.index,
                        position: x.position,
                        value: Json(x.value, Some(dtype)),
                        dequantized: None,
                    })
                    .collect(),
            };
            let mut expected = Vec::new();
            write_pretty(&mut expected, &whole).unwrap();
            expected.push(b'\n');
            assert_eq!(
                String::from_utf8(streamed).unwrap(),
                String::from_utf8(expected).unwrap()
            );
        }
    }

    /// Exactly the terminal controls are written as `\uXXXX`; their
    /// neighbours (U+00A0, U+2027, U+202F, U+2065, U+206A) and other text
    /// stay as they are, and `"` and `\\` keep their short escapes.
    #[test]
    fn strings_escape_exactly_the_terminal_controls() {
        let compact = |s: &str| {
            let mut out = Vec::new();
            write_compact(&mut out, s).unwrap();
            String::from_utf8(out).unwrap()
        };
        assert_eq!(
            compact("a\u{1b}[31m\n\t\u{7f}\u{9b}\u{202e}x\u{2066}\u{2028}\u{2029}\"\\é中"),
            "\"a\\u001b[31m\\u000a\\u0009\\u007f\\u009b\\u202ex\\u2066\\u2028\\u2029\\\"\\\\é中\""
        );
        for c in ['\u{a0}', '\u{2027}', '\u{202f}', '\u{2065}', '\u{206a}', '~', 'é'] {
            assert!(!escaped(c), "{c:?}");
            assert_eq!(compact(&c.to_string()), format!("\"{c}\""));
        }
        let all: Vec<char> = (0..=0x10ffffu32)
            .filter_map(char::from_u32)
            .filter(|&c| escaped(c))
            .collect();
        assert_eq!(all.len(), 32 + 1 + 32 + 5 + 4 + 2);
        let mut pretty_out = Vec::new();
        write_pretty(&mut pretty_out, &json!({"k\u{85}": ["\u{0}"]})).unwrap();
        assert_eq!(
            String::from_utf8(pretty_out).unwrap(),
            "{\n  \"k\\u0085\": [\"\\u0000\"]\n}"
        );
    }

    fn to_value(report: &Report<'_, '_>) -> Value {
        let mut out = Vec::new();
        render(report, &mut out).unwrap();
        serde_json::from_slice(&out).unwrap()
    }

    #[test]
    fn an_implicit_zero_has_the_tensor_dtype() {
        let zero = |dtype| {
            let l = Lookup {
                header: Header {
                    name: "A",
                    dtype,
                    layout: Layout::Csc,
                    shape: vec![2, 2],
                    nnz: Some(0),
                    type_tag: 0x03,
                },
                index: vec![1, 1],
                position: None,
                value: None,
                dequantized: None,
            };
            let mut out = Vec::new();
            render_lookup(&l, &mut out).unwrap();
            serde_json::from_slice::<Value>(&out).unwrap()["value"].clone()
        };
        assert_eq!(zero(Some(ElementType::Bool)), json!(false));
        assert_eq!(zero(Some(ElementType::Int32)), json!(0));
        assert_eq!(zero(Some(ElementType::Float32)), json!(0.0));
        assert_eq!(zero(Some(ElementType::Complex64)), json!([0.0, 0.0]));
        assert_eq!(zero(None), json!(0));
    }

    fn report<'a>(kv: Vec<(&'a str, KvValue<'a>)>, tensors: Vec<TensorReport<'a>>) -> Report<'static, 'a> {
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
    fn scalar_arrays_stay_on_one_line() {
        let v = json!({"shape": [4, 5], "empty": [], "s": ["a, b", "[x]", "q\\\"]"], "nested": [[1, 2], {"k": [true, null]}],
                       "objs": [{"n": -0.0}]});
        let mut out = Vec::new();
        write_pretty(&mut out, &v).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("\"shape\": [4, 5]\n"), "{text}");
        assert!(text.contains("\"empty\": [],\n"), "{text}");
        assert!(text.contains(r#""s": ["a, b", "[x]", "q\\\"]"],"#), "{text}");
        assert!(
            text.contains("\"nested\": [\n    [1, 2],\n    {\n      \"k\": [true, null]\n    }\n  ],"),
            "{text}"
        );
        assert!(text.contains("\"n\": -0.0"), "{text}");
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn kv_values_keep_their_exact_value() {
        let kv = vec![
            ("s", KvValue::String("Grüße")),
            ("min", KvValue::Int64(i64::MIN)),
            ("max", KvValue::Uint64(u64::MAX)),
            ("nan", KvValue::Float64(f64::NAN)),
            ("inf", KvValue::Float64(f64::INFINITY)),
            ("ninf", KvValue::Float64(f64::NEG_INFINITY)),
            ("nzero", KvValue::Float64(-0.0)),
            ("tiny", KvValue::Float64(5e-324)),
            ("b", KvValue::Bool(true)),
            ("bytes", KvValue::Bytes(&[0, 127, 255])),
        ];
        let mut out = Vec::new();
        render(&report(kv, Vec::new()), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("\"nzero\": -0.0"), "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v["kv"],
            json!({"s": "Grüße", "min": i64::MIN, "max": u64::MAX, "nan": "nan", "inf": "inf",
                   "ninf": "-inf", "nzero": -0.0, "tiny": 5e-324, "b": true, "bytes": [0, 127, 255]})
        );
        assert_eq!(
            v["kv_types"],
            json!({"s": "string", "min": "int64", "max": "uint64", "nan": "float64", "inf": "float64",
                   "ninf": "float64", "nzero": "float64", "tiny": "float64", "b": "bool", "bytes": "bytes"})
        );
        // Keys stay in file order.
        let pos = |k: &str| text.find(&format!("\"{k}\":")).unwrap();
        assert!(pos("s") < pos("min") && pos("min") < pos("bytes"));
    }

    #[test]
    fn tensor_fields_and_validation() {
        let good = TensorReport {
            name: "A",
            data_offset: 4096,
            resolved: true,
            info: Some(TensorInfo {
                element_type: Some(ElementType::Float32),
                type_tag: 0x03,
                layout: Layout::Csc,
                shape: vec![4, 5],
                nnz: Some(5),
                buffers: Some(vec![BufferInfo {
                    role: BufferRole::Values,
                    element_type: Some(ElementType::Float32),
                    byte_size: 20,
                    alignment: 64,
                    offset: 4096,
                }]),
                not_viewable: None,
                quantization: None,
            }),
            validated: true,
            error: None,
            warnings: Vec::new(),
        };
        let bad = TensorReport {
            name: "B",
            data_offset: 8192,
            resolved: false,
            info: None,
            validated: true,
            error: Some(Error::NotFound { name: "B".into() }),
            warnings: vec!["w".into()],
        };
        let mut r = report(Vec::new(), vec![good, bad]);
        r.padding = Some(PaddingCheck::Skipped("permissive mode"));
        assert_eq!(
            to_value(&r),
            json!({
                "file": {"container_version": "1.0", "flags": ["HAS_INDEX_CRC32C"], "data_buffer_alignment": 4096},
                "kv": {},
                "kv_types": {},
                "tensors": [
                    {"name": "A", "dtype": "float32", "layout": "csc", "shape": [4, 5], "nnz": 5, "quantization": null,
                     "buffers": [{"role": "values", "element_type": "float32", "byte_size": 20, "alignment": 64,
                                  "offset": 4096}], "valid": true},
                    {"name": "B", "dtype": null, "layout": null, "shape": null, "nnz": null, "quantization": null,
                     "buffers": null,
                     "valid": false, "error": "no tensor named 'B' in the index", "warnings": ["w"]}
                ],
                "padding": {"valid": null, "skipped": "permissive mode"}
            })
        );
    }

    #[test]
    fn no_validation_fields_without_validate() {
        let t = TensorReport {
            name: "A",
            data_offset: 64,
            resolved: false,
            info: None,
            validated: false,
            error: None,
            warnings: Vec::new(),
        };
        let v = to_value(&report(Vec::new(), vec![t]));
        assert!(v.get("padding").is_none());
        assert!(v["tensors"][0].get("valid").is_none());
    }
}
