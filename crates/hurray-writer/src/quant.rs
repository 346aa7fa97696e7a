//! Quantization payloads (`quantization.md`, `quantization/*.md`).
//!
//! A descriptor carries the payload bytes verbatim
//! ([`TensorDescriptor::quantization`](crate::TensorDescriptor::quantization));
//! the types here build those bytes for the five defined schemes. The writer
//! prefixes the payload with its `u32` `quantization_length`.

use hurray_format::quant::{
    scale_type, MXFP, NF4, PER_BLOCK_AFFINE, PER_CHANNEL_AFFINE, PER_TENSOR_AFFINE, SCHEME_VERSION, SYMMETRIC,
};

use crate::element_type::ElementType;
use crate::error::{Error, Result};
use crate::num::{add, mul, Enc};

/// Scale storage type of the per-block affine scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleType {
    /// `float16` (`0x01`).
    Float16,
    /// `bfloat16` (`0x02`).
    BFloat16,
    /// `float32` (`0x03`).
    Float32,
}

impl ScaleType {
    /// The `scale_type_tag` byte.
    pub const fn tag(self) -> u8 {
        match self {
            ScaleType::Float16 => scale_type::FLOAT16,
            ScaleType::BFloat16 => scale_type::BFLOAT16,
            ScaleType::Float32 => scale_type::FLOAT32,
        }
    }

    /// Bytes per scale value.
    pub const fn width(self) -> u64 {
        match self {
            ScaleType::Float16 | ScaleType::BFloat16 => 2,
            ScaleType::Float32 => 4,
        }
    }
}

/// `zero_point_buffer_index` value meaning "no zero-point buffer".
pub const NO_ZERO_POINT_BUFFER: u32 = hurray_format::quant::NO_ZERO_POINT_BUFFER;

/// Per-tensor affine (`0x01`): one inline scale and zero point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerTensorAffine {
    /// Dequantization scale (finite, non-zero).
    pub scale: f32,
    /// Zero point (within the storage type's range).
    pub zero_point: i32,
}

impl PerTensorAffine {
    /// The 16 payload bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Enc::new();
        header(&mut e, PER_TENSOR_AFFINE, 0);
        e.f32(self.scale);
        e.i32(self.zero_point);
        e.bytes(&[0; 4]);
        e.buf
    }
}

/// Per-channel affine (`0x02`): `float32` scales (and `int32` zero points)
/// per slice along `axis`, in separate buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerChannelAffine {
    /// Quantized axis (< rank).
    pub axis: u32,
    /// Buffer table index of the scales.
    pub scale_buffer_index: u32,
    /// Buffer table index of the zero points; `None` = symmetric.
    pub zero_point_buffer_index: Option<u32>,
}

impl PerChannelAffine {
    /// The 20 payload bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Enc::new();
        header(&mut e, PER_CHANNEL_AFFINE, symmetric_flag(self.zero_point_buffer_index));
        e.u32(self.axis);
        e.u32(self.scale_buffer_index);
        e.u32(self.zero_point_buffer_index.unwrap_or(NO_ZERO_POINT_BUFFER));
        e.u8(ScaleType::Float32.tag());
        e.bytes(&[0; 3]);
        e.buf
    }
}

/// Per-block affine (`0x03`): one scale (and zero point) per block of
/// `block_size` elements along `axis`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerBlockAffine {
    /// Blocked axis (< rank).
    pub axis: u32,
    /// Elements per block (power of two, >= 2).
    pub block_size: u32,
    /// Buffer table index of the scales.
    pub scale_buffer_index: u32,
    /// Buffer table index of the `int32` zero points; `None` = symmetric.
    pub zero_point_buffer_index: Option<u32>,
    /// Storage type of the scales.
    pub scale_type: ScaleType,
}

