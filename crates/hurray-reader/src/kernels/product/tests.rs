//! The products' unit tests: threads refused, the blocked scatter and the
//! chunks against the direct loops, the plan.

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

/// `case` with each column's rows sorted and repeats dropped (the
/// invariant the split scatter relies on), its values cut with them.
fn sorted(case: &Case) -> (Vec<u64>, Vec<u64>, Vec<f64>) {
    let (mut ptr, mut idx, mut values) = (vec![0u64], Vec::new(), Vec::new());
    for w in case.ptr.windows(2) {
        let (a, b) = (w[0] as usize, w[1] as usize);
        let mut column: Vec<(u64, f64)> = case.idx[a..b]
            .iter()
            .copied()
            .zip(case.values[a..b].iter().copied())
            .collect();
        column.sort_by_key(|&(r, _)| r);
        column.dedup_by_key(|&mut (r, _)| r);
        for (r, v) in column {
            idx.push(r);
            values.push(v);
        }
        ptr.push(idx.len() as u64);
    }
    (ptr, idx, values)
}

/// The column split on 1 to 5 threads into a `y` full of garbage, bit for
/// bit against its definition: the one-thread scatter of each thread's
/// columns (`column_cuts`) into a zeroed `y`, added in thread order.
fn split_equals_parts<T: Float + std::fmt::Debug>(
    c: &Arrays<'_>,
    values: &[T],
    x: &[T],
    nrows: usize,
    bits: impl Fn(T) -> u64,
    garbage: T,
) -> Result<(), String> {
    for threads in 1..=5 {
        let cuts = c.column_cuts(threads);
        let mut expected = vec![T::default(); nrows];
        for w in cuts.windows(2) {
            let part = Arrays {
                ptr: &c.ptr[w[0]..=w[1]],
                ..*c
            };
            let mut p = vec![garbage; nrows];
            part.scatter_direct(values, &x[w[0]..], &mut p, 0);
            for (e, q) in expected.iter_mut().zip(p) {
                *e = *e + q;
            }
        }
        let mut split = vec![garbage; nrows];
        if !c.scatter_columns(values, x, &mut split, threads) {
            return Err("refused".into());
        }
        if split.iter().map(|&v| bits(v)).ne(expected.iter().map(|&v| bits(v))) {
            return Err(format!("{threads} threads: {split:?} for {expected:?}"));
        }
    }
    Ok(())
}

/// Where a row's elements fall to two threads the column split rounds
/// per part: `1 + 1e8 - 1e8` in `f32` is `(0 + 1 + 1e8) - 1e8 = 0` on one
/// thread (`1e8 + 1` rounds to `1e8`), `1 + (1e8 - 1e8) = 1` on two (the
/// cut falls after the first column, which holds two of the four
/// elements); row 1, whose one element is in one part, is the same.
#[test]
fn split_scatter_rounds_per_part() {
    let (ptr, idx) = ([0u64, 2, 3, 4], [0u64, 1, 0, 0]);
    let c = csc(&ptr, &idx, 2);
    let values = [1f32, 0.5, 1e8, -1e8];
    let x = [1f32, 1.0, 1.0];
    let mut one = [f32::NAN; 2];
    c.scatter(&values, &x, &mut one);
    assert_eq!(one, [0.0, 0.5]);
    assert_eq!(c.column_cuts(2), [0, 1, 3]);
    let mut two = [f32::NAN; 2];
    assert!(c.scatter_columns(&values, &x, &mut two, 2));
    assert_eq!(two, [1.0, 0.5]);
    // Refused threads: the same parts, run on the calling thread.
    let mut refused = [f32::NAN; 2];
    assert!(refusing(|| c.scatter_columns(&values, &x, &mut refused, 2)));
    assert_eq!(refused, two);
}

