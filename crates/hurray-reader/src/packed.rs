//! Packed sub-byte elements and narrow float formats
//! (`element-types.md` § Tier 1 -- Core Types › Boolean Type, § Tier 2 -- Extended
//! Types › Sub-Byte Integer Types and › Sub-Byte Floating-Point Types › 6-bit packing).

use crate::element_type::ElementType;
pub use hurray_format::narrow::{
    float4_e2m1_to_f32, float6_e2m3_to_f32, float6_e3m2_to_f32, float8_e4m3_to_f32, float8_e5m2_to_f32,
    float8_e8m0_to_f32,
};

/// A read-only view of `len` packed elements (`bool`, `int2`, `uint2`,
/// `int4`, `uint4`, `float4_e2m1`, `float6_e2m3`, `float6_e3m2`) over a
/// buffer's bytes. Elements are numbered from 0 in storage order.
#[derive(Clone, Copy)]
pub struct PackedView<'data> {
    bytes: &'data [u8],
    len: u64,
    element_type: ElementType,
}

/// The type, the length and the first few elements, decoded.
impl std::fmt::Debug for PackedView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let first = crate::debug::first(self.len).filter_map(|i| self.get(i));
        f.debug_struct("PackedView")
            .field("element_type", &self.element_type)
            .field("len", &self.len)
            .field("byte_len", &self.bytes.len())
            .field("values", &crate::debug::few_of(first, crate::debug::count(self.len)))
            .finish()
    }
}

impl<'data> PackedView<'data> {
    /// A view of `len` elements of a packed type over `bytes`; `None` if the
    /// type is not packed or `bytes` is too short for `len` elements.
    pub fn new(bytes: &'data [u8], len: u64, element_type: ElementType) -> Option<Self> {
        let need = element_type.storage_bytes(len)?;
        (element_type.is_packed() && need <= crate::cursor::to_u64(bytes.len())).then_some(PackedView {
            bytes,
            len,
            element_type,
        })
    }

    /// Number of elements.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The element type.
    pub fn element_type(&self) -> ElementType {
        self.element_type
    }

    /// The packed bytes.
    pub fn bytes(&self) -> &'data [u8] {
        self.bytes
    }

    /// The raw bit pattern (code) of element `i`, in the low bits of the
    /// returned byte; `None` if `i >= len`.
    pub fn code(&self, i: u64) -> Option<u8> {
        if i >= self.len {
            return None;
        }
        let bits = self.element_type.bit_width();
        if bits == 6 {
            // Four elements in three bytes, LSB first across the bytes.
            let group = usize::try_from(i / 4).ok()?;
            let start = group.checked_mul(3)?;
            let b = self.bytes.get(start..start.checked_add(3)?)?;
            let word = b.iter().rev().fold(0u32, |w, &x| (w << 8) | u32::from(x));
            let shift = u32::try_from(i % 4).ok()? * 6;
            return u8::try_from((word >> shift) & 0x3F).ok();
        }
        let per_byte = u64::from(8 / bits);
        let byte = *self.bytes.get(usize::try_from(i / per_byte).ok()?)?;
        let shift = u32::try_from(i % per_byte).ok()? * bits;
        let mask = (1u16 << bits) - 1;
        u8::try_from((u16::from(byte) >> shift) & mask).ok()
    }

    /// Element `i` decoded: `Bool`, `Int` (signed types), `UInt` (unsigned)
    /// or `Float` (float4/float6).
    pub fn get(&self, i: u64) -> Option<crate::Value> {
        let code = self.code(i)?;
        Some(decode_packed(self.element_type, code))
    }

    /// All elements, decoded, in storage order.
    pub fn iter(&self) -> impl Iterator<Item = crate::Value> + '_ {
        (0..self.len).filter_map(move |i| self.get(i))
    }
}

/// Decodes the code of one packed element.
pub(crate) fn decode_packed(element_type: ElementType, code: u8) -> crate::Value {
    use crate::Value;
    match element_type {
        ElementType::Bool => Value::Bool(code != 0),
        ElementType::Int4 => Value::Int(i64::from(sign_extend(code, 4))),
        ElementType::Int2 => Value::Int(i64::from(sign_extend(code, 2))),
        ElementType::Float4E2m1 => Value::Float(f64::from(float4_e2m1_to_f32(code))),
        ElementType::Float6E2m3 => Value::Float(f64::from(float6_e2m3_to_f32(code))),
        ElementType::Float6E3m2 => Value::Float(f64::from(float6_e3m2_to_f32(code))),
        _ => Value::UInt(u64::from(code)),
    }
}

/// Two's complement sign extension of the low `bits` bits of `code`.
fn sign_extend(code: u8, bits: u32) -> i8 {
    let shift = 8 - bits;
    i8::from_ne_bytes([code << shift]) >> shift
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Value;

    #[test]
    fn spec_packing_examples_decode() {
        // element-types.md: bool [5] = 0x0D -> [T, F, T, T, F].
        let v = PackedView::new(&[0x0D], 5, ElementType::Bool).unwrap();
        let bools: Vec<_> = v.iter().collect();
        assert_eq!(bools, [true, false, true, true, false].map(Value::Bool).to_vec());
        // uint4 [3] = C5 03 -> [5, 12, 3].
        let v = PackedView::new(&[0xC5, 0x03], 3, ElementType::Uint4).unwrap();
        assert_eq!(v.iter().collect::<Vec<_>>(), [5, 12, 3].map(Value::UInt).to_vec());
        // uint2 [3] = 0x27 -> [3, 1, 2].
        let v = PackedView::new(&[0x27], 3, ElementType::Uint2).unwrap();
        assert_eq!(v.iter().collect::<Vec<_>>(), [3, 1, 2].map(Value::UInt).to_vec());
        // 6-bit worked example: 0x81 0x40 0x20 -> codes 1, 2, 4, 8.
        let v = PackedView::new(&[0x81, 0x40, 0x20], 4, ElementType::Float6E2m3).unwrap();
        assert_eq!((0..4).map(|i| v.code(i).unwrap()).collect::<Vec<_>>(), [1, 2, 4, 8]);
        assert_eq!(v.code(4), None);
    }

    #[test]
    fn signed_codes_sign_extend() {
        let v = PackedView::new(&[0x78], 2, ElementType::Int4).unwrap();
        assert_eq!(v.get(0), Some(Value::Int(-8)));
        assert_eq!(v.get(1), Some(Value::Int(7)));
        let v = PackedView::new(&[0b1110_0100], 4, ElementType::Int2).unwrap();
        let got: Vec<_> = v.iter().collect();
        assert_eq!(got, [0, 1, -2, -1].map(Value::Int).to_vec());
    }

    #[test]
    fn short_buffers_are_refused() {
        assert!(PackedView::new(&[0x00], 3, ElementType::Uint4).is_none());
        assert!(PackedView::new(&[0x00; 4], 5, ElementType::Float6E2m3).is_none());
        assert!(PackedView::new(&[0x00; 4], 1, ElementType::Uint8).is_none());
    }
}
