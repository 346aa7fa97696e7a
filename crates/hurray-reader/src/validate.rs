//! Checks that read the data: sparse storage invariants, block-paged
//! tables, quantization parameters, packing padding, and zero padding
//! between regions. These cost O(data); nothing here runs at open.

use crate::buffer::{Buffer, BufferRole};
use crate::cursor::to_u64;
use crate::descriptor::QuantScheme;
use crate::element_type::ElementType;
use crate::error::{rule, Error, Field, Location, Number, Result, Scope};
use crate::file::HurrayFile;
use crate::layout::{Layout, LayoutFields};
use crate::quantization::context::integer_range;
use crate::tensor::Tensor;
use crate::value::Value;

impl<'data> Tensor<'data> {
    /// Runs every check that reads the tensor's data: the layout's storage
    /// invariants (CSC, CSR, COO, CSF, block-paged), quantization parameter
    /// values and the zero padding elements of a partial last block,
    /// reserved `float8_e8m0` patterns, and the zero padding bits of packed
    /// types. Tensors whose data may not be interpreted (see
    /// [`not_viewable`](Self::not_viewable)) pass trivially. The CSC, CSR
    /// and COO scans run on up to [`Options::threads`](crate::Options::threads)
    /// threads; the error is the same for any number.
    ///
    /// # Errors
    /// The first violation found, naming its position and offset.
    pub fn validate_data(&self) -> Result<()> {
        self.validate_data_with_progress(&mut |_, _| {})
    }

    /// [`validate_data`](Self::validate_data), calling `progress(done,
    /// total)` — bytes of index arrays scanned so far, and in all — as the
    /// CSC/CSR scan advances (every few megabytes), for progress bars.
    /// `progress` is always called on this thread; with several threads it
    /// counts what all of them have scanned (this thread scans the first
    /// range and reports as it goes), rising to `(total, total)`.
    ///
    /// # Errors
    /// As [`validate_data`](Self::validate_data).
    pub fn validate_data_with_progress(&self, progress: &mut dyn FnMut(u64, u64)) -> Result<()> {
        if self.not_viewable.is_some() {
            return Ok(());
        }
        let threads = self.options.threads();
        match self.layout() {
            Layout::Csc => self.csc_structure()?.inner.validate_with(threads, progress)?,
            Layout::Csr => self.csr_structure()?.inner.validate_with(threads, progress)?,
            Layout::Coo => self.coo_structure()?.validate_with(threads)?,
            Layout::Csf => self.csf_structure()?.validate()?,
            Layout::BlockPaged => self.validate_block_paged()?,
            _ => {}
        }
        for buffer in &self.buffers {
            self.check_elements(buffer)?;
        }
        self.check_block_padding()?;
        self.check_quantization_values()
    }

