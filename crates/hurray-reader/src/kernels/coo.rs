//! The fast pass of the validity constraints of COO coordinates
//! (`layouts/coo.md` § Validity Constraints): every coordinate below its
//! dimension and, for a tensor whose descriptor says `is_sorted`, every
//! entry above its predecessor, in one branch-free pass over `indices` on
//! up to [`MAX_THREADS`] threads. A `false` verdict means "run the exact
//! pass", which names the first violation (`layout::coo`).

use super::prefetch::prefetch;
use super::threads::{self, share, MAX_THREADS};

/// The most dimensions the pass takes (the format's `MAX_RANK`, 64); a
/// tensor of more gets a `false` verdict, for the exact pass to decide.
pub(crate) const MAX_DIMS: usize = 64;

/// COO coordinates as the pass reads them: `nnz` tuples of `shape.len()`
/// coordinates, row-major in `indices`, and whether they claim to be
/// sorted.
#[derive(Clone, Copy)]
pub(crate) struct Coordinates<'a> {
    pub(crate) indices: &'a [u64],
    pub(crate) shape: &'a [u64],
    pub(crate) nnz: u64,
    pub(crate) sorted: bool,
}

impl Coordinates<'_> {
    fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The fast pass on `threads` threads (entries split evenly): true when
    /// every coordinate is below its dimension and, if `is_sorted`, every
    /// entry is above its predecessor. False means "run the exact pass"
    /// (also for coordinates >= 2^63, valid only in dimensions above 2^63).
    pub(crate) fn clean(&self, threads: usize) -> bool {
        let rank = self.rank();
        let entries = usize::try_from(self.nnz).ok();
        // Rank 0 (every tuple empty) and a buffer of another length: the
        // exact pass decides.
        if rank == 0 || rank > MAX_DIMS || entries.and_then(|n| n.checked_mul(rank)) != Some(self.indices.len()) {
            return false;
        }
        let n = self.indices.len() / rank;
        let threads = threads.clamp(1, MAX_THREADS).min(n.max(1));
        let share = |t: usize| share(n, t, threads);
        let flags = if threads == 1 {
            self.fast_range(0, n)
        } else {
            threads::scope(|scope| {
                let workers: Vec<_> = (1..threads)
                    .map(|t| scope.spawn(move || self.fast_range(share(t), share(t.saturating_add(1)))))
                    .collect();
                let mut all = self.fast_range(0, share(1));
                for part in threads::join_all(workers) {
                    all.add(part);
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
        let mut lims = [0u64; MAX_DIMS];
        for (l, &n) in lims.iter_mut().zip(self.shape) {
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
        let f = match (lims, self.sorted) {
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
const AHEAD: usize = super::prefetch::STREAM_AHEAD;

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
/// streams in while the kernel works (see `kernels::scan::elements`).
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
/// in `docs/perf-log/run-c.md` § 2).
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
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::{any, Just};

    /// The rules, written the plain way: every coordinate below its
    /// dimension, and (sorted) each tuple above the one before. Returns
    /// `(bounds, bounds and order)`.
    pub(crate) fn reference(shape: &[u64], indices: &[u64]) -> (bool, bool) {
        let rank = shape.len().max(1);
        let bounds = indices.chunks(rank).all(|t| t.iter().zip(shape).all(|(v, n)| v < n));
        let tuples: Vec<&[u64]> = indices.chunks(rank).collect();
        let order = tuples.windows(2).all(|w| w[0] < w[1]);
        (bounds, bounds && order)
    }

    fn coordinates<'a>(shape: &'a [u64], indices: &'a [u64], sorted: bool) -> Coordinates<'a> {
        Coordinates {
            indices,
            shape,
            nnz: (indices.len() / shape.len().max(1)) as u64,
            sorted,
        }
    }

    /// Tuples of `shape.len()` coordinates from `raw`, sorted and deduplicated
    /// when asked, then one value damaged.
    pub(crate) fn tuples(shape: &[u64], raw: &[u64], make_sorted: bool, damage: Option<(usize, u64)>) -> Vec<u64> {
        let rank = shape.len();
        let mut tuples: Vec<Vec<u64>> = raw.chunks_exact(rank).map(<[u64]>::to_vec).collect();
        if make_sorted {
            tuples.sort();
            tuples.dedup();
        }
        let mut indices: Vec<u64> = tuples.concat();
        if let Some((at, v)) = damage {
            let n = indices.len().max(1);
            if let Some(x) = indices.get_mut(at % n) {
                *x = v;
            }
        }
        indices
    }

    /// Sorted rank-2 coordinates for the 32-bit loop of [`narrow`] (it runs
    /// only [`AHEAD`] values from the end): near the top of large
    /// dimensions when asked, with one value damaged, two entries swapped,
    /// or a bound only that loop sees broken (the column of a row's last
    /// entry set to the dimension or past it, or of a row's first entry set
    /// to 2^31 + d, a negative i32), among the entries it reads.
    pub(crate) fn narrow_tuples(
        dims: &[u64],
        near_top: bool,
        raw: &[(u64, u64)],
        damage: Option<(usize, u64)>,
        swap: Option<usize>,
        edge: Option<(bool, usize, u64)>,
    ) -> Vec<u64> {
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
        if let Some((row_end, at, d)) = edge {
            let n = tuples.len().saturating_sub(AHEAD / 2 + 8);
            let k = (0..n).cycle().skip(at % n.max(1)).take(n).find(|&k| {
                let other = if row_end { k + 1 } else { k.wrapping_sub(1) };
                tuples.get(other).is_none_or(|t| t.0 != tuples[k].0)
            });
            if let Some(k) = k {
                indices[2 * k + 1] = if row_end { dims[1] + d } else { (1 << 31) + d };
            }
        }
        indices
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(3000))]
        #[test]
        fn fast_check_agrees_with_the_rules(
            shape in proptest::collection::vec(
                proptest::prop_oneof![4 => 0u64..6, 1 => Just(1u64 << 63), 1 => Just(u64::MAX)],
                1..5,
            ),
            raw in proptest::collection::vec(0u64..7, 0..120),
            make_sorted in any::<bool>(),
            damage in proptest::option::of((0usize..120, proptest::prop_oneof![0u64..8, any::<u64>()])),
            threads in 1usize..5,
        ) {
            let indices = tuples(&shape, &raw, make_sorted, damage);
            let (bounds, order) = reference(&shape, &indices);
            // Exact for coordinates below 2^63; with larger ones (valid
            // only in dimensions above 2^63) the fast pass defers.
            let huge = indices.iter().any(|&v| v >> 63 != 0);
            let (sorted, unsorted) = (coordinates(&shape, &indices, true), coordinates(&shape, &indices, false));
            for t in [1, threads, 7] {
                proptest::prop_assert_eq!(sorted.clean(t), order && !huge);
                proptest::prop_assert_eq!(unsorted.clean(t), bounds && !huge);
            }
            // Threads the OS refuses: their ranges are checked on this thread.
            let refused = super::super::threads::tests::refusing(|| (sorted.clean(3), unsorted.clean(3)));
            proptest::prop_assert_eq!(refused, (order && !huge, bounds && !huge));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(400))]
        /// Sorted rank 2 through the 32-bit loop of [`narrow`], with
        /// dimensions and coordinates around 2^31, where that loop hands
        /// over to the 64-bit one.
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
            let indices = narrow_tuples(&dims, near_top, &raw, damage, swap, edge);
            let (_, order) = reference(&dims, &indices);
            let huge = indices.iter().any(|&v| v >> 63 != 0);
            for t in [1, threads] {
                proptest::prop_assert_eq!(coordinates(&dims, &indices, true).clean(t), order && !huge);
            }
        }
    }
}
