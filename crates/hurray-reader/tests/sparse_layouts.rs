//! CSF and block-paged storage against a model written from the spec, as
//! property tests.
//!
//! **CSF** (`layouts/csf.md`). A case is a random sparse tensor of rank 3-4
//! (dimensions 0-5; sometimes rank 5-6, dimensions 0-3), a `mode_order`
//! permutation, an element type from a representative set (float32,
//! float64, int32, int8, uint16, int64, float16, complex64, and the packed
//! bool, int4 and float6_e2m3; or int8, uint8, int4 quantized per tensor or
//! per channel, parameter buffers from `2 * rank + 1`), a random set of
//! stored entries (any density, explicit zeros and special bit patterns
//! included), sometimes interior nodes with no leaf below, and sometimes a
//! statistics section. The model builds the tree from § Buffer Table and §
//! Storage Invariants alone: level `L` stores the distinct storage-order
//! prefixes `(idx[mode_order[0]], ..., idx[mode_order[L]])` in
//! lexicographic order (the tree's depth-first order), `crd_L` their last
//! coordinates, `pos_0 = [0, n_0]` and `pos_L` the running count of the
//! children of each level-`L-1` node; `values` in leaf order, packed as
//! `element-types.md` says. Nothing of the reader or the writer computes
//! it. The file is written with the checked `Csf::new` +
//! `FileWriter::write_tensor` (the writer's descriptor must equal the
//! model's, sizes from § Buffer Size), opened strictly, validated, and read
//! back: the descriptor fields, every buffer's role and bytes, the levels,
//! every coordinate of the dense shape through `CsfStructure::position`
//! (unvalidated and validated) and the typed `CsfView::get` (stored value
//! or implicit zero, exactly where the model says), `Buffer::value` at the
//! leaf, `entries()` against the model's leaf order, coordinates outside
//! the shape and indices of the wrong length refused, statistics `nnz` as
//! written and a wrong `sparsity_ratio` reported (not fatal, NOTES.md).
//!
//! **Block-paged** (`layouts/block-paged.md`). A case is a batch of 0-4
//! sequences of 0-9 tokens, `num_heads` 0-3, `head_dim` 0-4, `page_size`
//! 1-5, sequences sharing a prefix of an earlier sequence's pages (aliased
//! page ids, § Prefix Sharing), free pages, physical page ids shuffled,
//! `uint32` or `uint64` index buffers, any `kv_role` and `layer_index`, and
//! sometimes a quantized storage type (int8, uint8, int4) with per-tensor,
//! per-channel (axis 1 or 2) or per-block-affine scales (axis 0,
//! `block_size = page_size`, float32/float16/bfloat16 scales, one per page
//! slot, § Quantization Compatibility; symmetric or with zero points). The
//! model starts from the logical side - each token of each sequence, in
//! batch order along axis 0 - allocates pages and lays out `page_pool`,
//! `block_table` and `seq_ptr`; slots no token uses (partial trailing
//! pages, free pages) hold zeros or random bits. The reader has no
//! block-paged element lookup (no view; `addressing` and `dense_value`
//! refuse the layout, which is checked), so every element is looked up
//! with § Element Lookup over the buffers *as the reader hands them out*
//! (`Buffer::values` and typed slices for the index buffers,
//! `Buffer::value` and typed slices for the pool, `Buffer::value` for the
//! scales and zero points of the token's page slot) and compared with the
//! model's logical values.
//!
//! **Mutations.** From a valid non-empty case, one rule at a time is
//! broken - each CSF storage invariant (1)-(5), `pos`/`crd`/`values` sizes,
//! `nnz`, `mode_order`, reserved bytes, statistics `nnz`, buffer count,
//! rank, `byte_offset`, shard, colocation, packing padding bits, parameter
//! buffer placement; block-paged invariants (1)-(4) and (6), `seq_ptr`
//! length, the layout fields, index width, rank, `byte_offset`, shard,
//! buffer count, colocation, padding bits, per-block `axis` /
//! `block_size`, scale count and values - the file is written through the
//! unchecked path (`write_tensor_unchecked`, buffer handles matching the
//! bytes written), and the strict reader (`HurrayFile::parse` + `validate`)
//! must reject it with an error whose `rule()` names the right spec section
//! and whose `field()` names the damaged array or field. Lookups on the
//! damaged file, strict and permissive, must not panic and answer only from
//! inside the values, at a leaf with the coordinate asked for; when the
//! tree itself is damaged, a strict lookup must not answer at all.
//!
//! Where the spec leaves a reading open, the model takes one and says so:
//! - CSF interior nodes without leaves below (`pos_L[k] = pos_L[k+1]`) are
//!   allowed when `nnz > 0`: invariants (1)-(5) allow them and § Element
//!   Lookup finds an implicit zero under them. For `nnz = 0`, § Storage
//!   Invariants requires every `crd_L` to be empty, so none are drawn
//!   there (both sides accept them: the ignored tests at the end).
//! - Block-paged: `shape[0]` is the sum of the sequences' token counts, but
//!   the file stores no per-sequence token count, so logical token `i` of
//!   axis 0 is mapped to `(sequence, token)` by the model's own counts
//!   (sequence 0's tokens first). Every sequence uses `ceil(tokens /
//!   page_size)` pages.
//! - Per-block-affine scales on a block-paged tensor: one per page slot,
//!   `num_pages * page_size` of them (§ Scale-buffer size), although with
//!   `block_size = page_size` the scheme itself would give one per block.
//!   The scheme's `block_size <= shape[axis]` still applies (both sides
//!   enforce it), so batches with fewer tokens than a page are quantized
//!   per tensor instead.
//! - The rule of a wrong buffer count may be the layout's § Buffer Table or
//!   `memory-layout.md` § Buffer Table (which states `>= 3` for indirect
//!   layouts); a non-zero `byte_offset` may cite `memory-layout.md` §
//!   byte_offset; `paged_axis != 0` may cite § Additional Descriptor Fields
//!   or § Storage Invariants (6).
//!
//! Left out: per-block, NF4 and MXFP quantization of CSF values; NF4 and
//! MXFP on block-paged; element types beyond the set above; the `uint32`
//! limit on `num_pages` (stated in a non-normative note); `shape[0]`
//! against the pages' capacity (no rule asks a reader to check it, and the
//! reader does not).
//!
//! Disagreements found, each with a minimal `#[ignore]`d test at the end:
//! an empty CSF tensor (`nnz = 0`) with a non-empty `crd_0` passes strict
//! validation and the checked writer; a block-paged scale buffer of the
//! wrong size cites `quantization/per-block-affine.md` instead of
//! `layouts/block-paged.md` § Scale-buffer size; per-block `axis != 0` on a
//! block-paged tensor is reported as `quantization.block_size`.

mod support {
    pub mod model {
        pub mod basics;
    }
}

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use hurray_reader::half::{bf16, f16};
use hurray_reader::{
    AlignedBytes, BufferRole, Complex, Element, Error, HurrayFile, Layout as ReaderLayout, LayoutFields, Options,
    Tensor, Value,
};
use hurray_writer::quant::{PerBlockAffine, PerChannelAffine, PerTensorAffine, ScaleType};
use hurray_writer::{
    BlockPaged, BufferData, BufferHandle, Csf, CsfLevel, FileWriter, Layout, RawDescriptor, RawTensor, Shard,
    Statistics, TensorDescriptor, Values, WriterOptions,
};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use proptest::test_runner::TestCaseError;
use support::model::basics::*;

/// Cases per property; the whole file runs in a few seconds in a debug
/// build. `PROPTEST_CASES` overrides it (for a longer search:
/// `PROPTEST_CASES=20000 cargo test --release --test sparse_layouts`).
const CASES: u32 = 1024;

// ---------------------------------------------------------------------------
// Element types (element-types.md, memory-layout.md § Sub-Byte Types)
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    Float32,
    Float64,
    Int32,
    Int8,
    Uint8,
    Uint16,
    Int64,
    Float16,
    Complex64,
    Bool,
    Int4,
    Float6E2m3,
}

/// Value types of the CSF and unquantized block-paged cases.
const TYPES: [Ty; 11] = [
    Ty::Float32,
    Ty::Float64,
    Ty::Int32,
    Ty::Int8,
    Ty::Uint16,
    Ty::Int64,
    Ty::Float16,
    Ty::Complex64,
    Ty::Bool,
    Ty::Int4,
    Ty::Float6E2m3,
];

/// Storage types every quantization scheme drawn accepts
/// (`quantization/*.md` § Valid Storage Types).
const QUANT_TYPES: [Ty; 3] = [Ty::Int8, Ty::Uint8, Ty::Int4];

#[derive(Debug, Clone, Copy)]
enum Packing {
    /// `width` bytes per element, little-endian.
    Whole(u64),
    /// `per_byte` elements of `bits` bits in each byte, LSB first.
    Sub { per_byte: u64, bits: u32 },
    /// Four 6-bit elements in every three bytes.
    Six,
}

impl Ty {
    fn writer(self) -> hurray_writer::ElementType {
        use hurray_writer::ElementType as W;
        match self {
            Ty::Float32 => W::Float32,
            Ty::Float64 => W::Float64,
            Ty::Int32 => W::Int32,
            Ty::Int8 => W::Int8,
            Ty::Uint8 => W::UInt8,
            Ty::Uint16 => W::UInt16,
            Ty::Int64 => W::Int64,
            Ty::Float16 => W::Float16,
            Ty::Complex64 => W::Complex64,
            Ty::Bool => W::Bool,
            Ty::Int4 => W::Int4,
            Ty::Float6E2m3 => W::Float6E2M3,
        }
    }

    fn reader(self) -> hurray_reader::ElementType {
        use hurray_reader::ElementType as R;
        match self {
            Ty::Float32 => R::Float32,
            Ty::Float64 => R::Float64,
            Ty::Int32 => R::Int32,
            Ty::Int8 => R::Int8,
            Ty::Uint8 => R::Uint8,
            Ty::Uint16 => R::Uint16,
            Ty::Int64 => R::Int64,
            Ty::Float16 => R::Float16,
            Ty::Complex64 => R::Complex64,
            Ty::Bool => R::Bool,
            Ty::Int4 => R::Int4,
            Ty::Float6E2m3 => R::Float6E2m3,
        }
    }

    fn packing(self) -> Packing {
        match self {
            Ty::Int8 | Ty::Uint8 => Packing::Whole(1),
            Ty::Uint16 | Ty::Float16 => Packing::Whole(2),
            Ty::Float32 | Ty::Int32 => Packing::Whole(4),
            Ty::Float64 | Ty::Int64 | Ty::Complex64 => Packing::Whole(8),
            Ty::Bool => Packing::Sub { per_byte: 8, bits: 1 },
            Ty::Int4 => Packing::Sub { per_byte: 2, bits: 4 },
            Ty::Float6E2m3 => Packing::Six,
        }
    }

    fn bits(self) -> u32 {
        match self.packing() {
            Packing::Whole(w) => 8 * w as u32,
            Packing::Sub { bits, .. } => bits,
            Packing::Six => 6,
        }
    }

    /// Bytes for `count` elements (`element-types.md` § Buffer Size
    /// Calculation; 6-bit: `ceil(N / 4) * 3`, NOTES.md).
    fn bytes_for(self, count: u64) -> u64 {
        match self.packing() {
            Packing::Whole(w) => count * w,
            Packing::Sub { per_byte, .. } => count.div_ceil(per_byte),
            Packing::Six => count.div_ceil(4) * 3,
        }
    }

    /// Puts the bit pattern of element `offset` into `buf`.
    fn place(self, buf: &mut [u8], offset: u64, bits: u64) {
        match self.packing() {
            Packing::Whole(w) => {
                let start = (offset * w) as usize;
                buf[start..start + w as usize].copy_from_slice(&bits.to_le_bytes()[..w as usize]);
            }
            Packing::Sub { per_byte, bits: b } => {
                let byte = (offset / per_byte) as usize;
                let shift = (offset % per_byte) as u32 * b;
                let mask = ((1u16 << b) - 1) as u8;
                buf[byte] = buf[byte] & !(mask << shift) | (bits as u8 & mask) << shift;
            }
            Packing::Six => {
                let start = (offset / 4 * 3) as usize;
                let j = (offset % 4) as u32;
                let group = &mut buf[start..start + 3];
                let mut word = u32::from(group[0]) | u32::from(group[1]) << 8 | u32::from(group[2]) << 16;
                word = word & !(0x3F << (6 * j)) | (bits as u32 & 0x3F) << (6 * j);
                group.copy_from_slice(&word.to_le_bytes()[..3]);
            }
        }
    }

