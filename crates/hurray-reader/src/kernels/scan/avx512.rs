//! The fast pass's block loop for CPUs with AVX-512 (`avx512f`): the
//! same verdict as the portable loop of [`super`], with the slice starts
//! and the descents of a block kept as bit masks instead of a byte map.
//!
//! Per block of up to [`MAP`] positions:
//!
//! 1. **Starts.** Eight pointers a register: one unsigned compare against
//!    the block's end says which slices start in the block, and a variable
//!    shift (`1 << (start - p - 64·w)`, zero for counts of 64 or more) per
//!    64-bit word `w` sets their bits in four word accumulators. The same
//!    eight pointers, compared with the eight after them, check that `ptr`
//!    does not decrease. No store per slice (the portable loop stores a
//!    byte per slice, which is most of its work on short columns).
//! 2. **Descents.** Eight indices a register: one unsigned compare with the
//!    eight before them gives a mask of the positions that do not rise, and
//!    a running unsigned maximum of the indices gives the bound check.
//! 3. The violations are `popcount(descents & !starts)` over the four words.
//!
//! The compares are exact for every `u64` (no subtraction trick, no
//! top-bit caveat): a clean result needs no exact pass, and anything else
//! goes to the exact pass as in the portable loop. Measured in
//! `docs/perf-log/run-j.md`.

use std::arch::x86_64::{
    __m512i, _mm512_cmple_epu64_mask, _mm512_cmplt_epu64_mask, _mm512_maskz_sllv_epi64, _mm512_max_epu64,
    _mm512_or_si512, _mm512_reduce_max_epu64, _mm512_reduce_or_epi64, _mm512_set1_epi64, _mm512_setzero_si512,
    _mm512_sub_epi64,
};

use super::{Arrays, Blocks, Part, Scan, LINE, MAP, PTR_AHEAD, REPORT};
use crate::cursor::to_u64;
use crate::kernels::prefetch::prefetch;

/// Bit-mask words of a block's positions.
const WORDS: usize = MAP / 64;

/// Nine consecutive `u64`s from `at`, when `values` has them: a register
/// of eight and the same eight shifted by one.
#[inline(always)]
fn nine(values: &[u64], at: usize) -> Option<&[u64; LINE + 1]> {
    values.get(at..at.checked_add(LINE + 1)?)?.try_into().ok()
}

/// Eight `u64`s as a register (a plain load; zerocopy checks the sizes).
#[inline(always)]
fn register(values: &[u64; LINE]) -> __m512i {
    zerocopy::transmute!(*values)
}

/// `u64` lanes all equal to `v` (the intrinsic takes `i64`; the bits are
/// the same).
#[inline]
#[target_feature(enable = "avx512f")]
fn splat(v: u64) -> __m512i {
    _mm512_set1_epi64(i64::from_ne_bytes(v.to_ne_bytes()))
}

/// The marks of the slices starting in a block, and the pointer check.
struct Starts {
    /// Bit `i` of word `i / 64` (over `i % 64`) is set where a slice
    /// starts at position `p + i`.
    words: [u64; WORDS],
    /// A pointer pair decreased.
    decreased: bool,
}

