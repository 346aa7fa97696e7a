//! Element types (`element-types.md`, `memory-layout.md` § Sub-Byte
//! Types): the representative set, their packing and value patterns; and
//! writing a file, checked or through the unchecked path.

use hurray_reader::{AlignedBytes, Value};
use hurray_writer::quant::ScaleType;
use hurray_writer::{BufferData, FileWriter, RawDescriptor, RawTensor, WriterOptions};
use proptest::prelude::*;

use super::super::basics::{ieee_minifloat, minifloat};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ty {
    Float32,
    Float64,
    Int32,
    Int8,
    Uint8,
    Uint16,
    Int64,
    Float16,
    Complex64,
    Bool,
    Int4,
    Float6E2m3,
}

/// Value types of the CSF and unquantized block-paged cases.
pub(crate) const TYPES: [Ty; 11] = [
    Ty::Float32,
    Ty::Float64,
    Ty::Int32,
    Ty::Int8,
    Ty::Uint16,
    Ty::Int64,
    Ty::Float16,
    Ty::Complex64,
    Ty::Bool,
    Ty::Int4,
    Ty::Float6E2m3,
];

/// Storage types every quantization scheme drawn accepts
/// (`quantization/*.md` § Valid Storage Types).
pub(crate) const QUANT_TYPES: [Ty; 3] = [Ty::Int8, Ty::Uint8, Ty::Int4];

#[derive(Debug, Clone, Copy)]
pub(crate) enum Packing {
    /// `width` bytes per element, little-endian.
    Whole(u64),
    /// `per_byte` elements of `bits` bits in each byte, LSB first.
    Sub { per_byte: u64, bits: u32 },
    /// Four 6-bit elements in every three bytes.
    Six,
}

impl Ty {
    pub(crate) fn writer(self) -> hurray_writer::ElementType {
        use hurray_writer::ElementType as W;
        match self {
            Ty::Float32 => W::Float32,
            Ty::Float64 => W::Float64,
            Ty::Int32 => W::Int32,
            Ty::Int8 => W::Int8,
            Ty::Uint8 => W::UInt8,
            Ty::Uint16 => W::UInt16,
            Ty::Int64 => W::Int64,
            Ty::Float16 => W::Float16,
            Ty::Complex64 => W::Complex64,
            Ty::Bool => W::Bool,
            Ty::Int4 => W::Int4,
            Ty::Float6E2m3 => W::Float6E2M3,
        }
    }

    pub(crate) fn reader(self) -> hurray_reader::ElementType {
        use hurray_reader::ElementType as R;
        match self {
            Ty::Float32 => R::Float32,
            Ty::Float64 => R::Float64,
            Ty::Int32 => R::Int32,
            Ty::Int8 => R::Int8,
            Ty::Uint8 => R::Uint8,
            Ty::Uint16 => R::Uint16,
            Ty::Int64 => R::Int64,
            Ty::Float16 => R::Float16,
            Ty::Complex64 => R::Complex64,
            Ty::Bool => R::Bool,
            Ty::Int4 => R::Int4,
            Ty::Float6E2m3 => R::Float6E2m3,
        }
    }

    pub(crate) fn packing(self) -> Packing {
        match self {
            Ty::Int8 | Ty::Uint8 => Packing::Whole(1),
            Ty::Uint16 | Ty::Float16 => Packing::Whole(2),
            Ty::Float32 | Ty::Int32 => Packing::Whole(4),
            Ty::Float64 | Ty::Int64 | Ty::Complex64 => Packing::Whole(8),
            Ty::Bool => Packing::Sub { per_byte: 8, bits: 1 },
            Ty::Int4 => Packing::Sub { per_byte: 2, bits: 4 },
            Ty::Float6E2m3 => Packing::Six,
        }
    }

    pub(crate) fn bits(self) -> u32 {
        match self.packing() {
            Packing::Whole(w) => 8 * w as u32,
            Packing::Sub { bits, .. } => bits,
            Packing::Six => 6,
        }
    }

    /// Bytes for `count` elements (`element-types.md` § Buffer Size
    /// Calculation; 6-bit: `ceil(N / 4) * 3`, NOTES.md).
    pub(crate) fn bytes_for(self, count: u64) -> u64 {
        match self.packing() {
            Packing::Whole(w) => count * w,
            Packing::Sub { per_byte, .. } => count.div_ceil(per_byte),
            Packing::Six => count.div_ceil(4) * 3,
        }
    }

