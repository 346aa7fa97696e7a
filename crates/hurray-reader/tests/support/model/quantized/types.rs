//! The element types of `element-types.md`: tags, widths and packing.

/// Every type of `element-types.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ty {
    Float16,
    Bfloat16,
    Float32,
    Float64,
    Int8,
    Uint8,
    Int16,
    Uint16,
    Int32,
    Uint32,
    Int64,
    Uint64,
    Bool,
    Float8E4m3,
    Float8E5m2,
    Float8E8m0,
    Float4E2m1,
    Float6E2m3,
    Float6E3m2,
    Float128,
    Int4,
    Uint4,
    Int2,
    Uint2,
    Complex64,
    Complex128,
}

/// `element-types.md` § Type Properties Summary: type, name, tag, bit width.
pub(crate) const TYPES: [(Ty, &str, u8, u32); 26] = [
    (Ty::Float16, "float16", 0x01, 16),
    (Ty::Bfloat16, "bfloat16", 0x02, 16),
    (Ty::Float32, "float32", 0x03, 32),
    (Ty::Float64, "float64", 0x04, 64),
    (Ty::Int8, "int8", 0x10, 8),
    (Ty::Uint8, "uint8", 0x11, 8),
    (Ty::Int16, "int16", 0x12, 16),
    (Ty::Uint16, "uint16", 0x13, 16),
    (Ty::Int32, "int32", 0x14, 32),
    (Ty::Uint32, "uint32", 0x15, 32),
    (Ty::Int64, "int64", 0x16, 64),
    (Ty::Uint64, "uint64", 0x17, 64),
    (Ty::Bool, "bool", 0x20, 1),
    (Ty::Float8E4m3, "float8_e4m3", 0x40, 8),
    (Ty::Float8E5m2, "float8_e5m2", 0x41, 8),
    (Ty::Float8E8m0, "float8_e8m0", 0x42, 8),
    (Ty::Float4E2m1, "float4_e2m1", 0x43, 4),
    (Ty::Float6E2m3, "float6_e2m3", 0x44, 6),
    (Ty::Float6E3m2, "float6_e3m2", 0x45, 6),
    (Ty::Float128, "float128", 0x46, 128),
    (Ty::Int4, "int4", 0x48, 4),
    (Ty::Uint4, "uint4", 0x49, 4),
    (Ty::Int2, "int2", 0x4A, 2),
    (Ty::Uint2, "uint2", 0x4B, 2),
    (Ty::Complex64, "complex64", 0x50, 64),
    (Ty::Complex128, "complex128", 0x51, 128),
];

/// How elements sit in bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Packing {
    /// `width` bytes per element, little-endian.
    Whole(u64),
    /// `per_byte` elements of `bits` bits in each byte, LSB first
    /// (`element-types.md` § Boolean Type, § 4-bit packing, § 2-bit packing).
    Sub { per_byte: u64, bits: u32 },
    /// Four 6-bit elements in every three bytes, LSB first (§ 6-bit packing).
    Six,
}

impl Packing {
    /// Bytes for `count` elements (§ Buffer Size Calculation; 6-bit types
    /// `ceil(N / 4) * 3`, NOTES.md 'float6 buffer size').
    pub(crate) fn bytes_for(self, count: u64) -> u64 {
        match self {
            Packing::Whole(w) => count * w,
            Packing::Sub { per_byte, .. } => count.div_ceil(per_byte),
            Packing::Six => count.div_ceil(4) * 3,
        }
    }

    /// Bytes taken by `elements` elements that start a buffer (a whole
    /// number of bytes or groups).
    pub(crate) fn bytes_of_units(self, elements: u64) -> u64 {
        match self {
            Packing::Whole(w) => elements * w,
            Packing::Sub { per_byte, .. } => elements / per_byte,
            Packing::Six => elements / 4 * 3,
        }
    }

    /// Elements per byte (or per 6-bit group); 1 for whole-byte types.
    pub(crate) fn group(self) -> u64 {
        match self {
            Packing::Whole(_) => 1,
            Packing::Sub { per_byte, .. } => per_byte,
            Packing::Six => 4,
        }
    }

