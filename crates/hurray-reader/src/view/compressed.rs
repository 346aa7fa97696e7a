//! The structure shared by CSC and CSR: a pointer array over "outer" slices
//! (columns for CSC, rows for CSR) and the "inner" index of every stored
//! element. CSC of A and CSR of Aᵀ are the same bytes, so one type serves
//! both and `transpose` only changes the names.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::cursor::{to_u64, to_usize};
use crate::error::{Error, Field, Result};
use crate::prefetch;
use crate::view::threads::{cores, share, spawn_or_run, MAX_THREADS};

/// Names and rules of one orientation, for errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Names {
    pub(crate) ptr: &'static str,
    pub(crate) idx: &'static str,
    /// What an outer slice is called: `column` (CSC) or `row` (CSR).
    pub(crate) outer: &'static str,
    /// What an inner index is called: `row` (CSC) or `column` (CSR).
    pub(crate) inner: &'static str,
    /// The inner indices' bound: `nrows` (CSC) or `ncols` (CSR).
    pub(crate) bound: &'static str,
    pub(crate) inv1: &'static str,
    pub(crate) inv2: &'static str,
    pub(crate) inv3: &'static str,
    pub(crate) inv4: &'static str,
}

pub(crate) const CSC: Names = Names {
    ptr: "col_ptr",
    idx: "row_indices",
    outer: "column",
    inner: "row",
    bound: "nrows",
    inv1: crate::error::rule::CSC_INV1,
    inv2: crate::error::rule::CSC_INV2,
    inv3: crate::error::rule::CSC_INV3,
    inv4: crate::error::rule::CSC_INV4,
};

pub(crate) const CSR: Names = Names {
    ptr: "row_ptr",
    idx: "col_indices",
    outer: "row",
    inner: "column",
    bound: "ncols",
    inv1: crate::error::rule::CSR_INV1,
    inv2: crate::error::rule::CSR_INV2,
    inv3: crate::error::rule::CSR_INV3,
    inv4: crate::error::rule::CSR_INV4,
};

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
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// How [`Compressed::scatter_blocked`] cuts `y`: blocks of `2^block_shift`
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
    /// (`docs/performance.md` § Run G), the direct scatter took about
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
    /// over it (`docs/performance.md` § Run E).
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
        // Enough for an even share of the non-zeros (then no bin fills up
        // early unless the rows are skewed), within the bound.
        let share = usize::try_from(nnz / crate::cursor::to_u64(bins).max(1)).unwrap_or(usize::MAX);
        let want = share
            .max(1)
            .checked_next_power_of_two()
            .map_or(usize::BITS - 1, usize::ilog2);
        let bin_shift = want.max(Self::MIN_BIN_SHIFT).min(room.max(1).ilog2());
        // Each application of a bin reads its blocks and writes them back:
        // at most BLOCK_BYTES_PER_ENTRY bytes of y per contribution, or the
        // direct scatter (a cache line per non-zero) is as good.
        let per_visit = share.clamp(1, 1usize.checked_shl(bin_shift)?);
        let covered = 1usize.checked_shl(range_shift)?.saturating_mul(width);
        if per_visit.saturating_mul(Self::BLOCK_BYTES_PER_ENTRY) < covered {
            return None;
        }
        Some(Blocking {
            block_shift,
            group,
            bin_shift,
        })
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

    /// Bytes of the bins [`Compressed::scatter_blocked`] allocates for
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
/// [`Compressed::scatter_blocked`] and the parts of [`spread`].
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
/// `index·2^block_shift ..`), in order. The block is read once first, one
/// value per cache line in address order, so that the hardware prefetcher
/// brings it into the cache at streaming speed before the random
/// additions; nothing is read for no contributions.
#[inline(never)]
fn apply<T: Float>(entries: &[(u32, T)], y: &mut [T], index: usize, block_shift: u32) {
    if entries.is_empty() {
        return;
    }
    let start = index.checked_shl(block_shift).unwrap_or(usize::MAX);
    let end = start
        .saturating_add(1usize.checked_shl(block_shift).unwrap_or(usize::MAX))
        .min(y.len());
    let Some(block) = y.get_mut(start..end) else { return };
    let line = (64 / std::mem::size_of::<T>()).max(1);
    // The sum is only there to make the reads happen.
    std::hint::black_box(block.iter().step_by(line).fold(T::default(), |a, &v| a + v));
    for &(offset, p) in entries {
        if let Some(yr) = block.get_mut(usize::try_from(offset).unwrap_or(usize::MAX)) {
            *yr = *yr + p;
        }
    }
}

/// Pointer and index arrays of a compressed sparse matrix, borrowed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Compressed<'data> {
    pub(crate) tensor: &'data str,
    pub(crate) names: Names,
    /// Number of outer slices (`ncols` for CSC); `ptr` has one more entry.
    pub(crate) outer_len: u64,
    /// Bound of the inner indices (`nrows` for CSC).
    pub(crate) inner_len: u64,
    pub(crate) nnz: u64,
    pub(crate) ptr: &'data [u64],
    pub(crate) idx: &'data [u64],
    /// File offsets of `ptr[0]` and `idx[0]`, for errors.
    pub(crate) ptr_offset: u64,
    pub(crate) idx_offset: u64,
    /// Whether the storage invariants were verified.
    pub(crate) scanned: bool,
    /// Read as the transpose of the file's layout (`CscView::transpose`,
    /// `CsrView::transpose`): errors about the file keep its names
    /// (`names`), argument errors name the view's rows and columns.
    pub(crate) transposed: bool,
}

impl<'data> Compressed<'data> {
    /// The same arrays read as the transposed layout (CSC as CSR and back):
    /// the file's names stay, the view's argument names swap.
    pub(crate) fn transposed(self) -> Self {
        Compressed {
            transposed: !self.transposed,
            ..self
        }
    }

    /// What the caller's outer and inner arguments are called: the file's
    /// slice and index words; on a transposed view swapped and said to be
    /// the transpose's (`transpose's column`), since the tensor an error
    /// names has the other shape.
    fn argument_names(&self) -> (&'static str, &'static str) {
        if self.transposed {
            (of_transpose(self.names.inner), of_transpose(self.names.outer))
        } else {
            (self.names.outer, self.names.inner)
        }
    }

    fn ptr_at(&self, i: u64) -> u64 {
        self.ptr_offset.saturating_add(i.saturating_mul(8))
    }