/// A slice longer than 4 096 elements and 1/8 of a thread's share is cut
/// between the threads of `dots_parallel`, its parts added: in `f32`,
/// `1, 1e8`, zeros, `-1e8, 1` summed in one chain is 1; cut in the zeros,
/// `(1 + 1e8) + (-1e8 + 1)` is 0. The slice after it, whole on the
/// second thread, keeps its bits. A slice of 4 096 is never cut.
#[test]
fn long_slice_splits_over_threads() {
    let (ptr, idx) = ([0u64, 20_000, 20_001], vec![0u64; 20_001]);
    let c = csc(&ptr, &idx, 1);
    let mut values = vec![0f32; 20_001];
    (values[0], values[1], values[10_000], values[10_001], values[20_000]) = (1.0, 1e8, -1e8, 1.0, 0.5);
    let x = [1f32];
    let mut one = [f32::NAN; 2];
    c.dots(&values, &x, &mut one);
    assert_eq!(one, [1.0, 0.5]);
    assert_eq!(dots::cuts(&ptr, 2, dots::MIN_SLACK), [0, 10_000, 20_001]);
    let mut two = [f32::NAN; 2];
    dots::dot_slices_split(&ptr, &idx, &values, &x, &mut two, (2, dots::MIN_SLACK, 0));
    assert_eq!(two, [0.0, 0.5]);
    // Refused threads: the same parts, run on the calling thread.
    let mut refused = [f32::NAN; 2];
    refusing(|| dots::dot_slices_split(&ptr, &idx, &values, &x, &mut refused, (2, dots::MIN_SLACK, 64)));
    assert_eq!(refused, two);
    // Three threads: the second share lies inside the slice.
    assert_eq!(dots::cuts(&ptr, 3, dots::MIN_SLACK), [0, 6_667, 13_334, 20_001]);
    let mut three = [f32::NAN; 2];
    dots::dot_slices_split(&ptr, &idx, &values, &x, &mut three, (3, dots::MIN_SLACK, 0));
    assert_eq!(three, [0.0, 0.5]);
    // A slice of 4 096 elements beside one of 1: the cut moves to the boundary.
    assert_eq!(dots::cuts(&[0, 4_096, 4_097], 2, dots::MIN_SLACK), [0, 4_096, 4_097]);
}

/// The dots' split on 1 to 5 threads into a `y` full of garbage, bit for
/// bit against its definition: each slice cut at the `cuts` strictly
/// inside it, each part summed from 0 in storage order, the parts added
/// in order; where no cut falls inside, `dots`' own bits.
fn split_dots_equal_parts<T: Float + std::fmt::Debug>(
    case: &Case,
    values: &[T],
    x: &[T],
    bits: impl Fn(T) -> u64,
    garbage: T,
) -> Result<(), String> {
    let c = csc(&case.ptr, &case.idx, case.nrows as u64);
    let slices = case.ptr.len() - 1;
    let mut one = vec![garbage; slices];
    c.dots(values, x, &mut one);
    for threads in 1..=5 {
        // No least slack: the cases' slices are short.
        let cuts = dots::cuts(&case.ptr, threads, 0);
        let mut split = vec![garbage; slices];
        dots::dot_slices_split(
            &case.ptr,
            &case.idx,
            values,
            x,
            &mut split,
            (threads, 0, [0, 64, 128][threads % 3]),
        );
        for (i, w) in case.ptr.windows(2).enumerate() {
            let inside: Vec<u64> = cuts.iter().copied().filter(|&c| w[0] < c && c < w[1]).collect();
            let ends: Vec<u64> = [w[0]].into_iter().chain(inside.iter().copied()).chain([w[1]]).collect();
            let expected = ends
                .windows(2)
                .map(|p| {
                    (p[0] as usize..p[1] as usize).fold(T::default(), |acc, k| {
                        acc + values[k] * x.get(case.idx[k] as usize).copied().unwrap_or_default()
                    })
                })
                .reduce(|a, b| a + b)
                .unwrap_or_default();
            if bits(split[i]) != bits(expected) || (inside.is_empty() && bits(split[i]) != bits(one[i])) {
                return Err(format!(
                    "threads {threads}, slice {i}: {:?}, expected {:?}",
                    split[i], expected
                ));
            }
        }
    }
    Ok(())
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(2000))]

    /// The column split equals its definition (each thread's columns
    /// scattered alone, the parts added in order) bit for bit, in `f64`
    /// and `f32`: empty parts, one column holding most elements, rows past
    /// `nrows` (skipped), many magnitudes.
    #[test]
    fn split_scatter_equals_its_parts(case in cases()) {
        let (ptr, idx, values) = sorted(&case);
        let c = csc(&ptr, &idx, case.nrows as u64);
        let r = split_equals_parts(&c, &values, &case.x, case.nrows, f64::to_bits, f64::NAN);
        proptest::prop_assert!(r.is_ok(), "f64: {:?}", r);
        let values: Vec<f32> = values.iter().map(|&v| v as f32).collect();
        let x: Vec<f32> = case.x.iter().map(|&v| v as f32).collect();
        let r = split_equals_parts(&c, &values, &x, case.nrows, |v: f32| u64::from(v.to_bits()), f32::NAN);
        proptest::prop_assert!(r.is_ok(), "f32: {:?}", r);
    }
    /// The dots' split equals its definition, in `f64` and `f32`: long
    /// slices cut once or more, empty shares, indices past `x` (read 0).
    #[test]
    fn split_dots_equal_their_parts(case in cases()) {
        let x: Vec<f64> = (0..case.nrows).map(|i| float_from(i as u64 * 0x9E37_79B9)).collect();
        let r = split_dots_equal_parts(&case, &case.values, &x, f64::to_bits, f64::NAN);
        proptest::prop_assert!(r.is_ok(), "f64: {:?}", r);
        let values: Vec<f32> = case.values.iter().map(|&v| v as f32).collect();
        let x: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let r = split_dots_equal_parts(&case, &values, &x, |v: f32| u64::from(v.to_bits()), f32::NAN);
        proptest::prop_assert!(r.is_ok(), "f32: {:?}", r);
    }
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

