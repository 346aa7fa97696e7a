//! One element decoded to a type-independent value, for tools that print
//! or compare tensors of any element type (the typed views are the fast path).

use zerocopy::little_endian::{F32, F64, I16, I32, I64, U16, U32, U64};
use zerocopy::FromBytes;

use crate::element_type::ElementType;

/// One element of any element type, decoded.
///
/// Integers keep their exact value (`Int` for signed types, `UInt` for
/// unsigned); every float type (float16, bfloat16, float8, float4, float6,
/// float32, float64) becomes `Float` (exact: all of them fit in `f64`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// `bool`.
    Bool(bool),
    /// A signed integer type.
    Int(i64),
    /// An unsigned integer type.
    UInt(u64),
    /// A floating-point type, widened to `f64`.
    Float(f64),
    /// `complex64` or `complex128`, widened to `f64`.
    Complex {
        /// Real part.
        re: f64,
        /// Imaginary part.
        im: f64,
    },
    /// `float128` or a whole-byte extension type of at most 128 bits: the
    /// raw little-endian bits. Wider extension elements are not decoded
    /// (read them with [`Buffer::bytes`](crate::Buffer::bytes)).
    Bits(u128),
}

impl Value {
    /// The zero of `element_type` — the value of an element a sparse tensor
    /// does not store: `false`, `0`, `0.0` or `0 + 0i`.
    pub fn zero(element_type: ElementType) -> Value {
        use ElementType::*;
        match element_type {
            Bool => Value::Bool(false),
            Int8 | Int16 | Int32 | Int64 | Int4 | Int2 => Value::Int(0),
            Uint8 | Uint16 | Uint32 | Uint64 | Uint4 | Uint2 => Value::UInt(0),
            Complex64 | Complex128 => Value::Complex { re: 0.0, im: 0.0 },
            Float128 | Extension { .. } => Value::Bits(0),
            _ => Value::Float(0.0),
        }
    }
}

/// Decodes element `i` of a contiguous run of `element_type` elements in
/// `bytes`; `None` if it lies outside `bytes`.
pub(crate) fn decode(element_type: ElementType, bytes: &[u8], i: u64) -> Option<Value> {
    use ElementType::*;
    if element_type.is_packed() {
        let view = crate::PackedView::new(bytes, i.checked_add(1)?, element_type)?;
        return view.get(i);
    }
    let width = element_type.byte_width()?;
    let start = usize::try_from(i.checked_mul(width)?).ok()?;
    let end = start.checked_add(usize::try_from(width).ok()?)?;
    let b = bytes.get(start..end)?;
    let v = match element_type {
        Float16 => Value::Float(f64::from(half::f16::from_bits(U16::read_from_bytes(b).ok()?.get()))),
        Bfloat16 => Value::Float(f64::from(half::bf16::from_bits(U16::read_from_bytes(b).ok()?.get()))),
        Float32 => Value::Float(f64::from(F32::read_from_bytes(b).ok()?.get())),
        Float64 => Value::Float(F64::read_from_bytes(b).ok()?.get()),
        Int8 => Value::Int(i64::from(i8::read_from_bytes(b).ok()?)),
        Uint8 => Value::UInt(u64::from(*b.first()?)),
        Int16 => Value::Int(i64::from(I16::read_from_bytes(b).ok()?.get())),
        Uint16 => Value::UInt(u64::from(U16::read_from_bytes(b).ok()?.get())),
        Int32 => Value::Int(i64::from(I32::read_from_bytes(b).ok()?.get())),
        Uint32 => Value::UInt(u64::from(U32::read_from_bytes(b).ok()?.get())),
        Int64 => Value::Int(I64::read_from_bytes(b).ok()?.get()),
        Uint64 => Value::UInt(U64::read_from_bytes(b).ok()?.get()),
        Float8E4m3 => Value::Float(f64::from(crate::packed::float8_e4m3_to_f32(*b.first()?))),
        Float8E5m2 => Value::Float(f64::from(crate::packed::float8_e5m2_to_f32(*b.first()?))),
        Float8E8m0 => Value::Float(f64::from(crate::packed::float8_e8m0_to_f32(*b.first()?))),
        Complex64 => {
            let (re, im) = b.split_at_checked(4)?;
            Value::Complex {
                re: f64::from(F32::read_from_bytes(re).ok()?.get()),
                im: f64::from(F32::read_from_bytes(im).ok()?.get()),
            }
        }
        Complex128 => {
            let (re, im) = b.split_at_checked(8)?;
            Value::Complex {
                re: F64::read_from_bytes(re).ok()?.get(),
                im: F64::read_from_bytes(im).ok()?.get(),
            }
        }
        _ => {
            // float128 and whole-byte extension types: raw bits. A wider
            // extension element does not fit: not decoded, not truncated.
            if b.len() > 16 {
                return None;
            }
            let mut bits = 0u128;
            for &byte in b.iter().rev() {
                bits = (bits << 8) | u128::from(byte);
            }
            Value::Bits(bits)
        }
    };
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_each_family() {
        assert_eq!(
            decode(ElementType::Float32, &1.5f32.to_le_bytes(), 0),
            Some(Value::Float(1.5))
        );
        assert_eq!(
            decode(ElementType::Int64, &i64::MIN.to_le_bytes(), 0),
            Some(Value::Int(i64::MIN))
        );
        assert_eq!(
            decode(ElementType::Float16, &[0x00, 0x3C, 0x00, 0xC0], 1),
            Some(Value::Float(-2.0))
        );
        assert_eq!(decode(ElementType::Bfloat16, &[0x80, 0x3F], 0), Some(Value::Float(1.0)));
        let mut c = Vec::new();
        c.extend_from_slice(&1.0f32.to_le_bytes());
        c.extend_from_slice(&(-2.0f32).to_le_bytes());
        assert_eq!(
            decode(ElementType::Complex64, &c, 0),
            Some(Value::Complex { re: 1.0, im: -2.0 })
        );
        assert_eq!(decode(ElementType::Bool, &[0x02], 1), Some(Value::Bool(true)));
        assert_eq!(decode(ElementType::Float32, &[0; 4], 1), None);
        // Extension types: raw bits up to 128 bits; a 256-bit element is not
        // decoded (it used to keep its low 16 bytes).
        let ext = |bit_width| ElementType::Extension { tag: 0xF0, bit_width };
        let bytes: Vec<u8> = (1..=32).collect();
        assert_eq!(
            decode(ext(128), &bytes, 1),
            Some(Value::Bits(u128::from_le_bytes(core::array::from_fn(|i| 17 + i as u8))))
        );
        assert_eq!(decode(ext(24), &bytes, 1), Some(Value::Bits(0x06_05_04)));
        assert_eq!(decode(ext(256), &bytes, 0), None);
    }
}
