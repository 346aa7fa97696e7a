//! The blocked scatter of `y = M·x` for `f32` on CPUs with AVX-512
//! (`avx512f`): the same products, added to each `y[i]` in the same order
//! as [`Arrays::scatter_direct`](super::Arrays::scatter_direct),
//! so the same result bit for bit, with the moving of contributions done
//! eight at a time in registers.
//!
//! A contribution is one `u64`: its row's offset in its bin (low 32 bits)
//! and the bits of `v · x[j]` (high 32). `y` is cut into blocks of
//! 2^[`BLOCK_SHIFT`] rows (1 MiB), and a bin collects the contributions to
//! `2^group` consecutive blocks, at most [`MAX_BINS`] bins.
//!
//! 1. **The pass** over the matrix, eight elements a step: `x[j]` is first
//!    written once per element for a chunk of [`CHUNK`] elements
//!    ([`expand`]); then eight rows, values and `x` entries make eight
//!    contributions, and for each bin a compare and a compress put that
//!    bin's ones, in order, at its end (one store of a register; its
//!    garbage lanes are overwritten by the next store). No branch per
//!    column or per element. `row_indices` and `values` are prefetched
//!    [`STREAM_AHEAD`] elements ahead (without it the loop waited on
//!    their loads: 0.9x the time with it, § Run K).
//! 2. **The split** of a full bin into its blocks, in up to two
//!    partitions of fan-out 4 and 2 (`group` 3) or 4 and 4 (`group` 4,
//!    more than 64 MiB of `y`), with the same compare,
//!    compress and store per part: six per register of eight instead of
//!    the eight of a split into eight parts at once (which measured 1.13x
//!    the time of the whole product). The input is prefetched ahead.
//! 3. **The application** of each block's contributions to the block of
//!    `y`, read first so it sits in the L2 cache.
//!
//! Every bin, part and block keeps its contributions in the order of the
//! pass (a compress keeps the lanes' order), which is storage order.
//! Measured in `docs/perf-log/run-k.md`.

use std::arch::x86_64::{
    __m256, __m256i, __m512i, _mm256_mul_ps, _mm512_and_si512, _mm512_cmpeq_epi64_mask, _mm512_cvtepu32_epi64,
    _mm512_maskz_compress_epi64, _mm512_or_si512, _mm512_set1_epi64, _mm512_slli_epi64, _mm512_srlv_epi64,
    _mm512_sub_epi64,
};

use super::blocking::{cached_block, Blocking};
use crate::cursor::{to_u64, to_usize};
use crate::kernels::prefetch::{prefetch, STREAM_AHEAD};
use crate::kernels::scratch;

/// Contributions, rows or values a register.
const LANES: usize = 8;
/// log2 of the rows of `y` a block holds: 2^18 `f32`s, 1 MiB (measured
/// against 512 KiB blocks on the Zen 5 host, § Run K).
const BLOCK_SHIFT: u32 = 18;
/// At most this many bins: each costs a compare, a compress and a store
/// per eight elements of the pass.
const MAX_BINS: usize = 8;
/// At most `2^MAX_GROUP` blocks a bin (two partitions, 4 and 4): 128 MiB
/// of `y` in [`MAX_BINS`] bins.
const MAX_GROUP: u32 = 4;
/// log2 of the most contributions a bin of up to eight blocks holds (4
/// MiB); a bin of sixteen holds twice as many (`Plan::new`).
const MAX_BIN_SHIFT: u32 = 19;
/// log2 of the fewest contributions a bin holds (when the non-zeros are
/// few), so that applying one amortises reading its blocks.
const MIN_BIN_SHIFT: u32 = 10;
/// A bin is applied before the pass once its room drops below this many
/// contributions (or its length, if smaller): then the pass can run
/// `room / 8` steps before it looks at the bins again.
const LOW_ROOM: usize = 1024;
/// Elements whose `x[j]` is written out at a time ([`expand`]).
const CHUNK: usize = 2048;
/// A column's `x[j]` is written over this many positions however short
/// the column (the next column overwrites the excess), so that a column
/// costs a fixed store rather than a loop.
const RUN: usize = 32;

