//! The element types of the products ([`Float`]: `f32`, `f64`).

/// The element types [`CscView::mul_vec`](crate::CscView::mul_vec) and
/// [`CsrView::mul_vec`](crate::CsrView::mul_vec) compute with: `f32` and
/// `f64` (sealed). Products and sums are taken in `Self`, in storage
/// order, like scipy's `csc_matvec` / `csr_matvec`.
pub trait Float:
    crate::Element
    + Copy
    + Default
    + Send
    + Sync
    + std::ops::Add<Output = Self>
    + std::ops::Mul<Output = Self>
    + private::Sealed
{
}

impl Float for f32 {}
impl Float for f64 {}

mod private {
    use crate::kernels::scratch::{self, Lease};

    /// Seals [`Float`](super::Float), and holds what differs by type: the
    /// kernels written for `f32` only (the AVX-512 scatter) take a slice
    /// of `Self` as `f32`s when it is one.
    pub trait Sealed: Sized {
        /// `v` as `f32`s, when `Self` is `f32`.
        fn f32s(_v: &[Self]) -> Option<&[f32]> {
            None
        }
        /// `v` as `f32`s, when `Self` is `f32`.
        fn f32s_mut(_v: &mut [Self]) -> Option<&mut [f32]> {
            None
        }
        /// `self` if `keep`, else `+0.0`, without a branch: a `cmov` on
        /// the bits (a select of floats compiles to a branch on x86-64).
        fn kept(self, keep: bool) -> Self;
        /// `len` bin entries of the blocked scatter ([`scratch::take`]).
        fn bin_scratch(len: usize) -> Option<Lease<(u32, Self)>>;
    }
    impl Sealed for f32 {
        fn bin_scratch(len: usize) -> Option<Lease<(u32, Self)>> {
            scratch::take(len)
        }
        fn f32s(v: &[f32]) -> Option<&[f32]> {
            Some(v)
        }
        fn f32s_mut(v: &mut [f32]) -> Option<&mut [f32]> {
            Some(v)
        }
        #[cfg(target_arch = "x86_64")]
        #[inline(always)]
        #[allow(unsafe_code)]
        fn kept(self, keep: bool) -> Self {
            use std::arch::x86_64::{_mm_and_ps, _mm_castsi128_ps, _mm_cvtsi32_si128, _mm_cvtss_f32, _mm_set_ss};
            // SAFETY: SSE and SSE2 are part of x86-64 (every x86-64 CPU
            // has them); these intrinsics only compute on registers.
            unsafe {
                let mask = _mm_castsi128_ps(_mm_cvtsi32_si128(-i32::from(keep)));
                _mm_cvtss_f32(_mm_and_ps(_mm_set_ss(self), mask))
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        #[inline(always)]
        fn kept(self, keep: bool) -> Self {
            f32::from_bits(std::hint::select_unpredictable(keep, self.to_bits(), 0))
        }
    }
    impl Sealed for f64 {
        fn bin_scratch(len: usize) -> Option<Lease<(u32, Self)>> {
            scratch::take(len)
        }
        #[cfg(target_arch = "x86_64")]
        #[inline(always)]
        #[allow(unsafe_code)]
        fn kept(self, keep: bool) -> Self {
            use std::arch::x86_64::{_mm_and_pd, _mm_castsi128_pd, _mm_cvtsd_f64, _mm_cvtsi64_si128, _mm_set_sd};
            // SAFETY: as for `f32`: SSE2, part of x86-64, on registers.
            unsafe {
                let mask = _mm_castsi128_pd(_mm_cvtsi64_si128(-i64::from(keep)));
                _mm_cvtsd_f64(_mm_and_pd(_mm_set_sd(self), mask))
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        #[inline(always)]
        fn kept(self, keep: bool) -> Self {
            f64::from_bits(std::hint::select_unpredictable(keep, self.to_bits(), 0))
        }
    }
}
