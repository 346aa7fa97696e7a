//! Quantization mutations: valid bases, each with one rule broken, written
//! through the unchecked path, with the section the error must cite.

use hurray_reader::AlignedBytes;
use hurray_writer::quant::{Mxfp, Nf4, PerBlockAffine, PerChannelAffine, PerTensorAffine, ScaleType};
use hurray_writer::{BufferHandle, TensorDescriptor};

use super::files::write_unchecked;

pub(crate) const PT_VALID: &str = "quantization/per-tensor-affine.md § Validity Constraints";
pub(crate) const PC_VALID: &str = "quantization/per-channel-affine.md § Validity Constraints";
pub(crate) const PB_VALID: &str = "quantization/per-block-affine.md § Validity Constraints";
pub(crate) const NF4_VALID: &str = "quantization/nf4.md § Validity Constraints";
pub(crate) const MX_VALID: &str = "quantization/mxfp.md § Validity Constraints";
pub(crate) const PC_BUFFERS: &str = "quantization/per-channel-affine.md § Referenced Buffers";
pub(crate) const PB_BUFFERS: &str = "quantization/per-block-affine.md § Referenced Buffers";
pub(crate) const NF4_BUFFER: &str = "quantization/nf4.md § Referenced Buffer";
pub(crate) const MX_BUFFER: &str = "quantization/mxfp.md § Referenced Buffer";
pub(crate) const HEADER: &str = "quantization.md § Descriptor Header";
pub(crate) const TAGS: &str = "quantization.md § Scheme Tag Space";
pub(crate) const PLACEMENT: &str = "quantization.md § Buffer Table Placement Rules";

/// A quantized row-major tensor: storage type, shape, payload, buffers
/// (buffer 0 first); every handle declares its buffer's size.
#[derive(Clone)]
pub(crate) struct Raw {
    pub(crate) storage: hurray_writer::ElementType,
    pub(crate) shape: Vec<u64>,
    pub(crate) payload: Vec<u8>,
    pub(crate) buffers: Vec<Vec<u8>>,
    pub(crate) device_tags: Vec<(usize, u8)>,
    pub(crate) memory_classes: Vec<(usize, u8)>,
}

impl Raw {
    pub(crate) fn bytes(&self) -> AlignedBytes {
        let mut d = TensorDescriptor::new(self.storage, hurray_writer::Layout::RowMajor, self.shape.clone())
            .with_quantization(self.payload.clone());
        for (k, b) in self.buffers.iter().enumerate() {
            let mut h = BufferHandle::new(b.len() as u64);
            if let Some(&(_, tag)) = self.device_tags.iter().find(|(i, _)| *i == k) {
                h = h.with_device_tag(tag);
            }
            if let Some(&(_, class)) = self.memory_classes.iter().find(|(i, _)| *i == k) {
                h.memory_class = class;
            }
            d = d.with_buffer(h);
        }
        write_unchecked(&d, &self.buffers)
    }

    pub(crate) fn payload_at(mut self, at: usize, bytes: &[u8]) -> Self {
        self.payload[at..at + bytes.len()].copy_from_slice(bytes);
        self
    }

    pub(crate) fn buffer(mut self, k: usize, bytes: Vec<u8>) -> Self {
        self.buffers[k] = bytes;
        self
    }

    pub(crate) fn storage(mut self, t: hurray_writer::ElementType) -> Self {
        self.storage = t;
        self
    }

    pub(crate) fn shape(mut self, shape: Vec<u64>) -> Self {
        self.shape = shape;
        self
    }
}

