//! What each layout requires of a descriptor (`layouts/*.md`): rank,
//! layout-specific fields, buffer count and buffer sizes.

use crate::element_type::Packing;
use crate::error::{Error, Result};
use crate::layout::{BlockPaged, CompositeHead, CompositionRule, Layout};
use crate::num::{add, len64, mul, product};
use crate::quant::{self, QuantContext};

use super::checks::{check_permutation, field_len, need_rank_at_least};
use super::dense::{check_tiled, storage_count, strided_extent, tiled_storage, Extent};
use super::tensor::TensorDescriptor;
impl TensorDescriptor {
    /// Checks the layout-specific rules, buffer counts and sizes.
    pub(super) fn validate_layout(&self, rank: u64, packing: Packing) -> Result<()> {
        let name = self.layout.name();
        let sizes = self.sizes();
        let dense = matches!(
            self.layout,
            Layout::RowMajor
                | Layout::ColumnMajor
                | Layout::Strided { .. }
                | Layout::Tiled(_)
                | Layout::Morton { .. }
                | Layout::Hilbert { .. }
        );
        let (layout_buffers, paged) = match &self.layout {
            Layout::Coo { .. } => (2, None),
            Layout::Csr { .. } | Layout::Csc { .. } => (3, None),
            Layout::Csf { .. } => (add(mul(rank, 2, "buffer count")?, 1, "buffer count")?, None),
            Layout::BlockPaged(b) => (3, Some((b.num_pages, b.page_size))),
            Layout::Composite(_) => (0, None),
            _ => (1, None),
        };

        // Buffer count and quantization parameters.
        let mut padded_axis = None;
        match &self.quantization {
            Some(_) if matches!(self.layout, Layout::Composite(_)) => {
                return Err(Error::SectionNotAllowed {
                    section: "quantization",
                    layout: name,
                    rule: "layouts/composite.md § Head Descriptor",
                })
            }
            Some(payload) => {
                let facts = quant::check(
                    payload,
                    &QuantContext {
                        element_type: self.element_type,
                        shape: &self.shape,
                        layout_buffers,
                        buffer_sizes: &sizes,
                        dense,
                        paged,
                    },
                )?;
                padded_axis = facts.padded_axis;
            }
            None => {
                let actual = len64(self.buffers.len())?;
                if matches!(self.layout, Layout::Extension { .. }) {
                    if actual < 1 {
                        return Err(Error::TooFewBuffers {
                            layout: name,
                            minimum: 1,
                            actual,
                            rule: "metadata.md § Buffer Table",
                        });
                    }
                } else if actual != layout_buffers {
                    return Err(Error::BufferCount {
                        layout: name,
                        expected: layout_buffers,
                        actual,
                        rule: buffer_count_rule(&self.layout),
                    });
                }
            }
        }

        if !dense && self.byte_offset != 0 && !matches!(self.layout, Layout::Extension { .. }) {
            return Err(Error::NonZeroByteOffset {
                layout: name,
                byte_offset: self.byte_offset,
                rule: "memory-layout.md § Common Fields › byte_offset",
            });
        }
        if dense {
            let b0 = self.size_of(0);
            if self.byte_offset > b0 {
                return Err(Error::ByteOffsetOutOfRange {
                    byte_offset: self.byte_offset,
                    buffer_size: b0,
                });
            }
        }
        if self.shard.is_some() && matches!(self.layout, Layout::Csf { .. } | Layout::BlockPaged(_)) {
            return Err(Error::SectionNotAllowed {
                section: "shard",
                layout: name,
                rule: "layouts/csf.md § Sharding, layouts/block-paged.md § Sharding",
            });
        }

        match &self.layout {
            Layout::RowMajor | Layout::ColumnMajor => {
                let count = storage_count(&self.shape, padded_axis)?;
                self.need_dense(add(self.byte_offset, packing.bytes_for(count)?, "buffer size")?, name)
            }
            Layout::Strided { strides } => {
                need_rank_at_least(name, rank, 1, "layouts/strided.md § Validity Constraints")?;
                field_len(
                    "strides",
                    strides.len(),
                    rank,
                    "layouts/strided.md § Additional Descriptor Fields",
                )?;
                match strided_extent(&self.shape, strides, packing, self.byte_offset)? {
                    Extent::Fits { end } => self.need_dense(end, name),
                    Extent::BeforeStart => Err(Error::InvalidField {
                        what: "byte_offset",
                        value: self.byte_offset,
                        rule: "layouts/strided.md § Element Address: negative strides must stay inside the buffer",
                    }),
                }
            }
            Layout::Tiled(t) => {
                need_rank_at_least(name, rank, 1, "layouts/tiled.md § Validity Constraints")?;
                check_tiled(t, rank, 1)?;
                let elements = tiled_storage(&self.shape, t, Some((self.byte_offset, packing)))?;
                self.need_dense(
                    add(self.byte_offset, packing.bytes_for(elements)?, "buffer size")?,
                    name,
                )
            }
            Layout::Morton { morton_bits } => {
                const RULE: &str = "layouts/morton.md § Dimension Size Constraints";
                need_rank_at_least(name, rank, 1, RULE)?;
                field_len(
                    "morton_bits",
                    morton_bits.len(),
                    rank,
                    "layouts/morton.md § Additional Descriptor Fields",
                )?;
                let mut total_bits = 0u64;
                for (&bits, &size) in morton_bits.iter().zip(&self.shape) {
                    if bits == 0 {
                        return Err(Error::InvalidField {
                            what: "morton_bits",
                            value: 0,
                            rule: "layouts/morton.md § Additional Descriptor Fields",
                        });
                    }
                    if let Some(cap) = 1u64.checked_shl(bits) {
                        if size > cap {
                            return Err(Error::InvalidField {
                                what: "shape (above 2^morton_bits)",
                                value: size,
                                rule: RULE,
                            });
                        }
                    }
                    total_bits = add(total_bits, u64::from(bits), "morton bit count")?;
                }
                let elements = 1u64
                    .checked_shl(u32::try_from(total_bits).map_err(|_| Error::overflow("morton buffer"))?)
                    .filter(|_| total_bits < 64)
                    .ok_or(Error::overflow("morton buffer elements"))?;
                // Bit b of dimension k lands at b × rank + k: with unequal
                // bits that can pass the 2^sum(morton_bits) elements the
                // buffer holds (the reader refuses such a file).
                if !self.shape.contains(&0) {
                    for (k, &size) in self.shape.iter().enumerate() {
                        let Some(top) = size.checked_sub(1).and_then(u64::checked_ilog2) else {
                            continue;
                        };
                        let position = u64::from(top).saturating_mul(rank).saturating_add(k as u64);
                        if position >= total_bits {
                            return Err(Error::InvalidField {
                                what: "morton_bits (interleaved codes past 2^sum(morton_bits))",
                                value: u64::from(morton_bits.get(k).copied().unwrap_or(0)),
                                rule: "layouts/morton.md § Buffer Size",
                            });
                        }
                    }
                }
                self.need_dense(
                    add(self.byte_offset, packing.bytes_for(elements)?, "buffer size")?,
                    name,
                )
            }
            Layout::Hilbert {
                hilbert_order,
                hilbert_rank,
            } => {
                const RULE: &str = "layouts/hilbert.md § Validity Constraints";
                need_rank_at_least(name, rank, 2, RULE)?;
                if u64::from(*hilbert_rank) != rank {
                    return Err(Error::InvalidField {
                        what: "hilbert_rank",
                        value: u64::from(*hilbert_rank),
                        rule: RULE,
                    });
                }
                let side = 1u64
                    .checked_shl(*hilbert_order)
                    .filter(|_| *hilbert_order > 0 && *hilbert_order < 64)
                    .ok_or(Error::InvalidField {
                        what: "hilbert_order",
                        value: u64::from(*hilbert_order),
                        rule: RULE,
                    })?;
                if let Some(&bad) = self.shape.iter().find(|&&s| s != side) {
                    return Err(Error::InvalidField {
                        what: "shape (must be 2^hilbert_order)",
                        value: bad,
                        rule: RULE,
                    });
                }
                let elements = product(&self.shape, "hilbert elements")?;
                self.need_dense(
                    add(self.byte_offset, packing.bytes_for(elements)?, "buffer size")?,
                    name,
                )
            }
            Layout::Coo { nnz, .. } => {
                need_rank_at_least(name, rank, 1, "layouts/coo.md § Validity Constraints")?;
                const RULE: &str = "layouts/coo.md § Buffer Size";
                self.need_exact(0, "values", packing.bytes_for(*nnz)?, RULE)?;
                let idx = mul(mul(*nnz, rank, "index count")?, 8, "indices size")?;
                self.need_exact(1, "indices", idx, RULE)
            }
            Layout::Csr { nnz } | Layout::Csc { nnz } => {
                let is_csc = matches!(self.layout, Layout::Csc { .. });
                let (rule_rank, rule_size, idx_name, ptr_name) = if is_csc {
                    (
                        "layouts/csc.md § Description: rank 2 only",
                        "layouts/csc.md § Buffer Size",
                        "row_indices",
                        "col_ptr",
                    )
                } else {
                    (
                        "layouts/csr.md § Description: rank 2 only",
                        "layouts/csr.md § Buffer Size",
                        "col_indices",
                        "row_ptr",
                    )
                };
                if rank != 2 {
                    return Err(Error::RankNotAllowed {
                        layout: name,
                        rank,
                        rule: rule_rank,
                    });
                }
                let outer = self.shape.get(if is_csc { 1 } else { 0 }).copied().unwrap_or(0);
                self.need_exact(0, "values", packing.bytes_for(*nnz)?, rule_size)?;
                self.need_exact(1, idx_name, mul(*nnz, 8, "index size")?, rule_size)?;
                let ptr = mul(add(outer, 1, "pointer length")?, 8, "pointer size")?;
                self.need_exact(2, ptr_name, ptr, rule_size)
            }
            Layout::Csf { nnz, mode_order } => {
                const RULE: &str = "layouts/csf.md § Buffer Size";
                if rank < 3 {
                    return Err(Error::RankNotAllowed {
                        layout: name,
                        rank,
                        rule: "layouts/csf.md § Description: rank >= 3",
                    });
                }
                field_len(
                    "mode_order",
                    mode_order.len(),
                    rank,
                    "layouts/csf.md § Additional Descriptor Fields",
                )?;
                check_permutation(mode_order)?;
                self.need_exact(0, "values", packing.bytes_for(*nnz)?, RULE)?;
                // pos_L is buffer 2L+1, crd_L is buffer 2L+2.
                let mut parents = 1u64;
                let levels = crate::num::to_usize(rank, "rank")?;
                for level in 0..levels {
                    let pos_index = level.saturating_mul(2).saturating_add(1);
                    let crd_index = pos_index.saturating_add(1);
                    let pos = mul(add(parents, 1, "pos length")?, 8, "pos size")?;
                    self.need_exact(pos_index, "pos", pos, RULE)?;
                    let crd = self.size_of(crd_index);
                    if !crd.is_multiple_of(8) {
                        return Err(Error::BufferSize {
                            buffer: len64(crd_index)?,
                            what: "crd",
                            expected: crd.saturating_sub(crd % 8),
                            actual: crd,
                            rule: RULE,
                        });
                    }
                    parents = crd / 8;
                }
                let leaf = levels.saturating_mul(2);
                self.need_exact(leaf, "crd (leaf level)", mul(*nnz, 8, "crd size")?, RULE)
            }
            Layout::BlockPaged(b) => self.validate_block_paged(b, rank, packing),
            Layout::Composite(head) => validate_head(head, self),
            Layout::Extension {
                tag, extension_data, ..
            } => {
                if !(0xF0..=0xFE).contains(tag) {
                    return Err(Error::UnknownLayout { tag: *tag });
                }
                u32::try_from(extension_data.len()).map_err(|_| Error::overflow("extension_data_length"))?;
                Ok(())
            }
            Layout::Other { tag, .. } => Err(Error::UnknownLayout { tag: *tag }),
        }
    }