    /// The padding elements of a partial last block along the quantization
    /// axis are 0 (`quantization/per-block-affine.md` § Padding; NF4 pads
    /// the same way, `quantization.md` § Partial Block Policy). Readers
    /// ignore them when dequantizing; the writer must zero them. Only
    /// row- and column-major storage holds padded blocks
    /// ([`padded_shape`](crate::quantization::plans::padded_shape)). Reads the padding
    /// only: `(padded - shape[axis])` elements per line along the axis.
    fn check_block_padding(&self) -> Result<()> {
        let Ok(shape) = self.static_shape() else {
            return Ok(());
        };
        let Some(padded) = crate::quantization::plans::padded_shape(&self.descriptor, &shape) else {
            return Ok(());
        };
        let Some(axis) = shape.iter().zip(&padded).position(|(a, b)| a != b) else {
            return Ok(()); // whole blocks: no padding
        };
        let (Some(buffer), Some(origin)) = (self.buffers.first(), self.element_origin()) else {
            return Ok(());
        };
        let product = |dims: &[u64]| dims.iter().fold(1u64, |p, &n| p.saturating_mul(n));
        let (before, after) = (
            padded.get(..axis).unwrap_or_default(),
            padded.get(axis.saturating_add(1)..).unwrap_or_default(),
        );
        // Positions advance fastest along `inner`'s dimensions; each of the
        // `outer` lines along the axis holds `stored` slots of `inner`.
        let (inner, outer) = if self.layout() == Layout::ColMajor {
            (product(before), product(after))
        } else {
            (product(after), product(before))
        };
        let logical = shape.get(axis).copied().unwrap_or(0);
        let stored = padded.get(axis).copied().unwrap_or(0);
        let run = stored.saturating_sub(logical).saturating_mul(inner);
        if run == 0 {
            // No padding slot in any line (`inner = 0`: a zero dimension
            // after the axis). `outer` comes from the shape alone and may be
            // near 2^64 with no byte behind it: never loop over it for nothing.
            return Ok(());
        }
        let bits = buffer.element_type().map_or(8, |t| u64::from(t.bit_width()));
        for line in 0..outer {
            let first = origin
                .saturating_add(line.saturating_mul(stored).saturating_mul(inner))
                .saturating_add(logical.saturating_mul(inner));
            for p in first..first.saturating_add(run) {
                let code = match buffer.value(p) {
                    Some(Value::Int(0) | Value::UInt(0)) => continue,
                    Some(Value::Int(z)) => Number::Int(z),
                    Some(Value::UInt(n)) => Number::Int(i64::try_from(n).unwrap_or(i64::MAX)),
                    _ => return Ok(()), // past the buffer, or not an integer code: sized and typed at open
                };
                return Err(Error::InvalidNumber {
                    at: Location {
                        scope: Scope::tensor(self.name()),
                        field: Field::at(buffer.role().as_str(), p),
                        offset: buffer
                            .file_offset()
                            .saturating_add(buffer.element_start())
                            .saturating_add(p.saturating_mul(bits) / 8),
                        rule: rule::BLOCK_PADDING,
                    },
                    value: code,
                    expected: "0 in a padding element of the partial last block",
                });
            }
        }
        Ok(())
    }