    fn idx_at(&self, i: u64) -> u64 {
        self.idx_offset.saturating_add(i.saturating_mul(8))
    }

    /// `ptr[i]`, 0 past the end (never a panic).
    fn ptr_entry(&self, i: u64) -> u64 {
        usize::try_from(i)
            .ok()
            .and_then(|i| self.ptr.get(i))
            .copied()
            .unwrap_or(0)
    }

    /// Verifies the four storage invariants in one pass over `ptr` and `idx`,
    /// without allocating. The fast pass only counts (see [`Scan`]); when it
    /// finds a problem, an exact pass names the first violation.
    pub(crate) fn validate(&self) -> Result<()> {
        self.validate_threads(1, &mut |_, _| {})
    }

    /// [`validate`](Self::validate) on `threads` threads (clamped to
    /// `1..=`[`MAX_THREADS`]), each scanning a contiguous range of
    /// *positions* of `idx` (cut anywhere, inside a slice too) and the
    /// outer slices that start there (`std::thread::scope`; no allocation
    /// beyond the threads themselves). Same verdict and same first error as
    /// one thread: the exact pass that names the error is sequential.
    pub(crate) fn validate_parallel(&self, threads: usize) -> Result<()> {
        self.validate_threads(threads, &mut |_, _| {})
    }

    /// The scan as [`Options::threads`](crate::Options::threads) asks for
    /// it: at most `threads` threads, fewer when the arrays are small (each
    /// thread gets at least [`MIN_PER_THREAD`] entries of `ptr` + `idx`), and
    /// `progress(done, total)` (bytes of `ptr` and `idx` scanned) every few
    /// megabytes and at the end, always on the calling thread.
    pub(crate) fn validate_with(&self, threads: usize, progress: &mut dyn FnMut(u64, u64)) -> Result<()> {
        let entries = self.ptr.len().saturating_add(self.idx.len());
        let threads = threads.min(entries / MIN_PER_THREAD).max(1);
        self.validate_threads(threads, progress)
    }

    fn validate_threads(&self, threads: usize, progress: &mut dyn FnMut(u64, u64)) -> Result<()> {
        let total = self.scan_bytes();
        let scan = self.fast_scan(threads, &mut |done| progress(done.min(total), total));
        if self.ends_ok() && scan.is_clean() {
            progress(total, total);
            return Ok(());
        }
        self.check_pointer_array()?;
        self.exact_scan()
    }

    /// Number of outer slices (`ptr` has one more entry).
    fn outer_count(&self) -> usize {
        self.ptr.len().saturating_sub(1)
    }

    /// Bytes of `ptr` and `idx` a scan reads.
    pub(crate) fn scan_bytes(&self) -> u64 {
        to_u64(self.ptr.len().saturating_add(self.idx.len())).saturating_mul(8)
    }

    /// `ptr[0] = 0` and `ptr[n] = nnz = idx.len()` (invariant 1).
    fn ends_ok(&self) -> bool {
        self.ptr.first() == Some(&0) && self.ptr.last() == Some(&self.nnz) && to_u64(self.idx.len()) == self.nnz
    }

    /// The first outer slice whose start is at or after `position` (exact
    /// when `ptr` is sorted; some slice, never a panic, when it is not).
    fn slice_at(&self, position: usize) -> usize {
        let position = to_u64(position);
        self.ptr
            .get(..self.outer_count())
            .unwrap_or_default()
            .partition_point(|&p| p < position)
    }

    /// The [`Part`] covering positions `from..to` of `idx` and the slices
    /// starting there; `first_part` / `last_part` extend it to the first /
    /// last slice.
    fn part(&self, from: usize, to: usize, first_part: bool, last_part: bool) -> Part {
        Part {
            from,
            to: to.max(from),
            first: if first_part { 0 } else { self.slice_at(from) },
            last: if last_part {
                self.outer_count()
            } else {
                self.slice_at(to)
            },
        }
    }

    /// Makes each part's slices start where the previous part's end (also
    /// on a damaged, unsorted `ptr`, where `slice_at` is not monotonic), so
    /// the parts partition the slices.
    fn chain(parts: &mut [Part]) {
        let mut end = 0usize;
        for part in parts {
            part.first = part.first.max(end);
            part.last = part.last.max(part.first);
            end = part.last;
        }
    }

    /// The fast pass on `threads` threads, thread `t` on positions
    /// `len·t/threads .. len·(t+1)/threads` of `idx`; `progress(done)`
    /// (bytes) on the calling thread, which scans the first range itself.
    fn fast_scan(&self, threads: usize, progress: &mut dyn FnMut(u64)) -> Scan {
        let threads = threads.clamp(1, MAX_THREADS);
        let len = self.idx.len();
        let share = |t: usize| share(len, t, threads);
        let mut parts = [Part::default(); MAX_THREADS];
        for (t, part) in parts.iter_mut().enumerate().take(threads) {
            let next = t.saturating_add(1);
            *part = self.part(share(t), share(next), t == 0, next == threads);
        }
        Self::chain(parts.get_mut(..threads).unwrap_or_default());
        let [head, rest @ ..] = parts;
        if threads == 1 {
            let mut done = 0u64;
            return self.scan(head, &mut |d| {
                done = done.saturating_add(d);
                progress(done)
            });
        }
        let others = AtomicU64::new(0);
        std::thread::scope(|scope| {
            let others = &others;
            let workers: Vec<_> = rest
                .iter()
                .take(threads.saturating_sub(1))
                .map(|&part| {
                    spawn_or_run(scope, move || {
                        self.scan(part, &mut |d| {
                            others.fetch_add(d, Ordering::Relaxed);
                        })
                    })
                })
                .collect();
            let mut own = 0u64;
            let mut all = self.scan(head, &mut |d| {
                own = own.saturating_add(d);
                progress(own.saturating_add(others.load(Ordering::Relaxed)));
            });
            for worker in workers {
                match worker.join() {
                    Some(part) => all.add(part),
                    None => all.failed = true,
                }
            }
            all
        })
    }