    /// Buffer 0 of a dense layout must hold exactly `required` bytes:
    /// fewer cannot hold the elements; more is what the layouts allow as a
    /// minimum but strict readers reject (`NOTES.md`, "Buffer larger than
    /// required"), so the checked path refuses it too. A file with a
    /// larger buffer can still be written through the unchecked path.
    fn need_dense(&self, required: u64, layout: &'static str) -> Result<()> {
        let actual = self.size_of(0);
        let rule = match layout {
            "row-major" => "layouts/row-major.md § Buffer Size",
            "column-major" => "layouts/column-major.md § Buffer Size",
            "strided" => "layouts/strided.md § Buffer Size",
            "tiled" => "layouts/tiled.md § Boundary Padding",
            "morton" => "layouts/morton.md § Buffer Size",
            _ => "layouts/hilbert.md § Buffer Size",
        };
        if actual < required {
            return Err(Error::BufferTooSmall {
                buffer: 0,
                what: "data",
                minimum: required,
                actual,
                rule,
            });
        }
        if actual > required {
            return Err(Error::BufferSize {
                buffer: 0,
                what: "data",
                expected: required,
                actual,
                rule: "NOTES.md, Buffer larger than required: strict readers reject a dense buffer past its elements",
            });
        }
        Ok(())
    }

