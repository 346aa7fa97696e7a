//! Scratch memory kept between products: the bins of the blocked scatter
//! (up to 128 MiB a thread where `y` is beyond 16 MiB).
//!
//! Allocated afresh, that memory comes from the OS on every call, and the
//! first touch of each 4 KiB page costs a fault: a quarter of the CPU time
//! of A·x on one thread with `y` of 128 MiB on the Zen 5 host (issue #34,
//! `docs/perf-log/run-aa.md`). A product [`take`]s its scratch here and
//! gives it back when the [`Lease`] drops; up to [`KEEP_BYTES`] of it
//! stays for the next product until [`release`] (as MKL keeps its buffers
//! until `mkl_free_buffers`).
//!
//! The contents of a lease are unspecified (zero or an earlier product's):
//! its users write every slot before they read it.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// The most scratch of one element type kept between products (bytes):
/// 256 MiB and 4 KiB, two of the largest AVX-512 scatter's scratches (128
/// MiB and 1 KiB each, for 16 Mi to 32 Mi rows of `y`: one product on one
/// thread, or a `y` of 64 Mi `f32` rows on two; `avx512::tests` checks
/// the fit).
pub(crate) const KEEP_BYTES: usize = (256 << 20) + (4 << 10);

/// The element types of scratch, each with a [`Store`] of its own.
pub(crate) trait Kept: Copy + Default + Send + 'static {
    /// A fresh buffer of `len` zeroed elements (`None` if it cannot be
    /// allocated).
    fn fresh(len: usize) -> Option<Vec<Self>> {
        let mut buf = Vec::new();
        buf.try_reserve_exact(len).ok()?;
        buf.resize(len, Self::default());
        Some(buf)
    }
    /// What a kept buffer is filled with before it is lent again, in
    /// builds with debug assertions (the tests): a NaN for the first row
    /// of its block, so that a slot read before it is written shows in
    /// a result.
    const POISON: Self;
    /// The buffers of this type kept between products.
    fn store() -> &'static Store<Self>;
}

impl Kept for u64 {
    // An AVX-512 bin entry: offset 0 (low half), value bits a NaN.
    const POISON: Self = 0xFFFF_FFFF_0000_0000;
    /// Zeroed by the allocator (`calloc`: fresh pages from the OS are
    /// zero already, faulted in by the product's first write) rather than
    /// written twice.
    fn fresh(len: usize) -> Option<Vec<Self>> {
        <u64 as zerocopy::FromZeros>::new_vec_zeroed(len).ok()
    }
    fn store() -> &'static Store<Self> {
        static KEPT: Store<u64> = Store::new(KEEP_BYTES);
        &KEPT
    }
}

impl Kept for (u32, f32) {
    const POISON: Self = (0, f32::NAN);
    fn store() -> &'static Store<Self> {
        static KEPT: Store<(u32, f32)> = Store::new(KEEP_BYTES);
        &KEPT
    }
}

impl Kept for (u32, f64) {
    const POISON: Self = (0, f64::NAN);
    fn store() -> &'static Store<Self> {
        static KEPT: Store<(u32, f64)> = Store::new(KEEP_BYTES);
        &KEPT
    }
}

/// `len` elements of scratch: the smallest kept buffer that holds them, or
/// a fresh one (`None` if that cannot be allocated).
pub(crate) fn take<E: Kept>(len: usize) -> Option<Lease<E>> {
    E::store().take(len)
}

/// Frees the scratch kept between products; returns its size in bytes. A
/// lease out at the time (a product still running) comes back later, and
/// is kept.
pub(crate) fn release() -> usize {
    let (a, b, c) = (u64::store(), <(u32, f32)>::store(), <(u32, f64)>::store());
    a.release().saturating_add(b.release()).saturating_add(c.release())
}

/// Scratch of `len` elements, borrowed from its store until it drops.
/// (`pub` in this crate-private module: `Float`'s sealed trait hands out
/// leases of bin entries.)
pub struct Lease<E: 'static> {
    buf: Vec<E>,
    len: usize,
    store: &'static Store<E>,
}

impl<E> Lease<E> {
    /// The `len` elements of the lease.
    pub(crate) fn as_slice(&self) -> &[E] {
        self.buf.get(..self.len).unwrap_or_default()
    }

    /// The `len` elements of the lease.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [E] {
        self.buf.get_mut(..self.len).unwrap_or_default()
    }
}

impl<E> Drop for Lease<E> {
    fn drop(&mut self) {
        self.store.give(std::mem::take(&mut self.buf));
    }
}