    /// The fast pass over one [`Part`], block by block: a block is
    /// [`Blocks::DEFAULT`] positions of `idx`. For each block it counts the descents
    /// of `idx` (streaming, vectorised, see [`elements`]), then walks the
    /// outer slices that start in the block — their first index and the one
    /// before it, the last of the previous non-empty slice, now in cache —
    /// to count the descents that fall on slice boundaries (allowed), check
    /// each slice's last (largest) index against the bound, and check that
    /// `ptr` does not decrease. `idx` and `ptr` are each read from memory
    /// once. Calls `progress(bytes)` with the bytes scanned since its
    /// previous call. Never panics on damaged data.
    fn scan(&self, part: Part, progress: &mut dyn FnMut(u64)) -> Scan {
        self.scan_blocks(part, Blocks::DEFAULT, progress)
    }

    /// [`scan`](Self::scan) with the block sizes of `blocks` (the tests
    /// use tiny ones).
    fn scan_blocks(&self, part: Part, blocks: Blocks, progress: &mut dyn FnMut(u64)) -> Scan {
        const REPORT: usize = 1 << 21; // indices between progress reports
                                       // Values below 2^63 are below the bound exactly when `lim - v` has
                                       // its top bit clear (`lim` < 2^63); larger values set `high` anyway.
        let lim = self.inner_len.min(1 << 63).wrapping_sub(1);
        let max = self.idx.len().saturating_sub(1);
        let mut scan = Scan::default();
        if part.to == self.idx.len() {
            // The last index of the last non-empty slice: the walk checks
            // the others' (the index before each slice start).
            if let Some(&v) = self.idx.last() {
                scan.high |= lim.wrapping_sub(v);
            }
        }
        let (mut p, mut j) = (part.from, part.first);
        let (mut reported_p, mut reported_j) = (p, j);
        // Pointer pairs `first..folded` are checked. The check runs ahead
        // of the walk, over as many slices as the previous block had: the
        // vectorised fold streams `ptr` into the cache, the walk (one
        // dependent load after another) then finds it there.
        let mut folded = part.first;
        let mut ahead = blocks.slack;
        loop {
            let q = p.saturating_add(blocks.positions).min(part.to);
            let last_block = q >= part.to;
            let e = elements(self.idx, p, q);
            scan.descents = scan.descents.wrapping_add(e.count);
            scan.high |= e.high;
            let until = j.saturating_add(ahead).min(part.last);
            if until > folded {
                scan.high |= self.pointer_flags(folded, until);
                folded = until;
            }
            // Slices starting in this block; in the last one, every slice
            // left whose start lies inside `idx` (the rest must be empty).
            let cap = if last_block { max } else { q.saturating_sub(1).min(max) };
            let (j1, o) = self.boundaries(j, part.last, cap, lim);
            scan.boundary_descents = scan.boundary_descents.wrapping_add(o.count);
            scan.high |= o.high;
            let walked = j1.saturating_sub(j);
            ahead = walked.saturating_add(walked / 8).saturating_add(blocks.slack);
            j = if last_block { part.last } else { j1 };
            if j > folded {
                scan.high |= self.pointer_flags(folded, j);
                folded = j;
            }
            p = q;
            if last_block || p.saturating_sub(reported_p) >= REPORT {
                let done = p
                    .saturating_sub(reported_p)
                    .saturating_add(j.saturating_sub(reported_j));
                progress(to_u64(done).saturating_mul(8));
                (reported_p, reported_j) = (p, j);
            }
            if last_block {
                return scan;
            }
        }
    }

    /// Over the outer slices `from..to`, stopping before the first one whose
    /// start is above `cap` (`cap < idx.len()`): counts the descents at
    /// slice boundaries — the first index of a non-empty slice not above the
    /// index before it, the last of the previous non-empty slice — so the
    /// caller can subtract them; ORs `lim - v` for that index before (see
    /// [`scan`](Self::scan)). Returns where it stopped; the caller checks
    /// the pointer pairs. Two loads of `idx` per slice, adjacent and
    /// in cache; no branch on the data but the stop.
    ///
    /// A slice starting at position 0 compares its first index with 0, as
    /// if `idx[-1] = 0`; [`elements`] counts position 0 the same way.
    #[inline(never)] // its own registers: inlined, the loop spills
    fn boundaries(&self, from: usize, to: usize, cap: usize, lim: u64) -> (usize, Outer) {
        let (Some(ptrs), Some(window)) = (self.ptr.get(from..=to), self.idx.get(..=cap)) else {
            return (from, Outer::default()); // nnz = 0, or a range past the end
        };
        let (Some((&first, rest)), cap) = (ptrs.split_first(), to_u64(cap)) else {
            return (from, Outer::default());
        };
        let at = |i: u64| {
            window
                .get(usize::try_from(i).unwrap_or(usize::MAX))
                .copied()
                .unwrap_or(0)
        };
        let (mut count, mut high) = (0u64, 0u64);
        let mut start = first;
        let mut walked = rest.len();
        for (k, &end) in rest.iter().enumerate() {
            if start > cap {
                walked = k;
                break;
            }
            let before = at(start.wrapping_sub(1));
            count = count.wrapping_add(u64::from((start < end) & (at(start) <= before)));
            high |= lim.wrapping_sub(before);
            start = end;
        }
        (from.saturating_add(walked), Outer { count, high })
    }

    /// The pointer flags (`b - a | b`) of the pairs `from..to` (over
    /// `ptr[from..=to]`).
    fn pointer_flags(&self, from: usize, to: usize) -> u64 {
        let ptrs = self.ptr.get(from..=to).unwrap_or_default();
        let (pa, pb) = (
            ptrs.get(..ptrs.len().saturating_sub(1)).unwrap_or_default(),
            ptrs.get(1..).unwrap_or_default(),
        );
        pa.iter()
            .zip(pb)
            .fold(0u64, |acc, (&a, &b)| acc | b.wrapping_sub(a) | b)
    }

    /// `y = M·x` for this structure read as CSC (`y[idx[k]] += v[k] · x[j]`
    /// over slice `j`), `y` overwritten. When `y` is larger than
    /// [`Blocking::DIRECT_MAX_Y_BYTES`] (see [`Blocking::plan`]) the
    /// contributions go through
    /// [`scatter_blocked`](Self::scatter_blocked), otherwise (or when its
    /// scratch cannot be allocated) straight into `y`
    /// ([`scatter_direct`](Self::scatter_direct)). Both add the same
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
        let nnz = u128::from(self.nnz)
            .saturating_mul(to_u64(y.len()).into())
            .checked_div(self.inner_len.into())
            .map_or(self.nnz, |n| u64::try_from(n).unwrap_or(u64::MAX));
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

