//! Composite heads and their members (`layouts/composite.md` § Validation).

use crate::cursor::to_u64;
use crate::descriptor::flags;
use crate::element_type::ElementType;
use crate::error::{rule, Error, Field, Location, Result, Scope};
use crate::file::reserved_zero;
use crate::layout::plan::count;
use crate::layout::spec::{BufferCount, LayoutSpec, RankRule};
use crate::raw;
use crate::tensor::Tensor;

const PARTITION: u8 = 0x01;
const OVERLAY: u8 = 0x02;
const GROUP: u8 = 0x03;

/// `layouts/composite.md`'s descriptor rules for a head: no buffers of
/// its own (its members hold the data).
pub(crate) const SPEC: LayoutSpec = LayoutSpec {
    rank: RankRule::ANY,
    buffers: BufferCount {
        count: |_| Some(0),
        expected: "0 for a composite head",
        rule: rule::COMPOSITE_HEAD_DESCRIPTOR,
    },
    no_shard: None,
    statistics: None,
    plans: |_, _| Ok(Vec::new()),
};

/// Work bound for the pairwise overlap test of a partition, so a hostile
/// member list cannot make validation take quadratic time without limit:
/// about 0.3 s of comparisons. The sweep's count is known before it runs
/// ([`sweep_pairs`]); a partition needing more is rejected at once. A grid
/// of k × k tiles needs about k³/2 (up to ~460 × 460 tiles); stripes along
/// any one dimension need none.
const MAX_PAIR_CHECKS: u64 = 50_000_000;

/// Checks a head's own fields, before its members are looked for (a
/// reserved `member_count` is reported as such, not as missing members).
pub(crate) fn check_head(head: &Tensor<'_>, f: &raw::CompositeFields) -> Result<()> {
    let d = head.descriptor();
    let o = d.offsets().layout_fields;
    let scope = || Scope::tensor(head.name());
    let invalid = |field: &'static str, at: u64, value: u64, expected: &'static str| Error::Invalid {
        at: Location {
            scope: scope(),
            field: Field::new(field),
            offset: o + at,
            rule: rule::COMPOSITE_HEAD,
        },
        value,
        expected,
    };
    let rule_tag = f.composition_rule;
    if !matches!(rule_tag, PARTITION | OVERLAY | GROUP) {
        return Err(invalid(
            "composition_rule",
            0,
            u64::from(rule_tag),
            "0x01 partition, 0x02 overlay or 0x03 group",
        ));
    }
    let op_ok = if rule_tag == OVERLAY {
        matches!(f.combine_op, 1 | 2)
    } else {
        f.combine_op == 0
    };
    if !op_ok {
        return Err(invalid(
            "combine_op",
            1,
            u64::from(f.combine_op),
            "0x01 or 0x02 for overlay, 0x00 otherwise",
        ));
    }
    reserved_zero(
        &f.reserved,
        Field::new("_reserved"),
        o + 2,
        rule::COMPOSITE_HEAD,
        scope(),
    )?;
    if f.member_count.get() == u32::MAX {
        return Err(invalid(
            "member_count",
            4,
            u64::from(u32::MAX),
            "a definite count (0xFFFFFFFF is reserved)",
        ));
    }
    if rule_tag == OVERLAY && f.member_count.get() == 0 {
        return Err(Error::Invalid {
            at: Location {
                scope: scope(),
                field: Field::new("member_count"),
                offset: o + 4,
                rule: rule::COMPOSITE_VALIDATION,
            },
            value: 0,
            expected: "at least 1 for an overlay (it needs a base)",
        });
    }
    if head.has_flag(flags::HAS_COMPOSITE_MEMBER) {
        return Err(Error::Invalid {
            at: Location {
                scope: scope(),
                field: Field::new("flags"),
                offset: flags_field(head).1,
                rule: rule::COMPOSITE_HEAD,
            },
            value: u64::from(d.flags()),
            expected: "no HAS_COMPOSITE_MEMBER on a head",
        });
    }
    Ok(())
}

/// Checks each member of a head whose own fields passed [`check_head`],
/// and the close-time rule.
pub(crate) fn check_members(head: &Tensor<'_>, f: &raw::CompositeFields, members: &[Tensor<'_>]) -> Result<()> {
    let rule_tag = f.composition_rule;
    if rule_tag == GROUP {
        for m in members {
            if m.has_flag(flags::HAS_COMPOSITE_MEMBER) {
                return Err(member_error(
                    head,
                    m,
                    flags_field(m),
                    "a group member must not carry a composite member section",
                ));
            }
        }
        return Ok(());
    }
    let head_shape = head.static_shape()?;
    for (k, m) in members.iter().enumerate() {
        check_member(head, &head_shape, m, rule_tag, k)?;
    }
    if rule_tag == PARTITION {
        check_exact_cover(head, &head_shape, members)?;
    }
    Ok(())
}

