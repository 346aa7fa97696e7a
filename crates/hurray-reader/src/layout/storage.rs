//! The data buffer of the dense layouts (row-major, column-major,
//! strided, tiled, Morton, Hilbert): where element `[0, ..., 0]` lies
//! ([`Origin`]) and how many bytes the buffer needs ([`dense_plan`];
//! `element-types.md` § Buffer Size Calculation). Each dense layout's
//! module says how many elements it stores for a shape; the rest is here.

use crate::buffer::BufferRole;
use crate::descriptor::Descriptor;
use crate::element_type::ElementType;
use crate::error::{rule, Error, Field, Location, Result, Scope};
use crate::layout::plan::{count, storage, Plan};

/// Where element `[0, ..., 0]` of a dense tensor lies in buffer 0
/// (`memory-layout.md` § Common Fields › byte_offset, § Element Address Computation).
///
/// Positions are counted in elements from byte `phase` of the buffer:
/// element `p` of a whole-byte type starts at byte `phase + p × width`, and
/// of a 6-bit type lies in the 3-byte group starting at byte
/// `phase + 3 × floor(p / 4)`; element `[0, ..., 0]` is at position
/// `elements`, so that `byte_offset` is `phase` bytes plus `elements`
/// elements (6-bit: `elements / 4` groups).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Origin {
    /// `byte_offset mod group_bytes`, in bytes (`group_bytes`: the element
    /// width, 3 for 6-bit types; 0 for 1-, 2- and 4-bit types, whose
    /// `byte_offset` is a whole byte and so a whole number of elements).
    pub(crate) phase: u64,
    /// `(byte_offset div group_bytes) × elements per group`: the position of
    /// element `[0, ..., 0]`.
    pub(crate) elements: u64,
}

/// [`Origin`] of `byte_offset` for elements of type `et`; `None` when the
/// element count overflows `u64` (1-bit elements from a `byte_offset` of
/// 2^61 or more) or for an extension type of a width no layout addresses.
pub(crate) fn element_origin(et: ElementType, byte_offset: u64) -> Option<Origin> {
    let (group_bytes, per_group) = match (et.byte_width(), et.bit_width()) {
        (Some(w), _) => (w, 1),
        // Groups of four elements in three bytes, from `byte_offset`.
        (None, 6) => (3, 4),
        (None, bits @ (1 | 2 | 4)) => (1, u64::from(8 / bits)),
        _ => return None,
    };
    Some(Origin {
        phase: byte_offset.checked_rem(group_bytes)?,
        elements: byte_offset.checked_div(group_bytes)?.checked_mul(per_group)?,
    })
}

/// A dense tensor's data buffer as its layout sees it: the element type,
/// where element `[0, ..., 0]` lies, and the shape to store.
pub(crate) struct DenseShape<'s> {
    pub(crate) element_type: ElementType,
    pub(crate) origin: Origin,
    /// The shape, padded to whole quantization blocks along a per-block
    /// or NF4 axis (`quantization/per-block-affine.md` § Padding).
    pub(crate) shape: &'s [u64],
    /// Whether that padding changed the shape.
    pub(crate) block_padded: bool,
}

/// What a dense layout stores for a [`DenseShape`].
pub(crate) struct Stored {
    /// Elements in storage, padding included.
    pub(crate) elements: u64,
    /// Their bytes.
    pub(crate) bytes: u64,
    /// The size rule a wrong `byte_size` breaks.
    pub(crate) rule: &'static str,
    /// Whether `elements` and `bytes` count from element `[0, ..., 0]`
    /// (so `byte_offset` comes on top), rather than from the buffer's
    /// first byte (strided).
    pub(crate) from_origin: bool,
}

impl DenseShape<'_> {
    /// `elements` elements from the origin on; `what` names their byte
    /// size in an overflow error.
    pub(crate) fn stored(
        &self,
        d: &Descriptor<'_>,
        elements: u64,
        what: &'static str,
        rule: &'static str,
    ) -> Result<Stored> {
        Ok(Stored {
            elements,
            bytes: storage(self.element_type, elements).ok_or_else(|| shape_overflow(d, what))?,
            rule,
            from_origin: true,
        })
    }

    /// Row- and column-major storage: every element of the shape, no
    /// padding but the quantization blocks'.
    pub(crate) fn contiguous(&self, d: &Descriptor<'_>) -> Result<Stored> {
        let n = count(self.shape).ok_or_else(|| shape_overflow(d, "element count (product of shape)"))?;
        let rule = if self.block_padded {
            rule::BLOCK_PADDING
        } else {
            rule::DENSE_SIZE
        };
        self.stored(d, n, "buffer size (element count x width)", rule)
    }
}

/// The buffer size of a dense tensor overflows `u64`.
fn shape_overflow(d: &Descriptor<'_>, what: &'static str) -> Error {
    Error::Overflow {
        at: Location {
            scope: Scope::tensor(d.name),
            field: Field::new("shape"),
            offset: d.offsets.shape,
            rule: rule::DENSE_SIZE,
        },
        what,
    }
}

/// The data buffer of a dense layout: its element count in storage and its
/// bytes, `layout` giving what the layout stores for the shape. An unknown
/// element type (permissive mode) has no known size.
///
/// # Errors
/// [`Error::DynamicDimension`], [`Error::Overflow`], or the layout's own.
pub(crate) fn dense_plan(d: &Descriptor<'_>, layout: impl FnOnce(&DenseShape<'_>) -> Result<Stored>) -> Result<Plan> {
    let Some(t) = d.element_type else {
        return Ok(Plan {
            role: BufferRole::Data,
            ..Plan::unknown()
        });
    };
    let shape = d.static_shape()?;
    let padded = crate::quantization::plans::padded_shape(d, &shape);
    // The last block along the quantization axis is partial: storage
    // holds it whole.
    let block_padded = padded.as_ref().is_some_and(|p| *p != shape);
    let shape = padded.as_deref().unwrap_or(&shape);
    let origin = element_origin(t, d.byte_offset).ok_or_else(|| Error::Overflow {
        at: Location {
            scope: Scope::tensor(d.name),
            field: Field::new("byte_offset"),
            offset: d.offsets.byte_offset,
            rule: rule::BYTE_OFFSET,
        },
        what: "byte_offset in elements",
    })?;
    let stored = layout(&DenseShape {
        element_type: t,
        origin,
        shape,
        block_padded,
    })?;
    // Elements are counted from byte `origin.phase` of the buffer, the
    // whole ones before `byte_offset` too (strided: already).
    let (bytes, len) = if stored.from_origin {
        (
            stored
                .bytes
                .checked_add(d.byte_offset)
                .ok_or_else(|| shape_overflow(d, "byte_offset + buffer size"))?,
            stored.elements.saturating_add(origin.elements),
        )
    } else {
        (stored.bytes, stored.elements)
    };
    Ok(Plan {
        role: BufferRole::Data,
        element_type: Some(t),
        len,
        bytes,
        element_start: origin.phase,
        rule: stored.rule,
    })
}
