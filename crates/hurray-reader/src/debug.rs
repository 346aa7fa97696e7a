//! `Debug` for the types that hold file bytes: a summary (names, shapes,
//! element types, counts, offsets, lengths and the first few values),
//! never the bytes themselves, so that `{:?}` of a view over a gigabyte
//! file stays a few hundred bytes (`format!("{file:?}")` of a 1.2 GB file
//! once built a 4.6 GB string). Only small value types derive `Debug`.

use std::fmt;

/// Elements of an array shown before its length.
pub(crate) const SHOWN: usize = 4;
/// Characters of a name or a string shown.
pub(crate) const CHARS: usize = 48;

/// The first [`SHOWN`] items of `items` (`len` of them in all), as a list
/// ending with `.. (len in all)` when some are left out:
/// `[0, 1, 2, 3, .. (1000 in all)]`.
pub(crate) struct Few<I> {
    items: I,
    len: usize,
}

impl<I> fmt::Debug for Few<I>
where
    I: Iterator + Clone,
    I::Item: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut list = f.debug_list();
        list.entries(self.items.clone().take(SHOWN));
        if self.len > SHOWN {
            list.entry(&format_args!(".. ({} in all)", self.len));
        }
        list.finish()
    }
}

/// A slice's first elements and its length.
pub(crate) fn few<T: fmt::Debug>(items: &[T]) -> Few<std::slice::Iter<'_, T>> {
    Few {
        items: items.iter(),
        len: items.len(),
    }
}

/// An iterator's first elements; `len` is how many it yields in all.
pub(crate) fn few_of<I>(items: I, len: usize) -> Few<I>
where
    I: Iterator + Clone,
    I::Item: fmt::Debug,
{
    Few { items, len }
}

/// The positions of the elements shown of an array of `len`.
pub(crate) fn first(len: u64) -> std::ops::Range<u64> {
    0..len.min(crate::cursor::to_u64(SHOWN))
}

/// A `u64` count as a `usize` for [`few_of`] (saturating: it is only shown).
pub(crate) fn count(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// A name or string from the file: its first [`CHARS`] characters, quoted
/// and escaped as `{:?}` does, then `.. (N bytes)` when it is longer.
pub(crate) struct Text<'a>(pub(crate) &'a str);

impl fmt::Debug for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.char_indices().nth(CHARS) {
            None => fmt::Debug::fmt(self.0, f),
            Some((cut, _)) => {
                fmt::Debug::fmt(self.0.get(..cut).unwrap_or_default(), f)?;
                write!(f, " .. ({} bytes)", self.0.len())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_shows_the_first_elements_and_the_length() {
        assert_eq!(format!("{:?}", few::<u64>(&[])), "[]");
        assert_eq!(format!("{:?}", few(&[1u64, 2, 3, 4])), "[1, 2, 3, 4]");
        assert_eq!(format!("{:?}", few(&[1u64, 2, 3, 4, 5])), "[1, 2, 3, 4, .. (5 in all)]");
        let big: Vec<u32> = (0..1_000_000).collect();
        assert_eq!(format!("{:?}", few(&big)), "[0, 1, 2, 3, .. (1000000 in all)]");
        assert_eq!(
            format!("{:?}", few_of(10..20u8, 10)),
            "[10, 11, 12, 13, .. (10 in all)]"
        );
    }

    #[test]
    fn text_is_cut_after_its_first_characters() {
        assert_eq!(format!("{:?}", Text("a\nb")), "\"a\\nb\"");
        let long = "é".repeat(100);
        let shown = format!("{:?}", Text(&long));
        assert_eq!(shown, format!("\"{}\" .. (200 bytes)", "é".repeat(CHARS)));
        assert_eq!(
            format!("{:?}", Text(&"x".repeat(CHARS))),
            format!("\"{}\"", "x".repeat(CHARS))
        );
    }
}
