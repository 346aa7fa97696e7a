//! Quantization against the tensor: each scheme's check, then the
//! parameter buffers it adds after the layout's own (`quantization.md` §
//! Buffer Table Placement Rules): scales, and zero points unless symmetric,
//! one entry per channel or block along `axis`.

use super::context::{Context, Parameters};
use super::section::QuantScheme;
use super::{mxfp, nf4, per_block_affine, per_channel_affine, per_tensor_affine};
use crate::buffer::BufferRole;
use crate::descriptor::{Descriptor, DYNAMIC};
use crate::element_type::ElementType;
use crate::error::{rule, Error, Field, Location, Result, Scope};
use crate::layout::fields::{Layout, LayoutFields};
use crate::layout::plan::Plan;
use crate::raw;

/// Checks the quantization section against the tensor and returns plans for
/// the parameter buffers it adds after the layout's own `layout_buffers`
/// (the number of plans the layout returned).
pub(crate) fn plans(d: &Descriptor<'_>, handles: &[raw::BufferHandle], layout_buffers: usize) -> Result<Vec<Plan>> {
    let Some(q) = d.quantization() else {
        return Ok(Vec::new());
    };
    if d.layout() == Layout::Composite {
        return Err(Error::Invalid {
            at: Location {
                scope: Scope::tensor(d.name),
                field: Field::new("flags"),
                offset: d.offsets().descriptor + 10,
                rule: rule::COMPOSITE_HEAD_DESCRIPTOR,
            },
            value: u64::from(d.flags()),
            expected: "no HAS_QUANTIZATION on a composite head",
        });
    }
    let Some(storage) = d.element_type() else {
        return Ok(Vec::new());
    };
    let cx = Context {
        name: d.name,
        type_tag_offset: d.offsets().descriptor + 14,
        offset: q.offset,
        flags: q.header.flags.get(),
        storage,
    };
    let parameters = match q.scheme {
        QuantScheme::Unknown => return Ok(vec![Plan::unknown(); handles.len().saturating_sub(layout_buffers)]),
        QuantScheme::PerTensorAffine(f) => return per_tensor_affine::check(f, &cx).map(|()| Vec::new()),
        QuantScheme::PerChannelAffine(f) => per_channel_affine::check(f, &cx)?,
        QuantScheme::PerBlockAffine(f) => per_block_affine::check(f, &cx)?,
        QuantScheme::Nf4(f) => nf4::check(f, &cx)?,
        QuantScheme::Mxfp(f) => mxfp::check(f, &cx)?,
    };
    parameters.plans(d, q.offset, layout_buffers)
}

/// The element type of the tensor's scale array: float32 for per-channel
/// affine and NF4, the tagged type for per-block affine, float8_e8m0 for
/// MXFP; `None` without a scale array (per-tensor affine keeps its scale in
/// the descriptor) or for an invalid tag.
pub(crate) fn scale_type(d: &Descriptor<'_>) -> Option<ElementType> {
    match d.quantization()?.scheme {
        QuantScheme::PerChannelAffine(_) | QuantScheme::Nf4(_) => Some(ElementType::Float32),
        QuantScheme::PerBlockAffine(f) => per_block_affine::scale_type(f.scale_type_tag),
        QuantScheme::Mxfp(_) => Some(ElementType::Float8E8m0),
        _ => None,
    }
}

/// For per-block-style schemes on contiguous dense layouts, the storage
/// holds whole blocks along the axis: the shape with `shape[axis]` rounded up
/// to a multiple of `block_size` (`quantization/per-block-affine.md` § Padding).
pub(crate) fn padded_shape(d: &Descriptor<'_>, shape: &[u64]) -> Option<Vec<u64>> {
    let q = d.quantization()?;
    let (axis, bs) = match q.scheme {
        QuantScheme::PerBlockAffine(f) => (f.axis.get(), f.block_size.get()),
        QuantScheme::Nf4(f) => (f.axis.get(), f.block_size.get()),
        _ => return None,
    };
    if !matches!(d.layout, Layout::RowMajor | Layout::ColMajor) || bs == 0 {
        return None;
    }
    let axis = usize::try_from(axis).ok()?;
    let mut padded = shape.to_vec();
    let slot = padded.get_mut(axis)?;
    *slot = slot.div_ceil(u64::from(bs)).checked_mul(u64::from(bs))?;
    Some(padded)
}