fn member_error(head: &Tensor<'_>, member: &Tensor<'_>, (field, offset): (Field, u64), what: &'static str) -> Error {
    Error::Composite {
        at: Location {
            scope: Scope::tensor(head.name()),
            field,
            offset,
            rule: rule::COMPOSITE_VALIDATION,
        },
        member: member.name().into(),
        what,
    }
}

/// A member's `flags` (a section it must or must not carry).
fn flags_field(m: &Tensor<'_>) -> (Field, u64) {
    (
        Field::new("flags"),
        m.descriptor().offsets().descriptor.saturating_add(10),
    )
}

/// A member's `shard_offset` (its box in the head), or its `flags` when it
/// has no shard section.
fn shard_offset(m: &Tensor<'_>) -> (Field, u64) {
    match m.descriptor().shard() {
        Some(shard) => (
            Field::new("shard_offset"),
            shard
                .offset
                .saturating_add(to_u64(shard.parent_shape.len()).saturating_mul(8)),
        ),
        None => flags_field(m),
    }
}

/// Per-member checks 1, 2, 4 and 5 of `layouts/composite.md` § Validation.
fn check_member(head: &Tensor<'_>, head_shape: &[u64], m: &Tensor<'_>, rule_tag: u8, k: usize) -> Result<()> {
    let err = |at, what| member_error(head, m, at, what);
    let md = m.descriptor();
    let Some(shard) = md.shard() else {
        return Err(err(
            flags_field(m),
            "a partition or overlay member must carry a shard section",
        ));
    };
    let parent: Vec<u64> = shard.parent_shape.iter().map(|v| v.get()).collect();
    if parent != head_shape {
        // The first dimension that differs (or the first one past the
        // shorter of the two).
        let i = parent.iter().zip(head_shape).take_while(|(a, b)| a == b).count();
        let at = if i < parent.len() {
            (
                Field::at("parent_shape", to_u64(i)),
                shard.offset.saturating_add(to_u64(i).saturating_mul(8)),
            )
        } else {
            (Field::new("rank"), md.offsets().descriptor.saturating_add(16))
        };
        return Err(err(at, "the member's parent_shape differs from the head's shape"));
    }
    if !decodes_to(m, head.element_type()) {
        return Err(err(
            (Field::new("type_tag"), md.offsets().descriptor.saturating_add(14)),
            "the member's decoded element type differs from the head's type_tag",
        ));
    }
    let member_section = md.composite_member();
    if rule_tag == PARTITION {
        if member_section.is_some() {
            return Err(err(
                flags_field(m),
                "a partition member must not carry a composite member section",
            ));
        }
        return Ok(());
    }
    let Some(section) = member_section else {
        return Err(err(
            flags_field(m),
            "an overlay member must carry a composite member section",
        ));
    };
    let role = (
        Field::sub("composite_member", "member_role"),
        md.offsets().composite_member,
    );
    if k == 0 {
        let base = "the first overlay member must be the base (member_role 1) spanning the whole index space";
        if section.member_role != 1 {
            return Err(err(role, base));
        }
        if let Some(i) = shard.shard_offset.iter().position(|v| v.get() != 0) {
            let at = shard
                .offset
                .saturating_add(to_u64(parent.len().saturating_add(i)).saturating_mul(8));
            return Err(err((Field::at("shard_offset", to_u64(i)), at), base));
        }
        if let Some(i) = md.shape().zip(head_shape).position(|(a, &b)| a != b) {
            let at = md.offsets().shape.saturating_add(to_u64(i).saturating_mul(8));
            return Err(err((Field::at("shape", to_u64(i)), at), base));
        }
    } else if section.member_role != 0 {
        return Err(err(
            role,
            "overlay members after the first must be corrections (member_role 0)",
        ));
    }
    Ok(())
}

/// A member's values decode to the head's type: the same stored type, or a
/// quantized member under a floating-point head (dequantization yields reals).
fn decodes_to(m: &Tensor<'_>, head_type: Option<ElementType>) -> bool {
    use ElementType::*;
    if m.descriptor().quantization().is_some() {
        return matches!(head_type, Some(Float16 | Bfloat16 | Float32 | Float64));
    }
    m.element_type() == head_type
}

/// The pairs of boxes a sweep compares along one dimension, given each
/// box's start there (`starts`, sorted here) and end (`ends`, each above
/// its start): sorted by start, each box is compared with the later ones
/// that start before it ends. The box at sorted place `i` has `i + 1` starts
/// below its end at least (its own and the ones before), so the count is
/// the sum, over boxes, of the starts below their end, less `n(n + 1)/2`.
fn sweep_pairs(starts: &mut [u64], ends: impl Iterator<Item = u64>) -> u64 {
    starts.sort_unstable();
    let n = to_u64(starts.len());
    let below: u64 = ends.fold(0u64, |sum, end| {
        sum.saturating_add(to_u64(starts.partition_point(|&s| s < end)))
    });
    below.saturating_sub(n.saturating_mul(n.saturating_add(1)) / 2)
}