/// The products in chunks (`chunks.rs`) against the slice-by-slice loops,
/// bit for bit, with and without the prefetch: the scatter into the whole
/// of `y` and into a window of its rows, the dot products into a `y` full
/// of garbage and longer than the slices.
fn chunks_equal_slice_loops<T: Float + PartialEq + std::fmt::Debug>(
    c: &Arrays<'_>,
    values: &[T],
    x: &[T],
    xt: &[T],
    nrows: usize,
    bits: impl Fn(T) -> u64,
    garbage: T,
) -> Result<(), String> {
    // The same bits, or NaN on both sides (which NaN comes out where two
    // meet is the compiler's choice: `nan_sums_are_nan_on_every_path`).
    #[allow(clippy::eq_op)]
    let same = |a: &[T], b: &[T]| {
        a.len() == b.len() && a.iter().zip(b).all(|(&p, &q)| bits(p) == bits(q) || (p != p && q != q))
    };
    let arrays = (c.ptr, c.idx, values);
    for (lo, hi) in [(0, nrows), (nrows / 3, nrows * 2 / 3)] {
        let mut expected = vec![T::default(); hi - lo];
        c.scatter_direct_with::<T, 0, false>(values, x, &mut expected, lo as u64);
        // The loop by position (a hint an element) and by sub-slice (a
        // hint every `SPARSE_EVERY`).
        let mut by_position = vec![T::default(); hi - lo];
        c.scatter_direct_with::<T, 64, false>(values, x, &mut by_position, lo as u64);
        if !same(&by_position, &expected) {
            return Err(format!(
                "scatter by position, rows {lo}..{hi}: {by_position:?} for {expected:?}"
            ));
        }
        for prefetch in [0, 64, 128] {
            let mut y = vec![T::default(); hi - lo];
            match prefetch {
                0 => chunks::scatter::<T, 0>(arrays, x, &mut y, lo as u64),
                64 => chunks::scatter::<T, 64>(arrays, x, &mut y, lo as u64),
                _ => chunks::scatter::<T, 128>(arrays, x, &mut y, lo as u64),
            }
            if !same(&y, &expected) {
                return Err(format!("scatter, rows {lo}..{hi}: {y:?} for {expected:?}"));
            }
        }
    }
    let slices = c.ptr.len() - 1;
    let mut expected = vec![garbage; slices + 2];
    dots::dot_slices_with::<T, 0, false>(c.ptr, c.idx, values, xt, &mut expected);
    let mut by_position = vec![garbage; slices + 2];
    dots::dot_slices_with::<T, 64, false>(c.ptr, c.idx, values, xt, &mut by_position);
    if !same(&by_position, &expected) {
        return Err(format!("dots by position: {by_position:?} for {expected:?}"));
    }
    for prefetch in [0, 64, 128] {
        let mut y = vec![garbage; slices + 2];
        match prefetch {
            0 => chunks::dots::<T, 0>(c.ptr, c.idx, values, xt, &mut y),
            64 => chunks::dots::<T, 64>(c.ptr, c.idx, values, xt, &mut y),
            _ => chunks::dots::<T, 128>(c.ptr, c.idx, values, xt, &mut y),
        }
        if !same(&y, &expected) {
            return Err(format!("dots: {y:?} for {expected:?}"));
        }
    }
    // A window of the pointers that starts past 0, as a thread's share.
    let (from, to) = (slices / 3, slices - slices / 4);
    let window = &c.ptr[from..=to];
    let mut expected = vec![garbage; to - from];
    dots::dot_slices_with::<T, 0, false>(window, c.idx, values, xt, &mut expected);
    let mut y = vec![garbage; to - from];
    chunks::dots::<T, 0>(window, c.idx, values, xt, &mut y);
    if !same(&y, &expected) {
        return Err(format!("dots, slices {from}..{to}: {y:?} for {expected:?}"));
    }
    Ok(())
}

