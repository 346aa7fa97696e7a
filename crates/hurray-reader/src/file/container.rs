//! The container's frame (`file-format.md` § File Header, § Trailer): the
//! header and trailer checks, the sections the trailer locates (index, KV),
//! and the reserved-bytes rule every section shares.

use super::{CONTAINER_VERSION_MAJOR, FILE_MAGIC, HEADER_LEN, TRAILER_LEN, TRAILER_MAGIC};
use crate::cursor::to_u64;
use crate::error::{rule, Error, Field, Location, Result, Scope};
use crate::raw;
use zerocopy::FromBytes;

pub use hurray_format::container::file_flags;

/// Checks a file's first bytes (`start`: the whole file, or any prefix of
/// it) against the file magic: they must begin with `HRRYFILE`, or, fewer
/// than 8, be the start of it. The one magic check of
/// [`HurrayFile::parse`](super::HurrayFile::parse), and of
/// [`AlignedBytes::read`](crate::AlignedBytes::read) before it reads more
/// than the first bytes, so both give the same error.
///
/// # Errors
/// [`Error::BadMagic`] (field `magic`, offset 0, `file-format.md` § File
/// Header) naming the first 8 bytes (all of them in a shorter `start`).
pub(crate) fn check_file_magic(start: &[u8]) -> Result<()> {
    let prefix = start.get(..FILE_MAGIC.len()).unwrap_or(start);
    if FILE_MAGIC.starts_with(prefix) {
        Ok(())
    } else {
        Err(bad_file_magic(prefix))
    }
}

/// The file does not start with `HRRYFILE`; `found` is what it starts with
/// (fewer than 8 bytes in a shorter file).
fn bad_file_magic(found: &[u8]) -> Error {
    Error::BadMagic {
        at: Location {
            scope: Scope::File,
            field: Field::new("magic"),
            offset: 0,
            rule: rule::FILE_HEADER,
        },
        expected: "HRRYFILE",
        found: found.escape_ascii().to_string(),
    }
}

/// The checks of the file's two ends, the first of
/// [`HurrayFile::parse`](super::HurrayFile::parse), on `start` (at least
/// the 64-byte header) and `end` (the 40-byte trailer) of a file of `size`
/// bytes (at least 104): the header, then the trailer, whose offsets are
/// checked against `size`. [`AlignedBytes::read`](crate::AlignedBytes::read)
/// runs them on the two ends alone before it reads the rest, so both give
/// the same error for a file cut short or corrupt at either end.
///
/// # Errors
/// As [`check_header`] and [`check_trailer`];
/// [`Error::FileTooSmall`] when `start` or `end` is too short.
pub(crate) fn check_ends<'a>(
    start: &'a [u8],
    end: &'a [u8],
    size: u64,
) -> Result<(&'a raw::FileHeader, &'a raw::Trailer)> {
    let minimum = HEADER_LEN + TRAILER_LEN;
    let too_small = || Error::FileTooSmall { size, minimum };
    let header = raw::FileHeader::ref_from_prefix(start)
        .map(|(h, _)| h)
        .map_err(|_| too_small())?;
    check_header(header)?;
    let trailer = raw::Trailer::ref_from_bytes(end).map_err(|_| too_small())?;
    check_trailer(header, trailer, size.checked_sub(TRAILER_LEN).ok_or_else(too_small)?)?;
    Ok((header, trailer))
}

pub(super) fn check_header(h: &raw::FileHeader) -> Result<()> {
    check_file_magic(&h.magic)?;
    if h.container_version_major != CONTAINER_VERSION_MAJOR {
        return Err(Error::UnsupportedVersion {
            at: Location {
                scope: Scope::File,
                field: Field::new("container_version_major"),
                offset: 8,
                rule: rule::FILE_HEADER,
            },
            found: h.container_version_major,
            supported: CONTAINER_VERSION_MAJOR,
        });
    }
    reserved_zero(&h.reserved, Field::new("_reserved"), 10, rule::FILE_HEADER, Scope::File)?;
    let flags = h.file_flags.get();
    if flags & !file_flags::KNOWN != 0 {
        return Err(Error::Reserved {
            at: Location {
                scope: Scope::File,
                field: Field::new("file_flags"),
                offset: 12,
                rule: rule::FILE_FLAGS,
            },
            value: u64::from(flags & !file_flags::KNOWN),
            byte: None,
        });
    }
    let dba = h.data_buffer_alignment.get();
    if !dba.is_power_of_two() || !(4096..=2 * 1024 * 1024).contains(&dba) {
        return Err(Error::Invalid {
            at: Location {
                scope: Scope::File,
                field: Field::new("data_buffer_alignment"),
                offset: 16,
                rule: rule::FILE_HEADER,
            },
            value: u64::from(dba),
            expected: "a power of two in [4096, 2097152]",
        });
    }
    let first = h.first_descriptor_offset.get();
    if first < HEADER_LEN || !first.is_multiple_of(8) {
        return Err(Error::Invalid {
            at: Location {
                scope: Scope::File,
                field: Field::new("first_descriptor_offset"),
                offset: 20,
                rule: rule::FILE_HEADER,
            },
            value: first,
            expected: "a multiple of 8, at least 64",
        });
    }
    reserved_zero(
        &h.reserved_header,
        Field::new("_reserved_header"),
        36,
        rule::FILE_HEADER,
        Scope::File,
    )
}

