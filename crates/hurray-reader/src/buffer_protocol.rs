//! `buffer-protocol.md`: the rules each buffer handle obeys on its own
//! (alignment, device, sync mode, memory class) and together (device
//! colocation), and the page-alignment advice a reader reports but never
//! enforces.

use crate::cursor::to_u64;
use crate::descriptor::Descriptor;
use crate::error::{rule, Error, Field, Location, Result, Scope};
use crate::raw;

/// The alignment a writer targeting GPU or IPC transport must declare
/// (`buffer-protocol.md` § Alignment › Page Alignment for GPU and IPC).
pub const PAGE_ALIGNMENT: u32 = hurray_format::buffer::PAGE_ALIGNMENT;

/// A buffer on a GPU (any device but the CPU) whose declared alignment is
/// below [`PAGE_ALIGNMENT`]: see [`Tensor::page_alignment_shortfall`](crate::Tensor::page_alignment_shortfall).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PageAlignmentShortfall {
    /// Position of the buffer in the buffer table.
    pub buffer: usize,
    /// Its declared `alignment`, in bytes (a power of two, at least 64).
    pub alignment: u32,
    /// Its `device_tag` (`0x01` CUDA ... `0x08` OpenCL).
    pub device_tag: u8,
    /// Absolute file offset of its `alignment` field.
    pub offset: u64,
}

impl std::fmt::Display for PageAlignmentShortfall {
    /// `buffer[1].alignment at offset 150: 64 on device_tag 0x01 (CUDA), below
    /// the 4096 a writer targeting GPU or IPC transport must declare
    /// (buffer-protocol.md § Alignment › Page Alignment for GPU and IPC)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "buffer[{}].alignment at offset {}: {} on device_tag 0x{:02x} ({}), below the {PAGE_ALIGNMENT} \
             a writer targeting GPU or IPC transport must declare ({})",
            self.buffer,
            self.offset,
            self.alignment,
            self.device_tag,
            device_name(self.device_tag),
            rule::PAGE_ALIGNMENT,
        )
    }
}

/// The devices of `device_tag` 0x00 to 0x08 (`buffer-protocol.md` § Device Tags).
pub(crate) use hurray_format::buffer::DEVICE_NAMES;

/// The device a `device_tag` names.
fn device_name(tag: u8) -> &'static str {
    match DEVICE_NAMES.get(usize::from(tag)) {
        Some(name) => name,
        None if (0xF0..=0xFE).contains(&tag) => "implementation-private",
        None => "reserved",
    }
}

/// Per-handle rules of `buffer-protocol.md` and device colocation.
pub(crate) fn check_handles(d: &Descriptor<'_>, handles: &[raw::BufferHandle]) -> Result<()> {
    let scope = || Scope::tensor(d.name);
    for (i, h) in handles.iter().enumerate() {
        let i64_ = to_u64(i);
        let alignment = h.alignment.get();
        let byte_size = h.byte_size.get();
        if !alignment.is_power_of_two() || (byte_size > 0 && alignment < 64) {
            return Err(Error::Invalid {
                at: Location {
                    scope: scope(),
                    field: Field::member("buffer", i64_, "alignment"),
                    offset: d.handle_offset(i, 8),
                    rule: rule::HANDLE,
                },
                value: u64::from(alignment),
                expected: "a power of two, at least 64 for a non-empty buffer",
            });
        }
        let device = h.device_tag;
        if !matches!(device, 0x00..=0x08) {
            return Err(Error::UnknownTag {
                at: Location {
                    scope: scope(),
                    field: Field::member("buffer", i64_, "device_tag"),
                    offset: d.handle_offset(i, 12),
                    rule: rule::DEVICE_TAGS,
                },
                value: device,
                why: match device {
                    0xFF => "invalid",
                    0xF0..=0xFE => "implementation-private (not agreed out of band)",
                    _ => "reserved",
                },
            });
        }
        let sync = h.sync_mode;
        if sync > 2 || (device == 0 && sync != 0) {
            return Err(Error::Invalid {
                at: Location {
                    scope: scope(),
                    field: Field::member("buffer", i64_, "sync_mode"),
                    offset: d.handle_offset(i, 13),
                    rule: rule::SYNC_MODE,
                },
                value: u64::from(sync),
                expected: "0x00-0x02, and 0x00 (SYNC_PRODUCER_SYNCED) for a CPU buffer",
            });
        }
        let class = h.memory_class;
        // buffer-protocol.md § Memory Class › Per-Device Validity: PEER is not valid on CPU,
        // Metal, Hexagon, OpenCL; WebGPU allows STANDARD only.
        let valid = match class {
            0x00 => true,
            0x01 | 0x02 => device != 0x05,
            0x03 => matches!(device, 0x01 | 0x02 | 0x04 | 0x07),
            _ => false,
        };
        if !valid {
            return Err(Error::Invalid {
                at: Location {
                    scope: scope(),
                    field: Field::member("buffer", i64_, "memory_class"),
                    offset: d.handle_offset(i, 14),
                    rule: rule::MEMORY_CLASS,
                },
                value: u64::from(class),
                expected: "a memory class defined for the buffer's device",
            });
        }
        if h.reserved != 0 {
            return Err(Error::Reserved {
                at: Location {
                    scope: scope(),
                    field: Field::member("buffer", i64_, "_reserved"),
                    offset: d.handle_offset(i, 15),
                    rule: rule::HANDLE,
                },
                value: u64::from(h.reserved),
                byte: None,
            });
        }
    }
    if let Some(first) = handles.first() {
        for (i, h) in handles.iter().enumerate().skip(1) {
            // The field that differs: the device first, then the class.
            let (member, at, value, expected) = if h.device_tag != first.device_tag {
                (
                    "device_tag",
                    12,
                    h.device_tag,
                    "buffer 0's device_tag (and memory_class)",
                )
            } else if h.memory_class != first.memory_class {
                (
                    "memory_class",
                    14,
                    h.memory_class,
                    "buffer 0's memory_class (and device_tag)",
                )
            } else {
                continue;
            };
            return Err(Error::Invalid {
                at: Location {
                    scope: scope(),
                    field: Field::member("buffer", to_u64(i), member),
                    offset: d.handle_offset(i, at),
                    rule: rule::COLOCATION,
                },
                value: u64::from(value),
                expected,
            });
        }
    }
    Ok(())
}