    /// Checks `x.len() = expected_x` and `y.len() = expected_y` for a
    /// product `y = M·x`. On a transposed view the error names the
    /// transpose's dimension (`nrows of the transpose`): the tensor it
    /// names has the other shape.
    pub(crate) fn check_lengths(
        &self,
        (x, x_name, expected_x): (usize, &'static str, u64),
        (y, y_name, expected_y): (usize, &'static str, u64),
    ) -> Result<()> {
        for (what, len, expected_name, expected) in [("x", x, x_name, expected_x), ("y", y, y_name, expected_y)] {
            if to_u64(len) != expected {
                let expected_name = if self.transposed {
                    of_transpose(expected_name)
                } else {
                    expected_name
                };
                return Err(Error::LengthMismatch {
                    tensor: self.tensor.into(),
                    what,
                    len: to_u64(len),
                    expected_name,
                    expected,
                });
            }
        }
        Ok(())
    }

    /// The exact pass: slice by slice, naming the first violation.
    fn exact_scan(&self) -> Result<()> {
        let mut start = 0usize;
        for (j, &end) in self.ptr.iter().skip(1).enumerate() {
            let end = usize::try_from(end).unwrap_or(usize::MAX);
            let slice = self.idx.get(start..end).unwrap_or_default();
            if !slice_ok(slice, self.inner_len) {
                return Err(self.slice_error(to_u64(j), start, slice));
            }
            start = end;
        }
        Ok(())
    }

    /// Invariants 1 and 2: `ptr[0] = 0`, `ptr[n] = nnz`, non-decreasing.
    pub(crate) fn check_pointer_array(&self) -> Result<()> {
        if self.ptr_entry(0) != 0 {
            return Err(self.ptr_first());
        }
        // The first decrease names the broken pair, unless a pointer before
        // it is above nnz: that one is the damaged entry when the last is
        // nnz, else the last is (as lookups say). This runs only once the
        // fast pass has found a problem.
        let decrease = self.ptr.windows(2).position(|w| matches!(w, [a, b] if b < a));
        if let Some(d) = decrease {
            let ptrs = self.ptr.get(..=d).unwrap_or_default();
            if let Some(k) = ptrs.iter().position(|&p| p > self.nnz) {
                self.check_last()?;
                return Err(self.ptr_too_large(to_u64(k)));
            }
            return Err(self.ptr_decreasing(to_u64(d) + 1));
        }
        self.check_last()
    }

    /// `ptr[0]` is not 0 (invariant 1).
    fn ptr_first(&self) -> Error {
        Error::PtrFirst {
            tensor: self.tensor.into(),
            array: self.names.ptr,
            offset: self.ptr_offset,
            value: self.ptr_entry(0),
            rule: self.names.inv1,
        }
    }

    /// `ptr[position]` is below the entry before it (invariant 2).
    fn ptr_decreasing(&self, position: u64) -> Error {
        Error::PtrDecreasing {
            tensor: self.tensor.into(),
            array: self.names.ptr,
            position,
            offset: self.ptr_at(position),
            value: self.ptr_entry(position),
            previous: self.ptr_entry(position.saturating_sub(1)),
            rule: self.names.inv2,
        }
    }

    /// Invariant 1's end: `ptr[n] = nnz`.
    fn check_last(&self) -> Result<()> {
        let last = self.ptr.last().copied().unwrap_or(0);
        if last != self.nnz {
            return Err(Error::PtrLast {
                tensor: self.tensor.into(),
                array: self.names.ptr,
                position: self.outer_len,
                offset: self.ptr_at(self.outer_len),
                value: last,
                expected_name: "nnz",
                expected: self.nnz,
                rule: self.names.inv1,
            });
        }
        Ok(())
    }

    /// `ptr[position]` (before the last, which is nnz) is above nnz: the
    /// array decreases after it (invariant 2).
    fn ptr_too_large(&self, position: u64) -> Error {
        let value = self.ptr_entry(position);
        let next = position.saturating_add(1);
        Error::PtrTooLarge {
            tensor: self.tensor.into(),
            array: self.names.ptr,
            position,
            offset: self.ptr_at(position),
            value,
            nnz: self.nnz,
            last: self.outer_len,
            next: (next <= self.outer_len)
                .then(|| self.ptr_entry(next))
                .filter(|&next| next < value),
            rule: self.names.inv2,
        }
    }

    /// Names the first element of `slice` (outer slice `j`, starting at
    /// `start` in `idx`) that breaks invariant 3 or 4.
    fn slice_error(&self, j: u64, start: usize, slice: &[u64]) -> Error {
        let mut previous: Option<u64> = None;
        for (k, &v) in slice.iter().enumerate() {
            let position = to_u64(start.saturating_add(k));
            if let Some(p) = previous {
                if v <= p {
                    return Error::NotIncreasing {
                        tensor: self.tensor.into(),
                        array: self.names.idx,
                        slice: self.names.outer,
                        slice_index: j,
                        position,
                        offset: self.idx_at(position),
                        value: v,
                        previous: p,
                        rule: self.names.inv3,
                    };
                }
            }
            if v >= self.inner_len {
                return Error::IndexOutOfBounds {
                    tensor: self.tensor.into(),
                    array: self.names.idx,
                    position,
                    offset: self.idx_at(position),
                    value: v,
                    bound: self.inner_len,
                    bound_name: Field::new(self.names.bound),
                    rule: self.names.inv4,
                };
            }
            previous = Some(v);
        }
        // Unreachable when slice_ok failed; keep a truthful fallback.
        Error::NotIncreasing {
            tensor: self.tensor.into(),
            array: self.names.idx,
            slice: self.names.outer,
            slice_index: j,
            position: to_u64(start),
            offset: self.idx_at(to_u64(start)),
            value: 0,
            previous: 0,
            rule: self.names.inv3,
        }
    }

    /// The range of outer slice `j` in `idx`/values, checked: `j` in range,
    /// and (when not scanned) `ptr[j] <= ptr[j+1] <= nnz` and the slice's
    /// indices sorted and in bounds.
    pub(crate) fn slice_range(&self, j: u64) -> Result<std::ops::Range<usize>> {
        if j >= self.outer_len {
            return Err(Error::IndexArgument {
                tensor: self.tensor.into(),
                what: self.argument_names().0,
                index: j,
                bound: self.outer_len,
            });
        }
        let (start, end) = (self.ptr_entry(j), self.ptr_entry(j + 1));
        if !self.scanned {
            // The two pointers in array order, as the full check names
            // them: the first that is wrong, and for the same reason.
            if j == 0 && start != 0 {
                return Err(self.ptr_first());
            }
            // A pointer above nnz: the array decreases after it when its last
            // entry is nnz (read here, O(1)), as the full check says; else
            // that last entry is the one to name.
            if start > self.nnz || end > self.nnz {
                self.check_last()?;
                return Err(self.ptr_too_large(if start > self.nnz { j } else { j + 1 }));
            }
            if end < start {
                return Err(self.ptr_decreasing(j + 1));
            }
            // The last slice ends at nnz (invariant 1): a last pointer below
            // it would hide the entries after it.
            if j + 1 == self.outer_len {
                self.check_last()?;
            }
        }
        let range = usize::try_from(start).unwrap_or(usize::MAX)..usize::try_from(end).unwrap_or(usize::MAX);
        if !self.scanned {
            let slice = self.idx.get(range.clone()).unwrap_or_default();
            if !slice_ok(slice, self.inner_len) {
                return Err(self.slice_error(j, range.start, slice));
            }
        }
        Ok(range)
    }

    /// Position in `idx`/values of the element at (`inner`, `outer`), by
    /// binary search in the outer slice; `None` for an implicit zero.
    pub(crate) fn find(&self, inner: u64, outer: u64) -> Result<Option<usize>> {
        let range = self.slice_range(outer)?;
        if inner >= self.inner_len {
            return Err(Error::IndexArgument {
                tensor: self.tensor.into(),
                what: self.argument_names().1,
                index: inner,
                bound: self.inner_len,
            });
        }
        let start = range.start;
        let slice = self.idx.get(range).unwrap_or_default();
        Ok(slice.binary_search(&inner).ok().map(|k| start + k))
    }
}

/// The outer slices of a compressed matrix, in order: the columns of a CSC
/// view ([`CscView::columns`](crate::CscView::columns)) or the rows of a
/// CSR view ([`CsrView::rows`](crate::CsrView::rows)). Each item is
/// `(j, indices, values)`: `j` the column (row) number, `indices` its row
/// (column) indices, ascending, and `values` its values, both borrowed
/// from the file with `ptr[j + 1] - ptr[j]` entries (`layouts/csc.md` §
/// Column Iteration, `layouts/csr.md` § Row Iteration). No check and no
/// `Result` per slice: the view was validated before the iterator was
/// made. One item per slice, empty slices included (`ncols` items for CSC,
/// `nrows` for CSR), from either end.
#[derive(Debug, Clone)]
pub struct Slices<'data, T> {
    slices: Contiguous<'data, T>,
    next: u64,
}

impl<'data, T> Slices<'data, T> {
    /// Over `values` and the arrays of `c`, whose invariants the caller
    /// has verified. (Were they broken, the iteration would end at the
    /// first slice that does not fit: never a panic.)
    pub(crate) fn new(c: &Compressed<'data>, values: &'data [T]) -> Self {
        Slices {
            slices: pairs(c.ptr, c.idx, values),
            next: 0,
        }
    }
}

/// The indices and values of each slice of the pointer window `ptr`
/// (`ptr.len() - 1` slices, positions absolute in `idx` and `values`), for
/// the products: [`Contiguous`].
fn pairs<'s, T>(ptr: &'s [u64], idx: &'s [u64], values: &'s [T]) -> Contiguous<'s, T> {
    let range = ptr.first().map_or(0, |&p| to_usize(p))..ptr.last().map_or(0, |&p| to_usize(p));
    Contiguous {
        pointers: ptr.windows(2),
        rest: (
            idx.get(range.clone()).unwrap_or_default(),
            values.get(range).unwrap_or_default(),
        ),
    }
}

