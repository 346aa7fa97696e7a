//! Descriptors field by field: every field's spec name, absolute offset,
//! raw bytes and decoded meaning, as the parser itself read them — for
//! tools that show a descriptor byte by byte (`hurray-inspect --tensor`).

use crate::cursor::Span;
use crate::descriptor::statistics::statistics_mask;
use crate::descriptor::{self, flags, Descriptor, DYNAMIC, SKIPPED, UNREAD};
use crate::element_type::ElementType;
use crate::error::{Error, Field, Result};
use crate::file::{HurrayFile, IndexEntry};
use crate::layout::Layout;
use crate::tensor::Tensor;

/// One descriptor field: where it is, its bytes, what they mean.
#[derive(Clone)]
pub struct AnnotatedField<'data> {
    /// The spec's name (`descriptor_length`, `shape[1]`, `buffer[0].alignment`).
    pub field: Field,
    /// Absolute offset of the first byte, in bytes.
    pub offset: u64,
    /// The field's bytes, as stored (little-endian).
    pub bytes: &'data [u8],
    /// The value decoded: a number, a tag's name, the names of set flag bits.
    pub meaning: String,
}

/// The field, its offset, its first few bytes and its meaning (cut after
/// a few dozen characters: an `extension_data` field may be long).
impl std::fmt::Debug for AnnotatedField<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnnotatedField")
            .field("field", &format_args!("{}", self.field))
            .field("offset", &self.offset)
            .field("bytes", &crate::debug::few(self.bytes))
            .field("meaning", &crate::debug::Text(&self.meaning))
            .finish()
    }
}

/// A tensor's descriptor, field by field, and the verdict on it.
#[derive(Clone)]
pub struct DescriptorDump<'data> {
    /// The index entry.
    pub entry: IndexEntry<'data>,
    /// Every field the parser read, in file order, up to the first problem.
    pub fields: Vec<AnnotatedField<'data>>,
    /// The parsed descriptor, when it is valid on its own (also when its
    /// buffers are not: then `tensor` is `None` and `error` says why).
    pub descriptor: Option<Descriptor<'data>>,
    /// The resolved tensor when the descriptor and its buffers are valid.
    pub tensor: Option<Tensor<'data>>,
    /// The first problem found, when there is one.
    pub error: Option<Error>,
}

/// The entry, the first few fields and their count, whether the
/// descriptor and the tensor resolved, and the error.
impl std::fmt::Debug for DescriptorDump<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DescriptorDump")
            .field("entry", &self.entry)
            .field("fields", &crate::debug::few(&self.fields))
            .field("descriptor", &self.descriptor.is_some())
            .field("tensor", &self.tensor.is_some())
            .field("error", &self.error)
            .finish()
    }
}

impl<'data> HurrayFile<'data> {
    /// Reads the descriptor of tensor `name` field by field. A malformed
    /// descriptor still yields the fields read before the problem, and the
    /// problem as `error`.
    ///
    /// # Errors
    /// [`Error::NotFound`] when no tensor has that name.
    pub fn dump_descriptor(&self, name: &str) -> Result<DescriptorDump<'data>> {
        let entry = *self.entry(name).ok_or_else(|| Error::NotFound { name: name.into() })?;
        let Some(bytes) =
            descriptor::descriptor_bytes(self.data(), entry.descriptor_offset(), entry.descriptor_length())
        else {
            // Cannot happen: open checked the range.
            return Ok(DescriptorDump {
                entry,
                fields: Vec::new(),
                descriptor: None,
                tensor: None,
                error: self.tensor(name).err(),
            });
        };
        let (parsed, spans) = descriptor::parse::parse_recorded(entry, bytes, self.options());
        let fields = spans.into_iter().map(annotate).collect();
        let (descriptor, tensor, error) = match parsed {
            Err(e) => (None, None, Some(e)),
            Ok(d) => match self.resolve_parsed(entry, d.clone(), 0) {
                Ok(t) => (Some(d), Some(t), None),
                Err(e) => (Some(d), None, Some(e)),
            },
        };
        Ok(DescriptorDump {
            entry,
            fields,
            descriptor,
            tensor,
            error,
        })
    }
}

