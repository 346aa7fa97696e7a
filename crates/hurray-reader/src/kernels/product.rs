//! `y = M·x` over the compressed structure: the scatter (CSC read as
//! such, `y[idx[k]] += v[k] · x[j]`), with propagation blocking when `y`
//! is large (for `f32` on CPUs with AVX-512, the version of [`avx512`]),
//! and the dot products (CSR read as such), each on one thread or
//! several.

use super::prefetch;
use super::threads::{cores, share, spawn_or_run, MAX_THREADS};
use super::{pairs, Arrays};
use crate::cursor::{to_u64, to_usize};

#[cfg(target_arch = "x86_64")]
mod avx512;

/// The element types [`CscView::mul_vec`](crate::CscView::mul_vec) and
/// [`CsrView::mul_vec`](crate::CsrView::mul_vec) compute with: `f32` and
/// `f64` (sealed). Products and sums are taken in `Self`, in storage
/// order, like scipy's `csc_matvec` / `csr_matvec`.
pub trait Float:
    crate::Element
    + Copy
    + Default
    + Send
    + Sync
    + std::ops::Add<Output = Self>
    + std::ops::Mul<Output = Self>
    + private::Sealed
{
}

impl Float for f32 {}
impl Float for f64 {}

mod private {
    /// Seals [`Float`](super::Float), and holds what differs by type.
    pub trait Sealed: Sized {
        /// The blocked scatter compiled for AVX-512, where there is one
        /// for the type (`f32`, x86-64; see [`super::avx512::scatter`]):
        /// `y = M·x` into rows `first..first + y.len()` over `(ptr, idx,
        /// values)`, or `false`, with `y` untouched, when it does not
        /// apply. `nnz`: the window's share of the non-zeros, for the plan.
        fn scatter_wide(_: (&[u64], &[u64], &[Self]), _x: &[Self], _y: &mut [Self], _first: u64, _nnz: u64) -> bool {
            false
        }
    }
    impl Sealed for f32 {
        #[cfg(target_arch = "x86_64")]
        fn scatter_wide(m: (&[u64], &[u64], &[f32]), x: &[f32], y: &mut [f32], first: u64, nnz: u64) -> bool {
            super::avx512::scatter(m, x, y, first, (nnz, None))
        }
    }
    impl Sealed for f64 {}
}

/// How [`Arrays::scatter_blocked`] cuts `y`: blocks of `2^block_shift`
/// rows, `2^group` consecutive blocks per bin, a bin holding up to
/// `2^bin_shift` contributions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Blocking {
    /// log2 of the rows per block of `y`: the rows one application of
    /// contributions adds into while they sit in the L2 cache.
    pub(crate) block_shift: u32,
    /// log2 of the blocks per bin. With `group > 0` a full bin is first
    /// split into one part per block (see [`spread`]); `block_shift +
    /// group` is at most 32 (offsets in a bin are `u32`).
    pub(crate) group: u32,
    /// log2 of the contributions a bin holds before it is applied.
    pub(crate) bin_shift: u32,
}

impl Blocking {
    /// `y` up to this size (bytes) is scattered into directly, with
    /// prefetching above [`CACHED_BYTES`]. Measured on the AMD host
    /// (`docs/perf-log/run-g.md`), the direct scatter took about
    /// 0.35x, 0.65x and 0.9x of the blocked one's time with 4, 8 and 16 MiB
    /// of `y` (`random10`), the blocked one about 0.8x and 0.7x of the
    /// direct one's with 20 MiB (`short2`) and 40 MiB (`random10`).
    pub(crate) const DIRECT_MAX_Y_BYTES: usize = 16 << 20;
    /// Below this many non-zeros the direct scatter's cache misses cost
    /// less than setting up the bins.
    pub(crate) const MIN_NNZ: u64 = 1 << 16;
    /// A block of `y` (bytes): half an L2 cache of 1 MiB, a quarter of
    /// 2 MiB.
    pub(crate) const BLOCK_BYTES: usize = 512 << 10;
    /// At most this many bins while [`MAX_GROUP`](Self::MAX_GROUP)
    /// allows: each bin is a stream of writes during the pass over the
    /// matrix, and the pass slows with their number (10 M rows of `f32` on
    /// the AMD host, one process: 5, 10, 20 and 39 bins took 0.45, 0.48,
    /// 0.85 and 1.53 s).
    pub(crate) const MAX_BINS: usize = 16;
    /// At most `2^MAX_GROUP` blocks per bin: the parts a full bin is split
    /// into are streams of writes too.
    pub(crate) const MAX_GROUP: u32 = 3;
    /// Bound of the scratch of all bins together (bytes); the parts add
    /// at most two bins' worth.
    pub(crate) const SCRATCH_BYTES: usize = 32 << 20;
    /// A bin is applied after at least one contribution per this many
    /// bytes of its blocks (16: reading and writing back the blocks costs
    /// at most 32 bytes per contribution). With `f32` and the 10 M-row
    /// benchmark that is 2^18 contributions per bin of 8 blocks of 512 KiB
    /// (20 MiB of bins); `f64` would need 80 MiB there (its bin entries are
    /// 16 bytes, its rows twice as many bytes) and takes the direct
    /// scatter: blocked variants with less scratch measured no clear gain
    /// over it (`docs/perf-log/run-e.md`).
    pub(crate) const BLOCK_BYTES_PER_ENTRY: usize = 16;
    /// A bin holds at least 2^MIN_BIN_SHIFT contributions (when the bound
    /// allows), so applying one amortises reading its blocks.
    const MIN_BIN_SHIFT: u32 = 10;

