//! COO views (`layouts/coo.md`, layout tag `0x06`).

use std::cmp::Ordering;

use crate::buffer::BufferRole;
use crate::cursor::to_u64;
use crate::descriptor::{Descriptor, MAX_RANK};
use crate::element_type::Element;
use crate::error::{rule, Error, Field, Location, Result, Scope};
use crate::file::reserved_zero;
use crate::kernels::coo::{Coordinates, MAX_DIMS};
use crate::layout::fields::{Layout, LayoutFields};
use crate::layout::plan::{overflow, u64_plan, values_plan, Plan};
use crate::layout::spec::{BufferCount, LayoutSpec, RankRule};
use crate::raw;
use crate::tensor::Tensor;

// The kernels' fast pass takes every rank a descriptor may declare.
const _: () = assert!(MAX_DIMS >= MAX_RANK as usize);

/// The coordinates of a COO tensor, without values: `nnz` tuples of `rank`
/// coordinates, stored row-major in `indices` (`nnz × rank` entries).
/// Usable for every element type, packed ones included.
///
/// `layouts/coo.md` (layout tag `0x06`, any rank from 1): buffer 1
/// `indices` holds `nnz × rank` `u64`; entry `i`'s coordinate along
/// dimension `d` is `indices[i × rank + d]`, below `shape[d]`. Entry
/// numbers and lengths count entries or `u64` elements, never bytes.
/// `is_sorted` is the descriptor's claim of strictly increasing
/// lexicographic order (dimension 0 major); lookups binary-search only
/// when it is set, and verification treats a false claim as an error
/// (NOTES.md "COO is_sorted = 1").
#[derive(Clone)]
pub struct CooStructure<'data> {
    tensor: &'data str,
    shape: Vec<u64>,
    nnz: u64,
    indices: &'data [u64],
    indices_offset: u64,
    is_sorted: bool,
    scanned: bool,
}

impl CooStructure<'_> {
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
            .field("nnz", &self.nnz)
            .field("indices", &few(self.indices))
            .field("indices_offset", &self.indices_offset);
        if let Some(values) = values {
            d.field("values", &few(values));
        }
        d.field("is_sorted", &self.is_sorted)
            .field("validated", &self.scanned)
            .finish()
    }
}

/// Shape, `nnz` and the first few coordinates.
impl std::fmt::Debug for CooStructure<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.debug::<()>(f, "CooStructure", None)
    }
}

impl<'data> CooStructure<'data> {
    /// The tensor's shape.
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Number of stored elements.
    pub fn nnz(&self) -> u64 {
        self.nnz
    }

