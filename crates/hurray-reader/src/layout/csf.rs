//! CSF views (`layouts/csf.md`, layout tag `0x09`): a tree of `rank`
//! compressed levels, each a `pos`/`crd` pair, over one `values` array.

use zerocopy::little_endian::U32;

use crate::buffer::BufferRole;
use crate::cursor::to_u64;
use crate::descriptor::{Descriptor, MAX_RANK};
use crate::element_type::Element;
use crate::error::{rule, Error, Field, Location, Result, Scope};
use crate::file::reserved_zero;
use crate::layout::fields::{Layout, LayoutFields};
use crate::layout::plan::{u64_plan, values_plan, Plan};
use crate::layout::spec::{BufferCount, LayoutSpec, RankRule};
use crate::raw;
use crate::tensor::Tensor;

/// Generates the per-level array names `pos_0` … `pos_63` (and `crd_*`),
/// so errors name the level as the spec does.
macro_rules! level_names {
    ($prefix:literal: $($n:literal)*) => {
        [$(concat!($prefix, $n)),*]
    };
}

const POS: [&str; 64] = level_names!("pos_": 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27
    28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63);
const CRD: [&str; 64] = level_names!("crd_": 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27
    28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63);

/// One level of the tree.
#[derive(Clone, Copy)]
pub struct CsfLevel<'data> {
    /// Pointer array, `n_{L-1} + 1` entries.
    pub pos: &'data [u64],
    /// Coordinates along dimension `mode_order[L]`, `n_L` entries.
    pub crd: &'data [u64],
    pos_offset: u64,
    crd_offset: u64,
}

/// The first few entries of each array, and their offsets.
impl std::fmt::Debug for CsfLevel<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CsfLevel")
            .field("pos", &crate::debug::few(self.pos))
            .field("crd", &crate::debug::few(self.crd))
            .field("pos_offset", &self.pos_offset)
            .field("crd_offset", &self.crd_offset)
            .finish()
    }
}

/// The tree of a CSF tensor, without values.
#[derive(Clone)]
pub struct CsfStructure<'data> {
    tensor: &'data str,
    shape: Vec<u64>,
    mode_order: Vec<usize>,
    levels: Vec<CsfLevel<'data>>,
    nnz: u64,
    scanned: bool,
}

impl CsfStructure<'_> {
    /// The `Debug` of the structure or of a view called `name`, with
    /// `values` when it has them: never the arrays.
    fn debug<T: std::fmt::Debug>(
        &self,
        f: &mut std::fmt::Formatter<'_>,
        name: &str,
        values: Option<&[T]>,
    ) -> std::fmt::Result {
        use crate::debug::{few, Text};
        let mut d = f.debug_struct(name);
        d.field("tensor", &Text(self.tensor))
            .field("shape", &few(&self.shape))
            .field("mode_order", &few(&self.mode_order))
            .field("nnz", &self.nnz)
            .field("levels", &few(&self.levels));
        if let Some(values) = values {
            d.field("values", &few(values));
        }
        d.field("validated", &self.scanned).finish()
    }
}

/// Shape, `nnz` and the first few levels, each cut to its first entries.
impl std::fmt::Debug for CsfStructure<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.debug::<()>(f, "CsfStructure", None)
    }
}

impl<'data> CsfStructure<'data> {
    /// The levels, outermost first.
    pub fn levels(&self) -> &[CsfLevel<'data>] {
        &self.levels
    }

    /// `mode_order[L]`: the logical dimension stored at level `L`.
    pub fn mode_order(&self) -> &[usize] {
        &self.mode_order
    }

    /// Number of stored elements.
    pub fn nnz(&self) -> u64 {
        self.nnz
    }

    /// True once the storage invariants have been verified.
    pub fn is_validated(&self) -> bool {
        self.scanned
    }

