//! Checked arithmetic helpers: every size and offset goes through these.

use crate::error::{Error, Result};

/// `a + b`, or [`Error::Overflow`] naming `what`.
pub(crate) fn add(a: u64, b: u64, what: &'static str) -> Result<u64> {
    a.checked_add(b).ok_or(Error::overflow(what))
}

/// `a * b`, or [`Error::Overflow`] naming `what`.
pub(crate) fn mul(a: u64, b: u64, what: &'static str) -> Result<u64> {
    a.checked_mul(b).ok_or(Error::overflow(what))
}

/// A `usize` length as `u64`.
pub(crate) fn len64(n: usize) -> Result<u64> {
    u64::try_from(n).map_err(|_| Error::overflow("length"))
}

/// A `u64` count as `usize` (for in-memory slices).
pub(crate) fn to_usize(n: u64, what: &'static str) -> Result<usize> {
    usize::try_from(n).map_err(|_| Error::overflow(what))
}

/// Product of a shape, or [`Error::Overflow`].
pub(crate) fn product(values: &[u64], what: &'static str) -> Result<u64> {
    values.iter().try_fold(1u64, |acc, &v| mul(acc, v, what))
}

/// Smallest multiple of `align` that is `>= pos` (`align` > 0).
pub(crate) fn round_up(pos: u64, align: u64) -> Result<u64> {
    pos.checked_next_multiple_of(align)
        .ok_or(Error::overflow("padded offset"))
}

/// Little-endian byte encoder for descriptor, KV and index bytes.
#[derive(Debug, Default)]
pub(crate) struct Enc {
    pub(crate) buf: Vec<u8>,
}

impl Enc {
    pub(crate) fn new() -> Self {
        Self { buf: Vec::new() }
    }
    pub(crate) fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    pub(crate) fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn i64(&mut self, v: i64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn f32(&mut self, v: f32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn f64(&mut self, v: f64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn bytes(&mut self, v: &[u8]) {
        self.buf.extend_from_slice(v);
    }
    pub(crate) fn u64s(&mut self, v: &[u64]) {
        for &x in v {
            self.u64(x);
        }
    }
    pub(crate) fn i64s(&mut self, v: &[i64]) {
        for &x in v {
            self.i64(x);
        }
    }
    pub(crate) fn u32s(&mut self, v: &[u32]) {
        for &x in v {
            self.u32(x);
        }
    }
}
