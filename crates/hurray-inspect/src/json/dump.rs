//! The object of every array of a tensor (`--dump --json`): one line per
//! buffer, every element written as it is read.

use std::fmt;
use std::io::{self, Write};

use hurray_reader::Buffer;
use serde::{Serialize, Serializer};

use crate::json::format::{write, Style};
use crate::json::header::JsonHeader;
use crate::report::dump::{not_decoded, Dump, DumpBuffer};
use crate::values::Json;

#[derive(Serialize)]
struct JsonDump<'a> {
    #[serde(flatten)]
    header: JsonHeader<'a>,
    /// `None` when the buffers were not located (an unknown layout).
    buffers: Option<Vec<JsonBuffer<'a>>>,
}

/// One buffer, or one part of a shared `[scales | zero_points]` buffer.
#[derive(Serialize)]
struct JsonBuffer<'a> {
    role: String,
    /// `None` when unknown, and for a shared buffer (its parts have theirs).
    element_type: Option<&'static str>,
    byte_size: u64,
    /// The byte the elements start at, when it is not the first.
    #[serde(skip_serializing_if = "Option::is_none")]
    element_start: Option<u64>,
    /// `None` when the elements are not decoded ([`not_decoded`]: then
    /// `bytes`), and for a shared buffer (then `parts`).
    values: Option<JsonValues<'a>>,
    /// The bytes as a hex string, when the elements are not decoded.
    #[serde(skip_serializing_if = "Option::is_none")]
    bytes: Option<Hex<'a>>,
    /// A shared buffer's scales and zero points.
    #[serde(skip_serializing_if = "Option::is_none")]
    parts: Option<Vec<JsonBuffer<'a>>>,
}

impl<'a> JsonBuffer<'a> {
    fn new(b: &DumpBuffer<'a>) -> Self {
        match b.parts {
            Some(parts) => JsonBuffer {
                role: b.buffer.role().to_string(),
                element_type: None,
                byte_size: b.buffer.byte_size(),
                element_start: None,
                values: None,
                bytes: None,
                parts: Some(parts.iter().map(Self::of).collect()),
            },
            None => Self::of(&b.buffer),
        }
    }

    fn of(b: &Buffer<'a>) -> Self {
        let decoded = not_decoded(b.element_type()).is_none();
        JsonBuffer {
            role: b.role().to_string(),
            element_type: b.element_type().map(|e| e.as_str()),
            byte_size: b.byte_size(),
            element_start: (b.element_start() > 0).then(|| b.element_start()),
            values: decoded.then_some(JsonValues(*b)),
            bytes: (!decoded).then(|| Hex(b.bytes())),
            parts: None,
        }
    }
}

/// Every element of a buffer, decoded as it is written.
struct JsonValues<'a>(Buffer<'a>);

impl Serialize for JsonValues<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let dtype = self.0.element_type();
        serializer.collect_seq(self.0.values().map(|v| Json(v, dtype)))
    }
}

/// Bytes as a lower-case hex string, written as they are read.
struct Hex<'a>(&'a [u8]);

impl fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|byte| write!(f, "{byte:02x}"))
    }
}

impl Serialize for Hex<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Writes one JSON object: `name`, `dtype`, `layout`, `shape`, `nnz`, and
/// `buffers`, one object per buffer in buffer-table order with `role`,
/// `element_type`, `byte_size`, `element_start` when the elements do not
/// start at the buffer's first byte, and `values` (null when they are not
/// decoded, see [`not_decoded`], and then `bytes`, a hex string; for a
/// shared `[scales | zero_points]` buffer, `parts`: the two arrays as
/// buffer objects), one buffer per line.
///
/// # Errors
/// Whatever `out` returns.
pub fn render(d: &Dump<'_>, out: &mut impl Write) -> io::Result<()> {
    let json = JsonDump {
        header: JsonHeader::new(&d.header),
        buffers: d.located.then(|| d.buffers.iter().map(JsonBuffer::new).collect()),
    };
    // `{` is depth 0, `"buffers": [` 1, each buffer 2.
    write(out, &json, Style::OneLineFrom(2))
}
