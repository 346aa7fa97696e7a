//! `layouts/composite.md`: heads, members, partitions, overlays and
//! groups.

use hurray_writer::{
    BufferHandle, CompositeHead, CompositeMember, ElementType as E, Shard, TensorDescriptor, WriterOptions,
};

use super::bases::{dense, files, member, overlay_parts, partition_head, partition_parts};
use super::build::{single, write, Tn};
use super::manifest::Corpus;

pub(super) fn composite(c: &mut Corpus) {
    let head_rule = "layouts/composite.md § Head Layout-Specific Fields";
    let val = "layouts/composite.md § Validation";
    let pp = partition_parts;
    let mut add = |file: &str, rule: &str, spec: &str, variant: &str, field: &str, b: Vec<u8>| {
        c.add(file, rule, spec, "tensor", variant, field, b).tensor("head");
    };
    let (h, m0, m1) = pp();
    let h = h.with(|t| {
        t.desc.buffers.push(BufferHandle::new(8));
        t.bufs.push(vec![0; 8]);
    });
    add(
        "composite_head_buffer_count_1",
        "a composite head has a buffer (buffer_count must be 0)",
        "layouts/composite.md § Head Descriptor",
        "Invalid",
        "buffer_count",
        files((h, m0, m1)),
    );
    let (h, m0, m1) = pp();
    add(
        "composite_head_byte_offset",
        "a composite head has byte_offset 8 (must be 0)",
        "memory-layout.md § Common Fields › byte_offset",
        "Invalid",
        "byte_offset",
        files((h.d(|d| d.byte_offset = 8), m0, m1)),
    );
    for v in [0u8, 4, 0xFF] {
        let (h, m0, m1) = pp();
        add(
            &format!("composite_rule_{v:02x}"),
            &format!("composition_rule 0x{v:02X} is not defined (0x01-0x03)"),
            head_rule,
            "Invalid",
            "composition_rule",
            files((h.d(|d| d.layout_fields[0] = v), m0, m1)),
        );
    }
    let (h, m0, m1) = pp();
    add(
        "composite_partition_combine_op_1",
        "combine_op 1 on a partition (must be 0)",
        head_rule,
        "Invalid",
        "combine_op",
        files((h.d(|d| d.layout_fields[1] = 1), m0, m1)),
    );
    let (h, m0, m1) = overlay_parts();
    add(
        "composite_overlay_combine_op_0",
        "combine_op 0 on an overlay (must be REPLACE or ADD)",
        head_rule,
        "Invalid",
        "combine_op",
        files((h.d(|d| d.layout_fields[1] = 0), m0, m1)),
    );
    let (h, m0, m1) = pp();
    add(
        "composite_head_reserved",
        "the head's _reserved bytes are not zero",
        head_rule,
        "Reserved",
        "_reserved",
        files((h.d(|d| d.layout_fields[2] = 1), m0, m1)),
    );
    let (h, m0, m1) = pp();
    add(
        "composite_member_count_max",
        "member_count 0xFFFFFFFF: the reserved open-composite sentinel",
        head_rule,
        "Invalid",
        "member_count",
        files((h.d(|d| d.layout_fields[4..8].copy_from_slice(&[0xFF; 4])), m0, m1)),
    );
    let (h, _, _) = overlay_parts();
    add(
        "composite_overlay_zero_members",
        "an overlay head with member_count 0 (an overlay needs a base)",
        val,
        "Invalid",
        "member_count",
        single(h.d(|d| d.layout_fields[4..8].copy_from_slice(&0u32.to_le_bytes()))),
    );
    let (_, m0, m1) = pp();
    add(
        "composite_torn",
        "the head declares 3 members but only 2 tensors follow",
        "file-format.md § Composite Tensors",
        "TornComposite",
        "member_count",
        files((partition_head(3), m0, m1)),
    );
    let (h, m0, _) = pp();
    add(
        "composite_partition_overlap",
        "partition members m0 and m1 both cover rows 0-1",
        val,
        "Composite",
        "member 'm1': shard_offset",
        files((h, m0, member("m1", vec![2, 2], vec![0, 0]))),
    );
    let (h, m0, _) = pp();
    add(
        "composite_partition_gap",
        "partition members leave row 3 uncovered",
        val,
        "Composite",
        "member 'm1': shard_offset",
        files((h, m0, member("m1", vec![1, 2], vec![2, 0]))),
    );
    let (h, m0, m1) = pp();
    add(
        "composite_member_without_shard",
        "partition member m1 carries no shard section",
        val,
        "Composite",
        "member 'm1': flags",
        files((h, m0, m1.d(|d| d.shard = None))),
    );
    let (h, m0, m1) = pp();
    add(
        "composite_member_parent_shape",
        "member m1's parent_shape [4, 3] differs from the head's shape [4, 2]",
        val,
        "Composite",
        "member 'm1': parent_shape[1]",
        files((h, m0, m1.d(|d| d.shard = Some(Shard::new(vec![4, 3], vec![2, 0]))))),
    );
    let (h, base, fix) = overlay_parts();
    add(
        "composite_overlay_first_not_base",
        "the first overlay member has member_role CORRECTION (must be BASE)",
        val,
        "Composite",
        "member 'base': composite_member.member_role",
        files((
            h,
            base.d(|d| d.composite_member = Some(CompositeMember::correction())),
            fix,
        )),
    );
    let (h, base, fix) = overlay_parts();
    add(
        "composite_overlay_member_without_section",
        "overlay member fix carries no composite member section",
        val,
        "Composite",
        "member 'fix': flags",
        files((h, base, fix.d(|d| d.composite_member = None))),
    );
    let (h, m0, m1) = pp();
    add(
        "composite_partition_member_with_section",
        "partition member m1 carries a composite member section",
        val,
        "Composite",
        "member 'm1': flags",
        files((
            h,
            m0,
            m1.d(|d| d.composite_member = Some(CompositeMember::correction())),
        )),
    );
    let (h, m0, _) = pp();
    let m1 = Tn::new(
        "m1",
        TensorDescriptor::row_major(E::Float64, vec![2, 2]).unwrap().to_raw(),
        vec![vec![0; 32]],
    )
    .d(|d| d.shard = Some(Shard::new(vec![4, 2], vec![2, 0])));
    add(
        "composite_member_type",
        "member m1 is float64, the head float32",
        val,
        "Composite",
        "member 'm1': type_tag",
        files((h, m0, m1)),
    );
    // Nine nested group heads (each the single member of the one above).
    let mut tensors: Vec<Tn> = (0..9)
        .map(|i| {
            let d = TensorDescriptor::composite_head(E::Float32, vec![2, 2], CompositeHead::group(1)).to_raw();
            let name = if i == 0 { "head".to_string() } else { format!("g{i}") };
            Tn::new(&name, d, vec![])
        })
        .collect();
    tensors.push(dense().named("leaf"));
    c.add(
        "composite_nesting_9",
        "composite heads nested 9 deep: g8 is the ninth level (the maximum is 8)",
        "layouts/composite.md § Binding",
        "tensor",
        "Invalid",
        "layout_tag",
        write(WriterOptions::default(), &[], tensors),
    )
    .tensor("g8");
}