    /// All coordinates, `nnz × rank` entries, entry `i` at `[i*rank, (i+1)*rank)`.
    pub fn indices(&self) -> &'data [u64] {
        self.indices
    }

    /// Whether the descriptor claims lexicographic order (`is_sorted = 1`).
    pub fn is_sorted(&self) -> bool {
        self.is_sorted
    }

    /// True once the validity constraints have been verified.
    pub fn is_validated(&self) -> bool {
        self.scanned
    }

    /// Coordinates of stored element `i`, `rank` entries
    /// (`indices[i × rank..(i + 1) × rank]`); `None` when `i >= nnz`.
    pub fn coordinates(&self, i: u64) -> Option<&'data [u64]> {
        let rank = self.rank();
        let start = usize::try_from(i).ok()?.checked_mul(rank)?;
        self.indices.get(start..start.checked_add(rank)?)
    }

    fn error(&self, position: u64, what: &'static str, rule: &'static str) -> Error {
        let element = position.saturating_mul(to_u64(self.rank()));
        Error::CooOrder {
            at: Location {
                scope: Scope::tensor(self.tensor),
                field: Field::at("indices", element),
                offset: self.indices_offset.saturating_add(element.saturating_mul(8)),
                rule,
            },
            position,
            what,
        }
    }

    /// Verifies `layouts/coo.md` § Validity Constraints: every coordinate
    /// below its dimension, no duplicate tuples, and, when `is_sorted` is
    /// set, strictly increasing lexicographic order (NOTES.md: a false claim
    /// is an error). A sorted tensor is checked in one branch-free pass
    /// without allocating (rank 2: the `(row, col)` pairs compared with
    /// wrapping subtractions; other ranks: a fold over the coordinates, no
    /// slice comparison); the first violation is then named by a second,
    /// exact pass. An unsorted one has its bounds checked the same way, then
    /// sorts a permutation of `nnz` positions to find duplicates (the one
    /// allocation, bounded by the file size).
    ///
    /// # Errors
    /// [`Error::IndexOutOfBounds`] (the first coordinate out of bounds, in
    /// storage order: field `indices[k]`, its file offset in bytes, the bound
    /// `shape[d]`), else [`Error::CooOrder`] (the first entry not above its
    /// predecessor, or the later of two duplicates: field `indices[i × rank]`
    /// and its offset), both citing `layouts/coo.md § Validity Constraints`.
    pub fn validate(&self) -> Result<()> {
        self.validate_threads(1)
    }

    /// [`validate`](Self::validate) with the one-pass check split over
    /// `threads` threads (clamped to 1..=64; the calling thread and the
    /// library's pool, see [`Options::threads`](crate::Options::threads)),
    /// each taking an equal range of entries (and the pair across its
    /// start). Same verdict and same error as one thread; the duplicate
    /// search of an unsorted tensor stays on one thread.
    ///
    /// # Errors
    /// As [`validate`](Self::validate).
    pub fn validate_parallel(&self, threads: usize) -> Result<()> {
        self.validate_threads(threads)
    }

    /// The check as [`Options::threads`](crate::Options::threads) asks for
    /// it: at most `threads` threads, fewer for small arrays.
    pub(crate) fn validate_with(&self, threads: usize) -> Result<()> {
        let per_thread = crate::kernels::scan::MIN_PER_THREAD;
        self.validate_threads(threads.min(self.indices.len() / per_thread).max(1))
    }

    fn validate_threads(&self, threads: usize) -> Result<()> {
        if !self.fast_check(threads) {
            return self.exact(self.nnz);
        }
        if self.is_sorted {
            return Ok(());
        }
        self.duplicates(self.nnz)
    }

    /// The validity constraints among the first `count` entries only
    /// (fewer if the tensor has fewer): every coordinate below its
    /// dimension, and no duplicate (unsorted) or no entry out of order
    /// (`is_sorted = 1`) among them. What `hurray-inspect --head` checks
    /// before it lists entries: O(`count`) reads, and for an unsorted
    /// tensor one allocation of `count` positions.
    ///
    /// # Errors
    /// As [`validate`](Self::validate), for the first violation among those entries.
    pub fn validate_prefix(&self, count: u64) -> Result<()> {
        self.exact(count.min(self.nnz))
    }

    /// The exact pass over the first `count` entries: the first coordinate
    /// out of bounds, then the first entry out of order (sorted) or a
    /// duplicate (unsorted).
    fn exact(&self, count: u64) -> Result<()> {
        let rank = self.rank();
        // Every stored value when all entries are asked for (also those past
        // `nnz × rank` in a buffer of another length).
        let values = match usize::try_from(count).ok().and_then(|n| n.checked_mul(rank)) {
            Some(values) if count < self.nnz => values,
            _ => usize::MAX,
        };
        for (k, &v) in self.indices.iter().take(values).enumerate() {
            let dim = k.checked_rem(rank).unwrap_or(0);
            let bound = self.shape.get(dim).copied().unwrap_or(0);
            if v >= bound {
                return Err(Error::IndexOutOfBounds {
                    at: Location {
                        scope: Scope::tensor(self.tensor),
                        field: Field::at("indices", to_u64(k)),
                        offset: self.indices_offset.saturating_add(to_u64(k).saturating_mul(8)),
                        rule: rule::COO_VALIDITY,
                    },
                    value: v,
                    bound,
                    bound_name: Field::at("shape", to_u64(dim)),
                });
            }
        }
        if self.is_sorted {
            for i in 1..count {
                if self.coordinates(i - 1).cmp(&self.coordinates(i)) != Ordering::Less {
                    return Err(self.error(
                        i,
                        "entries are not in strictly increasing lexicographic order although is_sorted = 1",
                        rule::COO_VALIDITY,
                    ));
                }
            }
            return Ok(());
        }
        self.duplicates(count)
    }

    /// Sorts a permutation of the first `count` entries to find two equal tuples.
    fn duplicates(&self, count: u64) -> Result<()> {
        let mut order: Vec<u64> = (0..count).collect();
        order.sort_unstable_by(|&a, &b| self.coordinates(a).cmp(&self.coordinates(b)).then(a.cmp(&b)));
        for pair in order.windows(2) {
            if let (Some(&a), Some(&b)) = (pair.first(), pair.get(1)) {
                if self.coordinates(a) == self.coordinates(b) {
                    return Err(self.error(a.max(b), "duplicate coordinates", rule::COO_VALIDITY));
                }
            }
        }
        Ok(())
    }

    /// The kernels' fast pass over the coordinates (`kernels::coo`) on
    /// `threads` threads: true when every coordinate is below its dimension
    /// and, if `is_sorted`, every entry is above its predecessor.
    fn fast_check(&self, threads: usize) -> bool {
        Coordinates {
            indices: self.indices,
            shape: &self.shape,
            nnz: self.nnz,
            sorted: self.is_sorted,
        }
        .clean(threads)
    }

    /// This structure, verified.
    ///
    /// # Errors
    /// As [`validate`](Self::validate).
    pub fn validated(self) -> Result<Self> {
        self.validated_threads(1)
    }

    /// [`validated`](Self::validated) on up to `threads` threads (fewer for
    /// small arrays).
    pub(crate) fn validated_threads(mut self, threads: usize) -> Result<Self> {
        if !self.scanned {
            self.validate_with(threads)?;
            self.scanned = true;
        }
        Ok(self)
    }

    /// Position of the element at `index` (`rank` coordinates), by binary
    /// search when the order is claimed, a linear scan otherwise
    /// (`layouts/coo.md` § Element Lookup); `None` is an implicit zero.
    ///
    /// On a structure not yet validated the lookup first runs the one-pass
    /// check of [`validate`](Self::validate) (bounds, and the order when it
    /// is claimed; no allocation), and the linear scan goes on past a match
    /// to find a second one: a damaged tensor gives its error, never a wrong
    /// answer. Either way the lookup is O(`nnz`), as the linear scan is.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `index` does not have `rank`
    /// coordinates, [`Error::CoordinateArgument`] when it lies outside the
    /// shape; on an unvalidated structure [`Error::IndexOutOfBounds`] or
    /// [`Error::CooOrder`] (an entry out of order, or a second entry at `index`).
    pub fn position(&self, index: &[u64]) -> Result<Option<u64>> {
        super::view::check_index(self.tensor, index, &self.shape)?;
        if !self.scanned && !self.fast_check(1) {
            self.exact(self.nnz)?;
        }
        if self.is_sorted {
            let (mut lo, mut hi) = (0u64, self.nnz);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                match self.coordinates(mid).map(|c| c.cmp(index)) {
                    Some(Ordering::Less) => lo = mid + 1,
                    Some(Ordering::Greater) => hi = mid,
                    Some(Ordering::Equal) => return Ok(Some(mid)),
                    None => return Ok(None),
                }
            }
            return Ok(None);
        }
        let mut found = (0..self.nnz).filter(|&i| self.coordinates(i) == Some(index));
        match (found.next(), found.next()) {
            (Some(_), Some(second)) => Err(self.error(second, "duplicate coordinates", rule::COO_VALIDITY)),
            (first, _) => Ok(first),
        }
    }
}