    /// Verifies `layouts/csf.md` § Storage Invariants for every level:
    /// `pos_L[0] = 0`, non-decreasing, last entry `n_L`; coordinates strictly
    /// increasing within each parent and below their dimension; and for an
    /// empty tensor (`nnz = 0`) `pos_0 = [0, 0]`, so that no level holds a
    /// node (each `pos_L`, `L >= 1`, is then `[0]` and each `crd_L` empty by
    /// the rules above). One pass, no allocation.
    ///
    /// # Errors
    /// [`Error::PtrFirst`], [`Error::PtrLast`], [`Error::PtrDecreasing`],
    /// [`Error::NotIncreasing`], [`Error::IndexOutOfBounds`].
    pub fn validate(&self) -> Result<()> {
        if let (0, Some(top)) = (self.nnz, self.levels.first()) {
            if let Some(&n0) = top.pos.get(1).filter(|&&n| n != 0) {
                return Err(crate::error::Error::PtrLast {
                    at: Location {
                        scope: Scope::tensor(self.tensor),
                        field: Field::at(POS[0], 1),
                        offset: top.pos_offset.saturating_add(8),
                        rule: rule::CSF_INVARIANTS,
                    },
                    value: n0,
                    expected_name: "nnz",
                    expected: 0,
                });
            }
        }
        for (l, level) in self.levels.iter().enumerate() {
            let bound = self
                .mode_order
                .get(l)
                .and_then(|&m| self.shape.get(m))
                .copied()
                .unwrap_or(0);
            let level_index = crate::layout::compressed::Compressed {
                tensor: self.tensor,
                names: crate::layout::compressed::Names {
                    ptr: POS.get(l).copied().unwrap_or("pos"),
                    idx: CRD.get(l).copied().unwrap_or("crd"),
                    outer: "parent",
                    inner: "coordinate",
                    bound: "shape[mode_order[L]]",
                    inv1: rule::CSF_INVARIANTS,
                    inv2: rule::CSF_INVARIANTS,
                    inv3: rule::CSF_INVARIANTS,
                    inv4: rule::CSF_INVARIANTS,
                },
                outer_len: to_u64(level.pos.len().saturating_sub(1)),
                inner_len: bound,
                nnz: to_u64(level.crd.len()),
                ptr: level.pos,
                idx: level.crd,
                ptr_offset: level.pos_offset,
                idx_offset: level.crd_offset,
                scanned: false,
                transposed: false,
                window: None,
            };
            level_index.validate()?;
        }
        Ok(())
    }

    /// This structure, verified.
    ///
    /// # Errors
    /// As [`validate`](Self::validate).
    pub fn validated(mut self) -> Result<Self> {
        if !self.scanned {
            self.validate()?;
            self.scanned = true;
        }
        Ok(self)
    }

    /// Leaf position of the element at logical `index`, descending the tree
    /// by binary search (`layouts/csf.md` § Element Lookup); `None` for an
    /// implicit zero. Binary search needs a validated tree: on an
    /// unvalidated structure every call first runs
    /// [`validate`](Self::validate) (O(nnz)); for many lookups, call
    /// [`validated`](Self::validated) once.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for an index without `rank` coordinates,
    /// [`Error::CoordinateArgument`] for one outside the shape; as
    /// [`validate`](Self::validate) on an unvalidated structure.
    pub fn position(&self, index: &[u64]) -> Result<Option<u64>> {
        super::view::check_index(self.tensor, index, &self.shape)?;
        if !self.scanned {
            self.validate()?;
        }
        let mut parent = 0usize;
        for (l, level) in self.levels.iter().enumerate() {
            let q = self.mode_order.get(l).and_then(|&m| index.get(m)).copied().unwrap_or(0);
            let start = level
                .pos
                .get(parent)
                .and_then(|&s| usize::try_from(s).ok())
                .unwrap_or(0);
            let end = level
                .pos
                .get(parent + 1)
                .and_then(|&e| usize::try_from(e).ok())
                .unwrap_or(0);
            let slice = level.crd.get(start..end).unwrap_or_default();
            match slice.binary_search(&q) {
                Ok(k) => parent = start + k,
                Err(_) => return Ok(None),
            }
        }
        Ok(Some(to_u64(parent)))
    }

    /// Every stored element as (logical coordinates, leaf position), in
    /// tree (leaf) order, one at a time: each item allocates its `rank`
    /// coordinates, nothing holds all `nnz` of them (`.take(5)` costs five).
    /// Validates first when needed.
    ///
    /// # Errors
    /// As [`validate`](Self::validate).
    pub fn entries(&self) -> Result<CsfEntries<'_, 'data>> {
        if !self.scanned {
            self.validate()?;
        }
        let leaves = self.levels.last().map_or(0, |leaf| leaf.crd.len());
        Ok(CsfEntries {
            structure: self,
            next: 0,
            end: leaves,
        })
    }

