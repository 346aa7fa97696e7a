//! COO views (`layouts/coo.md`, layout tag `0x06`).

use std::cmp::Ordering;

use crate::cursor::to_u64;
use crate::element_type::Element;
use crate::error::{rule, Error, Field, Result};
use crate::layout::{Layout, LayoutFields};
use crate::prefetch::prefetch;
use crate::tensor::Tensor;
use crate::view::threads::{share, spawn_or_run, MAX_THREADS};

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
            tensor: self.tensor.into(),
            position,
            element,
            offset: self.indices_offset.saturating_add(element.saturating_mul(8)),
            what,
            rule,
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
    /// `threads` threads (`std::thread::scope`, clamped to 1..=64), each
    /// taking an equal range of entries (and the pair across its start).
    /// Same verdict and same error as one thread; the duplicate search of
    /// an unsorted tensor stays on one thread. A range whose thread the OS
    /// refuses is checked on the calling thread.
    ///
    /// # Errors
    /// As [`validate`](Self::validate).
    pub fn validate_parallel(&self, threads: usize) -> Result<()> {
        self.validate_threads(threads)
    }

    /// The check as [`Options::threads`](crate::Options::threads) asks for
    /// it: at most `threads` threads, fewer for small arrays.
    pub(crate) fn validate_with(&self, threads: usize) -> Result<()> {
        let per_thread = crate::view::compressed::MIN_PER_THREAD;
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
                    tensor: self.tensor.into(),
                    array: "indices",
                    position: to_u64(k),
                    offset: self.indices_offset.saturating_add(to_u64(k).saturating_mul(8)),
                    value: v,
                    bound,
                    bound_name: Field::at("shape", to_u64(dim)),
                    rule: rule::COO_VALIDITY,
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

    /// The fast pass on `threads` threads (entries split evenly): true when
    /// every coordinate is below its dimension and, if `is_sorted`, every
    /// entry is above its predecessor. False means "run the exact pass"
    /// (also for coordinates >= 2^63, valid only in dimensions above 2^63).
    fn fast_check(&self, threads: usize) -> bool {
        let rank = self.rank();
        let entries = usize::try_from(self.nnz).ok();
        // Rank 0 (every tuple empty) and a buffer of another length: the
        // exact pass decides.
        if rank == 0 || entries.and_then(|n| n.checked_mul(rank)) != Some(self.indices.len()) {
            return false;
        }
        let n = self.indices.len() / rank;
        let threads = threads.clamp(1, MAX_THREADS).min(n.max(1));
        let share = |t: usize| share(n, t, threads);
        let flags = if threads == 1 {
            self.fast_range(0, n)
        } else {
            std::thread::scope(|scope| {
                let workers: Vec<_> = (1..threads)
                    .map(|t| spawn_or_run(scope, move || self.fast_range(share(t), share(t.saturating_add(1)))))
                    .collect();
                let mut all = self.fast_range(0, share(1));
                for worker in workers {
                    match worker.join() {
                        Some(part) => all.add(part),
                        None => all.high = u64::MAX,
                    }
                }
                all
            })
        };
        flags.high >> 63 == 0 && flags.bad == 0
    }

    /// Entries `from..to`: the bounds of each, and (sorted) the order of
    /// each with its predecessor (from entry 1 on).
    fn fast_range(&self, from: usize, to: usize) -> Flags {
        let rank = self.rank();
        let mut lims = [0u64; crate::descriptor::MAX_RANK as usize];
        for (l, &n) in lims.iter_mut().zip(&self.shape) {
            *l = n.min(1 << 63).wrapping_sub(1);
        }
        let lims = lims.get(..rank).unwrap_or_default();
        let mut flags = Flags::default();
        // Entry 0 has no predecessor: its bounds alone.
        if from == 0 && to > 0 {
            for (&v, &l) in self.indices.iter().zip(lims) {
                flags.high |= v | l.wrapping_sub(v);
            }
        }
        let from = from.max(1);
        let at = |a: usize, b: usize| {
            self.indices
                .get(a.saturating_mul(rank)..b.saturating_mul(rank))
                .unwrap_or_default()
        };
        let (previous, current) = (at(from.saturating_sub(1), to.saturating_sub(1)), at(from, to));
        let ahead = self
            .indices
            .get(from.saturating_mul(rank).saturating_add(AHEAD)..)
            .unwrap_or_default();
        let f = match (lims, self.is_sorted) {
            (_, false) => bounds(current, lims),
            (&[l], true) => streamed(
                (previous, current, ahead),
                |lanes, p, c| order_rank1_line(lanes, p, c, l),
                |f, p, c| order_rank1(f, p, c, l),
            ),
            (&[lr, lc], true) => {
                let mut f = match narrow::Lims::new(lr, lc) {
                    Some(lims) => narrow::order_rank2(previous, current, ahead, lims),
                    None => streamed(
                        (previous, current, ahead),
                        |lanes, p, c| order_rank2_line(lanes, p, c, lc),
                        |f, p, c| order_rank2(f, p, c, lc),
                    ),
                };
                // Rows only grow in a sorted range: the last one's bound
                // covers them all (every row still joins `high`).
                if let Some(&last_row) = current.len().checked_sub(2).and_then(|k| current.get(k)) {
                    f.high |= lr.wrapping_sub(last_row);
                }
                f
            }
            (_, true) => order_rank_n(previous, current, lims),
        };
        flags.add(f);
        flags
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
        super::check_index(self.tensor, index, &self.shape)?;
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

/// What the fast pass found over a range of entries.
#[derive(Debug, Default, Clone, Copy)]
struct Flags {
    /// Entries not above their predecessor.
    bad: u64,
    /// OR of every coordinate `v` and of `lim - v` (`lim` = the dimension,
    /// at most 2^63, minus 1): a set top bit means a coordinate out of
    /// bounds or one >= 2^63, for which the comparisons below are not exact.
    high: u64,
}

impl Flags {
    fn add(&mut self, other: Flags) {
        self.bad = self.bad.wrapping_add(other.bad);
        self.high |= other.high;
    }
}

/// Unsorted: each coordinate below its dimension (`lim - v`, see [`Flags`]).
fn bounds(current: &[u64], lims: &[u64]) -> Flags {
    let mut f = Flags::default();
    for entry in current.chunks_exact(lims.len().max(1)) {
        for (&v, &l) in entry.iter().zip(lims) {
            f.high |= v | l.wrapping_sub(v);
        }
    }
    f
}

/// `u64`s per cache line.
const LINE: usize = 8;

/// How far ahead (in `u64`s) [`streamed`] prefetches `indices`.
const AHEAD: usize = crate::prefetch::STREAM_AHEAD;

/// Per-lane accumulators of [`streamed`]: summed once at the end, so the
/// compiler keeps them in vector registers.
#[derive(Debug, Default, Clone, Copy)]
struct Lanes {
    bad: [u64; LINE],
    high: [u64; LINE],
}

/// Runs `line(lanes, previous, current)` over the two (equally long)
/// slices a cache line at a time, prefetching one line of `ahead` per line,
/// then `rest(flags, previous, current)` over what is left: the data
/// streams in while the kernel works (see `compressed::scan::elements`).
fn streamed(
    (previous, current, ahead): (&[u64], &[u64], &[u64]),
    line: impl Fn(&mut Lanes, &[u64; LINE], &[u64; LINE]),
    rest: impl Fn(&mut Flags, &[u64], &[u64]),
) -> Flags {
    let mut f = Flags::default();
    let split = current.len().min(ahead.len()) / LINE * LINE;
    let (Some((p_main, p_rest)), Some((c_main, c_rest))) =
        (previous.split_at_checked(split), current.split_at_checked(split))
    else {
        rest(&mut f, previous, current);
        return f;
    };
    let mut lanes = Lanes::default();
    for ((p, c), a) in p_main
        .chunks_exact(LINE)
        .zip(c_main.chunks_exact(LINE))
        .zip(ahead.chunks_exact(LINE))
    {
        let (Ok(p), Ok(c)) = (<&[u64; LINE]>::try_from(p), <&[u64; LINE]>::try_from(c)) else {
            continue; // unreachable: chunks_exact
        };
        if let Some(a) = a.first() {
            prefetch(a);
        }
        line(&mut lanes, p, c);
    }
    rest(&mut f, p_rest, c_rest);
    f.bad = lanes.bad.iter().fold(f.bad, |s, &b| s.wrapping_add(b));
    f.high = lanes.high.iter().fold(f.high, |s, &h| s | h);
    f
}

/// Rank 1: each coordinate above the one before. For `a, b < 2^63`,
/// `b <= a` exactly when `b - a - 1` (wrapping) has its top bit set.
#[inline(always)]
fn order_rank1(f: &mut Flags, previous: &[u64], current: &[u64], lim: u64) {
    for (&a, &b) in previous.iter().zip(current) {
        f.bad = f.bad.wrapping_add(b.wrapping_sub(a).wrapping_sub(1) >> 63);
        f.high |= b | lim.wrapping_sub(b);
    }
}

/// [`order_rank1`] over one line, into lanes.
#[inline(always)]
fn order_rank1_line(l: &mut Lanes, previous: &[u64; LINE], current: &[u64; LINE], lim: u64) {
    for (((n, h), &a), &b) in l.bad.iter_mut().zip(l.high.iter_mut()).zip(previous).zip(current) {
        *n = n.wrapping_add(b.wrapping_sub(a).wrapping_sub(1) >> 63);
        *h |= b | lim.wrapping_sub(b);
    }
}

/// [`order_rank2`] over one line (four entries), into lanes.
#[inline(always)]
fn order_rank2_line(l: &mut Lanes, previous: &[u64; LINE], current: &[u64; LINE], lc: u64) {
    let [r0, c0, r1, c1, r2, c2, r3, c3] = *previous;
    let [s0, d0, s1, d1, s2, d2, s3, d3] = *current;
    let pairs = [
        ((r0, c0), (s0, d0)),
        ((r1, c1), (s1, d1)),
        ((r2, c2), (s2, d2)),
        ((r3, c3), (s3, d3)),
    ];
    for ((n, h), ((r, c), (s, d))) in l.bad.iter_mut().zip(l.high.iter_mut()).zip(pairs) {
        let t = s.wrapping_sub(r);
        let u = d.wrapping_sub(c).wrapping_sub(1);
        *n = n.wrapping_add(t.wrapping_sub(u >> 63) >> 63);
        *h |= s | d | lc.wrapping_sub(d);
    }
}

/// Rank 2: `(r1, c1)` above `(r0, c0)`, i.e. `r1·2^64 + c1 - 1` not below
/// `r0·2^64 + c0` — a 128-bit subtraction done in two halves: with
/// `u = c1 - c0 - 1` and `t = r1 - r0` (wrapping, all values below 2^63),
/// the low half borrows when `u < 0`, and the pair is out of order when
/// `t - borrow < 0`: the top bit of `t - (u >> 63)`. No compare, no branch.
/// The columns' bounds are checked here, the rows' by the caller.
#[inline(always)]
fn order_rank2(f: &mut Flags, previous: &[u64], current: &[u64], lc: u64) {
    for (p, c) in previous.chunks_exact(2).zip(current.chunks_exact(2)) {
        let (&[r0, c0], &[r1, c1]) = (p, c) else {
            continue;
        };
        let t = r1.wrapping_sub(r0);
        let u = c1.wrapping_sub(c0).wrapping_sub(1);
        f.bad = f.bad.wrapping_add(t.wrapping_sub(u >> 63) >> 63);
        f.high |= r1 | c1 | lc.wrapping_sub(c1);
    }
}

/// The sorted rank-2 check in 32-bit lanes, for matrices whose two
/// dimensions are at most 2^31 (nearly all): four coordinates per SSE2
/// register instead of two, and a real compare instead of the
/// subtract-and-shift of [`order_rank2_line`]: about 40 instructions per
/// cache line against ~50, and it keeps up with memory better (measured
/// in `docs/performance.md` § 2).
///
/// Exact only while every coordinate is below 2^31 (signed 32-bit
/// compares then order the full `u64` values): every value is ORed into
/// `high`, and one at or above 2^31 (out of bounds anyway) sets its top
/// bit, so the exact pass decides.
mod narrow {
    use super::{prefetch, Flags, LINE};
    use wide::{i32x4, u64x2};

    /// `nrows - 1` and `ncols - 1`, both below 2^31, in the lane order of
    /// a packed register `(row, col, row, col)`.
    #[derive(Debug, Clone, Copy)]
    pub(super) struct Lims {
        lanes: i32x4,
        col: u64,
    }

    impl Lims {
        /// `None` when a dimension is larger than 2^31 (or 0): then the
        /// 64-bit loop runs.
        pub(super) fn new(lr: u64, lc: u64) -> Option<Lims> {
            let (r, c) = (i32::try_from(lr).ok()?, i32::try_from(lc).ok()?);
            Some(Lims {
                lanes: i32x4::new([r, c, r, c]),
                col: lc,
            })
        }
    }

    /// The low halves of two entries `(r0, c0)`, `(r1, c1)`:
    /// `(r0, c0, r1, c1)` (`shufps`).
    #[inline(always)]
    fn pack(a: &[u64], b: &[u64]) -> i32x4 {
        let (Some(&[r0, c0]), Some(&[r1, c1])) = (a.first_chunk::<2>(), b.first_chunk::<2>()) else {
            return i32x4::splat(0); // unreachable: the callers pass two values each
        };
        // Truncation intended: the high halves are checked through `high`.
        i32x4::new([r0 as i32, c0 as i32, r1 as i32, c1 as i32])
    }

    /// `(p[2], p[3], x[0], x[1])`: each entry of `x` next to its
    /// predecessor's place, `p` holding the two entries before.
    #[inline(always)]
    fn before(p: i32x4, x: i32x4) -> i32x4 {
        let (p, x) = (p.to_array(), x.to_array());
        i32x4::new([p[2], p[3], x[0], x[1]])
    }

    /// All ones in the low 32 bits of each 64-bit half when the entry
    /// there is above its predecessor: `r > pr`, or `r == pr` and
    /// `c > pc`.
    #[inline(always)]
    fn above(x: i32x4, p: i32x4) -> i32x4 {
        let gt = x.simd_gt(p);
        let eq = x.simd_eq(p);
        // The column's verdict moved into the row's lane.
        let col_gt: i32x4 = bytemuck::cast(bytemuck::cast::<i32x4, u64x2>(gt) >> 32);
        gt | (eq & col_gt)
    }

    /// Entries of `current` (each after the one `previous` holds at the
    /// same place), four per cache line, prefetching one line of `ahead` per
    /// line (see [`super::streamed`]); the values left over go through the
    /// 64-bit [`order_rank2`]. Rows and columns are checked against their
    /// bounds (`lims`); `bad` is 1 when an entry is not above its
    /// predecessor or out of bounds.
    pub(super) fn order_rank2(previous: &[u64], current: &[u64], ahead: &[u64], lims: Lims) -> Flags {
        let mut f = Flags::default();
        let split = current.len().min(ahead.len()) / LINE * LINE;
        let (Some((c_main, c_rest)), Some(p_rest), Some(first)) = (
            current.split_at_checked(split),
            previous.get(split..),
            previous.first_chunk::<2>(),
        ) else {
            super::order_rank2(&mut f, previous, current, lims.col);
            return f;
        };
        // The predecessor of the first entry, in lanes 2 and 3.
        let mut last = pack(first, first);
        let (mut ok, mut out, mut high) = (i32x4::splat(-1), i32x4::splat(0), u64x2::splat(0));
        for (line, a) in c_main.chunks_exact(LINE).zip(ahead.chunks_exact(LINE)) {
            let Ok(v) = <&[u64; LINE]>::try_from(line) else {
                continue; // unreachable: chunks_exact
            };
            if let Some(a) = a.first() {
                prefetch(a);
            }
            high |= u64x2::new([v[0] | v[2] | v[4] | v[6], v[1] | v[3] | v[5] | v[7]]);
            let x0 = pack(&v[0..2], &v[2..4]);
            let x1 = pack(&v[4..6], &v[6..8]);
            ok = ok & above(x0, before(last, x0)) & above(x1, before(x0, x1));
            out = out | x0.simd_gt(lims.lanes) | x1.simd_gt(lims.lanes);
            last = x1;
        }
        let (ok, out, high) = (ok.to_array(), out.to_array(), high.to_array());
        let in_order = ok[0] == -1 && ok[2] == -1;
        let in_bounds = out.iter().all(|&o| o == 0);
        f.bad = u64::from(!(in_order && in_bounds));
        // A value at or above 2^31: the compares above were not exact.
        if (high[0] | high[1]) >> 31 != 0 {
            f.high = 1 << 63;
        }
        super::order_rank2(&mut f, p_rest, c_rest, lims.col);
        f
    }
}

/// Any rank: the lexicographic comparison as a fold over the coordinates,
/// in top-bit arithmetic (values below 2^63): `ok` gets set at a
/// coordinate that grows (`a - b < 0`) while none before it decreased
/// (`rising`, cleared by `b - a < 0`); the first coordinate that differs
/// decides, and equal tuples leave `ok` clear.
fn order_rank_n(previous: &[u64], current: &[u64], lims: &[u64]) -> Flags {
    let rank = lims.len().max(1);
    let mut f = Flags::default();
    for (p, c) in previous.chunks_exact(rank).zip(current.chunks_exact(rank)) {
        let (mut ok, mut rising) = (0u64, u64::MAX);
        for ((&a, &b), &l) in p.iter().zip(c).zip(lims) {
            ok |= rising & a.wrapping_sub(b);
            rising &= !b.wrapping_sub(a);
            f.high |= b | l.wrapping_sub(b);
        }
        f.bad = f.bad.wrapping_add(!ok >> 63);
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
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

    /// The rules, written the plain way: every coordinate below its
    /// dimension, and (sorted) each tuple above the one before.
    fn reference(c: &CooStructure<'_>) -> (bool, bool) {
        let rank = c.rank();
        let bounds = c
            .indices
            .chunks(rank.max(1))
            .all(|t| t.iter().zip(&c.shape).all(|(v, n)| v < n));
        let tuples: Vec<&[u64]> = c.indices.chunks(rank.max(1)).collect();
        let order = tuples.windows(2).all(|w| w[0] < w[1]);
        (bounds, bounds && order)
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(3000))]
        #[test]
        fn fast_check_agrees_with_the_rules(
            shape in proptest::collection::vec(
                proptest::prop_oneof![4 => 0u64..6, 1 => proptest::prelude::Just(1u64 << 63), 1 => proptest::prelude::Just(u64::MAX)],
                1..5,
            ),
            raw in proptest::collection::vec(0u64..7, 0..120),
            make_sorted in proptest::prelude::any::<bool>(),
            damage in proptest::option::of((0usize..120, proptest::prop_oneof![0u64..8, proptest::prelude::any::<u64>()])),
            threads in 1usize..5,
        ) {
            let rank = shape.len();
            let mut tuples: Vec<Vec<u64>> = raw.chunks_exact(rank).map(<[u64]>::to_vec).collect();
            if make_sorted {
                tuples.sort();
                tuples.dedup();
            }
            let mut indices: Vec<u64> = tuples.concat();
            if let Some((at, v)) = damage {
                let n = indices.len().max(1);
                if let Some(x) = indices.get_mut(at % n) { *x = v; }
            }
            let c = coo(&shape, &indices, true);
            let (bounds, order) = reference(&c);
            // Exact for coordinates below 2^63; with larger ones (valid
            // only in dimensions above 2^63) the fast pass defers.
            let huge = indices.iter().any(|&v| v >> 63 != 0);
            let unsorted = coo(&shape, &indices, false);
            for t in [1, threads, 7] {
                proptest::prop_assert_eq!(c.fast_check(t), order && !huge);
                proptest::prop_assert_eq!(unsorted.fast_check(t), bounds && !huge);
            }
            // Threads the OS refuses: their ranges are checked on this thread.
            let refused = crate::view::threads::tests::refusing(|| (c.fast_check(3), unsorted.fast_check(3)));
            proptest::prop_assert_eq!(refused, (order && !huge, bounds && !huge));
            // The error does not depend on the threads, and is the exact pass's.
            let exact = c.exact(c.nnz);
            proptest::prop_assert_eq!(exact.is_ok(), order);
            proptest::prop_assert_eq!(&c.validate(), &exact);
            proptest::prop_assert_eq!(&c.validate_parallel(threads), &exact);
            proptest::prop_assert_eq!(&unsorted.validate_parallel(threads), &unsorted.exact(unsorted.nnz));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(400))]
        /// Sorted rank 2 with enough entries for the 32-bit loop of
        /// [`narrow`] (it runs only [`AHEAD`] values from the end), with
        /// dimensions and coordinates around 2^31, where that loop hands
        /// over to the 64-bit one, and one value damaged or two entries
        /// swapped.
        #[test]
        fn narrow_rank2_check_agrees_with_the_rules(
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
            threads in 1usize..4,
        ) {
            // Coordinates near the top of the dimension when asked (and
            // when it is large enough), else from 0.
            let base = |d: u64| if near_top && d > 1000 { d - 100 } else { 0 };
            let (br, bc) = (base(dims[0]), base(dims[1]));
            let mut tuples: Vec<(u64, u64)> = raw.iter().map(|&(r, c)| (br + r, bc + c)).collect();
            tuples.sort_unstable();
            tuples.dedup();
            let mut indices: Vec<u64> = tuples.iter().flat_map(|&(r, c)| [r, c]).collect();
            if let Some((at, v)) = damage {
                let n = indices.len();
                indices[at % n] = v;
            }
            if let Some(at) = swap {
                let k = at % (tuples.len() - 1);
                indices.swap(2 * k, 2 * k + 2);
                indices.swap(2 * k + 1, 2 * k + 3);
            }
            // Damage only a bound or the 32-bit range can see, the order
            // staying intact: the column of a row's last entry set to the
            // dimension or past it, or of a row's first entry set to
            // 2^31 + d (a negative i32). Among the entries the 32-bit
            // loop reads (all but the last AHEAD / 2 and a line).
            if let Some((row_end, at, d)) = edge {
                let n = tuples.len().saturating_sub(AHEAD / 2 + 8);
                let k = (0..n)
                    .cycle()
                    .skip(at % n.max(1))
                    .take(n)
                    .find(|&k| {
                        let other = if row_end { k + 1 } else { k.wrapping_sub(1) };
                        tuples.get(other).is_none_or(|t| t.0 != tuples[k].0)
                    });
                if let Some(k) = k {
                    indices[2 * k + 1] = if row_end { dims[1] + d } else { (1 << 31) + d };
                }
            }
            let c = coo(&dims, &indices, true);
            let (_, order) = reference(&c);
            let huge = indices.iter().any(|&v| v >> 63 != 0);
            for t in [1, threads] {
                proptest::prop_assert_eq!(c.fast_check(t), order && !huge);
            }
            proptest::prop_assert_eq!(c.validate().is_ok(), order);
        }
    }

    /// A lookup on a structure not yet validated answers only from a
    /// tensor it has checked: a coordinate out of bounds anywhere, a false
    /// order claim, or a second entry at the coordinate asked for is the
    /// error `validate` gives, not a value.
    #[test]
    fn unscanned_lookups_report_damage_instead_of_answering() {
        let duplicate = |position: u64| Error::CooOrder {
            tensor: "T".into(),
            position,
            element: position * 2,
            offset: 4096 + position * 16,
            what: "duplicate coordinates",
            rule: rule::COO_VALIDITY,
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
            tensor: "T".into(),
            array: "indices",
            position: 5,
            offset: 4096 + 40,
            value: 4,
            bound: 4,
            bound_name: Field::at("shape", 1),
            rule: rule::COO_VALIDITY,
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
                    position: 3,
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
                tensor: "T".into(),
                position: 1,
                element: 2,
                offset: 4096 + 16,
                what: "entries are not in strictly increasing lexicographic order although is_sorted = 1",
                rule: rule::COO_VALIDITY,
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
                position: 5,
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
                position: 1,
                element: 3,
                offset: 4120,
                ..
            }
        ));
        assert!(coo(&[2, 3, 10], &[0, 1, 9, 0, 2, 1, 1, 0, 0], true).validate().is_ok());
        // Unsorted: the duplicate (2,0) is found by sorting.
        let e = coo(&[3, 4], &[2, 0, 0, 3, 2, 0], false).validate().unwrap_err();
        assert!(matches!(
            e,
            Error::CooOrder {
                position: 2,
                element: 4,
                what: "duplicate coordinates",
                ..
            }
        ));
    }
}