    /// Puts the bit pattern of element `offset` into `buf`.
    pub(crate) fn place(self, buf: &mut [u8], offset: u64, bits: u64) {
        match self.packing() {
            Packing::Whole(w) => {
                let start = (offset * w) as usize;
                buf[start..start + w as usize].copy_from_slice(&bits.to_le_bytes()[..w as usize]);
            }
            Packing::Sub { per_byte, bits: b } => {
                let byte = (offset / per_byte) as usize;
                let shift = (offset % per_byte) as u32 * b;
                let mask = ((1u16 << b) - 1) as u8;
                buf[byte] = buf[byte] & !(mask << shift) | (bits as u8 & mask) << shift;
            }
            Packing::Six => {
                let start = (offset / 4 * 3) as usize;
                let j = (offset % 4) as u32;
                let group = &mut buf[start..start + 3];
                let mut word = u32::from(group[0]) | u32::from(group[1]) << 8 | u32::from(group[2]) << 16;
                word = word & !(0x3F << (6 * j)) | (bits as u32 & 0x3F) << (6 * j);
                group.copy_from_slice(&word.to_le_bytes()[..3]);
            }
        }
    }

    /// The value of bit pattern `bits`, decoded from `element-types.md`.
    pub(crate) fn value(self, bits: u64) -> Value {
        match self {
            Ty::Float32 => Value::Float(f64::from(f32::from_bits(bits as u32))),
            Ty::Float64 => Value::Float(f64::from_bits(bits)),
            Ty::Int32 => Value::Int(i64::from(bits as u32 as i32)),
            Ty::Int8 => Value::Int(i64::from(bits as u8 as i8)),
            Ty::Uint8 | Ty::Uint16 => Value::UInt(bits),
            Ty::Int64 => Value::Int(bits as i64),
            // IEEE binary16: 5 exponent bits, bias 15.
            Ty::Float16 => Value::Float(ieee_minifloat(bits as u32, 5, 10, 15)),
            Ty::Complex64 => Value::Complex {
                re: f64::from(f32::from_bits(bits as u32)),
                im: f64::from(f32::from_bits((bits >> 32) as u32)),
            },
            Ty::Bool => Value::Bool(bits & 1 == 1),
            // Two's complement in 4 bits.
            Ty::Int4 => Value::Int(i64::from(((bits as u8) << 4) as i8 >> 4)),
            // 1-2-3, bias 1, no inf or NaN.
            Ty::Float6E2m3 => Value::Float(minifloat(bits as u32, 2, 3, 1)),
        }
    }

    /// Zero points representable in the storage type (`quantization/*.md`:
    /// the zero point lies within the storage type's range).
    pub(crate) fn zero_point_range(self) -> (i64, i64) {
        match self {
            Ty::Int8 => (-128, 127),
            Ty::Uint8 => (0, 255),
            Ty::Int4 => (-8, 7),
            other => panic!("{other:?} is not a quantized storage type here"),
        }
    }
}

/// A `bits`-bit pattern: zero, the sign bit alone (-0.0), all ones, or
/// random, by `kind`.
pub(crate) fn pattern(kind: u8, raw: u64, bits: u32) -> u64 {
    let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    match kind % 16 {
        0 => 0,
        1 => 1u64 << (bits - 1),
        2 => mask,
        _ => raw & mask,
    }
}

pub(crate) fn value_bits() -> impl Strategy<Value = (u8, u64)> {
    (0u8..16, any::<u64>())
}

pub(crate) fn le_u64s(values: &[u64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// `values` as `width`-byte little-endian integers (4 or 8).
pub(crate) fn le_index(values: &[u64], width: u64) -> Vec<u8> {
    values
        .iter()
        .flat_map(|&v| v.to_le_bytes()[..width as usize].to_vec())
        .collect()
}

/// The written file's bytes, from a writer closure.
pub(crate) fn write_file(
    f: impl FnOnce(&mut FileWriter<Vec<u8>>) -> Result<(), hurray_writer::Error>,
) -> Result<AlignedBytes, hurray_writer::Error> {
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default())?;
    f(&mut w)?;
    Ok(AlignedBytes::from_slice(&w.finish()?))
}

/// A file written through the unchecked path: descriptor bytes as given,
/// buffers as given.
pub(crate) fn write_raw(raw: &RawDescriptor, buffers: &[Vec<u8>]) -> AlignedBytes {
    let descriptor = raw.encode().expect("raw descriptor encodes");
    let data: Vec<BufferData<'_>> = buffers.iter().map(|b| BufferData::Bytes(b)).collect();
    write_file(|w| w.write_tensor_unchecked(RawTensor::new("t", descriptor, data))).expect("unchecked write")
}

/// How the values of a case are quantized.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Quant {
    /// `quantization/per-tensor-affine.md`.
    Tensor,
    /// `quantization/per-channel-affine.md` along `num_heads` (1) or
    /// `head_dim` (2), § Per-scheme composition.
    Channel { axis: u32, symmetric: bool },
    /// `quantization/per-block-affine.md`, axis 0, `block_size = page_size`:
    /// one scale per page slot (§ Per-page-slot parameters).
    Block { scale: ScaleType, symmetric: bool },
}

/// Exactly representable in float16, bfloat16 and float32, all non-zero.
pub(crate) const SCALES: [f32; 8] = [0.5, 1.0, 2.0, 0.25, -1.5, 3.0, 0.125, -4.0];