/// The fast pass over one [`Part`] (see [`Arrays::scan`]), compiled for
/// AVX-512. `blocks.slack` is not used (the pointer check runs with the
/// marking); `blocks.positions` and `blocks.ahead` as in the portable loop.
#[target_feature(enable = "avx512f,popcnt")]
pub(super) fn scan_blocks(c: &Arrays<'_>, part: Part, blocks: Blocks, progress: &mut dyn FnMut(u64)) -> Scan {
    let positions = blocks.positions.clamp(1, MAP);
    let mut decreased = false;
    let mut violations = 0u64;
    // Running maxima of the indices (vector and scalar parts).
    let mut top = _mm512_setzero_si512();
    let mut top_scalar = 0u64;
    let (mut p, mut j) = (part.from, part.first);
    let (mut reported_p, mut reported_j) = (p, j);
    while p < part.to {
        let q = p.saturating_add(positions).min(part.to);
        let starts = mark(c, &mut j, part.last, p, q);
        decreased |= starts.decreased;
        let descents = descents(c.idx, p, q, blocks.ahead, &mut top, &mut top_scalar);
        for (d, s) in descents.iter().zip(&starts.words) {
            violations = violations.wrapping_add(u64::from((d & !s).count_ones()));
        }
        p = q;
        if p >= part.to || p.saturating_sub(reported_p) >= REPORT {
            let done = p
                .saturating_sub(reported_p)
                .saturating_add(j.saturating_sub(reported_j));
            progress(to_u64(done).saturating_mul(8));
            (reported_p, reported_j) = (p, j);
        }
    }
    // The slices left start at or after the part's end (empty ones, or
    // ones the next part marks); their pointer pairs are this part's.
    decreased |= pairs_decrease(c.ptr, j, part.last);
    progress(to_u64(part.last.saturating_sub(reported_j)).saturating_mul(8));
    let largest = _mm512_reduce_max_epu64(top).max(top_scalar);
    let out_of_bounds = part.to > part.from && largest >= c.bound;
    Scan {
        violations,
        high: if decreased || out_of_bounds { u64::MAX } else { 0 },
    }
}

/// Marks the slices from `*j` (below `last`) that start below `q`, in the
/// block starting at `p`, checks their pointer pairs, and advances `*j`
/// past them. Eight pointers a step while all eight start below `q` (the
/// branch, not the count, decides where the next step loads, so the loop
/// carries no dependency through the compare); then at most one partial
/// step, and one pointer at a time where fewer than nine are left.
#[inline]
#[target_feature(enable = "avx512f,popcnt")]
fn mark(c: &Arrays<'_>, j: &mut usize, last: usize, p: usize, q: usize) -> Starts {
    let (pv, qv, one) = (splat(to_u64(p)), splat(to_u64(q)), splat(1));
    let shifts = [splat(0), splat(64), splat(128), splat(192)];
    let mut marks = [_mm512_setzero_si512(); WORDS];
    let mut decreased = 0u8;
    // Marks the starts of `lanes` (a mask) of the eight pointers at `*j`;
    // true when all eight were marked.
    let mut step = |j: usize, lanes: u8, marks: &mut [__m512i; WORDS]| -> Option<u8> {
        let window = nine(c.ptr, j)?;
        if let Some(later) = c.ptr.get(j.saturating_add(PTR_AHEAD)) {
            prefetch(later);
        }
        let (starts, ends) = (register(window.first_chunk()?), register(window.last_chunk()?));
        decreased |= _mm512_cmplt_epu64_mask(ends, starts);
        let below = _mm512_cmplt_epu64_mask(starts, qv) & lanes;
        let offset = _mm512_sub_epi64(starts, pv);
        for (m, s) in marks.iter_mut().zip(&shifts) {
            // Shift counts of 64 or more (offsets in other words, or
            // starts before `p` wrapped around) give 0.
            *m = _mm512_or_si512(*m, _mm512_maskz_sllv_epi64(below, one, _mm512_sub_epi64(offset, *s)));
        }
        Some(below)
    };
    let mut partial = None;
    while j.saturating_add(LINE) <= last {
        match step(*j, u8::MAX, &mut marks) {
            Some(u8::MAX) => *j = j.saturating_add(LINE),
            other => {
                partial = other;
                break;
            }
        }
    }
    if partial.is_none() && *j < last {
        // Fewer than eight slices left in the part: the lanes below `last`.
        let room = u32::try_from(last.saturating_sub(*j)).unwrap_or(0);
        partial = step(
            *j,
            u8::MAX.checked_shr(8u32.saturating_sub(room)).unwrap_or(0),
            &mut marks,
        );
    }
    let tail = partial.is_none();
    if let Some(below) = partial {
        *j = j.saturating_add(below.count_ones() as usize);
    }
    let mut words = marks.map(|m| u64::from_ne_bytes(_mm512_reduce_or_epi64(m).to_ne_bytes()));
    let mut decreased = decreased != 0;
    // The last pointers of the array, fewer than nine: one at a time.
    if tail {
        while *j < last {
            let (Some(&start), Some(&end)) = (c.ptr.get(*j), c.ptr.get(j.saturating_add(1))) else {
                break;
            };
            if start >= to_u64(q) {
                break;
            }
            decreased |= end < start;
            if let Some(offset) = usize::try_from(start.wrapping_sub(to_u64(p))).ok().filter(|&o| o < MAP) {
                if let Some(w) = words.get_mut(offset / 64) {
                    *w |= 1 << (offset % 64);
                }
            }
            *j = j.saturating_add(1);
        }
    }
    Starts { words, decreased }
}

