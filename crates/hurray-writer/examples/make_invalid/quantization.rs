//! `quantization.md` and `quantization/*.md`: the descriptor's
//! quantization section and the parameter buffers of every scheme.

use hurray_writer::quant::{PerBlockAffine, PerChannelAffine};
use hurray_writer::{BufferHandle, ElementType as E};

use super::bases::{dense, mxfp_with, nf4_with, pb, pc, per_block_with, per_channel_with, per_tensor, quantized};
use super::build::single;
use super::manifest::Corpus;

pub(super) fn quantization(c: &mut Corpus) {
    let q = |s: &str| format!("quantization.md § {s}");
    let pt = |f: fn(&mut Vec<u8>)| {
        let mut p = per_tensor().encode();
        f(&mut p);
        single(quantized(p))
    };
    for v in [0x00u8, 0x06, 0x60, 0xFF] {
        let mut p = per_tensor().encode();
        p[0] = v;
        c.add(
            &format!("quant_scheme_tag_{v:02x}"),
            &format!("scheme_tag 0x{v:02X} is not a defined scheme"),
            &q("Scheme Tag Space"),
            "tensor",
            "UnknownTag",
            "quantization.scheme_tag",
            single(quantized(p)),
        );
    }
    let ptv = "quantization/per-tensor-affine.md § Validity Constraints";
    c.add(
        "quant_scheme_version_2",
        "per-tensor scheme_version 2 (must be 1)",
        &q("Descriptor Header"),
        "tensor",
        "UnsupportedVersion",
        "quantization.scheme_version",
        pt(|p| p[1] = 2),
    );
    c.add(
        "quant_reserved_flag_bits",
        "per-tensor flags bit 15 is set (no flags are defined)",
        &q("Descriptor Header"),
        "tensor",
        "Reserved",
        "quantization.flags",
        pt(|p| p[3] = 0x80),
    );
    for (name, v) in [("zero", 0.0f32), ("nan", f32::NAN), ("inf", f32::INFINITY)] {
        let mut p = per_tensor().encode();
        p[4..8].copy_from_slice(&v.to_le_bytes());
        c.add(
            &format!("quant_per_tensor_scale_{name}"),
            &format!("per-tensor scale is {name} (must be finite and > 0)"),
            ptv,
            "tensor",
            "InvalidNumber",
            "quantization.scale",
            single(quantized(p)),
        );
    }
    c.add(
        "quant_per_tensor_zero_point_range",
        "zero_point 200 is outside int8's range",
        ptv,
        "tensor",
        "InvalidNumber",
        "quantization.zero_point",
        pt(|p| p[8..12].copy_from_slice(&200i32.to_le_bytes())),
    );
    c.add(
        "quant_per_tensor_reserved",
        "the per-tensor _reserved bytes are not zero",
        ptv,
        "tensor",
        "Reserved",
        "quantization._reserved",
        pt(|p| p[13] = 1),
    );
    c.add(
        "quant_per_tensor_storage_float32",
        "per-tensor affine over float32 storage (must be an integer type)",
        "quantization/per-tensor-affine.md § Valid Storage Types",
        "tensor",
        "Invalid",
        "type_tag",
        single(dense().d(|d| d.quantization = Some(per_tensor().encode()))),
    );

    let pcr = "quantization/per-channel-affine.md § Validity Constraints";
    let pcf = |q: PerChannelAffine, f: fn(&mut Vec<u8>)| {
        let t = per_channel_with(q, &[0.5, 0.25]);
        t.d(|d| f(d.quantization.as_mut().unwrap()))
    };
    c.add(
        "quant_per_channel_axis",
        "per-channel axis 2 is not below rank 2",
        pcr,
        "tensor",
        "Invalid",
        "quantization.axis",
        single(pcf(pc(), |p| p[4] = 2)),
    );
    c.add(
        "quant_per_channel_scale_type",
        "per-channel scale_type_tag 0x01 (must be 0x03, float32)",
        pcr,
        "tensor",
        "Invalid",
        "quantization.scale_type_tag",
        single(pcf(pc(), |p| p[16] = 1)),
    );
    let zp = PerChannelAffine {
        zero_point_buffer_index: Some(2),
        ..pc()
    };
    c.add(
        "quant_per_channel_symmetric_with_zero_point",
        "SYMMETRIC is set but zero_point_buffer_index is 2 (must be 0xFFFFFFFF)",
        pcr,
        "tensor",
        "Invalid",
        "quantization.zero_point_buffer_index",
        single(pcf(zp, |p| p[2] |= 1).with(|t| {
            t.desc.buffers.push(BufferHandle::new(2));
            t.bufs.push(vec![0; 2]);
        })),
    )
    .also("buffer 2 (the zero points the flag disowns) is then an unexplained extra buffer");
    let place = "quantization.md § Buffer Table Placement Rules";
    c.add(
        "quant_per_channel_scale_index_0",
        "scale_buffer_index 0 points at the data buffer",
        place,
        "tensor",
        "Invalid",
        "quantization.scale_buffer_index",
        single(pcf(pc(), |p| p[8] = 0)),
    );
    c.add(
        "quant_per_channel_scale_index_past_count",
        "scale_buffer_index 5 is past buffer_count 2",
        place,
        "tensor",
        "Invalid",
        "quantization.scale_buffer_index",
        single(pcf(pc(), |p| p[8] = 5)),
    );
    c.add(
        "quant_per_channel_scale_size",
        "the scale buffer holds 1 float32 for 2 channels",
        "quantization/per-channel-affine.md § Referenced Buffers",
        "tensor",
        "BufferSize",
        "buffer[1].byte_size",
        single(per_channel_with(pc(), &[0.5])),
    );
    c.add(
        "quant_per_channel_scale_value_zero",
        "scale[1] is 0 (scales must be finite and > 0)",
        "quantization/per-channel-affine.md § Validity Constraints",
        "data",
        "InvalidNumber",
        "scales[1]",
        single(per_channel_with(pc(), &[0.5, 0.0])),
    );

    let pbr = "quantization/per-block-affine.md § Validity Constraints";
    for bs in [3u32, 1, 8] {
        let why = match bs {
            3 => "not a power of two",
            1 => "below 2",
            _ => "above shape[axis] = 4",
        };
        c.add(
            &format!("quant_per_block_block_size_{bs}"),
            &format!("per-block block_size {bs}: {why}"),
            pbr,
            "tensor",
            "Invalid",
            "quantization.block_size",
            single(per_block_with(PerBlockAffine { block_size: bs, ..pb() }, E::Int8)),
        );
    }
    c.add(
        "quant_per_block_scale_type_4",
        "per-block scale_type_tag 0x04 (must be 0x01-0x03)",
        "quantization/per-block-affine.md § Validity Constraints",
        "tensor",
        "Invalid",
        "quantization.scale_type_tag",
        single(per_block_with(pb(), E::Int8).d(|d| d.quantization.as_mut().unwrap()[20] = 4)),
    );
    c.add(
        "quant_per_block_storage_int16",
        "per-block affine over int16 storage (not an allowed storage type)",
        "quantization/per-block-affine.md § Valid Storage Types",
        "tensor",
        "Invalid",
        "type_tag",
        single(per_block_with(pb(), E::Int16)),
    );
    c.add(
        "quant_nf4_storage_int4",
        "NF4 over int4 storage (must be uint4)",
        "quantization/nf4.md § Valid Storage Types",
        "tensor",
        "Invalid",
        "type_tag",
        single(nf4_with(E::Int4, 64)),
    );
    c.add(
        "quant_nf4_block_size_4",
        "NF4 block_size 4 (must be a power of two >= 8)",
        "quantization/nf4.md § Validity Constraints",
        "tensor",
        "Invalid",
        "quantization.block_size",
        single(nf4_with(E::UInt4, 4)),
    );
    let mx = "quantization/mxfp.md § Validity Constraints";
    c.add(
        "quant_mxfp_block_size_8",
        "MXFP block_size 8 (must be a power of two in [16, 2048])",
        mx,
        "tensor",
        "Invalid",
        "quantization.block_size",
        single(mxfp_with(E::Float8E4M3, 32, 8, 4)),
    );
    c.add(
        "quant_mxfp_block_size_4096",
        "MXFP block_size 4096 (must be a power of two in [16, 2048])",
        mx,
        "tensor",
        "Invalid",
        "quantization.block_size",
        single(mxfp_with(E::Float8E4M3, 4096, 4096, 1)),
    );
    c.add(
        "quant_mxfp_partial_block",
        "MXFP shape[axis] 48 is not a multiple of block_size 32",
        mx,
        "tensor",
        "Invalid",
        "shape[1]",
        single(mxfp_with(E::Float8E4M3, 48, 32, 2)),
    );
    c.add(
        "quant_mxfp_storage_float32",
        "MXFP over float32 storage (not an MX element type)",
        "quantization/mxfp.md § Valid Storage Types",
        "tensor",
        "Invalid",
        "type_tag",
        single(mxfp_with(E::Float32, 32, 32, 1)),
    );
    c.add(
        "quant_mxfp_scale_ff",
        "an MXFP scale byte is 0xFF (NaN, reserved)",
        "element-types.md § Tier 2 -- Extended Types › Float8 Variants",
        "data",
        "Invalid",
        "scales[0]",
        single(mxfp_with(E::Float8E4M3, 32, 32, 1).with(|t| t.bufs[1][0] = 0xFF)),
    );
}