/// Buffers given back and not yet taken again, at most `keep` bytes
/// together ([`KEEP_BYTES`] for the products' stores).
pub struct Store<E> {
    kept: Mutex<Vec<Vec<E>>>,
    keep: usize,
}

impl<E> Store<E> {
    const fn new(keep: usize) -> Self {
        Store {
            kept: Mutex::new(Vec::new()),
            keep,
        }
    }

    fn kept(&self) -> MutexGuard<'_, Vec<Vec<E>>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn take(&'static self, len: usize) -> Option<Lease<E>>
    where
        E: Kept,
    {
        let kept = if len == 0 {
            None
        } else {
            let mut kept = self.kept();
            let fits = kept.iter().enumerate().filter(|(_, b)| b.len() >= len);
            let smallest = fits.min_by_key(|(_, b)| b.len()).map(|(i, _)| i);
            smallest.map(|i| kept.swap_remove(i))
        };
        let buf = match kept {
            Some(mut buf) => {
                if cfg!(debug_assertions) {
                    buf.fill(E::POISON);
                }
                buf
            }
            None => E::fresh(len)?,
        };
        Some(Lease { buf, len, store: self })
    }

    /// Keeps `buf` for a later [`take`]: of it and the buffers already
    /// kept, the largest first, those that fit within `keep` bytes
    /// together. The others are freed once the lock is released.
    fn give(&self, buf: Vec<E>) {
        if buf.is_empty() {
            return;
        }
        let mut kept = self.kept();
        let mut all = std::mem::take(&mut *kept);
        all.push(buf);
        all.sort_unstable_by_key(|b| std::cmp::Reverse(b.len()));
        let mut total = 0usize;
        let (keep, excess): (Vec<_>, Vec<_>) = all.into_iter().partition(|b| {
            let bytes = std::mem::size_of_val(b.as_slice());
            let fits = total.checked_add(bytes).is_some_and(|t| t <= self.keep);
            if fits {
                total = total.wrapping_add(bytes);
            }
            fits
        });
        *kept = keep;
        drop(kept);
        drop(excess);
    }

    fn release(&self) -> usize {
        let freed = std::mem::take(&mut *self.kept());
        freed.iter().map(|b| std::mem::size_of_val(b.as_slice())).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reuse, the smallest fit, the bound, and release, on a store of
    /// the test's own (the products share the global one).
    #[test]
    fn keeps_reuses_and_releases() {
        static STORE: Store<u64> = Store::new(16 << 10);
        let (take, release) = (|len| STORE.take(len), || STORE.release());
        let mut a = take(1000).unwrap();
        assert_eq!(a.as_mut_slice(), &[0; 1000][..]);
        a.as_mut_slice().fill(7);
        let ptr = a.as_mut_slice().as_ptr();
        drop(a);
        // The same buffer again, cut to the length asked for: as the last
        // lease left it, or poisoned in builds with debug assertions.
        let mut b = take(10).unwrap();
        let left = if cfg!(debug_assertions) { u64::POISON } else { 7 };
        assert_eq!(
            (b.as_mut_slice().as_ptr(), b.as_mut_slice()),
            (ptr, &mut [left; 10][..])
        );
        // A second lease while the first is out: fresh, zeroed.
        let mut c = take(500).unwrap();
        assert_eq!(c.as_mut_slice(), &[0; 500][..]);
        drop((b, c));
        // The smallest that fits: the 500.
        assert_eq!(take(400).unwrap().as_mut_slice().len(), 400);
        assert_eq!(release(), 1500 * 8);
        // Beyond the bound, the smallest buffers go.
        let big = (16 << 10) / 8 - 100;
        drop((take(big).unwrap(), take(200).unwrap(), take(50).unwrap()));
        assert_eq!(release(), (big + 50) * 8);
        assert_eq!(release(), 0);
    }

    /// Threads taking and giving back at once never share a buffer: each
    /// fills its lease with its own mark and finds it intact before
    /// giving it back.
    #[test]
    fn leases_are_never_shared() {
        static STORE: Store<u64> = Store::new(64 << 10);
        let workers: Vec<_> = (1..=4u64)
            .map(|mark| {
                std::thread::spawn(move || {
                    for round in 0..200u64 {
                        let len = usize::try_from(1 + (round * 7919 + mark * 104_729) % 2000).unwrap();
                        let mut lease = STORE.take(len).unwrap();
                        lease.as_mut_slice().fill(mark);
                        std::thread::yield_now();
                        assert!(
                            lease.as_slice().iter().all(|&v| v == mark),
                            "thread {mark}, round {round}"
                        );
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        assert!(STORE.release() <= 64 << 10);
    }
}