    /// The logical coordinates of leaf position `p`: walking up, the parent
    /// of position `i` at level `L` is the `k` with `pos_L[k] <= i <
    /// pos_L[k+1]` (binary search).
    fn coordinates_of(&self, p: usize) -> Vec<u64> {
        let mut coords = vec![0u64; self.levels.len()];
        let mut i = p;
        for (level, &m) in self.levels.iter().zip(&self.mode_order).rev() {
            if let (Some(&c), Some(slot)) = (level.crd.get(i), coords.get_mut(m)) {
                *slot = c;
            }
            i = level.pos.partition_point(|&s| s <= to_u64(i)).saturating_sub(1);
        }
        coords
    }
}

/// The stored elements of a CSF tensor as (logical coordinates, leaf
/// position), in leaf order: [`CsfStructure::entries`].
#[derive(Clone)]
pub struct CsfEntries<'s, 'data> {
    structure: &'s CsfStructure<'data>,
    next: usize,
    end: usize,
}

/// The positions left, not the tree.
impl std::fmt::Debug for CsfEntries<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CsfEntries")
            .field("tensor", &crate::debug::Text(self.structure.tensor))
            .field("next", &self.next)
            .field("end", &self.end)
            .finish()
    }
}

impl Iterator for CsfEntries<'_, '_> {
    type Item = (Vec<u64>, u64);

    fn next(&mut self) -> Option<Self::Item> {
        let p = self.next;
        if p >= self.end {
            return None;
        }
        self.next = p.saturating_add(1);
        Some((self.structure.coordinates_of(p), to_u64(p)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end.saturating_sub(self.next);
        (n, Some(n))
    }
}

impl DoubleEndedIterator for CsfEntries<'_, '_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.next >= self.end {
            return None;
        }
        self.end = self.end.saturating_sub(1);
        Some((self.structure.coordinates_of(self.end), to_u64(self.end)))
    }
}

impl ExactSizeIterator for CsfEntries<'_, '_> {}

impl std::iter::FusedIterator for CsfEntries<'_, '_> {}

/// A CSF tensor with values `T`.
#[derive(Clone)]
pub struct CsfView<'data, T> {
    structure: CsfStructure<'data>,
    values: &'data [T],
}

/// Shape, `nnz`, the first few levels and values.
impl<T: std::fmt::Debug> std::fmt::Debug for CsfView<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.structure.debug(f, "CsfView", Some(self.values))
    }
}

impl<'data, T: Element> CsfView<'data, T> {
    /// The tree.
    pub fn structure(&self) -> &CsfStructure<'data> {
        &self.structure
    }

    /// Stored values in leaf order, `nnz` entries.
    pub fn values(&self) -> &'data [T] {
        self.values
    }

    /// The value at `index`; `Ok(None)` is the implicit zero.
    ///
    /// # Errors
    /// As [`CsfStructure::position`].
    pub fn get(&self, index: &[u64]) -> Result<Option<&'data T>> {
        Ok(self
            .structure
            .position(index)?
            .and_then(|p| usize::try_from(p).ok())
            .and_then(|p| self.values.get(p)))
    }
}

impl<'data> Tensor<'data> {
    /// The CSF tree without values; not validated.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] unless the layout is CSF, [`Error::Misaligned`].
    pub fn csf_structure(&self) -> Result<CsfStructure<'data>> {
        self.ensure_layout(Layout::Csf)?;
        let LayoutFields::Csf { nnz, mode_order, .. } = self.descriptor().layout_fields() else {
            return Err(self.layout_mismatch(Layout::Csf));
        };
        let rank = usize::try_from(self.rank().min(MAX_RANK)).unwrap_or(0);
        let mut levels = Vec::with_capacity(rank);
        for l in 0..rank {
            let pos = self.buffer(2 * l + 1)?;
            let crd = self.buffer(2 * l + 2)?;
            levels.push(CsfLevel {
                pos: pos.as_slice::<u64>()?,
                crd: crd.as_slice::<u64>()?,
                pos_offset: pos.file_offset(),
                crd_offset: crd.file_offset(),
            });
        }
        Ok(CsfStructure {
            tensor: self.name(),
            shape: self.static_shape()?,
            mode_order: mode_order
                .iter()
                .map(|m| usize::try_from(m.get()).unwrap_or(usize::MAX))
                .collect(),
            levels,
            nnz: *nnz,
            scanned: false,
        })
    }

    /// The CSF view with values `T`; strict mode verifies the invariants first.
    ///
    /// # Errors
    /// As [`csf_structure`](Self::csf_structure), [`Error::TypeMismatch`],
    /// and in strict mode [`CsfStructure::validate`]'s errors.
    pub fn csf<T: Element>(&self) -> Result<CsfView<'data, T>> {
        let mut structure = self.csf_structure()?;
        if self.options().is_strict() {
            structure = structure.validated()?;
        }
        let values = self.buffer(0)?.as_slice::<T>()?;
        Ok(CsfView { structure, values })
    }
}

