//! `file-format.md`: the file header and the trailer.

use hurray_writer::{RawFileFields, HAS_INDEX_CRC32C, HAS_KV_METADATA};

use super::bases::dense;
use super::build::{raw_opts, single, write};
use super::bytes::{insert_before_trailer, set_trailer_u64, trailer_u64, wr, T_CRC, T_INDEX_LENGTH, T_INDEX_OFFSET};
use super::manifest::{Corpus, LAYOUT_ORDER};

pub(super) fn container(c: &mut Corpus) {
    let hdr = "file-format.md § File Header";
    let trl = "file-format.md § Trailer";
    let mut b = single(dense());
    wr(&mut b, 0, b"HRRYFILX");
    c.add(
        "header_magic",
        "file magic is not HRRYFILE",
        hdr,
        "open",
        "BadMagic",
        "magic",
        b,
    );

    let b2 = write(
        raw_opts(RawFileFields {
            container_version: Some([2, 0]),
            ..Default::default()
        }),
        &[],
        vec![dense()],
    );
    c.add(
        "header_container_version_2",
        "container_version_major 2 is newer than supported",
        hdr,
        "open",
        "UnsupportedVersion",
        "container_version_major",
        b2,
    );
    let b = write(
        raw_opts(RawFileFields {
            container_version: Some([0, 0]),
            ..Default::default()
        }),
        &[],
        vec![dense()],
    );
    c.add(
        "header_container_version_0",
        "container_version_major 0 is older than supported (no migration path at 1.x)",
        hdr,
        "open",
        "UnsupportedVersion",
        "container_version_major",
        b,
    );
    let b = write(
        raw_opts(RawFileFields {
            header_reserved: Some([0, 1]),
            ..Default::default()
        }),
        &[],
        vec![dense()],
    );
    c.add(
        "header_reserved_10_11",
        "header _reserved (bytes 10-11) is not zero",
        hdr,
        "open",
        "Reserved",
        "_reserved",
        b,
    );
    let mut tail = [0u8; 28];
    tail[27] = 0x80;
    let b = write(
        raw_opts(RawFileFields {
            header_reserved_tail: Some(tail),
            ..Default::default()
        }),
        &[],
        vec![dense()],
    );
    c.add(
        "header_reserved_36_63",
        "header _reserved_header (bytes 36-63) is not zero",
        hdr,
        "open",
        "Reserved",
        "_reserved_header",
        b,
    );
    let b = write(
        raw_opts(RawFileFields {
            file_flags: Some(HAS_INDEX_CRC32C | 1 << 3),
            ..Default::default()
        }),
        &[],
        vec![dense()],
    );
    c.add(
        "header_file_flags_reserved_bit",
        "reserved file_flags bit 3 is set",
        "file-format.md § File Header › File Flags",
        "open",
        "Reserved",
        "file_flags",
        b,
    );
    for (name, value, why) in [
        ("0", 0u32, "0 is not a power of two"),
        ("6144", 6144, "6144 is not a power of two"),
        ("2048", 2048, "2048 is below the minimum 4096"),
        ("4mib", 4 << 20, "4 MiB is above the maximum 2 MiB"),
    ] {
        let b = write(
            raw_opts(RawFileFields {
                header_data_buffer_alignment: Some(value),
                ..Default::default()
            }),
            &[],
            vec![dense()],
        );
        c.add(
            &format!("header_data_buffer_alignment_{name}"),
            &format!("data_buffer_alignment must be a power of two in [4096, 2 MiB]: {why}"),
            hdr,
            "open",
            "Invalid",
            "data_buffer_alignment",
            b,
        );
    }
    for (value, why) in [
        (63u64, "below the 64-byte header and not a multiple of 8"),
        (68, "not a multiple of 8"),
    ] {
        let mut b = single(dense());
        wr(&mut b, 20, &value.to_le_bytes());
        c.add(
            &format!("header_first_descriptor_offset_{value}"),
            &format!("first_descriptor_offset {value} is {why}"),
            hdr,
            "open",
            "Invalid",
            "first_descriptor_offset",
            b,
        );
    }

    // Trailer.
    let mut b = single(dense());
    let n = b.len();
    wr(&mut b, n - 4, b"HRRX");
    c.add(
        "trailer_magic",
        "trailer magic is not HRRY",
        trl,
        "open",
        "BadMagic",
        "trailer_magic",
        b,
    );
    let b = write(
        raw_opts(RawFileFields {
            trailer_reserved: Some([0, 0, 1, 0]),
            ..Default::default()
        }),
        &[],
        vec![dense()],
    );
    c.add(
        "trailer_reserved",
        "trailer reserved bytes 32-35 are not zero",
        trl,
        "open",
        "Reserved",
        "trailer._reserved",
        b,
    );
    let mut b = single(dense());
    let n = b.len();
    b[n - T_CRC] ^= 1;
    c.add(
        "trailer_index_crc_mismatch",
        "HAS_INDEX_CRC32C is set and index_crc32c does not match the index bytes",
        "file-format.md § File Header › File Flags",
        "open",
        "IndexCrcMismatch",
        "index_crc32c",
        b,
    );
    let b = write(
        raw_opts(RawFileFields {
            omit_index_crc: true,
            index_crc32c: Some(0x1234_5678),
            ..Default::default()
        }),
        &[],
        vec![dense()],
    );
    c.add(
        "trailer_index_crc_without_flag",
        "index_crc32c is non-zero although HAS_INDEX_CRC32C is clear",
        "file-format.md § File Header › File Flags",
        "open",
        "Invalid",
        "index_crc32c",
        b,
    );
    let b = write(
        raw_opts(RawFileFields {
            file_flags: Some(HAS_INDEX_CRC32C | HAS_KV_METADATA),
            ..Default::default()
        }),
        &[],
        vec![dense()],
    );
    c.add(
        "trailer_kv_flag_without_section",
        "HAS_KV_METADATA is set but the trailer locates no KV section",
        "file-format.md § File Header › File Flags; NOTES.md 'HAS_KV_METADATA'",
        "open",
        "Invalid",
        "kv_offset",
        b,
    );
    let mut b = single(dense());
    set_trailer_u64(&mut b, T_INDEX_OFFSET, 1 << 40);
    c.add(
        "trailer_index_offset_past_eof",
        "index_offset lies past the end of the file",
        trl,
        "open",
        "SectionRange",
        "index_offset",
        b,
    );
    let mut b = single(dense());
    let n = b.len() as u64;
    set_trailer_u64(&mut b, T_INDEX_OFFSET, n - 32);
    set_trailer_u64(&mut b, T_INDEX_LENGTH, 8);
    c.add(
        "trailer_index_into_trailer",
        "the index range overlaps the trailer",
        trl,
        "open",
        "SectionRange",
        "index_offset",
        b,
    );
    let mut b = single(dense());
    let start = trailer_u64(&b, T_INDEX_OFFSET);
    let len = trailer_u64(&b, T_INDEX_LENGTH);
    set_trailer_u64(&mut b, T_INDEX_OFFSET, start + 4);
    set_trailer_u64(&mut b, T_INDEX_LENGTH, len - 4);
    c.add(
        "trailer_index_offset_misaligned",
        "index_offset is not a multiple of 8",
        "file-format.md § Index Section",
        "open",
        "Invalid",
        "index_offset",
        b,
    );
    let mut b = single(dense());
    let n = b.len() as u64;
    set_trailer_u64(&mut b, T_INDEX_OFFSET, n - 44);
    set_trailer_u64(&mut b, T_INDEX_LENGTH, 4);
    c.add(
        "trailer_index_length_below_8",
        "index_length is smaller than the 8-byte entry count",
        "file-format.md § Index Section › Index Encoding",
        "open",
        "Invalid",
        "index_length",
        b,
    );
    let mut b = single(dense());
    insert_before_trailer(&mut b, 8);
    c.add(
        "trailer_index_gap_before_trailer",
        "the index does not end where the trailer starts (8 bytes between them)",
        LAYOUT_ORDER,
        "open",
        "Layout",
        "index_length",
        b,
    );
}
