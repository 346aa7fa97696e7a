//! `--dump`: every buffer of one tensor, every element decoded by the
//! library (`Buffer::values`). The report holds the buffers' handles; their
//! elements are read as they are written, so nothing the size of the data
//! is held in memory and a multi-gigabyte tensor streams to a pipe.

use hurray_reader::{Buffer, BufferRole, ElementType, Tensor};

use crate::report::header::{located_buffers, Header};

/// `--dump`: the tensor's header and its buffers.
#[derive(Clone)]
pub struct Dump<'data> {
    pub header: Header<'data>,
    /// Why the data is not interpreted (composite head, unknown tag, ...).
    pub not_viewable: Option<&'static str>,
    /// Whether the buffers were located: an unknown layout (permissive)
    /// hides the buffer table, which is not the same as no buffers.
    pub located: bool,
    /// Every buffer, in buffer-table order.
    pub buffers: Vec<DumpBuffer<'data>>,
    /// The descriptor's `byte_offset` (named when a buffer's elements do
    /// not start at its first byte).
    pub byte_offset: u64,
}

/// One buffer of a [`Dump`].
#[derive(Clone, Copy)]
pub struct DumpBuffer<'data> {
    pub buffer: Buffer<'data>,
    /// A shared `[scales | zero_points]` buffer: its scales and its zero
    /// points, each shown as a buffer of its own.
    pub parts: Option<[Buffer<'data>; 2]>,
}

impl<'data> Dump<'data> {
    /// The buffers of `t`, located (their elements are not read).
    pub fn gather(t: &Tensor<'data>) -> Self {
        Dump {
            header: Header::of(t),
            not_viewable: t.not_viewable(),
            located: located_buffers(t).is_some(),
            buffers: t
                .buffers()
                .iter()
                .map(|&buffer| DumpBuffer {
                    buffer,
                    parts: shared_parts(t, &buffer),
                })
                .collect(),
            byte_offset: t.descriptor().byte_offset(),
        }
    }
}

/// The scales and the zero points of a shared `[scales | zero_points]`
/// buffer (`Tensor::scales`, `Tensor::zero_points`); `None` for any other
/// buffer.
fn shared_parts<'data>(t: &Tensor<'data>, b: &Buffer<'data>) -> Option<[Buffer<'data>; 2]> {
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