    /// `seq_ptr` starts at 0, never decreases and ends at the block table's
    /// length; every page id is below `num_pages`
    /// (`layouts/block-paged.md` § Storage Invariants (1)-(3)).
    fn validate_block_paged(&self) -> Result<()> {
        let LayoutFields::BlockPaged(f) = self.descriptor().layout_fields() else {
            return Ok(());
        };
        let (table, seq) = (self.buffer(1)?, self.buffer(2)?);
        // Element k of a buffer of uint32 or uint64 indices.
        let at = |b: &Buffer<'_>, k: u64| {
            let width = b.byte_size().checked_div(b.len().max(1)).unwrap_or(4);
            b.file_offset().saturating_add(k.saturating_mul(width))
        };
        // seq_ptr starts at 0 and never decreases (read in place, at its
        // stored width).
        let mut previous: Option<u64> = None;
        for (k, v) in seq.values().enumerate() {
            let (k, v) = (to_u64(k), as_u64(v).unwrap_or(u64::MAX));
            match previous {
                None if v != 0 => {
                    return Err(Error::PtrFirst {
                        at: Location {
                            scope: Scope::tensor(self.name()),
                            field: Field::at("seq_ptr", 0),
                            offset: seq.file_offset(),
                            rule: rule::BLOCK_PAGED_INV,
                        },
                        value: v,
                    })
                }
                Some(p) if v < p => {
                    return Err(Error::PtrDecreasing {
                        at: Location {
                            scope: Scope::tensor(self.name()),
                            field: Field::at("seq_ptr", k),
                            offset: at(seq, k),
                            rule: rule::BLOCK_PAGED_INV,
                        },
                        value: v,
                        previous: p,
                    })
                }
                _ => previous = Some(v),
            }
        }
        // Holds by construction (the block table was sized by this entry);
        // checked all the same, it costs one comparison.
        let last = previous.unwrap_or(0);
        if last != table.len() {
            let num_seqs = u64::from(f.num_seqs.get());
            return Err(Error::PtrLast {
                at: Location {
                    scope: Scope::tensor(self.name()),
                    field: Field::at("seq_ptr", num_seqs),
                    offset: at(seq, num_seqs),
                    rule: rule::BLOCK_PAGED_INV,
                },
                value: last,
                expected_name: "the block_table length",
                expected: table.len(),
            });
        }
        for (k, v) in table.values().enumerate() {
            let page = as_u64(v).unwrap_or(u64::MAX);
            if page >= f.num_pages.get() {
                return Err(Error::IndexOutOfBounds {
                    at: Location {
                        scope: Scope::tensor(self.name()),
                        field: Field::at("block_table", to_u64(k)),
                        offset: at(table, to_u64(k)),
                        rule: rule::BLOCK_PAGED_INV,
                    },
                    value: page,
                    bound: f.num_pages.get(),
                    bound_name: Field::new("num_pages"),
                });
            }
        }
        Ok(())
    }

    /// Reserved `float8_e8m0` patterns and non-zero packing padding bits.
    fn check_elements(&self, buffer: &Buffer<'data>) -> Result<()> {
        let Some(t) = buffer.element_type() else {
            return Ok(());
        };
        if t == ElementType::Float8E8m0 {
            if let Some(k) = buffer.element_bytes().iter().position(|&b| b == 0x00 || b == 0xFF) {
                return Err(Error::Invalid {
                    at: Location {
                        scope: Scope::tensor(self.name()),
                        field: Field::at(buffer.role().as_str(), to_u64(k)),
                        offset: buffer
                            .file_offset()
                            .saturating_add(buffer.element_start())
                            .saturating_add(to_u64(k)),
                        rule: rule::FLOAT8_VARIANTS,
                    },
                    value: u64::from(buffer.element_bytes().get(k).copied().unwrap_or(0)),
                    expected: "a float8_e8m0 pattern other than 0x00 and 0xFF (reserved NaN)",
                });
            }
        }
        // The rule is about a packed array's last element; the data buffer
        // of a strided, tiled, Morton or Hilbert tensor is a set of slots,
        // whose unaddressed ones (gaps, padding, the slots past the last
        // element reached) hold undefined values.
        let scattered = buffer.role() == BufferRole::Data
            && self.layout().is_dense()
            && !matches!(self.layout(), Layout::RowMajor | Layout::ColMajor);
        let start = buffer.element_start();
        let packed_end = t.storage_bytes(buffer.len()).and_then(|n| n.checked_add(start));
        if !t.is_packed() || scattered || packed_end != Some(buffer.byte_size()) {
            return Ok(());
        }
        // The bits after the last element of the last byte/group are zero
        // (elements from byte `start`: a 6-bit type's groups start at
        // `byte_offset mod 3`).
        let used_bits = u64::from(t.bit_width())
            .saturating_mul(buffer.len())
            .saturating_add(start.saturating_mul(8));
        let total_bits = buffer.byte_size().saturating_mul(8);
        if used_bits == total_bits {
            return Ok(());
        }
        let first_unused = used_bits;
        for bit in first_unused..total_bits {
            let byte = buffer
                .bytes()
                .get(usize::try_from(bit / 8).unwrap_or(usize::MAX))
                .copied()
                .unwrap_or(0);
            if byte >> (bit % 8) & 1 != 0 {
                // The padding bits of this byte that are set, not the
                // elements' bits beside them.
                let first = if bit / 8 == first_unused / 8 {
                    first_unused % 8
                } else {
                    0
                };
                let padding = 0xFFu8.checked_shl(u32::try_from(first).unwrap_or(8)).unwrap_or(0);
                return Err(Error::Reserved {
                    at: Location {
                        scope: Scope::tensor(self.name()),
                        field: Field::member("buffer", u64::from(buffer.index()), "padding bits"),
                        offset: buffer.file_offset().saturating_add(bit / 8),
                        rule: packing_rule(t),
                    },
                    value: u64::from(byte & padding),
                    byte: None,
                });
            }
        }
        Ok(())
    }

    /// Scale arrays finite and non-zero (non-negative for NF4), per-channel
    /// zero points within the storage type's range; in buffers of their own
    /// or sharing one.
    fn check_quantization_values(&self) -> Result<()> {
        let Some(q) = self.descriptor().quantization() else {
            return Ok(());
        };
        let (rule_text, nf4) = match q.scheme {
            QuantScheme::PerChannelAffine(_) => (rule::PER_CHANNEL_AFFINE, false),
            QuantScheme::PerBlockAffine(_) => (rule::PER_BLOCK_AFFINE, false),
            QuantScheme::Nf4(_) => (rule::NF4, true),
            _ => return Ok(()),
        };
        // Only per-channel affine bounds its zero points (per-block affine
        // and quantization.md state no range; per-tensor keeps its one zero
        // point in the descriptor, checked at open).
        let range = match q.scheme {
            QuantScheme::PerChannelAffine(_) => self.element_type().and_then(integer_range),
            _ => None,
        };
        // The two arrays, whether in buffers of their own or sharing one
        // (`Tensor::scales` and `zero_points` split a shared buffer).
        for (array, scales) in [(self.scales(), true), (self.zero_points(), false)] {
            let Some((buffer, et)) = array.and_then(|b| Some((b, b.element_type()?))) else {
                continue;
            };
            for k in 0..buffer.len() {
                let Some(v) = buffer.value(k) else {
                    break; // past the bytes: the buffer's size was checked at open
                };
                let ok = match (scales, v) {
                    (true, Value::Float(s)) => s.is_finite() && if nf4 { s >= 0.0 } else { s != 0.0 },
                    (false, Value::Int(z)) => range.is_none_or(|(lo, hi)| z >= lo && z <= hi),
                    _ => true,
                };
                if ok {
                    continue;
                }
                let width = et.byte_width().unwrap_or(1);
                return Err(Error::InvalidNumber {
                    at: Location {
                        scope: Scope::tensor(self.name()),
                        field: Field::at(if scales { "scales" } else { "zero_points" }, k),
                        offset: buffer.file_offset().saturating_add(k.saturating_mul(width)),
                        rule: rule_text,
                    },
                    value: match v {
                        Value::Float(s) => Number::float(s),
                        Value::Int(z) => Number::Int(z),
                        _ => Number::Int(0), // unreachable: only these two fail
                    },
                    expected: if scales {
                        "a finite, non-zero scale (non-negative for NF4)"
                    } else {
                        "a zero point within the storage type's range"
                    },
                });
            }
        }
        Ok(())
    }
}