/// A COO tensor with values of type `T`, borrowed from the file
/// (`layouts/coo.md`, layout tag `0x06`, any rank from 1).
///
/// Shapes: `values` (buffer 0, the tensor's element type) has `nnz`
/// entries, `indices` (buffer 1, `u64`) `nnz × rank`
/// ([`CooStructure`]). Lengths and positions count elements, not bytes.
/// Lookups return `Ok(None)` for the implicit zero of an unstored element.
/// Errors about the file name the field, its byte offset and the spec
/// section ([`Error::field`], [`offset`](Error::offset), [`rule`](Error::rule)).
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let bytes = hurray_reader::AlignedBytes::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/sparse_formats.hry"))?;
/// use hurray_reader::{HurrayFile, Options};
/// let file = HurrayFile::parse(&bytes, Options::default())?;
/// let a = file.tensor("m.coo")?.coo::<f64>()?;  // strict: constraints checked
/// assert_eq!((a.structure().shape(), a.nnz()), (&[5, 6][..], 12));
/// assert!(a.structure().is_sorted());             // lookups binary-search
/// assert_eq!(a.structure().coordinates(1), Some(&[0, 3][..]));
/// assert_eq!(a.values()[1], -2.0);
/// assert_eq!(a.get(&[0, 3])?, Some(&-2.0));       // stored
/// assert_eq!(a.get(&[1, 1])?, None);              // implicit zero
/// let u = file.tensor("m.coo_unsorted")?.coo::<f64>()?; // linear scan
/// assert_eq!(u.get(&[0, 3])?, Some(&-2.0));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct CooView<'data, T> {
    structure: CooStructure<'data>,
    values: &'data [T],
}

