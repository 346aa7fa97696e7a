//! The other optional descriptor sections (`metadata.md`: shard,
//! statistics, extension type, composite member) and the data checks of
//! element types (`element-types.md`).

use hurray_writer::{CompositeMember, ElementType as E, ExtensionType, Shard, Statistics};

use super::bases::{csc, csf, dense, dense_of, files, overlay_parts, paged};
use super::build::single;
use super::manifest::Corpus;

pub(super) fn sections(c: &mut Corpus) {
    let shard = "metadata.md § Shard Section";
    c.add(
        "shard_out_of_parent",
        "shard_offset[0] + shape[0] = 4 exceeds parent_shape[0] = 3",
        shard,
        "tensor",
        "Invalid",
        "shard_offset[0]",
        single(dense().d(|d| d.shard = Some(Shard::new(vec![3, 2], vec![2, 0])))),
    );
    c.add(
        "shard_dynamic_parent",
        "parent_shape[0] is the dynamic sentinel",
        "data-model.md § Dynamic Dimensions",
        "tensor",
        "DynamicDimension",
        "parent_shape[0]",
        single(dense().d(|d| d.shard = Some(Shard::new(vec![u64::MAX, 2], vec![0, 0])))),
    );
    c.add(
        "shard_on_csf",
        "a shard section on a CSF tensor (CSF cannot be sharded)",
        "layouts/csf.md § Sharding",
        "tensor",
        "Invalid",
        "flags",
        single(csf().d(|d| d.shard = Some(Shard::new(vec![2, 3, 4], vec![0, 0, 0])))),
    );
    c.add(
        "shard_on_block_paged",
        "a shard section on a block-paged tensor",
        "layouts/block-paged.md § Sharding",
        "tensor",
        "Invalid",
        "flags",
        single(paged().d(|d| d.shard = Some(Shard::new(vec![4, 1, 2], vec![0, 0, 0])))),
    );
    let stats = "metadata.md § Statistics Section";
    c.add(
        "statistics_mask_bit_6",
        "statistics computed_mask bit 6 (reserved) is set",
        stats,
        "tensor",
        "Reserved",
        "statistics.computed_mask",
        single(dense().d(|d| {
            d.statistics = Some(Statistics {
                computed_mask: 1 << 6,
                ..Default::default()
            })
        })),
    );
    c.add(
        "statistics_reserved",
        "statistics bytes 4-7 (_reserved) are not zero",
        stats,
        "tensor",
        "Reserved",
        "statistics._reserved",
        single(dense().d(|d| {
            d.statistics = Some(Statistics {
                reserved: 1,
                ..Default::default()
            })
        })),
    );
    c.add(
        "statistics_reserved_tail",
        "statistics bytes 68-71 (_reserved2) are not zero",
        stats,
        "tensor",
        "Reserved",
        "statistics._reserved2",
        single(dense().d(|d| {
            d.statistics = Some(Statistics {
                reserved2: [0, 0, 0, 1],
                ..Default::default()
            })
        })),
    );
    let fields = "metadata.md § Statistics Section › Field Encoding";
    c.add(
        "statistics_value_stddev_negative",
        "statistics value_stddev -1.0 with VALUE_STATS_VALID set (must be >= 0.0)",
        fields,
        "tensor",
        "InvalidNumber",
        "statistics.value_stddev",
        single(dense().d(|d| d.statistics = Some(Statistics::default().with_value_stats(2.5, -1.0)))),
    );
    c.add(
        "statistics_value_stddev_nan",
        "statistics value_stddev NaN with VALUE_STATS_VALID set (NaN is not >= 0.0)",
        fields,
        "tensor",
        "InvalidNumber",
        "statistics.value_stddev",
        single(dense().d(|d| d.statistics = Some(Statistics::default().with_value_stats(2.5, f64::NAN)))),
    );
    c.add(
        "statistics_nm_n_above_nm_m",
        "statistics N:M pattern 4:2 with NM_SPARSITY_VALID set (must be nm_n <= nm_m)",
        fields,
        "tensor",
        "Invalid",
        "statistics.nm_n",
        single(dense().d(|d| d.statistics = Some(Statistics::default().with_nm_sparsity(4, 2)))),
    );
    c.add(
        "statistics_sparse_nnz_mismatch",
        "a CSC tensor's statistics nnz 4 differs from its descriptor nnz 5",
        "layouts/csc.md § Interaction with Statistics Section",
        "tensor",
        "StatisticsNnzMismatch",
        "statistics.nnz",
        single(csc().d(|d| d.statistics = Some(Statistics::default().with_nnz(4)))),
    );

    let ext = "metadata.md § Extension Type Section";
    let ext_file = |x: ExtensionType| {
        let bytes = match x.bit_width {
            4 => 2,
            _ => 4,
        };
        single(dense_of(E::UInt8, vec![4], vec![1; bytes]).d(|d| {
            d.type_tag = 0xF0;
            d.extension_type = Some(x);
        }))
    };
    for bw in [0u32, 3, 12] {
        c.add(
            &format!("extension_bit_width_{bw}"),
            &format!("extension bit_width {bw} (must be 1, 2, 4 or a multiple of 8)"),
            ext,
            "tensor",
            "Invalid",
            "extension_type.bit_width",
            ext_file(ExtensionType {
                bit_width: bw,
                ..ExtensionType::integer(8, false)
            }),
        );
    }
    c.add(
        "extension_packing_factor",
        "a 4-bit extension type with packing_factor 1 (must be 8 / 4 = 2)",
        ext,
        "tensor",
        "Invalid",
        "extension_type.packing_factor",
        ext_file(ExtensionType {
            packing_factor: 1,
            ..ExtensionType::integer(4, false)
        }),
    );
    c.add(
        "extension_is_float_2",
        "extension is_float 2 (must be 0 or 1)",
        ext,
        "tensor",
        "Invalid",
        "extension_type.is_float",
        ext_file(ExtensionType {
            is_float: 2,
            ..ExtensionType::integer(8, false)
        }),
    );
    c.add(
        "extension_integer_with_exponent",
        "an integer extension type (is_float 0) with exponent_bits 3",
        ext,
        "tensor",
        "Invalid",
        "extension_type.exponent_bits",
        ext_file(ExtensionType {
            exponent_bits: 3,
            ..ExtensionType::integer(8, false)
        }),
    );
    c.add(
        "extension_reserved",
        "the extension type's _reserved bytes are not zero",
        ext,
        "tensor",
        "Reserved",
        "extension_type._reserved",
        ext_file(ExtensionType {
            reserved: [0, 1],
            ..ExtensionType::integer(8, false)
        }),
    );

    let cm = "metadata.md § Composite Member Section";
    let (h, base, fix) = overlay_parts();
    c.add(
        "composite_member_role_2",
        "member_role 0x02 (must be 0x00 or 0x01)",
        cm,
        "tensor",
        "Invalid",
        "composite_member.member_role",
        files((
            h,
            base,
            fix.d(|d| {
                d.composite_member = Some(CompositeMember {
                    member_role: 2,
                    reserved: [0; 15],
                })
            }),
        )),
    )
    .tensor("fix");
    let (h, base, fix) = overlay_parts();
    let mut reserved = [0u8; 15];
    reserved[14] = 1;
    c.add(
        "composite_member_reserved",
        "the composite member section's _reserved bytes are not zero",
        cm,
        "tensor",
        "Reserved",
        "composite_member._reserved",
        files((
            h,
            base,
            fix.d(|d| {
                d.composite_member = Some(CompositeMember {
                    member_role: 0,
                    reserved,
                })
            }),
        )),
    )
    .tensor("fix");

    c.add(
        "data_float8_e8m0_ff",
        "a float8_e8m0 element is 0xFF (NaN, reserved)",
        "element-types.md § Tier 2 -- Extended Types › Float8 Variants",
        "data",
        "Invalid",
        "data[2]",
        single(dense_of(E::Float8E8M0, vec![4], vec![127, 127, 0xFF, 127])),
    );
    c.add(
        "data_bool_padding_bits",
        "bool [3]: padding bit 7 of the packed byte is set",
        "element-types.md § Tier 1 -- Core Types › Boolean Type (the remaining high-order bits MUST be 0)",
        "data",
        "Reserved",
        "buffer[0].padding bits",
        single(dense_of(E::Bool, vec![3], vec![0x85])),
    );
}
