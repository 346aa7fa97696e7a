//! CSF mutations: one storage rule broken at a time.

use hurray_reader::{AlignedBytes, HurrayFile, Options};
use hurray_writer::quant::PerChannelAffine;
use hurray_writer::{BufferHandle, Layout, RawDescriptor, Shard, Statistics, TensorDescriptor};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::TestCaseError;

use super::super::basics::{all_indices, fail};
use super::csf::{csf_quant, csf_statistics, CsfCase, CsfModel};
use super::damage::{buffer, expect, named, padding_bits, Expect, RawEdit, BYTE_OFFSET, CSF_INV, CSF_SIZE, CSF_TABLE};
use super::types::{le_u64s, write_raw, Quant, Ty};

/// One CSF storage rule to break; selectors pick the level and position
/// among those where the damage is possible.
#[derive(Debug, Clone)]
pub(crate) enum CsfBreak {
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
pub(crate) struct CsfParts {
    pub(crate) ty: Ty,
    pub(crate) shape: Vec<u64>,
    pub(crate) mode_order: Vec<u32>,
    pub(crate) nnz: u64,
    pub(crate) values: Vec<u8>,
    pub(crate) levels: Vec<(Vec<u64>, Vec<u64>)>,
    /// Extra bytes at the end of a `crd_L` buffer.
    pub(crate) ragged: Option<usize>,
    pub(crate) statistics: Option<Statistics>,
    /// Quantization payload and parameter buffers.
    pub(crate) quant: Option<(Vec<u8>, Vec<Vec<u8>>)>,
}

impl CsfParts {
    pub(crate) fn buffers(&self) -> Vec<Vec<u8>> {
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
    pub(crate) fn raw(&self, buffers: &[Vec<u8>]) -> RawDescriptor {
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

/// Segments of `pos` as ranges of `crd` positions.
pub(crate) fn segments(pos: &[u64]) -> Vec<std::ops::Range<usize>> {
    pos.windows(2).map(|w| w[0] as usize..w[1] as usize).collect()
}

/// Invariant 1 broken: `pos_L[0] = value`.
pub(crate) fn pos_first(p: &mut CsfParts, l: usize, value: u64) -> (String, Expect) {
    p.levels[l].0[0] = value;
    (
        format!("pos_{l}[0] = {value}"),
        expect(&[CSF_INV], named(format!("pos_{l}"))),
    )
}

/// Breaks one rule of a valid case; returns the file, what the reader must
/// say, and a description of the damage.
pub(crate) fn break_csf(c: &CsfCase, m: &CsfModel, b: &CsfBreak) -> (AlignedBytes, Expect, String) {
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
pub(crate) fn damaged_csf_lookups(bytes: &AlignedBytes, tree: bool, what: &str) -> Result<(), TestCaseError> {
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

pub(crate) fn csf_break() -> impl Strategy<Value = CsfBreak> {
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
