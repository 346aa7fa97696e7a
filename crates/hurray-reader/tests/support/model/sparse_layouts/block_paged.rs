//! Block-paged (`layouts/block-paged.md`): a case, the model's pages laid
//! out from the logical side, the file written from it, every element
//! looked up by § Element Lookup over the reader's buffers, and the
//! strategies that draw cases.

use std::collections::BTreeMap;
use std::fmt;

use hurray_reader::half::{bf16, f16};
use hurray_reader::{
    AlignedBytes, BufferRole, Complex, Element, Error, HurrayFile, Layout as ReaderLayout, LayoutFields, Options,
    Tensor, Value,
};
use hurray_writer::quant::{PerBlockAffine, PerChannelAffine, PerTensorAffine, ScaleType};
use hurray_writer::{BlockPaged, BufferData, BufferHandle, Layout, TensorDescriptor};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestCaseError;

use super::super::basics::{fail, next, same};
use super::types::{le_index, pattern, write_file, Packing, Quant, Ty, QUANT_TYPES, SCALES, TYPES};

#[derive(Clone)]
pub(crate) struct BpCase {
    pub(crate) ty: Ty,
    pub(crate) num_heads: u64,
    pub(crate) head_dim: u64,
    pub(crate) page_size: u32,
    /// Token count of each sequence.
    pub(crate) tokens: Vec<u64>,
    /// Per sequence: (an earlier sequence, leading pages to share with it);
    /// clipped to what both have.
    pub(crate) shares: Vec<(usize, u64)>,
    pub(crate) free_pages: u64,
    pub(crate) index_u64: bool,
    pub(crate) kv_role: u8,
    pub(crate) layer_index: u32,
    /// Seeds the physical page numbering and the values.
    pub(crate) seed: u64,
    /// Slots no token uses hold random bits instead of zeros.
    pub(crate) garbage: bool,
    pub(crate) quant: Option<Quant>,
}

impl fmt::Debug for BpCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} heads {} head_dim {} page_size {} tokens {:?} shares {:?} free {} {} kv_role {} layer {:#x} seed {:#x}{} {:?}",
            self.ty,
            self.num_heads,
            self.head_dim,
            self.page_size,
            self.tokens,
            self.shares,
            self.free_pages,
            if self.index_u64 { "uint64" } else { "uint32" },
            self.kv_role,
            self.layer_index,
            self.seed,
            if self.garbage { " (unused slots random)" } else { "" },
            self.quant
        )
    }
}

/// What the model says the block-paged buffers hold.
pub(crate) struct BpModel {
    pub(crate) shape: [u64; 3],
    pub(crate) num_pages: u64,
    pub(crate) seq_ptr: Vec<u64>,
    pub(crate) block_table: Vec<u64>,
    pub(crate) page_pool: Vec<u8>,
    /// Sequence and position of each token along axis 0.
    pub(crate) token_of: Vec<(usize, u64)>,
    /// Bits of element `[i, h, d]` at `(i * num_heads + h) * head_dim + d`.
    pub(crate) elements: Vec<u64>,
    pub(crate) quant: Option<QuantModel>,
}

pub(crate) struct QuantModel {
    pub(crate) payload: Vec<u8>,
    /// Buffers 3 (scales) and, when present, 4 (zero points).
    pub(crate) buffers: Vec<Vec<u8>>,
    /// Per-block: the scale and zero point of each token (its page slot's).
    pub(crate) token_params: Vec<(f32, i64)>,
    /// Per-channel: the scales and zero points of the channels.
    pub(crate) channel_params: Vec<(f32, i64)>,
}

impl BpCase {
    pub(crate) fn width(&self) -> u64 {
        if self.index_u64 {
            8
        } else {
            4
        }
    }

    pub(crate) fn fields(&self, m: &BpModel) -> BlockPaged {
        BlockPaged {
            page_size: self.page_size,
            num_pages: m.num_pages,
            paged_axis: 0,
            num_seqs: self.tokens.len() as u32,
            kv_role: self.kv_role,
            layer_index: self.layer_index,
            block_table_index_type: u8::from(self.index_u64),
        }
    }
}

