//! The KV metadata section (`file-format.md` § KV Metadata Section).
//!
//! The whole section is parsed and checked when the file is opened; values
//! borrow from the file (`&'data str`, `&'data [u8]`).

use zerocopy::little_endian::{F64, I64, U64};

use crate::cursor::{to_u64, Cursor};
use crate::error::{rule, Error, Field, Location, Result, Scope};

/// The type of a KV value (`file-format.md` § KV Metadata Section › KV Value Types).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KvType {
    /// 0x01: UTF-8 string.
    String,
    /// 0x02: signed 64-bit integer.
    Int64,
    /// 0x03: unsigned 64-bit integer.
    Uint64,
    /// 0x04: IEEE 754 binary64.
    Float64,
    /// 0x05: boolean byte (0 or 1).
    Bool,
    /// 0x06: opaque bytes.
    Bytes,
    /// 0x07: array of one of the six scalar types.
    Array,
}

impl KvType {
    fn from_tag(tag: u8) -> Option<Self> {
        Some(match tag {
            0x01 => KvType::String,
            0x02 => KvType::Int64,
            0x03 => KvType::Uint64,
            0x04 => KvType::Float64,
            0x05 => KvType::Bool,
            0x06 => KvType::Bytes,
            0x07 => KvType::Array,
            _ => return None,
        })
    }

    /// The wire tag.
    pub fn tag(self) -> u8 {
        match self {
            KvType::String => 0x01,
            KvType::Int64 => 0x02,
            KvType::Uint64 => 0x03,
            KvType::Float64 => 0x04,
            KvType::Bool => 0x05,
            KvType::Bytes => 0x06,
            KvType::Array => 0x07,
        }
    }

    /// The name used in JSON output and the interop manifest:
    /// `string`, `int64`, `uint64`, `float64`, `bool`, `bytes`, `array`.
    pub fn as_str(self) -> &'static str {
        match self {
            KvType::String => "string",
            KvType::Int64 => "int64",
            KvType::Uint64 => "uint64",
            KvType::Float64 => "float64",
            KvType::Bool => "bool",
            KvType::Bytes => "bytes",
            KvType::Array => "array",
        }
    }
}

/// One KV value, borrowed from the file.
#[derive(Clone, Copy, PartialEq)]
pub enum KvValue<'data> {
    /// A UTF-8 string.
    String(&'data str),
    /// A signed integer.
    Int64(i64),
    /// An unsigned integer.
    Uint64(u64),
    /// A float (NaN and infinities included, bit pattern preserved).
    Float64(f64),
    /// A boolean.
    Bool(bool),
    /// Opaque bytes.
    Bytes(&'data [u8]),
    /// An array of scalar values, all of one type.
    Array(KvArray<'data>),
}

/// Scalars as they are; a string cut after a few dozen characters; bytes
/// and arrays as their first few elements and their length.
impl std::fmt::Debug for KvValue<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::debug::{few, Text};
        match self {
            KvValue::String(s) => f.debug_tuple("String").field(&Text(s)).finish(),
            KvValue::Int64(n) => f.debug_tuple("Int64").field(n).finish(),
            KvValue::Uint64(n) => f.debug_tuple("Uint64").field(n).finish(),
            KvValue::Float64(x) => f.debug_tuple("Float64").field(x).finish(),
            KvValue::Bool(b) => f.debug_tuple("Bool").field(b).finish(),
            KvValue::Bytes(b) => f.debug_tuple("Bytes").field(&few(b)).finish(),
            KvValue::Array(a) => f.debug_tuple("Array").field(a).finish(),
        }
    }
}

impl KvValue<'_> {
    /// The value's type.
    pub fn kv_type(&self) -> KvType {
        match self {
            KvValue::String(_) => KvType::String,
            KvValue::Int64(_) => KvType::Int64,
            KvValue::Uint64(_) => KvType::Uint64,
            KvValue::Float64(_) => KvType::Float64,
            KvValue::Bool(_) => KvType::Bool,
            KvValue::Bytes(_) => KvType::Bytes,
            KvValue::Array(_) => KvType::Array,
        }
    }
}

/// An array value: `len` elements of `element_type`, already checked.
#[derive(Clone, Copy, PartialEq)]
pub struct KvArray<'data> {
    element_type: KvType,
    len: u32,
    payload: &'data [u8],
    offset: u64,
}

/// The type, the length and the first few elements.
impl std::fmt::Debug for KvArray<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let first: Vec<KvValue<'_>> = self.iter().take(crate::debug::SHOWN).collect();
        let len = usize::try_from(self.len).unwrap_or(usize::MAX);
        f.debug_struct("KvArray")
            .field("element_type", &self.element_type)
            .field("len", &self.len)
            .field("offset", &self.offset)
            .field("values", &crate::debug::few_of(first.iter(), len))
            .finish()
    }
}