/// The slices of validated data, cut off the front (or the back) of `idx`
/// and `values` one after the other (validated slices are contiguous)
/// rather than taken by range (`get(start..end)` on both arrays): with
/// ranges LLVM may turn the two checks into `cmov`s that the slice's loads
/// wait for, which measured ~20% slower in the dot products on the 100 M
/// benchmark (`docs/performance.md` § 3), and whether it did changed from
/// one build to another. A pointer pair that does not fit (only in data
/// never validated) ends the iteration.
#[derive(Debug, Clone)]
struct Contiguous<'s, T> {
    pointers: std::slice::Windows<'s, u64>,
    rest: (&'s [u64], &'s [T]),
}

impl<'s, T> Iterator for Contiguous<'s, T> {
    type Item = (&'s [u64], &'s [T]);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let &[a, b] = self.pointers.next()? else {
            return None; // unreachable: windows of two
        };
        let len = to_usize(b.wrapping_sub(a));
        let (indices, indices_rest) = self.rest.0.split_at_checked(len)?;
        let (values, values_rest) = self.rest.1.split_at_checked(len)?;
        self.rest = (indices_rest, values_rest);
        Some((indices, values))
    }
}

impl<T> DoubleEndedIterator for Contiguous<'_, T> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        let &[a, b] = self.pointers.next_back()? else {
            return None; // unreachable: windows of two
        };
        let len = to_usize(b.wrapping_sub(a));
        let (indices_rest, indices) = self.rest.0.split_at_checked(self.rest.0.len().checked_sub(len)?)?;
        let (values_rest, values) = self.rest.1.split_at_checked(self.rest.1.len().checked_sub(len)?)?;
        self.rest = (indices_rest, values_rest);
        Some((indices, values))
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

impl<'data, T> Iterator for Slices<'data, T> {
    type Item = (u64, &'data [u64], &'data [T]);

    fn next(&mut self) -> Option<Self::Item> {
        let (indices, values) = self.slices.next()?;
        let j = self.next;
        self.next = j.saturating_add(1);
        Some((j, indices, values))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.slices.pointers.size_hint()
    }
}

impl<T> DoubleEndedIterator for Slices<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let (indices, values) = self.slices.next_back()?;
        // The slices not yet yielded are next..next + len; this was the last.
        let j = self.next.saturating_add(to_u64(self.slices.pointers.len()));
        Some((j, indices, values))
    }
}

impl<T> ExactSizeIterator for Slices<'_, T> {}

impl<T> std::iter::FusedIterator for Slices<'_, T> {}

/// A vector up to this size (bytes) stays in an L2 cache of 2 MiB (the
/// Intel host of `docs/performance.md`), or mostly in L2 and L3 (1 MiB of
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