    fn need_exact(&self, index: usize, what: &'static str, expected: u64, rule: &'static str) -> Result<()> {
        let actual = self.size_of(index);
        if actual != expected {
            return Err(Error::BufferSize {
                buffer: len64(index)?,
                what,
                expected,
                actual,
                rule,
            });
        }
        Ok(())
    }

    fn validate_block_paged(&self, b: &BlockPaged, rank: u64, packing: Packing) -> Result<()> {
        const RULE: &str = "layouts/block-paged.md § Additional Descriptor Fields";
        const SIZE: &str = "layouts/block-paged.md § Storage Invariants";
        if rank != 3 {
            return Err(Error::RankNotAllowed {
                layout: "block-paged",
                rank,
                rule: "layouts/block-paged.md § Description: rank 3 only",
            });
        }
        let bad = |what, value: u64| {
            Err(Error::InvalidField {
                what,
                value,
                rule: RULE,
            })
        };
        if b.page_size == 0 {
            return bad("page_size", 0);
        }
        if b.paged_axis != 0 {
            return bad("paged_axis", u64::from(b.paged_axis));
        }
        if b.kv_role > 2 {
            return bad("kv_role", u64::from(b.kv_role));
        }
        let Some(width) = b.index_width() else {
            return bad("block_table_index_type", u64::from(b.block_table_index_type));
        };
        let heads = self.shape.get(1).copied().unwrap_or(0);
        let dim = self.shape.get(2).copied().unwrap_or(0);
        let elements = product(&[b.num_pages, u64::from(b.page_size), heads, dim], "page_pool elements")?;
        self.need_exact(0, "page_pool", packing.bytes_for(elements)?, SIZE)?;
        let table = self.size_of(1);
        let rem = table.checked_rem(width).unwrap_or(0);
        if rem != 0 {
            return Err(Error::BufferSize {
                buffer: 1,
                what: "block_table",
                expected: table.saturating_sub(rem),
                actual: table,
                rule: SIZE,
            });
        }
        let seq = mul(add(u64::from(b.num_seqs), 1, "seq_ptr length")?, width, "seq_ptr size")?;
        self.need_exact(2, "seq_ptr", seq, "layouts/block-paged.md § Buffer Table")
    }
}

