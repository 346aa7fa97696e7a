//! Element types (`element-types.md`): tags, names, bit widths, alignment
//! and buffer sizes.

use std::fmt;

/// An element type tag, decoded (`element-types.md` § Type Properties Summary).
///
/// Names (`as_str`) are the spec's (`float32`, `bfloat16`, `int4`, ...).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElementType {
    /// IEEE 754 binary16, tag 0x01.
    Float16,
    /// bfloat16, tag 0x02.
    Bfloat16,
    /// IEEE 754 binary32, tag 0x03.
    Float32,
    /// IEEE 754 binary64, tag 0x04.
    Float64,
    /// Tag 0x10.
    Int8,
    /// Tag 0x11.
    Uint8,
    /// Tag 0x12.
    Int16,
    /// Tag 0x13.
    Uint16,
    /// Tag 0x14.
    Int32,
    /// Tag 0x15.
    Uint32,
    /// Tag 0x16.
    Int64,
    /// Tag 0x17.
    Uint64,
    /// One bit, packed 8 per byte LSB first, tag 0x20.
    Bool,
    /// OCP FP8 E4M3, tag 0x40.
    Float8E4m3,
    /// OCP FP8 E5M2, tag 0x41.
    Float8E5m2,
    /// Exponent-only scale E8M0, tag 0x42.
    Float8E8m0,
    /// OCP MX FP4 E2M1, packed 2 per byte, tag 0x43.
    Float4E2m1,
    /// OCP MX FP6 E2M3, 4 elements per 3 bytes, tag 0x44.
    Float6E2m3,
    /// OCP MX FP6 E3M2, 4 elements per 3 bytes, tag 0x45.
    Float6E3m2,
    /// IEEE 754 binary128, tag 0x46.
    Float128,
    /// Signed 4-bit, packed 2 per byte, tag 0x48.
    Int4,
    /// Unsigned 4-bit, packed 2 per byte, tag 0x49.
    Uint4,
    /// Signed 2-bit, packed 4 per byte, tag 0x4A.
    Int2,
    /// Unsigned 2-bit, packed 4 per byte, tag 0x4B.
    Uint2,
    /// Two float32 (re, im), tag 0x50.
    Complex64,
    /// Two float64 (re, im), tag 0x51.
    Complex128,
    /// An implementation-private type, tag 0xF0–0xFE; its width comes from
    /// the descriptor's extension type section.
    Extension {
        /// The tag.
        tag: u8,
        /// Bits per element, from the extension type section.
        bit_width: u32,
    },
}

/// How a tag in the type tag space is classified before decoding
/// (`element-types.md` § Type Tag Space).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagClass {
    /// A built-in type.
    Known(ElementType),
    /// 0xF0–0xFE: needs the extension type section.
    Extension,
    /// 0x00, 0xFF, 0x47, reserved or unassigned values.
    Unknown {
        /// `invalid`, `reserved` or `not recognised`.
        why: &'static str,
    },
}

impl ElementType {
    /// Every built-in element type, in tag order.
    pub const ALL: [ElementType; 26] = [
        ElementType::Float16,
        ElementType::Bfloat16,
        ElementType::Float32,
        ElementType::Float64,
        ElementType::Int8,
        ElementType::Uint8,
        ElementType::Int16,
        ElementType::Uint16,
        ElementType::Int32,
        ElementType::Uint32,
        ElementType::Int64,
        ElementType::Uint64,
        ElementType::Bool,
        ElementType::Float8E4m3,
        ElementType::Float8E5m2,
        ElementType::Float8E8m0,
        ElementType::Float4E2m1,
        ElementType::Float6E2m3,
        ElementType::Float6E3m2,
        ElementType::Float128,
        ElementType::Int4,
        ElementType::Uint4,
        ElementType::Int2,
        ElementType::Uint2,
        ElementType::Complex64,
        ElementType::Complex128,
    ];