    /// The blocking for `y = M·x` with `rows` entries in `y`, `nnz` stored
    /// elements and `T` of `width` bytes, or `None` for the direct scatter
    /// (`y` within [`DIRECT_MAX_Y_BYTES`](Self::DIRECT_MAX_Y_BYTES), few
    /// non-zeros, or `y` too large for bins within
    /// [`SCRATCH_BYTES`](Self::SCRATCH_BYTES) to hold one contribution per
    /// [`BLOCK_BYTES_PER_ENTRY`](Self::BLOCK_BYTES_PER_ENTRY) bytes of the
    /// blocks they cover). Blocks are [`BLOCK_BYTES`](Self::BLOCK_BYTES);
    /// a bin covers the fewest blocks (at most `2^MAX_GROUP`) that leave
    /// at most [`MAX_BINS`](Self::MAX_BINS) bins.
    pub(crate) fn plan(rows: usize, nnz: u64, width: usize) -> Option<Blocking> {
        let y_bytes = rows.checked_mul(width)?;
        if y_bytes <= Self::DIRECT_MAX_Y_BYTES || nnz < Self::MIN_NNZ {
            return None;
        }
        let block_shift = (Self::BLOCK_BYTES / width.max(1)).max(1).ilog2();
        let blocks = rows.div_ceil(1usize.checked_shl(block_shift)?);
        let bins_of = |group: u32| blocks.div_ceil(1usize << group);
        let group = (0..=Self::MAX_GROUP)
            .find(|&g| bins_of(g) <= Self::MAX_BINS)
            .unwrap_or(Self::MAX_GROUP);
        let range_shift = block_shift.checked_add(group).filter(|&r| r <= 32)?;
        let bins = bins_of(group);
        let room = Self::SCRATCH_BYTES / Self::entry_bytes(width).checked_mul(bins)?.max(1);
        let covered = 1usize.checked_shl(range_shift)?.saturating_mul(width);
        let bin_shift = Self::bin_shift(nnz, bins, (Self::MIN_BIN_SHIFT, room.max(1).ilog2()), covered)?;
        Some(Blocking {
            block_shift,
            group,
            bin_shift,
        })
    }

    /// log2 of the contributions a bin holds, for `nnz` of them over
    /// `bins` bins that each cover `covered` bytes of `y`: enough for an
    /// even share (then no bin fills up early unless the rows are
    /// skewed), at least `2^lo` and at most `2^hi` (`hi` wins). `None`
    /// when a bin, applied, would bring fewer than one contribution per
    /// [`BLOCK_BYTES_PER_ENTRY`](Self::BLOCK_BYTES_PER_ENTRY) bytes of
    /// its blocks: each application reads its blocks and writes them
    /// back, and beyond that the direct scatter (a cache line per
    /// non-zero) is as good. Shared with the AVX-512 plan.
    pub(crate) fn bin_shift(nnz: u64, bins: usize, (lo, hi): (u32, u32), covered: usize) -> Option<u32> {
        let share = usize::try_from(nnz / to_u64(bins).max(1)).unwrap_or(usize::MAX);
        let want = share
            .max(1)
            .checked_next_power_of_two()
            .map_or(usize::BITS - 1, usize::ilog2);
        let bin_shift = want.max(lo).min(hi);
        let per_visit = share.clamp(1, 1usize.checked_shl(bin_shift)?);
        (per_visit.saturating_mul(Self::BLOCK_BYTES_PER_ENTRY) >= covered).then_some(bin_shift)
    }

    /// log2 of the rows a bin covers (`block_shift + group`; the blocking
    /// fits when this is at most 32).
    fn range_shift(&self) -> u32 {
        self.block_shift.saturating_add(self.group)
    }

    /// log2 of the contributions a part holds: twice a full bin's entries
    /// per block, so that splitting a bin whose rows are spread evenly
    /// over its blocks seldom fills a part (a part that fills is applied
    /// at once).
    fn part_shift(&self) -> u32 {
        self.bin_shift.saturating_add(1).saturating_sub(self.group)
    }

    /// Bytes of one bin entry `(u32, T)` for `T` of `width` bytes.
    fn entry_bytes(width: usize) -> usize {
        // (u32, f32): 8 bytes; (u32, f64): 16 (padded).
        width.max(4).saturating_mul(2)
    }

    /// Bytes of the bins [`Arrays::scatter_blocked`] allocates for
    /// `rows` entries of `y` and `T` of `width` bytes, and of the parts
    /// (plus one `usize` per bin and per part).
    #[cfg(test)]
    pub(crate) fn scratch_bytes(&self, rows: usize, width: usize) -> (usize, usize) {
        let pow = |s: u32| 1usize.checked_shl(s).unwrap_or(usize::MAX);
        let bins = rows.div_ceil(pow(self.range_shift()));
        let parts = if self.group == 0 { 0 } else { pow(self.group) };
        let bytes = |count: usize, len_shift: u32| {
            count
                .saturating_mul(pow(len_shift))
                .saturating_mul(Self::entry_bytes(width))
        };
        (bytes(bins, self.bin_shift), bytes(parts, self.part_shift()))
    }
}

/// Bins of `(offset, contribution)` entries in one allocation: bin `b` is
/// `entries[b·2^len_shift ..][..2^len_shift]`, and its next entry goes to
/// `entries[heads[b]]`. Holds both the bins of
/// [`Arrays::scatter_blocked`] and the parts of [`spread`].
struct Bins<T> {
    heads: Vec<usize>,
    entries: Vec<(u32, T)>,
    len_shift: u32,
}

impl<T: Float> Bins<T> {
    /// `count` empty bins of `2^len_shift` entries, or `None` when they
    /// cannot be allocated.
    fn new(count: usize, len_shift: u32) -> Option<Self> {
        let len = 1usize.checked_shl(len_shift)?;
        let total = count.checked_mul(len)?;
        let (mut heads, mut entries) = (Vec::new(), Vec::new());
        heads.try_reserve_exact(count).ok()?;
        entries.try_reserve_exact(total).ok()?;
        heads.extend((0..count).map(|b| b.wrapping_mul(len)));
        entries.resize(total, (0, T::default()));
        Some(Bins {
            heads,
            entries,
            len_shift,
        })
    }

    /// Appends `entry` to bin `b` (nothing if there is no bin `b`); when
    /// that fills the bin, empties it and returns its entries, in order.
    #[inline(always)]
    fn push(&mut self, b: usize, entry: (u32, T)) -> Option<&[(u32, T)]> {
        let head = self.heads.get_mut(b)?;
        if let Some(slot) = self.entries.get_mut(*head) {
            *slot = entry;
        }
        *head = head.wrapping_add(1);
        // A bin starts at a multiple of its length: full when the next
        // position is the next multiple.
        let len = 1usize.wrapping_shl(self.len_shift);
        if *head & len.wrapping_sub(1) != 0 {
            return None;
        }
        let from = head.wrapping_sub(len);
        *head = from;
        self.entries.get(from..from.wrapping_add(len))
    }