    /// The value of bit pattern `bits`, decoded from `element-types.md`.
    fn value(self, bits: u64) -> Value {
        match self {
            Ty::Float32 => Value::Float(f64::from(f32::from_bits(bits as u32))),
            Ty::Float64 => Value::Float(f64::from_bits(bits)),
            Ty::Int32 => Value::Int(i64::from(bits as u32 as i32)),
            Ty::Int8 => Value::Int(i64::from(bits as u8 as i8)),
            Ty::Uint8 | Ty::Uint16 => Value::UInt(bits),
            Ty::Int64 => Value::Int(bits as i64),
            // IEEE binary16: 5 exponent bits, bias 15.
            Ty::Float16 => Value::Float(ieee_minifloat(bits as u32, 5, 10, 15)),
            Ty::Complex64 => Value::Complex {
                re: f64::from(f32::from_bits(bits as u32)),
                im: f64::from(f32::from_bits((bits >> 32) as u32)),
            },
            Ty::Bool => Value::Bool(bits & 1 == 1),
            // Two's complement in 4 bits.
            Ty::Int4 => Value::Int(i64::from(((bits as u8) << 4) as i8 >> 4)),
            // 1-2-3, bias 1, no inf or NaN.
            Ty::Float6E2m3 => Value::Float(minifloat(bits as u32, 2, 3, 1)),
        }
    }

    /// Zero points representable in the storage type (`quantization/*.md`:
    /// the zero point lies within the storage type's range).
    fn zero_point_range(self) -> (i64, i64) {
        match self {
            Ty::Int8 => (-128, 127),
            Ty::Uint8 => (0, 255),
            Ty::Int4 => (-8, 7),
            other => panic!("{other:?} is not a quantized storage type here"),
        }
    }
}

/// A `bits`-bit pattern: zero, the sign bit alone (-0.0), all ones, or
/// random, by `kind`.
fn pattern(kind: u8, raw: u64, bits: u32) -> u64 {
    let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    match kind % 16 {
        0 => 0,
        1 => 1u64 << (bits - 1),
        2 => mask,
        _ => raw & mask,
    }
}

fn value_bits() -> impl Strategy<Value = (u8, u64)> {
    (0u8..16, any::<u64>())
}

fn le_u64s(values: &[u64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// `values` as `width`-byte little-endian integers (4 or 8).
fn le_index(values: &[u64], width: u64) -> Vec<u8> {
    values
        .iter()
        .flat_map(|&v| v.to_le_bytes()[..width as usize].to_vec())
        .collect()
}

/// The written file's bytes, from a writer closure.
fn write_file(
    f: impl FnOnce(&mut FileWriter<Vec<u8>>) -> Result<(), hurray_writer::Error>,
) -> Result<AlignedBytes, hurray_writer::Error> {
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default())?;
    f(&mut w)?;
    Ok(AlignedBytes::from_slice(&w.finish()?))
}

/// A file written through the unchecked path: descriptor bytes as given,
/// buffers as given.
fn write_raw(raw: &RawDescriptor, buffers: &[Vec<u8>]) -> AlignedBytes {
    let descriptor = raw.encode().expect("raw descriptor encodes");
    let data: Vec<BufferData<'_>> = buffers.iter().map(|b| BufferData::Bytes(b)).collect();
    write_file(|w| w.write_tensor_unchecked(RawTensor::new("t", descriptor, data))).expect("unchecked write")
}

// ---------------------------------------------------------------------------
// CSF: the model (layouts/csf.md § Buffer Table, § Storage Invariants)
// ---------------------------------------------------------------------------

#[derive(Clone)]
struct CsfCase {
    ty: Ty,
    shape: Vec<u64>,
    mode_order: Vec<u32>,
    /// Stored entries: logical index -> bit pattern.
    entries: BTreeMap<Vec<u64>, u64>,
    /// Interior nodes with no leaf below, as storage-order prefixes of
    /// length 1 to `rank - 1` (only when `entries` is not empty).
    dangling: BTreeSet<Vec<u64>>,
    statistics: Stats,
    /// Quantized values (storage type int8, uint8 or int4): per tensor or
    /// per channel, parameter buffers from `2 * rank + 1`.
    quant: Option<Quant>,
}

/// The statistics section of a CSF case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stats {
    None,
    /// `nnz` and the `sparsity_ratio` of § Interaction with Statistics Section.
    Right,
    /// `nnz`, and a `sparsity_ratio` 0.25 off: advisory, reported, not fatal.
    WrongRatio,
}

impl fmt::Debug for CsfCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} shape {:?} mode_order {:?} entries {:?} dangling {:?} statistics {:?} quantization {:?}",
            self.ty, self.shape, self.mode_order, self.entries, self.dangling, self.statistics, self.quant
        )
    }
}

/// What the model says the CSF buffers hold.
struct CsfModel {
    nnz: u64,
    /// `(pos_L, crd_L)`, outermost level first.
    levels: Vec<(Vec<u64>, Vec<u64>)>,
    /// Buffer 0.
    values: Vec<u8>,
    /// Every stored entry in leaf order: logical index, bit pattern.
    leaves: Vec<(Vec<u64>, u64)>,
}

fn csf_model(c: &CsfCase) -> CsfModel {
    let rank = c.shape.len();
    // § Element Lookup, step 1: the coordinate at level L is idx[mode_order[L]].
    let key = |idx: &[u64]| -> Vec<u64> { c.mode_order.iter().map(|&m| idx[m as usize]).collect() };
    let by_key: BTreeMap<Vec<u64>, (Vec<u64>, u64)> = c
        .entries
        .iter()
        .map(|(idx, &bits)| (key(idx), (idx.clone(), bits)))
        .collect();
    // The nodes of level L are the distinct prefixes of length L + 1; in
    // lexicographic order they are in depth-first (tree) order.
    let mut nodes: Vec<BTreeSet<Vec<u64>>> = vec![BTreeSet::new(); rank];
    for k in by_key.keys() {
        for (l, level) in nodes.iter_mut().enumerate() {
            level.insert(k[..=l].to_vec());
        }
    }
    for d in &c.dangling {
        for (l, level) in nodes.iter_mut().enumerate().take(d.len()) {
            level.insert(d[..=l].to_vec());
        }
    }
    let mut levels = Vec::new();
    for l in 0..rank {
        let crd: Vec<u64> = nodes[l].iter().map(|p| p[l]).collect();
        // pos_0 = [0, n_0]; pos_L[k + 1] - pos_L[k] = children of node k of level L - 1.
        let pos = if l == 0 {
            vec![0, crd.len() as u64]
        } else {
            let mut pos = vec![0u64];
            for parent in &nodes[l - 1] {
                let children = nodes[l].iter().filter(|p| p[..l] == parent[..]).count() as u64;
                pos.push(pos.last().copied().unwrap_or(0) + children);
            }
            pos
        };
        levels.push((pos, crd));
    }
    let leaves: Vec<(Vec<u64>, u64)> = by_key.into_values().collect();
    let nnz = leaves.len() as u64;
    let mut values = vec![0u8; c.ty.bytes_for(nnz) as usize];
    for (p, (_, bits)) in leaves.iter().enumerate() {
        c.ty.place(&mut values, p as u64, *bits);
    }
    CsfModel {
        nnz,
        levels,
        values,
        leaves,
    }
}

/// The descriptor the spec asks for: layout `0x09`, `nnz`, `mode_order`,
/// `2 * rank + 1` buffers sized by § Buffer Size (`values`: `nnz` elements;
/// `pos_L`: `(n_{L-1} + 1) * 8` bytes, `n_{-1} = 1`; `crd_L`: `n_L * 8`).
fn csf_descriptor(c: &CsfCase, m: &CsfModel) -> TensorDescriptor {
    let mut buffers = vec![BufferHandle::new(c.ty.bytes_for(m.nnz))];
    let mut parents = 1u64;
    for (_, crd) in &m.levels {
        let n = crd.len() as u64;
        buffers.push(BufferHandle::new((parents + 1) * 8));
        buffers.push(BufferHandle::new(n * 8));
        parents = n;
    }
    let d = TensorDescriptor::new(
        c.ty.writer(),
        Layout::Csf {
            nnz: m.nnz,
            mode_order: c.mode_order.clone(),
        },
        c.shape.clone(),
    )
    .with_buffers(buffers);
    match csf_quant(c) {
        Some(q) => q.params.iter().fold(d.with_quantization(q.payload), |d, b| {
            d.with_buffer(BufferHandle::new(b.len() as u64))
        }),
        None => d,
    }
}

/// The statistics section: `nnz`, and `sparsity_ratio = 1 - nnz /
/// total_elements` (or 0.25 off it) when the shape has elements.
fn csf_statistics(c: &CsfCase, nnz: u64) -> Option<Statistics> {
    let total = count(&c.shape);
    let stats = Statistics::default().with_nnz(nnz);
    let ratio = 1.0 - nnz as f64 / total as f64;
    match c.statistics {
        Stats::None => None,
        _ if total == 0 => Some(stats),
        Stats::Right => Some(stats.with_sparsity_ratio(ratio)),
        Stats::WrongRatio => Some(stats.with_sparsity_ratio(if ratio >= 0.5 { ratio - 0.25 } else { ratio + 0.25 })),
    }
}

/// A CSF case's quantization.
struct CsfQuant {
    payload: Vec<u8>,
    /// The parameter buffers, from buffer `2 * rank + 1`.
    params: Vec<Vec<u8>>,
    /// Per channel: `(scale, zero point)`.
    channels: Vec<(f32, i64)>,
}

fn csf_quant(c: &CsfCase) -> Option<CsfQuant> {
    let quant = c.quant?;
    let (lo, hi) = c.ty.zero_point_range();
    let rank = c.shape.len() as u32;
    let param = |k: u64| {
        (
            SCALES[(k % SCALES.len() as u64) as usize],
            lo + ((k * 7 + 3) % (hi - lo + 1) as u64) as i64,
        )
    };
    match quant {
        Quant::Tensor => {
            let (scale, zero_point) = param(c.entries.len() as u64);
            let payload = PerTensorAffine {
                scale,
                zero_point: zero_point as i32,
            }
            .encode();
            Some(CsfQuant {
                payload,
                params: vec![],
                channels: vec![],
            })
        }
        Quant::Channel { axis, symmetric } => {
            let channels: Vec<(f32, i64)> = (0..c.shape[axis as usize])
                .map(|k| {
                    let (s, z) = param(k);
                    (s, if symmetric { 0 } else { z })
                })
                .collect();
            let mut buffers = vec![channels.iter().flat_map(|(s, _)| s.to_le_bytes()).collect::<Vec<u8>>()];
            if !symmetric {
                buffers.push(channels.iter().flat_map(|&(_, z)| (z as i32).to_le_bytes()).collect());
            }
            let payload = PerChannelAffine {
                axis,
                scale_buffer_index: 2 * rank + 1,
                zero_point_buffer_index: (!symmetric).then_some(2 * rank + 2),
            }
            .encode();
            Some(CsfQuant {
                payload,
                params: buffers,
                channels,
            })
        }
        Quant::Block { .. } => unreachable!("not drawn for CSF"),
    }
}

/// The case written with the checked writer (`Csf::new` checks every
/// storage invariant, `write_tensor` every descriptor rule).
fn write_csf(c: &CsfCase, m: &CsfModel) -> Result<AlignedBytes, TestCaseError> {
    let refused = |e: hurray_writer::Error| fail(format!("the checked writer refuses: {e}"));
    let levels: Vec<CsfLevel<'_>> = m.levels.iter().map(|(pos, crd)| CsfLevel { pos, crd }).collect();
    let values = Values::new(c.ty.writer(), m.nnz, &m.values).map_err(refused)?;
    let csf = Csf::new(&c.shape, &c.mode_order, values, &levels).map_err(refused)?;
    let mut d = csf.descriptor().map_err(refused)?;
    let quant = csf_quant(c);
    let mut data = csf.buffer_data();
    if let Some(q) = &quant {
        d = d.with_quantization(q.payload.clone());
        for b in &q.params {
            d = d.with_buffer(BufferHandle::new(b.len() as u64));
            data.push(BufferData::Bytes(b));
        }
    }
    prop_assert_eq!(
        &d,
        &csf_descriptor(c, m),
        "the writer's descriptor differs from the spec's sizes"
    );
    if let Some(stats) = csf_statistics(c, m.nnz) {
        d = d.with_statistics(stats);
    }
    write_file(|w| w.write_tensor("t", &d, data)).map_err(refused)
}

