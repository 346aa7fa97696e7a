//! `file-format.md` § KV Metadata Section.

use super::bases::kv_file;
use super::build::{kv, str_payload};
use super::bytes::{kv_start, set_trailer_u32, set_trailer_u64, wr, T_KV_LENGTH, T_KV_OFFSET};
use super::manifest::Corpus;

pub(super) fn kv_cases(c: &mut Corpus) {
    let sec = "file-format.md § KV Metadata Section › KV Section Encoding";
    let place = "file-format.md § KV Metadata Section";
    let types = "file-format.md § KV Metadata Section › KV Value Types";
    let int = || 7i64.to_le_bytes().to_vec();
    let mut b = kv_file(&[kv("k", 0x02, int())]);
    let at = kv_start(&b);
    wr(&mut b, at, &1000u32.to_le_bytes());
    c.add(
        "kv_count_too_large",
        "kv_count is larger than the KV section can hold",
        sec,
        "open",
        "CountTooLarge",
        "kv_count",
        b,
    );
    c.add(
        "kv_key_empty",
        "a KV key is empty (key_length 0)",
        sec,
        "open",
        "Invalid",
        "kv_entry[0].key_length",
        kv_file(&[kv("", 0x02, int())]),
    );
    c.add(
        "kv_key_invalid_utf8",
        "a KV key is not valid UTF-8",
        sec,
        "open",
        "InvalidUtf8",
        "kv_entry[0].key",
        kv_file(&[(vec![b'k', 0xC3], 0x02, int())]),
    );
    c.add(
        "kv_duplicate_key",
        "two KV entries have the same key",
        sec,
        "open",
        "DuplicateKey",
        "kv_entry[1].key",
        kv_file(&[kv("k", 0x02, int()), kv("k", 0x02, int())]),
    );
    for tag in [0x08u8, 0xEF, 0xF0, 0xFF] {
        c.add(
            &format!("kv_value_tag_{tag:02x}"),
            &format!("value_tag 0x{tag:02X} is not a defined KV value type"),
            types,
            "open",
            "UnknownTag",
            "kv_entry[0].value_tag",
            kv_file(&[kv("k", tag, int())]),
        );
    }
    c.add(
        "kv_bool_byte_2",
        "a bool value byte is 2 (must be 0 or 1)",
        types,
        "open",
        "Invalid",
        "kv_entry[0].bool value",
        kv_file(&[kv("k", 0x05, vec![2])]),
    );
    c.add(
        "kv_string_length_past_section",
        "a string's length runs past the KV section",
        types,
        "open",
        "CountTooLarge",
        "kv_entry[0].string length",
        kv_file(&[kv("k", 0x01, str_payload(1000, b"ab"))]),
    );
    c.add(
        "kv_string_invalid_utf8",
        "a string value is not valid UTF-8",
        types,
        "open",
        "InvalidUtf8",
        "kv_entry[0].string bytes",
        kv_file(&[kv("k", 0x01, str_payload(2, &[0xFF, 0xFE]))]),
    );
    c.add(
        "kv_bytes_length_past_section",
        "a bytes value's length runs past the KV section",
        types,
        "open",
        "CountTooLarge",
        "kv_entry[0].bytes length",
        kv_file(&[kv("k", 0x06, str_payload(1000, b"ab"))]),
    );
    let array = |elem: u8, count: u32, rest: &[u8]| {
        let mut p = vec![elem];
        p.extend(count.to_le_bytes());
        p.extend_from_slice(rest);
        p
    };
    c.add(
        "kv_array_nested",
        "an array's element_type is 0x07 (arrays do not nest)",
        types,
        "open",
        "Invalid",
        "kv_entry[0].element_tag",
        kv_file(&[kv("k", 0x07, array(0x07, 1, &array(0x02, 1, &int())))]),
    );
    c.add(
        "kv_array_element_tag_00",
        "an array's element_type is 0x00",
        types,
        "open",
        "UnknownTag",
        "kv_entry[0].element_tag",
        kv_file(&[kv("k", 0x07, array(0x00, 1, &int()))]),
    );
    c.add(
        "kv_array_count_past_section",
        "an array's count runs past the KV section",
        types,
        "open",
        "CountTooLarge",
        "kv_entry[0].element count",
        kv_file(&[kv("k", 0x07, array(0x02, 1000, &int()))]),
    );
    // "kk" + int64: the section is 17 bytes, padded to 24; claim all 24.
    let mut b = kv_file(&[kv("kk", 0x02, int())]);
    set_trailer_u32(&mut b, T_KV_LENGTH, 24);
    c.add(
        "kv_trailing_bytes",
        "the KV section holds bytes after its last entry",
        sec,
        "open",
        "TrailingBytes",
        "KV section",
        b,
    );
    let mut b = kv_file(&[kv("k", 0x02, int())]);
    set_trailer_u64(&mut b, T_KV_OFFSET, 1 << 40);
    c.add(
        "kv_offset_past_eof",
        "kv_offset lies past the end of the file",
        place,
        "open",
        "SectionRange",
        "kv_offset",
        b,
    );
    let mut b = kv_file(&[kv("k", 0x02, int())]);
    let at = kv_start(&b) as u64;
    set_trailer_u64(&mut b, T_KV_OFFSET, at + 4);
    set_trailer_u32(&mut b, T_KV_LENGTH, 12);
    c.add(
        "kv_offset_misaligned",
        "kv_offset is not a multiple of 8",
        place,
        "open",
        "Invalid",
        "kv_offset",
        b,
    );
}