/// The section of `element-types.md` that requires a packed type's unused
/// bits after its last element to be 0.
fn packing_rule(t: ElementType) -> &'static str {
    match t {
        ElementType::Bool => rule::BOOL_PADDING_BITS,
        ElementType::Float4E2m1 => rule::FP4_PADDING_BITS,
        _ if t.bit_width() == 6 => rule::FP6_PADDING_BITS,
        _ => rule::INT_PADDING_BITS,
    }
}

fn as_u64(v: Value) -> Option<u64> {
    match v {
        Value::UInt(n) => Some(n),
        _ => None,
    }
}

impl<'data> HurrayFile<'data> {
    /// Validates the whole file: every tensor's descriptor and buffers,
    /// every data check of [`Tensor::validate_data`], and (strict mode) that
    /// every padding byte between regions and between buffers is zero.
    /// Data this reader does not interpret passes unchecked:
    /// [`Tensor::not_viewable`] says which and why (an extension layout; in
    /// permissive mode, an unknown type, layout or quantization tag).
    ///
    /// # Errors
    /// The first problem found, in file order.
    pub fn validate(&self) -> Result<()> {
        for position in 0..self.len() {
            self.tensor_at(position)?.validate_data()?;
        }
        if self.options().is_strict() {
            self.check_padding()?;
        }
        Ok(())
    }