/// The typed view answers as the model: `get` for every index.
fn check_csf_typed<T: Element + fmt::Debug>(
    t: &Tensor<'_>,
    c: &CsfCase,
    m: &CsfModel,
    bits: fn(T) -> u64,
) -> Result<(), TestCaseError> {
    let view = t
        .csf::<T>()
        .map_err(|e| fail(format!("reader: csf::<{}>: {e}", std::any::type_name::<T>())))?;
    prop_assert_eq!(view.values().len() as u64, m.nnz, "typed values length");
    for idx in all_indices(&c.shape) {
        let got = view
            .get(&idx)
            .map_err(|e| fail(format!("reader: get({idx:?}): {e}")))?
            .map(|v| bits(*v));
        prop_assert_eq!(got, c.entries.get(&idx).copied(), "typed get({:?})", idx);
    }
    Ok(())
}

fn check_csf(c: &CsfCase) -> Result<(), TestCaseError> {
    let m = csf_model(c);
    let rank = c.shape.len();
    let bytes = write_csf(c, &m)?;
    let file = HurrayFile::parse(&bytes, Options::strict()).map_err(|e| fail(format!("reader: parse: {e}")))?;
    file.validate().map_err(|e| fail(format!("reader: validate: {e}")))?;
    let t = file.tensor("t").map_err(|e| fail(format!("reader: tensor: {e}")))?;

    // Descriptor fields as written.
    prop_assert_eq!(t.layout(), ReaderLayout::Csf);
    prop_assert_eq!(t.element_type(), Some(c.ty.reader()));
    prop_assert_eq!(t.shape().collect::<Vec<_>>(), c.shape.clone());
    prop_assert_eq!(t.nnz(), Some(m.nnz));
    prop_assert_eq!(t.descriptor().byte_offset(), 0);
    match t.descriptor().layout_fields() {
        LayoutFields::Csf {
            nnz,
            mode_order,
            reserved,
        } => {
            prop_assert_eq!(*nnz, m.nnz);
            prop_assert_eq!(
                mode_order.iter().map(|v| v.get()).collect::<Vec<_>>(),
                c.mode_order.clone()
            );
            prop_assert_eq!(*reserved, &[0u8; 8]);
        }
        other => return Err(fail(format!("layout fields {other:?}"))),
    }
    // Statistics as written; a wrong sparsity_ratio is reported, not fatal
    // (NOTES.md, Statistics).
    let stats = t.descriptor().statistics().map(|s| s.nnz.get());
    prop_assert_eq!(stats, (c.statistics != Stats::None).then_some(m.nnz), "statistics nnz");
    let wrong = c.statistics == Stats::WrongRatio && count(&c.shape) > 0;
    prop_assert_eq!(t.sparsity_ratio_mismatch().is_some(), wrong, "sparsity_ratio_mismatch");

    // Buffers: roles, sizes, bytes; quantization parameters after the tree.
    let quant = csf_quant(c);
    let params = quant.as_ref().map_or(0, |q| q.params.len());
    prop_assert_eq!(t.buffers().len(), 2 * rank + 1 + params, "buffer_count");
    if let Some(CsfQuant { params, channels, .. }) = &quant {
        for (i, b) in params.iter().enumerate() {
            let got = t
                .buffer(2 * rank + 1 + i)
                .map_err(|e| fail(format!("reader: parameter buffer {i}: {e}")))?;
            let role = if i == 0 {
                BufferRole::Scales
            } else {
                BufferRole::ZeroPoints
            };
            prop_assert_eq!(got.role(), role);
            prop_assert_eq!(got.bytes(), &b[..], "parameter buffer {} bytes", i);
        }
        for (k, &(scale, zero)) in channels.iter().enumerate() {
            let scales = t
                .buffer(2 * rank + 1)
                .map_err(|e| fail(format!("reader: scales: {e}")))?;
            prop_assert_eq!(
                scales.value(k as u64),
                Some(Value::Float(f64::from(scale))),
                "channel {} scale",
                k
            );
            if params.len() == 2 {
                let zeros = t
                    .buffer(2 * rank + 2)
                    .map_err(|e| fail(format!("reader: zero points: {e}")))?;
                prop_assert_eq!(
                    zeros.value(k as u64),
                    Some(Value::Int(zero)),
                    "channel {} zero point",
                    k
                );
            }
        }
    }
    let values = t.buffer(0).map_err(|e| fail(format!("reader: buffer 0: {e}")))?;
    prop_assert_eq!(values.role(), BufferRole::Values);
    prop_assert_eq!(values.bytes(), &m.values[..], "values bytes");
    prop_assert_eq!(values.len(), m.nnz);
    for (l, (pos, crd)) in m.levels.iter().enumerate() {
        let p = t.buffer(2 * l + 1).map_err(|e| fail(format!("reader: pos_{l}: {e}")))?;
        let k = t.buffer(2 * l + 2).map_err(|e| fail(format!("reader: crd_{l}: {e}")))?;
        prop_assert_eq!(p.role(), BufferRole::Pos(l as u8));
        prop_assert_eq!(k.role(), BufferRole::Crd(l as u8));
        prop_assert_eq!(p.bytes(), &le_u64s(pos)[..], "pos_{} bytes", l);
        prop_assert_eq!(k.bytes(), &le_u64s(crd)[..], "crd_{} bytes", l);
    }

    // The tree, unvalidated and validated.
    let s = t
        .csf_structure()
        .map_err(|e| fail(format!("reader: csf_structure: {e}")))?;
    prop_assert!(!s.is_validated());
    prop_assert_eq!(s.nnz(), m.nnz);
    let orders: Vec<usize> = c.mode_order.iter().map(|&v| v as usize).collect();
    prop_assert_eq!(s.mode_order(), &orders[..]);
    prop_assert_eq!(s.levels().len(), rank);
    for (level, (pos, crd)) in s.levels().iter().zip(&m.levels) {
        prop_assert_eq!(level.pos, &pos[..]);
        prop_assert_eq!(level.crd, &crd[..]);
    }
    let v = s
        .clone()
        .validated()
        .map_err(|e| fail(format!("reader: validated: {e}")))?;
    prop_assert!(v.is_validated());

    // Every coordinate of the dense shape: stored value or implicit zero.
    let leaf_of: BTreeMap<&Vec<u64>, u64> = m
        .leaves
        .iter()
        .enumerate()
        .map(|(p, (idx, _))| (idx, p as u64))
        .collect();
    for idx in all_indices(&c.shape) {
        let want = leaf_of.get(&idx).copied();
        for (what, structure) in [("unvalidated", &s), ("validated", &v)] {
            let got = structure
                .position(&idx)
                .map_err(|e| fail(format!("reader: position({idx:?}) ({what}): {e}")))?;
            prop_assert_eq!(got, want, "position({:?}) ({})", idx, what);
        }
        if let Some(p) = want {
            let got = values.value(p).ok_or_else(|| fail(format!("no value at leaf {p}")))?;
            let expected = c.ty.value(c.entries[&idx]);
            prop_assert!(
                same(&got, &expected),
                "value at {:?} (leaf {}) = {:?}, expected {:?}",
                idx,
                p,
                got,
                expected
            );
        }
    }
    // Coordinates outside the shape, and indices of the wrong length, are
    // refused (not answered).
    for d in 0..rank {
        let mut idx = vec![0u64; rank];
        idx[d] = c.shape[d];
        prop_assert!(
            v.position(&idx).is_err(),
            "position({:?}) outside the shape answers",
            idx
        );
    }
    prop_assert!(v.position(&vec![0; rank - 1]).is_err());
    prop_assert!(v.position(&vec![0; rank + 1]).is_err());

    // Iteration: leaf order, logical coordinates.
    let entries: Vec<(Vec<u64>, u64)> = s
        .entries()
        .map_err(|e| fail(format!("reader: entries: {e}")))?
        .collect();
    let expected: Vec<(Vec<u64>, u64)> = m
        .leaves
        .iter()
        .enumerate()
        .map(|(p, (idx, _))| (idx.clone(), p as u64))
        .collect();
    prop_assert_eq!(entries, expected, "entries() in leaf order");

    match c.ty {
        Ty::Float32 => check_csf_typed::<f32>(&t, c, &m, |v| u64::from(v.to_bits())),
        Ty::Float64 => check_csf_typed::<f64>(&t, c, &m, f64::to_bits),
        Ty::Int32 => check_csf_typed::<i32>(&t, c, &m, |v| u64::from(v as u32)),
        Ty::Int8 => check_csf_typed::<i8>(&t, c, &m, |v| u64::from(v as u8)),
        Ty::Uint8 => check_csf_typed::<u8>(&t, c, &m, u64::from),
        Ty::Uint16 => check_csf_typed::<u16>(&t, c, &m, u64::from),
        Ty::Int64 => check_csf_typed::<i64>(&t, c, &m, |v| v as u64),
        Ty::Float16 => check_csf_typed::<f16>(&t, c, &m, |v| u64::from(v.to_bits())),
        Ty::Complex64 => check_csf_typed::<Complex<f32>>(&t, c, &m, |v| {
            u64::from(v.re.to_bits()) | u64::from(v.im.to_bits()) << 32
        }),
        Ty::Bool | Ty::Int4 | Ty::Float6E2m3 => Ok(()),
    }
}

// ---------------------------------------------------------------------------
// CSF strategies
// ---------------------------------------------------------------------------

/// A random sparse tensor of rank 3-6 (mostly 3 and 4); `nonempty`: no
/// zero dimension and at least one entry.
fn csf_case(nonempty: bool) -> BoxedStrategy<CsfCase> {
    prop_oneof![3 => Just(3usize), 3 => Just(4usize), 1 => Just(5usize), 1 => Just(6usize)]
        .prop_flat_map(move |rank| {
            // At most 5^4 = 625 (3^6 = 729) cells.
            let hi = if rank >= 5 { 3 } else { 5 };
            let dim = if nonempty {
                (1u64..=hi).boxed()
            } else {
                prop_oneof![1 => Just(0u64), 12 => 1u64..=hi].boxed()
            };
            (
                vec(dim, rank),
                permutation(rank),
                select(TYPES.to_vec()),
                select(vec![0u8, 3, 10, 30, 60, 100]),
                select(vec![Stats::None, Stats::None, Stats::Right, Stats::WrongRatio]),
                prop_oneof![
                    4 => Just(None),
                    1 => Just(Some(Quant::Tensor)),
                    2 => (0..rank as u32, any::<bool>())
                        .prop_map(|(axis, symmetric)| Some(Quant::Channel { axis, symmetric })),
                ],
                select(QUANT_TYPES.to_vec()),
            )
        })
        .prop_flat_map(|(shape, perm, ty, density, statistics, quant, quant_ty)| {
            let ty = if quant.is_some() { quant_ty } else { ty };
            let n = count(&shape) as usize;
            let rank = shape.len();
            (
                Just(shape),
                Just(perm),
                Just(ty),
                // A cell is stored when its draw is at least 100 - density
                // (shrinking towards 0 removes entries).
                vec((0u8..100, value_bits()), n).prop_map(move |cells| {
                    cells
                        .into_iter()
                        .map(|(draw, bits)| (draw >= 100 - density).then_some(bits))
                        .collect::<Vec<_>>()
                }),
                prop_oneof![2 => Just(vec![]), 1 => vec((1..rank, vec(any::<u64>(), rank - 1)), 1..=3)],
                Just((statistics, quant)),
                any::<Index>(),
                value_bits(),
            )
        })
        .prop_map(
            move |(shape, perm, ty, cells, dangling, (statistics, quant), forced, (kind, raw))| {
                let indices = all_indices(&shape);
                let mut entries = BTreeMap::new();
                for (idx, cell) in indices.iter().zip(cells) {
                    if let Some((kind, raw)) = cell {
                        entries.insert(idx.clone(), pattern(kind, raw, ty.bits()));
                    }
                }
                if nonempty && entries.is_empty() {
                    entries.insert(
                        indices[forced.index(indices.len())].clone(),
                        pattern(kind, raw, ty.bits()),
                    );
                }
                let mut dangling_set = BTreeSet::new();
                if !entries.is_empty() {
                    for (len, coords) in dangling {
                        let prefix: Option<Vec<u64>> = (0..len)
                            .map(|l| {
                                let bound = shape[perm[l]];
                                (bound > 0).then(|| coords[l] % bound)
                            })
                            .collect();
                        dangling_set.extend(prefix);
                    }
                }
                CsfCase {
                    ty,
                    mode_order: perm.iter().map(|&m| m as u32).collect(),
                    shape,
                    entries,
                    dangling: dangling_set,
                    statistics,
                    quant,
                }
            },
        )
        .boxed()
}

