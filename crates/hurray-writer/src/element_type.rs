//! Element types (`element-types.md`), their packing, and typed value slices.
//!
//! The writer's [`ElementType`] names the types of
//! [`hurray_format::ElementType`] (plus [`ElementType::Other`] for any tag
//! byte); tags, names and widths come from there.

use zerocopy::{Immutable, IntoBytes};

use crate::error::{Error, Result};
use crate::num::{len64, mul};

/// The element type of a tensor, stored as the descriptor's `type_tag`.
///
/// Every tag of `element-types.md` has a variant; [`ElementType::Other`]
/// carries any other byte (private extension tags `0xF0`–`0xFE`, or reserved
/// and invalid tags for negative test files).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElementType {
    /// `float16`, tag `0x01`, 2 bytes.
    Float16,
    /// `bfloat16`, tag `0x02`, 2 bytes.
    BFloat16,
    /// `float32`, tag `0x03`, 4 bytes.
    Float32,
    /// `float64`, tag `0x04`, 8 bytes.
    Float64,
    /// `int8`, tag `0x10`, 1 byte.
    Int8,
    /// `uint8`, tag `0x11`, 1 byte.
    UInt8,
    /// `int16`, tag `0x12`, 2 bytes.
    Int16,
    /// `uint16`, tag `0x13`, 2 bytes.
    UInt16,
    /// `int32`, tag `0x14`, 4 bytes.
    Int32,
    /// `uint32`, tag `0x15`, 4 bytes.
    UInt32,
    /// `int64`, tag `0x16`, 8 bytes.
    Int64,
    /// `uint64`, tag `0x17`, 8 bytes.
    UInt64,
    /// `bool`, tag `0x20`, 1 bit, 8 per byte LSB-first.
    Bool,
    /// `float8_e4m3`, tag `0x40`, 1 byte.
    Float8E4M3,
    /// `float8_e5m2`, tag `0x41`, 1 byte.
    Float8E5M2,
    /// `float8_e8m0`, tag `0x42`, 1 byte.
    Float8E8M0,
    /// `float4_e2m1`, tag `0x43`, 4 bits, 2 per byte.
    Float4E2M1,
    /// `float6_e2m3`, tag `0x44`, 6 bits, 4 per 3 bytes.
    Float6E2M3,
    /// `float6_e3m2`, tag `0x45`, 6 bits, 4 per 3 bytes.
    Float6E3M2,
    /// `float128`, tag `0x46`, 16 bytes.
    Float128,
    /// `int4`, tag `0x48`, 4 bits, 2 per byte.
    Int4,
    /// `uint4`, tag `0x49`, 4 bits, 2 per byte.
    UInt4,
    /// `int2`, tag `0x4A`, 2 bits, 4 per byte.
    Int2,
    /// `uint2`, tag `0x4B`, 2 bits, 4 per byte.
    UInt2,
    /// `complex64`, tag `0x50`, 8 bytes (two `float32`).
    Complex64,
    /// `complex128`, tag `0x51`, 16 bytes (two `float64`).
    Complex128,
    /// Any other tag byte: a private extension type (`0xF0`–`0xFE`, which
    /// needs an [`ExtensionType`](crate::ExtensionType) section) or a
    /// reserved / invalid tag (accepted only by the unchecked path).
    Other(u8),
}

/// How elements of a type are packed into bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packing {
    /// Each element takes `bytes` whole bytes.
    Whole {
        /// Bytes per element.
        bytes: u64,
    },
    /// `8 / bits` elements per byte, LSB-first (`bits` is 1, 2 or 4).
    SubByte {
        /// Bits per element.
        bits: u32,
    },
    /// Four 6-bit elements in every 3 bytes, LSB-first.
    SixBit,
}

impl Packing {
    /// Bytes needed for `count` contiguous elements
    /// (`element-types.md` § Buffer Size Calculation; 6-bit types use
    /// `ceil(count / 4) * 3`).
    ///
    /// # Errors
    /// [`Error::Overflow`] when the size does not fit `u64`.
    pub fn bytes_for(self, count: u64) -> Result<u64> {
        match self {
            Packing::Whole { bytes } => mul(count, bytes, "buffer size"),
            Packing::SubByte { bits } => {
                let per_byte = u64::from(8u32.checked_div(bits).unwrap_or(1).max(1));
                Ok(count.div_ceil(per_byte))
            }
            Packing::SixBit => mul(count.div_ceil(4), 3, "buffer size"),
        }
    }

