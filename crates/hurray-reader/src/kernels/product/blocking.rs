//! Propagation blocking for the scatter of `y = M·x` when `y` is larger
//! than the caches: the plan ([`Blocking`]), the bins, and the pass that
//! fills them and applies them to `y` block by block.

use super::float::Float;
use crate::cursor::to_u64;
use crate::kernels::scratch::Lease;
use crate::kernels::Arrays;

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
struct Bins<T: 'static> {
    heads: Vec<usize>,
    entries: Lease<(u32, T)>,
    len_shift: u32,
}

impl<T: Float> Bins<T> {
    /// `count` empty bins of `2^len_shift` entries, or `None` when they
    /// cannot be allocated. The entries are leased from
    /// [`scratch`](crate::kernels::scratch), contents unspecified: a bin's
    /// entries are read only up to its head, after they are written.
    fn new(count: usize, len_shift: u32) -> Option<Self> {
        let len = 1usize.checked_shl(len_shift)?;
        let total = count.checked_mul(len)?;
        let mut heads = Vec::new();
        heads.try_reserve_exact(count).ok()?;
        heads.extend((0..count).map(|b| b.wrapping_mul(len)));
        let entries = T::bin_scratch(total)?;
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
        if let Some(slot) = self.entries.as_mut_slice().get_mut(*head) {
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
        self.entries.as_slice().get(from..from.wrapping_add(len))
    }

    /// Each bin's entries, in bin order; empties the bins.
    fn drain(&mut self) -> impl Iterator<Item = (usize, &[(u32, T)])> {
        let Bins {
            heads,
            entries,
            len_shift,
        } = self;
        let (entries, len) = (entries.as_slice(), 1usize.wrapping_shl(*len_shift));
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
pub(super) fn cached_block<T: Float>(y: &mut [T], index: usize, block_shift: u32) -> Option<&mut [T]> {
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

impl Arrays<'_> {
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
}
