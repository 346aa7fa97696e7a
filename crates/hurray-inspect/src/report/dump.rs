//! `--dump`: every buffer of one tensor, every element decoded by the
//! library.

use hurray_reader::{Buffer, BufferRole, ElementType, Tensor};

/// The scales and the zero points of a shared `[scales | zero_points]`
/// buffer (`Tensor::scales`, `Tensor::zero_points`); `None` for any other
/// buffer.
pub fn shared_parts<'data>(t: &Tensor<'data>, b: &Buffer<'data>) -> Option<[Buffer<'data>; 2]> {
    if b.role() != BufferRole::ScalesAndZeroPoints {
        return None;
    }
    Some([t.scales()?, t.zero_points()?])
}

/// Why a buffer's elements are shown as bytes, not values: its element type
/// is unknown, or wider than the 128 bits a [`Value`](hurray_reader::Value)
/// holds (a private extension type).
pub fn not_decoded(dtype: Option<ElementType>) -> Option<&'static str> {
    match dtype {
        None => Some("unknown element type"),
        Some(t) if t.bit_width() > 128 => Some("elements wider than 128 bits"),
        Some(_) => None,
    }
}