/// `layouts/csf.md`'s descriptor rules.
pub(crate) const SPEC: LayoutSpec = LayoutSpec {
    rank: RankRule {
        allows: |rank| rank >= 3,
        expected: "at least 3",
        rule: rule::CSF_DESCRIPTION,
    },
    buffers: BufferCount {
        count: |rank| u64::from(rank).checked_mul(2)?.checked_add(1),
        expected: "2 x rank + 1",
        rule: rule::CSF_BUFFERS,
    },
    no_shard: Some(rule::CSF_SHARDING),
    statistics: Some(rule::CSF_STATS),
    plans,
};

/// CSF (`layouts/csf.md`): `values`, then a `pos_L`/`crd_L` pair per level.
/// Level sizes `n_L` come from the `crd_L` sizes; `pos_0` has 2 entries,
/// `pos_L` has `n_{L-1} + 1`, and the leaf level holds `nnz`.
fn plans(d: &Descriptor<'_>, handles: &[raw::BufferHandle]) -> Result<Vec<Plan>> {
    let LayoutFields::Csf {
        nnz,
        mode_order,
        reserved,
    } = d.layout_fields()
    else {
        return Ok(Vec::new());
    };
    let scope = || Scope::tensor(d.name);
    let fields_offset = d.offsets().layout_fields;
    let rank = d.rank();
    check_permutation(d, mode_order, fields_offset + 8)?;
    let reserved_offset = fields_offset + 8 + 4 * u64::from(rank);
    reserved_zero(
        reserved.as_slice(),
        Field::new("_reserved"),
        reserved_offset,
        rule::CSF_FIELDS,
        scope(),
    )?;
    d.static_shape()?;
    let size_rule = rule::CSF_SIZE;
    let mut plans = vec![values_plan(d, *nnz, size_rule)?];
    let mut parents: u64 = 1; // n_{-1}: the virtual root
    for level in 0..rank {
        let level_u8 = u8::try_from(level).unwrap_or(u8::MAX);
        let pos_len = parents.saturating_add(1);
        plans.push(u64_plan(
            d,
            BufferRole::Pos(level_u8),
            pos_len,
            Field::new("nnz"),
            fields_offset,
            size_rule,
        )?);
        // n_L: the leaf level stores nnz; other levels are sized by crd_L.
        let crd_index = usize::try_from(level)
            .ok()
            .and_then(|l| l.checked_mul(2))
            .and_then(|l| l.checked_add(2));
        let n_level = if level + 1 == rank {
            *nnz
        } else {
            crd_index
                .and_then(|i| handles.get(i))
                .map_or(0, |h| h.byte_size.get() / 8)
        };
        plans.push(u64_plan(
            d,
            BufferRole::Crd(level_u8),
            n_level,
            Field::new("nnz"),
            fields_offset,
            size_rule,
        )?);
        parents = n_level;
    }
    Ok(plans)
}

fn check_permutation(d: &Descriptor<'_>, mode_order: &[U32], offset: u64) -> Result<()> {
    let rank = mode_order.len();
    let mut seen = [false; 64];
    for (i, m) in mode_order.iter().enumerate() {
        let v = m.get();
        let slot = usize::try_from(v)
            .ok()
            .filter(|&v| v < rank)
            .and_then(|v| seen.get_mut(v));
        match slot {
            Some(s) if !*s => *s = true,
            _ => {
                return Err(Error::Invalid {
                    at: Location {
                        scope: Scope::tensor(d.name),
                        field: Field::at("mode_order", to_u64(i)),
                        offset: offset + 4 * to_u64(i),
                        rule: rule::CSF_MODE_ORDER,
                    },
                    value: u64::from(v),
                    expected: "a permutation of 0..rank-1",
                })
            }
        }
    }
    Ok(())
}