    /// Bits per element.
    pub fn bits(self) -> u64 {
        match self {
            Packing::Whole { bytes } => bytes.saturating_mul(8),
            Packing::SubByte { bits } => u64::from(bits),
            Packing::SixBit => 6,
        }
    }
}

impl ElementType {
    /// Every named element type, in tag order.
    pub const ALL: [ElementType; 26] = [
        ElementType::Float16,
        ElementType::BFloat16,
        ElementType::Float32,
        ElementType::Float64,
        ElementType::Int8,
        ElementType::UInt8,
        ElementType::Int16,
        ElementType::UInt16,
        ElementType::Int32,
        ElementType::UInt32,
        ElementType::Int64,
        ElementType::UInt64,
        ElementType::Bool,
        ElementType::Float8E4M3,
        ElementType::Float8E5M2,
        ElementType::Float8E8M0,
        ElementType::Float4E2M1,
        ElementType::Float6E2M3,
        ElementType::Float6E3M2,
        ElementType::Float128,
        ElementType::Int4,
        ElementType::UInt4,
        ElementType::Int2,
        ElementType::UInt2,
        ElementType::Complex64,
        ElementType::Complex128,
    ];

    /// The same type in the shared vocabulary ([`hurray_format`]), which
    /// holds its tag, name and width; `None` for [`ElementType::Other`].
    pub const fn format(self) -> Option<hurray_format::ElementType> {
        use hurray_format::ElementType as F;
        Some(match self {
            ElementType::Float16 => F::Float16,
            ElementType::BFloat16 => F::Bfloat16,
            ElementType::Float32 => F::Float32,
            ElementType::Float64 => F::Float64,
            ElementType::Int8 => F::Int8,
            ElementType::UInt8 => F::Uint8,
            ElementType::Int16 => F::Int16,
            ElementType::UInt16 => F::Uint16,
            ElementType::Int32 => F::Int32,
            ElementType::UInt32 => F::Uint32,
            ElementType::Int64 => F::Int64,
            ElementType::UInt64 => F::Uint64,
            ElementType::Bool => F::Bool,
            ElementType::Float8E4M3 => F::Float8E4m3,
            ElementType::Float8E5M2 => F::Float8E5m2,
            ElementType::Float8E8M0 => F::Float8E8m0,
            ElementType::Float4E2M1 => F::Float4E2m1,
            ElementType::Float6E2M3 => F::Float6E2m3,
            ElementType::Float6E3M2 => F::Float6E3m2,
            ElementType::Float128 => F::Float128,
            ElementType::Int4 => F::Int4,
            ElementType::UInt4 => F::Uint4,
            ElementType::Int2 => F::Int2,
            ElementType::UInt2 => F::Uint2,
            ElementType::Complex64 => F::Complex64,
            ElementType::Complex128 => F::Complex128,
            ElementType::Other(_) => return None,
        })
    }

    /// The `type_tag` byte.
    pub const fn tag(self) -> u8 {
        match (self, self.format()) {
            (ElementType::Other(tag), _) => tag,
            // Every other variant has a shared type.
            (_, Some(t)) => t.tag(),
            (_, None) => 0,
        }
    }

    /// The type for a tag byte; unnamed tags become [`ElementType::Other`].
    pub fn from_tag(tag: u8) -> Self {
        ElementType::ALL
            .iter()
            .copied()
            .find(|t| t.tag() == tag)
            .unwrap_or(ElementType::Other(tag))
    }