    /// Each bin's entries, in bin order; empties the bins.
    fn drain(&mut self) -> impl Iterator<Item = (usize, &[(u32, T)])> {
        let Bins {
            heads,
            entries,
            len_shift,
        } = self;
        let (entries, len) = (&*entries, 1usize.wrapping_shl(*len_shift));
        heads.iter_mut().enumerate().map(move |(b, head)| {
            let from = b.wrapping_mul(len);
            let filled = entries.get(from..*head).unwrap_or_default();
            *head = from;
            (b, filled)
        })
    }
}

/// Adds the contributions of one bin (bin `b`: rows `b·2^(block_shift +
/// group) ..`, entries in append order) to `y`. With `group = 0` the bin
/// is one block, applied directly; otherwise the entries are first split,
/// in order, into one part per block (`parts`: `2^group` bins), a full
/// part applied at once and the others at the end. Each `y[i]` gets its
/// contributions in append order either way.
fn spread<T: Float>(entries: &[(u32, T)], y: &mut [T], b: usize, blocking: Blocking, parts: &mut Bins<T>) {
    let Blocking { block_shift, group, .. } = blocking;
    if group == 0 {
        apply(entries, y, b, block_shift);
        return;
    }
    let first = b.checked_shl(group).unwrap_or(usize::MAX);
    let mask = low_bits(block_shift);
    for &(offset, p) in entries {
        let s = usize::try_from(offset.checked_shr(block_shift).unwrap_or(u32::MAX)).unwrap_or(usize::MAX);
        if let Some(full) = parts.push(s, (offset & mask, p)) {
            apply(full, y, first.saturating_add(s), block_shift);
        }
    }
    for (s, rest) in parts.drain() {
        apply(rest, y, first.saturating_add(s), block_shift);
    }
}

/// A mask of the low `bits` bits (all 32 from 32 on).
fn low_bits(bits: u32) -> u32 {
    u32::MAX.checked_shr(32u32.saturating_sub(bits)).unwrap_or(0)
}

/// Adds the contributions of one bin or part to its block of `y` (rows
/// `index·2^block_shift ..`), in order, in the block [`cached_block`]
/// reads first; nothing is read for no contributions.
#[inline(never)]
fn apply<T: Float>(entries: &[(u32, T)], y: &mut [T], index: usize, block_shift: u32) {
    if entries.is_empty() {
        return;
    }
    let Some(block) = cached_block(y, index, block_shift) else {
        return;
    };
    for &(offset, p) in entries {
        if let Some(yr) = block.get_mut(usize::try_from(offset).unwrap_or(usize::MAX)) {
            *yr = *yr + p;
        }
    }
}

/// Block `index` of `y` (rows `index·2^block_shift ..`, cut at the end of
/// `y`; `None` past it), read once first, one value per cache line in
/// address order, so that the hardware prefetcher brings it into the
/// cache at streaming speed before the random additions into it (without
/// the read, the AVX-512 product took 1.8x its time, `docs/perf-log/run-k.md`).
fn cached_block<T: Float>(y: &mut [T], index: usize, block_shift: u32) -> Option<&mut [T]> {
    let start = index.checked_shl(block_shift).unwrap_or(usize::MAX);
    let end = start
        .saturating_add(1usize.checked_shl(block_shift).unwrap_or(usize::MAX))
        .min(y.len());
    let block = y.get_mut(start..end)?;
    let line = (64 / std::mem::size_of::<T>()).max(1);
    // The sum is only there to make the reads happen.
    std::hint::black_box(block.iter().step_by(line).fold(T::default(), |a, &v| a + v));
    Some(block)
}

impl<'a> Arrays<'a> {
    /// `y = M·x` for this structure read as CSC (`y[idx[k]] += v[k] · x[j]`
    /// over slice `j`), `y` overwritten. When `y` is larger than
    /// [`Blocking::DIRECT_MAX_Y_BYTES`] (see [`Blocking::plan`]) the
    /// contributions go through
    /// [`scatter_blocked`](Self::scatter_blocked) (for `f32` on a CPU with
    /// AVX-512, through [`avx512::scatter`] where its plan applies),
    /// otherwise (or when the scratch cannot be allocated) straight into
    /// `y` ([`scatter_direct`](Self::scatter_direct)). All add the same
    /// products to each `y[i]` in the same order: the results are equal
    /// bit for bit. The caller has checked the lengths and the invariants;
    /// an index past `y` is skipped, never a panic.
    pub(crate) fn scatter<T: Float>(&self, values: &[T], x: &[T], y: &mut [T]) {
        self.scatter_rows(values, x, y, 0);
    }

    /// [`scatter`](Self::scatter) into the rows `first..first + y.len()`
    /// of `M·x` (`y[i - first]` for row `i`); the others are skipped. The
    /// window must lie within `0..2^64` (`first + y.len()` does not
    /// overflow; callers pass windows of `0..nrows`), or a row below
    /// `first` could wrap into it.
    fn scatter_rows<T: Float>(&self, values: &[T], x: &[T], y: &mut [T], first: u64) {
        // The window's share of the elements, for the plan (rows evenly filled).
        let stored = self.stored();
        let nnz = u128::from(stored)
            .saturating_mul(to_u64(y.len()).into())
            .checked_div(self.bound.into())
            .map_or(stored, |n| u64::try_from(n).unwrap_or(u64::MAX));
        if T::scatter_wide((self.ptr, self.idx, values), x, y, first, nnz) {
            return;
        }
        let done = Blocking::plan(y.len(), nnz, std::mem::size_of::<T>())
            .is_some_and(|blocking| self.scatter_blocked(values, x, y, first, blocking));
        if !done {
            self.scatter_direct(values, x, y, first);
        }
    }