/// The values of `case` with some replaced by the values the chunks'
/// argument is about: `±0.0`, subnormals (and their negatives, which
/// cancel), `±inf`, NaN, and the negation of the value before (sums
/// that cancel to `+0.0`). `pick[k % len]` chooses for element `k`.
fn special<T: Float + std::ops::Neg<Output = T>>(values: &[T], picks: &[u8], specials: [T; 8]) -> Vec<T> {
    let mut out: Vec<T> = values.to_vec();
    for k in 0..out.len() {
        let pick = usize::from(picks[k % picks.len()]);
        if let Some(&v) = specials.get(pick) {
            out[k] = v;
        } else if pick == 8 && k > 0 {
            out[k] = -out[k - 1];
        }
    }
    out
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(1000))]

    #[test]
    fn products_in_chunks_equal_slice_loops(case in cases()) {
        let c = csc(&case.ptr, &case.idx, case.nrows as u64);
        // Aᵀ·x reads x at the rows; rows past nrows read 0.
        let xt: Vec<f64> = (0..case.nrows).map(|i| float_from(i as u64 * 0x9E37_79B9)).collect();
        let r = chunks_equal_slice_loops(&c, &case.values, &case.x, &xt, case.nrows, f64::to_bits, f64::NAN);
        proptest::prop_assert!(r.is_ok(), "f64: {:?}", r);
        let values: Vec<f32> = case.values.iter().map(|&v| v as f32).collect();
        let x: Vec<f32> = case.x.iter().map(|&v| v as f32).collect();
        let xt: Vec<f32> = xt.iter().map(|&v| v as f32).collect();
        let r = chunks_equal_slice_loops(&c, &values, &x, &xt, case.nrows, |v| u64::from(v.to_bits()), f32::NAN);
        proptest::prop_assert!(r.is_ok(), "f32: {:?}", r);
    }

    /// The same with `-0.0`, subnormals, infinities, NaNs and cancelling
    /// pairs among the values (picks 0 to 8 of [`special`]; 9 to 19 keep
    /// the value).
    #[test]
    fn chunks_equal_slice_loops_on_special_values(
        case in cases(),
        picks in proptest::collection::vec(0u8..20, 1..50),
    ) {
        let c = csc(&case.ptr, &case.idx, case.nrows as u64);
        let xt: Vec<f64> = (0..case.nrows).map(|i| float_from(i as u64 * 0x9E37_79B9)).collect();
        let tiny = f64::MIN_POSITIVE / 4.0;
        let specials = [0.0, -0.0, tiny, -tiny, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -1.0];
        let values = special(&case.values, &picks, specials);
        let r = chunks_equal_slice_loops(&c, &values, &case.x, &xt, case.nrows, f64::to_bits, f64::NAN);
        proptest::prop_assert!(r.is_ok(), "f64: {:?}", r);
        let tiny = f32::MIN_POSITIVE / 4.0;
        let specials = [0.0, -0.0, tiny, -tiny, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -1.0];
        let values: Vec<f32> = case.values.iter().map(|&v| v as f32).collect();
        let values = special(&values, &picks, specials);
        let x: Vec<f32> = case.x.iter().map(|&v| v as f32).collect();
        let xt: Vec<f32> = xt.iter().map(|&v| v as f32).collect();
        let r = chunks_equal_slice_loops(&c, &values, &x, &xt, case.nrows, |v| u64::from(v.to_bits()), f32::NAN);
        proptest::prop_assert!(r.is_ok(), "f32: {:?}", r);
    }
}

