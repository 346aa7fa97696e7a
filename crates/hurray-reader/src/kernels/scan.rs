//! The fast pass of the four storage invariants of a compressed sparse
//! matrix (`layouts/csc.md` § Storage Invariants, and CSR's): over blocks
//! of `idx` and on up to [`MAX_THREADS`] threads, it only counts
//! violations and ORs bound flags ([`Scan`]); [`Arrays::scan_clean`] says
//! whether the arrays are clean. Naming the first violation is the
//! format's (`layout::compressed::check`), which runs only when this pass
//! finds one.

use std::sync::atomic::{AtomicU64, Ordering};

use super::prefetch::{prefetch, STREAM_AHEAD};
use super::threads::{self, share, MAX_THREADS};
use super::Arrays;
use crate::cursor::{to_u64, to_usize};

#[cfg(target_arch = "x86_64")]
mod avx512;

impl<'a> Arrays<'a> {
    /// Whether the fast pass finds `ptr` non-decreasing and every index
    /// inside a slice above the one before and below the bound, on
    /// `threads` threads (clamped to `1..=`[`MAX_THREADS`]), each scanning a
    /// contiguous range of *positions* of `idx` (cut anywhere, inside a
    /// slice too) and the outer slices that start there
    /// ([`threads::scope`]; no allocation beyond the jobs' own).
    /// It assumes what the caller checks: `ptr[0]` is the first position
    /// and the last pointer the end. `progress(done)` gets the bytes scanned
    /// so far, every few megabytes, on the calling thread. Never panics.
    pub(crate) fn scan_clean(&self, threads: usize, progress: &mut dyn FnMut(u64)) -> bool {
        self.fast_scan(threads, progress).is_clean()
    }

    /// At most `threads` threads, fewer when the arrays are small: each
    /// thread gets at least [`MIN_PER_THREAD`] entries of `ptr` + `idx`.
    pub(crate) fn threads_for(&self, threads: usize) -> usize {
        let entries = self.ptr.len().saturating_add(self.positions().len());
        threads.min(entries / MIN_PER_THREAD).max(1)
    }