/// Page slots `(physical page, slot)` in use: the token row's bit patterns
/// and the slot's `(scale, zero point)`.
pub(crate) type Slots = BTreeMap<(u64, u64), (Vec<u64>, (f32, i64))>;

pub(crate) fn bp_model(c: &BpCase) -> BpModel {
    let ps = u64::from(c.page_size);
    let row = c.num_heads * c.head_dim;
    let mut state = c.seed;
    // Pages each sequence needs; a shared prefix reuses an earlier
    // sequence's leading pages (§ Prefix Sharing), other pages are new.
    let pages_of: Vec<u64> = c.tokens.iter().map(|&t| t.div_ceil(ps)).collect();
    let mut allocated: Vec<Vec<u64>> = Vec::new();
    let mut fresh = 0u64;
    for s in 0..c.tokens.len() {
        let mut pages = Vec::new();
        if s > 0 {
            let (earlier, want) = c.shares[s];
            let r = earlier % s;
            let shared = want.min(pages_of[r]).min(pages_of[s]) as usize;
            pages.extend_from_slice(&allocated[r][..shared]);
        }
        while (pages.len() as u64) < pages_of[s] {
            pages.push(fresh);
            fresh += 1;
        }
        allocated.push(pages);
    }
    let num_pages = fresh + c.free_pages;
    // Physical page ids: a random permutation of the pool.
    let mut physical: Vec<u64> = (0..num_pages).collect();
    for i in (1..physical.len()).rev() {
        let j = (next(&mut state) % (i as u64 + 1)) as usize;
        physical.swap(i, j);
    }
    let block_table: Vec<u64> = allocated.iter().flatten().map(|&v| physical[v as usize]).collect();
    let mut seq_ptr = vec![0u64];
    for &n in &pages_of {
        seq_ptr.push(seq_ptr.last().copied().unwrap_or(0) + n);
    }

    // Tokens in batch order: each takes a slot of a page; a slot already
    // written (a shared page) gives its content to the token.
    let (lo, hi) = match c.quant {
        Some(_) => c.ty.zero_point_range(),
        None => (0, 0),
    };
    let param = |state: &mut u64| {
        let scale = SCALES[(next(state) % SCALES.len() as u64) as usize];
        let zero = lo + (next(state) % (hi - lo + 1) as u64) as i64;
        (scale, zero)
    };
    let mut slots: Slots = BTreeMap::new();
    let mut token_of = Vec::new();
    let mut elements = Vec::new();
    let mut token_params = Vec::new();
    for (s, &tokens) in c.tokens.iter().enumerate() {
        for t in 0..tokens {
            let phys = physical[allocated[s][(t / ps) as usize] as usize];
            let (values, params) = slots.entry((phys, t % ps)).or_insert_with(|| {
                let values = (0..row)
                    .map(|_| {
                        let raw = next(&mut state);
                        pattern((next(&mut state) % 16) as u8, raw, c.ty.bits())
                    })
                    .collect();
                (values, param(&mut state))
            });
            token_of.push((s, t));
            elements.extend_from_slice(values);
            token_params.push(*params);
        }
    }

    let pool_len = num_pages * ps * row;
    let size = c.ty.bytes_for(pool_len);
    let mut page_pool = vec![0u8; size as usize];
    if c.garbage {
        // Unused slots are undefined (§ Storage Invariants, partial
        // trailing page); only the padding bits after the last element stay
        // zero (element-types.md).
        page_pool.iter_mut().for_each(|b| *b = next(&mut state) as u8);
        let used = match c.ty.packing() {
            Packing::Whole(_) => size * 8,
            _ => pool_len * u64::from(c.ty.bits()),
        };
        for bit in used..size * 8 {
            page_pool[(bit / 8) as usize] &= !(1 << (bit % 8));
        }
    }
    for (&(phys, slot), (values, _)) in &slots {
        for (k, &bits) in values.iter().enumerate() {
            c.ty.place(&mut page_pool, (phys * ps + slot) * row + k as u64, bits);
        }
    }

    let shape = [token_of.len() as u64, c.num_heads, c.head_dim];
    let quant = c.quant.map(|q| {
        let (payload, buffers, channel_params) = match q {
            Quant::Tensor => {
                let (scale, zero_point) = param(&mut state);
                let payload = PerTensorAffine {
                    scale,
                    zero_point: zero_point as i32,
                }
                .encode();
                (payload, vec![], vec![])
            }
            Quant::Channel { axis, symmetric } => {
                let channels: Vec<(f32, i64)> = (0..shape[axis as usize])
                    .map(|_| {
                        let (s, z) = param(&mut state);
                        (s, if symmetric { 0 } else { z })
                    })
                    .collect();
                let scales: Vec<u8> = channels.iter().flat_map(|(s, _)| s.to_le_bytes()).collect();
                let mut buffers = vec![scales];
                if !symmetric {
                    buffers.push(channels.iter().flat_map(|&(_, z)| (z as i32).to_le_bytes()).collect());
                }
                let payload = PerChannelAffine {
                    axis,
                    scale_buffer_index: 3,
                    zero_point_buffer_index: (!symmetric).then_some(4),
                }
                .encode();
                (payload, buffers, channels)
            }
            Quant::Block { scale, symmetric } => {
                // One scale per page slot: num_pages * page_size entries,
                // indexed phys_page * page_size + offset_in_page; slots no
                // token uses get scale 1 (every scale must be finite and
                // non-zero) and zero point 0.
                let mut per_slot = vec![(1.0f32, 0i64); (num_pages * ps) as usize];
                for (&(phys, slot), (_, (s, z))) in &slots {
                    per_slot[(phys * ps + slot) as usize] = (*s, if symmetric { 0 } else { *z });
                }
                let scales: Vec<u8> = per_slot
                    .iter()
                    .flat_map(|&(s, _)| match scale {
                        ScaleType::Float32 => s.to_le_bytes().to_vec(),
                        ScaleType::Float16 => f16::from_f32(s).to_bits().to_le_bytes().to_vec(),
                        ScaleType::BFloat16 => bf16::from_f32(s).to_bits().to_le_bytes().to_vec(),
                    })
                    .collect();
                let mut buffers = vec![scales];
                if !symmetric {
                    buffers.push(per_slot.iter().flat_map(|&(_, z)| (z as i32).to_le_bytes()).collect());
                }
                let payload = PerBlockAffine {
                    axis: 0,
                    block_size: c.page_size,
                    scale_buffer_index: 3,
                    zero_point_buffer_index: (!symmetric).then_some(4),
                    scale_type: scale,
                }
                .encode();
                (payload, buffers, vec![])
            }
        };
        let token_params = match q {
            Quant::Block { symmetric, .. } => token_params
                .iter()
                .map(|&(s, z)| (s, if symmetric { 0 } else { z }))
                .collect(),
            _ => vec![],
        };
        QuantModel {
            payload,
            buffers,
            token_params,
            channel_params,
        }
    });

    BpModel {
        shape,
        num_pages,
        seq_ptr,
        block_table,
        page_pool,
        token_of,
        elements,
        quant,
    }
}