/// How errors about a transposed view name its rows, columns and their
/// counts (`transpose's row`, `nrows of the transpose`): the tensor they
/// name has the other shape. Other words are returned as they are.
fn of_transpose(word: &'static str) -> &'static str {
    match word {
        "row" => "transpose's row",
        "column" => "transpose's column",
        "nrows" => "nrows of the transpose",
        "ncols" => "ncols of the transpose",
        other => other,
    }
}

/// Block sizes of the fast pass.
#[derive(Debug, Clone, Copy)]
struct Blocks {
    /// Positions of `idx` per block.
    positions: usize,
    /// Pointer pairs checked ahead of the boundary walk, beyond the number
    /// of slices the previous block had.
    slack: usize,
}

impl Blocks {
    /// 256 positions (2 KiB, in the L1 cache for the boundary walk that
    /// follows); 16 pointers of slack. Short blocks keep each walk short:
    /// the memory requests that [`elements`]' touch-ahead (`AHEAD` = 4
    /// blocks on) and the hardware prefetcher have in flight cover it, so
    /// memory stays busy while the CPU walks. Measured against 4 Ki positions
    /// in four processes (docs/performance.md § 2, "Block size"): one thread,
    /// 10 rows a column 0.60–0.73 → 0.66–0.84 of the sum, 2 rows a column
    /// 0.46–0.54 → 0.54–0.64, one column within noise (0.76–0.88 →
    /// 0.77–0.89); two threads unchanged.
    const DEFAULT: Blocks = Blocks {
        positions: 256,
        slack: 16,
    };
}

/// Entries of `ptr` + `idx` per thread below which
/// [`Compressed::validate_with`] uses fewer threads than asked (a thread
/// costs tens of microseconds to start; 256 Ki entries take about as long
/// to scan).
pub(crate) const MIN_PER_THREAD: usize = 1 << 18;

/// One thread's share of the fast pass: positions `from..to` of `idx` (the
/// descents at those positions and their bounds), and outer slices
/// `first..last` (their boundary descents and pointer pairs).
#[derive(Debug, Default, Clone, Copy)]
struct Part {
    from: usize,
    to: usize,
    first: usize,
    last: usize,
}

/// What the fast pass found. Clean when every descent of `idx` falls on a
/// slice boundary, no value was out of bounds or too large for the
/// subtraction trick, and `ptr` never decreased.
#[derive(Debug, Default, Clone, Copy)]
struct Scan {
    descents: u64,
    boundary_descents: u64,
    /// OR of pointer differences, pointers, values and `lim - value` of
    /// each slice's last value: a set top bit means a pointer decreased, an
    /// index is out of bounds, or a value is >= 2^63 (the exact pass decides).
    high: u64,
    /// A scanning thread panicked (cannot happen; then the exact pass decides).
    failed: bool,
}

impl Scan {
    fn add(&mut self, other: Scan) {
        self.descents = self.descents.wrapping_add(other.descents);
        self.boundary_descents = self.boundary_descents.wrapping_add(other.boundary_descents);
        self.high |= other.high;
        self.failed |= other.failed;
    }

    fn is_clean(&self) -> bool {
        self.descents == self.boundary_descents && self.high >> 63 == 0 && !self.failed
    }
}

/// Boundary descents and pointer flags of a run of outer slices.
#[derive(Debug, Default, Clone, Copy)]
struct Outer {
    count: u64,
    high: u64,
}

/// Descents counted over a range of `idx`.
#[derive(Debug, Default, Clone, Copy)]
struct Descents {
    count: u64,
    high: u64,
}

/// Over positions `start..end` of `idx`: counts the positions `i` where
/// `idx[i] <= idx[i - 1]` (position 0 as if `idx[-1] = 0`, like
/// [`Compressed::boundaries`]), and ORs the values together.
///
/// For `a, b < 2^63`, `b <= a` exactly when `b - a - 1` (wrapping) has its
/// top bit set: a subtraction and a shift, which SSE2 vectorises (it has no
/// 64-bit compare). When any value has its top bit set (`high`), the count is
/// not trusted and the caller runs the exact pass.
fn elements(idx: &[u64], start: usize, end: usize) -> Descents {
    let (mut count, mut high) = (0u64, 0u64);
    if start == 0 && end > 0 {
        if let Some(&v) = idx.first() {
            count = u64::from(v == 0);
            high = v;
        }
    }
    let start = start.max(1);
    let previous = idx
        .get(start.saturating_sub(1)..end.saturating_sub(1))
        .unwrap_or_default();
    let current = idx.get(start..end).unwrap_or_default();
    // The loop reads one value `AHEAD` positions on per cache line it
    // consumes (the value joins `high`, where it belongs anyway): loads the
    // hardware sees early, so the data streams in while the CPU works.
    // Without them the loop (about 34 instructions per cache line) and the
    // boundary walk between blocks keep too few misses in flight to reach
    // the memory bandwidth (measured: 0.69 of the one-thread sum on 10
    // rows per column without, 0.79 with).
    let ahead = idx.get(start.saturating_add(AHEAD)..).unwrap_or_default();
    let split = current.len().min(ahead.len()) / LINE * LINE;
    let (Some((p_main, p_rest)), Some((c_main, c_rest))) =
        (previous.split_at_checked(split), current.split_at_checked(split))
    else {
        return Descents::default(); // unreachable: both are at least `split` long
    };
    // Per-lane accumulators, summed once at the end: the compiler keeps
    // them in vector registers across lines.
    let (mut counts, mut highs) = ([0u64; LINE], [0u64; LINE]);
    for ((p, c), a) in p_main
        .chunks_exact(LINE)
        .zip(c_main.chunks_exact(LINE))
        .zip(ahead.chunks_exact(LINE))
    {
        let (Ok(p), Ok(c)) = (<&[u64; LINE]>::try_from(p), <&[u64; LINE]>::try_from(c)) else {
            continue; // unreachable: chunks_exact
        };
        high |= a.first().copied().unwrap_or(0);
        for (((n, h), &a), &b) in counts.iter_mut().zip(highs.iter_mut()).zip(p).zip(c) {
            *n = n.wrapping_add(b.wrapping_sub(a).wrapping_sub(1) >> 63);
            *h |= b;
        }
    }
    for (&a, &b) in p_rest.iter().zip(c_rest) {
        count = count.wrapping_add(b.wrapping_sub(a).wrapping_sub(1) >> 63);
        high |= b;
    }
    let count = counts.iter().fold(count, |s, &n| s.wrapping_add(n));
    let high = highs.iter().fold(high, |s, &h| s | h);
    Descents { count, high }
}

/// `u64`s per cache line.
const LINE: usize = 8;

/// How far ahead (in positions) [`elements`] touches `idx`.
const AHEAD: usize = 1024;

/// True when `slice` is strictly increasing and its last (largest) entry is
/// below `bound`. Branch-free over the slice so the loop vectorises.
#[inline]
pub(crate) fn slice_ok(slice: &[u64], bound: u64) -> bool {
    let (Some(head), Some(tail)) = (slice.get(..slice.len().saturating_sub(1)), slice.get(1..)) else {
        return true;
    };
    let unsorted = head.iter().zip(tail).fold(false, |bad, (a, b)| bad | (b <= a));
    let last_ok = slice.last().is_none_or(|&v| v < bound);
    !unsorted && last_ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::threads::tests::refusing;

    fn csc<'a>(ptr: &'a [u64], idx: &'a [u64], nrows: u64) -> Compressed<'a> {
        Compressed {
            tensor: "A",
            names: CSC,
            outer_len: to_u64(ptr.len()) - 1,
            inner_len: nrows,
            nnz: to_u64(idx.len()),
            ptr,
            idx,
            ptr_offset: 1000,
            idx_offset: 2000,
            scanned: false,
            transposed: false,
        }
    }

    /// The fast pass's verdict must equal the exact pass's on any input,
    /// valid or damaged (the fast pass decides alone when it is clean).
    fn fast_verdict(c: &Compressed<'_>) -> bool {
        c.ends_ok() && c.fast_scan(1, &mut |_| {}).is_clean()
    }

    /// The fast pass over ranges cut at `cuts` (positions of `idx`, any
    /// order, duplicates allowed; inside slices too), run one after the
    /// other on this thread: what `fast_scan` does on several threads.
    fn split_verdict(c: &Compressed<'_>, cuts: &[usize]) -> bool {
        split_verdict_blocks(c, cuts, Blocks::DEFAULT)
    }

    fn split_verdict_blocks(c: &Compressed<'_>, cuts: &[usize], blocks: Blocks) -> bool {
        let len = c.idx.len();
        let mut points: Vec<usize> = cuts.iter().map(|&x| x.min(len)).collect();
        points.push(0);
        points.push(len);
        points.sort_unstable();
        let n = points.len() - 1;
        let mut parts: Vec<Part> = points
            .windows(2)
            .enumerate()
            .map(|(t, w)| c.part(w[0], w[1], t == 0, t + 1 == n))
            .collect();
        Compressed::chain(&mut parts);
        // The parts partition the positions and the slices.
        assert_eq!(parts.first().map(|p| (p.from, p.first)), Some((0, 0)));
        assert_eq!(parts.last().map(|p| (p.to, p.last)), Some((len, c.outer_count())));
        for w in parts.windows(2) {
            assert_eq!((w[0].to, w[0].last), (w[1].from, w[1].first));
        }
        let mut all = Scan::default();
        for part in parts {
            all.add(c.scan_blocks(part, blocks, &mut |_| {}));
        }
        c.ends_ok() && all.is_clean()
    }

    fn exact_verdict(c: &Compressed<'_>) -> bool {
        c.check_pointer_array().is_ok() && c.exact_scan().is_ok()
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(3000))]
        #[test]
        fn fast_and_exact_passes_agree(
            lengths in proptest::collection::vec(
                proptest::prop_oneof![8 => 0u64..12, 1 => 0u64..300],
                0..40,
            ),
            rows in proptest::collection::vec(0u64..16, 0..400),
            nrows in proptest::prop_oneof![0u64..18, 300u64..320, proptest::prelude::Just(1u64 << 63)],
            damage in proptest::option::of((0usize..3000, proptest::prelude::any::<u64>())),
            small_damage in proptest::option::of((0usize..3000, 0u64..20)),
            ptr_damage in proptest::option::of((0usize..41, 0u64..3000)),
            cuts in proptest::collection::vec(0usize..3000, 0..6),
            block in 1usize..24,
            slack in 0usize..4,
        ) {
            let mut ptr = vec![0u64];
            for l in &lengths {
                let last = *ptr.last().unwrap();
                ptr.push(last + l);
            }
            let nnz = *ptr.last().unwrap() as usize;
            // Rows sorted within each slice (valid) unless damaged below.
            let mut idx: Vec<u64> = (0..nnz).map(|i| rows.get(i % 400).copied().unwrap_or(0)).collect();
            for w in ptr.windows(2) {
                let slice = &mut idx[w[0] as usize..w[1] as usize];
                slice.sort_unstable();
                for k in 1..slice.len() {
                    if slice[k] <= slice[k - 1] {
                        slice[k] = slice[k - 1] + 1;
                    }
                }
            }
            for (at, v) in damage.into_iter().chain(small_damage) {
                let at = at % nnz.max(1);
                if let Some(x) = idx.get_mut(at) { *x = v; }
            }
            if let Some((at, v)) = ptr_damage {
                if let Some(x) = ptr.get_mut(at) { *x = v; }
            }
            // Cuts anywhere in idx (inside slices too), scaled to its length.
            let cuts: Vec<usize> = cuts.iter().map(|&x| x % (nnz + 1)).collect();
            let c = Compressed { nnz: nnz as u64, ..csc(&ptr, &idx, nrows) };
            let exact = exact_verdict(&c);
            proptest::prop_assert_eq!(fast_verdict(&c), exact);
            proptest::prop_assert_eq!(split_verdict(&c, &cuts), exact);
            let blocks = Blocks { positions: block, slack };
            proptest::prop_assert_eq!(split_verdict_blocks(&c, &cuts, blocks), exact);
            proptest::prop_assert_eq!(split_verdict_blocks(&c, &[], blocks), exact);
            let one = c.validate();
            proptest::prop_assert_eq!(one.is_ok(), exact);
            for threads in [2, 3, 5, 64] {
                proptest::prop_assert_eq!(&c.validate_parallel(threads), &one);
            }
            // Threads the OS refuses: their parts run on this thread.
            proptest::prop_assert_eq!(&refusing(|| c.validate_parallel(3)), &one);
        }
    }

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

    /// A decreasing pointer that nothing but the pointer check sees (the
    /// rows increase across the whole array), under every split and block
    /// size: each pair must be checked by some part.
    #[test]
    fn every_split_checks_every_pointer_pair() {
        let idx: Vec<u64> = (0..7).collect();
        for ptr in [
            [0u64, 5, 2, 7],
            [0, 2, 1, 7],
            [0, 7, 6, 7],
            [0, 1, 0, 7],
            [0, 6, 9, 7],
            [0, 3, 9, 7],
        ] {
            let c = csc(&ptr, &idx, 10);
            assert!(!exact_verdict(&c));
            for a in 0..=7 {
                for b in a..=7 {
                    for positions in 1..5 {
                        for slack in 0..3 {
                            let blocks = Blocks { positions, slack };
                            assert!(
                                !split_verdict_blocks(&c, &[a, b], blocks),
                                "{ptr:?} cut {a},{b} {blocks:?}"
                            );
                        }
                    }
                }
            }
        }
        let valid = csc(&[0, 2, 5, 7], &idx, 10);
        assert!(split_verdict_blocks(&valid, &[3], Blocks { positions: 1, slack: 0 }));
    }

    /// Every position of one long column as a cut, and a few cut sets with
    /// the only violation right at, before and after a cut.
    #[test]
    fn cuts_inside_one_long_column() {
        let ptr = [0u64, 0, 100, 100];
        let valid: Vec<u64> = (0..100).map(|i| 3 * i + 1).collect();
        let c = csc(&ptr, &valid, 300);
        for cut in 0..=100 {
            assert!(split_verdict(&c, &[cut]), "cut {cut}");
            assert!(split_verdict(&c, &[cut, 100 - cut, cut / 2]), "cuts at {cut}");
        }
        for bad in 1..100 {
            let mut idx = valid.clone();
            idx[bad] = idx[bad - 1]; // a repeated row at position `bad`
            let c = csc(&ptr, &idx, 300);
            for cut in [bad - 1, bad, bad + 1] {
                assert!(!split_verdict(&c, &[cut]), "bad {bad}, cut {cut}");
            }
            let e = c.validate_parallel(7).unwrap_err();
            assert!(matches!(e, Error::NotIncreasing { slice_index: 1, position, .. } if position == bad as u64));
        }
        let mut idx = valid.clone();
        idx[99] = 300; // out of bounds, last position
        assert!(!split_verdict(&csc(&ptr, &idx, 300), &[99]));
        assert!(matches!(
            csc(&ptr, &idx, 300).validate_parallel(2),
            Err(Error::IndexOutOfBounds {
                position: 99,
                value: 300,
                bound: 300,
                ..
            })
        ));
    }

    /// A value from random bits with a spread of magnitudes (exponents
    /// -20..20, both signs), so that adding in another order would change
    /// the rounding.
    fn float_from(bits: u64) -> f64 {
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
        c: &Compressed<'_>,
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

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(2000))]
        /// Propagation blocking gives the direct scatter's result bit for
        /// bit, for any block size and bin length: empty columns, nnz = 0,
        /// nrows = 1, repeated rows in a column (many contributions to one
        /// row), rows past `nrows` (skipped by both), bins that fill up
        /// many times.
        #[test]
        fn blocked_scatter_equals_direct(
            lengths in proptest::collection::vec(
                proptest::prop_oneof![3 => proptest::prelude::Just(0u64), 8 => 0u64..12, 1 => 0u64..200],
                0..40,
            ),
            nrows in proptest::prop_oneof![1usize..4, 1usize..70, 500usize..700],
            rows in proptest::collection::vec(proptest::prelude::any::<u64>(), 1..64),
            seeds in proptest::collection::vec(proptest::prelude::any::<u64>(), 1..64),
            past in 0u64..3,
            block_shift in 0u32..8,
            group in proptest::prop_oneof![proptest::prelude::Just(0u32), 1u32..4],
            bin_shift in proptest::prop_oneof![0u32..3, 3u32..7, proptest::prelude::Just(10u32)],
        ) {
            let mut ptr = vec![0u64];
            for l in &lengths {
                let last = *ptr.last().unwrap();
                ptr.push(last + l);
            }
            let nnz = *ptr.last().unwrap() as usize;
            // Rows below nrows + past (past > 0: some out of range); not
            // sorted (a hot row repeats): the scatters must not care.
            let bound = nrows as u64 + past;
            let idx: Vec<u64> = (0..nnz).map(|k| rows[k % rows.len()].wrapping_add(k as u64) % bound).collect();
            let values: Vec<f64> = (0..nnz).map(|k| float_from(seeds[k % seeds.len()].rotate_left(k as u32))).collect();
            let x: Vec<f64> = (0..lengths.len()).map(|j| float_from(seeds[j % seeds.len()] ^ (j as u64) << 7)).collect();
            let c = Compressed { nnz: nnz as u64, ..csc(&ptr, &idx, nrows as u64) };
            let blocking = Blocking { block_shift, group, bin_shift };
            let r = blocked_equals_direct(&c, &values, &x, nrows, blocking, f64::to_bits, f64::NAN);
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
            let c = Compressed {
                nnz: 9,
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

    #[test]
    fn slice_ok_checks_order_and_bound() {
        assert!(slice_ok(&[], 0));
        assert!(slice_ok(&[0, 2, 3], 4));
        assert!(!slice_ok(&[0, 2, 2], 4));
        assert!(!slice_ok(&[2, 0], 4));
        assert!(!slice_ok(&[0, 4], 4));
        assert!(!slice_ok(&[u64::MAX], 4));
    }

    #[test]
    fn errors_name_position_and_offset() {
        let e = csc(&[0, 2, 3], &[2, 0, 1], 3).validate().unwrap_err();
        assert_eq!(
            e,
            Error::NotIncreasing {
                tensor: "A".into(),
                array: "row_indices",
                slice: "column",
                slice_index: 0,
                position: 1,
                offset: 2008,
                value: 0,
                previous: 2,
                rule: crate::error::rule::CSC_INV3,
            }
        );
        let e = csc(&[0, 2, 1, 3], &[0, 1, 2], 3).validate().unwrap_err();
        assert!(matches!(
            e,
            Error::PtrDecreasing {
                position: 2,
                offset: 1016,
                value: 1,
                previous: 2,
                ..
            }
        ));
    }
}