// ---------------------------------------------------------------------------
// Block-paged: the model (layouts/block-paged.md)
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq)]
enum Quant {
    /// `quantization/per-tensor-affine.md`.
    Tensor,
    /// `quantization/per-channel-affine.md` along `num_heads` (1) or
    /// `head_dim` (2), § Per-scheme composition.
    Channel { axis: u32, symmetric: bool },
    /// `quantization/per-block-affine.md`, axis 0, `block_size = page_size`:
    /// one scale per page slot (§ Per-page-slot parameters).
    Block { scale: ScaleType, symmetric: bool },
}

#[derive(Clone)]
struct BpCase {
    ty: Ty,
    num_heads: u64,
    head_dim: u64,
    page_size: u32,
    /// Token count of each sequence.
    tokens: Vec<u64>,
    /// Per sequence: (an earlier sequence, leading pages to share with it);
    /// clipped to what both have.
    shares: Vec<(usize, u64)>,
    free_pages: u64,
    index_u64: bool,
    kv_role: u8,
    layer_index: u32,
    /// Seeds the physical page numbering and the values.
    seed: u64,
    /// Slots no token uses hold random bits instead of zeros.
    garbage: bool,
    quant: Option<Quant>,
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

/// Exactly representable in float16, bfloat16 and float32, all non-zero.
const SCALES: [f32; 8] = [0.5, 1.0, 2.0, 0.25, -1.5, 3.0, 0.125, -4.0];

/// What the model says the block-paged buffers hold.
struct BpModel {
    shape: [u64; 3],
    num_pages: u64,
    seq_ptr: Vec<u64>,
    block_table: Vec<u64>,
    page_pool: Vec<u8>,
    /// Sequence and position of each token along axis 0.
    token_of: Vec<(usize, u64)>,
    /// Bits of element `[i, h, d]` at `(i * num_heads + h) * head_dim + d`.
    elements: Vec<u64>,
    quant: Option<QuantModel>,
}

struct QuantModel {
    payload: Vec<u8>,
    /// Buffers 3 (scales) and, when present, 4 (zero points).
    buffers: Vec<Vec<u8>>,
    /// Per-block: the scale and zero point of each token (its page slot's).
    token_params: Vec<(f32, i64)>,
    /// Per-channel: the scales and zero points of the channels.
    channel_params: Vec<(f32, i64)>,
}

impl BpCase {
    fn width(&self) -> u64 {
        if self.index_u64 {
            8
        } else {
            4
        }
    }

