//! CSF (`layouts/csf.md`): a case, the model's tree built from § Buffer
//! Table and § Storage Invariants alone, the file written from it, what the
//! reader must expose, and the strategies that draw cases.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use hurray_reader::half::f16;
use hurray_reader::{
    AlignedBytes, BufferRole, Complex, Element, HurrayFile, Layout as ReaderLayout, LayoutFields, Options, Tensor,
    Value,
};
use hurray_writer::quant::{PerChannelAffine, PerTensorAffine};
use hurray_writer::{BufferData, BufferHandle, Csf, CsfLevel, Layout, Statistics, TensorDescriptor, Values};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use proptest::test_runner::TestCaseError;

use super::super::basics::{all_indices, count, fail, permutation, same};
use super::types::{le_u64s, pattern, value_bits, write_file, Quant, Ty, QUANT_TYPES, SCALES, TYPES};

#[derive(Clone)]
pub(crate) struct CsfCase {
    pub(crate) ty: Ty,
    pub(crate) shape: Vec<u64>,
    pub(crate) mode_order: Vec<u32>,
    /// Stored entries: logical index -> bit pattern.
    pub(crate) entries: BTreeMap<Vec<u64>, u64>,
    /// Interior nodes with no leaf below, as storage-order prefixes of
    /// length 1 to `rank - 1` (only when `entries` is not empty).
    pub(crate) dangling: BTreeSet<Vec<u64>>,
    pub(crate) statistics: Stats,
    /// Quantized values (storage type int8, uint8 or int4): per tensor or
    /// per channel, parameter buffers from `2 * rank + 1`.
    pub(crate) quant: Option<Quant>,
}

/// The statistics section of a CSF case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stats {
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
pub(crate) struct CsfModel {
    pub(crate) nnz: u64,
    /// `(pos_L, crd_L)`, outermost level first.
    pub(crate) levels: Vec<(Vec<u64>, Vec<u64>)>,
    /// Buffer 0.
    pub(crate) values: Vec<u8>,
    /// Every stored entry in leaf order: logical index, bit pattern.
    pub(crate) leaves: Vec<(Vec<u64>, u64)>,
}

pub(crate) fn csf_model(c: &CsfCase) -> CsfModel {
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
pub(crate) fn csf_descriptor(c: &CsfCase, m: &CsfModel) -> TensorDescriptor {
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
pub(crate) fn csf_statistics(c: &CsfCase, nnz: u64) -> Option<Statistics> {
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
pub(crate) struct CsfQuant {
    pub(crate) payload: Vec<u8>,
    /// The parameter buffers, from buffer `2 * rank + 1`.
    pub(crate) params: Vec<Vec<u8>>,
    /// Per channel: `(scale, zero point)`.
    pub(crate) channels: Vec<(f32, i64)>,
}

pub(crate) fn csf_quant(c: &CsfCase) -> Option<CsfQuant> {
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
pub(crate) fn write_csf(c: &CsfCase, m: &CsfModel) -> Result<AlignedBytes, TestCaseError> {
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
pub(crate) fn check_csf_typed<T: Element + fmt::Debug>(
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

pub(crate) fn check_csf(c: &CsfCase) -> Result<(), TestCaseError> {
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
pub(crate) fn csf_case(nonempty: bool) -> BoxedStrategy<CsfCase> {
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
