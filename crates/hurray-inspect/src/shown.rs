//! Names and numbers as the tool shows them to people: names escaped and
//! cut, sizes in binary units, shapes. Shared by the text renderers, the
//! progress bar and the messages of the reports (a cut name finds its
//! tensor as the summary table prints it); it imports nothing of the crate.

use std::borrow::Cow;

/// Longest tensor name, KV key or shape shown in a table, in characters.
pub const NAME_MAX: usize = 48;

/// A name as the tables show it: control characters escaped
/// (`escape_debug`), cut to [`NAME_MAX`] characters.
pub fn display_name(name: &str) -> String {
    truncate(&name.escape_debug().to_string(), NAME_MAX).into_owned()
}

/// Cuts `s` to at most `max` characters, marking the cut with `...`.
pub fn truncate(s: &str, max: usize) -> Cow<'_, str> {
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

/// `[4, 5]`.
pub fn shape_text(shape: &[u64]) -> String {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    format!("[{}]", dims.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