/// A slice's sum starts at +0.0, as the loop's does, and the steps past
/// its end add +0.0: a slice whose one product is -0.0 gives +0.0 (0.0 +
/// -0.0), after a slice whose sum was negative; an infinite or NaN sum
/// does not leak into the next slice; a slice of 5 elements (two trips)
/// and an empty one (one trip of steps past its end) come out exact.
#[test]
fn chunk_sums_start_at_positive_zero() {
    let ptr = [0u64, 2, 3, 4, 6, 6, 11];
    let idx = [0u64, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0];
    let values = [-1.0f32, -2.0, -0.0, f32::INFINITY, 1.0, 1.0, 0.5, 0.25, -8.0, 1e-3, 3.0];
    let x = [1.0f32, 1.0];
    let mut y = [9.0f32; 6];
    chunks::dots::<f32, 0>(&ptr, &idx, &values, &x, &mut y);
    let five = 0.5f32 + 0.25 + -8.0 + 1e-3 + 3.0;
    assert_eq!(
        y.map(f32::to_bits),
        [-3.0f32, 0.0, f32::INFINITY, 2.0, 0.0, five].map(f32::to_bits)
    );
    // A·x: column 0 puts an infinity and a NaN into rows 1 and 2; column
    // 1's -0.0 into the empty row 0 gives +0.0, and its steps past its end
    // (over column 2's rows 1 and 2) leave them as they are; the loop's bits.
    let c = csc(&[0, 2, 3, 5], &[1, 2, 0, 1, 2], 3);
    let values = [f32::INFINITY, f32::NAN, -0.0, 1.0, 1.0];
    let (mut chunked, mut looped) = ([0f32; 3], [0f32; 3]);
    chunks::scatter::<f32, 0>((c.ptr, c.idx, &values), &[1.0; 3], &mut chunked, 0);
    c.scatter_direct_with::<f32, 0, false>(&values, &[1.0; 3], &mut looped, 0);
    assert_eq!(chunked.map(f32::to_bits), looped.map(f32::to_bits));
    assert_eq!(chunked[..2], [0.0, f32::INFINITY]);
    assert_eq!(chunked[0].to_bits(), 0.0f32.to_bits());
    assert!(chunked[2].is_nan());
}