    /// Puts the pattern `bits` of element `position` (counted from the
    /// buffer's first byte) into `buf`. 6-bit: element `j` of a group takes
    /// bits `6j .. 6j + 6` of its three bytes read as one little-endian
    /// 24-bit number (the table of § 6-bit packing).
    pub(crate) fn place(self, buf: &mut [u8], position: u64, bits: u128) {
        match self {
            Packing::Whole(w) => {
                let start = (position * w) as usize;
                buf[start..start + w as usize].copy_from_slice(&bits.to_le_bytes()[..w as usize]);
            }
            Packing::Sub { per_byte, bits: b } => {
                let byte = (position / per_byte) as usize;
                let shift = (position % per_byte) as u32 * b;
                let mask = ((1u16 << b) - 1) as u8;
                buf[byte] = buf[byte] & !(mask << shift) | (bits as u8 & mask) << shift;
            }
            Packing::Six => {
                let start = (position / 4 * 3) as usize;
                let j = (position % 4) as u32;
                let group = &mut buf[start..start + 3];
                let mut word = u32::from(group[0]) | u32::from(group[1]) << 8 | u32::from(group[2]) << 16;
                word = word & !(0x3F << (6 * j)) | (bits as u32 & 0x3F) << (6 * j);
                group.copy_from_slice(&word.to_le_bytes()[..3]);
            }
        }
    }
}

impl Ty {
    pub(crate) fn row(self) -> (Ty, &'static str, u8, u32) {
        TYPES.iter().copied().find(|r| r.0 == self).unwrap()
    }

    pub(crate) fn name(self) -> &'static str {
        self.row().1
    }

    pub(crate) fn tag(self) -> u8 {
        self.row().2
    }

    pub(crate) fn bits(self) -> u32 {
        self.row().3
    }

    pub(crate) fn from_tag(tag: u8) -> Option<Ty> {
        TYPES.iter().find(|r| r.2 == tag).map(|r| r.0)
    }

    pub(crate) fn packing(self) -> Packing {
        match self.bits() {
            6 => Packing::Six,
            b if b < 8 => Packing::Sub {
                per_byte: u64::from(8 / b),
                bits: b,
            },
            b => Packing::Whole(u64::from(b / 8)),
        }
    }

    pub(crate) fn writer(self) -> hurray_writer::ElementType {
        use hurray_writer::ElementType as W;
        match self {
            Ty::Float16 => W::Float16,
            Ty::Bfloat16 => W::BFloat16,
            Ty::Float32 => W::Float32,
            Ty::Float64 => W::Float64,
            Ty::Int8 => W::Int8,
            Ty::Uint8 => W::UInt8,
            Ty::Int16 => W::Int16,
            Ty::Uint16 => W::UInt16,
            Ty::Int32 => W::Int32,
            Ty::Uint32 => W::UInt32,
            Ty::Int64 => W::Int64,
            Ty::Uint64 => W::UInt64,
            Ty::Bool => W::Bool,
            Ty::Float8E4m3 => W::Float8E4M3,
            Ty::Float8E5m2 => W::Float8E5M2,
            Ty::Float8E8m0 => W::Float8E8M0,
            Ty::Float4E2m1 => W::Float4E2M1,
            Ty::Float6E2m3 => W::Float6E2M3,
            Ty::Float6E3m2 => W::Float6E3M2,
            Ty::Float128 => W::Float128,
            Ty::Int4 => W::Int4,
            Ty::Uint4 => W::UInt4,
            Ty::Int2 => W::Int2,
            Ty::Uint2 => W::UInt2,
            Ty::Complex64 => W::Complex64,
            Ty::Complex128 => W::Complex128,
        }
    }

    pub(crate) fn is_signed_int(self) -> bool {
        matches!(self, Ty::Int8 | Ty::Int16 | Ty::Int32 | Ty::Int64 | Ty::Int4 | Ty::Int2)
    }

    pub(crate) fn is_unsigned_int(self) -> bool {
        matches!(
            self,
            Ty::Uint8 | Ty::Uint16 | Ty::Uint32 | Ty::Uint64 | Ty::Uint4 | Ty::Uint2
        )
    }

    /// Range of an integer type (two's complement for the signed ones).
    pub(crate) fn int_range(self) -> (i64, i64) {
        let b = self.bits();
        if self.is_signed_int() {
            (-(1i64 << (b - 1)), (1i64 << (b - 1)) - 1)
        } else {
            (0, if b == 64 { i64::MAX } else { (1i64 << b) - 1 })
        }
    }
}
