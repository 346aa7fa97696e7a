//! The one JSON writer: `serde_json` with a [`Formatter`] of this crate
//! that lays a document out as docs/cli.md shows it and escapes every
//! character a terminal may act on. Every `--json` output is a
//! `Serialize` value written by [`write()`]; large arrays are serialized as
//! they are read (`collect_seq`), so nothing the size of the data is held.
//!
//! Layout ([`Style::Pretty`]): objects one key per line, indented by two
//! spaces; an array on one line when its first element is a scalar
//! (`"shape": [4, 5]`), one element per line when it is an array or an
//! object (no array this tool writes mixes the two). [`Style::OneLineFrom`]
//! writes the objects and arrays nested deeper on one line (`--dump`: a
//! line per buffer). Numbers are serde_json's (`ryu` floats, exact
//! integers).
//!
//! [`Formatter`]: serde_json::ser::Formatter

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{CharEscape, CompactFormatter, Formatter};

/// How a document is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Objects one key per line; arrays of scalars on one line.
    Pretty,
    /// As [`Style::Pretty`], but the objects and arrays that open at this
    /// depth or deeper (the document is depth 0, its values 1, the
    /// elements of an array it holds 2) are written on one line, with `, `
    /// and `: ` as separators: `{"role": "values", "values": [1.0, 2.0]}`.
    /// An array directly inside such an array is written compact
    /// (`[1.0,-2.0]`, a complex element).
    OneLineFrom(usize),
}

/// Writes `value` as one JSON document laid out in `style`, and a newline.
/// Streamed: nothing the size of the document is held in memory (a KV
/// array of 50 M booleans once took 1 GB, built whole and then rewritten).
///
/// # Errors
/// Whatever `out` returns.
pub fn write<T: Serialize + ?Sized>(out: &mut impl Write, value: &T, style: Style) -> io::Result<()> {
    let mut buffered = io::BufWriter::new(out);
    write_value(&mut buffered, value, style)?;
    buffered.write_all(b"\n")?;
    buffered.flush()
}

/// Writes `value` laid out in `style`, without the final newline.
fn write_value<T: Serialize + ?Sized>(out: &mut impl Write, value: &T, style: Style) -> io::Result<()> {
    let one_line_from = match style {
        Style::Pretty => usize::MAX,
        Style::OneLineFrom(depth) => depth,
    };
    let layout = Layout {
        open: Vec::new(),
        has_value: false,
        one_line_from,
    };
    value.serialize(&mut serde_json::Serializer::with_formatter(out, layout))?;
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
        '\u{0}'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
            | '\u{2028}'
            | '\u{2029}'
            // Invisible format characters, which the human output escapes
            // too: soft hyphen, Arabic letter mark, zero-width space,
            // joiners and marks, word joiner and invisible operators, BOM.
            | '\u{ad}'
            | '\u{61c}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2060}'..='\u{2064}'
            | '\u{feff}'
    )
}

/// The formatter: the [`Style`], and the escapes of [`escaped`]
/// characters. An array's layout is decided at its first element, which
/// the formatter learns of only when that element starts: until then
/// ([`Open::Array`]) the separator is held back.
struct Layout {
    /// The arrays and objects open, innermost last.
    open: Vec<Open>,
    /// Whether the innermost open array or object has an element yet.
    has_value: bool,
    /// The depth from which containers are written on one line.
    one_line_from: usize,
}

/// An open array or object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    /// An object with a line per key.
    Object,
    /// An array whose first element has not started: a value that starts
    /// while it is innermost is that first element.
    Array,
    /// An array on one line, `[1, 2]`.
    OneLine,
    /// An array with a line per element.
    Lines,
    /// An object on one line, `{"k": 1, "l": 2}`.
    OneLineObject,
    /// An array inside a one-line array, `[1,2]`.
    Compact,
}

impl Layout {
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

    /// An array or object opens: `multi_line` is how it is written above
    /// the one-line depth, `one_line` below it.
    fn begin(
        &mut self,
        w: &mut (impl Write + ?Sized),
        multi_line: Open,
        one_line: Open,
        bracket: &[u8],
    ) -> io::Result<()> {
        self.element(w, true)?;
        let open = if self.open.len() >= self.one_line_from {
            one_line
        } else {
            multi_line
        };
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
                CompactFormatter.$name(w $(, $arg)*)
            }
        )*
    };
}