/// The descriptor the spec asks for (§ Buffer Table: `page_pool` of
/// `num_pages * page_size * num_heads * head_dim` elements, `block_table`
/// of `total_logical_pages`, `seq_ptr` of `num_seqs + 1` index entries),
/// plus the quantization parameter buffers.
pub(crate) fn bp_descriptor(c: &BpCase, m: &BpModel) -> TensorDescriptor {
    let w = c.width();
    let mut d =
        TensorDescriptor::new(c.ty.writer(), Layout::BlockPaged(c.fields(m)), m.shape.to_vec()).with_buffers(vec![
            BufferHandle::new(c.ty.bytes_for(m.num_pages * u64::from(c.page_size) * c.num_heads * c.head_dim)),
            BufferHandle::new(m.block_table.len() as u64 * w),
            BufferHandle::new((c.tokens.len() as u64 + 1) * w),
        ]);
    if let Some(q) = &m.quant {
        d = d.with_quantization(q.payload.clone());
        for b in &q.buffers {
            d = d.with_buffer(BufferHandle::new(b.len() as u64));
        }
    }
    d
}

pub(crate) fn bp_buffers(c: &BpCase, m: &BpModel) -> Vec<Vec<u8>> {
    let mut buffers = vec![
        m.page_pool.clone(),
        le_index(&m.block_table, c.width()),
        le_index(&m.seq_ptr, c.width()),
    ];
    if let Some(q) = &m.quant {
        buffers.extend(q.buffers.iter().cloned());
    }
    buffers
}