/// How [`scatter`] cuts `y` and its scratch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Plan {
    /// log2 of the rows per block.
    block_shift: u32,
    /// log2 of the blocks per bin (at most [`MAX_GROUP`]).
    group: u32,
    /// log2 of the contributions a bin holds (at least 3: one register).
    bin_shift: u32,
    /// Bins: the rows of `y` over `2^(block_shift + group)`, at most
    /// [`MAX_BINS`].
    bins: usize,
}

impl Plan {
    /// The plan for `rows` entries of `f32` in `y` and `nnz` non-zeros
    /// for them, or `None` where [`Blocking::plan`]'s rules take the
    /// direct scatter (small `y`, few non-zeros, fewer than one
    /// contribution per [`Blocking::BLOCK_BYTES_PER_ENTRY`] bytes of the
    /// blocks a bin covers) or where more than [`MAX_BINS`] bins of
    /// `2^MAX_GROUP` blocks would be needed (more than 32 M rows).
    pub(super) fn new(rows: usize, nnz: u64) -> Option<Plan> {
        let y_bytes = rows.checked_mul(4)?;
        if y_bytes <= Blocking::DIRECT_MAX_Y_BYTES || nnz < Blocking::MIN_NNZ {
            return None;
        }
        let blocks = rows.div_ceil(1 << BLOCK_SHIFT);
        let group = (0..=MAX_GROUP).find(|&g| blocks.div_ceil(1 << g) <= MAX_BINS)?;
        let bins = blocks.div_ceil(1 << group);
        let covered = (4usize << BLOCK_SHIFT) << group;
        // Sixteen blocks a bin (more than 64 MiB of `y`) hold twice the
        // contributions: as many a byte of `y` as eight blocks do.
        let most = MAX_BIN_SHIFT + u32::from(group == MAX_GROUP);
        let bin_shift = Blocking::bin_shift(nnz, bins, (MIN_BIN_SHIFT, most), covered)?;
        Some(Plan {
            block_shift: BLOCK_SHIFT,
            group,
            bin_shift,
            bins,
        })
    }

    /// A plan with the given sizes for `rows` rows (the tests use tiny
    /// ones), or `None` outside the limits above (`bin_shift` below 3).
    #[cfg(test)]
    pub(super) fn with(rows: usize, block_shift: u32, group: u32, bin_shift: u32) -> Option<Plan> {
        let bins = rows.div_ceil(1usize.checked_shl(block_shift.checked_add(group)?)?);
        (group <= MAX_GROUP && bins <= MAX_BINS && (3..=MAX_BIN_SHIFT + 1).contains(&bin_shift) && block_shift <= 28)
            .then_some(Plan {
                block_shift,
                group,
                bin_shift,
                bins,
            })
    }

    /// log2 of the rows a bin covers.
    fn range_shift(&self) -> u32 {
        self.block_shift + self.group
    }

    /// log2 of the fan-outs of the two partitions of a full bin: 4 then 2
    /// for eight blocks a bin, 4 then 4 for sixteen, one partition for two
    /// or four, none for one
    /// ([`spread`]).
    fn fan_shifts(&self) -> (u32, u32) {
        match self.group {
            4 => (2, 2),
            3 => (2, 1),
            g => (g, 0),
        }
    }

    /// Contributions a bin holds.
    fn bin_len(&self) -> usize {
        1 << self.bin_shift
    }

    /// Entries of scratch a bin or a partition's part takes: its length
    /// plus one register, for the garbage lanes of the last store.
    fn stride(&self) -> usize {
        self.bin_len() + LANES
    }
}

/// The scratch of one [`scatter`], leased from [`scratch`]: the bins, one
/// after the other, then the parts of the two partitions. Its contents
/// on loan are unspecified: every slot is written before it is read.
struct Scratch {
    lease: scratch::Lease<u64>,
    bins: usize,
    first: usize,
}