    /// Checks that the bytes no region claims — before the first
    /// descriptor, between a descriptor and its data, between buffers, and
    /// after each region up to the next — are zero
    /// (`file-format.md` § Alignment and Padding Summary).
    ///
    /// A composite head whose members break a rule still has its one
    /// region, its descriptor (it owns no buffers), so the check runs. A
    /// gap that follows a tensor's descriptor or buffer is named with that
    /// tensor (`tensor 'A': padding at offset ...`), one after the header,
    /// the KV section or the index without one.
    ///
    /// # Errors
    /// [`Error::Reserved`] naming the first non-zero padding byte; the
    /// error of a tensor whose buffers cannot be located (then its padding
    /// is unknown).
    pub fn check_padding(&self) -> Result<()> {
        // Each region with the tensor it belongs to, if any.
        let mut claimed: Vec<(u64, u64, Option<&str>)> = vec![(0, 64, None)];
        for (position, e) in self.entries().iter().enumerate() {
            let owner = Some(e.name());
            claimed.push((e.descriptor_offset(), e.descriptor_end(), owner));
            match self.tensor_at(position) {
                Ok(t) => {
                    for b in t.buffers() {
                        let start = b.file_offset();
                        claimed.push((start, start.saturating_add(b.byte_size()), owner));
                    }
                }
                Err(error) => {
                    let head = self.descriptor_at(position).is_ok_and(|d| {
                        d.layout() == Layout::Composite && d.buffer_handles().is_some_and(<[_]>::is_empty)
                    });
                    if !head {
                        return Err(error);
                    }
                }
            }
        }
        let trailer = self.trailer();
        let kv_start = trailer.kv_offset.get();
        claimed.push((
            kv_start,
            kv_start.saturating_add(u64::from(trailer.kv_length.get())),
            None,
        ));
        let index_start = trailer.index_offset.get();
        claimed.push((
            index_start,
            index_start.saturating_add(trailer.index_length.get()),
            None,
        ));
        let size = to_u64(self.data().len());
        claimed.push((size.saturating_sub(40), size, None));
        claimed.sort_unstable();
        // `at`: the end of the regions so far; `after`: whose region ends there.
        let (mut at, mut after) = (0u64, None);
        // An empty region claims nothing (an empty tensor's data offset may
        // lie past the regions that follow it).
        for (start, end, owner) in claimed.into_iter().filter(|&(start, end, _)| end > start) {
            if start > at {
                self.check_zero(at, start, after)?;
            }
            if end > at {
                (at, after) = (end, owner);
            }
        }
        Ok(())
    }

    /// Bytes `start..end` are zero, else [`Error::Reserved`] at the first
    /// that is not, named with tensor `after` when the gap follows one.
    fn check_zero(&self, start: u64, end: u64, after: Option<&str>) -> Result<()> {
        let range = usize::try_from(start).ok().zip(usize::try_from(end).ok());
        let bytes = range.and_then(|(s, e)| self.data().get(s..e)).unwrap_or_default();
        // Whole chunks ORed (a loop the compiler vectorises), then the
        // first non-zero byte of the first chunk that has one.
        const CHUNK: usize = 256;
        let first = bytes
            .chunks(CHUNK)
            .position(|c| c.iter().fold(0u8, |a, &b| a | b) != 0)
            .and_then(|i| {
                let chunk = bytes.get(i.saturating_mul(CHUNK)..).unwrap_or_default();
                chunk
                    .iter()
                    .position(|&b| b != 0)
                    .map(|k| i.saturating_mul(CHUNK).saturating_add(k))
            });
        match first {
            None => Ok(()),
            Some(k) => Err(Error::Reserved {
                at: Location {
                    scope: after.map_or(Scope::File, Scope::tensor),
                    field: Field::new("padding"),
                    offset: start.saturating_add(to_u64(k)),
                    rule: rule::PADDING,
                },
                value: u64::from(bytes.get(k).copied().unwrap_or(0)),
                byte: None,
            }),
        }
    }
}