    /// The spec name (`"float32"`, `"int4"`, ...); `"other"` for
    /// [`ElementType::Other`].
    pub const fn name(self) -> &'static str {
        match self.format() {
            Some(t) => t.as_str(),
            None => "other",
        }
    }

    /// Packing of a named type; `None` for [`ElementType::Other`] (an
    /// extension type's packing comes from its
    /// [`ExtensionType`](crate::ExtensionType) section).
    pub fn packing(self) -> Option<Packing> {
        Some(match self.format()?.bit_width() {
            bits @ (1 | 2 | 4) => Packing::SubByte { bits },
            6 => Packing::SixBit,
            bits => Packing::Whole {
                bytes: u64::from(bits / 8),
            },
        })
    }

    /// The minimum alignment of an element within its buffer, in bytes
    /// (`element-types.md` § Type Properties Summary): the byte width, but
    /// 4 for `complex64` and 8 for `complex128`, and 1 for sub-byte types;
    /// `None` for [`ElementType::Other`].
    pub fn alignment(self) -> Option<u64> {
        self.format()?.alignment()
    }

    /// Whether elements are smaller than a byte (`bool`, 2-, 4- and 6-bit
    /// types).
    pub fn is_sub_byte(self) -> bool {
        self.format().is_some_and(hurray_format::ElementType::is_packed)
    }

    /// Bytes needed for `count` contiguous elements, including sub-byte
    /// packing (`element-types.md` § Buffer Size Calculation).
    ///
    /// # Errors
    /// [`Error::UnknownElementType`] for [`ElementType::Other`],
    /// [`Error::Overflow`] when the size does not fit `u64`.
    pub fn buffer_size(self, count: u64) -> Result<u64> {
        self.packing()
            .ok_or(Error::UnknownElementType { tag: self.tag() })?
            .bytes_for(count)
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust type whose in-memory slices can be written as element data without
/// conversion: `f32`, `f64`, `u8`–`u64`, `i8`–`i64`, `half::f16`,
/// `half::bf16`.
///
/// The bytes are taken as they are in memory, which is little-endian on every
/// supported target (the crate refuses to build for big-endian targets).
/// Sealed: the element type of each implementor is fixed by this crate.
pub trait Element: IntoBytes + Immutable + Copy + sealed::Sealed {
    /// The element type this Rust type is written as.
    const ELEMENT_TYPE: ElementType;
}

macro_rules! element {
    ($($t:ty => $e:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const ELEMENT_TYPE: ElementType = ElementType::$e;
        }
    )*};
}

element! {
    f32 => Float32,
    f64 => Float64,
    u8 => UInt8,
    u16 => UInt16,
    u32 => UInt32,
    u64 => UInt64,
    i8 => Int8,
    i16 => Int16,
    i32 => Int32,
    i64 => Int64,
    half::f16 => Float16,
    half::bf16 => BFloat16,
}

/// Element data of a tensor buffer: an element type, an element count and
/// the packed little-endian bytes.
///
/// Build it from a typed slice (`Values::from(&[1.0f32, 2.0][..])`) or from
/// raw bytes with [`Values::new`] (needed for `bool`, 2/4/6-bit, `float8`,
/// `float128` and complex types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Values<'a> {
    element_type: ElementType,
    count: u64,
    bytes: &'a [u8],
}

impl<'a> Values<'a> {
    /// Raw packed bytes holding `count` elements of `element_type`.
    ///
    /// # Errors
    /// - [`Error::UnknownElementType`] for [`ElementType::Other`];
    /// - [`Error::ValuesLength`] when `bytes.len()` differs from the packed
    ///   size of `count` elements (`element-types.md` § Buffer Size
    ///   Calculation);
    /// - [`Error::NonZeroPaddingBits`] when the unused high bits after the
    ///   last sub-byte element are not zero.
    pub fn new(element_type: ElementType, count: u64, bytes: &'a [u8]) -> Result<Self> {
        let packing = element_type.packing().ok_or(Error::UnknownElementType {
            tag: element_type.tag(),
        })?;
        let expected = packing.bytes_for(count)?;
        let actual = len64(bytes.len())?;
        if expected != actual {
            return Err(Error::ValuesLength {
                count,
                expected,
                actual,
            });
        }
        if !matches!(packing, Packing::Whole { .. }) {
            check_padding_bits(bytes, mul(count, packing.bits(), "bit count")?)?;
        }
        Ok(Self {
            element_type,
            count,
            bytes,
        })
    }

    /// Values from a typed slice; the element type follows from `T`.
    pub fn from_slice<T: Element>(values: &'a [T]) -> Self {
        Self {
            element_type: T::ELEMENT_TYPE,
            // A slice never holds more than isize::MAX elements.
            count: u64::try_from(values.len()).unwrap_or(u64::MAX),
            bytes: values.as_bytes(),
        }
    }