impl Parameters {
    /// Checks axis and block size against the shape, the buffer indices
    /// against the table, and plans the scale / zero-point buffers, which
    /// follow the layout's `layout_buffers`.
    fn plans(self, d: &Descriptor<'_>, o: u64, layout_buffers: usize) -> Result<Vec<Plan>> {
        let scope = || Scope::tensor(d.name);
        let shape: Vec<u64> = d.shape().collect();
        let axis_usize = usize::try_from(self.axis).unwrap_or(usize::MAX);
        let Some(&extent) = shape.get(axis_usize) else {
            return Err(Error::Invalid {
                at: Location {
                    scope: scope(),
                    field: Field::sub("quantization", "axis"),
                    offset: o + 4,
                    rule: self.rule,
                },
                value: u64::from(self.axis),
                expected: "less than rank",
            });
        };
        if extent == DYNAMIC {
            return Err(Error::DynamicDimension {
                at: Location {
                    scope: Scope::tensor(d.name),
                    field: Field::at("shape", u64::from(self.axis)),
                    offset: d.shape_offset(axis_usize),
                    rule: rule::DYNAMIC_DIMENSION,
                },
            });
        }
        let over = || Error::Overflow {
            at: Location {
                scope: Scope::tensor(d.name),
                field: Field::new("shape"),
                offset: d.offsets().shape,
                rule: self.rule,
            },
            what: "number of quantization blocks",
        };
        let entries = match self.block_size {
            // Per-channel along the paged axis would give each token, not
            // each page slot, its scale (layouts/block-paged.md § Quantization
            // Compatibility › Per-scheme composition: axes 1 and 2 only).
            None if self.axis == 0 && d.layout() == Layout::BlockPaged => {
                return Err(Error::Invalid {
                    at: Location {
                        scope: scope(),
                        field: Field::sub("quantization", "axis"),
                        offset: o + 4,
                        rule: rule::BLOCK_PAGED_QUANT,
                    },
                    value: 0,
                    expected: "1 (num_heads) or 2 (head_dim): per-channel quantization of a block-paged tensor never runs along the paged axis 0",
                });
            }
            None => extent,
            Some(bs) => {
                let bs = u64::from(bs);
                if self.rule == rule::MXFP && (extent == 0 || extent % bs != 0) {
                    return Err(Error::Invalid {
                        at: Location {
                            scope: scope(),
                            field: Field::at("shape", u64::from(self.axis)),
                            offset: d.shape_offset(axis_usize),
                            rule: self.rule,
                        },
                        value: extent,
                        expected: "a positive multiple of block_size (no partial MXFP blocks)",
                    });
                }
                if extent > 0 && bs > extent {
                    return Err(Error::Invalid {
                        at: Location {
                            scope: scope(),
                            field: Field::sub("quantization", "block_size"),
                            offset: o + 8,
                            rule: self.rule,
                        },
                        value: bs,
                        expected: "at most shape[axis]",
                    });
                }
                if let LayoutFields::BlockPaged(bp) = d.layout_fields() {
                    // Per-page-slot scales (layouts/block-paged.md § Quantization Compatibility).
                    let wrong = if self.axis != 0 {
                        Some(("axis", 4, u64::from(self.axis), "0 on a block-paged tensor"))
                    } else if bs != u64::from(bp.page_size.get()) {
                        Some(("block_size", 8, bs, "page_size on a block-paged tensor"))
                    } else {
                        None
                    };
                    if let Some((field, at, value, expected)) = wrong {
                        return Err(Error::Invalid {
                            at: Location {
                                scope: scope(),
                                field: Field::sub("quantization", field),
                                offset: o + at,
                                rule: rule::BLOCK_PAGED_QUANT,
                            },
                            value,
                            expected,
                        });
                    }
                    bp.num_pages.get().checked_mul(bs).ok_or_else(over)?
                } else {
                    let others = shape
                        .iter()
                        .enumerate()
                        .filter(|&(k, _)| k != axis_usize)
                        .try_fold(1u64, |acc, (_, &n)| if n == 0 { Some(0) } else { acc.checked_mul(n) })
                        .ok_or_else(over)?;
                    extent.div_ceil(bs).checked_mul(others).ok_or_else(over)?
                }
            }
        };
        // The parameter buffers follow the layout's own: indices base..base+n
        // where n is 1 (scales) or 2 (scales, zero points), or 1 when both
        // arrays share a buffer (quantization.md § Buffer Table Placement Rules).
        let base = layout_buffers;
        // Block-paged tensors size their per-block parameters by page slots,
        // not by the scheme's formula (layouts/block-paged.md § Quantization Compatibility › Scale-buffer size).
        let sizes_rule = match d.layout_fields() {
            LayoutFields::BlockPaged(_) if self.block_size.is_some() => rule::BLOCK_PAGED_SCALES,
            _ => self.referenced_buffers,
        };
        let shared = self.zero_index == Some(self.scale_index);
        let needed = if self.zero_index.is_some() && !shared { 2 } else { 1 };
        let check_index = |index: u32, field: &'static str, at: u64| -> Result<usize> {
            let i = usize::try_from(index).unwrap_or(usize::MAX);
            if i < base || i >= base.saturating_add(needed) {
                return Err(Error::Invalid {
                    at: Location {
                        scope: scope(),
                        field: Field::sub("quantization", field),
                        offset: o + at,
                        rule: rule::QUANT_PLACEMENT,
                    },
                    value: u64::from(index),
                    expected: "a parameter buffer right after the layout's own buffers, never a data buffer",
                });
            }
            Ok(i - base)
        };
        let (scale_at, zero_at) = self.index_offsets;
        let scale_i = check_index(self.scale_index, "scale_buffer_index", scale_at)?;
        let scale_bytes = self.scale_type.storage_bytes(entries).ok_or_else(over)?;
        let zero_bytes = entries.checked_mul(4).ok_or_else(over)?;
        let mut plans = vec![Plan::unknown(); needed];
        if let Some(z) = self.zero_index {
            let zero_i = check_index(z, "zero_point_buffer_index", zero_at)?;
            let zero_plan = Plan {
                role: BufferRole::ZeroPoints,
                element_type: Some(ElementType::Int32),
                len: entries,
                bytes: zero_bytes,
                element_start: 0,
                rule: sizes_rule,
            };
            if let Some(slot) = plans.get_mut(zero_i) {
                *slot = zero_plan;
            }
        }
        let scale = if shared {
            Plan {
                role: BufferRole::ScalesAndZeroPoints,
                element_type: None,
                len: entries,
                bytes: scale_bytes.checked_add(zero_bytes).ok_or_else(over)?,
                element_start: 0,
                rule: rule::QUANT_PLACEMENT,
            }
        } else {
            scale_plan(self.scale_type, entries, scale_bytes, sizes_rule)
        };
        if let Some(slot) = plans.get_mut(scale_i) {
            *slot = scale;
        }
        Ok(plans)
    }
}

fn scale_plan(scale_type: ElementType, entries: u64, bytes: u64, rule: &'static str) -> Plan {
    Plan {
        role: BufferRole::Scales,
        element_type: Some(scale_type),
        len: entries,
        bytes,
        element_start: 0,
        rule,
    }
}