    /// Classifies a raw `type_tag`.
    pub const fn classify(tag: u8) -> TagClass {
        use ElementType::*;
        let t = match tag {
            0x01 => Float16,
            0x02 => Bfloat16,
            0x03 => Float32,
            0x04 => Float64,
            0x10 => Int8,
            0x11 => Uint8,
            0x12 => Int16,
            0x13 => Uint16,
            0x14 => Int32,
            0x15 => Uint32,
            0x16 => Int64,
            0x17 => Uint64,
            0x20 => Bool,
            0x40 => Float8E4m3,
            0x41 => Float8E5m2,
            0x42 => Float8E8m0,
            0x43 => Float4E2m1,
            0x44 => Float6E2m3,
            0x45 => Float6E3m2,
            0x46 => Float128,
            0x48 => Int4,
            0x49 => Uint4,
            0x4A => Int2,
            0x4B => Uint2,
            0x50 => Complex64,
            0x51 => Complex128,
            0xF0..=0xFE => return TagClass::Extension,
            0x00 | 0xFF => return TagClass::Unknown { why: "invalid" },
            0x47 | 0x80..=0xEF => return TagClass::Unknown { why: "reserved" },
            _ => return TagClass::Unknown { why: "not recognised" },
        };
        TagClass::Known(t)
    }

    /// Decodes a built-in tag; `None` for the extension range and unknown tags.
    pub const fn from_tag(tag: u8) -> Option<Self> {
        match Self::classify(tag) {
            TagClass::Known(t) => Some(t),
            _ => None,
        }
    }

    /// The wire tag.
    pub const fn tag(self) -> u8 {
        use ElementType::*;
        match self {
            Float16 => 0x01,
            Bfloat16 => 0x02,
            Float32 => 0x03,
            Float64 => 0x04,
            Int8 => 0x10,
            Uint8 => 0x11,
            Int16 => 0x12,
            Uint16 => 0x13,
            Int32 => 0x14,
            Uint32 => 0x15,
            Int64 => 0x16,
            Uint64 => 0x17,
            Bool => 0x20,
            Float8E4m3 => 0x40,
            Float8E5m2 => 0x41,
            Float8E8m0 => 0x42,
            Float4E2m1 => 0x43,
            Float6E2m3 => 0x44,
            Float6E3m2 => 0x45,
            Float128 => 0x46,
            Int4 => 0x48,
            Uint4 => 0x49,
            Int2 => 0x4A,
            Uint2 => 0x4B,
            Complex64 => 0x50,
            Complex128 => 0x51,
            Extension { tag, .. } => tag,
        }
    }

