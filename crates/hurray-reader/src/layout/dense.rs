//! Dense views: row-major, column-major, strided, tiled, Morton and Hilbert
//! (`layouts/row-major.md` … `layouts/hilbert.md`). Every layout maps a
//! logical index to a position in buffer 0 by its own formula.

use crate::cursor::to_u64;
use crate::element_type::Element;
use crate::error::{Error, Result};
use crate::layout::fields::{Layout, LayoutFields};
use crate::layout::storage::element_origin;
use crate::layout::{column_major, hilbert, morton, row_major, strided, tiled};
use crate::tensor::Tensor;
use crate::value::Value;

/// Maps logical indices of a dense tensor to element positions in buffer 0.
#[derive(Clone)]
pub struct Addressing<'data> {
    pub(crate) tensor: &'data str,
    layout: Layout,
    shape: Vec<u64>,
    /// The shape whose row- or column-major strides place the elements:
    /// `shape`, or for quantized blocks along an axis, `shape` with that
    /// axis rounded up to whole blocks.
    storage_shape: Vec<u64>,
    fields: LayoutFields<'data>,
    /// Position of element `[0, ..., 0]`, in elements from buffer 0's
    /// first element (at byte [`Buffer::element_start`](crate::Buffer::element_start)).
    pub(crate) origin: i128,
}

/// Layout, shape (first few dimensions), layout fields and origin.
impl std::fmt::Debug for Addressing<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::debug::{few, Text};
        f.debug_struct("Addressing")
            .field("tensor", &Text(self.tensor))
            .field("layout", &self.layout)
            .field("shape", &few(&self.shape))
            .field("storage_shape", &few(&self.storage_shape))
            .field("fields", &self.fields)
            .field("origin", &self.origin)
            .finish()
    }
}

impl<'data> Addressing<'data> {
    /// The shape.
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// Position in buffer 0, in elements, of the element at `index`:
    /// [`Tensor::element_origin`] plus the layout's offset of `index`.
    /// Positions count from buffer 0's first element, which starts at byte
    /// [`Buffer::element_start`](crate::Buffer::element_start) (not always
    /// byte 0: see there), as [`DenseView::as_slice`] and
    /// [`Buffer::value`](crate::Buffer::value) do.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for an index without `rank` coordinates,
    /// [`Error::CoordinateArgument`] for one outside the shape.
    pub fn position(&self, index: &[u64]) -> Result<u64> {
        super::view::check_index(self.tensor, index, &self.shape)?;
        let offset = match &self.fields {
            LayoutFields::Strided { strides } => strided::dot(index, strides.iter().map(|s| i128::from(s.get()))),
            LayoutFields::Tiled { levels } => tiled::tiled_offset(levels, 0, &self.shape, index),
            LayoutFields::Morton { morton_bits } => i128::from(morton::morton_code(index, morton_bits)),
            LayoutFields::Hilbert(h) => i128::from(hilbert::hilbert_index(index, h.hilbert_order.get())),
            _ if self.layout == Layout::ColMajor => strided::dot(index, column_major::strides(&self.storage_shape)),
            _ => strided::dot(index, row_major::strides(&self.storage_shape)),
        };
        u64::try_from(self.origin + offset).map_err(|_| Error::IndexArgument {
            tensor: self.tensor.into(),
            what: "element position",
            index: 0,
            bound: 0,
        })
    }

    /// For row-major, column-major and strided tensors, the step in
    /// elements from one element to the next along each dimension (`rank`
    /// entries; a strided tensor's may be negative or zero), so that
    /// `position(index) = element_origin + Σ index[k] × strides[k]`
    /// (`memory-layout.md` § Element Address Computation). `None` for tiled,
    /// Morton and Hilbert tensors, whose positions are not linear in the
    /// index, and when a step does not fit in an `i64`.
    ///
    /// A program that addresses elements itself (a numpy array over the
    /// buffer, an `ndarray` view) multiplies these by the element width.
    pub fn strides(&self) -> Option<Vec<i64>> {
        let strides: Vec<i128> = match &self.fields {
            LayoutFields::Strided { strides } => strides.iter().map(|s| i128::from(s.get())).collect(),
            LayoutFields::Tiled { .. } | LayoutFields::Morton { .. } | LayoutFields::Hilbert(_) => return None,
            _ if self.layout == Layout::ColMajor => column_major::strides(&self.storage_shape).collect(),
            _ => row_major::strides(&self.storage_shape).collect(),
        };
        strides.into_iter().map(|s| i64::try_from(s).ok()).collect()
    }