/// The descent masks of positions `p..q` (bit `k - p` set where `idx[k] <=
/// idx[k - 1]`; position 0 never), folding every index of the block into
/// the maxima. Eight positions a step from the block's start (from 8 in a
/// block at 0), `idx` prefetched `ahead` positions on; the rest one at a
/// time.
#[inline]
#[target_feature(enable = "avx512f")]
fn descents(idx: &[u64], p: usize, q: usize, ahead: usize, top: &mut __m512i, top_scalar: &mut u64) -> [u64; WORDS] {
    let mut bits = [0u64; WORDS];
    // Position 0 has no index before it (only its bound is checked); 1..8
    // go one at a time.
    if p == 0 {
        if let Some(&v) = idx.first() {
            *top_scalar = (*top_scalar).max(v);
        }
    }
    let first = if p == 0 { LINE } else { 0 };
    let mut scalar = |k: usize, bits: &mut [u64; WORDS]| {
        let (Some(&a), Some(&b)) = (idx.get(k.wrapping_sub(1)), idx.get(k)) else {
            return;
        };
        let offset = k.wrapping_sub(p);
        if let Some(word) = bits.get_mut(offset / 64) {
            *word |= u64::from(b <= a) << (offset % 64);
        }
        *top_scalar = (*top_scalar).max(b);
    };
    if p == 0 {
        (1..LINE.min(q)).for_each(|k| scalar(k, &mut bits));
    }
    let lines = q.saturating_sub(p) / LINE;
    for line in first / LINE..lines {
        let k = p.saturating_add(line * LINE);
        let Some(window) = nine(idx, k.wrapping_sub(1)) else {
            break;
        };
        if let Some(later) = idx.get(k.saturating_add(ahead)) {
            prefetch(later);
        }
        let (Some(before), Some(current)) = (window.first_chunk(), window.last_chunk()) else {
            break;
        };
        let current = register(current);
        let mask = u64::from(_mm512_cmple_epu64_mask(current, register(before)));
        if let Some(word) = bits.get_mut(line / LINE) {
            *word |= mask << (line % LINE * LINE);
        }
        *top = _mm512_max_epu64(*top, current);
    }
    for k in p.saturating_add(first.max(lines * LINE))..q {
        scalar(k, &mut bits);
    }
    bits
}

/// Whether any pointer pair `(ptr[i], ptr[i + 1])`, `i` in `from..to`,
/// decreases.
#[inline]
#[target_feature(enable = "avx512f")]
fn pairs_decrease(ptr: &[u64], from: usize, to: usize) -> bool {
    let pairs = ptr.get(from..to.saturating_add(1)).unwrap_or_default();
    let mut decreased = 0u8;
    let mut i = 0usize;
    while let Some(window) = nine(pairs, i) {
        let (Some(a), Some(b)) = (window.first_chunk::<LINE>(), window.last_chunk::<LINE>()) else {
            break;
        };
        decreased |= _mm512_cmplt_epu64_mask(register(b), register(a));
        i = i.saturating_add(LINE);
    }
    let rest = pairs.get(i..).unwrap_or_default();
    decreased != 0 || rest.windows(2).any(|w| matches!(w, [a, b] if b < a))
}
