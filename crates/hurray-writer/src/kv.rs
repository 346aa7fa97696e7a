//! KV metadata values (`file-format.md` § KV Metadata Section).

use crate::error::{Error, Result};
use crate::num::Enc;

/// A KV metadata value; the variant selects the `value_tag`.
#[derive(Debug, Clone, PartialEq)]
pub enum KvValue {
    /// `0x01` UTF-8 string.
    String(String),
    /// `0x02` signed 64-bit integer.
    Int64(i64),
    /// `0x03` unsigned 64-bit integer.
    UInt64(u64),
    /// `0x04` IEEE 754 binary64 (bit pattern preserved, NaN payloads too).
    Float64(f64),
    /// `0x05` boolean (one byte, 0 or 1).
    Bool(bool),
    /// `0x06` opaque byte sequence.
    Bytes(Vec<u8>),
    /// `0x07` array of one of the six scalar types.
    Array(KvArray),
}

/// Elements of a KV array; all of one type.
#[derive(Debug, Clone, PartialEq)]
pub enum KvArray {
    /// Element tag `0x01`.
    String(Vec<String>),
    /// Element tag `0x02`.
    Int64(Vec<i64>),
    /// Element tag `0x03`.
    UInt64(Vec<u64>),
    /// Element tag `0x04`.
    Float64(Vec<f64>),
    /// Element tag `0x05`.
    Bool(Vec<bool>),
    /// Element tag `0x06`.
    Bytes(Vec<Vec<u8>>),
}

impl KvValue {
    /// The `value_tag` byte.
    pub fn tag(&self) -> u8 {
        match self {
            KvValue::String(_) => 0x01,
            KvValue::Int64(_) => 0x02,
            KvValue::UInt64(_) => 0x03,
            KvValue::Float64(_) => 0x04,
            KvValue::Bool(_) => 0x05,
            KvValue::Bytes(_) => 0x06,
            KvValue::Array(_) => 0x07,
        }
    }

    /// The payload bytes that follow `value_tag`.
    ///
    /// # Errors
    /// [`Error::Overflow`] when a string, byte sequence or array is longer
    /// than its `u32` length field allows.
    pub fn encode_payload(&self) -> Result<Vec<u8>> {
        let mut e = Enc::new();
        match self {
            KvValue::String(s) => put_bytes(&mut e, s.as_bytes())?,
            KvValue::Int64(v) => e.i64(*v),
            KvValue::UInt64(v) => e.u64(*v),
            KvValue::Float64(v) => e.f64(*v),
            KvValue::Bool(v) => e.u8(u8::from(*v)),
            KvValue::Bytes(b) => put_bytes(&mut e, b)?,
            KvValue::Array(a) => {
                let (tag, count) = match a {
                    KvArray::String(v) => (0x01, v.len()),
                    KvArray::Int64(v) => (0x02, v.len()),
                    KvArray::UInt64(v) => (0x03, v.len()),
                    KvArray::Float64(v) => (0x04, v.len()),
                    KvArray::Bool(v) => (0x05, v.len()),
                    KvArray::Bytes(v) => (0x06, v.len()),
                };
                e.u8(tag);
                e.u32(u32::try_from(count).map_err(|_| Error::overflow("kv array count"))?);
                match a {
                    KvArray::String(v) => {
                        for s in v {
                            put_bytes(&mut e, s.as_bytes())?;
                        }
                    }
                    KvArray::Int64(v) => v.iter().for_each(|&x| e.i64(x)),
                    KvArray::UInt64(v) => v.iter().for_each(|&x| e.u64(x)),
                    KvArray::Float64(v) => v.iter().for_each(|&x| e.f64(x)),
                    KvArray::Bool(v) => v.iter().for_each(|&x| e.u8(u8::from(x))),
                    KvArray::Bytes(v) => {
                        for b in v {
                            put_bytes(&mut e, b)?;
                        }
                    }
                }
            }
        }
        Ok(e.buf)
    }
}

fn put_bytes(e: &mut Enc, b: &[u8]) -> Result<()> {
    e.u32(u32::try_from(b.len()).map_err(|_| Error::overflow("kv value length"))?);
    e.bytes(b);
    Ok(())
}

macro_rules! kv_from {
    ($($t:ty => $v:ident),* $(,)?) => {$(
        impl From<$t> for KvValue {
            fn from(v: $t) -> Self {
                KvValue::$v(v.into())
            }
        }
    )*};
}

kv_from! {
    String => String,
    &str => String,
    i64 => Int64,
    u64 => UInt64,
    f64 => Float64,
    bool => Bool,
    Vec<u8> => Bytes,
    KvArray => Array,
}
