//! Where an error points (`error_at`), and the object `--json` prints
//! when the file fails before the command's own object could be written.

use std::io::{self, Write};

use hurray_reader::Error;
use serde::Serialize;

use crate::json::format::{write, Style};

/// Where an error points, for scripts: the field as the spec names it, its
/// absolute byte offset and the rule cited (each `null` when the error has
/// none, e.g. a file too small has no field). Absent for errors about the
/// request or I/O, which have none of the three.
#[derive(Serialize)]
pub struct JsonErrorAt {
    field: Option<String>,
    offset: Option<u64>,
    rule: Option<&'static str>,
}

impl JsonErrorAt {
    /// Where `e` points; `None` when it names no field, offset or rule.
    pub fn new(e: &Error) -> Option<Self> {
        let at = JsonErrorAt {
            field: e.field().map(|f| f.to_string()),
            offset: e.offset(),
            rule: e.rule(),
        };
        (at.field.is_some() || at.offset.is_some() || at.rule.is_some()).then_some(at)
    }
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
pub fn render(e: &Error, out: &mut impl Write) -> io::Result<()> {
    let json = JsonFailure {
        error: e.to_string(),
        error_at: JsonErrorAt::new(e),
        tensor: e.tensor(),
    };
    write(out, &json, Style::Pretty)
}