    fn fields(&self, m: &BpModel) -> BlockPaged {
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
type Slots = BTreeMap<(u64, u64), (Vec<u64>, (f32, i64))>;

fn bp_model(c: &BpCase) -> BpModel {
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
fn bp_descriptor(c: &BpCase, m: &BpModel) -> TensorDescriptor {
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

fn bp_buffers(c: &BpCase, m: &BpModel) -> Vec<Vec<u8>> {
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

fn write_bp(c: &BpCase, m: &BpModel) -> Result<AlignedBytes, TestCaseError> {
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
fn index_values(t: &Tensor<'_>, i: usize) -> Result<Vec<u64>, TestCaseError> {
    let b = t.buffer(i).map_err(|e| fail(format!("reader: buffer {i}: {e}")))?;
    b.values()
        .map(|v| match v {
            Value::UInt(n) => Ok(n),
            other => Err(fail(format!("buffer {i} holds {other:?}"))),
        })
        .collect()
}

fn check_bp_typed<T: Element>(t: &Tensor<'_>, flat: &[(u64, u64)], bits: fn(T) -> u64) -> Result<(), TestCaseError> {
    let pool = t
        .buffer(0)
        .and_then(|b| b.as_slice::<T>())
        .map_err(|e| fail(format!("reader: page_pool as {}: {e}", std::any::type_name::<T>())))?;
    for &(at, want) in flat {
        prop_assert_eq!(bits(pool[at as usize]), want, "typed page_pool[{}]", at);
    }
    Ok(())
}

fn check_bp(c: &BpCase) -> Result<(), TestCaseError> {
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

fn bp_case(nonempty: bool) -> BoxedStrategy<BpCase> {
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

// ---------------------------------------------------------------------------
// Mutations: one rule broken, the strict reader must name it
// ---------------------------------------------------------------------------

/// What the strict reader must answer for a damaged file.
#[derive(Debug, Clone)]
struct Expect {
    /// The error's `rule()` starts with one of these.
    rules: Vec<&'static str>,
    /// The error's `field()`: its name, and for `buffer[i].byte_size` one
    /// of the indices allowed.
    field: Option<FieldIs>,
}

#[derive(Debug, Clone)]
enum FieldIs {
    Named(String),
    Buffer(Vec<u64>),
}

fn expect(rules: &[&'static str], field: Option<FieldIs>) -> Expect {
    Expect {
        rules: rules.to_vec(),
        field,
    }
}

fn named(name: impl Into<String>) -> Option<FieldIs> {
    Some(FieldIs::Named(name.into()))
}

fn buffer(indices: &[u64]) -> Option<FieldIs> {
    Some(FieldIs::Buffer(indices.to_vec()))
}

/// The strict verdict: `parse`, then `validate`; the error must match.
fn check_rejected(bytes: &AlignedBytes, e: &Expect, what: &str) -> Result<(), TestCaseError> {
    let err = match HurrayFile::parse(bytes, Options::strict()) {
        Err(err) => err,
        Ok(file) => match file.validate() {
            Ok(()) => return Err(fail(format!("{what}: the strict reader accepts the file"))),
            Err(err) => err,
        },
    };
    let rule = err.rule().unwrap_or("");
    prop_assert!(
        e.rules.iter().any(|r| rule.starts_with(r)),
        "{}: rule {:?} is none of {:?} (error: {})",
        what,
        rule,
        e.rules,
        err
    );
    let field = err.field();
    match &e.field {
        None => {}
        Some(FieldIs::Named(name)) => prop_assert!(
            field.is_some_and(|f| f.name == name),
            "{}: field {:?}, expected {} (error: {})",
            what,
            field,
            name,
            err
        ),
        Some(FieldIs::Buffer(indices)) => prop_assert!(
            field.is_some_and(|f| f.name == "buffer"
                && f.member == Some("byte_size")
                && f.index.is_some_and(|i| indices.contains(&i))),
            "{}: field {:?}, expected buffer{:?}.byte_size (error: {})",
            what,
            field,
            indices,
            err
        ),
    }
    Ok(())
}

const CSF_INV: &str = "layouts/csf.md § Storage Invariants";
const CSF_SIZE: &str = "layouts/csf.md § Buffer Size";
const CSF_TABLE: &str = "layouts/csf.md § Buffer Table";
const BP_INV: &str = "layouts/block-paged.md § Storage Invariants";
const BP_TABLE: &str = "layouts/block-paged.md § Buffer Table";
const BP_FIELDS: &str = "layouts/block-paged.md § Additional Descriptor Fields";
const BYTE_OFFSET: &str = "memory-layout.md § Common Fields › byte_offset";

/// One CSF storage rule to break; selectors pick the level and position
/// among those where the damage is possible.
#[derive(Debug, Clone)]
enum CsfBreak {
    /// Invariant 1: `pos_L[0] != 0`.
    PosFirst { level: Index, value: u64 },
    /// Invariant 2: `pos_L` decreases.
    PosDecreasing { pick: Index },
    /// Invariant 3: the last `pos_L` entry is not `n_L`.
    PosLast { level: Index, up: bool },
    /// Invariant 4: siblings out of order, or repeated.
    CrdUnsorted { pick: Index, duplicate: bool },
    /// Invariant 5: a coordinate at or past `shape[mode_order[L]]`.
    CrdOutOfBounds { pick: Index, extra: u64 },
    /// § Buffer Table: `pos_L` one entry longer or shorter.
    PosLength { level: Index, longer: bool },
    /// `crd_L` one entry longer (for inner levels, `pos_{L+1}` then no
    /// longer has `n_L + 1` entries).
    CrdLength { level: Index },
    /// `crd_L`'s byte size not a multiple of 8.
    CrdRagged { level: Index },
    /// The `nnz` field one more or one less than the leaves stored.
    Nnz { up: bool },
    /// `values` one element longer.
    ValuesLength,
    /// § Mode Ordering: a repeated dimension.
    ModeOrderRepeated { at: Index, from: Index },
    /// § Mode Ordering: a dimension `>= rank`.
    ModeOrderOutOfRange { at: Index, excess: u32 },
    /// § Additional Descriptor Fields: a non-zero `_reserved` byte.
    Reserved { byte: Index, value: u8 },
    /// § Interaction with Statistics Section: statistics `nnz` differs.
    StatisticsNnz { delta: u64 },
    /// § Buffer Table: `2 * rank` buffers.
    BufferCount,
    /// § Description: rank 2.
    Rank2,
    /// § Buffer Size: `byte_offset` must be 0.
    ByteOffset { value: u64 },
    /// § Sharding: no shard section.
    Shard,
    /// An `nnz` whose sizes overflow or are far from the buffers.
    NnzHuge { nnz: u64 },
    /// A set padding bit after the last packed value (`element-types.md`).
    ValuesPadding,
    /// A buffer on another memory class than buffer 0
    /// (`buffer-protocol.md` § Device Colocation).
    Colocation { pick: Index },
    /// A per-channel `scale_buffer_index` naming one of the tree's own
    /// buffers (`quantization.md` § Buffer Table Placement Rules).
    QuantIndex { pick: Index },
}

/// A CSF file's parts, editable.
struct CsfParts {
    ty: Ty,
    shape: Vec<u64>,
    mode_order: Vec<u32>,
    nnz: u64,
    values: Vec<u8>,
    levels: Vec<(Vec<u64>, Vec<u64>)>,
    /// Extra bytes at the end of a `crd_L` buffer.
    ragged: Option<usize>,
    statistics: Option<Statistics>,
    /// Quantization payload and parameter buffers.
    quant: Option<(Vec<u8>, Vec<Vec<u8>>)>,
}

impl CsfParts {
    fn buffers(&self) -> Vec<Vec<u8>> {
        let mut out = vec![self.values.clone()];
        for (l, (pos, crd)) in self.levels.iter().enumerate() {
            out.push(le_u64s(pos));
            let mut crd = le_u64s(crd);
            if self.ragged == Some(l) {
                crd.extend_from_slice(&[0; 4]);
            }
            out.push(crd);
        }
        if let Some((_, params)) = &self.quant {
            out.extend(params.iter().cloned());
        }
        out
    }

    /// The raw descriptor, buffer handles matching the bytes written.
    fn raw(&self, buffers: &[Vec<u8>]) -> RawDescriptor {
        let mut d = TensorDescriptor::new(
            self.ty.writer(),
            Layout::Csf {
                nnz: self.nnz,
                mode_order: self.mode_order.clone(),
            },
            self.shape.clone(),
        )
        .with_buffers(buffers.iter().map(|b| BufferHandle::new(b.len() as u64)).collect());
        d.statistics = self.statistics;
        d.quantization = self.quant.as_ref().map(|(payload, _)| payload.clone());
        d.to_raw()
    }
}

/// An edit of the encoded descriptor that the typed one cannot express.
type RawEdit = Box<dyn Fn(&mut RawDescriptor)>;

/// Segments of `pos` as ranges of `crd` positions.
fn segments(pos: &[u64]) -> Vec<std::ops::Range<usize>> {
    pos.windows(2).map(|w| w[0] as usize..w[1] as usize).collect()
}

/// Does the last byte of `count` packed elements have padding bits?
fn padding_bits(ty: Ty, count: u64) -> bool {
    match ty.packing() {
        Packing::Whole(_) => false,
        _ => count * u64::from(ty.bits()) < ty.bytes_for(count) * 8,
    }
}

/// Invariant 1 broken: `pos_L[0] = value`.
fn pos_first(p: &mut CsfParts, l: usize, value: u64) -> (String, Expect) {
    p.levels[l].0[0] = value;
    (
        format!("pos_{l}[0] = {value}"),
        expect(&[CSF_INV], named(format!("pos_{l}"))),
    )
}

/// Breaks one rule of a valid case; returns the file, what the reader must
/// say, and a description of the damage.
fn break_csf(c: &CsfCase, m: &CsfModel, b: &CsfBreak) -> (AlignedBytes, Expect, String) {
    let rank = c.shape.len();
    let mut p = CsfParts {
        ty: c.ty,
        shape: c.shape.clone(),
        mode_order: c.mode_order.clone(),
        nnz: m.nnz,
        values: m.values.clone(),
        levels: m.levels.clone(),
        ragged: None,
        statistics: csf_statistics(c, m.nnz),
        quant: csf_quant(c).map(|q| (q.payload, q.params)),
    };
    let bound = |l: usize| c.shape[c.mode_order[l] as usize];
    // (level, position in crd) of siblings i, i + 1 of one parent.
    let sibling_pairs: Vec<(usize, usize)> = (0..rank)
        .flat_map(|l| {
            segments(&m.levels[l].0)
                .into_iter()
                .flat_map(move |r| (r.start..r.end.saturating_sub(1)).map(move |i| (l, i)))
        })
        .collect();
    // (level, position) of the last child of each parent.
    let last_children: Vec<(usize, usize)> = (0..rank)
        .flat_map(|l| {
            segments(&m.levels[l].0)
                .into_iter()
                .filter(|r| !r.is_empty())
                .map(move |r| (l, r.end - 1))
        })
        .collect();
    // pos arrays with an interior entry (n_{L-1} >= 2).
    let long_pos: Vec<usize> = (0..rank).filter(|&l| m.levels[l].0.len() >= 3).collect();

    let mut raw_edit: Option<RawEdit> = None;
    let mut drop_last_buffer = false;
    let (description, e) = match b {
        CsfBreak::PosDecreasing { pick } if !long_pos.is_empty() => {
            let l = long_pos[pick.index(long_pos.len())];
            let pos = &mut p.levels[l].0;
            let k = 1 + pick.index(pos.len() - 2);
            let last = *pos.last().unwrap();
            pos[k] = last + 1;
            (
                format!("pos_{l}[{k}] = {} > pos_{l}[{}]", last + 1, k + 1),
                expect(&[CSF_INV], named(format!("pos_{l}"))),
            )
        }
        CsfBreak::CrdUnsorted { pick, duplicate } if !sibling_pairs.is_empty() => {
            let (l, i) = sibling_pairs[pick.index(sibling_pairs.len())];
            let crd = &mut p.levels[l].1;
            if *duplicate {
                crd[i + 1] = crd[i];
            } else {
                crd.swap(i, i + 1);
            }
            (
                format!(
                    "crd_{l}[{i}..{}] {}",
                    i + 2,
                    if *duplicate { "repeated" } else { "swapped" }
                ),
                expect(&[CSF_INV], named(format!("crd_{l}"))),
            )
        }
        CsfBreak::CrdOutOfBounds { pick, extra } => {
            let (l, i) = last_children[pick.index(last_children.len())];
            let value = bound(l).saturating_add(*extra);
            p.levels[l].1[i] = value;
            (
                format!("crd_{l}[{i}] = {value} (bound {})", bound(l)),
                expect(&[CSF_INV], named(format!("crd_{l}"))),
            )
        }
        CsfBreak::PosLast { level, up } => {
            let l = level.index(rank);
            let pos = &mut p.levels[l].0;
            let last = pos.len() - 1;
            pos[last] = if *up { pos[last] + 1 } else { pos[last] - 1 };
            (
                format!("pos_{l}[{last}] = {} (n_{l} = {})", pos[last], m.levels[l].1.len()),
                expect(&[CSF_INV], named(format!("pos_{l}"))),
            )
        }
        CsfBreak::PosLength { level, longer } => {
            let l = level.index(rank);
            let pos = &mut p.levels[l].0;
            if *longer {
                pos.push(*pos.last().unwrap());
            } else {
                pos.pop();
            }
            (
                format!("pos_{l} {} entries", pos.len()),
                expect(&[CSF_SIZE, CSF_TABLE], buffer(&[2 * l as u64 + 1])),
            )
        }
        CsfBreak::CrdLength { level } => {
            let l = level.index(rank);
            let extra = bound(l) - 1;
            p.levels[l].1.push(extra);
            (
                format!("crd_{l} one entry longer"),
                expect(&[CSF_SIZE, CSF_TABLE], buffer(&[2 * l as u64 + 2, 2 * l as u64 + 3])),
            )
        }
        CsfBreak::CrdRagged { level } => {
            let l = level.index(rank);
            p.ragged = Some(l);
            (
                format!("crd_{l} 4 bytes longer"),
                expect(&[CSF_SIZE, CSF_TABLE], buffer(&[2 * l as u64 + 2, 2 * l as u64 + 3])),
            )
        }
        CsfBreak::Nnz { up } => {
            p.nnz = if *up { m.nnz + 1 } else { m.nnz - 1 };
            (
                format!("nnz field {} for {} leaves", p.nnz, m.nnz),
                expect(&[CSF_SIZE, CSF_TABLE], buffer(&[0, 2 * rank as u64])),
            )
        }
        CsfBreak::ValuesLength => {
            let extra = c.ty.bytes_for(m.nnz + 1) - c.ty.bytes_for(m.nnz);
            p.values.extend(std::iter::repeat_n(0, extra.max(1) as usize));
            (
                "values one element longer".to_string(),
                expect(&[CSF_SIZE, CSF_TABLE], buffer(&[0])),
            )
        }
        CsfBreak::ModeOrderRepeated { at, from } => {
            let at = at.index(rank);
            let from = (at + 1 + from.index(rank - 1)) % rank;
            p.mode_order[at] = p.mode_order[from];
            (
                format!("mode_order {:?}", p.mode_order),
                expect(&["layouts/csf.md § Mode Ordering"], named("mode_order")),
            )
        }
        CsfBreak::ModeOrderOutOfRange { at, excess } => {
            let at = at.index(rank);
            p.mode_order[at] = (rank as u32).saturating_add(*excess);
            (
                format!("mode_order {:?}", p.mode_order),
                expect(&["layouts/csf.md § Mode Ordering"], named("mode_order")),
            )
        }
        CsfBreak::Reserved { byte, value } => {
            let at = 8 + 4 * rank + byte.index(8);
            let value = *value;
            raw_edit = Some(Box::new(move |r: &mut RawDescriptor| r.layout_fields[at] = value));
            (
                format!("layout field byte {at} = {value:#x}"),
                expect(&["layouts/csf.md § Additional Descriptor Fields"], named("_reserved")),
            )
        }
        CsfBreak::StatisticsNnz { delta } => {
            p.statistics = Some(Statistics::default().with_nnz(m.nnz + delta));
            (
                format!("statistics nnz {}", m.nnz + delta),
                expect(
                    &["layouts/csf.md § Interaction with Statistics Section"],
                    named("statistics"),
                ),
            )
        }
        CsfBreak::BufferCount => {
            p.quant = None;
            drop_last_buffer = true;
            (
                format!("{} buffers", 2 * rank),
                expect(&[CSF_TABLE], named("buffer_count")),
            )
        }
        CsfBreak::Rank2 => {
            p.shape.truncate(2);
            p.mode_order = vec![0, 1];
            (
                "rank 2".to_string(),
                expect(&["layouts/csf.md § Description"], named("rank")),
            )
        }
        CsfBreak::ByteOffset { value } => {
            let value = *value;
            raw_edit = Some(Box::new(move |r: &mut RawDescriptor| r.byte_offset = value));
            (
                format!("byte_offset {value}"),
                expect(&[BYTE_OFFSET, CSF_SIZE], named("byte_offset")),
            )
        }
        CsfBreak::Shard => {
            let shape = c.shape.clone();
            raw_edit = Some(Box::new(move |r: &mut RawDescriptor| {
                r.shard = Some(Shard::new(shape.clone(), vec![0; shape.len()]))
            }));
            (
                "a shard section".to_string(),
                expect(&["layouts/csf.md § Sharding"], None),
            )
        }
        CsfBreak::NnzHuge { nnz } => {
            p.nnz = *nnz;
            (format!("nnz field {nnz}"), expect(&[CSF_SIZE], None))
        }
        CsfBreak::ValuesPadding if padding_bits(c.ty, m.nnz) => {
            *p.values.last_mut().unwrap() |= 0x80;
            (
                "a padding bit set after the last value".to_string(),
                expect(&["element-types.md"], named("buffer")),
            )
        }
        CsfBreak::Colocation { pick } => {
            let i = 1 + pick.index(2 * rank);
            raw_edit = Some(Box::new(move |r: &mut RawDescriptor| r.buffers[i].memory_class = 1));
            (
                format!("buffer {i} memory_class 0x01"),
                expect(
                    &["buffer-protocol.md § Device Tags › Device Colocation"],
                    named("buffer"),
                ),
            )
        }
        CsfBreak::QuantIndex { pick } if matches!(c.quant, Some(Quant::Channel { .. })) => {
            let Some(Quant::Channel { axis, symmetric }) = c.quant else {
                unreachable!()
            };
            let index = pick.index(2 * rank + 1) as u32;
            if let Some((payload, _)) = &mut p.quant {
                *payload = PerChannelAffine {
                    axis,
                    scale_buffer_index: index,
                    zero_point_buffer_index: (!symmetric).then_some(2 * rank as u32 + 2),
                }
                .encode();
            }
            (
                format!("scale_buffer_index {index}"),
                expect(
                    &["quantization.md § Buffer Table Placement Rules"],
                    named("quantization"),
                ),
            )
        }
        CsfBreak::PosFirst { level, value } => pos_first(&mut p, level.index(rank), *value),
        // Not packed, no padding, not per channel: the first entry instead.
        CsfBreak::ValuesPadding => pos_first(&mut p, 0, 1),
        CsfBreak::QuantIndex { pick } => pos_first(&mut p, pick.index(rank), 1),
        // No pos array with an interior entry: the first entry instead.
        CsfBreak::PosDecreasing { pick } => pos_first(&mut p, pick.index(rank), 1),
        // No two siblings anywhere: a coordinate out of bounds instead.
        CsfBreak::CrdUnsorted { pick, .. } => {
            let (l, i) = last_children[pick.index(last_children.len())];
            p.levels[l].1[i] = bound(l);
            (
                format!("crd_{l}[{i}] = {} (no siblings to swap)", bound(l)),
                expect(&[CSF_INV], named(format!("crd_{l}"))),
            )
        }
    };
    let mut buffers = p.buffers();
    if drop_last_buffer {
        buffers.pop();
    }
    let mut raw = p.raw(&buffers);
    if let Some(edit) = raw_edit {
        edit(&mut raw);
    }
    (write_raw(&raw, &buffers), e, description)
}

/// Lookups on a damaged CSF file, strict and permissive: no panic; an
/// answer only from inside the values, at a leaf whose coordinate is the
/// one asked for; and when the tree itself is damaged (`tree`: a storage
/// invariant broken), no strict answer at all.
fn damaged_csf_lookups(bytes: &AlignedBytes, tree: bool, what: &str) -> Result<(), TestCaseError> {
    for options in [Options::strict(), Options::permissive()] {
        let strict = options.is_strict();
        let Ok(file) = HurrayFile::parse(bytes, options) else {
            continue;
        };
        let _ = file.validate();
        let Ok(t) = file.tensor("t") else { continue };
        let shape: Vec<u64> = t.shape().collect();
        let Ok(s) = t.csf_structure() else { continue };
        let _ = s.entries().map(|e| e.count());
        let values = t.buffer(0).map(|b| b.len()).unwrap_or(0);
        let leaf = s.levels().last().map(|l| l.crd).unwrap_or_default();
        for idx in all_indices(&shape) {
            match s.position(&idx) {
                Err(_) => {}
                Ok(answer) if strict && tree => {
                    return Err(fail(format!(
                        "{what}: a strict lookup of {idx:?} on a damaged file answers {answer:?}"
                    )))
                }
                Ok(None) => {}
                Ok(Some(p)) => {
                    prop_assert!(p < values, "{}: position {} past the values ({})", what, p, values);
                    let dim = s.mode_order().last().copied().unwrap_or(0);
                    prop_assert_eq!(leaf.get(p as usize), idx.get(dim), "{}: leaf {} for {:?}", what, p, idx);
                }
            }
        }
        if let Ok(view) = t.csf::<u8>() {
            for idx in all_indices(&shape) {
                let _ = view.get(&idx);
            }
        }
    }
    Ok(())
}

fn csf_break() -> impl Strategy<Value = CsfBreak> {
    prop_oneof![
        (any::<Index>(), prop_oneof![Just(1u64), 1u64..=100, Just(u64::MAX)])
            .prop_map(|(level, value)| CsfBreak::PosFirst { level, value }),
        any::<Index>().prop_map(|pick| CsfBreak::PosDecreasing { pick }),
        (any::<Index>(), any::<bool>()).prop_map(|(level, up)| CsfBreak::PosLast { level, up }),
        (any::<Index>(), any::<bool>()).prop_map(|(pick, duplicate)| CsfBreak::CrdUnsorted { pick, duplicate }),
        (any::<Index>(), prop_oneof![Just(0u64), 1u64..=10, Just(u64::MAX)])
            .prop_map(|(pick, extra)| CsfBreak::CrdOutOfBounds { pick, extra }),
        (any::<Index>(), any::<bool>()).prop_map(|(level, longer)| CsfBreak::PosLength { level, longer }),
        any::<Index>().prop_map(|level| CsfBreak::CrdLength { level }),
        any::<Index>().prop_map(|level| CsfBreak::CrdRagged { level }),
        any::<bool>().prop_map(|up| CsfBreak::Nnz { up }),
        Just(CsfBreak::ValuesLength),
        (any::<Index>(), any::<Index>()).prop_map(|(at, from)| CsfBreak::ModeOrderRepeated { at, from }),
        (any::<Index>(), prop_oneof![Just(0u32), 1u32..=100, Just(u32::MAX)])
            .prop_map(|(at, excess)| CsfBreak::ModeOrderOutOfRange { at, excess }),
        (any::<Index>(), 1u8..=255).prop_map(|(byte, value)| CsfBreak::Reserved { byte, value }),
        (1u64..=3).prop_map(|delta| CsfBreak::StatisticsNnz { delta }),
        Just(CsfBreak::BufferCount),
        Just(CsfBreak::Rank2),
        prop_oneof![Just(8u64), 1u64..=4096].prop_map(|value| CsfBreak::ByteOffset { value }),
        Just(CsfBreak::Shard),
        prop_oneof![Just(u64::MAX), Just(1u64 << 61), 1_000_000u64..=u64::MAX]
            .prop_map(|nnz| CsfBreak::NnzHuge { nnz }),
        Just(CsfBreak::ValuesPadding),
        any::<Index>().prop_map(|pick| CsfBreak::Colocation { pick }),
        any::<Index>().prop_map(|pick| CsfBreak::QuantIndex { pick }),
    ]
}

// ---------------------------------------------------------------------------
// Block-paged mutations
// ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum BpBreak {
    /// Invariant 1: `seq_ptr[0] != 0`.
    SeqPtrFirst { value: u64 },
    /// Invariant 2: `seq_ptr` decreases.
    SeqPtrDecreasing { pick: Index },
    /// Invariant 1 / § Buffer Table: `seq_ptr[num_seqs]` is not the block
    /// table's length.
    SeqPtrLast { up: bool },
    /// Invariant 3: a page id `>= num_pages`.
    PageOutOfBounds { pick: Index, extra: u64 },
    /// Invariant 4: `page_pool` one element longer or shorter.
    PoolLength { longer: bool },
    /// Invariant 4: `num_pages` one more or less than the pool holds.
    NumPages { up: bool },
    /// § Buffer Table: `seq_ptr` not `num_seqs + 1` entries.
    SeqPtrLength { longer: bool },
    /// Invariant 6 / § Additional Descriptor Fields: `paged_axis != 0`.
    PagedAxis { value: u32 },
    /// `page_size = 0`.
    PageSize0,
    /// `kv_role > 2`.
    KvRole { value: u8 },
    /// `block_table_index_type > 1`.
    IndexType { value: u8 },
    /// `block_table_index_type` of the other width than the buffers.
    IndexWidth,
    /// A non-zero `_reserved` byte.
    Reserved { byte: Index, value: u8 },
    /// § Description: rank 2 or 4.
    Rank { four: bool },
    /// § byte_offset.
    ByteOffset { value: u64 },
    /// § Sharding.
    Shard,
    /// § Buffer Table: 2 buffers.
    BufferCount,
    /// § Per-scheme composition: per-block `block_size != page_size`.
    QuantBlockSize,
    /// § Per-scheme composition: per-block `axis != 0`.
    QuantAxis { axis: u32 },
    /// § Scale-buffer size: one scale more than `num_pages * page_size`.
    QuantScaleCount,
    /// A zero scale (`quantization/*.md` § Validity Constraints).
    QuantScaleZero { pick: Index },
    /// A set padding bit after the pool's last packed element.
    PoolPadding,
    /// A buffer on another memory class than buffer 0 (§ Alignment: all
    /// buffers share `device_tag` and `memory_class`).
    Colocation { pick: Index },
}

struct BpParts {
    ty: Ty,
    shape: Vec<u64>,
    fields: BlockPaged,
    /// Bytes per `block_table` / `seq_ptr` entry as encoded.
    width: u64,
    page_pool: Vec<u8>,
    block_table: Vec<u64>,
    seq_ptr: Vec<u64>,
    quant: Option<(Vec<u8>, Vec<Vec<u8>>)>,
}

impl BpParts {
    fn buffers(&self) -> Vec<Vec<u8>> {
        let mut out = vec![
            self.page_pool.clone(),
            le_index(&self.block_table, self.width),
            le_index(&self.seq_ptr, self.width),
        ];
        if let Some((_, params)) = &self.quant {
            out.extend(params.iter().cloned());
        }
        out
    }

    fn raw(&self, buffers: &[Vec<u8>]) -> RawDescriptor {
        let mut d = TensorDescriptor::new(self.ty.writer(), Layout::BlockPaged(self.fields), self.shape.clone())
            .with_buffers(buffers.iter().map(|b| BufferHandle::new(b.len() as u64)).collect());
        d.quantization = self.quant.as_ref().map(|(payload, _)| payload.clone());
        d.to_raw()
    }
}

/// `num_pages` one more, or one less when there is one.
fn num_pages_after(num_pages: u64, up: bool) -> u64 {
    if up || num_pages == 0 {
        num_pages + 1
    } else {
        num_pages - 1
    }
}

fn break_bp(c: &BpCase, m: &BpModel, b: &BpBreak) -> (AlignedBytes, Expect, String) {
    let mut p = BpParts {
        ty: c.ty,
        shape: m.shape.to_vec(),
        fields: c.fields(m),
        width: c.width(),
        page_pool: m.page_pool.clone(),
        block_table: m.block_table.clone(),
        seq_ptr: m.seq_ptr.clone(),
        quant: m.quant.as_ref().map(|q| (q.payload.clone(), q.buffers.clone())),
    };
    let num_seqs = c.tokens.len();
    let per_page = u64::from(c.page_size) * c.num_heads * c.head_dim;
    let per_block = matches!(c.quant, Some(Quant::Block { .. }));
    let quant_rules: &[&'static str] = &[
        "layouts/block-paged.md § Quantization Compatibility › Per-scheme composition",
        "layouts/block-paged.md § Quantization Compatibility",
        "quantization/per-block-affine.md § Validity Constraints",
    ];
    let block = |axis: u32, block_size: u32| {
        let Some(Quant::Block { scale, symmetric }) = c.quant else {
            unreachable!()
        };
        PerBlockAffine {
            axis,
            block_size,
            scale_buffer_index: 3,
            zero_point_buffer_index: (!symmetric).then_some(4),
            scale_type: scale,
        }
        .encode()
    };
    let mut raw_edit: Option<RawEdit> = None;
    let mut drop_seq_ptr = false;
    let (description, e) = match b {
        BpBreak::SeqPtrDecreasing { pick } if num_seqs >= 2 => {
            let k = 1 + pick.index(num_seqs - 1);
            let last = p.seq_ptr[num_seqs];
            p.seq_ptr[k] = last + 1;
            (
                format!("seq_ptr[{k}] = {} > seq_ptr[{num_seqs}]", last + 1),
                expect(&[BP_INV], named("seq_ptr")),
            )
        }
        BpBreak::PageOutOfBounds { pick, extra } if !p.block_table.is_empty() => {
            let k = pick.index(p.block_table.len());
            let max = if c.index_u64 { u64::MAX } else { u64::from(u32::MAX) };
            let value = m.num_pages.saturating_add(*extra).min(max);
            p.block_table[k] = value;
            (
                format!("block_table[{k}] = {value} (num_pages {})", m.num_pages),
                expect(&[BP_INV], named("block_table")),
            )
        }
        BpBreak::SeqPtrLast { up } => {
            let last = p.seq_ptr[num_seqs];
            p.seq_ptr[num_seqs] = if *up || last == 0 { last + 1 } else { last - 1 };
            (
                format!("seq_ptr[{num_seqs}] = {} for {last} pages", p.seq_ptr[num_seqs]),
                expect(&[BP_TABLE, BP_INV], buffer(&[1])),
            )
        }
        BpBreak::PoolLength { longer } => {
            if *longer || p.page_pool.is_empty() {
                let extra = c.ty.bytes_for(per_page * m.num_pages + 1) - c.ty.bytes_for(per_page * m.num_pages);
                p.page_pool.extend(std::iter::repeat_n(0, extra.max(1) as usize));
            } else {
                p.page_pool.pop();
            }
            (
                format!("page_pool {} bytes", p.page_pool.len()),
                expect(&[BP_INV], buffer(&[0])),
            )
        }
        // Only where the pool's byte size changes with it (packed types
        // may hold one more page in the same bytes).
        BpBreak::NumPages { up }
            if c.ty.bytes_for(per_page * num_pages_after(m.num_pages, *up))
                != c.ty.bytes_for(per_page * m.num_pages) =>
        {
            p.fields.num_pages = num_pages_after(m.num_pages, *up);
            (
                format!("num_pages {} for a pool of {}", p.fields.num_pages, m.num_pages),
                expect(&[BP_INV], buffer(&[0])),
            )
        }
        BpBreak::SeqPtrLength { longer } => {
            if *longer {
                p.seq_ptr.push(p.seq_ptr[num_seqs]);
            } else {
                p.seq_ptr.pop();
            }
            (
                format!("seq_ptr {} entries for {num_seqs} sequences", p.seq_ptr.len()),
                expect(&[BP_TABLE], buffer(&[2])),
            )
        }
        BpBreak::PagedAxis { value } => {
            p.fields.paged_axis = *value;
            (
                format!("paged_axis {value}"),
                expect(
                    &[BP_FIELDS, BP_INV, "layouts/block-paged.md § Logical Shape"],
                    named("paged_axis"),
                ),
            )
        }
        BpBreak::PageSize0 => {
            p.fields.page_size = 0;
            ("page_size 0".to_string(), expect(&[BP_FIELDS], named("page_size")))
        }
        BpBreak::KvRole { value } => {
            p.fields.kv_role = *value;
            (format!("kv_role {value}"), expect(&[BP_FIELDS], named("kv_role")))
        }
        BpBreak::IndexType { value } => {
            p.fields.block_table_index_type = *value;
            (
                format!("block_table_index_type {value}"),
                expect(&[BP_FIELDS], named("block_table_index_type")),
            )
        }
        BpBreak::IndexWidth => {
            p.fields.block_table_index_type ^= 1;
            (
                format!(
                    "block_table_index_type {} over {}-byte entries",
                    p.fields.block_table_index_type, p.width
                ),
                expect(&[BP_TABLE], buffer(&[2])),
            )
        }
        BpBreak::Reserved { byte, value } => {
            let at = 26 + byte.index(6);
            let value = *value;
            raw_edit = Some(Box::new(move |r: &mut RawDescriptor| r.layout_fields[at] = value));
            (
                format!("layout field byte {at} = {value:#x}"),
                expect(&[BP_FIELDS], named("_reserved")),
            )
        }
        BpBreak::Rank { four } => {
            if *four {
                p.shape.push(1);
            } else {
                p.shape.pop();
            }
            (
                format!("rank {}", p.shape.len()),
                expect(&["layouts/block-paged.md § Description"], named("rank")),
            )
        }
        BpBreak::ByteOffset { value } => {
            let value = *value;
            raw_edit = Some(Box::new(move |r: &mut RawDescriptor| r.byte_offset = value));
            (
                format!("byte_offset {value}"),
                expect(
                    &[BYTE_OFFSET, "layouts/block-paged.md § byte_offset"],
                    named("byte_offset"),
                ),
            )
        }
        BpBreak::Shard => {
            let shape = p.shape.clone();
            raw_edit = Some(Box::new(move |r: &mut RawDescriptor| {
                r.shard = Some(Shard::new(shape.clone(), vec![0; shape.len()]))
            }));
            (
                "a shard section".to_string(),
                expect(&["layouts/block-paged.md § Sharding"], None),
            )
        }
        BpBreak::BufferCount => {
            p.quant = None;
            drop_seq_ptr = true;
            (
                "2 buffers (no seq_ptr)".to_string(),
                expect(&[BP_TABLE, BUFFER_TABLE], named("buffer_count")),
            )
        }
        BpBreak::QuantBlockSize if per_block => {
            let block_size = c.page_size * 2;
            if let Some((payload, _)) = &mut p.quant {
                *payload = block(0, block_size);
            }
            (
                format!("per-block block_size {block_size}, page_size {}", c.page_size),
                expect(quant_rules, named("quantization")),
            )
        }
        BpBreak::QuantAxis { axis } if per_block => {
            if let Some((payload, _)) = &mut p.quant {
                *payload = block(*axis, c.page_size);
            }
            (
                format!("per-block axis {axis}"),
                expect(quant_rules, named("quantization")),
            )
        }
        BpBreak::QuantScaleCount if per_block => {
            let Some(Quant::Block { scale, .. }) = c.quant else {
                unreachable!()
            };
            if let Some((_, params)) = &mut p.quant {
                params[0].extend(std::iter::repeat_n(0x3C, scale.width() as usize));
            }
            (
                format!(
                    "{} scales for {} page slots",
                    m.num_pages * u64::from(c.page_size) + 1,
                    m.num_pages * u64::from(c.page_size)
                ),
                expect(
                    &[
                        "layouts/block-paged.md § Quantization Compatibility › Scale-buffer size",
                        "layouts/block-paged.md § Quantization Compatibility",
                        // What the reader cites (the size it expects is
                        // right): block_paged_scale_count_names_its_section.
                        "quantization/per-block-affine.md § Referenced Buffers",
                    ],
                    buffer(&[3]),
                ),
            )
        }
        BpBreak::QuantScaleZero { pick }
            if matches!(c.quant, Some(Quant::Block { .. } | Quant::Channel { .. }))
                && p.quant.as_ref().is_some_and(|(_, params)| !params[0].is_empty()) =>
        {
            let (width, rule) = match c.quant {
                Some(Quant::Block { scale, .. }) => (
                    scale.width() as usize,
                    "quantization/per-block-affine.md § Validity Constraints",
                ),
                _ => (4, "quantization/per-channel-affine.md § Validity Constraints"),
            };
            let Some((_, params)) = &mut p.quant else {
                unreachable!()
            };
            let k = pick.index(params[0].len() / width);
            params[0][k * width..(k + 1) * width].fill(0);
            (format!("scale {k} = 0"), expect(&[rule], named("scales")))
        }
        BpBreak::PoolPadding if padding_bits(c.ty, per_page * m.num_pages) => {
            *p.page_pool.last_mut().unwrap() |= 0x80;
            (
                "a padding bit set after the pool's last element".to_string(),
                expect(&["element-types.md"], named("buffer")),
            )
        }
        BpBreak::Colocation { pick } => {
            let i = 1 + pick.index(2 + p.quant.as_ref().map_or(0, |(_, params)| params.len()));
            raw_edit = Some(Box::new(move |r: &mut RawDescriptor| r.buffers[i].memory_class = 1));
            (
                format!("buffer {i} memory_class 0x01"),
                expect(
                    &[
                        "buffer-protocol.md § Device Tags › Device Colocation",
                        "layouts/block-paged.md § Alignment",
                    ],
                    named("buffer"),
                ),
            )
        }
        // SeqPtrFirst, and the fallback of the selectors that found no target.
        _ => {
            let value = match b {
                BpBreak::SeqPtrFirst { value } => *value,
                _ => 1,
            };
            let max = if c.index_u64 { u64::MAX } else { u64::from(u32::MAX) };
            let value = value.min(max);
            p.seq_ptr[0] = value;
            // With no sequence, seq_ptr[0] is also seq_ptr[num_seqs]: the
            // block table no longer has its length.
            let e = if num_seqs == 0 {
                expect(&[BP_TABLE, BP_INV], None)
            } else {
                expect(&[BP_INV], named("seq_ptr"))
            };
            (format!("seq_ptr[0] = {value}"), e)
        }
    };
    let mut buffers = p.buffers();
    if drop_seq_ptr {
        buffers.truncate(2);
    }
    let mut raw = p.raw(&buffers);
    if let Some(edit) = raw_edit {
        edit(&mut raw);
    }
    (write_raw(&raw, &buffers), e, description)
}

/// The rule the reader gives a block-paged buffer count: it ends with
/// `memory-layout.md § Buffer Table`, which states `buffer_count >= 3` for
/// indirect layouts, as `layouts/block-paged.md` § Buffer Table does.
const BUFFER_TABLE: &str = "metadata.md § Buffer Table; memory-layout.md § Buffer Table";

/// Everything a program may touch on a damaged block-paged file, strict and
/// permissive: no panic.
fn damaged_bp_reads(bytes: &AlignedBytes) {
    for options in [Options::strict(), Options::permissive()] {
        let Ok(file) = HurrayFile::parse(bytes, options) else {
            continue;
        };
        let _ = file.validate();
        let Ok(t) = file.tensor("t") else { continue };
        let _ = t.validate_data();
        let _ = t.addressing();
        let _ = t.dense_value(&[0, 0, 0]);
        for b in t.buffers() {
            let _ = b.values().count();
            let _ = b.as_slice::<u32>();
            let _ = b.as_slice::<u64>();
        }
    }
}

fn bp_break() -> impl Strategy<Value = BpBreak> {
    prop_oneof![
        1 => prop_oneof![Just(1u64), 1u64..=100, Just(u64::MAX)].prop_map(|value| BpBreak::SeqPtrFirst { value }),
        1 => any::<Index>().prop_map(|pick| BpBreak::SeqPtrDecreasing { pick }),
        1 => any::<bool>().prop_map(|up| BpBreak::SeqPtrLast { up }),
        1 => (any::<Index>(), prop_oneof![Just(0u64), 1u64..=10, Just(u64::MAX)])
            .prop_map(|(pick, extra)| BpBreak::PageOutOfBounds { pick, extra }),
        1 => any::<bool>().prop_map(|longer| BpBreak::PoolLength { longer }),
        1 => any::<bool>().prop_map(|up| BpBreak::NumPages { up }),
        1 => any::<bool>().prop_map(|longer| BpBreak::SeqPtrLength { longer }),
        1 => prop_oneof![Just(1u32), 2u32..=3, Just(u32::MAX)].prop_map(|value| BpBreak::PagedAxis { value }),
        1 => Just(BpBreak::PageSize0),
        1 => (3u8..=255).prop_map(|value| BpBreak::KvRole { value }),
        1 => (2u8..=255).prop_map(|value| BpBreak::IndexType { value }),
        1 => Just(BpBreak::IndexWidth),
        1 => (any::<Index>(), 1u8..=255).prop_map(|(byte, value)| BpBreak::Reserved { byte, value }),
        1 => any::<bool>().prop_map(|four| BpBreak::Rank { four }),
        1 => prop_oneof![Just(8u64), 1u64..=4096].prop_map(|value| BpBreak::ByteOffset { value }),
        1 => Just(BpBreak::Shard),
        1 => Just(BpBreak::BufferCount),
        2 => Just(BpBreak::QuantBlockSize),
        2 => (1u32..=2).prop_map(|axis| BpBreak::QuantAxis { axis }),
        2 => Just(BpBreak::QuantScaleCount),
        2 => any::<Index>().prop_map(|pick| BpBreak::QuantScaleZero { pick }),
        1 => Just(BpBreak::PoolPadding),
        1 => any::<Index>().prop_map(|pick| BpBreak::Colocation { pick }),
    ]
}

// ---------------------------------------------------------------------------
// The properties
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(CASES)))]

    /// A valid CSF tensor reads back as the model says.
    #[test]
    fn csf_matches_the_spec_model(case in csf_case(false)) {
        check_csf(&case)?;
    }

    /// A valid block-paged tensor reads back as the model says.
    #[test]
    fn block_paged_matches_the_spec_model(case in bp_case(false)) {
        check_bp(&case)?;
    }

    /// One CSF rule broken: the strict reader rejects the file and names the
    /// rule; lookups on it neither panic nor answer out of the tensor.
    #[test]
    fn csf_damage_is_rejected_by_rule(case in csf_case(true), damage in csf_break()) {
        let m = csf_model(&case);
        let (bytes, e, what) = break_csf(&case, &m, &damage);
        check_rejected(&bytes, &e, &what)?;
        damaged_csf_lookups(&bytes, e.rules == [CSF_INV], &what)?;
    }

    /// One block-paged rule broken: the strict reader rejects the file and
    /// names the rule; reading it never panics.
    #[test]
    fn block_paged_damage_is_rejected_by_rule(case in bp_case(true), damage in bp_break()) {
        let m = bp_model(&case);
        let (bytes, e, what) = break_bp(&case, &m, &damage);
        check_rejected(&bytes, &e, &what)?;
        damaged_bp_reads(&bytes);
    }
}

// ---------------------------------------------------------------------------
// The model against the spec's own examples
// ---------------------------------------------------------------------------

/// `layouts/csf.md` § Example: shape `[2, 3, 4]`, identity `mode_order`,
/// four non-zeros; and § Element Lookup's walk to `(1, 1, 2)`.
#[test]
fn csf_model_follows_the_spec_example() {
    let entries: BTreeMap<Vec<u64>, u64> = [
        (vec![0, 0, 1], 1.0f32),
        (vec![0, 2, 3], 2.0),
        (vec![1, 1, 0], 3.0),
        (vec![1, 1, 2], 4.0),
    ]
    .into_iter()
    .map(|(i, v)| (i, u64::from(v.to_bits())))
    .collect();
    let case = CsfCase {
        ty: Ty::Float32,
        shape: vec![2, 3, 4],
        mode_order: vec![0, 1, 2],
        entries,
        dangling: BTreeSet::new(),
        statistics: Stats::Right,
        quant: None,
    };
    let m = csf_model(&case);
    assert_eq!(m.nnz, 4);
    assert_eq!(
        m.levels,
        [
            (vec![0, 2], vec![0, 1]),
            (vec![0, 2, 3], vec![0, 2, 1]),
            (vec![0, 1, 2, 4], vec![1, 3, 0, 2]),
        ]
    );
    let values: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(m.values, values);
    assert_eq!(m.leaves[3].0, [1, 1, 2]);
    // buffer_count = 2 * 3 + 1 = 7, sizes from § Buffer Size.
    let d = csf_descriptor(&case, &m);
    let sizes: Vec<u64> = d.buffers.iter().map(|b| b.byte_size).collect();
    assert_eq!(sizes, [16, 16, 16, 24, 24, 32, 32]);
    check_csf(&case).unwrap();
    // The same entries with mode_order [2, 0, 1]: level 0 holds the k
    // coordinates {0, 1, 2, 3}, each with one i below it.
    let reordered = CsfCase {
        mode_order: vec![2, 0, 1],
        ..case
    };
    let m = csf_model(&reordered);
    assert_eq!(m.levels[0], (vec![0, 4], vec![0, 1, 2, 3]));
    assert_eq!(m.levels[1], (vec![0, 1, 2, 3, 4], vec![1, 0, 1, 0]));
    assert_eq!(m.levels[2], (vec![0, 1, 2, 3, 4], vec![1, 0, 1, 2]));
    check_csf(&reordered).unwrap();
}

/// An interior node with no leaf below: an implicit zero under it
/// (`pos_1 = [0, 1, 1]`: the second level-0 node has no children).
#[test]
fn csf_model_interior_node_without_leaves() {
    let case = CsfCase {
        ty: Ty::Int32,
        shape: vec![3, 2, 2],
        mode_order: vec![0, 1, 2],
        entries: [(vec![0, 1, 1], 7u64)].into_iter().collect(),
        dangling: [vec![2]].into_iter().collect(),
        statistics: Stats::None,
        quant: None,
    };
    let m = csf_model(&case);
    assert_eq!(m.levels[0], (vec![0, 2], vec![0, 2]));
    assert_eq!(m.levels[1], (vec![0, 1, 1], vec![1]));
    assert_eq!(m.levels[2], (vec![0, 1], vec![1]));
    check_csf(&case).unwrap();
}

/// `layouts/block-paged.md` § Example: 2 sequences of 6 and 3 tokens,
/// `page_size` 4, sequence 1 reusing page 0.
#[test]
fn block_paged_model_follows_the_spec_example() {
    let case = BpCase {
        ty: Ty::Float16,
        num_heads: 2,
        head_dim: 8,
        page_size: 4,
        tokens: vec![6, 3],
        shares: vec![(0, 0), (0, 1)],
        free_pages: 3,
        index_u64: false,
        kv_role: 0,
        layer_index: 3,
        seed: 0,
        garbage: false,
        quant: None,
    };
    let m = bp_model(&case);
    assert_eq!(m.num_pages, 5);
    assert_eq!(m.seq_ptr, [0, 2, 3]);
    // Page ids are shuffled; the structure is the example's: sequence 1's
    // only page is sequence 0's first.
    assert_eq!(m.block_table.len(), 3);
    assert_eq!(m.block_table[2], m.block_table[0]);
    assert_ne!(m.block_table[1], m.block_table[0]);
    assert_eq!(m.page_pool.len(), 5 * 4 * 2 * 8 * 2);
    assert_eq!(m.shape, [9, 2, 8]);
    // Tokens 0-2 of sequence 1 are tokens 0-2 of sequence 0 (same slots).
    let row = 16;
    assert_eq!(m.elements[6 * row..9 * row], m.elements[..3 * row]);
    check_bp(&case).unwrap();
}

// ---------------------------------------------------------------------------
// Disagreements found, minimised
// ---------------------------------------------------------------------------

/// `layouts/csf.md` § Storage Invariants: "For an empty tensor (`nnz = 0`),
/// `pos_0` MUST be `[0, 0]`, `values` and every `crd_L` MUST have length 0,
/// and for each level `L >= 1` `pos_L` MUST be `[0]`", and a conforming
/// reader "MUST reject descriptors that violate them, unless operating in
/// permissive mode". float32 `[2, 2, 2]`, `nnz = 0`, one level-0 node with
/// no children: `pos_0 = [0, 1]`, `crd_0 = [1]`, `pos_1 = [0, 0]`, `crd_1 =
/// []`, `pos_2 = [0]`, `crd_2 = []`. Invariants 1-5 hold level by level,
/// and that was all the reader checked: the file opened, validated, and
/// every lookup answered an implicit zero (fixed: `pos_0[1]` must be 0). (Minimised by hand from the model's
/// empty-tensor rule; for `nnz > 0` such leafless nodes are allowed here,
/// see the file's notes.)
#[test]
fn empty_csf_with_interior_nodes_is_rejected() {
    let levels = [(vec![0u64, 1], vec![1u64]), (vec![0, 0], vec![]), (vec![0], vec![])];
    let mut buffers = vec![vec![]];
    for (pos, crd) in &levels {
        buffers.push(le_u64s(pos));
        buffers.push(le_u64s(crd));
    }
    let d = TensorDescriptor::new(
        hurray_writer::ElementType::Float32,
        Layout::Csf {
            nnz: 0,
            mode_order: vec![0, 1, 2],
        },
        vec![2, 2, 2],
    )
    .with_buffers(buffers.iter().map(|b| BufferHandle::new(b.len() as u64)).collect());
    let bytes = write_raw(&d.to_raw(), &buffers);
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    let err = file
        .validate()
        .expect_err("strict validation accepts crd_0 = [1] in a tensor with nnz = 0");
    assert!(err.rule().is_some_and(|r| r.starts_with(CSF_INV)), "{err}");
}

/// NOTES.md "Buffer larger than required": sparse buffers have exactly the
/// size `layouts/csf.md` § Buffer Size lists, in permissive mode too (only
/// dense buffers may be larger there). A CSF buffer of a valid
/// `[2, 2, 2]` tensor with one entry, 8 bytes too long, is `BufferSize`
/// with `exact` in both modes.
#[test]
fn oversized_csf_buffers_are_rejected_in_both_modes() {
    let values = 1.5f32.to_le_bytes().to_vec();
    let levels = [
        (vec![0u64, 1], vec![1u64]),
        (vec![0, 1], vec![0]),
        (vec![0, 1], vec![1]),
    ];
    let mut buffers = vec![values];
    for (pos, crd) in &levels {
        buffers.push(le_u64s(pos));
        buffers.push(le_u64s(crd));
    }
    let descriptor = |buffers: &[Vec<u8>]| {
        TensorDescriptor::new(
            hurray_writer::ElementType::Float32,
            Layout::Csf {
                nnz: 1,
                mode_order: vec![0, 1, 2],
            },
            vec![2, 2, 2],
        )
        .with_buffers(buffers.iter().map(|b| BufferHandle::new(b.len() as u64)).collect())
    };
    let valid = write_raw(&descriptor(&buffers).to_raw(), &buffers);
    HurrayFile::parse(&valid, Options::strict())
        .unwrap()
        .validate()
        .unwrap();
    // Not crd_0 or crd_1: their lengths are the node counts the next pos
    // is sized by, so a longer one is reported as that pos too short.
    for i in [0usize, 1, 3, 5, 6] {
        let mut longer = buffers.clone();
        longer[i].extend([0; 8]);
        let bytes = write_raw(&descriptor(&longer).to_raw(), &longer);
        for options in [Options::strict(), Options::permissive()] {
            let file = HurrayFile::parse(&bytes, options).unwrap();
            let e = file.tensor("t").map(|_| ()).unwrap_err();
            let size = buffers[i].len() as u64;
            assert!(
                matches!(e, Error::BufferSize { buffer, byte_size, expected, exact: true, .. }
                    if usize::from(buffer) == i && byte_size == size + 8 && expected == size),
                "buffer {i}, {options:?}: {e:?}"
            );
        }
    }
}

/// The same tree through the checked writer: `Csf::new` checks every
/// storage invariant ("A conforming writer MUST ensure" them, § Storage
/// Invariants) but did not check the empty-tensor one, and wrote the file.
#[test]
fn checked_writer_refuses_empty_csf_with_interior_nodes() {
    let levels: [(&[u64], &[u64]); 3] = [(&[0, 1], &[1]), (&[0, 0], &[]), (&[0], &[])];
    let levels: Vec<CsfLevel<'_>> = levels.iter().map(|&(pos, crd)| CsfLevel { pos, crd }).collect();
    let values = Values::new(hurray_writer::ElementType::Float32, 0, &[]).unwrap();
    assert!(Csf::new(&[2, 2, 2], &[0, 1, 2], values, &levels).is_err());
}

/// A valid quantized block-paged tensor to damage: int8 `[4, 2, 1]` (one
/// sequence of 4 tokens), `page_size` 2, 2 pages, per-block-affine scales
/// along axis 0 with `block_size` 2 and one float32 scale per page slot;
/// `payload` and `scales` replaced by the caller.
fn quantized_block_paged(payload: Vec<u8>, scales: usize) -> AlignedBytes {
    let fields = BlockPaged {
        page_size: 2,
        num_pages: 2,
        paged_axis: 0,
        num_seqs: 1,
        kv_role: 2,
        layer_index: u32::MAX,
        block_table_index_type: 0,
    };
    let buffers = vec![
        vec![1u8; 8],
        le_index(&[0, 1], 4),
        le_index(&[0, 2], 4),
        (0..scales).flat_map(|_| 1.0f32.to_le_bytes()).collect(),
    ];
    let d = TensorDescriptor::new(
        hurray_writer::ElementType::Int8,
        Layout::BlockPaged(fields),
        vec![4, 2, 1],
    )
    .with_buffers(buffers.iter().map(|b| BufferHandle::new(b.len() as u64)).collect())
    .with_quantization(payload);
    write_raw(&d.to_raw(), &buffers)
}

fn per_block(axis: u32) -> Vec<u8> {
    PerBlockAffine {
        axis,
        block_size: 2,
        scale_buffer_index: 3,
        zero_point_buffer_index: None,
        scale_type: ScaleType::Float32,
    }
    .encode()
}

/// The base of the two tests below is valid.
#[test]
fn quantized_block_paged_base_is_valid() {
    let bytes = quantized_block_paged(per_block(0), 4);
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    assert_eq!(file.validate(), Ok(()));
}

/// Five scales for 2 pages × 2 slots: rejected, with the right expected
/// size (4 × 4 bytes); the error cited `quantization/per-block-affine.md`
/// § Referenced Buffers, whose `num_blocks` formula `layouts/block-paged.md`
/// § Scale-buffer size says "does NOT apply" to block-paged ("A reader MUST
/// compute the scale-buffer size as `num_pages * page_size` entries"). The
/// section to name is the block-paged one.
#[test]
fn block_paged_scale_count_names_its_section() {
    let bytes = quantized_block_paged(per_block(0), 5);
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    let err = file.validate().unwrap_err();
    assert!(
        err.rule()
            .is_some_and(|r| r.starts_with("layouts/block-paged.md § Quantization Compatibility › Scale-buffer size")),
        "{err}"
    );
}

/// Per-block-affine along axis 1 (`block_size` 2 = `page_size`, `shape[1]`
/// = 2) on a block-paged tensor: rejected under the right rule
/// (`layouts/block-paged.md` § Per-scheme composition: "`axis` field MUST be
/// `0`"); `field()` named `quantization.block_size` (value 2, which is
/// right) instead of `quantization.axis`.
#[test]
fn block_paged_per_block_axis_names_the_axis() {
    let bytes = quantized_block_paged(per_block(1), 4);
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    let err = file.validate().unwrap_err();
    assert_eq!(
        err.rule(),
        Some("layouts/block-paged.md § Quantization Compatibility › Per-scheme composition"),
        "{err}"
    );
    let field = err.field().unwrap();
    assert_eq!((field.name, field.member), ("quantization", Some("axis")), "{err}");
}

fn per_channel(axis: u32) -> Vec<u8> {
    PerChannelAffine {
        axis,
        scale_buffer_index: 3,
        zero_point_buffer_index: None,
    }
    .encode()
}

/// `layouts/block-paged.md` § Per-scheme composition: per-channel
/// quantization composes with the pages along `num_heads` (axis 1) or
/// `head_dim` (axis 2), never along the paged axis 0 (its scales would be
/// per token, not per page slot). Axis 0 is rejected in both modes, naming
/// `quantization.axis`; axes 1 and 2 (2 and 1 channels on `[4, 2, 1]`) are
/// valid.
#[test]
fn block_paged_per_channel_along_the_paged_axis_is_rejected() {
    let bytes = quantized_block_paged(per_channel(0), 4);
    for options in [Options::strict(), Options::permissive()] {
        let file = HurrayFile::parse(&bytes, options).unwrap();
        let err = file.tensor("t").map(|_| ()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "tensor 't': quantization.axis at offset 221: value 0 is not allowed, expected 1 (num_heads) \
             or 2 (head_dim): per-channel quantization of a block-paged tensor never runs along the paged \
             axis 0 (layouts/block-paged.md § Quantization Compatibility › Per-scheme composition)"
        );
        assert!(
            matches!(
                err,
                Error::Invalid {
                    value: 0,
                    offset: 221,
                    ..
                }
            ),
            "{err:?}"
        );
    }
    for (axis, channels) in [(1, 2), (2, 1)] {
        let bytes = quantized_block_paged(per_channel(axis), channels);
        let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
        assert_eq!(file.validate(), Ok(()), "axis {axis}");
    }
}
