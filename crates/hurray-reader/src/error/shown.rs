//! How messages show what they quote from the file or the system: names
//! and keys ([`shown_name`]), paths ([`shown_path`]) and byte counts. Used by
//! the reader's own messages, and by the CLI and the Python package for
//! theirs, so that a name reads the same everywhere.

/// A tensor name or KV key as error messages show it: escaped as
/// [`str::escape_debug`] does (control characters, quotes, backslashes),
/// and past 64 characters cut, with the name's size in bytes:
/// `layer.layer... (126 bytes)`. The error itself keeps the whole name
/// ([`Error::tensor`](super::Error::tensor)).
///
/// ```
/// assert_eq!(hurray_reader::shown_name("a\0b"), "a\\0b");
/// // 64 characters are kept, not 64 bytes.
/// let long = "é".repeat(100);
/// assert_eq!(hurray_reader::shown_name(&long), format!("{}... (200 bytes)", "é".repeat(64)));
/// ```
pub fn shown_name(name: &str) -> String {
    const MAX: usize = 64;
    let escaped = name.escape_debug().to_string();
    match escaped.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}... ({} bytes)", escaped.get(..cut).unwrap_or_default(), name.len()),
        None => escaped,
    }
}

/// A byte count as [`Error::AllocationFailed`](super::Error::AllocationFailed) shows it: `u64::MAX` stands
/// for a size that overflowed.
pub(crate) fn shown_bytes(bytes: u64) -> String {
    if bytes == u64::MAX {
        "2^64 bytes or more".to_owned()
    } else {
        format!("{bytes} bytes")
    }
}

/// A path as messages show it: as [`Path::display`](std::path::Path::display)
/// gives it, with control characters escaped (`\u{1b}`), so that a file
/// name cannot send escape sequences to a terminal.
///
/// ```
/// assert_eq!(hurray_reader::shown_path("a\x1b[31m b.hry".as_ref()), "a\\u{1b}[31m b.hry");
/// ```
pub fn shown_path(path: &std::path::Path) -> String {
    let mut shown = String::new();
    for c in path.display().to_string().chars() {
        if c.is_control() {
            shown.extend(c.escape_debug());
        } else {
            shown.push(c);
        }
    }
    shown
}