pub(super) fn check_trailer(h: &raw::FileHeader, t: &raw::Trailer, offset: u64) -> Result<()> {
    // The magic is checked before any other trailer field is trusted.
    if &t.trailer_magic != TRAILER_MAGIC {
        return Err(Error::BadMagic {
            at: Location {
                scope: Scope::File,
                field: Field::new("trailer_magic"),
                offset: offset + 36,
                rule: rule::TRAILER,
            },
            expected: "HRRY as the file's last 4 bytes (a file cut short, or with bytes appended, ends otherwise)",
            found: t.trailer_magic.escape_ascii().to_string(),
        });
    }
    reserved_zero(
        &t.reserved,
        Field::sub("trailer", "_reserved"),
        offset + 32,
        rule::TRAILER,
        Scope::File,
    )?;
    let flags = h.file_flags.get();
    if flags & file_flags::HAS_INDEX_CRC32C == 0 && t.index_crc32c.get() != 0 {
        return Err(Error::Invalid {
            at: Location {
                scope: Scope::File,
                field: Field::new("index_crc32c"),
                offset: offset + 28,
                rule: rule::FILE_FLAGS,
            },
            value: u64::from(t.index_crc32c.get()),
            expected: "0 when HAS_INDEX_CRC32C is clear",
        });
    }
    if t.index_length.get() < 8 {
        return Err(Error::Invalid {
            at: Location {
                scope: Scope::File,
                field: Field::new("index_length"),
                offset: offset + 8,
                rule: rule::INDEX,
            },
            value: t.index_length.get(),
            expected: "at least 8 (room for index_entry_count)",
        });
    }
    let kv_present = t.kv_offset.get() != 0 || t.kv_length.get() != 0;
    if flags & file_flags::HAS_KV_METADATA != 0 && !kv_present {
        return Err(Error::Invalid {
            at: Location {
                scope: Scope::File,
                field: Field::new("kv_offset"),
                offset: offset + 16,
                rule: rule::KV_FLAG,
            },
            value: 0,
            expected: "a KV section when HAS_KV_METADATA is set",
        });
    }
    Ok(())
}

/// Errors if any byte of a reserved field is non-zero: at the field's offset,
/// naming the first non-zero byte.
pub(crate) fn reserved_zero(bytes: &[u8], field: Field, offset: u64, rule: &'static str, scope: Scope) -> Result<()> {
    match bytes.iter().position(|&b| b != 0) {
        None => Ok(()),
        Some(i) => Err(Error::Reserved {
            at: Location {
                scope,
                field,
                offset,
                rule,
            },
            value: u64::from(bytes.get(i).copied().unwrap_or(0)),
            byte: Some(to_u64(i)),
        }),
    }
}

/// The bytes of a section located by the trailer, which must be 8-aligned,
/// after the header and before `limit` (the trailer, or the index).
pub(super) fn section<'a>(
    data: &'a [u8],
    start: u64,
    length: u64,
    limit: u64,
    name: &'static str,
    field: Field,
    trailer_offset: u64,
) -> Result<&'a [u8]> {
    let field_offset = match field.name {
        "kv_offset" => trailer_offset + 16,
        _ => trailer_offset,
    };
    let at = |rule| Location {
        scope: Scope::File,
        field,
        offset: field_offset,
        rule,
    };
    let out_of_range = |rule| Error::SectionRange {
        at: at(rule),
        section: name,
        start,
        length,
        lower: HEADER_LEN,
        upper: limit,
    };
    let index = name == "index";
    let end = start.checked_add(length);
    let inside = end.is_some_and(|end| start >= HEADER_LEN && end <= limit);
    if !inside {
        return Err(out_of_range(if index { rule::TRAILER } else { rule::KV_SECTION }));
    }
    if !start.is_multiple_of(8) {
        return Err(Error::Invalid {
            at: at(if index { rule::INDEX_SECTION } else { rule::KV_SECTION }),
            value: start,
            expected: "a multiple of 8",
        });
    }
    let range = usize::try_from(start)
        .ok()
        .zip(end.and_then(|e| usize::try_from(e).ok()));
    range
        .and_then(|(s, e)| data.get(s..e))
        .ok_or_else(|| out_of_range(rule::TRAILER))
}

pub(super) fn kv_section<'a>(
    data: &'a [u8],
    _header: &raw::FileHeader,
    t: &raw::Trailer,
    trailer_offset: u64,
) -> Result<Option<(&'a [u8], u64)>> {
    let start = t.kv_offset.get();
    let length = u64::from(t.kv_length.get());
    if start == 0 && length == 0 {
        return Ok(None);
    }
    // NOTES.md 'HAS_KV_METADATA': the trailer fields are authoritative.
    let bytes = section(
        data,
        start,
        length,
        t.index_offset.get(),
        "KV section",
        Field::new("kv_offset"),
        trailer_offset,
    )?;
    Ok(Some((bytes, start)))
}