pub(crate) fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(crate) fn i32s(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(crate) fn u16s(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// uint8 `[4]`, scale 0.5, zero point 3.
pub(crate) fn per_tensor_base() -> Raw {
    Raw {
        storage: hurray_writer::ElementType::UInt8,
        shape: vec![4],
        payload: PerTensorAffine {
            scale: 0.5,
            zero_point: 3,
        }
        .encode(),
        buffers: vec![vec![1, 2, 3, 4]],
        device_tags: Vec::new(),
        memory_classes: Vec::new(),
    }
}

/// int8 `[3, 4]` along axis 0, asymmetric: scales at 1, zero points at 2.
pub(crate) fn per_channel_base() -> Raw {
    Raw {
        storage: hurray_writer::ElementType::Int8,
        shape: vec![3, 4],
        payload: PerChannelAffine {
            axis: 0,
            scale_buffer_index: 1,
            zero_point_buffer_index: Some(2),
        }
        .encode(),
        buffers: vec![vec![0; 12], f32s(&[1.0, 2.0, 0.5]), i32s(&[0, -1, 5])],
        device_tags: Vec::new(),
        memory_classes: Vec::new(),
    }
}

/// int4 `[2, 6]` in blocks of 4 along axis 1 (storage `[2, 8]`, 8 bytes), 4
/// blocks, float32 scales at 1, zero points at 2.
pub(crate) fn per_block_base() -> Raw {
    Raw {
        storage: hurray_writer::ElementType::Int4,
        shape: vec![2, 6],
        payload: PerBlockAffine {
            axis: 1,
            block_size: 4,
            scale_buffer_index: 1,
            zero_point_buffer_index: Some(2),
            scale_type: ScaleType::Float32,
        }
        .encode(),
        buffers: vec![
            vec![0x21, 0x43, 0x65, 0x00, 0x21, 0x43, 0x65, 0x00],
            f32s(&[1.0; 4]),
            i32s(&[0, 1, -1, 7]),
        ],
        device_tags: Vec::new(),
        memory_classes: Vec::new(),
    }
}

/// The per-block base with float16 scales, symmetric.
pub(crate) fn per_block_f16_base() -> Raw {
    Raw {
        payload: PerBlockAffine {
            axis: 1,
            block_size: 4,
            scale_buffer_index: 1,
            zero_point_buffer_index: None,
            scale_type: ScaleType::Float16,
        }
        .encode(),
        buffers: vec![vec![0; 8], u16s(&[0x3C00; 4])],
        ..per_block_base()
    }
}

/// The per-block base with one shared `[scales | zero_points]` buffer.
pub(crate) fn per_block_shared_base() -> Raw {
    Raw {
        payload: PerBlockAffine {
            axis: 1,
            block_size: 4,
            scale_buffer_index: 1,
            zero_point_buffer_index: Some(1),
            scale_type: ScaleType::Float32,
        }
        .encode(),
        buffers: vec![vec![0; 8], [f32s(&[1.0; 4]), i32s(&[0, 1, -1, 7])].concat()],
        ..per_block_base()
    }
}

/// uint4 `[2, 16]`, NF4 blocks of 8 along axis 1, 4 absmax scales.
pub(crate) fn nf4_base() -> Raw {
    Raw {
        storage: hurray_writer::ElementType::UInt4,
        shape: vec![2, 16],
        payload: Nf4 {
            axis: 1,
            block_size: 8,
            scale_buffer_index: 1,
        }
        .encode(),
        buffers: vec![vec![0x7F; 16], f32s(&[1.0, 0.0, 2.5, 1e-3])],
        device_tags: Vec::new(),
        memory_classes: Vec::new(),
    }
}

/// float8_e4m3 `[2, 32]`, MXFP blocks of 16 along axis 1, 4 scales.
pub(crate) fn mxfp_base() -> Raw {
    Raw {
        storage: hurray_writer::ElementType::Float8E4M3,
        shape: vec![2, 32],
        payload: Mxfp {
            axis: 1,
            block_size: 16,
            scale_buffer_index: 1,
        }
        .encode(),
        buffers: vec![vec![0x38; 64], vec![0x7F, 0x01, 0xFE, 0x80]],
        device_tags: Vec::new(),
        memory_classes: Vec::new(),
    }
}

pub(crate) fn u32le(v: u32) -> [u8; 4] {
    v.to_le_bytes()
}

/// (what, file, expected rule, expected field).
pub(crate) fn mutations() -> Vec<(&'static str, Raw, &'static str, &'static str)> {
    use hurray_writer::ElementType as W;
    let pt = per_tensor_base;
    let pc = per_channel_base;
    let pb = per_block_base;
    let nf = nf4_base;
    let mx = mxfp_base;
    let pt_scale = |v: f32| pt().payload_at(4, &v.to_le_bytes());
    let pt_zero = |t: W, v: i32| pt().storage(t).payload_at(8, &v.to_le_bytes());
    // rustfmt leaves the table alone: `what: file => rule, field;`.
    macro_rules! table {
        ($($what:literal: $raw:expr => $rule:expr, $field:literal;)*) => {
            vec![$(($what, $raw, $rule, $field)),*]
        };
    }
    table! {
        // Parameter buffers of the wrong size (§ Referenced Buffers: "byte
        // size MUST be exactly").
        "per-channel scales one short": pc().buffer(1, f32s(&[1.0, 2.0]))
            => PC_BUFFERS, "buffer[1].byte_size";
        "per-channel zero points one long": pc().buffer(2, i32s(&[0, 0, 0, 0]))
            => PC_BUFFERS, "buffer[2].byte_size";
        "per-block float32 scales one short": pb().buffer(1, f32s(&[1.0; 3]))
            => PB_BUFFERS, "buffer[1].byte_size";
        "per-block zero points one long": pb().buffer(2, i32s(&[0; 5]))
            => PB_BUFFERS, "buffer[2].byte_size";
        "per-block float16 scales sized as float32": per_block_f16_base().buffer(1, f32s(&[1.0; 4]))
            => PB_BUFFERS, "buffer[1].byte_size";
        "per-block per-row scales (no partial block counted)": pb().buffer(1, f32s(&[1.0; 2])).buffer(2, i32s(&[0; 2]))
            => PB_BUFFERS, "buffer[1].byte_size";
        "shared [scales | zero points] one zero point short": per_block_shared_base().buffer(1, [f32s(&[1.0; 4]), i32s(&[0; 3])].concat())
            => PLACEMENT, "buffer[1].byte_size";
        "nf4 scales one short": nf().buffer(1, f32s(&[1.0; 3]))
            => NF4_BUFFER, "buffer[1].byte_size";
        "mxfp scales one long": mx().buffer(1, vec![0x7F; 5])
            => MX_BUFFER, "buffer[1].byte_size";
        // Zero points are int32 whatever the storage type (§ Referenced
        // Buffers): narrower ones show as a wrong size.
        "per-channel zero points as int16": pc().buffer(2, u16s(&[0, 0xFFFF, 5]))
            => PC_BUFFERS, "buffer[2].byte_size";
        "per-block int8 zero points for int8 storage": pb().storage(W::Int8).buffer(0, vec![0; 16]).buffer(2, vec![0, 1, 0xFF, 7])
            => PB_BUFFERS, "buffer[2].byte_size";
        // The data buffer: whole blocks along the axis (§ Padding).
        "per-block data without the padded block": pb().buffer(0, vec![0; 6])
            => "quantization/per-block-affine.md § Padding", "buffer[0].byte_size";
        "per-block data longer than the padded blocks": pb().buffer(0, vec![0; 9])
            => "quantization/per-block-affine.md § Padding", "buffer[0].byte_size";
        // Scale and zero-point types.
        "per-channel scale_type_tag float16": pc().payload_at(16, &[0x01])
            => PC_VALID, "quantization.scale_type_tag";
        "per-channel scale_type_tag bfloat16": pc().payload_at(16, &[0x02])
            => PC_VALID, "quantization.scale_type_tag";
        "per-block scale_type_tag float64": pb().payload_at(20, &[0x04])
            => PB_VALID, "quantization.scale_type_tag";
        "per-block scale_type_tag 0": pb().payload_at(20, &[0x00])
            => PB_VALID, "quantization.scale_type_tag";
        "per-block scale_type_tag float8_e8m0": pb().payload_at(20, &[0x42])
            => PB_VALID, "quantization.scale_type_tag";
        // Block sizes.
        "per-block block_size 0": pb().payload_at(8, &u32le(0))
            => PB_VALID, "quantization.block_size";
        "per-block block_size 3": pb().payload_at(8, &u32le(3))
            => PB_VALID, "quantization.block_size";
        "per-block block_size 1": pb().payload_at(8, &u32le(1))
            => PB_VALID, "quantization.block_size";
        "per-block block_size 8 > shape[axis] 6": pb().payload_at(8, &u32le(8))
            => PB_VALID, "quantization.block_size";
        "nf4 block_size 0": nf().payload_at(8, &u32le(0))
            => NF4_VALID, "quantization.block_size";
        "nf4 block_size 4": nf().payload_at(8, &u32le(4))
            => NF4_VALID, "quantization.block_size";
        "nf4 block_size 12": nf().payload_at(8, &u32le(12))
            => NF4_VALID, "quantization.block_size";
        "nf4 block_size 32 > shape[axis] 16": nf().payload_at(8, &u32le(32))
            => NF4_VALID, "quantization.block_size";
        "mxfp block_size 0": mx().payload_at(8, &u32le(0))
            => MX_VALID, "quantization.block_size";
        "mxfp block_size 8": mx().payload_at(8, &u32le(8))
            => MX_VALID, "quantization.block_size";
        "mxfp block_size 24": mx().payload_at(8, &u32le(24))
            => MX_VALID, "quantization.block_size";
        "mxfp block_size 4096": mx().payload_at(8, &u32le(4096))
            => MX_VALID, "quantization.block_size";
        "mxfp block_size 64 > shape[axis] 32": mx().payload_at(8, &u32le(64)).buffer(1, vec![0x7F; 2])
            => MX_VALID, "shape[1]";
        "mxfp shape[axis] 48 not a multiple of 32": mx().shape(vec![1, 48]) .payload_at(8, &u32le(32)) .buffer(0, vec![0; 48]) .buffer(1, vec![0x7F; 2])
            => MX_VALID, "shape[1]";
        "mxfp empty axis": mx().shape(vec![2, 0]).buffer(0, Vec::new()).buffer(1, Vec::new())
            => MX_VALID, "shape[1]";
        // Axis.
        "per-channel axis = rank": pc().payload_at(4, &u32le(2))
            => PC_VALID, "quantization.axis";
        "per-channel axis 0xFFFFFFFF": pc().payload_at(4, &u32le(u32::MAX))
            => PC_VALID, "quantization.axis";
        "per-block axis = rank": pb().payload_at(4, &u32le(2))
            => PB_VALID, "quantization.axis";
        "nf4 axis = rank": nf().payload_at(4, &u32le(2))
            => NF4_VALID, "quantization.axis";
        "mxfp axis = rank": mx().payload_at(4, &u32le(2))
            => MX_VALID, "quantization.axis";
        // Storage types (§ Valid Storage Types).
        "per-tensor float32 storage": pt().storage(W::Float32).buffer(0, vec![0; 16])
            => "quantization/per-tensor-affine.md § Valid Storage Types", "type_tag";
        "per-tensor int64 storage": pt().storage(W::Int64).buffer(0, vec![0; 32])
            => "quantization/per-tensor-affine.md § Valid Storage Types", "type_tag";
        "per-channel bool storage": pc().storage(W::Bool).buffer(0, vec![0; 2])
            => "quantization/per-channel-affine.md § Valid Storage Types", "type_tag";
        "per-channel float8_e4m3 storage": pc().storage(W::Float8E4M3)
            => "quantization/per-channel-affine.md § Valid Storage Types", "type_tag";
        "per-block int16 storage": pb().storage(W::Int16).buffer(0, vec![0; 32])
            => "quantization/per-block-affine.md § Valid Storage Types", "type_tag";
        "per-block uint32 storage": pb().storage(W::UInt32).buffer(0, vec![0; 64])
            => "quantization/per-block-affine.md § Valid Storage Types", "type_tag";
        "nf4 int4 storage": nf().storage(W::Int4)
            => "quantization/nf4.md § Valid Storage Types", "type_tag";
        "nf4 uint8 storage": nf().storage(W::UInt8).buffer(0, vec![0; 32])
            => "quantization/nf4.md § Valid Storage Types", "type_tag";
        "mxfp uint8 storage": mx().storage(W::UInt8)
            => "quantization/mxfp.md § Valid Storage Types", "type_tag";
        "mxfp uint4 storage": mx().storage(W::UInt4).buffer(0, vec![0; 32])
            => "quantization/mxfp.md § Valid Storage Types", "type_tag";
        "mxfp float8_e8m0 storage": mx().storage(W::Float8E8M0).buffer(0, vec![0x7F; 64])
            => "quantization/mxfp.md § Valid Storage Types", "type_tag";
        "mxfp float16 storage": mx().storage(W::Float16).buffer(0, vec![0; 128])
            => "quantization/mxfp.md § Valid Storage Types", "type_tag";
        // Per-tensor scale and zero point.
        "per-tensor scale 0": pt_scale(0.0)
            => PT_VALID, "quantization.scale";
        "per-tensor scale -0": pt_scale(-0.0)
            => PT_VALID, "quantization.scale";
        "per-tensor scale NaN": pt_scale(f32::NAN)
            => PT_VALID, "quantization.scale";
        "per-tensor scale +inf": pt_scale(f32::INFINITY)
            => PT_VALID, "quantization.scale";
        "per-tensor scale -inf": pt_scale(f32::NEG_INFINITY)
            => PT_VALID, "quantization.scale";
        "per-tensor uint8 zero point 256": pt_zero(W::UInt8, 256)
            => PT_VALID, "quantization.zero_point";
        "per-tensor uint8 zero point -1": pt_zero(W::UInt8, -1)
            => PT_VALID, "quantization.zero_point";
        "per-tensor int8 zero point 128": pt_zero(W::Int8, 128)
            => PT_VALID, "quantization.zero_point";
        "per-tensor int4 zero point 8": pt_zero(W::Int4, 8).buffer(0, vec![0; 2])
            => PT_VALID, "quantization.zero_point";
        "per-tensor int2 zero point -3": pt_zero(W::Int2, -3).buffer(0, vec![0; 1])
            => PT_VALID, "quantization.zero_point";
        "per-tensor uint2 zero point 4": pt_zero(W::UInt2, 4).buffer(0, vec![0; 1])
            => PT_VALID, "quantization.zero_point";
        "per-tensor uint32 zero point -1": pt_zero(W::UInt32, -1).buffer(0, vec![0; 16])
            => PT_VALID, "quantization.zero_point";
        "per-tensor reserved byte": pt().payload_at(15, &[1])
            => PT_VALID, "quantization._reserved";
        // Header: flags, version, tag.
        "per-tensor flags 1": pt().payload_at(2, &[1, 0])
            => HEADER, "quantization.flags";
        "per-channel flags bit 1": pc().payload_at(2, &[2, 0])
            => HEADER, "quantization.flags";
        "per-block flags bit 15": pb().payload_at(2, &[0, 0x80])
            => HEADER, "quantization.flags";
        "nf4 flags 1 (SYMMETRIC is not defined for it)": nf().payload_at(2, &[1, 0])
            => HEADER, "quantization.flags";
        "mxfp flags 1": mx().payload_at(2, &[1, 0])
            => HEADER, "quantization.flags";
        "per-tensor scheme_version 2": pt().payload_at(1, &[2])
            => HEADER, "quantization.scheme_version";
        "per-block scheme_version 0": pb().payload_at(1, &[0])
            => HEADER, "quantization.scheme_version";
        "scheme_tag 0x00": pt().payload_at(0, &[0x00])
            => TAGS, "quantization.scheme_tag";
        "scheme_tag 0xFF": pt().payload_at(0, &[0xFF])
            => TAGS, "quantization.scheme_tag";
        "scheme_tag 0x06 (unassigned)": pt().payload_at(0, &[0x06])
            => TAGS, "quantization.scheme_tag";
        "scheme_tag 0x60 (reserved nested)": pt().payload_at(0, &[0x60])
            => TAGS, "quantization.scheme_tag";
        "scheme_tag 0x80 (reserved)": pt().payload_at(0, &[0x80])
            => TAGS, "quantization.scheme_tag";
        "scheme_tag 0xF0 (private, strict)": pt().payload_at(0, &[0xF0])
            => TAGS, "quantization.scheme_tag";
        "per-tensor payload truncated to 12 bytes": Raw { payload: pt().payload[..12].to_vec(), ..pt() }
            => HEADER, "quantization.scale";
        // Reserved bytes.
        "per-channel reserved byte": pc().payload_at(19, &[1])
            => PC_VALID, "quantization._reserved";
        "per-block reserved byte": pb().payload_at(22, &[1])
            => "quantization/per-block-affine.md § Binary Encoding", "quantization._reserved";
        // SYMMETRIC and zero_point_buffer_index.
        "per-channel SYMMETRIC with a zero-point index": pc().payload_at(2, &[1, 0])
            => PC_VALID, "quantization.zero_point_buffer_index";
        "per-block SYMMETRIC with a zero-point index": pb().payload_at(2, &[1, 0])
            => PB_VALID, "quantization.zero_point_buffer_index";
        // Buffer indices (§ Buffer Table Placement Rules, § Referenced Buffers).
        "per-channel scales in the data buffer": pc().payload_at(8, &u32le(0))
            => PLACEMENT, "quantization.scale_buffer_index";
        "per-channel zero points in the data buffer": pc().payload_at(12, &u32le(0))
            => PLACEMENT, "quantization.zero_point_buffer_index";
        "per-channel scale index = buffer_count": pc().payload_at(8, &u32le(3))
            => PLACEMENT, "quantization.scale_buffer_index";
        // Both metadata.md (buffer_count = 1 + the parameter buffers) and
        // per-channel-affine.md § Referenced Buffers (index >= buffer_count)
        // are broken; the reader names the first.
        "per-channel zero index past the table": Raw { buffers: pc().buffers[..2].to_vec(), ..pc() }
            => "metadata.md § Buffer Table; memory-layout.md § Buffer Table", "buffer_count";
        "per-block zero index 0xFFFFFFFE": pb().payload_at(16, &u32le(0xFFFF_FFFE))
            => PLACEMENT, "quantization.zero_point_buffer_index";
        "nf4 scales in the data buffer": nf().payload_at(12, &u32le(0))
            => PLACEMENT, "quantization.scale_buffer_index";
        "mxfp scale index 5": mx().payload_at(12, &u32le(5))
            => PLACEMENT, "quantization.scale_buffer_index";
        "an unused extra parameter buffer": Raw { buffers: [nf().buffers, vec![vec![0; 4]]].concat(), ..nf() }
            => "metadata.md § Buffer Table; memory-layout.md § Buffer Table", "buffer_count";
        "scales on another device": Raw { device_tags: vec![(1, 0x01)], ..nf() }
            => "buffer-protocol.md § Device Tags › Device Colocation", "buffer[1].device_tag";
        "scales in host-pinned memory, the data not": Raw { memory_classes: vec![(1, 0x01)], ..nf() }
            => "buffer-protocol.md § Device Tags › Device Colocation", "buffer[1].memory_class";
        // Parameter values (read by validate).
        "per-channel scale NaN": pc().buffer(1, f32s(&[1.0, f32::NAN, 1.0]))
            => PC_VALID, "scales[1]";
        "per-channel scale 0": pc().buffer(1, f32s(&[1.0, 1.0, 0.0]))
            => PC_VALID, "scales[2]";
        "per-channel scale -inf": pc().buffer(1, f32s(&[f32::NEG_INFINITY, 1.0, 1.0]))
            => PC_VALID, "scales[0]";
        "per-channel int8 zero point 128": pc().buffer(2, i32s(&[0, 128, 0]))
            => PC_VALID, "zero_points[1]";
        "per-channel uint8 zero point -1": pc().storage(W::UInt8).buffer(2, i32s(&[0, 0, -1]))
            => PC_VALID, "zero_points[2]";
        "per-block float32 scale +inf": pb().buffer(1, f32s(&[1.0, 1.0, 1.0, f32::INFINITY]))
            => PB_VALID, "scales[3]";
        "per-block float16 scale +inf": per_block_f16_base().buffer(1, u16s(&[0x3C00, 0x7C00, 0x3C00, 0x3C00]))
            => PB_VALID, "scales[1]";
        "per-block float16 scale NaN": per_block_f16_base().buffer(1, u16s(&[0x3C00, 0x3C00, 0x7E00, 0x3C00]))
            => PB_VALID, "scales[2]";
        "per-block float16 scale -0": per_block_f16_base().buffer(1, u16s(&[0x8000, 0x3C00, 0x3C00, 0x3C00]))
            => PB_VALID, "scales[0]";
        "nf4 scale -1": nf().buffer(1, f32s(&[1.0, -1.0, 1.0, 1.0]))
            => NF4_VALID, "scales[1]";
        "nf4 scale NaN": nf().buffer(1, f32s(&[1.0, 1.0, f32::NAN, 1.0]))
            => NF4_VALID, "scales[2]";
        "nf4 scale +inf": nf().buffer(1, f32s(&[1.0, 1.0, 1.0, f32::INFINITY]))
            => NF4_VALID, "scales[3]";
        "mxfp scale 0x00": mx().buffer(1, vec![0x7F, 0x00, 0x7F, 0x7F])
            => "element-types.md § Tier 2 -- Extended Types › Float8 Variants", "scales[1]";
        "mxfp scale 0xFF": mx().buffer(1, vec![0x7F, 0x7F, 0x7F, 0xFF])
            => "element-types.md § Tier 2 -- Extended Types › Float8 Variants", "scales[3]";
        // Packed storage: the bits after the last stored element.
        "per-tensor uint4 [3], the unused high nibble set": pt().storage(W::UInt4).shape(vec![3]).buffer(0, vec![0x00, 0x10])
            => "element-types.md § Tier 2 -- Extended Types › Sub-Byte Integer Types (unused bits MUST be 0)", "buffer[0].padding bits";
        "per-block int2 [1, 2] in one block of 2, unused bits set": pb().storage(W::Int2).shape(vec![1, 2]).payload_at(8, &u32le(2)).buffer(0, vec![0x40]).buffer(1, f32s(&[1.0])).buffer(2, i32s(&[0]))
            => "element-types.md § Tier 2 -- Extended Types › Sub-Byte Integer Types (unused bits MUST be 0)", "buffer[0].padding bits";
    }
}
