//! What every scheme's check shares: the tensor it checks ([`Context`]),
//! the integer storage types and their ranges, and the [`Parameters`] a
//! scheme keeps in buffers, as its fixed fields give them.

use crate::element_type::ElementType;
use crate::error::{Error, Field, Location, Result, Scope};

/// Sentinel `zero_point_buffer_index`: no zero-point buffer.
pub(super) const NO_BUFFER: u32 = hurray_format::quant::NO_ZERO_POINT_BUFFER;

/// The integer storage types of the affine schemes (§ Valid Storage Types).
pub(super) const INTEGER_STORAGE: [ElementType; 10] = {
    use ElementType::*;
    [Int8, Uint8, Int16, Uint16, Int32, Uint32, Int4, Uint4, Int2, Uint2]
};

/// Range of an integer storage type's values, for zero points.
pub(crate) fn integer_range(t: ElementType) -> Option<(i64, i64)> {
    use ElementType::*;
    Some(match t {
        Int8 => (-128, 127),
        Uint8 => (0, 255),
        Int16 => (-32768, 32767),
        Uint16 => (0, 65535),
        Int32 => (i64::from(i32::MIN), i64::from(i32::MAX)),
        Uint32 => (0, i64::from(u32::MAX)),
        Int4 => (-8, 7),
        Uint4 => (0, 15),
        Int2 => (-2, 1),
        Uint2 => (0, 3),
        _ => return None,
    })
}

/// What a scheme's check needs: the tensor, its quantization section and
/// its storage type.
pub(super) struct Context<'a> {
    /// The tensor's name.
    pub(super) name: &'a str,
    /// Offset of the descriptor's `type_tag`.
    pub(super) type_tag_offset: u64,
    /// Offset of the quantization payload (its scheme header).
    pub(super) offset: u64,
    /// The scheme header's `flags`.
    pub(super) flags: u16,
    /// The storage type (`type_tag`).
    pub(super) storage: ElementType,
}

impl Context<'_> {
    pub(super) fn scope(&self) -> Scope {
        Scope::tensor(self.name)
    }

    /// A quantization field `at` bytes into the payload holds `value`.
    pub(super) fn invalid(
        &self,
        field: &'static str,
        at: u64,
        value: u64,
        expected: &'static str,
        rule: &'static str,
    ) -> Error {
        Error::Invalid {
            at: Location {
                scope: self.scope(),
                field: Field::sub("quantization", field),
                offset: self.offset + at,
                rule,
            },
            value,
            expected,
        }
    }

    /// The storage type (`type_tag`) is one the scheme accepts.
    pub(super) fn storage_in(&self, allowed: &[ElementType], rule: &'static str) -> Result<()> {
        if allowed.contains(&self.storage) {
            return Ok(());
        }
        Err(Error::Invalid {
            at: Location {
                scope: self.scope(),
                field: Field::new("type_tag"),
                offset: self.type_tag_offset,
                rule,
            },
            value: u64::from(self.storage.tag()),
            expected: "a storage type the quantization scheme accepts",
        })
    }

    /// The SYMMETRIC flag (bit 0 of the header's flags).
    pub(super) fn symmetric(&self) -> bool {
        self.flags & 1 != 0
    }

    /// Under SYMMETRIC, `zero_point_buffer_index` (`at` bytes into the
    /// payload) holds the no-buffer sentinel.
    pub(super) fn check_symmetric(&self, zero_index: u32, at: u64, rule: &'static str) -> Result<()> {
        if self.symmetric() && zero_index != NO_BUFFER {
            return Err(Error::Invalid {
                at: Location {
                    scope: self.scope(),
                    field: Field::sub("quantization", "zero_point_buffer_index"),
                    offset: self.offset + at,
                    rule,
                },
                value: u64::from(zero_index),
                expected: "0xFFFFFFFF when SYMMETRIC is set",
            });
        }
        Ok(())
    }
}

/// A scheme's parameters, as its fixed fields give them.
pub(super) struct Parameters {
    /// The channel or block axis.
    pub(super) axis: u32,
    /// Elements per block; `None` for one entry per channel.
    pub(super) block_size: Option<u32>,
    /// `scale_buffer_index`.
    pub(super) scale_index: u32,
    /// `zero_point_buffer_index`, `None` without zero points.
    pub(super) zero_index: Option<u32>,
    /// The element type of the scales.
    pub(super) scale_type: ElementType,
    /// The scheme's § Validity Constraints.
    pub(super) rule: &'static str,
    /// Where the scheme sizes its parameter buffers.
    pub(super) referenced_buffers: &'static str,
    /// Offsets in the payload of `scale_buffer_index` and
    /// `zero_point_buffer_index`.
    pub(super) index_offsets: (u64, u64),
}