/// Partition close-time check: boxes inside the head, pairwise disjoint, and
/// their volumes add up to the head's (so together they cover it exactly).
fn check_exact_cover(head: &Tensor<'_>, head_shape: &[u64], members: &[Tensor<'_>]) -> Result<()> {
    struct BoxRange<'t, 'd> {
        start: Vec<u64>,
        end: Vec<u64>,
        member: &'t Tensor<'d>,
    }
    let mut boxes = Vec::with_capacity(members.len());
    let mut volume: u128 = 0;
    for m in members {
        let Some(shard) = m.descriptor().shard() else {
            continue;
        };
        let start: Vec<u64> = shard.shard_offset.iter().map(|v| v.get()).collect();
        let shape = m.static_shape()?;
        let end: Vec<u64> = start.iter().zip(&shape).map(|(s, n)| s.saturating_add(*n)).collect();
        let v = shape.iter().try_fold(1u128, |acc, &n| acc.checked_mul(u128::from(n)));
        volume = volume.saturating_add(v.unwrap_or(u128::MAX));
        if count(&shape) != Some(0) {
            boxes.push(BoxRange { start, end, member: m });
        }
    }
    // Sweep along the dimension where the fewest pairs of boxes overlap.
    let rank = head_shape.len();
    let mut starts = Vec::with_capacity(boxes.len());
    let (sweep, pairs) = (0..rank)
        .map(|k| {
            let at = |v: &Vec<u64>| v.get(k).copied().unwrap_or(0);
            starts.clear();
            starts.extend(boxes.iter().map(|b| at(&b.start)));
            (k, sweep_pairs(&mut starts, boxes.iter().map(|b| at(&b.end))))
        })
        .min_by_key(|&(_, pairs)| pairs)
        .unwrap_or((0, 0));
    if pairs > MAX_PAIR_CHECKS {
        let last = boxes.last().map_or(head, |b| b.member);
        return Err(member_error(
            head,
            last,
            shard_offset(last),
            "too many overlapping member boxes to verify the partition",
        ));
    }
    boxes.sort_by_key(|b| b.start.get(sweep).copied().unwrap_or(0));
    for (i, a) in boxes.iter().enumerate() {
        for b in boxes.iter().skip(i + 1) {
            let a_end = a.end.get(sweep).copied().unwrap_or(0);
            if b.start.get(sweep).copied().unwrap_or(0) >= a_end {
                break;
            }
            let overlap = (0..rank).all(|k| {
                let (sa, ea) = (a.start.get(k), a.end.get(k));
                let (sb, eb) = (b.start.get(k), b.end.get(k));
                sa < eb && sb < ea
            });
            if overlap {
                return Err(member_error(
                    head,
                    b.member,
                    shard_offset(b.member),
                    "partition member boxes overlap",
                ));
            }
        }
    }
    let head_volume = head_shape
        .iter()
        .try_fold(1u128, |acc, &n| acc.checked_mul(u128::from(n)))
        .unwrap_or(u128::MAX);
    if volume != head_volume {
        let last = members.last().unwrap_or(head);
        return Err(member_error(
            head,
            last,
            shard_offset(last),
            "partition members do not cover the head's index space exactly",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::sweep_pairs;

    /// The pairs the sweep compares, counted by running it.
    fn swept(boxes: &[(u64, u64)]) -> u64 {
        let mut sorted = boxes.to_vec();
        sorted.sort_by_key(|&(start, _)| start);
        let mut pairs = 0;
        for (i, &(_, end)) in sorted.iter().enumerate() {
            pairs += sorted.iter().skip(i + 1).take_while(|&&(start, _)| start < end).count() as u64;
        }
        pairs
    }

    fn counted(boxes: &[(u64, u64)]) -> u64 {
        let mut starts: Vec<u64> = boxes.iter().map(|&(start, _)| start).collect();
        sweep_pairs(&mut starts, boxes.iter().map(|&(_, end)| end))
    }

    proptest::proptest! {
        #[test]
        fn sweep_pairs_counts_what_the_sweep_compares(
            boxes in proptest::collection::vec((0u64..40, 1u64..12), 0..60)
        ) {
            let boxes: Vec<(u64, u64)> = boxes.into_iter().map(|(start, len)| (start, start + len)).collect();
            proptest::prop_assert_eq!(counted(&boxes), swept(&boxes));
        }
    }

    #[test]
    fn sweep_pairs_examples() {
        // Stripes [i, i + 1): none overlap; the same boxes seen along
        // [i, 10): each overlaps every later one.
        let stripes: Vec<(u64, u64)> = (0..10).map(|i| (i, i + 1)).collect();
        assert_eq!(counted(&stripes), 0);
        let tails: Vec<(u64, u64)> = (0..10).map(|i| (i, 10)).collect();
        assert_eq!(counted(&tails), 45);
        // Equal starts: each box is compared with the ones after it.
        assert_eq!(counted(&[(3, 4), (3, 4), (3, 4)]), 3);
        assert_eq!(counted(&[]), 0);
    }
}
