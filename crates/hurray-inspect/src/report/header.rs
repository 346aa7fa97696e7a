//! What every report reads from a tensor: the [`Header`] of the
//! per-tensor reports, element type and scheme names, the buffers as
//! located, the library's warnings and the `--validate` verdict.

use hurray_reader::{Buffer, Descriptor, ElementType, Layout, QuantScheme, Quantization, Tensor};

/// The facts that head every per-tensor output.
#[derive(Debug, Clone)]
pub struct Header<'data> {
    pub name: &'data str,
    /// `None` for an unknown type tag kept in permissive mode.
    pub dtype: Option<ElementType>,
    pub layout: Layout,
    pub shape: Vec<u64>,
    /// Sparse layouts only.
    pub nnz: Option<u64>,
    /// The descriptor's `type_tag` (named when `dtype` is `None`).
    pub type_tag: u8,
}

impl<'data> Header<'data> {
    /// The element type's name, `unknown(0x..)` for an unknown tag.
    pub fn dtype_name(&self) -> String {
        dtype_name(self.dtype, self.type_tag)
    }

    /// What a descriptor says (also on its own, when its tensor did not
    /// resolve).
    pub fn of_descriptor(name: &'data str, d: &Descriptor<'data>) -> Self {
        Header {
            name,
            dtype: d.element_type(),
            layout: d.layout(),
            shape: d.shape().collect(),
            nnz: d.layout_fields().nnz(),
            type_tag: d.header().type_tag,
        }
    }

    pub fn of(t: &Tensor<'data>) -> Self {
        Self::of_descriptor(t.name(), t.descriptor())
    }
}

/// A `--validate` verdict: `Some(false)` with an error; `None` when the
/// tensor's data could not be checked (`not_viewable`: an unknown type,
/// layout or quantization scheme kept in permissive mode, an extension
/// layout); `Some(true)` otherwise, also for a composite head, which owns
/// no data and whose members are checked on their own.
pub fn verdict(error: bool, layout: Option<Layout>, not_viewable: Option<&str>) -> Option<bool> {
    if error {
        Some(false)
    } else if not_viewable.is_some() && layout != Some(Layout::Composite) {
        None
    } else {
        Some(true)
    }
}

/// The name shown for an element type: the spec's (`float32`), or
/// `unknown(0x05)` for a type tag the reader does not know (permissive
/// mode), as an unknown layout reads `unknown(0x0c)`.
pub fn dtype_name(dtype: Option<ElementType>, type_tag: u8) -> String {
    dtype.map_or_else(|| format!("unknown(0x{type_tag:02x})"), |e| e.as_str().to_owned())
}

/// A quantization scheme's name (`per_block_affine`), or `unknown(0x07)`
/// for a scheme tag the reader does not know, as an unknown type reads.
pub fn scheme_name(q: &Quantization<'_>) -> String {
    match q.scheme {
        QuantScheme::Unknown => format!("unknown(0x{:02x})", q.header.scheme_tag),
        scheme => scheme.as_str().to_owned(),
    }
}

/// A resolved tensor's buffers, or `None` when they were not located: an
/// unknown layout (permissive) hides the buffer table, which is not the
/// same as a tensor with no buffers.
pub fn located_buffers<'t, 'data>(tensor: &'t Tensor<'data>) -> Option<&'t [Buffer<'data>]> {
    tensor.descriptor().buffer_handles().map(|_| tensor.buffers())
}
