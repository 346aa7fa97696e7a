//! `metadata.md` § Fixed Header: the descriptor's fixed fields and shape.

use hurray_writer::{ElementType as E, ExtensionType};

use super::bases::{dense, dense_of};
use super::build::single;
use super::bytes::f32b;
use super::manifest::Corpus;

pub(super) fn descriptor(c: &mut Corpus) {
    let fixed = "metadata.md § Fixed Header";
    let flags = "metadata.md § Fixed Header › Flags";
    c.add(
        "descriptor_magic",
        "descriptor magic is not HRRY",
        fixed,
        "tensor",
        "BadMagic",
        "magic",
        single(dense().d(|d| d.magic = *b"HRRX")),
    );
    c.add(
        "descriptor_version_major_2",
        "descriptor version_major 2 is newer than supported",
        "metadata.md § Version Compatibility",
        "tensor",
        "UnsupportedVersion",
        "version_major",
        single(dense().d(|d| d.version_major = 2)),
    );
    c.add(
        "descriptor_version_major_0",
        "descriptor version_major 0 is older than supported (no migration path at 1.x)",
        "metadata.md § Version Compatibility",
        "tensor",
        "UnsupportedVersion",
        "version_major",
        single(dense().d(|d| d.version_major = 0)),
    );
    c.add(
        "descriptor_length_19",
        "descriptor_length 19 is below the 20-byte fixed header (index agrees)",
        fixed,
        "tensor",
        "Invalid",
        "descriptor_length",
        single(
            dense()
                .d(|d| d.descriptor_length = Some(19))
                .with(|t| t.index_descriptor_length = Some(19)),
        ),
    )
    .also("the descriptor bytes past byte 19 are left unclaimed and non-zero (file.validate padding check)");
    c.add(
        "descriptor_length_differs_from_index",
        "the index's descriptor_length (69) differs from the descriptor's (61)",
        "file-format.md § Index Section › Index Encoding",
        "tensor",
        "DescriptorLengthMismatch",
        "index_entry[0].descriptor_length",
        single(dense().with(|t| t.index_descriptor_length = Some(69))),
    );
    for bit in [5u32, 31] {
        c.add(
            &format!("descriptor_flags_reserved_bit_{bit}"),
            &format!("reserved descriptor flag bit {bit} is set"),
            flags,
            "tensor",
            "Reserved",
            "flags",
            single(dense().d(|d| d.flags = Some(1 << bit))),
        );
    }
    c.add(
        "descriptor_extension_flag_on_builtin_type",
        "HAS_EXTENSION_TYPE (with an extension type section) on the built-in type float32",
        flags,
        "tensor",
        "Invalid",
        "flags",
        single(dense().d(|d| d.extension_type = Some(ExtensionType::integer(32, false)))),
    );
    c.add(
        "descriptor_extension_flag_missing",
        "type_tag 0xF0 (extension) without HAS_EXTENSION_TYPE",
        flags,
        "tensor",
        "Invalid",
        "flags",
        single(dense().d(|d| d.type_tag = 0xF0)),
    );
    for tag in [0x00u8, 0x47, 0x05, 0x80, 0xFF] {
        c.add(
            &format!("descriptor_type_tag_{tag:02x}"),
            &format!("type_tag 0x{tag:02X} is not a defined element type"),
            "element-types.md § Type Identifier Encoding",
            "tensor",
            "UnknownTag",
            "type_tag",
            single(dense().d(|d| d.type_tag = tag)),
        );
    }
    for tag in [0x00u8, 0x0C, 0x80, 0xFF] {
        c.add(
            &format!("descriptor_layout_tag_{tag:02x}"),
            &format!("layout_tag 0x{tag:02X} is not a defined layout"),
            "memory-layout.md § Layout Taxonomy",
            "tensor",
            "UnknownTag",
            "layout_tag",
            single(dense().d(|d| d.layout_tag = tag)),
        );
    }
    c.add(
        "descriptor_rank_65",
        "rank 65 exceeds the maximum 64",
        "data-model.md § Rank",
        "tensor",
        "Invalid",
        "rank",
        single(dense_of(E::Float32, vec![1; 65], f32b(&[1.0]))),
    );
    c.add(
        "descriptor_trailing_bytes",
        "8 unexplained bytes after the last section of a version 1.0 descriptor",
        "metadata.md § Version Compatibility",
        "tensor",
        "TrailingBytes",
        "descriptor",
        single(dense().d(|d| d.trailing_bytes = vec![0; 8])),
    );
    // The 61-byte descriptor cut to 53: buffer[0]'s handle is truncated.
    c.add(
        "descriptor_field_truncated",
        "descriptor_length (53) ends inside buffer[0]'s handle",
        fixed,
        "tensor",
        "Truncated",
        "buffer[0]",
        single(
            dense()
                .d(|d| d.descriptor_length = Some(53))
                .with(|t| t.index_descriptor_length = Some(53)),
        ),
    )
    .also("the last 8 bytes of buffer[0]'s handle are left unclaimed and non-zero (file.validate padding check)");
    c.add(
        "descriptor_dynamic_dimension",
        "a dense stored tensor has a dynamic dimension (shape[0] = 0xFFFFFFFFFFFFFFFF)",
        "data-model.md § Dynamic Dimensions",
        "tensor",
        "DynamicDimension",
        "shape[0]",
        single(dense().d(|d| d.shape = vec![u64::MAX, 2])),
    );
    c.add(
        "descriptor_element_count_overflow",
        "the dense element count 2^40 x 2^40 overflows 64 bits",
        "element-types.md § Buffer Size Calculation",
        "tensor",
        "Overflow",
        "shape",
        single(dense().d(|d| d.shape = vec![1 << 40, 1 << 40])),
    );
}
