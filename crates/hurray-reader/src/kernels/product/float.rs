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
    }
    impl Sealed for f32 {
        fn f32s(v: &[f32]) -> Option<&[f32]> {
            Some(v)
        }
        fn f32s_mut(v: &mut [f32]) -> Option<&mut [f32]> {
            Some(v)
        }
    }
    impl Sealed for f64 {}
}