impl PerBlockAffine {
    /// The 24 payload bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Enc::new();
        header(&mut e, PER_BLOCK_AFFINE, symmetric_flag(self.zero_point_buffer_index));
        e.u32(self.axis);
        e.u32(self.block_size);
        e.u32(self.scale_buffer_index);
        e.u32(self.zero_point_buffer_index.unwrap_or(NO_ZERO_POINT_BUFFER));
        e.u8(self.scale_type.tag());
        e.bytes(&[0; 3]);
        e.buf
    }
}

/// NF4 (`0x04`): `uint4` codes with one `float32` absmax per block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nf4 {
    /// Blocked axis (< rank).
    pub axis: u32,
    /// Elements per block (power of two, >= 8).
    pub block_size: u32,
    /// Buffer table index of the absmax scales.
    pub scale_buffer_index: u32,
}

impl Nf4 {
    /// The 16 payload bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Enc::new();
        header(&mut e, NF4, 0);
        e.u32(self.axis);
        e.u32(self.block_size);
        e.u32(self.scale_buffer_index);
        e.buf
    }
}

/// MXFP (`0x05`): one `float8_e8m0` scale per block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mxfp {
    /// Blocked axis (< rank).
    pub axis: u32,
    /// Elements per block (power of two in `[16, 2048]`).
    pub block_size: u32,
    /// Buffer table index of the scales.
    pub scale_buffer_index: u32,
}

impl Mxfp {
    /// The 16 payload bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Enc::new();
        header(&mut e, MXFP, 0);
        e.u32(self.axis);
        e.u32(self.block_size);
        e.u32(self.scale_buffer_index);
        e.buf
    }
}

fn header(e: &mut Enc, scheme_tag: u8, flags: u16) {
    e.u8(scheme_tag);
    e.u8(SCHEME_VERSION);
    e.u16(flags);
}

fn symmetric_flag(zero_point: Option<u32>) -> u16 {
    if zero_point.is_none() {
        SYMMETRIC
    } else {
        0
    }
}

/// What the quantization check needs to know about the tensor.
pub(crate) struct QuantContext<'a> {
    pub element_type: ElementType,
    pub shape: &'a [u64],
    /// Buffers used by the layout itself (1 for dense, 3 for CSC, ...).
    pub layout_buffers: u64,
    /// `byte_size` of every buffer in the table.
    pub buffer_sizes: &'a [u64],
    /// Whether the layout is dense (scale sizes are checked only then).
    pub dense: bool,
    /// `(num_pages, page_size)` for block-paged tensors.
    pub paged: Option<(u64, u32)>,
}

/// Facts derived from a checked payload.
pub(crate) struct QuantFacts {
    /// Storage elements the data buffer needs per logical element count,
    /// for schemes that pad blocks: `(axis, block_size)`.
    pub padded_axis: Option<(usize, u64)>,
}

fn u32_at(p: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    if let Some(src) = p.get(at..at.saturating_add(4)) {
        b.copy_from_slice(src);
    }
    u32::from_le_bytes(b)
}

fn bad(what: &'static str, value: u64, rule: &'static str) -> Error {
    Error::InvalidField { what, value, rule }
}