    /// [`scatter`](Self::scatter) on up to `threads` threads, and no more
    /// than [`std::thread::available_parallelism`]: every thread reads
    /// every element, so threads beyond the cores only multiply that
    /// reading. One thread when `y` fits in the cache (at most
    /// [`CACHED_BYTES`]), where the product is bound by the
    /// CPU and a split by rows would only add work. Runs
    /// [`scatter_threads`](Self::scatter_threads), which takes one thread
    /// as [`scatter`](Self::scatter).
    pub(crate) fn scatter_parallel<T: Float>(&self, values: &[T], x: &[T], y: &mut [T], threads: usize) {
        let threads = if cached(y) { 1 } else { threads.min(cores()) };
        self.scatter_threads(values, x, y, threads);
    }

    /// [`scatter`](Self::scatter) on `threads` threads (`std::thread::scope`,
    /// clamped to `1..=`[`MAX_THREADS`] and to the rows of `y`): the rows
    /// are cut into `threads` consecutive ranges of equal length, `y`
    /// split with them, and each thread runs the scatter over the whole
    /// structure, skipping the rows outside its range; the calling thread
    /// takes the last range. Each `y[i]` receives the same products in the
    /// same order as from `scatter`: equal bit for bit, whatever `threads`.
    fn scatter_threads<T: Float>(&self, values: &[T], x: &[T], y: &mut [T], threads: usize) {
        let threads = threads.clamp(1, MAX_THREADS).min(y.len().max(1));
        if threads == 1 {
            return self.scatter(values, x, y);
        }
        let rows = y.len();
        std::thread::scope(|scope| {
            let (mut rest, mut from) = (y, 0usize);
            for t in 1..threads {
                let to = share(rows, t, threads).clamp(from, from.saturating_add(rest.len()));
                let (part, tail) = rest.split_at_mut(to.saturating_sub(from));
                let first = to_u64(from);
                spawn_or_run(scope, move || self.scatter_rows(values, x, part, first));
                (rest, from) = (tail, to);
            }
            self.scatter_rows(values, x, rest, to_u64(from));
        });
    }

    /// Each outer slice's indices and values, in order, for the products:
    /// [`pairs`] over the whole pointer array.
    fn slices<'s, T>(&'s self, values: &'s [T]) -> impl Iterator<Item = (&'s [u64], &'s [T])> + 's {
        pairs(self.ptr, self.idx, values)
    }

    /// The direct scatter into rows `first..first + y.len()`: one pass over
    /// `ptr`, `idx` and `values`, `y[idx[k] - first] += v[k] · x[j]` at
    /// random positions of `y`, prefetching when `y` is larger than
    /// [`CACHED_BYTES`].
    pub(crate) fn scatter_direct<T: Float>(&self, values: &[T], x: &[T], y: &mut [T], first: u64) {
        if !cached(y) {
            self.scatter_direct_with::<T, true>(values, x, y, first);
        } else {
            self.scatter_direct_with::<T, false>(values, x, y, first);
        }
    }

    /// [`scatter_direct`](Self::scatter_direct); with `PREFETCH`, the `y`
    /// entry of the row [`prefetch::DISTANCE`] elements on is requested
    /// while each element is added.
    // Its own registers: inlined beside its twin, the loop reloaded `y`
    // from the stack.
    #[inline(never)]
    fn scatter_direct_with<T: Float, const PREFETCH: bool>(&self, values: &[T], x: &[T], y: &mut [T], first: u64) {
        y.fill(T::default());
        let slot = |r: u64| usize::try_from(r.wrapping_sub(first)).unwrap_or(usize::MAX);
        // A row outside the window requests the window's last entry: a
        // branch on the window would be mispredicted for every other
        // element on two threads.
        let last = y.len().saturating_sub(1);
        let start = to_usize(self.ptr.first().copied().unwrap_or(0));
        let mut ahead = self
            .idx
            .get(start.saturating_add(prefetch::DISTANCE)..)
            .unwrap_or_default();
        for ((rows, vals), &xj) in self.slices(values).zip(x) {
            for (k, (&r, &v)) in rows.iter().zip(vals).enumerate() {
                if PREFETCH {
                    if let Some(later) = ahead.get(k).and_then(|&a| y.get(slot(a).min(last))) {
                        prefetch::prefetch(later);
                    }
                }
                if let Some(yr) = y.get_mut(slot(r)) {
                    *yr = *yr + v * xj;
                }
            }
            if PREFETCH {
                ahead = ahead.get(rows.len()..).unwrap_or_default();
            }
        }
    }

    /// The scatter with propagation blocking (Beamer, Asanović, Patterson,
    /// "Reducing PageRank Communication via Propagation Blocking", IPDPS
    /// 2017), into rows `first..first + y.len()`. `y` is cut into blocks
    /// of `2^block_shift` rows, each small enough to stay in the L2 cache,
    /// and a bin collects the contributions to `2^group` consecutive
    /// blocks. One pass over `ptr`, `idx` and `values` (in storage order)
    /// appends each contribution `(row - bin start, v · x[j])` to its
    /// row's bin; a bin that reaches `2^bin_shift` entries is applied to
    /// its blocks of `y` ([`spread`]), in order, and emptied; the
    /// remaining bins are applied at the end. The bins are written
    /// sequentially and each application hits blocks of `y` that fit in
    /// L2, instead of a cache miss per non-zero; few bins (several blocks
    /// each) keep the pass's streams of writes few.
    ///
    /// Every row belongs to exactly one bin and one part, each applied in
    /// the order its entries were appended, so each `y[i]` receives the
    /// same products (computed the same way, `v · x[j]` in `T`) in the
    /// same order as in [`scatter_direct`](Self::scatter_direct): equal bit
    /// for bit. Scratch: the bins (`2^bin_shift` `(u32, T)` pairs each),
    /// the parts (`2^group`, or as many as `y` has blocks if fewer, each
    /// of twice a full bin's entries per block) and a `usize` per bin and
    /// part; returns `false`, with `y` untouched, when it cannot be
    /// allocated or the blocking does not fit (`block_shift + group` over
    /// 32).
    pub(crate) fn scatter_blocked<T: Float>(
        &self,
        values: &[T],
        x: &[T],
        y: &mut [T],
        first: u64,
        blocking: Blocking,
    ) -> bool {
        let range_shift = blocking.range_shift();
        let Some(bin_rows) = 1usize.checked_shl(range_shift).filter(|_| range_shift <= 32) else {
            return false;
        };
        let count = y.len().div_ceil(bin_rows);
        // One part per block of a bin, and no more than `y` has blocks (a
        // part past them would only hold rows past `y`, which are skipped).
        let blocks = y.len().div_ceil(1usize << blocking.block_shift);
        let parts = if blocking.group == 0 {
            0
        } else {
            blocks.min(1usize << blocking.group)
        };
        let (Some(mut bins), Some(mut parts)) = (
            Bins::new(count, blocking.bin_shift),
            Bins::new(parts, blocking.part_shift()),
        ) else {
            return false;
        };
        y.fill(T::default());
        self.bin(values, x, (y, first), &mut bins, &mut parts, blocking);
        for (b, rest) in bins.drain() {
            spread(rest, y, b, blocking, &mut parts);
        }
        true
    }