    /// The position in buffer 0 of every element, in logical row-major
    /// order (the last dimension fastest): `position(index)` for each
    /// index of [`logical_indices`], without an allocation per element.
    /// Empty for an empty tensor, one position for a scalar. (It would end
    /// early at a position that does not fit in a `u64`, which the checks of
    /// [`HurrayFile::tensor`](crate::HurrayFile::tensor) rule out.)
    pub fn positions(&self) -> impl Iterator<Item = u64> + '_ {
        let strides = self.strides();
        let mut index = vec![0u64; self.shape.len()];
        let mut done = self.shape.contains(&0);
        std::iter::from_fn(move || {
            if done {
                return None;
            }
            let p = match &strides {
                Some(s) => u64::try_from(self.origin + strided::dot(&index, s.iter().map(|&s| i128::from(s)))).ok(),
                None => self.position(&index).ok(),
            };
            done = !next_index(&mut index, &self.shape);
            p
        })
    }
}

/// Steps `index` to the next index of `shape` in row-major order; false
/// after the last one.
fn next_index(index: &mut [u64], shape: &[u64]) -> bool {
    for (i, &n) in index.iter_mut().zip(shape).rev() {
        *i += 1;
        if *i < n {
            return true;
        }
        *i = 0;
    }
    false
}

/// A dense tensor with elements `T`, borrowed from buffer 0.
#[derive(Clone)]
pub struct DenseView<'data, T> {
    pub(crate) addressing: Addressing<'data>,
    pub(crate) elements: &'data [T],
}

/// The addressing and the first few elements in storage order.
impl<T: std::fmt::Debug> std::fmt::Debug for DenseView<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DenseView")
            .field("addressing", &self.addressing)
            .field("elements", &crate::debug::few(self.elements))
            .finish()
    }
}

impl<'data, T: Element> DenseView<'data, T> {
    /// The shape.
    pub fn shape(&self) -> &[u64] {
        self.addressing.shape()
    }

    /// The index-to-position mapping.
    pub fn addressing(&self) -> &Addressing<'data> {
        &self.addressing
    }

    /// Buffer 0 as elements, in storage order (for row-major tensors with
    /// `byte_offset = 0`, the logical order), padding included: every
    /// element from buffer 0's first one, at byte
    /// [`Buffer::element_start`](crate::Buffer::element_start), so that
    /// element `[0, ..., 0]` is at [`Tensor::element_origin`] and
    /// [`Addressing::position`] indexes this slice.
    pub fn as_slice(&self) -> &'data [T] {
        self.elements
    }

    /// The element at `index` (`rank` coordinates, logical order).
    ///
    /// # Errors
    /// As [`Addressing::position`]: [`Error::LengthMismatch`] for an index
    /// without `rank` coordinates, [`Error::CoordinateArgument`] for one
    /// outside the shape; [`Error::IndexArgument`] if the position falls
    /// outside buffer 0.
    pub fn get(&self, index: &[u64]) -> Result<&'data T> {
        let p = self.addressing.position(index)?;
        usize::try_from(p)
            .ok()
            .and_then(|p| self.elements.get(p))
            .ok_or_else(|| Error::IndexArgument {
                tensor: self.addressing.tensor.into(),
                what: "element position",
                index: p,
                bound: to_u64(self.elements.len()),
            })
    }
}