    /// Number of outer slices (`ptr` has one more entry).
    fn outer_count(&self) -> usize {
        self.ptr.len().saturating_sub(1)
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
        let positions = self.positions();
        let len = positions.len();
        let share = |t: usize| positions.start.saturating_add(share(len, t, threads));
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
        threads::scope(|scope| {
            let others = &others;
            let workers: Vec<_> = rest
                .iter()
                .take(threads.saturating_sub(1))
                .map(|&part| {
                    scope.spawn(move || {
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
            for part in threads::join_all(workers) {
                all.add(part);
            }
            all
        })
    }

    /// The fast pass over one [`Part`], block by block: a block is
    /// [`Blocks::DEFAULT`] positions of `idx`. For each block it marks the
    /// outer slices that start in the block in a map of the block's
    /// positions (one load of `ptr` and one store per slice), then goes over
    /// the block's positions (streaming, vectorised, see [`elements`]),
    /// counting the *violations* — positions whose index is not above the
    /// one before and where no slice starts — and checking every index
    /// against the bound; `ptr` is checked not to decrease a block ahead.
    /// `idx` and `ptr` are each read from memory once, prefetched ahead.
    /// The best compilation of the loop the CPU runs ([`Isa::detect`]):
    /// AVX-512 (a loop of its own, [`avx512`], with the starts and descents
    /// as bit masks), AVX2 or the baseline. Calls `progress(bytes)` with the
    /// bytes scanned since its previous call. Never panics on damaged data.
    fn scan(&self, part: Part, progress: &mut dyn FnMut(u64)) -> Scan {
        self.scan_blocks(part, Blocks::DEFAULT, Isa::detect(), progress)
    }

    /// [`scan`](Self::scan) with the block sizes of `blocks` (the tests use
    /// tiny ones) and the loop compiled for `isa`, or for the best the CPU
    /// has below it.
    #[allow(unsafe_code)]
    fn scan_blocks(&self, part: Part, blocks: Blocks, isa: Isa, progress: &mut dyn FnMut(u64)) -> Scan {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        fn avx2(c: &Arrays<'_>, part: Part, blocks: Blocks, progress: &mut dyn FnMut(u64)) -> Scan {
            c.scan_blocks_with(part, blocks, progress)
        }
        match isa.min(Isa::detect()) {
            // SAFETY (both): a `target_feature` function may only run on a
            // CPU that has the features it enables; `Isa::detect` found them
            // on this one (`is_x86_feature_detected!`). Both functions are
            // safe code: `avx2` the baseline loop recompiled, `avx512` a
            // loop of safe intrinsics.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => unsafe { avx512::scan_blocks(self, part, blocks, progress) },
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => unsafe { avx2(self, part, blocks, progress) },
            _ => self.scan_blocks_with(part, blocks, progress),
        }
    }

    /// The block loop of [`scan`](Self::scan), inlined into each of its
    /// compilations (the baseline and the AVX2 copy of [`scan_blocks`](Self::scan_blocks)).
    #[inline(always)]
    fn scan_blocks_with(&self, part: Part, blocks: Blocks, progress: &mut dyn FnMut(u64)) -> Scan {
        // Values below 2^63 are below the bound exactly when `lim - v` has
        // its top bit clear (`lim` < 2^63); larger values set `high` anyway.
        let lim = self.bound.min(1 << 63).wrapping_sub(1);
        let positions = blocks.positions.clamp(1, MAP);
        let mut scan = Scan::default();
        let mut starts = [0u8; MAP];
        let (mut p, mut j) = (part.from, part.first);
        let (mut reported_p, mut reported_j) = (p, j);
        // Pointer pairs `first..folded` are checked. The check runs ahead
        // of the marking, over as many slices as the previous block had:
        // the vectorised fold brings `ptr` into the cache, the marking then
        // finds it there. Entries up to `fetched` are prefetched.
        let mut folded = part.first;
        let mut fetched = part.first;
        let mut ahead = blocks.slack;
        loop {
            let q = p.saturating_add(positions).min(part.to);
            let last_block = q >= part.to;
            let until = j.saturating_add(ahead).min(part.last);
            if until > folded {
                scan.high |= self.pointer_flags(folded, until);
                folded = until;
            }
            fetched = self.prefetch_ptr(fetched.max(until), until.saturating_add(PTR_AHEAD));
            let j1 = self.mark_starts(j, part.last, p, q, &mut starts);
            let e = elements(self.idx, p, q, &starts, lim, blocks.ahead);
            scan.violations = scan.violations.wrapping_add(e.count);
            scan.high |= e.high;
            starts = [0; MAP];
            let walked = j1.saturating_sub(j);
            ahead = walked.saturating_add(walked / 8).saturating_add(blocks.slack);
            // In the last block the slices left start at or after its end:
            // empty ones, whose pointers the fold below still checks.
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

    /// Marks in `starts` (indexed by position − `p`) the outer slices
    /// `from..to` that start below `q`, stopping at the first that does not;
    /// returns where it stopped. A slice starting at `s < nnz` is non-empty
    /// or followed by empty slices up to a non-empty one starting at `s`, so a
    /// mark always stands for a non-empty slice. One load of `ptr` and one
    /// store per slice, four slices at a time while the fourth starts below
    /// `q` (on a sorted `ptr` the other three then do too; an unsorted one
    /// is reported by the pointer flags whatever is marked). A start outside
    /// `p..p + MAP` marks nothing.
    #[inline(always)]
    fn mark_starts(&self, from: usize, to: usize, p: usize, q: usize, starts: &mut [u8; MAP]) -> usize {
        let ptrs = self.ptr.get(from..to).unwrap_or_default();
        let (p, q) = (to_u64(p), to_u64(q));
        let mut mark = |start: u64| {
            if let Some(mark) = starts.get_mut(to_usize(start.wrapping_sub(p))) {
                *mark = 1;
            }
        };
        // Four at a time: one compare and branch per four slices, which is
        // most of the marking on short columns (docs/perf-log/run-i.md).
        let mut quads = ptrs.chunks_exact(4);
        let mut marked = 0usize;
        for quad in quads.by_ref() {
            let Ok(&[a, b, c, d]) = <&[u64; 4]>::try_from(quad) else {
                break; // unreachable: chunks_exact
            };
            if d >= q {
                break;
            }
            [a, b, c, d].into_iter().for_each(&mut mark);
            marked = marked.saturating_add(4);
        }
        let rest = ptrs.get(marked..).unwrap_or_default();
        let mut walked = rest.len();
        for (k, &start) in rest.iter().enumerate() {
            if start >= q {
                walked = k;
                break;
            }
            mark(start);
        }
        from.saturating_add(marked).saturating_add(walked)
    }

    /// Asks the CPU for `ptr[from..to]` (clamped to `ptr`), a cache line at a
    /// time; returns where the next call starts.
    #[inline(always)]
    fn prefetch_ptr(&self, from: usize, to: usize) -> usize {
        let to = to.min(self.ptr.len());
        for value in self.ptr.get(from..to).unwrap_or_default().iter().step_by(LINE) {
            prefetch(value);
        }
        to.max(from)
    }

    /// The pointer flags (`b - a | b`) of the pairs `from..to` (over
    /// `ptr[from..=to]`).
    #[inline(always)]
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
}

/// Block sizes of the fast pass.
#[derive(Debug, Clone, Copy)]
struct Blocks {
    /// Positions of `idx` per block (at most [`MAP`]).
    positions: usize,
    /// Pointer pairs checked ahead of the marking, beyond the number of
    /// slices the previous block had.
    slack: usize,
    /// How far ahead (in positions) [`elements`] prefetches `idx`; its
    /// vectorised loop stops that far before the end of `idx` (the tests
    /// use small distances so that it runs on small arrays).
    ahead: usize,
}

impl Blocks {
    /// 256 positions (2 KiB, in the L1 cache between the marking and the
    /// count); 16 pointers of slack; `idx` prefetched 2 Ki positions (16 KiB)
    /// ahead. Short blocks keep the marking of short columns short, and the
    /// prefetches (with [`PTR_AHEAD`]) keep memory busy meanwhile
    /// (docs/perf-log/run-i.md; 4 Ki-position blocks were
    /// measured when the pass still walked the columns, "Block size").
    const DEFAULT: Blocks = Blocks {
        positions: MAP,
        slack: 16,
        ahead: STREAM_AHEAD,
    };
}

/// Which compilation of the fast pass's block loop runs, from the least
/// to the most the CPU must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Isa {
    /// The target's baseline (SSE2 on x86-64).
    Baseline,
    /// The baseline loop compiled for AVX2 (four `u64` lanes a register).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    Avx2,
    /// The loop of [`avx512`] (`avx512f` and `popcnt`).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    Avx512,
}

impl Isa {
    /// The most this CPU has (`std` caches the detection).
    fn detect() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("popcnt") {
                return Isa::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Isa::Avx2;
            }
        }
        Isa::Baseline
    }
}

/// Entries of `ptr` + `idx` per thread below which
/// [`Arrays::threads_for`] gives fewer threads than asked (handing a
/// range to another thread costs tens of microseconds, as starting one
/// did when this was measured; 256 Ki entries take about as long to
/// scan).
pub(crate) const MIN_PER_THREAD: usize = 1 << 18;

/// One thread's share of the fast pass: positions `from..to` of `idx` (the
/// descents at those positions and their bounds), and outer slices
/// `first..last` (their starts and pointer pairs).
#[derive(Debug, Default, Clone, Copy)]
struct Part {
    from: usize,
    to: usize,
    first: usize,
    last: usize,
}

/// What the fast pass found. Clean when no index inside a slice failed to
/// rise, no value was out of bounds or too large for the subtraction trick,
/// and `ptr` never decreased.
#[derive(Debug, Default, Clone, Copy)]
struct Scan {
    /// Positions whose index is not above the one before, where no slice
    /// starts.
    violations: u64,
    /// OR of pointer differences, pointers, indices and `lim - index`: a set
    /// top bit means a pointer decreased, an index is out of bounds, or a
    /// value is >= 2^63 (the exact pass decides).
    high: u64,
}

impl Scan {
    fn add(&mut self, other: Scan) {
        self.violations = self.violations.wrapping_add(other.violations);
        self.high |= other.high;
    }

    fn is_clean(&self) -> bool {
        self.violations == 0 && self.high >> 63 == 0
    }
}

/// What [`elements`] found over a block.
#[derive(Debug, Clone, Copy)]
struct Checked {
    count: u64,
    high: u64,
}

/// Over positions `start..end` of `idx` (at most [`MAP`]; `starts[i -
/// start]` is 1 where an outer slice starts): counts the violations,
/// positions `i >= 1` where `idx[i] <= idx[i - 1]` and no slice starts, and
/// ORs every index `v` and `lim - v` together (a set top bit: `v >= 2^63`,
/// or `v > lim`, out of bounds). Position 0 is left out of the count: the
/// fast pass requires `ptr[0] = 0`, so a slice starts there.
///
/// For `a, b < 2^63`, `b <= a` exactly when `b - a - 1` (wrapping) has its
/// top bit set: a subtraction and a shift, which SSE2 vectorises (it has no
/// 64-bit compare). When any value has its top bit set (`high`), the count is
/// not trusted and the caller runs the exact pass.
#[inline(always)] // into each compilation of the block loop
fn elements(idx: &[u64], start: usize, end: usize, starts: &[u8; MAP], lim: u64, distance: usize) -> Checked {
    let mut high = 0u64;
    if start == 0 && end > 0 {
        if let Some(&v) = idx.first() {
            high = v | lim.wrapping_sub(v);
        }
    }
    let from = start.max(1);
    let previous = idx
        .get(from.saturating_sub(1)..end.saturating_sub(1))
        .unwrap_or_default();
    let current = idx.get(from..end).unwrap_or_default();
    let marks = starts.get(from.saturating_sub(start)..).unwrap_or_default();
    // One prefetch `distance` positions on per cache line the loop
    // consumes: the loop's own loads alone keep too few misses in flight to
    // reach the memory bandwidth while the marking runs between blocks.
    let ahead = idx.get(from.saturating_add(distance)..).unwrap_or_default();
    let split = current.len().min(ahead.len()) / LINE * LINE;
    let (Some((p_main, p_rest)), Some((c_main, c_rest)), Some((m_main, m_rest))) = (
        previous.split_at_checked(split),
        current.split_at_checked(split),
        marks.split_at_checked(split),
    ) else {
        // Unreachable: each is at least `split` long. Not clean, should it
        // ever be reached: the exact pass then decides.
        return Checked {
            count: 0,
            high: u64::MAX,
        };
    };
    // Per-lane accumulators, summed once at the end: the compiler keeps
    // them in vector registers across lines.
    let (mut counts, mut highs) = ([0u64; LINE], [0u64; LINE]);
    let lines = p_main
        .chunks_exact(LINE)
        .zip(c_main.chunks_exact(LINE))
        .zip(m_main.chunks_exact(LINE))
        .zip(ahead.chunks_exact(LINE));
    for (((p, c), m), a) in lines {
        let (Ok(p), Ok(c), Ok(m)) = (
            <&[u64; LINE]>::try_from(p),
            <&[u64; LINE]>::try_from(c),
            <&[u8; LINE]>::try_from(m),
        ) else {
            continue; // unreachable: chunks_exact
        };
        if let Some(a) = a.first() {
            prefetch(a);
        }
        for ((((n, h), &a), &b), &s) in counts.iter_mut().zip(highs.iter_mut()).zip(p).zip(c).zip(m) {
            *n = n.wrapping_add(violation(a, b, s));
            *h |= b | lim.wrapping_sub(b);
        }
    }
    let mut count = 0u64;
    for ((&a, &b), &s) in p_rest.iter().zip(c_rest).zip(m_rest) {
        count = count.wrapping_add(violation(a, b, s));
        high |= b | lim.wrapping_sub(b);
    }
    let count = counts.iter().fold(count, |s, &n| s.wrapping_add(n));
    let high = highs.iter().fold(high, |s, &h| s | h);
    Checked { count, high }
}

/// 1 when index `b` follows `a` without rising (`b <= a`, exact for values
/// below 2^63) and no slice starts at its position (`start` is 0 or 1).
#[inline(always)]
fn violation(a: u64, b: u64, start: u8) -> u64 {
    (b.wrapping_sub(a).wrapping_sub(1) >> 63) & !u64::from(start)
}

/// `u64`s per cache line.
const LINE: usize = 8;

/// Positions a block holds at most: the size of its map of slice starts.
const MAP: usize = 256;

/// How far ahead of the pointer fold `ptr` is prefetched (entries).
const PTR_AHEAD: usize = 256;

/// Positions of `idx` between two progress reports of a scan.
const REPORT: usize = 1 << 21;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::kernels::slice_ok;

    /// The verdict the scan must give, by definition: `ptr` starts at the
    /// first position and ends at the last, never decreases, and each
    /// slice's indices rise strictly and stay below the bound.
    pub(crate) fn reference(a: &Arrays<'_>) -> bool {
        a.ptr.first() == Some(&to_u64(a.start))
            && a.ptr.last() == Some(&to_u64(a.end))
            && a.end <= a.idx.len()
            && a.ptr.windows(2).all(|w| w[0] <= w[1])
            && a.ptr
                .windows(2)
                .all(|w| slice_ok(&a.idx[w[0] as usize..w[1] as usize], a.bound))
    }

    /// The arrays of a matrix: `ptr`, `idx`, all of its positions, `bound`.
    pub(crate) fn arrays<'a>(ptr: &'a [u64], idx: &'a [u64], bound: u64) -> Arrays<'a> {
        Arrays {
            ptr,
            idx,
            start: 0,
            end: idx.len(),
            bound,
        }
    }

    /// A compressed matrix from proptest's draws: slices of `lengths`, rows
    /// from `rows` made valid (sorted, rising) and then damaged at most
    /// three ways (any value, a small value, a pointer). Returns `(ptr, idx,
    /// nnz)`; `nnz` is the pointers' total before the pointer damage.
    pub(crate) fn damaged(
        lengths: &[u64],
        rows: &[u64],
        damage: Option<(usize, u64)>,
        small_damage: Option<(usize, u64)>,
        ptr_damage: Option<(usize, u64)>,
    ) -> (Vec<u64>, Vec<u64>, usize) {
        let mut ptr = vec![0u64];
        for l in lengths {
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
            if let Some(x) = idx.get_mut(at) {
                *x = v;
            }
        }
        if let Some((at, v)) = ptr_damage {
            if let Some(x) = ptr.get_mut(at) {
                *x = v;
            }
        }
        (ptr, idx, nnz)
    }

    /// The fast pass's verdict, with the ends the caller checks.
    fn fast_verdict(a: &Arrays<'_>) -> bool {
        a.ptr.first() == Some(&0) && a.ptr.last() == Some(&to_u64(a.end)) && a.scan_clean(1, &mut |_| {})
    }

    /// The fast pass over ranges cut at `cuts` (positions of `idx`, any
    /// order, duplicates allowed; inside slices too), run one after the
    /// other on this thread: what `fast_scan` does on several threads.
    fn split_verdict(a: &Arrays<'_>, cuts: &[usize]) -> bool {
        split_verdict_blocks(a, cuts, Blocks::DEFAULT)
    }

    fn split_verdict_blocks(a: &Arrays<'_>, cuts: &[usize], blocks: Blocks) -> bool {
        let len = a.idx.len();
        let mut points: Vec<usize> = cuts.iter().map(|&x| x.min(len)).collect();
        points.push(0);
        points.push(len);
        points.sort_unstable();
        let n = points.len() - 1;
        let mut parts: Vec<Part> = points
            .windows(2)
            .enumerate()
            .map(|(t, w)| a.part(w[0], w[1], t == 0, t + 1 == n))
            .collect();
        Arrays::chain(&mut parts);
        // The parts partition the positions and the slices.
        assert_eq!(parts.first().map(|p| (p.from, p.first)), Some((0, 0)));
        assert_eq!(parts.last().map(|p| (p.to, p.last)), Some((len, a.outer_count())));
        for w in parts.windows(2) {
            assert_eq!((w[0].to, w[0].last), (w[1].from, w[1].first));
        }
        // Every compilation of the loop this CPU runs.
        let verdict = |isa: Isa| {
            let mut all = Scan::default();
            for &part in &parts {
                all.add(a.scan_blocks(part, blocks, isa, &mut |_| {}));
            }
            a.ptr.first() == Some(&0) && a.ptr.last() == Some(&to_u64(a.end)) && all.is_clean()
        };
        let baseline = verdict(Isa::Baseline);
        assert_eq!(verdict(Isa::Avx2), baseline, "AVX2 and baseline disagree, {blocks:?}");
        assert_eq!(
            verdict(Isa::Avx512),
            baseline,
            "AVX-512 and baseline disagree, {blocks:?}"
        );
        baseline
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(3000))]
        #[test]
        fn fast_pass_agrees_with_the_definition(
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
            ahead in 0usize..20,
        ) {
            let (ptr, idx, nnz) = damaged(&lengths, &rows, damage, small_damage, ptr_damage);
            // Cuts anywhere in idx (inside slices too), scaled to its length.
            let cuts: Vec<usize> = cuts.iter().map(|&x| x % (nnz + 1)).collect();
            let a = arrays(&ptr, &idx, nrows);
            let exact = reference(&a);
            proptest::prop_assert_eq!(fast_verdict(&a), exact);
            proptest::prop_assert_eq!(split_verdict(&a, &cuts), exact);
            let blocks = Blocks { positions: block, slack, ahead };
            proptest::prop_assert_eq!(split_verdict_blocks(&a, &cuts, blocks), exact);
            proptest::prop_assert_eq!(split_verdict_blocks(&a, &[], blocks), exact);
            for threads in [2, 3, 5, 64] {
                proptest::prop_assert_eq!(fast_verdict(&a) && a.scan_clean(threads, &mut |_| {}), exact);
            }
            // Threads the OS refuses: their parts run on this thread.
            let refused = crate::kernels::threads::tests::refusing(|| a.scan_clean(3, &mut |_| {}));
            proptest::prop_assert_eq!(fast_verdict(&a) && refused, exact);
        }
    }