    /// The spec's name: `float32`, `bfloat16`, `int4`, `complex128`, ...
    /// Extension types are `extension`.
    pub const fn as_str(self) -> &'static str {
        use ElementType::*;
        match self {
            Float16 => "float16",
            Bfloat16 => "bfloat16",
            Float32 => "float32",
            Float64 => "float64",
            Int8 => "int8",
            Uint8 => "uint8",
            Int16 => "int16",
            Uint16 => "uint16",
            Int32 => "int32",
            Uint32 => "uint32",
            Int64 => "int64",
            Uint64 => "uint64",
            Bool => "bool",
            Float8E4m3 => "float8_e4m3",
            Float8E5m2 => "float8_e5m2",
            Float8E8m0 => "float8_e8m0",
            Float4E2m1 => "float4_e2m1",
            Float6E2m3 => "float6_e2m3",
            Float6E3m2 => "float6_e3m2",
            Float128 => "float128",
            Int4 => "int4",
            Uint4 => "uint4",
            Int2 => "int2",
            Uint2 => "uint2",
            Complex64 => "complex64",
            Complex128 => "complex128",
            Extension { .. } => "extension",
        }
    }

    /// Bits per element.
    pub const fn bit_width(self) -> u32 {
        use ElementType::*;
        match self {
            Bool => 1,
            Int2 | Uint2 => 2,
            Int4 | Uint4 | Float4E2m1 => 4,
            Float6E2m3 | Float6E3m2 => 6,
            Int8 | Uint8 | Float8E4m3 | Float8E5m2 | Float8E8m0 => 8,
            Float16 | Bfloat16 | Int16 | Uint16 => 16,
            Float32 | Int32 | Uint32 => 32,
            Float64 | Int64 | Uint64 | Complex64 => 64,
            Float128 | Complex128 => 128,
            Extension { bit_width, .. } => bit_width,
        }
    }

    /// Bytes per element for whole-byte types; `None` for packed sub-byte types.
    pub fn byte_width(self) -> Option<u64> {
        let bits = self.bit_width();
        (bits >= 8 && bits.is_multiple_of(8)).then_some(u64::from(bits / 8))
    }

    /// The minimum alignment of an element within its buffer, in bytes
    /// (`element-types.md` § Type Properties Summary): the byte width, but
    /// 4 for `complex64` and 8 for `complex128` (their halves'), and 1 for
    /// packed types (a byte boundary). `None` for an extension type, whose
    /// alignment this table does not give.
    pub fn alignment(self) -> Option<u64> {
        match self {
            ElementType::Complex64 => Some(4),
            ElementType::Complex128 => Some(8),
            ElementType::Extension { .. } => None,
            t if t.is_packed() => Some(1),
            t => t.byte_width(),
        }
    }

    /// True for types packed several to a byte (`bool`, 2-, 4- and 6-bit types).
    pub const fn is_packed(self) -> bool {
        self.bit_width() < 8
    }

    /// Bytes needed to store `count` contiguous elements
    /// (`element-types.md` § Buffer Size Calculation): `count × width` for
    /// whole-byte types, `ceil(count / per_byte)` for 1-, 2- and 4-bit types,
    /// `ceil(count / 4) × 3` for 6-bit types. `None` if it overflows `u64`.
    pub fn storage_bytes(self, count: u64) -> Option<u64> {
        match self.bit_width() {
            6 => count.div_ceil(4).checked_mul(3),
            b @ (1 | 2 | 4) => Some(count.div_ceil(u64::from(8 / b))),
            _ => count.checked_mul(self.byte_width()?),
        }
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElementType::Extension { tag, .. } => write!(f, "extension(0x{tag:02x})"),
            other => f.write_str(other.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_tag_round_trips() {
        for tag in 0u8..=0xFF {
            if let Some(t) = ElementType::from_tag(tag) {
                assert_eq!(t.tag(), tag);
            }
        }
        assert!(ElementType::from_tag(0x47).is_none());
        assert!(ElementType::from_tag(0x00).is_none());
        assert!(ElementType::from_tag(0xFF).is_none());
        assert!(ElementType::from_tag(0x05).is_none());
        let named = (0u8..=0xFF).filter(|&t| ElementType::from_tag(t).is_some()).count();
        assert_eq!(named, ElementType::ALL.len());
        for t in ElementType::ALL {
            assert_eq!(ElementType::from_tag(t.tag()), Some(t));
        }
    }

    #[test]
    fn storage_sizes_follow_the_packing_rules() {
        use ElementType::*;
        assert_eq!(Float32.storage_bytes(5), Some(20));
        assert_eq!(Bool.storage_bytes(5), Some(1));
        assert_eq!(Bool.storage_bytes(11), Some(2));
        assert_eq!(Uint4.storage_bytes(3), Some(2));
        assert_eq!(Uint2.storage_bytes(3), Some(1));
        // NOTES.md 'float6 buffer size': ceil(N/4)*3.
        assert_eq!(Float6E2m3.storage_bytes(5), Some(6));
        assert_eq!(Float6E3m2.storage_bytes(4), Some(3));
        assert_eq!(Complex128.storage_bytes(11), Some(176));
        assert_eq!(Float64.storage_bytes(1 << 61), None);
        assert_eq!(Float16.storage_bytes(0), Some(0));
    }
}
