//! The 16-byte buffer handle (`buffer-protocol.md` § Buffer Handle).

use hurray_format::buffer;

use crate::error::{Error, Result};
use crate::num::Enc;

/// One entry of a descriptor's buffer table: a declaration of a buffer's size
/// and placement properties (not its contents).
///
/// Wire layout (16 bytes, little-endian): `byte_size` u64, `alignment` u32,
/// `device_tag` u8, `sync_mode` u8, `memory_class` u8, `_reserved` u8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BufferHandle {
    /// Size of the buffer in bytes.
    pub byte_size: u64,
    /// Declared minimum alignment of the buffer, in bytes. A power of two;
    /// at least 64 unless the buffer is empty.
    pub alignment: u32,
    /// Device the buffer lives on ([`BufferHandle::DEVICE_CPU`] = `0x00`).
    pub device_tag: u8,
    /// Producer-side synchronisation (`0x00` producer-synced, `0x01` event,
    /// `0x02` consumer stream).
    pub sync_mode: u8,
    /// Memory access class (`0x00` standard, `0x01` host-pinned, `0x02`
    /// unified, `0x03` peer, `0xF0`–`0xFE` private).
    pub memory_class: u8,
    /// Handle byte 15; must be 0 in a valid file. Settable for negative tests.
    pub reserved: u8,
}

impl Default for BufferHandle {
    fn default() -> Self {
        Self::new(0)
    }
}

impl BufferHandle {
    /// Encoded size of one handle in bytes.
    pub const ENCODED_LEN: u64 = buffer::HANDLE_LEN;
    /// Default declared alignment (64 bytes, the SIMD minimum).
    pub const DEFAULT_ALIGNMENT: u32 = buffer::MIN_ALIGNMENT;
    /// `device_tag` of CPU host memory.
    pub const DEVICE_CPU: u8 = buffer::DEVICE_CPU;
    /// `sync_mode` `SYNC_PRODUCER_SYNCED`.
    pub const SYNC_PRODUCER_SYNCED: u8 = buffer::SYNC_PRODUCER_SYNCED;
    /// `memory_class` `STANDARD`.
    pub const MEMORY_STANDARD: u8 = buffer::MEMORY_STANDARD;
    /// `memory_class` `HOST_PINNED`.
    pub const MEMORY_HOST_PINNED: u8 = buffer::MEMORY_HOST_PINNED;
    /// `memory_class` `UNIFIED`.
    pub const MEMORY_UNIFIED: u8 = buffer::MEMORY_UNIFIED;
    /// `memory_class` `PEER`.
    pub const MEMORY_PEER: u8 = buffer::MEMORY_PEER;

    /// A CPU, standard-memory, producer-synced handle of `byte_size` bytes
    /// with alignment 64.
    pub const fn new(byte_size: u64) -> Self {
        Self {
            byte_size,
            alignment: Self::DEFAULT_ALIGNMENT,
            device_tag: Self::DEVICE_CPU,
            sync_mode: Self::SYNC_PRODUCER_SYNCED,
            memory_class: Self::MEMORY_STANDARD,
            reserved: 0,
        }
    }

    /// The same handle with another declared alignment (bytes).
    #[must_use]
    pub const fn with_alignment(mut self, alignment: u32) -> Self {
        self.alignment = alignment;
        self
    }

    /// The same handle with another memory class.
    #[must_use]
    pub const fn with_memory_class(mut self, memory_class: u8) -> Self {
        self.memory_class = memory_class;
        self
    }

    /// The same handle with another device tag.
    #[must_use]
    pub const fn with_device_tag(mut self, device_tag: u8) -> Self {
        self.device_tag = device_tag;
        self
    }

    /// The same handle with another sync mode.
    #[must_use]
    pub const fn with_sync_mode(mut self, sync_mode: u8) -> Self {
        self.sync_mode = sync_mode;
        self
    }

