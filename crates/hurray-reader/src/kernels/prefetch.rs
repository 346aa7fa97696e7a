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
//!   earlier (`docs/perf-log/run-g.md`). The products prefetch only
//!   from vectors larger than the caches.
//! - Where that vector is cached and the slices are short, the products'
//!   slice-by-slice loops follow their index and value arrays instead,
//!   [`LOOKAHEAD`] elements ahead ([`Lookahead`]; `docs/perf-log/run-r.md`).
//!
//! This module holds the crate's second `unsafe` block, the hint itself.
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
/// as 32 within noise.
pub(crate) const DISTANCE: usize = 64;

/// Asks the CPU to bring the cache line holding `value` into its caches.
/// Changes nothing the program can observe but timing; a no-op on targets
/// other than x86-64.
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let address = std::ptr::from_ref(value).cast::<i8>();
        // SAFETY: `_mm_prefetch` is a hint: it reads and writes nothing the
        // program can observe and never faults, whatever the address (here
        // that of a live reference anyway). Its only requirement is the SSE
        // instruction set, which every x86-64 CPU has (the target's
        // baseline).
        unsafe { _mm_prefetch::<_MM_HINT_T0>(address) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// How many elements ahead [`Lookahead`] follows the index and value
/// arrays: 2 KiB of `u64` indices. On the Zen 4 host, of 128, 256, 512,
/// 768 and 2 048 (the scans' [`STREAM_AHEAD`]), 256 took the least time
/// (`docs/perf-log/run-r.md`; 2 048, 24 KiB of lines ahead of the loop in
/// an L1 cache of 32 KiB, 1.00–1.09x 256's).
pub(crate) const LOOKAHEAD: usize = 256;

/// The index and value arrays a product walks slice by slice, followed
/// [`LOOKAHEAD`] elements ahead of the loop: before each slice,
/// [`pass`](Self::pass) asks for the index lines at that distance and 8
/// indices on, and for the value line (slices of about 10 touch one or
/// two of each). Without the hints, where slices are short and the
/// vector read or written at random is in the caches, the loop's
/// mispredicted branch at each slice's end left the arrays' loads
/// waiting. The products decide where it is on (`product::lookahead`).
pub(crate) struct Lookahead<'a, T> {
    idx: &'a [u64],
    values: &'a [T],
}

impl<'a, T> Lookahead<'a, T> {
    /// Following `idx` and `values` from position `at` (the loop's first
    /// element).
    pub(crate) fn new(idx: &'a [u64], values: &'a [T], at: usize) -> Self {
        let ahead = at.saturating_add(LOOKAHEAD);
        Lookahead {
            idx: idx.get(ahead..).unwrap_or_default(),
            values: values.get(ahead..).unwrap_or_default(),
        }
    }

    /// Prefetches [`LOOKAHEAD`] elements past the start of the slice that
    /// starts now, which holds `len` elements, and moves on past it.
    #[inline(always)]
    pub(crate) fn pass(&mut self, len: usize) {
        for line in [self.idx.first(), self.idx.get(8)].into_iter().flatten() {
            prefetch(line);
        }
        if let Some(line) = self.values.first() {
            prefetch(line);
        }
        self.idx = self.idx.get(len..).unwrap_or_default();
        self.values = self.values.get(len..).unwrap_or_default();
    }
}