fn buffer_count_rule(layout: &Layout) -> &'static str {
    match layout {
        Layout::Coo { .. } => "layouts/coo.md § Buffer Table",
        Layout::Csr { .. } => "layouts/csr.md § Buffer Table",
        Layout::Csc { .. } => "layouts/csc.md § Buffer Table",
        Layout::Csf { .. } => "layouts/csf.md § Buffer Table",
        Layout::BlockPaged(_) => "layouts/block-paged.md § Buffer Table",
        Layout::Composite(_) => "layouts/composite.md § Head Descriptor: buffer_count 0",
        _ => "metadata.md § Buffer Table: one buffer for an unquantized dense tensor",
    }
}

fn validate_head(head: &CompositeHead, d: &TensorDescriptor) -> Result<()> {
    const RULE: &str = "layouts/composite.md § Head Layout-Specific Fields";
    if d.composite_member.is_some() {
        return Err(Error::SectionNotAllowed {
            section: "composite member",
            layout: "composite",
            rule: "layouts/composite.md § Head Descriptor",
        });
    }
    let rule = head.composition_rule.tag();
    let rule_ok = matches!(rule, 0x01..=0x03) || (0xF0..=0xFE).contains(&rule);
    if !rule_ok {
        return Err(Error::InvalidField {
            what: "composition_rule",
            value: u64::from(rule),
            rule: RULE,
        });
    }
    let op_ok = match head.composition_rule {
        CompositionRule::Overlay => matches!(head.combine_op, 0x01 | 0x02),
        CompositionRule::Partition | CompositionRule::Group => head.combine_op == 0,
        CompositionRule::Other(_) => true,
    };
    if !op_ok {
        return Err(Error::InvalidField {
            what: "combine_op",
            value: u64::from(head.combine_op),
            rule: RULE,
        });
    }
    if head.member_count == u32::MAX {
        return Err(Error::InvalidField {
            what: "member_count",
            value: u64::from(head.member_count),
            rule: "layouts/composite.md § Head Layout-Specific Fields: 0xFFFFFFFF (open composite) is reserved",
        });
    }
    if head.composition_rule == CompositionRule::Overlay && head.member_count == 0 {
        return Err(Error::InvalidField {
            what: "member_count",
            value: 0,
            rule: "layouts/composite.md § Validation: an overlay needs a base member",
        });
    }
    Ok(())
}