impl Formatter for Layout {
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

    /// A run of a string that serde_json leaves unescaped: every
    /// [`escaped`] character in it as `\uXXXX`.
    fn write_string_fragment<W: ?Sized + Write>(&mut self, w: &mut W, fragment: &str) -> io::Result<()> {
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

    /// A character serde_json escapes itself: `\"` and `\\` as usual,
    /// every control character as `\u00XX` (not `\n`, `\t`: one form for
    /// all of them).
    fn write_char_escape<W: ?Sized + Write>(&mut self, w: &mut W, escape: CharEscape) -> io::Result<()> {
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

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        let one_line = match self.open.last() {
            Some(Open::OneLine | Open::Compact) => Open::Compact,
            _ => Open::OneLine,
        };
        self.begin(w, Open::Array, one_line, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.end(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        match self.open.last() {
            Some(Open::OneLine) => w.write_all(if first { b"" } else { b", " }),
            Some(Open::Compact) => w.write_all(if first { b"" } else { b"," }),
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
        self.begin(w, Open::Object, Open::OneLineObject, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.end(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if self.open.last() == Some(&Open::OneLineObject) {
            return w.write_all(if first { b"" } else { b", " });
        }
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
    use serde_json::{json, Value};

    use super::*;

    /// Exactly the terminal controls are written as `\uXXXX`; their
    /// neighbours (U+00A0, U+2027, U+202F, U+2065, U+206A) and other text
    /// stay as they are, and `"` and `\\` keep their short escapes.
    #[test]
    fn strings_escape_exactly_the_terminal_controls() {
        let compact = |s: &str| {
            let mut out = Vec::new();
            write_value(&mut out, s, Style::Pretty).unwrap();
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
        // C0, DEL, C1, bidi embeddings and overrides, isolates, separators,
        // then U+00AD, U+061C, U+200B-U+200F, U+2060-U+2064, U+FEFF.
        assert_eq!(all.len(), 32 + 1 + 32 + 5 + 4 + 2 + 1 + 1 + 5 + 5 + 1);
        assert_eq!(compact("a\u{200b}b\u{feff}"), "\"a\\u200bb\\ufeff\"");
        let mut pretty_out = Vec::new();
        write_value(&mut pretty_out, &json!({"k\u{85}": ["\u{0}"]}), Style::Pretty).unwrap();
        assert_eq!(
            String::from_utf8(pretty_out).unwrap(),
            "{\n  \"k\\u0085\": [\"\\u0000\"]\n}"
        );
    }

    #[test]
    fn scalar_arrays_stay_on_one_line() {
        let v = json!({"shape": [4, 5], "empty": [], "s": ["a, b", "[x]", "q\\\"]"], "nested": [[1, 2], {"k": [true, null]}],
                       "objs": [{"n": -0.0}]});
        let mut out = Vec::new();
        write_value(&mut out, &v, Style::Pretty).unwrap();
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

    /// Below the one-line depth, objects and arrays take one line each, as
    /// `--dump` writes its buffers; an array in such an array is compact.
    #[test]
    fn deep_containers_take_one_line() {
        // `json!` objects keep their keys sorted.
        let v = json!({"name": "A", "shape": [2], "empty": [], "none": null, "buffers": [
            {"role": "values", "values": [[1.0, -2.0], [0.5, 0.25]], "parts": [{"v": []}, {"v": [1, 2]}]},
            {"role": "col_ptr", "values": [0, 1]}
        ]});
        let mut out = Vec::new();
        write(&mut out, &v, Style::OneLineFrom(2)).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\n  \"buffers\": [\n    \
             {\"parts\": [{\"v\": []}, {\"v\": [1, 2]}], \"role\": \"values\", \"values\": [[1.0,-2.0], [0.5,0.25]]},\n    \
             {\"role\": \"col_ptr\", \"values\": [0, 1]}\n  ],\n  \
             \"empty\": [],\n  \"name\": \"A\",\n  \"none\": null,\n  \"shape\": [2]\n}\n"
        );
        let mut out = Vec::new();
        write(&mut out, &json!({"buffers": []}), Style::OneLineFrom(2)).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "{\n  \"buffers\": []\n}\n");
    }
}