    /// The element type.
    pub fn element_type(&self) -> ElementType {
        self.element_type
    }

    /// Number of elements.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The packed bytes (length = packed size of [`Values::count`] elements).
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

impl<'a, T: Element> From<&'a [T]> for Values<'a> {
    fn from(values: &'a [T]) -> Self {
        Values::from_slice(values)
    }
}

impl<'a, T: Element, const N: usize> From<&'a [T; N]> for Values<'a> {
    fn from(values: &'a [T; N]) -> Self {
        Values::from_slice(values.as_slice())
    }
}

impl<'a, T: Element> From<&'a Vec<T>> for Values<'a> {
    fn from(values: &'a Vec<T>) -> Self {
        Values::from_slice(values.as_slice())
    }
}

/// Checks that every bit at position `>= used_bits` (LSB-first bit stream)
/// is zero.
fn check_padding_bits(bytes: &[u8], used_bits: u64) -> Result<()> {
    let first = used_bits / 8;
    let rem = used_bits % 8;
    let mut index = first;
    for &byte in bytes.iter().skip(usize::try_from(first).unwrap_or(usize::MAX)) {
        let mask = if index == first {
            u8::MAX.checked_shl(u32::try_from(rem).unwrap_or(0)).unwrap_or(0)
        } else {
            u8::MAX
        };
        if byte & mask != 0 {
            return Err(Error::NonZeroPaddingBits { byte: index });
        }
        index = index.saturating_add(1);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_is_the_shared_one() {
        // The same types in the same (tag) order as hurray-format's table.
        let shared: Vec<_> = ElementType::ALL.iter().map(|t| t.format()).collect();
        assert_eq!(shared, hurray_format::ElementType::ALL.map(Some).to_vec());
        assert_eq!(ElementType::Other(0xF3).format(), None);
    }

    #[test]
    fn tags_round_trip() {
        for t in ElementType::ALL {
            assert_eq!(ElementType::from_tag(t.tag()), t);
        }
        assert_eq!(ElementType::from_tag(0x47), ElementType::Other(0x47));
    }

    #[test]
    fn sizes() {
        assert_eq!(ElementType::Float32.buffer_size(5).unwrap(), 20);
        assert_eq!(ElementType::Bool.buffer_size(11).unwrap(), 2);
        assert_eq!(ElementType::Int4.buffer_size(3).unwrap(), 2);
        assert_eq!(ElementType::UInt2.buffer_size(5).unwrap(), 2);
        assert_eq!(ElementType::Float6E2M3.buffer_size(5).unwrap(), 6);
        assert_eq!(ElementType::Float6E2M3.buffer_size(4).unwrap(), 3);
        assert_eq!(ElementType::Float6E3M2.buffer_size(1).unwrap(), 3);
        assert_eq!(ElementType::Complex128.buffer_size(2).unwrap(), 32);
        assert!(matches!(
            ElementType::Float64.buffer_size(u64::MAX),
            Err(Error::Overflow { .. })
        ));
    }

    #[test]
    fn padding_bits() {
        assert!(Values::new(ElementType::Bool, 5, &[0x0D]).is_ok());
        assert!(matches!(
            Values::new(ElementType::Bool, 5, &[0x2D]),
            Err(Error::NonZeroPaddingBits { byte: 0 })
        ));
        assert!(Values::new(ElementType::UInt4, 3, &[0xC5, 0x03]).is_ok());
        assert!(matches!(
            Values::new(ElementType::UInt4, 3, &[0xC5, 0x13]),
            Err(Error::NonZeroPaddingBits { byte: 1 })
        ));
        assert!(matches!(
            Values::new(ElementType::UInt4, 3, &[0xC5]),
            Err(Error::ValuesLength { .. })
        ));
        // 5 six-bit values use 30 of 48 bits.
        assert!(Values::new(ElementType::Float6E2M3, 5, &[1, 2, 3, 0x3F, 0, 0]).is_ok());
        assert!(Values::new(ElementType::Float6E2M3, 5, &[1, 2, 3, 0x40, 0, 0]).is_err());
    }
}