/// Where two NaNs meet in an addition, x86 returns the first operand's,
/// and the compiler orders the operands as it likes: `inf + -inf` gives
/// the default NaN (sign set), `+ NaN` then keeps one or the other. The
/// slice loop and the chunks (and scipy) may differ in the NaN's sign
/// (a fresh-user review found 0x7FC0_0000 against scipy's 0xFFC0_0000);
/// every path gives a NaN there, and the same bits elsewhere.
#[test]
fn nan_sums_are_nan_on_every_path() {
    let ptr = [0u64, 3, 5];
    let idx = [0u64, 1, 2, 3, 4];
    let values = [1.0f32, 1.0, 1.0, 2.0, 0.5];
    let x = [f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 3.0, -8.0];
    let mut slices = [7.0f32; 2];
    dots::dot_slices_with::<f32, 0, false>(&ptr, &idx, &values, &x, &mut slices);
    let mut chunked = [7.0f32; 2];
    chunks::dots::<f32, 0>(&ptr, &idx, &values, &x, &mut chunked);
    assert!(slices[0].is_nan() && chunked[0].is_nan());
    assert_eq!((slices[1], chunked[1]), (2.0, 2.0));
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(500))]

    /// The chunks and the slice loops on pointers never validated
    /// (decreasing, past the arrays, huge) and rows past `y`: no panic,
    /// whatever they compute.
    #[test]
    fn chunks_survive_unchecked_pointers(
        ptr in proptest::collection::vec(proptest::prop_oneof![0u64..40, proptest::prelude::any::<u64>()], 0..30),
        idx in proptest::collection::vec(proptest::prop_oneof![0u64..20, proptest::prelude::any::<u64>()], 0..40),
        first in 0u64..5,
    ) {
        let values: Vec<f32> = (0..idx.len()).map(|k| k as f32 - 3.5).collect();
        let x = vec![1.5f32; ptr.len().saturating_sub(1)];
        let mut y = vec![0f32; 12];
        chunks::scatter::<f32, 64>((&ptr, &idx, &values), &x, &mut y, first);
        chunks::scatter::<f32, 0>((&ptr, &idx, &values), &x, &mut y, first);
        let mut z = vec![0f32; ptr.len()];
        chunks::dots::<f32, 64>(&ptr, &idx, &values, &y, &mut z);
        chunks::dots::<f32, 0>(&ptr, &idx, &values, &y, &mut z);
        // The slice loops too, by position and by sub-slice.
        let arrays = csc(&ptr, &idx, 12);
        arrays.scatter_direct_with::<f32, 64, false>(&values, &x, &mut y, first);
        arrays.scatter_direct_with::<f32, 0, false>(&values, &x, &mut y, first);
        dots::dot_slices_with::<f32, 64, false>(&ptr, &idx, &values, &y, &mut z);
        dots::dot_slices_with::<f32, 0, false>(&ptr, &idx, &values, &y, &mut z);
    }
}

/// What the loops ask for ahead, by the vector's size and the slices'
/// mean length. They follow their arrays ahead where slices hold 32
/// elements or fewer on average and the vector is within 16 MiB; not
/// otherwise, nor with no slices. They prefetch the vector 64 elements
/// ahead beyond 2 MiB or for slices of 5 to 32 on average, and 128 beyond
/// 8 MiB, but not for slices of more than 32 on average with the vector
/// within 8 MiB, nor for slices holding more than one element every 16
/// entries of the vector.
#[test]
fn lookahead_and_prefetch_distance_by_the_vector_and_the_slices() {
    let ptr = |mean: u64| -> Vec<u64> { (0..=100).map(|j| j * mean).collect() };
    let small = vec![0f32; 1 << 18]; // 1 MiB
    let l2 = vec![0f32; 1 << 19]; // 2 MiB
    let l3 = vec![0f32; 2 << 20]; // 8 MiB
    let wide = vec![0f64; 2 << 20]; // 16 MiB
    let far = vec![0f32; 1 << 25]; // 128 MiB
    assert!(lookahead(&ptr(10), &small));
    assert!(lookahead(&ptr(32), &l3));
    assert!(!lookahead(&ptr(33), &small));
    assert!(!lookahead(&ptr(100), &small));
    assert!(lookahead(&ptr(10), &wide));
    assert!(!lookahead(&ptr(10), &vec![0f64; (2 << 20) + 1]));
    assert!(!lookahead(&[7], &small));
    assert!(!lookahead(&[], &small));

    assert_eq!(prefetch_distance(&ptr(2), &l2), 0);
    // Slices of about 10: 64 ahead from the smallest vector, but dense.
    assert_eq!(prefetch_distance(&ptr(4), &small), 0);
    assert_eq!(prefetch_distance(&ptr(5), &small), 64);
    assert_eq!(prefetch_distance(&ptr(10), &vec![0f32; 2048]), 64);
    assert_eq!(prefetch_distance(&ptr(10), &vec![0f32; 159]), 0);
    assert_eq!(prefetch_distance(&ptr(32), &l2), 64);
    assert_eq!(prefetch_distance(&ptr(33), &small), 0);
    assert_eq!(prefetch_distance(&ptr(2), &l3), 64);
    assert_eq!(prefetch_distance(&ptr(32), &l3), 64);
    assert_eq!(prefetch_distance(&ptr(33), &l3), 0);
    assert_eq!(prefetch_distance(&ptr(100), &wide), 128);
    assert_eq!(prefetch_distance(&ptr(2), &far), 128);
    assert_eq!(prefetch_distance(&ptr(100), &far), 128);
    // 2^25 entries, dense from 2^21 + 1 elements a slice on average.
    assert_eq!(prefetch_distance(&ptr(1 << 21), &far), 128);
    assert_eq!(prefetch_distance(&ptr((1 << 21) + 1), &far), 0);
    assert_eq!(prefetch_distance(&[0, 8_000_000], &far), 0);
    assert_eq!(prefetch_distance(&[], &far), 0);
    assert_eq!(prefetch_distance(&[0, u64::MAX], &far), 0);
}