pub(crate) fn write_bp(c: &BpCase, m: &BpModel) -> Result<AlignedBytes, TestCaseError> {
    let refused = |e: hurray_writer::Error| fail(format!("the checked writer refuses: {e}"));
    let d = bp_descriptor(c, m);
    // The writer's own sizing of the three layout buffers agrees.
    let helper = TensorDescriptor::block_paged(c.ty.writer(), m.shape, c.fields(m), m.block_table.len() as u64)
        .map_err(refused)?;
    prop_assert_eq!(
        &helper.buffers[..],
        &d.buffers[..3],
        "TensorDescriptor::block_paged sizes"
    );
    let buffers = bp_buffers(c, m);
    write_file(|w| w.write_tensor("t", &d, buffers.iter().map(|b| BufferData::Bytes(b)))).map_err(refused)
}

/// An index buffer (`block_table`, `seq_ptr`) as the reader decodes it.
pub(crate) fn index_values(t: &Tensor<'_>, i: usize) -> Result<Vec<u64>, TestCaseError> {
    let b = t.buffer(i).map_err(|e| fail(format!("reader: buffer {i}: {e}")))?;
    b.values()
        .map(|v| match v {
            Value::UInt(n) => Ok(n),
            other => Err(fail(format!("buffer {i} holds {other:?}"))),
        })
        .collect()
}

pub(crate) fn check_bp_typed<T: Element>(
    t: &Tensor<'_>,
    flat: &[(u64, u64)],
    bits: fn(T) -> u64,
) -> Result<(), TestCaseError> {
    let pool = t
        .buffer(0)
        .and_then(|b| b.as_slice::<T>())
        .map_err(|e| fail(format!("reader: page_pool as {}: {e}", std::any::type_name::<T>())))?;
    for &(at, want) in flat {
        prop_assert_eq!(bits(pool[at as usize]), want, "typed page_pool[{}]", at);
    }
    Ok(())
}

