//! The small pieces the text renderers share: the line that heads a
//! per-tensor output, a verdict's row, counts, coordinates and bytes.

use hurray_reader::{Error, Layout};

use crate::report::header::{verdict, Header};
use crate::shown::{display_name, shape_text};

/// Longest KV value, shape or decoded meaning shown, in characters.
pub const VALUE_MAX: usize = 72;

/// `A: float32 csc [4, 5], nnz 5` — the line that heads every per-tensor output.
pub fn header_line(h: &Header<'_>) -> String {
    let dtype = h.dtype_name();
    let nnz = h.nnz.map(|n| format!(", nnz {n}")).unwrap_or_default();
    format!(
        "{}: {dtype} {} {}{nnz}",
        display_name(h.name),
        h.layout,
        shape_text(&h.shape)
    )
}

/// A verdict's word in the text output's validation table.
fn verdict_word(verdict: Option<bool>) -> &'static str {
    match verdict {
        Some(true) => "OK",
        Some(false) => "INVALID",
        None => "SKIPPED",
    }
}

/// A tensor's row of the validation table: its name, its verdict
/// ([`verdict_word`]), and the error, why the data was not checked
/// (SKIPPED), or why there is none (a composite head).
pub fn verdict_row(
    name: String,
    error: Option<&Error>,
    layout: Option<Layout>,
    not_viewable: Option<&str>,
) -> Vec<String> {
    let verdict = verdict(error.is_some(), layout, not_viewable);
    let word = verdict_word(verdict).into();
    match (error, not_viewable, verdict) {
        (Some(e), _, _) => vec![name, word, e.to_string()],
        (None, Some(why), None) => vec![name, word, format!("(data not checked: {why})")],
        (None, Some(why), _) => vec![name, word, format!("({why})")],
        (None, None, _) => vec![name, word],
    }
}

/// `(2, 1)`; `()` for a scalar.
pub fn tuple(index: &[u64]) -> String {
    let parts: Vec<String> = index.iter().map(u64::to_string).collect();
    format!("({})", parts.join(", "))
}

/// `s` with control characters escaped (`\n`, `\u{1b}`) and everything
/// else, quotes included, as is.
pub fn printable(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// `1 stored entry`, `3 elements`.
pub fn count_of(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `s` with its first letter in upper case.
pub fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// `48 52 52 59`, at most `max` bytes then `... (N bytes)`; `(none)` when empty.
pub fn hex_bytes(bytes: &[u8], max: usize) -> String {
    if bytes.is_empty() {
        return "(none)".to_owned();
    }
    let hex: Vec<String> = bytes.iter().take(max).map(|b| format!("{b:02x}")).collect();
    let more = if bytes.len() > max {
        format!(" ... ({} bytes)", bytes.len())
    } else {
        String::new()
    };
    format!("{}{more}", hex.join(" "))
}

#[cfg(test)]
mod tests {
    use hurray_reader::ElementType;

    use super::*;

    fn header<'a>(name: &'a str, layout: Layout, shape: Vec<u64>, nnz: Option<u64>) -> Header<'a> {
        Header {
            name,
            dtype: Some(ElementType::Float32),
            layout,
            shape,
            nnz,
            type_tag: 0x03,
        }
    }

    #[test]
    fn small_helpers() {
        assert_eq!(hex_bytes(b"HRRY", 16), "48 52 52 59");
        assert_eq!(hex_bytes(&[], 16), "(none)");
        assert_eq!(hex_bytes(&[0xff; 20], 2), "ff ff ... (20 bytes)");
        assert_eq!(printable("\"HRRY\"\n\u{1b}"), "\"HRRY\"\\n\\u{1b}");
        assert_eq!(tuple(&[]), "()");
        assert_eq!(tuple(&[1, 2, 3]), "(1, 2, 3)");
        assert_eq!(count_of(1, "element", "elements"), "1 element");
        assert_eq!(count_of(0, "element", "elements"), "0 elements");
        assert_eq!(
            header_line(&header("w", Layout::RowMajor, vec![], None)),
            "w: float32 row_major []"
        );
    }
}
