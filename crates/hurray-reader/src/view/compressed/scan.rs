//! The check of the four storage invariants (`validate`): a fast pass
//! that only counts, over blocks of `idx` and on up to
//! [`MAX_THREADS`] threads, and the exact pass that names the first
//! violation when the count is not clean.

use std::sync::atomic::{AtomicU64, Ordering};

use super::{slice_ok, Compressed};
use crate::cursor::to_u64;
use crate::error::{Error, Field, Result};
use crate::view::threads::{share, spawn_or_run, MAX_THREADS};

impl<'data> Compressed<'data> {
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
    pub(super) fn ptr_first(&self) -> Error {
        Error::PtrFirst {
            tensor: self.tensor.into(),
            array: self.names.ptr,
            offset: self.ptr_offset,
            value: self.ptr_entry(0),
            rule: self.names.inv1,
        }
    }

    /// `ptr[position]` is below the entry before it (invariant 2).
    pub(super) fn ptr_decreasing(&self, position: u64) -> Error {
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
    pub(super) fn check_last(&self) -> Result<()> {
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
    pub(super) fn ptr_too_large(&self, position: u64) -> Error {
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
    pub(super) fn slice_error(&self, j: u64, start: usize, slice: &[u64]) -> Error {
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
#[inline] // `scan_blocks` is its one caller; without the hint LLVM kept the call
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::compressed::tests::csc;
    use crate::view::threads::tests::refusing;

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