/// Checks a quantization payload against its scheme's rules and the tensor.
pub(crate) fn check(payload: &[u8], ctx: &QuantContext<'_>) -> Result<QuantFacts> {
    const HDR: &str = "quantization.md § Descriptor Header";
    let len = u64::try_from(payload.len()).map_err(|_| Error::overflow("quantization_length"))?;
    let (&tag, &version) = match (payload.first(), payload.get(1)) {
        (Some(t), Some(v)) if len >= 4 => (t, v),
        _ => return Err(bad("quantization_length", len, HDR)),
    };
    let flags = u32::from(u16::from_le_bytes([
        payload.get(2).copied().unwrap_or(0),
        payload.get(3).copied().unwrap_or(0),
    ]));
    if (0xF0..=0xFE).contains(&tag) {
        // Private scheme: only the header is defined.
        return Ok(QuantFacts { padded_axis: None });
    }
    let (rule, exact_len): (&'static str, u64) = match tag {
        PER_TENSOR_AFFINE => ("quantization/per-tensor-affine.md § Binary Encoding", 16),
        PER_CHANNEL_AFFINE => ("quantization/per-channel-affine.md § Binary Encoding", 20),
        PER_BLOCK_AFFINE => ("quantization/per-block-affine.md § Binary Encoding", 24),
        NF4 => ("quantization/nf4.md § Binary Encoding", 16),
        MXFP => ("quantization/mxfp.md § Binary Encoding", 16),
        _ => return Err(bad("scheme_tag", u64::from(tag), "quantization.md § Scheme Tag Space")),
    };
    if version != SCHEME_VERSION {
        return Err(bad("scheme_version", u64::from(version), HDR));
    }
    if len != exact_len {
        return Err(bad("quantization_length", len, rule));
    }
    let allowed_flags = if matches!(tag, PER_CHANNEL_AFFINE | PER_BLOCK_AFFINE) {
        u32::from(SYMMETRIC)
    } else {
        0
    };
    if flags & !allowed_flags != 0 {
        return Err(bad("quantization flags", u64::from(flags), rule));
    }
    check_storage_type(tag, ctx.element_type)?;
    let symmetric = flags & u32::from(SYMMETRIC) != 0;

    if tag == PER_TENSOR_AFFINE {
        let scale = f32::from_le_bytes(u32_at(payload, 4).to_le_bytes());
        if !scale.is_finite() || scale == 0.0 {
            return Err(Error::InvalidFloatField {
                what: "scale",
                value: f64::from(scale),
                rule: "quantization/per-tensor-affine.md § Validity Constraints",
            });
        }
        let zp = i32::from_le_bytes(u32_at(payload, 8).to_le_bytes());
        if !zero_point_in_range(ctx.element_type, zp) {
            return Err(bad(
                "zero_point",
                u64::from(u32_at(payload, 8)),
                "quantization/per-tensor-affine.md § Validity Constraints",
            ));
        }
        if payload.get(12..16) != Some(&[0u8; 4][..]) {
            return Err(bad("quantization _reserved", u64::from(u32_at(payload, 12)), rule));
        }
        return expect_buffers(ctx, &[]).map(|()| QuantFacts { padded_axis: None });
    }

    let axis = u32_at(payload, 4);
    let axis_len = usize::try_from(axis)
        .ok()
        .and_then(|a| ctx.shape.get(a).copied().map(|s| (a, s)));
    let Some((axis_index, axis_size)) = axis_len else {
        return Err(bad("axis", u64::from(axis), rule));
    };
    if axis_size == u64::MAX {
        return Err(bad("shape[axis]", axis_size, rule));
    }

    if tag == PER_CHANNEL_AFFINE {
        let scale_idx = u32_at(payload, 8);
        let zp_idx = u32_at(payload, 12);
        if payload.get(16) != Some(&scale_type::FLOAT32) {
            return Err(bad(
                "scale_type_tag",
                u64::from(payload.get(16).copied().unwrap_or(0)),
                rule,
            ));
        }
        if payload.get(17..20) != Some(&[0u8; 3][..]) {
            return Err(bad("quantization _reserved", 1, rule));
        }
        if symmetric && zp_idx != NO_ZERO_POINT_BUFFER {
            return Err(bad("zero_point_buffer_index", u64::from(zp_idx), rule));
        }
        if let Some((_, _)) = ctx.paged {
            if axis == 0 {
                return Err(bad(
                    "axis",
                    0,
                    "layouts/block-paged.md § Quantization Compatibility › Per-scheme composition: no per-channel quantization of the paged axis",
                ));
            }
        }
        let per_array = mul(axis_size, 4, "scale buffer size")?;
        let mut refs = vec![(scale_idx, per_array)];
        if !symmetric {
            refs.push((zp_idx, per_array));
        }
        expect_buffers(ctx, &refs)?;
        return Ok(QuantFacts { padded_axis: None });
    }

    let block_size = u32_at(payload, 8);
    let scale_idx = u32_at(payload, 12);
    let min_block = match tag {
        PER_BLOCK_AFFINE => 2,
        NF4 => 8,
        _ => 16,
    };
    if !block_size.is_power_of_two() || block_size < min_block || (tag == MXFP && block_size > 2048) {
        return Err(bad("block_size", u64::from(block_size), rule));
    }
    let k = u64::from(block_size);
    if axis_size > 0 && k > axis_size {
        return Err(bad("block_size", k, rule));
    }
    if tag == MXFP && (axis_size == 0 || axis_size.checked_rem(k) != Some(0)) {
        return Err(bad(
            "shape[axis]",
            axis_size,
            "quantization/mxfp.md § Validity Constraints: a positive multiple of block_size",
        ));
    }
    let others = ctx
        .shape
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != axis_index)
        .try_fold(1u64, |acc, (_, &d)| mul(acc, d, "block count"))?;
    let num_blocks = mul(axis_size.div_ceil(k), others, "block count")?;

    let (scale_width, zp_idx) = match tag {
        PER_BLOCK_AFFINE => {
            let zp_idx = u32_at(payload, 16);
            let scale_type = payload.get(20).copied().unwrap_or(0);
            let width = match scale_type {
                scale_type::FLOAT16 | scale_type::BFLOAT16 => 2,
                scale_type::FLOAT32 => 4,
                other => return Err(bad("scale_type_tag", u64::from(other), rule)),
            };
            if payload.get(21..24) != Some(&[0u8; 3][..]) {
                return Err(bad("quantization _reserved", 1, rule));
            }
            if symmetric && zp_idx != NO_ZERO_POINT_BUFFER {
                return Err(bad("zero_point_buffer_index", u64::from(zp_idx), rule));
            }
            (width, (!symmetric).then_some(zp_idx))
        }
        NF4 => (4, None),
        _ => (1, None),
    };

    let entries = match ctx.paged {
        Some((num_pages, page_size)) => {
            if tag == PER_BLOCK_AFFINE && (axis != 0 || block_size != page_size) {
                return Err(bad(
                    "block_size",
                    k,
                    "layouts/block-paged.md § Quantization Compatibility › Per-scheme composition: per-block needs axis 0 and block_size = page_size",
                ));
            }
            mul(num_pages, u64::from(page_size), "scale count")?
        }
        None => num_blocks,
    };
    let mut refs = vec![(scale_idx, mul(entries, scale_width, "scale buffer size")?)];
    if let Some(z) = zp_idx {
        refs.push((z, mul(entries, 4, "zero point buffer size")?));
    }
    expect_buffers(ctx, &refs)?;
    let padded = matches!(tag, PER_BLOCK_AFFINE | NF4).then_some((axis_index, k));
    Ok(QuantFacts { padded_axis: padded })
}