/// Shape, `nnz`, the first few coordinates and values.
impl<T: std::fmt::Debug> std::fmt::Debug for CooView<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.structure.debug(f, "CooView", Some(self.values))
    }
}

impl<'data, T: Element> CooView<'data, T> {
    /// The coordinates.
    pub fn structure(&self) -> &CooStructure<'data> {
        &self.structure
    }

    /// Stored values in storage order, `nnz` entries.
    pub fn values(&self) -> &'data [T] {
        self.values
    }

    /// Number of stored elements.
    pub fn nnz(&self) -> u64 {
        self.structure.nnz
    }

    /// The value at `index` (`rank` coordinates), by binary search when
    /// `is_sorted` is set, else by linear scan (`layouts/coo.md` § Element
    /// Lookup); `Ok(None)` is the implicit zero.
    ///
    /// # Errors
    /// As [`CooStructure::position`].
    pub fn get(&self, index: &[u64]) -> Result<Option<&'data T>> {
        Ok(self
            .structure
            .position(index)?
            .and_then(|p| usize::try_from(p).ok())
            .and_then(|p| self.values.get(p)))
    }

    /// Every stored element as `(coordinates, &value)`, in storage order,
    /// `rank` coordinates each. On an unvalidated view the validity
    /// constraints are verified first (one scan), as CSC's `iter` does.
    ///
    /// # Errors
    /// On an unvalidated view, as [`CooStructure::validate`].
    pub fn iter(&self) -> Result<impl Iterator<Item = (&'data [u64], &'data T)> + 'data> {
        let structure = self.structure.clone().validated()?;
        let values = self.values;
        Ok((0..structure.nnz).map_while(move |i| {
            let value = values.get(usize::try_from(i).ok()?)?;
            Some((structure.coordinates(i)?, value))
        }))
    }
}

impl<'data> Tensor<'data> {
    /// The COO coordinates without values, for any element type; not
    /// validated.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] unless the layout is COO,
    /// [`Error::NotViewable`], [`Error::Misaligned`].
    pub fn coo_structure(&self) -> Result<CooStructure<'data>> {
        self.ensure_layout(Layout::Coo)?;
        let LayoutFields::Coo(f) = self.descriptor().layout_fields() else {
            return Err(self.layout_mismatch(Layout::Coo));
        };
        let indices = self.buffer(1)?;
        Ok(CooStructure {
            tensor: self.name(),
            shape: self.static_shape()?,
            nnz: f.nnz.get(),
            indices: indices.as_slice::<u64>()?,
            indices_offset: indices.file_offset(),
            is_sorted: f.is_sorted == 1,
            scanned: false,
        })
    }

    /// The COO view with values `T`; strict mode verifies the constraints
    /// first (on up to [`Options::threads`](crate::Options::threads) threads).
    ///
    /// # Errors
    /// As [`coo_structure`](Self::coo_structure), [`Error::TypeMismatch`],
    /// and in strict mode [`CooStructure::validate`]'s errors. The
    /// descriptor's rules (rank at least 1, two buffers of their exact
    /// sizes, `is_sorted` 0 or 1, `byte_offset` 0, zero reserved bytes,
    /// statistics `nnz`) were checked when the tensor was resolved
    /// ([`HurrayFile::tensor`](crate::HurrayFile::tensor)).
    pub fn coo<T: Element>(&self) -> Result<CooView<'data, T>> {
        let mut structure = self.coo_structure()?;
        if self.options().is_strict() {
            structure = structure.validated_threads(self.options().threads())?;
        }
        let values = self.buffer(0)?.as_slice::<T>()?;
        Ok(CooView { structure, values })
    }
}

