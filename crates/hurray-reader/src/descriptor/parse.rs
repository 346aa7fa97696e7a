//! Parsing a descriptor (`metadata.md` § Fixed Header, then each section in
//! the order the spec lays them out), one field at a time through a
//! [`Cursor`] bounded by `descriptor_length`.

use zerocopy::little_endian::U64;
use zerocopy::FromBytes;

use super::extension::check_extension_type;
use super::statistics::{check_statistics, statistics_value_violation};
use super::{
    flags, Descriptor, Offsets, Shard, DESCRIPTOR_VERSION_MAJOR, DESCRIPTOR_VERSION_MINOR, MAX_RANK, SKIPPED, UNREAD,
};
use crate::cursor::{to_u64, Cursor, Span};
use crate::element_type::{ElementType, TagClass};
use crate::error::{rule, Error, Field, Location, Result, Scope};
use crate::file::{reserved_zero, EntryField, IndexEntry, Options};
use crate::layout::fields::{self, Layout, LayoutFields};
use crate::quantization::section as quantization;
use crate::raw;

/// Parses a descriptor from the bytes its index entry delimits (`bytes`:
/// the entry's `descriptor_length` bytes at its `descriptor_offset`,
/// already known to lie inside the file).
pub(crate) fn parse<'data>(
    entry: IndexEntry<'data>,
    bytes: &'data [u8],
    options: Options,
) -> Result<Descriptor<'data>> {
    let mut c =
        Cursor::new(bytes, entry.descriptor_offset(), "descriptor", rule::FIXED_HEADER).for_tensor(entry.name());
    parse_from(&mut c, entry, bytes, options)
}

/// As [`parse`], also returning every field read (up to the first error).
pub(crate) fn parse_recorded<'data>(
    entry: IndexEntry<'data>,
    bytes: &'data [u8],
    options: Options,
) -> (Result<Descriptor<'data>>, Vec<Span<'data>>) {
    let mut c = Cursor::new(bytes, entry.descriptor_offset(), "descriptor", rule::FIXED_HEADER)
        .for_tensor(entry.name())
        .recording(true);
    let result = parse_from(&mut c, entry, bytes, options);
    let stopped = c.offset();
    let unread = bytes.get(c.position()..).unwrap_or_default();
    let mut spans = c.into_spans();
    // The bytes the parse did not read are listed too: where it stopped at
    // an error, so that an error pointing at them (a truncated field,
    // trailing bytes) points into a listed span; after a parse that
    // succeeded, the bytes it skipped (a newer minor version's fields, or
    // extra bytes permissive mode accepts).
    if !unread.is_empty() {
        let field = if result.is_err() { UNREAD } else { SKIPPED };
        spans.push(Span {
            field: Field::new(field),
            offset: stopped,
            bytes: unread,
        });
    }
    (result, spans)
}

