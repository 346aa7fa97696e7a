//! Composite heads and their members as the writer sees them arrive
//! (`layouts/composite.md` § Validation): member rules as each member
//! comes, close-time rules when the last one does.

use crate::descriptor::TensorDescriptor;
use crate::element_type::ElementType;
use crate::error::{Error, Result};
use crate::layout::{CompositionRule, Layout};
use crate::num::{add, len64};

/// A composite head that still waits for members.
#[derive(Debug)]
struct OpenComposite {
    head: u64,
    rule: CompositionRule,
    shape: Vec<u64>,
    element_type: ElementType,
    member_count: u32,
    written: u32,
    /// Partition member boxes `(member, shard_offset, shape)`.
    boxes: Vec<(u64, Vec<u64>, Vec<u64>)>,
    /// Some member was written through the unchecked path.
    unverifiable: bool,
}

/// The composite heads still waiting for members, innermost last.
#[derive(Debug, Default)]
pub(crate) struct Composites {
    open: Vec<OpenComposite>,
}

impl Composites {
    /// Checks composite member rules for a tensor about to be written at
    /// position `index`, and the close-time rules of every composite it
    /// would complete. Changes nothing.
    pub(crate) fn precheck(&self, index: u64, d: &TensorDescriptor) -> Result<()> {
        let mut opens = false;
        if let Layout::Composite(h) = &d.layout {
            if h.member_count > 0 {
                opens = true;
                let depth = add(len64(self.open.len())?, 1, "composite depth")?;
                if depth > 8 {
                    return Err(Error::CompositeTooDeep { head: index, depth });
                }
            } else {
                // A head without members is complete at once.
                close_check(&open_composite(index, d, h), None)?;
            }
        }
        let Some(top) = self.open.last() else {
            return Ok(());
        };
        check_member(top, index, d)?;
        if opens || top.written.saturating_add(1) < top.member_count {
            return Ok(());
        }
        // This tensor completes `top`; each parent whose last member was the
        // head below it completes too.
        close_check(top, member_box(top, index, d).as_ref())?;
        for open in self.open.iter().rev().skip(1) {
            if open.written < open.member_count {
                break;
            }
            close_check(open, None)?;
        }
        Ok(())
    }

    /// Updates composite bookkeeping after tensor `index` was written;
    /// `descriptor` is `None` for unchecked tensors.
    pub(crate) fn advance(&mut self, index: u64, descriptor: Option<&TensorDescriptor>) {
        if let Some(top) = self.open.last_mut() {
            top.written = top.written.saturating_add(1);
            match descriptor.and_then(|d| member_box(top, index, d)) {
                Some(b) => top.boxes.push(b),
                None if descriptor.is_none() => top.unverifiable = true,
                None => {}
            }
        }
        if let Some(d) = descriptor {
            if let Layout::Composite(h) = &d.layout {
                if h.member_count > 0 {
                    self.open.push(open_composite(index, d, h));
                }
            }
        }
        while self.open.last().is_some_and(|c| c.written >= c.member_count) {
            self.open.pop();
        }
    }

    /// [`Error::TornComposite`] when a head still waits for members.
    pub(crate) fn check_closed(&self) -> Result<()> {
        match self.open.last() {
            Some(open) => Err(Error::TornComposite {
                head: open.head,
                member_count: open.member_count,
                written: open.written,
            }),
            None => Ok(()),
        }
    }
}

fn open_composite(head: u64, d: &TensorDescriptor, h: &crate::layout::CompositeHead) -> OpenComposite {
    OpenComposite {
        head,
        rule: h.composition_rule,
        shape: d.shape.clone(),
        element_type: d.element_type,
        member_count: h.member_count,
        written: 0,
        boxes: Vec::new(),
        unverifiable: false,
    }
}

/// The partition box a member contributes, if the head is a partition.
fn member_box(top: &OpenComposite, index: u64, d: &TensorDescriptor) -> Option<(u64, Vec<u64>, Vec<u64>)> {
    if top.rule != CompositionRule::Partition {
        return None;
    }
    d.shard
        .as_ref()
        .map(|s| (index, s.shard_offset.clone(), d.shape.clone()))
}