impl Scratch {
    /// Scratch for `plan`, or `None` when it cannot be allocated.
    fn new(plan: &Plan) -> Option<Scratch> {
        let (f1, f2) = plan.fan_shifts();
        let parts = |shift: u32| {
            if shift == 0 {
                Some(0)
            } else {
                1usize.checked_shl(shift)?.checked_mul(plan.stride())
            }
        };
        let (bins, first, second) = (plan.bins.checked_mul(plan.stride())?, parts(f1)?, parts(f2)?);
        Some(Scratch {
            lease: scratch::take(bins.checked_add(first)?.checked_add(second)?)?,
            bins,
            first,
        })
    }

    /// The bins, the first partition's parts and the second's.
    fn split(&mut self) -> (&mut [u64], &mut [u64], &mut [u64]) {
        let (bins, rest) = self.lease.as_mut_slice().split_at_mut(self.bins);
        let (first, second) = rest.split_at_mut(self.first);
        (bins, first, second)
    }
}

/// The blocked scatter of `y = M·x` into rows `first..first + y.len()`
/// (`y` overwritten) over the pointer array `ptr`, indices `idx` and
/// `values`, when this CPU has AVX-512 and `plan` (if given, else
/// [`Plan::new`] for `y` and `nnz`) applies; `false`, with `y` untouched,
/// when not (or when the scratch, `(bins + parts) · (2^bin_shift + 8)`
/// `u64`s, 44 MiB for 10 M rows, 128 MiB at most (for 16 M to 32 M
/// rows), cannot be allocated). The caller has checked the invariants; an index outside the
/// window is skipped, never a panic.
#[allow(unsafe_code)]
pub(super) fn scatter(
    (ptr, idx, values): (&[u64], &[u64], &[f32]),
    x: &[f32],
    y: &mut [f32],
    first: u64,
    (nnz, plan): (u64, Option<Plan>),
) -> bool {
    let Some(plan) = plan.or_else(|| Plan::new(y.len(), nnz)) else {
        return false;
    };
    if !(std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("popcnt")) {
        return false;
    }
    let Some(mut scratch) = Scratch::new(&plan) else {
        return false;
    };
    y.fill(0.0);
    // SAFETY: `pass` is a `target_feature` function, which may only run
    // on a CPU that has the features it enables; `avx512f` and `popcnt`
    // (which `avx512f` does not imply) were detected on this one above.
    // The function is safe code (safe intrinsics, checked slicing).
    let m = (ptr, idx, values);
    let s = &mut scratch;
    unsafe {
        match plan.bins {
            1 => pass::<1>(m, x, (y, first), &plan, s),
            2 => pass::<2>(m, x, (y, first), &plan, s),
            3 => pass::<3>(m, x, (y, first), &plan, s),
            4 => pass::<4>(m, x, (y, first), &plan, s),
            5 => pass::<5>(m, x, (y, first), &plan, s),
            6 => pass::<6>(m, x, (y, first), &plan, s),
            7 => pass::<7>(m, x, (y, first), &plan, s),
            _ => pass::<8>(m, x, (y, first), &plan, s),
        }
    };
    true
}

/// Eight `u64`s from `at`, when `from` has them.
#[inline(always)]
fn eight(from: &[u64], at: usize) -> Option<&[u64; LANES]> {
    from.get(at..at.checked_add(LANES)?)?.try_into().ok()
}

/// `u64` lanes all equal to `v` (the intrinsic takes `i64`; same bits).
#[inline]
#[target_feature(enable = "avx512f")]
fn splat(v: u64) -> __m512i {
    _mm512_set1_epi64(i64::from_ne_bytes(v.to_ne_bytes()))
}

/// Stores `c` at `to[at..at + 8]` (nothing if that is out of `to`, which
/// the room checks rule out).
#[inline(always)]
fn store(to: &mut [u64], at: usize, c: __m512i) {
    if let Some(slot) = to
        .get_mut(at..at.wrapping_add(LANES))
        .and_then(|s| <&mut [u64; LANES]>::try_from(s).ok())
    {
        *slot = zerocopy::transmute!(c);
    }
}