impl<'data> KvArray<'data> {
    /// The elements' type (never `Array`: arrays do not nest).
    pub fn element_type(&self) -> KvType {
        self.element_type
    }

    /// Number of elements.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// True for an empty array.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The elements in order.
    pub fn iter(&self) -> impl Iterator<Item = KvValue<'data>> + 'data {
        let mut cursor = Cursor::new(self.payload, self.offset, "KV section", rule::KV_TYPES);
        let element_type = self.element_type;
        // The payload was fully checked at open, so each read succeeds; a
        // failure would only end the iteration early.
        (0..self.len)
            .map_while(move |i| read_scalar(&mut cursor, element_type, Field::at("element", u64::from(i)), "").ok())
    }
}

/// One KV entry.
#[derive(Clone, Copy, PartialEq)]
pub struct KvEntry<'data> {
    key: &'data str,
    value: KvValue<'data>,
    offset: u64,
}

/// The key (cut after a few dozen characters), the value's summary, the offset.
impl std::fmt::Debug for KvEntry<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KvEntry")
            .field("key", &crate::debug::Text(self.key))
            .field("value", &self.value)
            .field("offset", &self.offset)
            .finish()
    }
}

impl<'data> KvEntry<'data> {
    /// The key.
    pub fn key(&self) -> &'data str {
        self.key
    }

    /// The value.
    pub fn value(&self) -> KvValue<'data> {
        self.value
    }

    /// Absolute file offset of the entry's `key_length` field.
    pub fn offset(&self) -> u64 {
        self.offset
    }
}

/// Parses and checks a whole KV section: `kv_count` entries that exactly
/// fill `bytes`, unique non-empty UTF-8 keys, known value tags, valid
/// booleans and strings, no nested arrays. `reject_trailing`: bytes after
/// the last entry are an error rather than skipped.
pub(crate) fn parse(bytes: &[u8], base: u64, reject_trailing: bool) -> Result<Vec<KvEntry<'_>>> {
    let mut c = Cursor::new(bytes, base, "KV section", rule::KV);
    let count_offset = c.offset();
    let count = c.u32(Field::new("kv_count"))?;
    // The smallest entry is key_length (2) + value_tag (1) + a 1-byte
    // payload (an empty key is invalid but reported as such): bound the count
    // before allocating for it.
    let max = to_u64(c.remaining()) / 4;
    if u64::from(count) > max {
        return Err(Error::CountTooLarge {
            at: Location {
                scope: Scope::File,
                field: Field::new("kv_count"),
                offset: count_offset,
                rule: rule::KV,
            },
            count: u64::from(count),
            max,
            section: "KV section",
        });
    }
    let mut entries = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
    for i in 0..u64::from(count) {
        let offset = c.offset();
        let key_length = c.u16(Field::member("kv_entry", i, "key_length"))?;
        if key_length == 0 {
            return Err(Error::Invalid {
                at: Location {
                    scope: Scope::File,
                    field: Field::member("kv_entry", i, "key_length"),
                    offset,
                    rule: rule::KV,
                },
                value: 0,
                expected: "at least 1",
            });
        }
        let key_offset = c.offset();
        let key_bytes = c.take(u64::from(key_length), Field::member("kv_entry", i, "key"))?;
        let key = std::str::from_utf8(key_bytes).map_err(|_| Error::InvalidUtf8 {
            at: Location {
                scope: Scope::File,
                field: Field::member("kv_entry", i, "key"),
                offset: key_offset,
                rule: rule::KV,
            },
        })?;
        let value = read_value(&mut c, i, key)?;
        entries.push(KvEntry { key, value, offset });
    }
    if reject_trailing && c.remaining() != 0 {
        return Err(Error::TrailingBytes {
            at: Location {
                scope: Scope::File,
                field: Field::new("KV section"),
                offset: c.offset(),
                rule: rule::KV,
            },
            count: to_u64(c.remaining()),
        });
    }
    check_unique_keys(&entries)?;
    Ok(entries)
}