    /// The pass of [`scatter_blocked`](Self::scatter_blocked) over the
    /// stored elements: each contribution `v[k] · x[j]` into the bin of
    /// row `idx[k] - first`, a full bin applied ([`spread`]) and emptied.
    /// A row below `first` wraps to no bin; a row past the window but
    /// within the last bin's span is binned and then dropped when applied
    /// (it is past `y`).
    fn bin<T: Float>(
        &self,
        values: &[T],
        x: &[T],
        (y, first): (&mut [T], u64),
        bins: &mut Bins<T>,
        parts: &mut Bins<T>,
        blocking: Blocking,
    ) {
        let range_shift = blocking.range_shift();
        // The offset of a row in its bin: its low `range_shift` bits, < 2^32.
        let mask = u64::from(low_bits(range_shift));
        for ((rows, vals), &xj) in self.slices(values).zip(x) {
            for (&r, &v) in rows.iter().zip(vals) {
                let r = r.wrapping_sub(first);
                let b = usize::try_from(r.checked_shr(range_shift).unwrap_or(u64::MAX)).unwrap_or(usize::MAX);
                let offset = u32::try_from(r & mask).unwrap_or(u32::MAX);
                if let Some(full) = bins.push(b, (offset, v * xj)) {
                    spread(full, y, b, blocking, parts);
                }
            }
        }
    }

    /// `y = M·x` for this structure read as CSR: `y[i]` is the dot product
    /// of slice `i` with `x`, summed in storage order. Same preconditions as
    /// [`scatter`](Self::scatter); an index past `x` reads 0.
    pub(crate) fn dots<T: Float>(&self, values: &[T], x: &[T], y: &mut [T]) {
        dot_slices(self.ptr, self.idx, values, x, y);
    }

    /// [`dots`](Self::dots) on `threads` threads (`std::thread::scope`,
    /// clamped to `1..=`[`MAX_THREADS`] and to [`cores`]): the outer
    /// slices are cut into `threads` consecutive ranges holding about
    /// `nnz / threads` elements each, `y` split with them, and each thread
    /// computes the dot products of its range; the calling thread takes
    /// the last one. Every `y[i]` is computed as by `dots`: the same
    /// result bit for bit.
    pub(crate) fn dots_parallel<T: Float>(&self, values: &[T], x: &[T], y: &mut [T], threads: usize) {
        let threads = threads.clamp(1, MAX_THREADS).min(cores());
        let nnz = to_usize(self.ptr.last().copied().unwrap_or(0));
        std::thread::scope(|scope| {
            let (mut rest, mut from) = (y, 0usize);
            for t in 1..threads {
                // The first slice starting at or after t/threads of the elements.
                let target = to_u64(share(nnz, t, threads));
                let to = self
                    .ptr
                    .partition_point(|&p| p < target)
                    .clamp(from, from.saturating_add(rest.len()));
                let (part, tail) = rest.split_at_mut(to.saturating_sub(from));
                let ptr = self.ptr.get(from..=to).unwrap_or_default();
                spawn_or_run(scope, move || dot_slices(ptr, self.idx, values, x, part));
                (rest, from) = (tail, to);
            }
            dot_slices(self.ptr.get(from..).unwrap_or_default(), self.idx, values, x, rest);
        });
    }
}

/// `y[i]` = the dot product of slice `i` with `x`, over the slices of the
/// pointer window `ptr` (`ptr.len() - 1` slices, positions absolute in
/// `idx` and `values`), summed in storage order; an index past `x` reads 0.
/// Slices that [`pairs`] does not yield (data never validated) leave 0.
/// Prefetches when `x` is larger than [`CACHED_BYTES`].
fn dot_slices<T: Float>(ptr: &[u64], idx: &[u64], values: &[T], x: &[T], y: &mut [T]) {
    if !cached(x) {
        dot_slices_with::<T, true>(ptr, idx, values, x, y);
    } else {
        dot_slices_with::<T, false>(ptr, idx, values, x, y);
    }
}

/// [`dot_slices`]; with `PREFETCH`, the `x` entry of the index
/// [`prefetch::DISTANCE`] elements on is requested while each element is
/// read.
#[inline(never)] // its own registers, as `scatter_direct_with`
fn dot_slices_with<T: Float, const PREFETCH: bool>(ptr: &[u64], idx: &[u64], values: &[T], x: &[T], y: &mut [T]) {
    let mut written = 0usize;
    let first = to_usize(ptr.first().copied().unwrap_or(0));
    let mut ahead = idx.get(first.saturating_add(prefetch::DISTANCE)..).unwrap_or_default();
    for ((cols, vals), yi) in pairs(ptr, idx, values).zip(y.iter_mut()) {
        *yi = cols
            .iter()
            .zip(vals)
            .enumerate()
            .fold(T::default(), |acc, (k, (&c, &v))| {
                if PREFETCH {
                    if let Some(later) = ahead.get(k).and_then(|&a| x.get(to_usize(a))) {
                        prefetch::prefetch(later);
                    }
                }
                acc + v * x.get(to_usize(c)).copied().unwrap_or_default()
            });
        if PREFETCH {
            ahead = ahead.get(cols.len()..).unwrap_or_default();
        }
        written = written.wrapping_add(1);
    }
    y.get_mut(written..).unwrap_or_default().fill(T::default());
}