/// Per-member rules (`layouts/composite.md` § Validation › Per-member checks).
fn check_member(top: &OpenComposite, member: u64, d: &TensorDescriptor) -> Result<()> {
    const SHARD: &str = "layouts/composite.md § Members › Shard section";
    const TYPE: &str = "layouts/composite.md § Members › Element type across members";
    const ROLE: &str = "layouts/composite.md § Composite Member Section";
    let fail = |problem, rule| {
        Err(Error::CompositeMember {
            head: top.head,
            member,
            problem,
            rule,
        })
    };
    match top.rule {
        CompositionRule::Partition | CompositionRule::Overlay => {
            let Some(shard) = &d.shard else {
                return fail("partition and overlay members need a shard section", SHARD);
            };
            if shard.parent_shape != top.shape {
                return fail("shard parent_shape differs from the head's shape", SHARD);
            }
            if d.quantization.is_none() && d.element_type != top.element_type {
                return fail("member element type differs from the head's type_tag", TYPE);
            }
            if top.rule == CompositionRule::Overlay {
                let Some(section) = &d.composite_member else {
                    return fail("overlay members need a composite member section", ROLE);
                };
                if top.written == 0 {
                    if section.member_role != crate::sections::CompositeMember::BASE {
                        return fail("the first overlay member must have member_role base", ROLE);
                    }
                    if shard.shard_offset.iter().any(|&o| o != 0) || d.shape != top.shape {
                        return fail(
                            "the overlay base must span the head's whole index space",
                            "layouts/composite.md § Composition Semantics › Overlay",
                        );
                    }
                } else if section.member_role != crate::sections::CompositeMember::CORRECTION {
                    return fail("overlay members after the first must have member_role correction", ROLE);
                }
            } else if d.composite_member.is_some() {
                return fail("partition members must not carry a composite member section", ROLE);
            }
        }
        CompositionRule::Group => {
            if d.composite_member.is_some() {
                return fail("group members must not carry a composite member section", ROLE);
            }
        }
        CompositionRule::Other(_) => {}
    }
    Ok(())
}

/// Close-time rules: a partition's members cover the head exactly.
fn close_check(c: &OpenComposite, extra: Option<&(u64, Vec<u64>, Vec<u64>)>) -> Result<()> {
    if c.rule != CompositionRule::Partition || c.unverifiable {
        return Ok(());
    }
    let boxes: Vec<&(u64, Vec<u64>, Vec<u64>)> = c.boxes.iter().chain(extra).collect();
    for (i, a) in boxes.iter().enumerate() {
        for b in boxes.iter().skip(i.saturating_add(1)) {
            if boxes_overlap(a, b) {
                return Err(Error::PartitionOverlap {
                    head: c.head,
                    first: a.0,
                    second: b.0,
                });
            }
        }
    }
    let volume = |shape: &[u64]| shape.iter().try_fold(1u128, |acc, &s| acc.checked_mul(u128::from(s)));
    let total = volume(&c.shape).ok_or(Error::overflow("composite volume"))?;
    let covered = boxes
        .iter()
        .try_fold(0u128, |acc, b| volume(&b.2).and_then(|v| acc.checked_add(v)))
        .ok_or(Error::overflow("composite volume"))?;
    if covered != total {
        return Err(Error::PartitionGap {
            head: c.head,
            covered,
            total,
        });
    }
    Ok(())
}

fn boxes_overlap(a: &(u64, Vec<u64>, Vec<u64>), b: &(u64, Vec<u64>, Vec<u64>)) -> bool {
    // Empty boxes overlap nothing.
    if a.2.contains(&0) || b.2.contains(&0) {
        return false;
    }
    a.1.iter()
        .zip(&a.2)
        .zip(b.1.iter().zip(&b.2))
        .all(|((&ao, &asz), (&bo, &bsz))| {
            let a_end = u128::from(ao).saturating_add(u128::from(asz));
            let b_end = u128::from(bo).saturating_add(u128::from(bsz));
            u128::from(ao) < b_end && u128::from(bo) < a_end
        })
}