pub(crate) fn check_bp(c: &BpCase) -> Result<(), TestCaseError> {
    let m = bp_model(c);
    let bytes = write_bp(c, &m)?;
    let file = HurrayFile::parse(&bytes, Options::strict()).map_err(|e| fail(format!("reader: parse: {e}")))?;
    file.validate().map_err(|e| fail(format!("reader: validate: {e}")))?;
    let t = file.tensor("t").map_err(|e| fail(format!("reader: tensor: {e}")))?;

    prop_assert_eq!(t.layout(), ReaderLayout::BlockPaged);
    prop_assert_eq!(t.element_type(), Some(c.ty.reader()));
    prop_assert_eq!(t.shape().collect::<Vec<_>>(), m.shape.to_vec());
    prop_assert_eq!(t.nnz(), None);
    prop_assert_eq!(t.descriptor().byte_offset(), 0);
    match t.descriptor().layout_fields() {
        LayoutFields::BlockPaged(f) => {
            prop_assert_eq!(f.page_size.get(), c.page_size);
            prop_assert_eq!(f.num_pages.get(), m.num_pages);
            prop_assert_eq!(f.paged_axis.get(), 0);
            prop_assert_eq!(f.num_seqs.get(), c.tokens.len() as u32);
            prop_assert_eq!(f.kv_role, c.kv_role);
            prop_assert_eq!(f.layer_index.get(), c.layer_index);
            prop_assert_eq!(f.block_table_index_type, u8::from(c.index_u64));
        }
        other => return Err(fail(format!("layout fields {other:?}"))),
    }
    // No logical lookup for an indirect layout: refused, not misread.
    prop_assert!(t.addressing().is_err(), "addressing() on a block-paged tensor");
    prop_assert!(
        t.dense_value(&[0, 0, 0]).is_err(),
        "dense_value on a block-paged tensor"
    );

    // Buffers: roles, types, sizes, bytes.
    let index_type = if c.index_u64 {
        hurray_reader::ElementType::Uint64
    } else {
        hurray_reader::ElementType::Uint32
    };
    let expected = bp_buffers(c, &m);
    let mut roles = vec![BufferRole::PagePool, BufferRole::BlockTable, BufferRole::SeqPtr];
    if let Some(q) = &m.quant {
        roles.push(BufferRole::Scales);
        if q.buffers.len() == 2 {
            roles.push(BufferRole::ZeroPoints);
        }
    }
    prop_assert_eq!(t.buffers().len(), expected.len(), "buffer_count");
    for (i, (b, want)) in t.buffers().iter().zip(&expected).enumerate() {
        prop_assert_eq!(b.role(), roles[i], "buffer {} role", i);
        prop_assert_eq!(b.bytes(), &want[..], "buffer {} bytes", i);
    }
    let pool = t.buffer(0).map_err(|e| fail(format!("reader: page_pool: {e}")))?;
    prop_assert_eq!(pool.element_type(), Some(c.ty.reader()));
    prop_assert_eq!(
        pool.len(),
        m.num_pages * u64::from(c.page_size) * c.num_heads * c.head_dim
    );
    for i in [1, 2] {
        let b = t.buffer(i).map_err(|e| fail(format!("reader: buffer {i}: {e}")))?;
        prop_assert_eq!(b.element_type(), Some(index_type), "buffer {} type", i);
    }
    let block_table = index_values(&t, 1)?;
    let seq_ptr = index_values(&t, 2)?;
    prop_assert_eq!(&block_table, &m.block_table, "block_table");
    prop_assert_eq!(&seq_ptr, &m.seq_ptr, "seq_ptr");
    let typed = |i: usize| -> Result<Vec<u64>, Error> {
        let b = t.buffer(i)?;
        Ok(if c.index_u64 {
            b.as_slice::<u64>()?.to_vec()
        } else {
            b.as_slice::<u32>()?.iter().map(|&v| u64::from(v)).collect()
        })
    };
    prop_assert_eq!(
        typed(1).map_err(|e| fail(format!("reader: typed block_table: {e}")))?,
        block_table.clone()
    );
    prop_assert_eq!(
        typed(2).map_err(|e| fail(format!("reader: typed seq_ptr: {e}")))?,
        seq_ptr.clone()
    );

    // § Element Lookup over the reader's buffers, for every element.
    let ps = u64::from(c.page_size);
    let (heads, dim) = (c.num_heads, c.head_dim);
    let scales = t.buffers().get(3);
    let zeros = t.buffers().get(4);
    let mut flat = Vec::new();
    for (i, &(s, tok)) in m.token_of.iter().enumerate() {
        let page = seq_ptr[s] + tok / ps;
        prop_assert!(page < seq_ptr[s + 1], "token {} of sequence {} past its pages", tok, s);
        let phys = block_table[page as usize];
        let slot = tok % ps;
        for h in 0..heads {
            for d in 0..dim {
                let at = ((phys * ps + slot) * heads + h) * dim + d;
                let bits = m.elements[((i as u64 * heads + h) * dim + d) as usize];
                let got = pool
                    .value(at)
                    .ok_or_else(|| fail(format!("page_pool has no element {at}")))?;
                let want = c.ty.value(bits);
                prop_assert!(
                    same(&got, &want),
                    "[{}, {}, {}] (sequence {} token {}, page {} slot {}) = {:?}, expected {:?}",
                    i,
                    h,
                    d,
                    s,
                    tok,
                    phys,
                    slot,
                    got,
                    want
                );
                flat.push((at, bits));
            }
        }
        // Per-page-slot parameters, through the same block table.
        if let (Some(Quant::Block { .. }), Some(q)) = (c.quant, &m.quant) {
            let (scale, zero) = q.token_params[i];
            let k = phys * ps + slot;
            let got = scales.and_then(|b| b.value(k));
            prop_assert!(
                got.as_ref().is_some_and(|v| same(v, &Value::Float(f64::from(scale)))),
                "scale of token {} (slot {}) = {:?}, expected {}",
                i,
                k,
                got,
                scale
            );
            if let Some(z) = zeros {
                prop_assert_eq!(z.value(k), Some(Value::Int(zero)), "zero point of token {}", i);
            }
        }
    }
    if let (Some(Quant::Channel { .. }), Some(q)) = (c.quant, &m.quant) {
        for (k, &(scale, zero)) in q.channel_params.iter().enumerate() {
            let got = scales.and_then(|b| b.value(k as u64));
            prop_assert_eq!(got, Some(Value::Float(f64::from(scale))), "channel {} scale", k);
            if let Some(z) = zeros {
                prop_assert_eq!(z.value(k as u64), Some(Value::Int(zero)), "channel {} zero point", k);
            }
        }
    }
    match c.ty {
        Ty::Float32 => check_bp_typed::<f32>(&t, &flat, |v| u64::from(v.to_bits())),
        Ty::Float64 => check_bp_typed::<f64>(&t, &flat, f64::to_bits),
        Ty::Int32 => check_bp_typed::<i32>(&t, &flat, |v| u64::from(v as u32)),
        Ty::Int8 => check_bp_typed::<i8>(&t, &flat, |v| u64::from(v as u8)),
        Ty::Uint8 => check_bp_typed::<u8>(&t, &flat, u64::from),
        Ty::Uint16 => check_bp_typed::<u16>(&t, &flat, u64::from),
        Ty::Int64 => check_bp_typed::<i64>(&t, &flat, |v| v as u64),
        Ty::Float16 => check_bp_typed::<f16>(&t, &flat, |v| u64::from(v.to_bits())),
        Ty::Complex64 => check_bp_typed::<Complex<f32>>(&t, &flat, |v| {
            u64::from(v.re.to_bits()) | u64::from(v.im.to_bits()) << 32
        }),
        Ty::Bool | Ty::Int4 | Ty::Float6E2m3 => Ok(()),
    }
}