/// Rejects duplicate keys (byte-exact), naming the first pair found.
fn check_unique_keys(entries: &[KvEntry<'_>]) -> Result<()> {
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by_key(|&i| (entries.get(i).map(|e| e.key), i));
    for pair in order.windows(2) {
        let (Some(&a), Some(&b)) = (pair.first(), pair.get(1)) else {
            continue;
        };
        let (Some(first), Some(second)) = (entries.get(a), entries.get(b)) else {
            continue;
        };
        if first.key == second.key {
            return Err(Error::DuplicateKey {
                at: Location {
                    scope: Scope::File,
                    field: Field::member("kv_entry", to_u64(b), "key"),
                    offset: second.offset.saturating_add(2),
                    rule: rule::UNIQUE_KEYS,
                },
                key: second.key.into(),
                first: to_u64(a),
                second: to_u64(b),
            });
        }
    }
    Ok(())
}

fn value_tag(c: &mut Cursor<'_>, field: Field, key: &str) -> Result<KvType> {
    let offset = c.offset();
    let tag = c.u8(field)?;
    KvType::from_tag(tag).ok_or_else(|| Error::UnknownTag {
        at: Location {
            scope: Scope::Key(key.into()),
            field,
            offset,
            rule: rule::KV_TYPES,
        },
        value: tag,
        why: match tag {
            0xFF => "invalid",
            0xF0..=0xFE => "implementation-private (not agreed out of band)",
            _ => "reserved",
        },
    })
}

fn read_value<'a>(c: &mut Cursor<'a>, entry: u64, key: &str) -> Result<KvValue<'a>> {
    let kv_type = value_tag(c, Field::member("kv_entry", entry, "value_tag"), key)?;
    if kv_type != KvType::Array {
        return read_scalar(c, kv_type, Field::member("kv_entry", entry, "value"), key);
    }
    let tag_field = Field::member("kv_entry", entry, "element_tag");
    let tag_offset = c.offset();
    let element_type = value_tag(c, tag_field, key)?;
    if element_type == KvType::Array {
        return Err(Error::Invalid {
            at: Location {
                scope: Scope::Key(key.into()),
                field: tag_field,
                offset: tag_offset,
                rule: rule::KV_TYPES,
            },
            value: u64::from(KvType::Array.tag()),
            expected: "an element tag 0x01-0x06 (arrays do not nest)",
        });
    }
    let count_field = Field::member("kv_entry", entry, "element count");
    let count_offset = c.offset();
    let len = c.u32(count_field)?;
    // Every element takes at least one byte (fixed-width types more; string
    // and bytes at least their 4-byte length).
    let min_size: u64 = match element_type {
        KvType::Int64 | KvType::Uint64 | KvType::Float64 => 8,
        KvType::String | KvType::Bytes => 4,
        _ => 1,
    };
    let max = to_u64(c.remaining()) / min_size;
    if u64::from(len) > max {
        return Err(Error::CountTooLarge {
            at: Location {
                scope: Scope::Key(key.into()),
                field: count_field,
                offset: count_offset,
                rule: rule::KV_TYPES,
            },
            count: u64::from(len),
            max,
            section: "KV section",
        });
    }
    let start = c.offset();
    let start_pos = c.position();
    for _ in 0..len {
        read_scalar(c, element_type, Field::member("kv_entry", entry, "element"), key)?;
    }
    Ok(KvValue::Array(KvArray {
        element_type,
        len,
        payload: c.since(start_pos),
        offset: start,
    }))
}

/// Reads one non-array value.
fn read_scalar<'a>(c: &mut Cursor<'a>, kv_type: KvType, field: Field, key: &str) -> Result<KvValue<'a>> {
    let scope = || Scope::Key(key.into());
    let offset = c.offset();
    Ok(match kv_type {
        KvType::String | KvType::Bytes => {
            let len = c.u32(field)?;
            let data_offset = c.offset();
            if u64::from(len) > to_u64(c.remaining()) {
                return Err(Error::CountTooLarge {
                    at: Location {
                        scope: scope(),
                        field: Field {
                            member: Some(if kv_type == KvType::String {
                                "string length"
                            } else {
                                "bytes length"
                            }),
                            ..field
                        },
                        offset,
                        rule: rule::KV_TYPES,
                    },
                    count: u64::from(len),
                    max: to_u64(c.remaining()),
                    section: "KV section",
                });
            }
            let bytes = c.take(u64::from(len), field)?;
            if kv_type == KvType::Bytes {
                KvValue::Bytes(bytes)
            } else {
                KvValue::String(std::str::from_utf8(bytes).map_err(|_| Error::InvalidUtf8 {
                    at: Location {
                        scope: scope(),
                        field: Field {
                            member: Some("string bytes"),
                            ..field
                        },
                        offset: data_offset,
                        rule: rule::KV_TYPES,
                    },
                })?)
            }
        }
        KvType::Int64 => KvValue::Int64(c.read::<I64>(field)?.get()),
        KvType::Uint64 => KvValue::Uint64(c.read::<U64>(field)?.get()),
        KvType::Float64 => KvValue::Float64(c.read::<F64>(field)?.get()),
        KvType::Bool => match c.u8(field)? {
            0 => KvValue::Bool(false),
            1 => KvValue::Bool(true),
            other => {
                return Err(Error::Invalid {
                    at: Location {
                        scope: scope(),
                        field: Field {
                            member: Some("bool value"),
                            ..field
                        },
                        offset,
                        rule: rule::KV_TYPES,
                    },
                    value: u64::from(other),
                    expected: "0x00 (false) or 0x01 (true)",
                })
            }
        },
        KvType::Array => {
            return Err(Error::Invalid {
                at: Location {
                    scope: scope(),
                    field,
                    offset,
                    rule: rule::KV_TYPES,
                },
                value: u64::from(KvType::Array.tag()),
                expected: "a scalar value",
            })
        }
    })
}