/// Checks that the parameter buffers referenced by `refs` (index, bytes) are
/// exactly the buffers after the layout's own, and (for dense tensors) have
/// the sizes the scheme requires.
fn expect_buffers(ctx: &QuantContext<'_>, refs: &[(u32, u64)]) -> Result<()> {
    const RULE: &str = "quantization.md § Buffer Table Placement Rules";
    let count = u64::try_from(ctx.buffer_sizes.len()).map_err(|_| Error::overflow("buffer count"))?;
    let mut distinct: Vec<(u32, u64)> = Vec::new();
    for &(index, bytes) in refs {
        let i = u64::from(index);
        if i < ctx.layout_buffers || i >= count {
            return Err(bad("quantization parameter buffer index", i, RULE));
        }
        match distinct.iter_mut().find(|(j, _)| *j == index) {
            // Scales and zero points may share one buffer, end to end.
            Some((_, total)) => *total = add(*total, bytes, "parameter buffer size")?,
            None => distinct.push((index, bytes)),
        }
    }
    let expected = add(
        ctx.layout_buffers,
        u64::try_from(distinct.len()).map_err(|_| Error::overflow("buffer count"))?,
        "buffer count",
    )?;
    if count != expected {
        return Err(Error::BufferCount {
            layout: "quantized tensor",
            expected,
            actual: count,
            rule: RULE,
        });
    }
    if ctx.dense || ctx.paged.is_some() {
        for (index, bytes) in distinct {
            let actual = usize::try_from(index)
                .ok()
                .and_then(|i| ctx.buffer_sizes.get(i).copied())
                .unwrap_or(0);
            if actual != bytes {
                return Err(Error::BufferSize {
                    buffer: u64::from(index),
                    what: "quantization parameters",
                    expected: bytes,
                    actual,
                    rule: "quantization/*.md § Referenced Buffers",
                });
            }
        }
    }
    Ok(())
}