fn parse_from<'data>(
    c: &mut Cursor<'data>,
    entry: IndexEntry<'data>,
    bytes: &'data [u8],
    options: Options,
) -> Result<Descriptor<'data>> {
    let (name, offset) = (entry.name(), entry.descriptor_offset());
    let strict = options.is_strict();
    let scope = || Scope::tensor(name);

    // The first ten bytes say what this is and how long it is; they are read
    // one field at a time so a too-short descriptor is reported as such.
    let magic = c.take(4, Field::new("magic"))?;
    if magic != b"HRRY" {
        return Err(Error::BadMagic {
            at: Location {
                scope: scope(),
                field: Field::new("magic"),
                offset,
                rule: rule::FIXED_HEADER,
            },
            expected: "HRRY",
            found: magic.escape_ascii().to_string(),
        });
    }
    let version_major = c.u8(Field::new("version_major"))?;
    if version_major != DESCRIPTOR_VERSION_MAJOR {
        return Err(Error::UnsupportedVersion {
            at: Location {
                scope: scope(),
                field: Field::new("version_major"),
                offset: offset + 4,
                rule: rule::DESCRIPTOR_VERSION,
            },
            found: version_major,
            supported: DESCRIPTOR_VERSION_MAJOR,
        });
    }
    let version_minor = c.u8(Field::new("version_minor"))?;
    let descriptor_length = u64::from(c.u32(Field::new("descriptor_length"))?);
    if descriptor_length < 20 {
        return Err(Error::Invalid {
            at: Location {
                scope: scope(),
                field: Field::new("descriptor_length"),
                offset: offset + 6,
                rule: rule::FIXED_HEADER,
            },
            value: descriptor_length,
            expected: "at least 20",
        });
    }
    if descriptor_length != entry.descriptor_length() {
        return Err(Error::DescriptorLengthMismatch {
            at: Location {
                scope: Scope::tensor(name),
                field: Field::member("index_entry", to_u64(entry.position()), "descriptor_length"),
                offset: entry.field_offset(EntryField::DescriptorLength),
                rule: rule::DESCRIPTOR_LENGTH,
            },
            descriptor_offset: offset + 6,
            index_value: entry.descriptor_length(),
            descriptor_value: descriptor_length,
        });
    }
    let flags = c.u32(Field::new("flags"))?;
    let type_tag = c.u8(Field::new("type_tag"))?;
    let layout_tag = c.u8(Field::new("layout_tag"))?;
    let rank = c.u32(Field::new("rank"))?;
    // The same 20 bytes as a struct, for raw access (they are all present).
    let header = raw::DescriptorHeader::ref_from_prefix(bytes)
        .map(|(h, _)| h)
        .map_err(|_| Error::Truncated {
            at: Location {
                scope: scope(),
                field: Field::new("descriptor fixed header"),
                offset,
                rule: rule::FIXED_HEADER,
            },
            need: 20,
            have: to_u64(bytes.len()),
            section: "descriptor",
        })?;
    if flags & !flags::KNOWN != 0 {
        return Err(Error::Reserved {
            at: Location {
                scope: scope(),
                field: Field::new("flags"),
                offset: offset + 10,
                rule: rule::FLAGS,
            },
            value: u64::from(flags & !flags::KNOWN),
            byte: None,
        });
    }
    let has = |bit: u32| flags & bit != 0;

    let element_class = ElementType::classify(type_tag);
    let is_extension_type = matches!(element_class, TagClass::Extension);
    if is_extension_type != has(flags::HAS_EXTENSION_TYPE) {
        return Err(Error::Invalid {
            at: Location {
                scope: scope(),
                field: Field::new("flags"),
                offset: offset + 10,
                rule: rule::FLAGS,
            },
            value: u64::from(flags),
            expected: "HAS_EXTENSION_TYPE set exactly when type_tag is in 0xF0-0xFE",
        });
    }
    let mut element_type = match element_class {
        TagClass::Known(t) => Some(t),
        TagClass::Extension => None, // resolved from the extension section below
        TagClass::Unknown { why } => {
            if strict || why == "invalid" {
                return Err(Error::UnknownTag {
                    at: Location {
                        scope: scope(),
                        field: Field::new("type_tag"),
                        offset: offset + 14,
                        rule: rule::TYPE_TAGS,
                    },
                    value: type_tag,
                    why,
                });
            }
            None
        }
    };

    let layout = Layout::from_tag(layout_tag);
    match layout {
        Layout::Unknown(tag) if strict || tag == 0x00 || tag == 0xFF => {
            return Err(Error::UnknownTag {
                at: Location {
                    scope: scope(),
                    field: Field::new("layout_tag"),
                    offset: offset + 15,
                    rule: rule::LAYOUT_TAGS,
                },
                value: tag,
                why: if tag == 0x00 || tag == 0xFF {
                    "invalid"
                } else {
                    "not recognised"
                },
            });
        }
        _ => {}
    }

    if rank > MAX_RANK {
        return Err(Error::Invalid {
            at: Location {
                scope: scope(),
                field: Field::new("rank"),
                offset: offset + 16,
                rule: rule::RANK,
            },
            value: u64::from(rank),
            expected: "at most 64",
        });
    }
    let rank_u64 = u64::from(rank);

    let shape_offset = c.offset();
    let shape = c.slice::<U64>(rank_u64, Field::new("shape"))?;
    let byte_offset_offset = c.offset();
    let byte_offset = c.u64(Field::new("byte_offset"))?;

    let layout_fields_offset = c.offset();
    let layout_fields = fields::parse(c, layout, rank_u64, name)?;
    if let LayoutFields::Extension {
        extension_layout_id, ..
    } = layout_fields
    {
        if strict && !options.recognises_extension_layout(extension_layout_id) {
            return Err(Error::Invalid {
                at: Location {
                    scope: scope(),
                    field: Field::new("extension_layout_id"),
                    offset: layout_fields_offset,
                    rule: rule::EXTENSION_LAYOUT,
                },
                value: extension_layout_id,
                expected: "an id the reader recognises (none by default; permissive mode accepts any, without interpreting the data)",
            });
        }
    }

    let mut offsets = Offsets {
        descriptor: offset,
        shape: shape_offset,
        byte_offset: byte_offset_offset,
        layout_fields: layout_fields_offset,
        ..Offsets::default()
    };

    let mut descriptor = Descriptor {
        name,
        bytes,
        header,
        element_type,
        layout,
        shape,
        byte_offset,
        layout_fields,
        buffers: None,
        quantization: None,
        shard: None,
        statistics: None,
        extension_type: None,
        composite_member: None,
        offsets,
    };
    if matches!(descriptor.layout_fields, LayoutFields::Unknown) {
        // Permissive: an unknown layout's fields cannot be delimited, so
        // nothing after them can be located. Keep what was read.
        return Ok(descriptor);
    }

    offsets.buffer_count = c.offset();
    let buffer_count = c.u8(Field::new("buffer_count"))?;
    descriptor.buffers = Some(c.slice_struct::<raw::BufferHandle>(u64::from(buffer_count), Field::new("buffer"))?);

    if has(flags::HAS_QUANTIZATION) {
        descriptor.quantization = Some(quantization::parse(c, name, strict)?);
    }
    if has(flags::HAS_SHARD) {
        let shard_offset = c.offset();
        descriptor.shard = Some(Shard {
            parent_shape: c.slice::<U64>(rank_u64, Field::new("parent_shape"))?,
            shard_offset: c.slice::<U64>(rank_u64, Field::new("shard_offset"))?,
            offset: shard_offset,
        });
    }
    if has(flags::HAS_STATISTICS) {
        offsets.statistics = c.offset();
        let stats = c.read_struct::<raw::Statistics>(Field::new("statistics"), Some("statistics"))?;
        check_statistics(stats, offsets.statistics, name)?;
        // NOTES.md 'value_stddev, nm_n/nm_m': strict only; permissive mode
        // keeps the advisory block and reports it
        // (Tensor::statistics_rule_violation).
        if let (true, Some(e)) = (strict, statistics_value_violation(stats, offsets.statistics, name)) {
            return Err(e);
        }
        descriptor.statistics = Some(stats);
    }
    if has(flags::HAS_EXTENSION_TYPE) {
        offsets.extension_type = c.offset();
        let ext = c.read_struct::<raw::ExtensionType>(Field::new("extension_type"), Some("extension_type"))?;
        let bit_width = check_extension_type(ext, offsets.extension_type, name)?;
        element_type = Some(ElementType::Extension {
            tag: type_tag,
            bit_width,
        });
        descriptor.element_type = element_type;
        descriptor.extension_type = Some(ext);
    }
    if has(flags::HAS_COMPOSITE_MEMBER) {
        offsets.composite_member = c.offset();
        let member = c.read_struct::<raw::CompositeMember>(Field::new("composite_member"), Some("composite_member"))?;
        if member.member_role > 1 {
            return Err(Error::Invalid {
                at: Location {
                    scope: scope(),
                    field: Field::sub("composite_member", "member_role"),
                    offset: offsets.composite_member,
                    rule: rule::COMPOSITE_MEMBER,
                },
                value: u64::from(member.member_role),
                expected: "0x00 (correction) or 0x01 (base)",
            });
        }
        reserved_zero(
            &member.reserved,
            Field::sub("composite_member", "_reserved"),
            offsets.composite_member + 1,
            rule::COMPOSITE_MEMBER,
            scope(),
        )?;
        descriptor.composite_member = Some(member);
    }
    descriptor.offsets = offsets;

    // Bytes after the last section: a newer minor version may add fields we
    // must skip; in our own version they are an error unless permissive
    // (versioning.md § Compatibility Matrix, NOTES.md 'Extra bytes').
    let newer_minor = version_minor > DESCRIPTOR_VERSION_MINOR;
    if c.remaining() != 0 && strict && !newer_minor {
        return Err(Error::TrailingBytes {
            at: Location {
                scope: scope(),
                field: Field::new("descriptor"),
                offset: c.offset(),
                rule: rule::DESCRIPTOR_VERSION,
            },
            count: to_u64(c.remaining()),
        });
    }
    Ok(descriptor)
}