    /// The 16 wire bytes.
    pub fn to_bytes(&self) -> [u8; 16] {
        let mut out = [0u8; 16];
        let mut enc = Enc::new();
        self.encode(&mut enc);
        for (dst, src) in out.iter_mut().zip(enc.buf) {
            *dst = src;
        }
        out
    }

    pub(crate) fn encode(&self, enc: &mut Enc) {
        enc.u64(self.byte_size);
        enc.u32(self.alignment);
        enc.u8(self.device_tag);
        enc.u8(self.sync_mode);
        enc.u8(self.memory_class);
        enc.u8(self.reserved);
    }

    /// Checks the handle against `buffer-protocol.md`; `buffer` is its table
    /// index, used in errors.
    ///
    /// # Errors
    /// [`Error::InvalidHandle`] naming the offending field.
    pub fn validate(&self, buffer: u64) -> Result<()> {
        let bad = |what, value: u64, rule| {
            Err(Error::InvalidHandle {
                buffer,
                what,
                value,
                rule,
            })
        };
        if !self.alignment.is_power_of_two() {
            return bad(
                "alignment",
                u64::from(self.alignment),
                "buffer-protocol.md § Buffer Handle: alignment must be a power of two",
            );
        }
        if self.byte_size > 0 && self.alignment < Self::DEFAULT_ALIGNMENT {
            return bad(
                "alignment",
                u64::from(self.alignment),
                "buffer-protocol.md § Alignment › Minimum Alignment: at least 64 for a non-empty buffer",
            );
        }
        let device = self.device_tag;
        if device == 0xFF || (0x09..=0xEF).contains(&device) {
            return bad("device_tag", u64::from(device), "buffer-protocol.md § Device Tags");
        }
        if self.sync_mode > 0x02 {
            return bad(
                "sync_mode",
                u64::from(self.sync_mode),
                "buffer-protocol.md § Stream and Event Synchronisation",
            );
        }
        let class = self.memory_class;
        let private_device = (0xF0..=0xFE).contains(&device);
        let class_ok = match class {
            0x00 => true,
            0x01 | 0x02 => !private_device && device != 0x05,
            0x03 => matches!(device, 0x01 | 0x02 | 0x04 | 0x07),
            0xF0..=0xFE => private_device,
            _ => false,
        };
        if !class_ok {
            return bad(
                "memory_class",
                u64::from(class),
                "buffer-protocol.md § Memory Class, § Per-Device Validity",
            );
        }
        if self.reserved != 0 {
            return bad(
                "_reserved",
                u64::from(self.reserved),
                "buffer-protocol.md § Buffer Handle: byte 15 must be 0",
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding() {
        let h = BufferHandle::new(192).with_memory_class(1);
        let b = h.to_bytes();
        assert_eq!(&b[..8], &192u64.to_le_bytes());
        assert_eq!(&b[8..12], &64u32.to_le_bytes());
        assert_eq!(&b[12..], &[0, 0, 1, 0]);
    }

    #[test]
    fn validation() {
        assert!(BufferHandle::new(1).validate(0).is_ok());
        assert!(BufferHandle::new(0).with_alignment(1).validate(0).is_ok());
        for bad in [
            BufferHandle::new(1).with_alignment(32),
            BufferHandle::new(1).with_alignment(96),
            BufferHandle::new(1).with_device_tag(0xFF),
            BufferHandle::new(1).with_device_tag(0x09),
            BufferHandle::new(1).with_sync_mode(3),
            BufferHandle::new(1).with_memory_class(4),
            BufferHandle::new(1).with_memory_class(3),
            BufferHandle::new(1).with_memory_class(0xF0),
            BufferHandle {
                reserved: 1,
                ..BufferHandle::new(1)
            },
        ] {
            assert!(
                matches!(bad.validate(2), Err(Error::InvalidHandle { buffer: 2, .. })),
                "{bad:?}"
            );
        }
    }
}