/// Appends the lanes of `e` whose `key` equals `part` (in lane order) at
/// `*head` of `to`, and advances `*head` past them.
#[inline]
#[target_feature(enable = "avx512f,popcnt")]
fn put(to: &mut [u64], head: &mut usize, key: __m512i, part: u64, e: __m512i) {
    let m = _mm512_cmpeq_epi64_mask(key, splat(part));
    store(to, *head, _mm512_maskz_compress_epi64(m, e));
    *head = head.wrapping_add(m.count_ones() as usize);
}

/// The pass (see the module's description) over all stored elements into
/// `N` bins (`plan.bins`; a constant, so that the loop over the bins is
/// unrolled, each with its bin number in a register), applying each bin
/// when its room runs low and the rest at the end.
#[target_feature(enable = "avx512f,popcnt")]
fn pass<const N: usize>(
    (ptr, idx, values): (&[u64], &[u64], &[f32]),
    x: &[f32],
    (y, first): (&mut [f32], u64),
    plan: &Plan,
    s: &mut Scratch,
) {
    let (bins, s1, s2) = s.split();
    let range = splat(u64::from(plan.range_shift()));
    let offset_mask = (1u64 << plan.range_shift()) - 1;
    let mask = splat(offset_mask);
    let first_v = splat(first);
    let (stride, len) = (plan.stride(), plan.bin_len());
    let low = LOW_ROOM.min(len);
    let mut heads = [0usize; N];
    for (b, h) in heads.iter_mut().enumerate() {
        *h = b * stride;
    }
    let start = to_usize(ptr.first().copied().unwrap_or(0));
    let end = to_usize(ptr.last().copied().unwrap_or(0))
        .min(idx.len())
        .min(values.len());
    let mut xe = [0f32; CHUNK + RUN];
    let (mut j, mut k0, mut steps) = (0usize, start, 0usize);
    while k0 < end {
        let k1 = k0.saturating_add(CHUNK).min(end);
        j = expand(ptr, x, j, (k0, k1), &mut xe);
        let rows = idx.get(k0..k1).unwrap_or_default();
        let vals = values.get(k0..k1).unwrap_or_default();
        let mut k = 0;
        while k < rows.len() {
            if steps == 0 {
                steps = flush_bins(bins, (&mut heads, stride, len), low, y, plan, (s1, s2));
            }
            steps = steps.saturating_sub(1);
            let at = k0 + k + STREAM_AHEAD;
            if let (Some(r), Some(v)) = (idx.get(at), values.get(at)) {
                prefetch(r);
                prefetch(v);
            }
            let (Some(r), Some(v), Some(xs)) = (
                eight(rows, k),
                vals.get(k..k + LANES).and_then(|v| <&[f32; LANES]>::try_from(v).ok()),
                xe.get(k..k + LANES).and_then(|v| <&[f32; LANES]>::try_from(v).ok()),
            ) else {
                // Fewer than eight left: one at a time (the step's room
                // covers them).
                for ((&r, &v), &xj) in rows.iter().zip(vals).zip(&xe).skip(k) {
                    let r = r.wrapping_sub(first);
                    let b = to_usize(r.checked_shr(plan.range_shift()).unwrap_or(u64::MAX));
                    if let Some(head) = heads.get_mut(b) {
                        let entry = (r & offset_mask) | u64::from((v * xj).to_bits()) << 32;
                        if let Some(slot) = bins.get_mut(*head) {
                            *slot = entry;
                        }
                        *head = head.wrapping_add(1);
                    }
                }
                break;
            };
            let r = _mm512_sub_epi64(zerocopy::transmute!(*r), first_v);
            let bin = _mm512_srlv_epi64(r, range);
            let products: __m256 = _mm256_mul_ps(zerocopy::transmute!(*v), zerocopy::transmute!(*xs));
            let products: __m256i = zerocopy::transmute!(products);
            let e = _mm512_or_si512(
                _mm512_and_si512(r, mask),
                _mm512_slli_epi64::<32>(_mm512_cvtepu32_epi64(products)),
            );
            for (b, head) in heads.iter_mut().enumerate() {
                put(bins, head, bin, to_u64(b), e);
            }
            k += LANES;
        }
        k0 = k1;
    }
    flush_bins(bins, (&mut heads, stride, len), usize::MAX, y, plan, (s1, s2));
}

