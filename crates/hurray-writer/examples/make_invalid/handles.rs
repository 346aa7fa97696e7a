//! `buffer-protocol.md`: buffer handles, and where buffers are placed.

use hurray_writer::BufferHandle;

use super::bases::{csc, dense};
use super::build::single;
use super::manifest::Corpus;

fn handle(f: impl FnOnce(&mut BufferHandle)) -> Vec<u8> {
    single(dense().d(|d| f(&mut d.buffers[0])))
}

pub(super) fn handles(c: &mut Corpus) {
    let h = "buffer-protocol.md § Buffer Handle";
    for a in [0u32, 32, 96] {
        c.add(
            &format!("handle_alignment_{a}"),
            &format!("buffer alignment {a}: must be a power of two >= 64 for a non-empty buffer"),
            h,
            "tensor",
            "Invalid",
            "buffer[0].alignment",
            handle(|b| b.alignment = a),
        );
    }
    for tag in [0x09u8, 0xF0, 0xFF] {
        c.add(
            &format!("handle_device_tag_{tag:02x}"),
            &format!("device_tag 0x{tag:02X} is not a defined device"),
            "buffer-protocol.md § Device Tags",
            "tensor",
            "UnknownTag",
            "buffer[0].device_tag",
            handle(|b| b.device_tag = tag),
        );
    }
    for (name, v, why) in [
        ("1_on_cpu", 1u8, "sync_mode 1 (stream) on a CPU buffer"),
        ("3", 3, "sync_mode 3 is not defined"),
        ("ff", 0xFF, "sync_mode 0xFF is not defined"),
    ] {
        c.add(
            &format!("handle_sync_mode_{name}"),
            why,
            "buffer-protocol.md § Stream and Event Synchronisation",
            "tensor",
            "Invalid",
            "buffer[0].sync_mode",
            handle(|b| b.sync_mode = v),
        );
    }
    for (name, v, why) in [
        ("04", 4u8, "memory_class 0x04 is reserved"),
        ("ff", 0xFF, "memory_class 0xFF is reserved"),
        ("peer_on_cpu", 3, "memory_class PEER (3) on a CPU buffer"),
    ] {
        c.add(
            &format!("handle_memory_class_{name}"),
            why,
            "buffer-protocol.md § Memory Class",
            "tensor",
            "Invalid",
            "buffer[0].memory_class",
            handle(|b| b.memory_class = v),
        );
    }
    c.add(
        "handle_reserved_byte",
        "buffer handle byte 15 (reserved) is not zero",
        h,
        "tensor",
        "Reserved",
        "buffer[0]._reserved",
        handle(|b| b.reserved = 1),
    );
    c.add(
        "handle_colocation",
        "buffer[1] is on device 0x01 while buffer[0] is on the CPU (one tensor, one device)",
        "buffer-protocol.md § Device Tags › Device Colocation",
        "tensor",
        "Invalid",
        "buffer[1].device_tag",
        single(csc().d(|d| d.buffers[1].device_tag = 0x01)),
    );
    c.add(
        "handle_buffer_past_data_region",
        "buffer[0] (16 bytes) runs past the tensor's data region (data_length 8)",
        "file-format.md § Tensor Region › Data Buffer Placement",
        "tensor",
        "OutOfRange",
        "buffer[0].byte_size",
        single(dense().with(|t| t.index_data_length = Some(8))),
    )
    .also("data_length 8 also disagrees with the buffer table's span, 16 (checked after placement)");
    c.add(
        "handle_alignment_not_delivered",
        "buffer[0] declares alignment 65536 but starts at offset 4096",
        "buffer-protocol.md § Alignment; NOTES.md 'Declared alignment vs delivered'",
        "tensor",
        "AlignmentNotDelivered",
        "buffer[0].alignment",
        handle(|b| b.alignment = 65536),
    );
    c.add(
        "handle_data_length_too_long",
        "the index's data_length (24) differs from the span of the buffer table (16)",
        "file-format.md § Index Section › Index Encoding; NOTES.md 'data_length'",
        "tensor",
        "DataLengthMismatch",
        "index_entry[0].data_length",
        single(dense().with(|t| t.index_data_length = Some(24))),
    );
    c.add(
        "handle_data_length_too_short",
        "the index's data_length (8) is shorter than buffer[0] (16): the buffer runs past the data region",
        "file-format.md § Tensor Region › Data Buffer Placement; § Index Section › Index Encoding (data_length)",
        "tensor",
        "OutOfRange",
        "buffer[0].byte_size",
        single(dense().with(|t| t.index_data_length = Some(8))),
    );
}