fn annotate(span: Span<'_>) -> AnnotatedField<'_> {
    AnnotatedField {
        field: span.field,
        offset: span.offset,
        bytes: span.bytes,
        meaning: meaning(&span.field, span.bytes),
    }
}

/// Little-endian unsigned value of up to 8 bytes.
fn unsigned(bytes: &[u8]) -> u64 {
    bytes.iter().rev().fold(0u64, |v, &b| (v << 8) | u64::from(b))
}

fn signed(bytes: &[u8]) -> i64 {
    let v = unsigned(bytes);
    let bits = (bytes.len().min(8) * 8) as u32;
    if bits == 0 || bits == 64 {
        return i64::from_ne_bytes(v.to_ne_bytes());
    }
    let shift = 64 - bits;
    i64::from_ne_bytes((v << shift).to_ne_bytes()) >> shift
}

fn bit_names(value: u64, names: &[(u32, &str)]) -> String {
    let mut parts: Vec<String> = names
        .iter()
        .filter(|&&(bit, _)| value & u64::from(bit) != 0)
        .map(|&(_, name)| name.to_owned())
        .collect();
    let known = names.iter().fold(0u64, |m, &(bit, _)| m | u64::from(bit));
    if value & !known != 0 {
        parts.push(format!("RESERVED 0x{:x}", value & !known));
    }
    if parts.is_empty() {
        "none".to_owned()
    } else {
        parts.join(" | ")
    }
}

fn named(value: u64, names: &[&str]) -> String {
    usize::try_from(value)
        .ok()
        .and_then(|i| names.get(i))
        .map_or_else(|| format!("unknown(0x{value:02x})"), |n| (*n).to_owned())
}

/// The meaning of one field's bytes, by its spec name.
fn meaning(field: &Field, bytes: &[u8]) -> String {
    let leaf = field.member.unwrap_or(field.name);
    let v = unsigned(bytes);
    match leaf {
        UNREAD => "not read: the parse stopped at the error".to_owned(),
        SKIPPED => "skipped: past the fields this version defines (newer minor version, or permissive mode)".to_owned(),
        "magic" => format!("\"{}\"", bytes.escape_ascii()),
        "flags" if field.name == "flags" => bit_names(v, &flags::NAMES),
        "flags" => bit_names(v, &[(1, "SYMMETRIC")]),
        "type_tag" | "scale_type_tag" => match ElementType::from_tag(u8::try_from(v).unwrap_or(0)) {
            Some(t) => t.as_str().to_owned(),
            None if (0xF0..=0xFE).contains(&v) => "implementation-private type".to_owned(),
            None => format!("unknown(0x{v:02x})"),
        },
        "layout_tag" | "outer_layout" | "inner_layout" => Layout::from_tag(u8::try_from(v).unwrap_or(0)).to_string(),
        "device_tag" => match v {
            0..=8 => named(v, &crate::buffer_protocol::DEVICE_NAMES),
            0xF0..=0xFE => "implementation-private device".to_owned(),
            _ => "reserved / invalid".to_owned(),
        },
        "sync_mode" => named(v, &["SYNC_PRODUCER_SYNCED", "SYNC_EVENT", "SYNC_CONSUMER_STREAM"]),
        "memory_class" => named(v, &["STANDARD", "HOST_PINNED", "UNIFIED", "PEER"]),
        "computed_mask" => bit_names(v, &statistics_mask::NAMES),
        "strides" | "outer_strides" | "inner_strides" | "zero_point" => signed(bytes).to_string(),
        // Debug: the shortest text that reads back (`0.0`, `-0.0`, `1e-45`,
        // `NaN`, `inf`), as the errors show numbers.
        "sparsity_ratio" | "value_min" | "value_max" | "value_abs_max" | "value_mean" | "value_stddev" => {
            format!("{:?}", f64::from_bits(v))
        }
        "scale" => format!("{:?}", f32::from_bits(u32::try_from(v).unwrap_or(0))),
        "shape" | "parent_shape" if v == DYNAMIC => "dynamic dimension".to_owned(),
        "byte_size" | "alignment" | "descriptor_length" | "quantization_length" | "byte_offset" => {
            format!("{v} {}", if v == 1 { "byte" } else { "bytes" })
        }
        "is_sorted" | "has_nan" | "has_inf" | "is_float" | "is_signed" => match v {
            0 => "false".to_owned(),
            1 => "true".to_owned(),
            _ => format!("{v} (not 0 or 1)"),
        },
        "composition_rule" => named(v, &["reserved", "partition", "overlay", "group"]),
        "combine_op" => named(v, &["none", "replace", "add"]),
        "member_role" => named(v, &["correction", "base"]),
        "kv_role" => named(v, &["key", "value", "fused / generic"]),
        "block_table_index_type" => named(v, &["uint32", "uint64"]),
        "scheme_tag" => named(
            v,
            &[
                "reserved",
                "per_tensor_affine",
                "per_channel_affine",
                "per_block_affine",
                "nf4",
                "mxfp",
            ],
        ),
        "layer_index" if v == u64::from(u32::MAX) => "not layer-scoped".to_owned(),
        "member_count" if v == u64::from(u32::MAX) => "open composite (reserved)".to_owned(),
        "zero_point_buffer_index" if v == u64::from(u32::MAX) => "none".to_owned(),
        l if l.starts_with("_reserved") => {
            if bytes.iter().all(|&b| b == 0) {
                "reserved, zero".to_owned()
            } else {
                "reserved, NOT ZERO".to_owned()
            }
        }
        _ => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meanings_decode_tags_and_flags() {
        assert_eq!(meaning(&Field::new("magic"), b"HRRY"), "\"HRRY\"");
        assert_eq!(meaning(&Field::new("type_tag"), &[0x03]), "float32");
        assert_eq!(meaning(&Field::new("layout_tag"), &[0x08]), "csc");
        assert_eq!(
            meaning(&Field::new("flags"), &[0x09, 0, 0, 0]),
            "HAS_QUANTIZATION | HAS_STATISTICS"
        );
        assert_eq!(meaning(&Field::new("flags"), &[0x20, 0, 0, 0]), "RESERVED 0x20");
        assert_eq!(meaning(&Field::member("buffer", 0, "device_tag"), &[0]), "CPU");
        assert_eq!(meaning(&Field::at("shape", 1), &[0xFF; 8]), "dynamic dimension");
        assert_eq!(meaning(&Field::at("strides", 0), &(-4i64).to_le_bytes()), "-4");
        assert_eq!(meaning(&Field::new("_reserved"), &[0, 1]), "reserved, NOT ZERO");
        assert_eq!(
            meaning(&Field::sub("statistics", "sparsity_ratio"), &0.75f64.to_le_bytes()),
            "0.75"
        );
        assert_eq!(meaning(&Field::new("scale"), &0.0f32.to_le_bytes()), "0.0");
        assert_eq!(meaning(&Field::new("scale"), &(-0.0f32).to_le_bytes()), "-0.0");
        assert_eq!(meaning(&Field::new("scale"), &f32::from_bits(1).to_le_bytes()), "1e-45");
        assert_eq!(meaning(&Field::new("scale"), &f32::NAN.to_le_bytes()), "NaN");
    }
}