/// Applies ([`spread`]) each bin (bin `b` from `b ·
/// stride`, `len` long, filled up to `heads[b]`) with less than
/// `min_room` room, and empties it; returns the steps of eight the pass
/// can take before a bin could be full.
#[target_feature(enable = "avx512f,popcnt")]
fn flush_bins(
    bins: &mut [u64],
    (heads, stride, len): (&mut [usize], usize, usize),
    min_room: usize,
    y: &mut [f32],
    plan: &Plan,
    (s1, s2): (&mut [u64], &mut [u64]),
) -> usize {
    let mut least = usize::MAX;
    for (b, head) in heads.iter_mut().enumerate() {
        let from = b * stride;
        let mut room = (from + len).saturating_sub(*head);
        if room < min_room {
            spread(
                bins.get(from..*head).unwrap_or_default(),
                y,
                b,
                plan,
                (&mut *s1, &mut *s2),
            );
            (*head, room) = (from, len);
        }
        least = least.min(room);
    }
    least / LANES
}

/// Writes `x[j]` for each element `k0..k1` of the columns from `j` on
/// into `xe[k - k0]`; returns the column holding `k1 - 1` (the first one
/// the next chunk needs). A column of up to [`RUN`] elements takes one
/// fixed-length write, which may run past it: the next column's write
/// comes after and covers its own elements.
fn expand(ptr: &[u64], x: &[f32], mut j: usize, (k0, k1): (usize, usize), xe: &mut [f32; CHUNK + RUN]) -> usize {
    while let (Some(&s), Some(&e)) = (ptr.get(j), ptr.get(j.wrapping_add(1))) {
        let (s, e) = (to_usize(s), to_usize(e));
        if e <= k0 {
            // Ends before the chunk (or is empty at its start).
            j += 1;
            continue;
        }
        let from = s.max(k0);
        if from >= k1 {
            break;
        }
        let xj = x.get(j).copied().unwrap_or(0.0);
        let at = from - k0;
        let n = e.min(k1).saturating_sub(from);
        let to = at + n.max(RUN);
        if let Some(run) = xe.get_mut(at..to) {
            run.fill(xj);
        }
        if e > k1 {
            break;
        }
        j += 1;
    }
    j
}

/// Applies bin `b`'s `entries` to its blocks of `y`: with one block a bin
/// directly, otherwise after one or two partitions into one part per
/// block (the parts in `s1` and `s2`).
#[target_feature(enable = "avx512f,popcnt")]
fn spread(entries: &[u64], y: &mut [f32], b: usize, plan: &Plan, (s1, s2): (&mut [u64], &mut [u64])) {
    let (bs, base) = (plan.block_shift, b << plan.group);
    match plan.fan_shifts() {
        (0, _) => apply(entries, y, base, bs),
        (1, _) => split_apply::<2>(entries, s1, y, base, bs),
        (_, 0) => split_apply::<4>(entries, s1, y, base, bs),
        (_, 1) => {
            let (lens, cap) = partition::<4>(entries, bs + 1, s1);
            for (i, &n) in lens.iter().enumerate() {
                let part = s1.get(i * cap..i * cap + n).unwrap_or_default();
                split_apply::<2>(part, s2, y, base + 2 * i, bs);
            }
        }
        _ => {
            let (lens, cap) = partition::<4>(entries, bs + 2, s1);
            for (i, &n) in lens.iter().enumerate() {
                let part = s1.get(i * cap..i * cap + n).unwrap_or_default();
                split_apply::<4>(part, s2, y, base + 4 * i, bs);
            }
        }
    }
}