impl<'data> Tensor<'data> {
    /// The logical-index mapping of a dense tensor (any element type).
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] for a non-dense layout, [`Error::NotViewable`].
    pub fn addressing(&self) -> Result<Addressing<'data>> {
        self.ensure_viewable()?;
        if !self.layout().is_dense() {
            return Err(Error::LayoutMismatch {
                tensor: self.name().into(),
                requested: "a dense layout",
                actual: self.layout().as_str(),
            });
        }
        let et = self.element_type().ok_or_else(|| Error::NotViewable {
            tensor: self.name().into(),
            why: "unknown element type",
        })?;
        // Some for every dense tensor that resolved (its plan computed it).
        let origin = element_origin(et, self.descriptor().byte_offset()).ok_or_else(|| Error::NotViewable {
            tensor: self.name().into(),
            why: "byte_offset does not locate element [0, ..., 0] in elements of this type (memory-layout.md § Common Fields › byte_offset)",
        })?;
        let shape = self.static_shape()?;
        // Quantized blocks are stored whole along their axis
        // (`quantization/per-block-affine.md` § Padding): the strides are
        // those of the padded shape.
        let storage_shape =
            crate::quantization::plans::padded_shape(&self.descriptor, &shape).unwrap_or_else(|| shape.clone());
        Ok(Addressing {
            tensor: self.name(),
            layout: self.layout(),
            shape,
            storage_shape,
            fields: self.descriptor().layout_fields().clone(),
            origin: i128::from(origin.elements),
        })
    }

    /// The dense view with elements `T`.
    ///
    /// # Errors
    /// As [`addressing`](Self::addressing) and [`Buffer::as_slice`](crate::Buffer::as_slice):
    /// [`Error::TypeMismatch`], [`Error::Misaligned`], and
    /// [`Error::NotViewable`] when `byte_offset` puts the elements at a
    /// byte not aligned for `T` (then [`dense_value`](Self::dense_value)
    /// reads them).
    pub fn dense<T: Element>(&self) -> Result<DenseView<'data, T>> {
        let addressing = self.addressing()?;
        let buffer = self.buffer(0)?;
        let elements = buffer.as_slice::<T>()?;
        Ok(DenseView { addressing, elements })
    }

    /// The element at `index` of a dense tensor of any element type,
    /// decoded (packed types included).
    ///
    /// # Errors
    /// As [`addressing`](Self::addressing) and [`DenseView::get`].
    pub fn dense_value(&self, index: &[u64]) -> Result<Value> {
        let addressing = self.addressing()?;
        let p = addressing.position(index)?;
        let buffer = self.buffer(0)?;
        if buffer.element_type().is_none() {
            return Err(Error::NotViewable {
                tensor: self.name().into(),
                why: "unknown element type",
            });
        }
        buffer.value(p).ok_or_else(|| Error::IndexArgument {
            tensor: self.name().into(),
            what: "element position",
            index: p,
            bound: buffer.len(),
        })
    }
}

/// Every logical index of `shape` in row-major order (the last dimension
/// fastest); one empty index for a scalar, none for an empty tensor.
pub fn logical_indices(shape: &[u64]) -> impl Iterator<Item = Vec<u64>> + '_ {
    let mut next: Option<Vec<u64>> = (!shape.contains(&0)).then(|| vec![0; shape.len()]);
    std::iter::from_fn(move || {
        let current = next.take()?;
        let mut following = current.clone();
        if next_index(&mut following, shape) {
            next = Some(following);
        }
        Some(current)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hilbert_matches_the_conformance_table() {
        // layouts/hilbert.md § Conformance Check, r = 2, p = 2: h -> (X0, X1).
        let table = [
            (0, 0),
            (1, 0),
            (1, 1),
            (0, 1),
            (0, 2),
            (0, 3),
            (1, 3),
            (1, 2),
            (2, 2),
            (2, 3),
            (3, 3),
            (3, 2),
            (3, 1),
            (2, 1),
            (2, 0),
            (3, 0),
        ];
        for (h, (x0, x1)) in table.iter().enumerate() {
            assert_eq!(hilbert::hilbert_index(&[*x0, *x1], 2), to_u64(h), "({x0}, {x1})");
        }
    }

    #[test]
    fn morton_matches_the_spec_example() {
        let bits = [
            zerocopy::little_endian::U32::new(2),
            zerocopy::little_endian::U32::new(2),
        ];
        assert_eq!(morton::morton_code(&[2, 3], &bits), 14);
    }

    #[test]
    fn logical_indices_walk_row_major() {
        let all: Vec<Vec<u64>> = logical_indices(&[2, 2]).collect();
        assert_eq!(all, vec![vec![0, 0], vec![0, 1], vec![1, 0], vec![1, 1]]);
        assert_eq!(logical_indices(&[]).count(), 1);
        assert_eq!(logical_indices(&[3, 0]).count(), 0);
    }
}
