//! Bounded reads from a section of the file.
//!
//! A [`Cursor`] walks one section (the index, the KV section, one
//! descriptor) and knows the absolute file offset of its first byte, so
//! every error it raises carries the real offset. It never reads past the
//! end of its slice: a field that does not fit is [`Error::Truncated`].

use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

use crate::error::{Error, Field, Location, Result, Scope};
use crate::raw::Described;

/// Converts a length or offset that fits in memory (it indexes a slice that
/// exists) to `u64`. `usize` is at most 64 bits on every supported target.
pub(crate) fn to_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// Converts a position or length read from the file to a slice index. Where
/// `usize` has 64 bits this is the value itself (lossless); elsewhere a
/// value that does not fit becomes `usize::MAX`, which no slice reaches, so
/// a `get` with it fails. A plain cast on 64-bit targets, so that the hot
/// loops that use it (the products' slices and gathers) compile to the
/// same code as with `as`: with `try_from(..).unwrap_or(..)` in their slice
/// selection, LLVM once emitted `cmov`s that cost ~20% (`docs/perf-log/run-c.md`
/// § 3).
#[inline]
pub(crate) fn to_usize(v: u64) -> usize {
    #[cfg(target_pointer_width = "64")]
    {
        v as usize
    }
    #[cfg(not(target_pointer_width = "64"))]
    {
        usize::try_from(v).unwrap_or(usize::MAX)
    }
}