/// Splits `entries` into `P` parts by block ([`partition`], in `out`) and
/// applies part `i` to block `base + i`.
#[target_feature(enable = "avx512f,popcnt")]
fn split_apply<const P: usize>(entries: &[u64], out: &mut [u64], y: &mut [f32], base: usize, block_shift: u32) {
    let (lens, cap) = partition::<P>(entries, block_shift, out);
    for (i, &n) in lens.iter().enumerate() {
        apply(
            out.get(i * cap..i * cap + n).unwrap_or_default(),
            y,
            base + i,
            block_shift,
        );
    }
}

/// Splits `input` by the bits of each offset from bit `shift` into `P`
/// parts (a power of two, at most 4) of `out`, part `i` from `i · cap`
/// with `cap = input.len() + 8`, keeping the order; returns the parts'
/// lengths and `cap`.
#[inline(never)]
#[target_feature(enable = "avx512f,popcnt")]
fn partition<const P: usize>(input: &[u64], shift: u32, out: &mut [u64]) -> ([usize; P], usize) {
    let cap = input.len() + LANES;
    let mut heads = [0usize; P];
    for (i, head) in heads.iter_mut().enumerate() {
        *head = i * cap;
    }
    let (shift_v, key_mask) = (splat(u64::from(shift)), splat(to_u64(P) - 1));
    let mut k = 0;
    while let Some(e) = eight(input, k) {
        if let Some(later) = input.get(k + STREAM_AHEAD) {
            prefetch(later);
        }
        let e: __m512i = zerocopy::transmute!(*e);
        let key = _mm512_and_si512(_mm512_srlv_epi64(e, shift_v), key_mask);
        for (i, head) in heads.iter_mut().enumerate() {
            put(out, head, key, to_u64(i), e);
        }
        k += LANES;
    }
    for &e in input.get(k..).unwrap_or_default() {
        if let Some(head) = heads.get_mut(to_usize(e >> shift) & (P - 1)) {
            if let Some(slot) = out.get_mut(*head) {
                *slot = e;
            }
            *head += 1;
        }
    }
    for (i, head) in heads.iter_mut().enumerate() {
        *head -= i * cap;
    }
    (heads, cap)
}

