//! A model file: the header's choices, the tensors, the KV metadata
//! (`file-format.md`).

use super::tensor::MTensor;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kv {
    Str(String),
    I64(i64),
    U64(u64),
    /// By bit pattern.
    F64(u64),
    Bool(bool),
    Bytes(Vec<u8>),
    /// Element tag (0x01-0x06) and elements.
    Array(u8, Vec<Kv>),
}

impl Kv {
    pub(crate) fn tag(&self) -> u8 {
        match self {
            Kv::Str(_) => 1,
            Kv::I64(_) => 2,
            Kv::U64(_) => 3,
            Kv::F64(_) => 4,
            Kv::Bool(_) => 5,
            Kv::Bytes(_) => 6,
            Kv::Array(..) => 7,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct MFile {
    pub(crate) container_minor: u8,
    pub(crate) flags: u32,
    pub(crate) dba: u32,
    pub(crate) first: u64,
    pub(crate) hint: u64,
    pub(crate) tensors: Vec<MTensor>,
    /// Index entries sorted by name bytes rather than in write order.
    pub(crate) index_sorted: bool,
    pub(crate) kv: Option<Vec<(String, Kv)>>,
    /// Bytes after the last KV entry / index entry (only mutations).
    pub(crate) kv_extra: Vec<u8>,
    pub(crate) index_extra: Vec<u8>,
}

pub(crate) const HAS_KV_METADATA: u32 = 1;
pub(crate) const SORTED_INDEX: u32 = 2;
pub(crate) const HAS_INDEX_CRC32C: u32 = 4;
