//! What the layouts' views share: checking a lookup's index, and checking
//! that a tensor has the layout a view wants.

use super::compressed::{Compressed, Names};
use crate::cursor::to_u64;
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::tensor::Tensor;

/// Checks a lookup's `index` against the tensor's `shape`: one coordinate
/// per dimension ([`Error::LengthMismatch`]), each below its dimension
/// ([`Error::CoordinateArgument`]).
pub(crate) fn check_index(tensor: &str, index: &[u64], shape: &[u64]) -> Result<()> {
    if index.len() != shape.len() {
        return Err(Error::LengthMismatch {
            tensor: tensor.into(),
            what: "index",
            len: to_u64(index.len()),
            expected_name: "rank",
            expected: to_u64(shape.len()),
        });
    }
    match (0..).zip(index.iter().zip(shape)).find(|(_, (&i, &n))| i >= n) {
        Some((axis, (&value, &bound))) => Err(Error::CoordinateArgument {
            tensor: tensor.into(),
            axis,
            value,
            bound,
        }),
        None => Ok(()),
    }
}

impl<'data> Tensor<'data> {
    pub(crate) fn layout_mismatch(&self, requested: Layout) -> Error {
        Error::LayoutMismatch {
            tensor: self.name().into(),
            requested: requested.as_str(),
            actual: self.layout().as_str(),
        }
    }

    /// Fails unless the tensor has `layout` and its data may be interpreted.
    pub(crate) fn ensure_layout(&self, layout: Layout) -> Result<()> {
        if self.layout() != layout {
            return Err(self.layout_mismatch(layout));
        }
        self.ensure_viewable()
    }

    /// The pointer and index arrays of a CSC or CSR tensor.
    pub(crate) fn compressed(&self, layout: Layout, names: Names) -> Result<Compressed<'data>> {
        self.ensure_layout(layout)?;
        let nnz = self.nnz().unwrap_or(0);
        let shape = self.static_shape()?;
        let (outer_axis, inner_axis) = if layout == Layout::Csc { (1, 0) } else { (0, 1) };
        let idx = self.buffer(1)?;
        let ptr = self.buffer(2)?;
        Ok(Compressed {
            tensor: self.name(),
            names,
            outer_len: shape.get(outer_axis).copied().unwrap_or(0),
            inner_len: shape.get(inner_axis).copied().unwrap_or(0),
            nnz,
            ptr: ptr.as_slice::<u64>()?,
            idx: idx.as_slice::<u64>()?,
            ptr_offset: ptr.file_offset(),
            idx_offset: idx.file_offset(),
            scanned: false,
            transposed: false,
            window: None,
        })
    }
}