    /// The 20 000-element matrix of the format's test of the same name
    /// (`layout::compressed::check`), with columns of 0 to 6 rows: `(ptr, idx,
    /// nrows)`.
    pub(crate) fn long_matrix() -> (Vec<u64>, Vec<u64>, u64) {
        let (mut ptr, mut idx) = (vec![0u64], Vec::new());
        let mut column = 0u64;
        while idx.len() < 20_000 {
            let rows = (column * 7 + column / 3) % 7; // 0..=6, empty columns included
            idx.extend((0..rows).map(|r| r * 3 + column % 2));
            ptr.push(idx.len() as u64);
            column += 1;
        }
        (ptr, idx, 20)
    }

    /// The positions the long matrix is damaged at: block edges, cache-line
    /// edges, inside the vectorised part and in the scalar tail.
    pub(crate) const DAMAGE_AT: [usize; 13] = [
        1, 7, 8, 255, 256, 257, 1_000, 4_095, 4_096, 12_345, 17_951, 17_952, 19_999,
    ];

    /// The matrix damaged at `at` each way that applies there: the row
    /// before repeated (where no column starts), a row at `nrows`, a row of
    /// 2^63 or more.
    pub(crate) fn damages(ptr: &[u64], idx: &[u64], nrows: u64, at: usize) -> Vec<(&'static str, Vec<u64>)> {
        let starts: std::collections::HashSet<u64> = ptr.iter().copied().collect();
        let mut damaged = Vec::new();
        if !starts.contains(&(at as u64)) {
            let mut d = idx.to_vec();
            d[at] = d[at - 1];
            damaged.push(("repeat", d));
        }
        let mut d = idx.to_vec();
        d[at] = nrows;
        damaged.push(("bound", d));
        let mut d = idx.to_vec();
        d[at] = u64::MAX - 1;
        damaged.push(("huge", d));
        damaged
    }