/// `layouts/coo.md`'s descriptor rules.
pub(crate) const SPEC: LayoutSpec = LayoutSpec {
    rank: RankRule::NOT_SCALAR,
    buffers: BufferCount {
        count: |_| Some(2),
        expected: "2 (values, indices)",
        rule: rule::COO_BUFFERS,
    },
    no_shard: None,
    statistics: Some(rule::COO_STATS),
    plans,
};

/// COO (`layouts/coo.md`): `values` (nnz), `indices` (nnz × rank u64).
fn plans(d: &Descriptor<'_>, _: &[raw::BufferHandle]) -> Result<Vec<Plan>> {
    let LayoutFields::Coo(f) = d.layout_fields() else {
        return Ok(Vec::new());
    };
    let fields_offset = d.offsets().layout_fields;
    let scope = || Scope::tensor(d.name);
    if f.is_sorted > 1 {
        return Err(Error::Invalid {
            at: Location {
                scope: scope(),
                field: Field::new("is_sorted"),
                offset: fields_offset + 8,
                rule: rule::COO_FIELDS,
            },
            value: u64::from(f.is_sorted),
            expected: "0x00 or 0x01",
        });
    }
    reserved_zero(
        &f.reserved,
        Field::new("_reserved"),
        fields_offset + 9,
        rule::COO_FIELDS,
        scope(),
    )?;
    d.static_shape()?;
    let nnz = f.nnz.get();
    let len = nnz.checked_mul(u64::from(d.rank())).ok_or_else(|| {
        overflow(
            d,
            Field::new("nnz"),
            fields_offset,
            "nnz x rank (indices length)",
            rule::COO_SIZE,
        )
    })?;
    Ok(vec![
        values_plan(d, nnz, rule::COO_SIZE)?,
        u64_plan(
            d,
            BufferRole::Indices,
            len,
            Field::new("nnz"),
            fields_offset,
            rule::COO_SIZE,
        )?,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::coo::tests as kernel;
    use proptest::prelude::{any, Just};

    fn coo<'a>(shape: &[u64], indices: &'a [u64], sorted: bool) -> CooStructure<'a> {
        let rank = shape.len().max(1);
        CooStructure {
            tensor: "T",
            shape: shape.to_vec(),
            nnz: to_u64(indices.len() / rank),
            indices,
            indices_offset: 4096,
            is_sorted: sorted,
            scanned: false,
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(1000))]
        /// The error does not depend on the threads, and is the exact pass's,
        /// whose verdict is the rules' (`kernels::coo` tests the fast pass).
        #[test]
        fn errors_are_the_exact_passes_on_any_threads(
            shape in proptest::collection::vec(
                proptest::prop_oneof![4 => 0u64..6, 1 => proptest::prelude::Just(1u64 << 63), 1 => proptest::prelude::Just(u64::MAX)],
                1..5,
            ),
            raw in proptest::collection::vec(0u64..7, 0..120),
            make_sorted in proptest::prelude::any::<bool>(),
            damage in proptest::option::of((0usize..120, proptest::prop_oneof![0u64..8, proptest::prelude::any::<u64>()])),
            threads in 1usize..5,
        ) {
            let indices = kernel::tuples(&shape, &raw, make_sorted, damage);
            let c = coo(&shape, &indices, true);
            let (_, order) = kernel::reference(&shape, &indices);
            let exact = c.exact(c.nnz);
            proptest::prop_assert_eq!(exact.is_ok(), order);
            proptest::prop_assert_eq!(&c.validate(), &exact);
            proptest::prop_assert_eq!(&c.validate_parallel(threads), &exact);
            let unsorted = coo(&shape, &indices, false);
            proptest::prop_assert_eq!(&unsorted.validate_parallel(threads), &unsorted.exact(unsorted.nnz));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(200))]
        /// The sorted rank-2 inputs of `kernels::coo`'s 32-bit loop test:
        /// `validate` follows the rules.
        #[test]
        fn narrow_rank2_validation_follows_the_rules(
            dims in proptest::collection::vec(
                proptest::prop_oneof![Just(60u64), Just((1 << 31) - 1), Just(1 << 31), Just((1 << 31) + 1), Just(1u64 << 40)],
                2,
            ),
            near_top in any::<bool>(),
            raw in proptest::collection::vec((0u64..60, 0u64..60), 600..3000),
            damage in proptest::option::of((any::<usize>(), proptest::prop_oneof![
                0u64..50, Just((1 << 31) - 1), Just(1 << 31), Just(1 << 32), any::<u64>(),
            ])),
            swap in proptest::option::of(any::<usize>()),
            edge in proptest::option::of((any::<bool>(), any::<usize>(), 0u64..3)),
        ) {
            let indices = kernel::narrow_tuples(&dims, near_top, &raw, damage, swap, edge);
            let (_, order) = kernel::reference(&dims, &indices);
            proptest::prop_assert_eq!(coo(&dims, &indices, true).validate().is_ok(), order);
        }
    }

    /// A lookup on a structure not yet validated answers only from a
    /// tensor it has checked: a coordinate out of bounds anywhere, a false
    /// order claim, or a second entry at the coordinate asked for is the
    /// error `validate` gives, not a value.
    #[test]
    fn unscanned_lookups_report_damage_instead_of_answering() {
        let duplicate = |position: u64| Error::CooOrder {
            at: Location {
                scope: Scope::Tensor("T".into()),
                field: Field::at("indices", position * 2),
                offset: 4096 + position * 16,
                rule: rule::COO_VALIDITY,
            },
            position,
            what: "duplicate coordinates",
        };
        // Unsorted (2,1) (0,0) (2,1): the duplicate is found at entry 2.
        let c = coo(&[3, 4], &[2, 1, 0, 0, 2, 1], false);
        assert_eq!(c.position(&[2, 1]), Err(duplicate(2)));
        assert_eq!(c.validate(), Err(duplicate(2)));
        // Other coordinates are answered: (0,0) is entry 1, (1,1) unstored.
        assert_eq!(c.position(&[0, 0]), Ok(Some(1)));
        assert_eq!(c.position(&[1, 1]), Ok(None));
        // Entries 0 and 1 are sound among themselves, entry 2 repeats entry 0.
        assert_eq!(c.validate_prefix(2), Ok(()));
        assert_eq!(c.validate_prefix(3), Err(duplicate(2)));
        assert_eq!(c.validate_prefix(u64::MAX), Err(duplicate(2)));

        // Column 4 of a 3 x 4 matrix at entry 2 (indices[5]): every lookup
        // fails, and a prefix stopping before it does not.
        let c = coo(&[3, 4], &[0, 0, 1, 1, 2, 4], false);
        let out_of_bounds = Error::IndexOutOfBounds {
            at: Location {
                scope: Scope::Tensor("T".into()),
                field: Field::at("indices", 5),
                offset: 4096 + 40,
                rule: rule::COO_VALIDITY,
            },
            value: 4,
            bound: 4,
            bound_name: Field::at("shape", 1),
        };
        assert_eq!(c.position(&[0, 0]), Err(out_of_bounds.clone()));
        assert_eq!(c.validate_prefix(2), Ok(()));
        assert_eq!(c.validate_prefix(3), Err(out_of_bounds));

        // is_sorted = 1 over (0,0) (1,2) (0,3): entry 2 breaks the claim, and a
        // binary search would miss (0,3).
        let c = coo(&[3, 4], &[0, 0, 1, 2, 0, 3], true);
        let e = c.position(&[0, 3]).unwrap_err();
        assert!(matches!(e, Error::CooOrder { position: 2, .. }), "{e}");
        assert_eq!(c.validate_prefix(2), Ok(()));
        assert_eq!(c.validate_prefix(3), Err(e));

        // Iteration on an unvalidated view checks first (it used to list
        // (2, 7) in a [4, 5] tensor, and (3, 3) twice).
        let values = [1.0f32, 2.0, 3.0, 4.0];
        let view = CooView {
            structure: coo(&[4, 5], &[0, 1, 2, 7, 3, 3, 3, 3], false),
            values: &values[..],
        };
        let e = view.iter().err();
        assert!(
            matches!(
                e,
                Some(Error::IndexOutOfBounds {
                    at: Location {
                        field: Field { index: Some(3), .. },
                        ..
                    },
                    value: 7,
                    ..
                })
            ),
            "{e:?}"
        );
        let view = CooView {
            structure: coo(&[4, 5], &[0, 1, 2, 4, 3, 3, 3, 3], false),
            values: &values[..],
        };
        assert_eq!(view.iter().err(), Some(duplicate(3)));
        let view = CooView {
            structure: coo(&[4, 5], &[0, 1, 2, 4, 3, 3, 3, 4], false),
            values: &values[..],
        };
        let listed: Vec<(&[u64], f32)> = view.iter().unwrap().map(|(c, &v)| (c, v)).collect();
        assert_eq!(
            listed,
            [(&[0, 1][..], 1.0), (&[2, 4], 2.0), (&[3, 3], 3.0), (&[3, 4], 4.0)]
        );

        // A sound tensor: the same answers before and after validation.
        let c = coo(&[3, 4], &[0, 1, 1, 0, 2, 3], true);
        let v = c.clone().validated().unwrap();
        for index in [[0, 1], [1, 0], [2, 3], [2, 2]] {
            assert_eq!(c.position(&index), v.position(&index), "{index:?}");
        }
        assert_eq!(c.position(&[2, 3]), Ok(Some(2)));
    }

    #[test]
    fn errors_name_the_first_violation() {
        // (0,1) (0,1): a duplicate at entry 1 of a 3 x 4 sorted matrix.
        let e = coo(&[3, 4], &[0, 1, 0, 1, 2, 0], true).validate().unwrap_err();
        assert_eq!(
            e,
            Error::CooOrder {
                at: Location {
                    scope: Scope::Tensor("T".into()),
                    field: Field::at("indices", 2),
                    offset: 4096 + 16,
                    rule: rule::COO_VALIDITY,
                },
                position: 1,
                what: "entries are not in strictly increasing lexicographic order although is_sorted = 1",
            }
        );
        assert_eq!(
            e.to_string(),
            "tensor 'T': indices[2] at offset 4112: entry 1: entries are not in strictly increasing \
             lexicographic order although is_sorted = 1 (layouts/coo.md § Validity Constraints)"
        );
        // A column out of bounds wins over the order, whatever comes first.
        let e = coo(&[3, 4], &[1, 1, 0, 1, 2, 4], true)
            .validate_parallel(2)
            .unwrap_err();
        assert!(matches!(
            e,
            Error::IndexOutOfBounds {
                at: Location {
                    field: Field { index: Some(5), .. },
                    ..
                },
                value: 4,
                bound: 4,
                ..
            }
        ));
        // The bound is named with its dimension (it used to read `shape[d]`).
        assert!(
            e.to_string()
                .contains("index 4 is out of bounds, must be < shape[1] = 4"),
            "{e}"
        );
        // Rank 3: (0,2,1) then (0,1,9) decreases at the second coordinate.
        let e = coo(&[2, 3, 10], &[0, 2, 1, 0, 1, 9], true).validate().unwrap_err();
        assert!(matches!(
            e,
            Error::CooOrder {
                at: Location {
                    field: Field { index: Some(3), .. },
                    offset: 4120,
                    ..
                },
                position: 1,
                ..
            }
        ));
        assert!(coo(&[2, 3, 10], &[0, 1, 9, 0, 2, 1, 1, 0, 0], true).validate().is_ok());
        // Unsorted: the duplicate (2,0) is found by sorting.
        let e = coo(&[3, 4], &[2, 0, 0, 3, 2, 0], false).validate().unwrap_err();
        assert!(matches!(
            e,
            Error::CooOrder {
                at: Location {
                    field: Field { index: Some(4), .. },
                    ..
                },
                position: 2,
                what: "duplicate coordinates",
                ..
            }
        ));
    }
}