fn check_storage_type(tag: u8, t: ElementType) -> Result<()> {
    use ElementType as E;
    let ok = match tag {
        PER_TENSOR_AFFINE | PER_CHANNEL_AFFINE => matches!(
            t,
            E::Int8 | E::UInt8 | E::Int16 | E::UInt16 | E::Int32 | E::UInt32 | E::Int4 | E::UInt4 | E::Int2 | E::UInt2
        ),
        PER_BLOCK_AFFINE => matches!(t, E::Int8 | E::UInt8 | E::Int4 | E::UInt4 | E::Int2 | E::UInt2),
        NF4 => t == E::UInt4,
        _ => matches!(
            t,
            E::Float8E4M3 | E::Float8E5M2 | E::Float4E2M1 | E::Float6E2M3 | E::Float6E3M2 | E::Int8 | E::Int4
        ),
    };
    if ok {
        Ok(())
    } else {
        Err(bad(
            "type_tag (quantization storage type)",
            u64::from(t.tag()),
            "quantization/*.md § Valid Storage Types",
        ))
    }
}

fn zero_point_in_range(t: ElementType, zp: i32) -> bool {
    use ElementType as E;
    let (lo, hi): (i64, i64) = match t {
        E::Int8 => (-128, 127),
        E::UInt8 => (0, 255),
        E::Int16 => (-32768, 32767),
        E::UInt16 => (0, 65535),
        E::UInt32 => (0, i64::MAX),
        E::Int4 => (-8, 7),
        E::UInt4 => (0, 15),
        E::Int2 => (-2, 1),
        E::UInt2 => (0, 3),
        _ => (i64::MIN, i64::MAX),
    };
    (lo..=hi).contains(&i64::from(zp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_block_matches_reference_bytes() {
        let p = PerBlockAffine {
            axis: 1,
            block_size: 4,
            scale_buffer_index: 1,
            zero_point_buffer_index: None,
            scale_type: ScaleType::Float16,
        };
        let hex: String = p.encode().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "03010100010000000400000001000000ffffffff01000000");
    }

    #[test]
    fn lengths() {
        assert_eq!(
            PerTensorAffine {
                scale: 0.5,
                zero_point: 3
            }
            .encode()
            .len(),
            16
        );
        assert_eq!(
            PerChannelAffine {
                axis: 0,
                scale_buffer_index: 1,
                zero_point_buffer_index: Some(2)
            }
            .encode()
            .len(),
            20
        );
        assert_eq!(
            Nf4 {
                axis: 0,
                block_size: 64,
                scale_buffer_index: 1
            }
            .encode()
            .len(),
            16
        );
        assert_eq!(
            Mxfp {
                axis: 0,
                block_size: 32,
                scale_buffer_index: 1
            }
            .encode()
            .len(),
            16
        );
    }
}