/// Asking for lines past the arrays' ends asks for nothing: a loop near
/// the end, or one that starts past it, runs to completion.
#[test]
fn lookahead_past_the_end_is_nothing() {
    let idx = [1u64, 2, 3];
    let values = [1f32, 2.0, 3.0];
    for at in [0, 1, 2, 3, usize::MAX - 300, usize::MAX] {
        crate::kernels::prefetch::arrays_ahead(&idx, &values, at);
        crate::kernels::prefetch::prefetch_at(&values, at);
    }
    // And the products that use it agree with the definition on short slices.
    let ptr: Vec<u64> = (0..=30).map(|j| j * 10).collect();
    let rows: Vec<u64> = (0..300).map(|k| (k * 13) % 64).collect();
    let c = csc(&ptr, &rows, 64);
    let v: Vec<f32> = (0..300u16).map(|k| f32::from(k % 7) - 3.0).collect();
    let x: Vec<f32> = (0..30u16).map(|j| f32::from(j) * 0.5).collect();
    let mut y = vec![f32::NAN; 64];
    c.scatter(&v, &x, &mut y);
    let mut expected = vec![0f32; 64];
    for (k, (&r, &vk)) in rows.iter().zip(&v).enumerate() {
        expected[r as usize] += vk * x[k / 10];
    }
    assert_eq!(y, expected);
    // The loop a `y` from 8 to 16 MiB takes: the vector prefetched far
    // ahead and the arrays followed too.
    let mut far = vec![0f32; 64];
    c.scatter_direct_with::<f32, { crate::kernels::prefetch::FAR_DISTANCE }, true>(&v, &x, &mut far, 0);
    assert_eq!(far, expected);
    // Aᵀ·x: the dot products with the hints and without, the same bits.
    let xt: Vec<f32> = (0..64u16).map(|i| f32::from(i) * 0.25 - 5.0).collect();
    let (mut ahead, mut plain) = (vec![0f32; 30], vec![0f32; 30]);
    dots::dot_slices_with::<f32, 0, true>(&ptr, &rows, &v, &xt, &mut ahead);
    dots::dot_slices_with::<f32, 0, false>(&ptr, &rows, &v, &xt, &mut plain);
    assert_eq!(ahead, plain);
    dots::dot_slices_with::<f32, { crate::kernels::prefetch::FAR_DISTANCE }, true>(&ptr, &rows, &v, &xt, &mut ahead);
    assert_eq!(ahead, plain);
    let first: f32 = (0..10).map(|k| v[k] * xt[rows[k] as usize]).fold(0.0, |a, p| a + p);
    assert_eq!(ahead[0], first);
}