pub(crate) fn bp_case(nonempty: bool) -> BoxedStrategy<BpCase> {
    let quant = prop_oneof![
        4 => Just(None),
        1 => Just(Some(Quant::Tensor)),
        1 => (1u32..=2, any::<bool>()).prop_map(|(axis, symmetric)| Some(Quant::Channel { axis, symmetric })),
        2 => (
            select(vec![ScaleType::Float32, ScaleType::Float16, ScaleType::BFloat16]),
            any::<bool>()
        )
            .prop_map(|(scale, symmetric)| Some(Quant::Block { scale, symmetric })),
    ];
    let (lo_seqs, lo_tokens, lo_dims) = if nonempty { (1, 1, 1) } else { (0, 0, 0) };
    (
        (
            quant,
            select(TYPES.to_vec()),
            select(QUANT_TYPES.to_vec()),
            lo_dims..=3u64,
            lo_dims..=4u64,
            1u32..=5,
        ),
        (
            vec(prop_oneof![1 => Just(0u64), 6 => lo_tokens..=9u64], lo_seqs..=4),
            vec((any::<usize>(), 0u64..=3), 5),
            0u64..=2,
            any::<bool>(),
            0u8..=2,
            prop_oneof![Just(u32::MAX), 0u32..=80],
            any::<u64>(),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                (quant, ty, quant_ty, num_heads, head_dim, page_size),
                (tokens, shares, free_pages, index_u64, kv_role, layer_index, seed, garbage),
            )| {
                let total: u64 = tokens.iter().sum();
                let (page_size, quant) = match quant {
                    // block_size = page_size: a power of two >= 2 that the
                    // token axis can hold (see the file's notes).
                    Some(Quant::Block { .. }) => {
                        let ps = if page_size <= 2 { 2 } else { 4 };
                        if total > 0 && total < u64::from(ps) {
                            (page_size, Some(Quant::Tensor))
                        } else {
                            (ps, quant)
                        }
                    }
                    q => (page_size, q),
                };
                BpCase {
                    ty: if quant.is_some() { quant_ty } else { ty },
                    num_heads,
                    head_dim,
                    page_size,
                    tokens,
                    shares,
                    free_pages,
                    index_u64,
                    kv_role,
                    layer_index,
                    seed,
                    garbage,
                    quant,
                }
            },
        )
        .boxed()
}