/// One field as a recording cursor read it: its name, absolute offset and
/// bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span<'a> {
    pub(crate) field: Field,
    pub(crate) offset: u64,
    pub(crate) bytes: &'a [u8],
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
    /// Every field read, when recording (for annotated dumps).
    spans: Option<Vec<Span<'a>>>,
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
            spans: None,
        }
    }

    /// Records every field read from now on.
    pub(crate) fn recording(mut self, on: bool) -> Self {
        if on {
            self.spans = Some(Vec::new());
        }
        self
    }

    /// A cursor over a sub-section that records when this one does.
    pub(crate) fn sub(&self, bytes: &'a [u8], base: u64, section: &'static str, rule: &'static str) -> Self {
        Cursor {
            bytes,
            pos: 0,
            base,
            section,
            rule,
            tensor: self.tensor,
            spans: self.spans.as_ref().map(|_| Vec::new()),
        }
    }

    /// Takes over the fields a sub-cursor recorded.
    pub(crate) fn absorb(&mut self, sub: Cursor<'a>) {
        if let (Some(mine), Some(theirs)) = (self.spans.as_mut(), sub.spans) {
            mine.extend(theirs);
        }
    }

    /// The recorded fields (empty when not recording).
    pub(crate) fn into_spans(self) -> Vec<Span<'a>> {
        self.spans.unwrap_or_default()
    }

    fn record(&mut self, field: Field, offset: u64, bytes: &'a [u8]) {
        if let Some(spans) = self.spans.as_mut() {
            spans.push(Span { field, offset, bytes });
        }
    }

    /// Records the sub-fields of a struct read at `offset`.
    fn record_struct<T: Described>(
        &mut self,
        group: Option<&'static str>,
        index: Option<u64>,
        offset: u64,
        bytes: &'a [u8],
    ) {
        if self.spans.is_none() {
            return;
        }
        let mut at = 0usize;
        for &(name, width) in T::FIELDS {
            let end = at.saturating_add(width);
            let field = match (group, index) {
                (Some(g), Some(i)) => Field::member(g, i, name),
                (Some(g), None) => Field::sub(g, name),
                _ => Field::new(name),
            };
            if let Some(b) = bytes.get(at..end) {
                self.record(field, offset.saturating_add(to_u64(at)), b);
            }
            at = end;
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
        self.truncated_after(0, field, need)
    }

    /// [`truncated`](Self::truncated) for a field `skip` bytes on
    /// (`skip <= remaining`).
    fn truncated_after(&self, skip: u64, field: Field, need: u64) -> Error {
        Error::Truncated {
            at: Location {
                scope: self.tensor.map_or(Scope::File, Scope::tensor),
                field,
                offset: self.offset().saturating_add(skip),
                rule: self.rule,
            },
            need,
            have: to_u64(self.remaining()).saturating_sub(skip),
            section: self.section,
        }
    }

    /// Takes the next `n` bytes as one field.
    pub(crate) fn take(&mut self, n: u64, field: Field) -> Result<&'a [u8]> {
        let offset = self.offset();
        let bytes = self.take_quiet(n, field)?;
        self.record(field, offset, bytes);
        Ok(bytes)
    }

    /// Takes the next `n` bytes without recording them (their sub-fields are).
    pub(crate) fn take_quiet(&mut self, n: u64, field: Field) -> Result<&'a [u8]> {
        let n_usize = usize::try_from(n).map_err(|_| self.truncated(field, n))?;
        let end = self.pos.checked_add(n_usize).ok_or_else(|| self.truncated(field, n))?;
        let bytes = self.bytes.get(self.pos..end).ok_or_else(|| self.truncated(field, n))?;
        self.pos = end;
        Ok(bytes)
    }

    /// Views the next `size_of::<T>()` bytes as `T`, one field.
    pub(crate) fn read<T>(&mut self, field: Field) -> Result<&'a T>
    where
        T: FromBytes + KnownLayout + Immutable + Unaligned,
    {
        let bytes = self.take(to_u64(size_of::<T>()), field)?;
        // Cannot fail: the length is exact and `T` has alignment 1.
        T::ref_from_bytes(bytes).map_err(|_| self.truncated(field, to_u64(size_of::<T>())))
    }

    /// Views the next bytes as the on-disk struct `T`, recording each of its
    /// fields (named `group.field` when a group is given). `field` names the
    /// struct in errors.
    pub(crate) fn read_struct<T>(&mut self, field: Field, group: Option<&'static str>) -> Result<&'a T>
    where
        T: FromBytes + KnownLayout + Immutable + Unaligned + Described,
    {
        let offset = self.offset();
        let bytes = self.take_quiet(to_u64(size_of::<T>()), field)?;
        self.record_struct::<T>(group, None, offset, bytes);
        T::ref_from_bytes(bytes).map_err(|_| self.truncated(field, to_u64(size_of::<T>())))
    }

    /// Takes `count` elements of `width` bytes, unrecorded; returns their
    /// absolute offset and bytes. When they do not all fit, the error names
    /// the first element that does not, `field[k]` at its own offset (the
    /// whole array when `field` is already an element).
    fn take_array(&mut self, count: u64, width: usize, field: Field) -> Result<(u64, &'a [u8])> {
        let width64 = to_u64(width.max(1));
        let fits = to_u64(self.remaining()) / width64;
        if count > fits && field.index.is_none() && field.member.is_none() {
            // fits * width <= remaining: no overflow.
            return Err(self.truncated_after(fits * width64, Field::at(field.name, fits), width64));
        }
        let need = count
            .checked_mul(to_u64(width))
            .ok_or_else(|| self.truncated(field, u64::MAX))?;
        let offset = self.offset();
        Ok((offset, self.take_quiet(need, field)?))
    }

    /// Views the next `count` elements as `[T]`, recording each element as
    /// `field[i]`.
    pub(crate) fn slice<T>(&mut self, count: u64, field: Field) -> Result<&'a [T]>
    where
        T: FromBytes + Immutable + Unaligned,
    {
        let (offset, bytes) = self.take_array(count, size_of::<T>(), field)?;
        if self.spans.is_some() {
            for (i, chunk) in bytes.chunks(size_of::<T>().max(1)).enumerate() {
                let at = offset.saturating_add(to_u64(i).saturating_mul(to_u64(size_of::<T>())));
                self.record(Field::at(field.name, to_u64(i)), at, chunk);
            }
        }
        <[T]>::ref_from_bytes(bytes).map_err(|_| self.truncated(field, to_u64(bytes.len())))
    }

    /// Views the next `count` on-disk structs, recording each one's fields
    /// as `field[i].member`.
    pub(crate) fn slice_struct<T>(&mut self, count: u64, field: Field) -> Result<&'a [T]>
    where
        T: FromBytes + Immutable + Unaligned + Described,
    {
        let (offset, bytes) = self.take_array(count, size_of::<T>(), field)?;
        if self.spans.is_some() {
            for (i, chunk) in bytes.chunks(size_of::<T>().max(1)).enumerate() {
                let i = to_u64(i);
                let at = offset.saturating_add(i.saturating_mul(to_u64(size_of::<T>())));
                self.record_struct::<T>(Some(field.name), Some(i), at, chunk);
            }
        }
        <[T]>::ref_from_bytes(bytes).map_err(|_| self.truncated(field, to_u64(bytes.len())))
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
                at: Location {
                    scope: Scope::File,
                    field: Field::new("c"),
                    offset: 106,
                    rule: "rule",
                },
                need: 2,
                have: 1,
                section: "test section",
            }
        );
    }

    /// A truncated array is named by its first element that does not fit,
    /// at that element's offset (`shape[2]`, not the whole `shape`).
    #[test]
    fn a_truncated_array_names_its_first_missing_element() {
        let bytes = [0u8; 20];
        let mut c = Cursor::new(&bytes, 100, "test section", "rule");
        let err = c
            .slice::<zerocopy::little_endian::U64>(3, Field::new("shape"))
            .unwrap_err();
        assert_eq!(
            err,
            Error::Truncated {
                at: Location {
                    scope: Scope::File,
                    field: Field::at("shape", 2),
                    offset: 116,
                    rule: "rule",
                },
                need: 8,
                have: 4,
                section: "test section",
            }
        );
        assert_eq!(c.offset(), 100, "nothing taken");
        assert_eq!(
            c.slice::<zerocopy::little_endian::U64>(2, Field::new("shape"))
                .unwrap()
                .len(),
            2
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