/// A vector up to this size (bytes) stays in an L2 cache of 2 MiB (the
/// Intel host of `docs/perf-log/run-c.md`), or mostly in L2 and L3 (1 MiB of
/// L2 on the AMD host). Products whose random accesses go to it are bound
/// by the CPU: they do not prefetch (measured on the AMD host, § Run G:
/// with the hint, 0.7–0.86x with 80 KB and 2 MB vectors, 1.1–1.4x from 4
/// MB), and `CscView::mul_vec_parallel` runs them on one thread.
pub(crate) const CACHED_BYTES: usize = 2 << 20;

/// Whether `v`, the vector a product's random accesses go to, is within
/// [`CACHED_BYTES`]: then the product neither prefetches ([`prefetch`])
/// nor splits `y` over threads.
fn cached<T>(v: &[T]) -> bool {
    std::mem::size_of_val(v) <= CACHED_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::scan::tests::arrays as csc;
    use crate::kernels::threads::tests::refusing;

    /// The products on threads the OS refuses: every part runs on the
    /// calling thread, and `y` is the one-thread result bit for bit.
    #[test]
    fn refused_threads_still_compute_every_part() {
        let ptr: Vec<u64> = (0..=300).map(|j| j * 3).collect();
        let idx: Vec<u64> = (0..900).map(|k| (k * 7) % 200).collect();
        let c = csc(&ptr, &idx, 200);
        let values: Vec<f64> = (0..900).map(|k| f64::from(k) * 0.25 - 7.0).collect();
        let x: Vec<f64> = (0..300).map(|j| 1.0 + f64::from(j) / 3.0).collect();
        let mut one = vec![0.0; 200];
        c.scatter(&values, &x, &mut one);
        // Row 7 holds k = 1, 201, 401, 601, 801 (7k = 7 mod 200), in columns k / 3.
        assert_eq!(one[7], 32315.5);
        let mut refused = vec![0.0; 200];
        refusing(|| c.scatter_threads(&values, &x, &mut refused, 4));
        assert_eq!(refused, one);

        let xt: Vec<f64> = (0..200).map(|i| f64::from(i) - 50.0).collect();
        let mut dots = vec![0.0; 300];
        c.dots(&values, &xt, &mut dots);
        let mut refused = vec![0.0; 300];
        refusing(|| c.dots_parallel(&values, &xt, &mut refused, 4));
        assert_eq!(refused, dots);
        assert_eq!(dots[0], -7.0 * -50.0 + -6.75 * -43.0 + -6.5 * -36.0);
    }

    /// A value from random bits with a spread of magnitudes (exponents
    /// -20..20, both signs), so that adding in another order would change
    /// the rounding.
    pub(super) fn float_from(bits: u64) -> f64 {
        let mantissa = 1.0 + (bits & 0xFFFF_FFFF) as f64 / 4_294_967_296.0;
        let exponent = ((bits >> 32) % 41) as i32 - 20;
        let sign = if bits >> 63 == 1 { -1.0 } else { 1.0 };
        sign * mantissa * 2f64.powi(exponent)
    }

    /// Runs the blocked scatter with `blocking` and the direct one, both
    /// into a `y` full of garbage, and compares the bits; then both into
    /// windows of rows (`first > 0`, a `y` ending before `nrows`), which
    /// must hold those rows of the whole product, and `scatter_threads`
    /// on 2, 3 and 5 threads, which must equal `scatter`.
    fn blocked_equals_direct<T: Float + std::fmt::Debug>(
        c: &Arrays<'_>,
        values: &[T],
        x: &[T],
        nrows: usize,
        blocking: Blocking,
        bits: impl Fn(T) -> u64,
        garbage: T,
    ) -> Result<(), String> {
        let mut direct = vec![garbage; nrows];
        c.scatter_direct(values, x, &mut direct, 0);
        let mut blocked = vec![garbage; nrows];
        if !c.scatter_blocked(values, x, &mut blocked, 0, blocking) {
            return Err(format!("{blocking:?} refused"));
        }
        let d: Vec<u64> = direct.iter().map(|&v| bits(v)).collect();
        let b: Vec<u64> = blocked.iter().map(|&v| bits(v)).collect();
        if d != b {
            return Err(format!("{blocking:?}: direct {direct:?} blocked {blocked:?}"));
        }
        // And `scatter`, whichever path it takes, agrees too.
        let mut chosen = vec![garbage; nrows];
        c.scatter(values, x, &mut chosen);
        if chosen.iter().map(|&v| bits(v)).collect::<Vec<u64>>() != d {
            return Err("scatter differs from scatter_direct".into());
        }
        for (lo, hi) in [(nrows / 3, nrows * 2 / 3), (1.min(nrows), nrows), (0, nrows / 2)] {
            let first = lo as u64;
            let mut direct = vec![garbage; hi - lo];
            c.scatter_direct(values, x, &mut direct, first);
            let mut blocked = vec![garbage; hi - lo];
            if !c.scatter_blocked(values, x, &mut blocked, first, blocking) {
                return Err(format!("{blocking:?} refused rows {lo}..{hi}"));
            }
            for (what, y) in [("direct", &direct), ("blocked", &blocked)] {
                if y.iter().map(|&v| bits(v)).ne(d[lo..hi].iter().copied()) {
                    return Err(format!("{blocking:?}: {what} rows {lo}..{hi}: {y:?}"));
                }
            }
        }
        for threads in [2, 3, 5] {
            let mut parallel = vec![garbage; nrows];
            c.scatter_threads(values, x, &mut parallel, threads);
            if parallel.iter().map(|&v| bits(v)).ne(d.iter().copied()) {
                return Err(format!("scatter_threads({threads}) differs: {parallel:?}"));
            }
        }
        Ok(())
    }

    /// A matrix for the scatters to agree on: `ptr`, `idx`, `values` and
    /// `x` of [`cases`], `nrows` rows.
    #[derive(Debug)]
    pub(super) struct Case {
        pub(super) ptr: Vec<u64>,
        pub(super) idx: Vec<u64>,
        pub(super) values: Vec<f64>,
        pub(super) x: Vec<f64>,
        pub(super) nrows: usize,
    }

    proptest::prop_compose! {
        /// Matrices with empty columns, nnz = 0, nrows = 1, repeated rows
        /// in a column (many contributions to one row), rows past `nrows`
        /// (which every scatter skips), unsorted rows (a hot row repeats:
        /// the scatters must not care), values of many magnitudes.
        pub(super) fn cases()(
            lengths in proptest::collection::vec(
                proptest::prop_oneof![3 => proptest::prelude::Just(0u64), 8 => 0u64..12, 1 => 0u64..200],
                0..40,
            ),
            nrows in proptest::prop_oneof![1usize..4, 1usize..70, 500usize..700],
            rows in proptest::collection::vec(proptest::prelude::any::<u64>(), 1..64),
            seeds in proptest::collection::vec(proptest::prelude::any::<u64>(), 1..64),
            past in 0u64..3,
        ) -> Case {
            let mut ptr = vec![0u64];
            for l in &lengths {
                let last = *ptr.last().unwrap();
                ptr.push(last + l);
            }
            let nnz = *ptr.last().unwrap() as usize;
            // Rows below nrows + past (past > 0: some out of range).
            let bound = nrows as u64 + past;
            let idx: Vec<u64> = (0..nnz).map(|k| rows[k % rows.len()].wrapping_add(k as u64) % bound).collect();
            let values: Vec<f64> = (0..nnz).map(|k| float_from(seeds[k % seeds.len()].rotate_left(k as u32))).collect();
            let x: Vec<f64> = (0..lengths.len()).map(|j| float_from(seeds[j % seeds.len()] ^ (j as u64) << 7)).collect();
            Case { ptr, idx, values, x, nrows }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(2000))]
        /// Propagation blocking gives the direct scatter's result bit for
        /// bit, for any block size and bin length, on the matrices of
        /// [`cases`]; bins that fill up many times.
        #[test]
        fn blocked_scatter_equals_direct(
            case in cases(),
            block_shift in 0u32..8,
            group in proptest::prop_oneof![proptest::prelude::Just(0u32), 1u32..4],
            bin_shift in proptest::prop_oneof![0u32..3, 3u32..7, proptest::prelude::Just(10u32)],
        ) {
            let Case { ptr, idx, values, x, nrows } = &case;
            let nrows = *nrows;
            let c = csc(ptr, idx, nrows as u64);
            let blocking = Blocking { block_shift, group, bin_shift };
            let r = blocked_equals_direct(&c, values, x, nrows, blocking, f64::to_bits, f64::NAN);
            proptest::prop_assert!(r.is_ok(), "f64: {:?}", r);
            let values: Vec<f32> = values.iter().map(|&v| v as f32).collect();
            let x: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            let r = blocked_equals_direct(&c, &values, &x, nrows, blocking, |v: f32| u64::from(v.to_bits()), f32::NAN);
            proptest::prop_assert!(r.is_ok(), "f32: {:?}", r);
        }

        /// The plan: direct for a `y` within `DIRECT_MAX_Y_BYTES` or few
        /// non-zeros; otherwise blocks of `BLOCK_BYTES`, at most `MAX_BINS`
        /// bins unless that takes more than `2^MAX_GROUP` blocks per bin,
        /// offsets that fit in `u32`, bins within `SCRATCH_BYTES` whatever
        /// `nnz` (parts within two bins' worth), and at least one
        /// contribution per `BLOCK_BYTES_PER_ENTRY` bytes of a bin's blocks.
        #[test]
        fn plan_bounds_the_scratch(
            rows in proptest::prop_oneof![0usize..1 << 24, proptest::prelude::any::<usize>()],
            nnz in proptest::prop_oneof![0u64..1 << 30, proptest::prelude::any::<u64>()],
            wide in proptest::prelude::any::<bool>(),
        ) {
            let width = if wide { 8 } else { 4 };
            let plan = Blocking::plan(rows, nnz, width);
            let small = rows.checked_mul(width).is_some_and(|b| b <= Blocking::DIRECT_MAX_Y_BYTES);
            if small || nnz < Blocking::MIN_NNZ {
                proptest::prop_assert_eq!(plan, None);
            }
            if let Some(b) = plan {
                proptest::prop_assert!(b.block_shift + b.group <= 32 && b.bin_shift < usize::BITS);
                proptest::prop_assert_eq!((1usize << b.block_shift) * width, Blocking::BLOCK_BYTES);
                proptest::prop_assert!(b.group <= Blocking::MAX_GROUP);
                let covered = 1usize << (b.block_shift + b.group);
                let bins = rows.div_ceil(covered);
                // Few bins, or as many blocks per bin as allowed; and no
                // more blocks per bin than needed.
                proptest::prop_assert!(bins <= Blocking::MAX_BINS || b.group == Blocking::MAX_GROUP);
                proptest::prop_assert!(b.group == 0 || rows.div_ceil(covered / 2) > Blocking::MAX_BINS);
                let (bin_bytes, part_bytes) = b.scratch_bytes(rows, width);
                proptest::prop_assert!(bin_bytes <= Blocking::SCRATCH_BYTES);
                proptest::prop_assert!(part_bytes <= 2 * bin_bytes / bins);
                let share = (nnz / bins as u64).clamp(1, 1 << b.bin_shift) as usize;
                proptest::prop_assert!(share * Blocking::BLOCK_BYTES_PER_ENTRY >= covered * width);
            }
        }
    }

    /// Blockings `plan` never makes but `scatter_blocked` accepts: an
    /// empty `y`, bins of 2^32 rows over a `y` of a few rows, far more
    /// blocks per bin than `y` has (the parts are capped at `y`'s blocks:
    /// 2^27 of them would take gigabytes), all rows in one block (parts
    /// fill many times), rows past `y`. Always the direct scatter's `y`.
    #[test]
    fn blocked_scatter_edges() {
        let ptr = [0u64, 3, 3, 9];
        let idx = [0u64, 1, 2, 2, 2, 2, 5, u64::from(u32::MAX), u64::MAX];
        let values: Vec<f32> = (1..=9).map(|v| v as f32 / 3.0).collect();
        let x = [1.5f32, -2.0, 0.25];
        for (nrows, block_shift, group, bin_shift) in [
            (0, 2, 1, 2),
            (6, 32, 0, 4),
            (6, 0, 32, 4),
            (6, 16, 16, 0),
            (6, 0, 27, 4),
            (6, 1, 2, 0),
            (3, 0, 1, 1),
        ] {
            let c = Arrays {
                end: 9,
                ..csc(&ptr, &idx, nrows)
            };
            let blocking = Blocking {
                block_shift,
                group,
                bin_shift,
            };
            let r = blocked_equals_direct(
                &c,
                &values,
                &x,
                nrows as usize,
                blocking,
                |v: f32| u64::from(v.to_bits()),
                f32::NAN,
            );
            assert!(r.is_ok(), "{r:?}");
        }
    }

    /// The benchmark's shape (10 M rows, 100 M non-zeros) and the tiny
    /// edge cases of the plan.
    #[test]
    fn plan_examples() {
        // 10 M rows of f32: 40 MB of y, 77 blocks of 512 KiB (2^17 rows),
        // 8 to a bin: 10 bins of 2^18 entries (20 MiB), 8 parts of 2^16
        // (4 MiB).
        let b = Blocking::plan(9_998_917, 100_000_000, 4).unwrap();
        assert_eq!((b.block_shift, b.group, b.bin_shift), (17, 3, 18));
        assert_eq!(b.scratch_bytes(9_998_917, 4), (10 << 21, 8 << 19));
        // f64: 20 bins of 8 blocks of 512 KiB would need 2^18 entries of
        // 16 bytes each (80 MiB) for 16 bytes of y per entry: direct.
        assert_eq!(Blocking::plan(9_998_917, 100_000_000, 8), None);
        // 1 M rows of f64 and 3 M of f32 (8 and 12 MiB): direct.
        assert_eq!(Blocking::plan(1 << 20, 10_000_000, 8), None);
        assert_eq!(Blocking::plan(3 << 20, 1 << 26, 4), None);
        // tests/spmv.rs: 2^21 + 3 rows of f64 (16 MiB and 24 bytes), 2 M
        // non-zeros: 33 blocks of 512 KiB, four to a bin (9 bins of 2^17
        // entries: 18 MiB); 2^22 + 3 rows of f32 likewise (2^18 entries),
        // but of f64 direct (its bins would be too sparse), and 2^21 + 3
        // of f32 (8 MiB) direct.
        let b = Blocking::plan((1 << 21) + 3, 2_000_000, 8).unwrap();
        assert_eq!((b.block_shift, b.group, b.bin_shift), (16, 2, 17));
        assert_eq!(b.scratch_bytes((1 << 21) + 3, 8), (18 << 20, 4 << 20));
        let b = Blocking::plan((1 << 22) + 3, 2_000_000, 4).unwrap();
        assert_eq!((b.block_shift, b.group, b.bin_shift), (17, 2, 18));
        assert_eq!(Blocking::plan((1 << 22) + 3, 2_000_000, 8), None);
        assert_eq!(Blocking::plan((1 << 21) + 3, 2_000_000, 4), None);
        // 5 M rows of f32: 40 blocks, four to a bin (10 bins).
        let b = Blocking::plan(5 << 20, 1 << 26, 4).unwrap();
        assert_eq!((b.block_shift, b.group), (17, 2));
        // 16 M rows of f32 (64 MiB): 16 bins of 8 blocks, 2^18 entries
        // each (the most the bound allows): 32 MiB; 17 M rows: direct.
        let b = Blocking::plan(1 << 24, 1 << 30, 4).unwrap();
        assert_eq!((b.block_shift, b.group, b.bin_shift), (17, 3, 18));
        assert_eq!(b.scratch_bytes(1 << 24, 4), (32 << 20, 8 << 19));
        assert_eq!(Blocking::plan(17 << 20, 1 << 30, 4), None);
        // f64 up to 4 M rows (16 bins of 4 blocks, 2^17 entries of 16
        // bytes: 32 MiB); one row more takes 9 bins of 8 blocks: direct.
        let b = Blocking::plan(4 << 20, 1 << 30, 8).unwrap();
        assert_eq!((b.block_shift, b.group, b.bin_shift), (16, 2, 17));
        assert_eq!(Blocking::plan((4 << 20) + 1, 1 << 30, 8), None);
        // Fewer non-zeros than a quarter of the rows: direct.
        assert!(Blocking::plan(1 << 23, 1 << 21, 4).is_some());
        assert_eq!(Blocking::plan(1 << 23, (1 << 21) - 1, 4), None);
        // y of exactly 16 MiB: direct; one more row: blocked. f64 from 2 M
        // rows and one.
        assert_eq!(Blocking::plan(1 << 22, 1 << 24, 4), None);
        assert!(Blocking::plan((1 << 22) + 1, 1 << 24, 4).is_some());
        assert_eq!(Blocking::plan(1 << 21, 1 << 30, 8), None);
        assert!(Blocking::plan((1 << 21) + 1, 1 << 30, 8).is_some());
        assert_eq!(Blocking::plan(1 << 30, Blocking::MIN_NNZ - 1, 4), None);
        // A y far too large for the bound: direct.
        assert_eq!(Blocking::plan(usize::MAX / 8, u64::MAX, 4), None);
        // A blocking past 32 bits is refused, y untouched.
        let c = csc(&[0, 1], &[0], 1);
        let mut y = [5f32];
        assert!(!c.scatter_blocked(
            &[1f32],
            &[1f32],
            &mut y,
            0,
            Blocking {
                block_shift: 30,
                group: 3,
                bin_shift: 2
            }
        ));
        assert!(!c.scatter_blocked(
            &[1f32],
            &[1f32],
            &mut y,
            0,
            Blocking {
                block_shift: 2,
                group: 0,
                bin_shift: 64
            }
        ));
        assert_eq!(y, [5.0]);
    }
}
