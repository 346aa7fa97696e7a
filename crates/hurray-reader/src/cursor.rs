//! Bounded reads from a section of the file.
//!
//! A [`Cursor`] walks one section (the index, the KV section, one
//! descriptor) and knows the absolute file offset of its first byte, so
//! every error it raises carries the real offset. It never reads past the
//! end of its slice: a field that does not fit is [`Error::Truncated`].

use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

use crate::error::{Error, Field, Result, Scope};

/// Converts a length or offset that fits in memory (it indexes a slice that
/// exists) to `u64`. `usize` is at most 64 bits on every supported target.
pub(crate) fn to_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// A forward reader over one section of the file.
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// Absolute file offset of `bytes[0]`.
    base: u64,
    /// Name of the section, for errors.
    section: &'static str,
    /// The rule that bounds the section, for errors.
    rule: &'static str,
    /// The tensor the section belongs to, for errors.
    tensor: Option<&'a str>,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(bytes: &'a [u8], base: u64, section: &'static str, rule: &'static str) -> Self {
        Cursor {
            bytes,
            pos: 0,
            base,
            section,
            rule,
            tensor: None,
        }
    }

    /// Attributes errors to a tensor.
    pub(crate) fn for_tensor(mut self, name: &'a str) -> Self {
        self.tensor = Some(name);
        self
    }

    /// Absolute file offset of the next byte.
    pub(crate) fn offset(&self) -> u64 {
        self.base.saturating_add(to_u64(self.pos))
    }

    /// Position within the section, for [`Cursor::since`].
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// The bytes read since `position` (an earlier [`Cursor::position`]).
    pub(crate) fn since(&self, position: usize) -> &'a [u8] {
        self.bytes.get(position..self.pos).unwrap_or_default()
    }

    /// Bytes left in the section.
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    fn truncated(&self, field: Field, need: u64) -> Error {
        Error::Truncated {
            scope: self.tensor.map_or(Scope::File, Scope::tensor),
            field,
            offset: self.offset(),
            need,
            have: to_u64(self.remaining()),
            section: self.section,
            rule: self.rule,
        }
    }

    /// Takes the next `n` bytes.
    pub(crate) fn take(&mut self, n: u64, field: Field) -> Result<&'a [u8]> {
        let n_usize = usize::try_from(n).map_err(|_| self.truncated(field, n))?;
        let end = self.pos.checked_add(n_usize).ok_or_else(|| self.truncated(field, n))?;
        let bytes = self.bytes.get(self.pos..end).ok_or_else(|| self.truncated(field, n))?;
        self.pos = end;
        Ok(bytes)
    }

    /// Views the next `size_of::<T>()` bytes as `T`.
    pub(crate) fn read<T>(&mut self, field: Field) -> Result<&'a T>
    where
        T: FromBytes + KnownLayout + Immutable + Unaligned,
    {
        let bytes = self.take(to_u64(size_of::<T>()), field)?;
        // Cannot fail: the length is exact and `T` has alignment 1.
        T::ref_from_bytes(bytes).map_err(|_| self.truncated(field, to_u64(size_of::<T>())))
    }

    /// Views the next `count` elements as `[T]`.
    pub(crate) fn slice<T>(&mut self, count: u64, field: Field) -> Result<&'a [T]>
    where
        T: FromBytes + Immutable + Unaligned,
    {
        let width = to_u64(size_of::<T>());
        let need = count
            .checked_mul(width)
            .ok_or_else(|| self.truncated(field, u64::MAX))?;
        let bytes = self.take(need, field)?;
        <[T]>::ref_from_bytes(bytes).map_err(|_| self.truncated(field, need))
    }

    pub(crate) fn u8(&mut self, field: Field) -> Result<u8> {
        Ok(*self.read::<u8>(field)?)
    }

    pub(crate) fn u16(&mut self, field: Field) -> Result<u16> {
        Ok(self.read::<zerocopy::little_endian::U16>(field)?.get())
    }

    pub(crate) fn u32(&mut self, field: Field) -> Result<u32> {
        Ok(self.read::<zerocopy::little_endian::U32>(field)?.get())
    }

    pub(crate) fn u64(&mut self, field: Field) -> Result<u64> {
        Ok(self.read::<zerocopy::little_endian::U64>(field)?.get())
    }
}

/// `x` rounded up to a multiple of `align` (a power of two), or `None` on overflow.
pub(crate) fn align_up(x: u64, align: u64) -> Option<u64> {
    let mask = align.checked_sub(1)?;
    x.checked_add(mask).map(|v| v & !mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fields_and_reports_absolute_offsets() {
        let bytes = [1u8, 0, 2, 0, 0, 0, 9];
        let mut c = Cursor::new(&bytes, 100, "test section", "rule");
        assert_eq!(c.u16(Field::new("a")).unwrap(), 1);
        assert_eq!(c.u32(Field::new("b")).unwrap(), 2);
        assert_eq!(c.offset(), 106);
        let err = c.u16(Field::new("c")).unwrap_err();
        assert_eq!(
            err,
            Error::Truncated {
                scope: Scope::File,
                field: Field::new("c"),
                offset: 106,
                need: 2,
                have: 1,
                section: "test section",
                rule: "rule",
            }
        );
    }

    #[test]
    fn huge_counts_are_truncation_not_overflow() {
        let bytes = [0u8; 16];
        let mut c = Cursor::new(&bytes, 0, "s", "r");
        assert!(matches!(
            c.slice::<zerocopy::little_endian::U64>(u64::MAX, Field::new("x")),
            Err(Error::Truncated { .. })
        ));
        assert!(matches!(
            c.take(u64::MAX, Field::new("x")),
            Err(Error::Truncated { .. })
        ));
    }

    #[test]
    fn align_up_rounds_and_detects_overflow() {
        assert_eq!(align_up(0, 4096), Some(0));
        assert_eq!(align_up(1, 4096), Some(4096));
        assert_eq!(align_up(4096, 4096), Some(4096));
        assert_eq!(align_up(173, 8), Some(176));
        assert_eq!(align_up(u64::MAX, 8), None);
    }
}
