//! A cache hint: start loading memory that a loop will read a few
//! iterations later.
//!
//! - The scans (`kernels::scan`, `kernels::coo`) stream their index arrays and ask
//!   for the line 16 KiB ahead of the one they read: without the hint the
//!   core keeps too few misses in flight to reach the memory bandwidth while
//!   it computes (`docs/perf-log/run-i.md`).
//! - The sparse products read `x` (`CsrView::mul_vec`, Aᵀ·x) or update `y`
//!   (the direct scatter of `CscView::mul_vec`) at the positions the index
//!   array gives, one random access per stored element. Without the hint
//!   the core keeps only as many of those misses in flight as its
//!   out-of-order window reaches; with it they start [`DISTANCE`] elements
//!   earlier, [`FAR_DISTANCE`] beyond 8 MiB (`docs/perf-log/run-g.md`,
//!   `run-v.md`). The products prefetch only from vectors larger than L2
//!   (but the dot products where slices hold 5 to 32 on average,
//!   `run-ac.md`), and not where the core follows alone
//!   (`product::prefetch_distance`).
//! - Where that vector is within half of L3 and the slices are short, the
//!   products' slice-by-slice loops follow their index and value arrays
//!   too, [`LOOKAHEAD`] elements ahead ([`arrays_ahead`];
//!   `docs/perf-log/run-r.md`, `run-aa.md`).
//!
//! This module's one `unsafe` block is the hint itself.
#![allow(unsafe_code)]

/// How many `u64`s ahead the scans (`kernels::scan`, `kernels::coo`) prefetch
/// the index arrays they stream: 16 KiB. On the Intel host of
/// `docs/perf-log/run-i.md`, 512 to 4 Ki were within noise of each
/// other and well above no hint.
pub(crate) const STREAM_AHEAD: usize = 2048;

/// How many stored elements ahead the products prefetch. Measured on the
/// AMD host of `docs/perf-log/run-g.md`, with 16, 32, 48, 64, 128 and
/// 256: 32 to 64 were best, within noise of each other. On the Zen 4
/// host of `docs/perf-log/run-l.md`, with `y` or `x` in L3 (8 MiB), 64
/// took 0.88–0.95x the CPU time of 32 (A·x and Aᵀ·x, 2 and 100
/// non-zeros a column), 128 about as long as 64; with 128 MiB, the same
/// as 32 within noise. Beyond 8 MiB the products ask [`FAR_DISTANCE`]
/// ahead instead (`product::prefetch_distance`).
pub(crate) const DISTANCE: usize = 64;

/// How many stored elements ahead the products prefetch a vector beyond
/// 8 MiB. On the Zen 5 host (issue #34, `docs/perf-log/run-v.md`), A B A
/// B against [`DISTANCE`]: Aᵀ·x took 0.74–0.75x the time with about 10
/// and 100 a slice and `x` of 128 MiB (0.74–0.84x on two threads),
/// 0.87–0.94x with about 2; with a `float64` vector of 16 MiB, A·x
/// 0.71–0.83x and Aᵀ·x 0.81–0.95x. With 8 MiB it cost up to 1.07x, so
/// [`DISTANCE`] stays there; 256 took 1.03–1.06x 128's time beyond 8 MiB.
pub(crate) const FAR_DISTANCE: usize = 128;

/// How many elements apart the slice loops that run without a hint an
/// element ask for the vector entry [`DISTANCE`] elements on (long and
/// dense slices, `product::prefetch_distance` 0: `product::walk_hinted`).
/// On the Intel host of issue #34's run AE (`docs/perf-log/run-ae.md`),
/// A B A B against no hint, about 100 a slice: with the vector in L3
/// (8 MiB), A·x took 0.81x the time on one thread and 0.86x on two, Aᵀ·x
/// 0.78x and 0.80x; in L2 (512 KiB) 0.92–0.95x; one dense column of 8 M
/// elements 0.95–0.99x. A hint an element cost Aᵀ·x and the two-thread
/// A·x 1.11–1.20x there (the one-thread A·x 0.98x), as on the Zen 5 host
/// (`docs/perf-log/run-v.md`), where this spacing was not measured; 32,
/// 128 or 256 ahead instead of [`DISTANCE`], 0.99–1.07x.
pub(crate) const SPARSE_EVERY: usize = 8;

/// Asks the CPU to bring the cache line holding `value` into its caches.
/// Changes nothing the program can observe but timing; a no-op on targets
/// other than x86-64.
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    hint(std::ptr::from_ref(value).cast());
}

/// Asks for the cache line of `items[i]`, or of where it would be past the
/// end: a hint never faults, so the products ask for entries without a
/// bounds check (a branch an element). An index far past the end asks for
/// some other line, which costs at most a wasted load.
#[inline(always)]
pub(crate) fn prefetch_at<T>(items: &[T], i: usize) {
    prefetch_from(items.as_ptr(), i);
}

/// [`prefetch_at`] from the start of a vector that is borrowed mutably
/// elsewhere (the `y` of a scatter): `base` is never dereferenced.
#[inline(always)]
pub(crate) fn prefetch_from<T>(base: *const T, i: usize) {
    hint(base.wrapping_add(i).cast());
}

/// The hint itself (`prefetcht0`).
#[inline(always)]
fn hint(address: *const i8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: `_mm_prefetch` is a hint: it reads and writes nothing the
        // program can observe and never faults, whatever the address (that
        // of a live reference, or one computed with `wrapping_add` that may
        // point anywhere). Its only requirement is the SSE instruction set,
        // which every x86-64 CPU has (the target's baseline).
        unsafe { _mm_prefetch::<_MM_HINT_T0>(address) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// How many elements ahead [`arrays_ahead`] follows the index and value
/// arrays: 2 KiB of `u64` indices. On the Zen 4 host, of 128, 256, 512,
/// 768 and 2 048 (the scans' [`STREAM_AHEAD`]), 256 took the least time
/// (`docs/perf-log/run-r.md`; 2 048, 24 KiB of lines ahead of the loop in
/// an L1 cache of 32 KiB, 1.00–1.09x 256's).
pub(crate) const LOOKAHEAD: usize = 256;

/// Before a slice that starts at position `at`, asks for the lines of
/// `idx` [`LOOKAHEAD`] elements on and 8 indices further, and for the line
/// of `values` [`LOOKAHEAD`] elements on (slices of about 10 touch one or
/// two of each): the index and value arrays a product walks slice by
/// slice, followed ahead of the loop. Without the hints, where slices are
/// short and the vector read or written at random is in the caches, the
/// loop's mispredicted branch at each slice's end left the arrays' loads
/// waiting. The products decide where it is on (`product::lookahead`).
#[inline(always)]
pub(crate) fn arrays_ahead<T>(idx: &[u64], values: &[T], at: usize) {
    let ahead = at.wrapping_add(LOOKAHEAD);
    prefetch_at(idx, ahead);
    prefetch_at(idx, ahead.wrapping_add(8));
    prefetch_at(values, ahead);
}