/// Adds `entries` to block `index` of `y` (rows `index · 2^block_shift
/// ..`), in order, in the block [`cached_block`] reads first; offsets
/// past `y` are skipped.
#[inline(never)]
fn apply(entries: &[u64], y: &mut [f32], index: usize, block_shift: u32) {
    if entries.is_empty() {
        return;
    }
    let Some(block) = cached_block(y, index, block_shift) else {
        return;
    };
    let mask = (1u64 << block_shift) - 1;
    for &e in entries {
        if let Some(yr) = block.get_mut(to_usize(e & mask)) {
            *yr += f32::from_bits(u32::try_from(e >> 32).unwrap_or(0));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{cases, Case};
    use super::*;
    use crate::kernels::scan::tests::arrays as csc;
    use crate::kernels::Arrays;

    /// Whether this CPU runs the AVX-512 path; prints a "skipped" line
    /// when not (the equality tests then have nothing to compare).
    fn available(test: &str) -> bool {
        let yes = std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("popcnt");
        if !yes {
            println!("skipped: {test}: this CPU has no AVX-512");
        }
        yes
    }

    /// `scatter` with `plan` into rows `lo..hi` against the direct
    /// scatter, both into `y`s of garbage, bit for bit.
    fn equals_direct(
        c: &Arrays<'_>,
        values: &[f32],
        x: &[f32],
        plan: Plan,
        (lo, hi): (usize, usize),
    ) -> Result<(), String> {
        let first = to_u64(lo);
        let mut direct = vec![f32::NAN; hi - lo];
        c.scatter_direct(values, x, &mut direct, first);
        let mut wide = vec![f32::NAN; hi - lo];
        if !scatter((c.ptr, c.idx, values), x, &mut wide, first, (0, Some(plan))) {
            return Err(format!("{plan:?} refused"));
        }
        let bits = |y: &[f32]| y.iter().map(|v| v.to_bits()).collect::<Vec<u32>>();
        if bits(&direct) != bits(&wide) {
            return Err(format!("{plan:?} rows {lo}..{hi}: direct {direct:?} wide {wide:?}"));
        }
        Ok(())
    }

    /// A value with a spread of magnitudes, so that another order of the
    /// additions would round differently.
    fn float_from(bits: u64) -> f32 {
        super::super::tests::float_from(bits) as f32
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(1000))]
        /// The AVX-512 scatter gives the direct scatter's `y` bit for bit,
        /// for any blocks, blocks per bin (no partition, one, two), bin
        /// length (bins applied many times during the pass), windows of
        /// rows (rows below and past skipped), on the matrices of
        /// [`cases`] (empty columns, repeated and out-of-range rows, fewer
        /// than eight elements).
        #[test]
        fn wide_scatter_equals_direct(
            case in cases(),
            block_shift in 0u32..6,
            group in 0u32..=MAX_GROUP,
            bin_shift in 3u32..8,
        ) {
            let Case { ptr, idx, values, x, nrows } = &case;
            let nrows = *nrows;
            let values: Vec<f32> = values.iter().map(|&v| v as f32).collect();
            let x: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            let c = csc(ptr, idx, nrows as u64);
            if available("wide_scatter_equals_direct") {
                for (lo, hi) in [(0, nrows), (nrows / 3, nrows * 2 / 3), (1.min(nrows), nrows), (0, nrows / 2)] {
                    // The smallest blocks from `block_shift` on that keep
                    // the bins within MAX_BINS for this window.
                    let shift = (block_shift..).find(|&s| (hi - lo).div_ceil(1 << (s + group)) <= MAX_BINS).unwrap();
                    let plan = Plan::with(hi - lo, shift, group, bin_shift).unwrap();
                    let r = equals_direct(&c, &values, &x, plan, (lo, hi));
                    proptest::prop_assert!(r.is_ok(), "{:?}", r);
                }
            }
        }
    }

    /// Columns longer than a chunk of `x` entries and than a fixed run,
    /// chunks ending inside a column and at a column's end, runs of empty
    /// columns, and a tail of fewer than eight elements; each plan shape.
    #[test]
    fn long_columns_and_chunk_edges() {
        let lengths = [
            5000u64,
            0,
            0,
            33,
            32,
            31,
            1,
            0,
            CHUNK as u64 - 5000 % CHUNK as u64 - 97,
            2 * CHUNK as u64,
            7,
            0,
            4,
        ];
        let mut ptr = vec![0u64];
        for l in lengths {
            ptr.push(ptr.last().unwrap() + l);
        }
        let nnz = *ptr.last().unwrap();
        assert_eq!(nnz % 8, 3, "a tail of three elements");
        let nrows = 3000u64;
        let idx: Vec<u64> = (0..nnz).map(|k| (k * 7919 + k / 13) % nrows).collect();
        let values: Vec<f32> = (0..nnz)
            .map(|k| float_from(k.wrapping_mul(0x9E37_79B9_7F4A_7C15)))
            .collect();
        let x: Vec<f32> = (0..lengths.len() as u64).map(|j| float_from(j << 40 | j)).collect();
        let c = csc(&ptr, &idx, nrows);
        if !available("long_columns_and_chunk_edges") {
            return;
        }
        for (group, bin_shift) in [(0, 3), (1, 5), (2, 9), (3, 4), (3, 12)] {
            let plan = Plan::with(3000, 9, group, bin_shift).unwrap();
            assert_eq!(equals_direct(&c, &values, &x, plan, (0, 3000)), Ok(()));
            assert_eq!(equals_direct(&c, &values, &x, plan, (1000, 2999)), Ok(()));
        }
        // One row's total, computed by hand: row 0 holds the k with
        // (7919 k + k / 13) % 3000 = 0.
        let mut y = vec![0f32; 3000];
        assert!(scatter(
            (c.ptr, c.idx, &values),
            &x,
            &mut y,
            0,
            (0, Plan::with(3000, 9, 3, 4))
        ));
        let column = |k: u64| ptr.partition_point(|&p| p <= k) - 1;
        let row0 = (0..nnz)
            .filter(|&k| idx[k as usize] == 0)
            .fold(0f32, |a, k| a + values[k as usize] * x[column(k)]);
        assert_eq!(y[0].to_bits(), row0.to_bits());
    }

    /// The benchmark's shape and the edges of the plan: direct within 16
    /// MiB of `y`, sixteen blocks a bin beyond 16 M rows (where the
    /// scalar plan ends), none beyond eight bins of those (32 M rows), and
    /// the scratch it allocates.
    #[test]
    fn plan_examples() {
        // 10 M rows: 39 blocks, eight to a bin: 5 bins of 2^19 entries,
        // partitions of 4 and 2 parts: 11 strides of 4 MiB (44 MiB).
        let p = Plan::new(9_998_917, 100_000_000).unwrap();
        assert_eq!((p.block_shift, p.group, p.bin_shift, p.bins), (18, 3, 19, 5));
        assert_eq!(p.fan_shifts(), (2, 1));
        let mut s = Scratch::new(&p).unwrap();
        assert_eq!(s.lease.as_mut_slice().len(), 11 * ((1 << 19) + 8));
        // tests/spmv.rs: 2^22 + 3 rows, 2 M non-zeros: 17 blocks, four to
        // a bin (5 bins), 400 000 a bin (2^19).
        let p = Plan::new((1 << 22) + 3, 2_000_000).unwrap();
        assert_eq!((p.group, p.bin_shift, p.bins, p.fan_shifts()), (2, 19, 5, (2, 0)));
        // Within 16 MiB of y, or few non-zeros: direct.
        assert_eq!(Plan::new(4 << 20, 1 << 30), None);
        assert_eq!(Plan::new(10 << 20, Blocking::MIN_NNZ - 1), None);
        // Too sparse for the blocks a bin covers: 8 MiB of y a bin, 2^19
        // entries needed.
        assert_eq!(Plan::new(10 << 20, 2_000_000), None);
        // 16 M rows: 64 blocks, eight bins of eight; one more block:
        // sixteen blocks a bin, 2^20 entries each, partitions of 4 and 4
        // (no scalar plan there: the direct scatter).
        assert_eq!(Plan::new(1 << 24, 1 << 30).map(|p| (p.bins, p.group)), Some((8, 3)));
        let p = Plan::new((1 << 24) + 1, 1 << 30).unwrap();
        assert_eq!((p.group, p.bin_shift, p.bins, p.fan_shifts()), (4, 20, 5, (2, 2)));
        assert_eq!(Blocking::plan((1 << 24) + 1, 1 << 30, 4), None);
        // The suite's far shapes: 32 M rows (128 MiB), 32 M non-zeros:
        // eight bins of sixteen blocks, 16 strides of 8 MiB (128 MiB).
        let p = Plan::new(1 << 25, 32_000_000).unwrap();
        assert_eq!((p.group, p.bin_shift, p.bins), (4, 20, 8));
        let mut s = Scratch::new(&p).unwrap();
        assert_eq!(s.lease.as_mut_slice().len(), 16 * ((1 << 20) + 8));
        // Two of these, the largest there is, fit in what the store keeps.
        let bytes = std::mem::size_of_val(s.lease.as_mut_slice());
        assert!(2 * bytes <= scratch::KEEP_BYTES && 3 * bytes > scratch::KEEP_BYTES);
        // One more block: none; too sparse for sixteen blocks: none.
        assert_eq!(Plan::new((1 << 25) + 1, 1 << 30), None);
        assert_eq!(Plan::new(1 << 25, 8_000_000), None);
    }
}