    /// The default blocks (prefetching 2 Ki positions ahead, so the
    /// vectorised loop runs only on arrays longer than that) on the long
    /// matrix, damaged one way at a time: every compilation of the loop,
    /// one part and several, finds it.
    #[test]
    fn default_blocks_on_long_arrays_find_every_single_damage() {
        let (ptr, idx, nrows) = long_matrix();
        let valid = arrays(&ptr, &idx, nrows);
        assert!(reference(&valid) && split_verdict(&valid, &[]));
        assert!(split_verdict(&valid, &[9_999, 12_345, 15_000]));
        for &at in &DAMAGE_AT {
            let at = at.min(idx.len() - 1);
            for (what, d) in &damages(&ptr, &idx, nrows, at) {
                let a = arrays(&ptr, d, nrows);
                assert!(!reference(&a), "{what} at {at}");
                assert!(!split_verdict(&a, &[]), "{what} at {at}");
                assert!(!split_verdict(&a, &[at, at + 1, 5_000]), "{what} at {at}");
                assert!(!a.scan_clean(7, &mut |_| {}), "{what} at {at}");
            }
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
            let a = arrays(&ptr, &idx, 10);
            assert!(!reference(&a));
            for x in 0..=7 {
                for y in x..=7 {
                    for positions in 1..5 {
                        for slack in 0..3 {
                            let blocks = Blocks {
                                positions,
                                slack,
                                ahead: slack,
                            };
                            assert!(
                                !split_verdict_blocks(&a, &[x, y], blocks),
                                "{ptr:?} cut {x},{y} {blocks:?}"
                            );
                        }
                    }
                }
            }
        }
        let valid = arrays(&[0, 2, 5, 7], &idx, 10);
        assert!(split_verdict_blocks(
            &valid,
            &[3],
            Blocks {
                positions: 1,
                slack: 0,
                ahead: 0
            }
        ));
    }

    /// Every position of one long column as a cut, and a few cut sets with
    /// the only violation right at, before and after a cut.
    #[test]
    fn cuts_inside_one_long_column() {
        let ptr = [0u64, 0, 100, 100];
        let valid: Vec<u64> = (0..100).map(|i| 3 * i + 1).collect();
        let a = arrays(&ptr, &valid, 300);
        for cut in 0..=100 {
            assert!(split_verdict(&a, &[cut]), "cut {cut}");
            assert!(split_verdict(&a, &[cut, 100 - cut, cut / 2]), "cuts at {cut}");
        }
        for bad in 1..100 {
            let mut idx = valid.clone();
            idx[bad] = idx[bad - 1]; // a repeated row at position `bad`
            let a = arrays(&ptr, &idx, 300);
            for cut in [bad - 1, bad, bad + 1] {
                assert!(!split_verdict(&a, &[cut]), "bad {bad}, cut {cut}");
            }
        }
        let mut idx = valid.clone();
        idx[99] = 300; // out of bounds, last position
        assert!(!split_verdict(&arrays(&ptr, &idx, 300), &[99]));
    }
}
