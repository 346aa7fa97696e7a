//! `file-format.md`: the footer index, and where tensor regions lie.

use hurray_writer::{RawFileFields, WriterOptions, HAS_INDEX_CRC32C, SORTED_INDEX};

use super::bases::dense;
use super::build::{raw_opts, single, write};
use super::bytes::{fix_crc, insert_before_trailer, set_trailer_u64, trailer_u64, T_INDEX_LENGTH};
use super::manifest::{Corpus, LAYOUT_ORDER};

pub(super) fn index(c: &mut Corpus) {
    let idx = "file-format.md § Index Section › Index Encoding";
    let place = "file-format.md § Tensor Region › Data Buffer Placement";
    let region = "file-format.md § Tensor Region";
    let b = write(
        raw_opts(RawFileFields {
            index_entry_count: Some(1000),
            ..Default::default()
        }),
        &[],
        vec![dense()],
    );
    c.add(
        "index_entry_count_too_large",
        "index_entry_count is larger than the index can hold",
        idx,
        "open",
        "CountTooLarge",
        "index_entry_count",
        b,
    );
    c.add(
        "index_name_empty",
        "a tensor name is empty (name_length 0)",
        idx,
        "open",
        "Invalid",
        "index_entry[0].name_length",
        write(
            WriterOptions::default(),
            &[],
            vec![dense().named(""), dense().named("second_tensor")],
        ),
    );
    c.add(
        "index_name_empty_only_entry",
        "the only tensor name is empty (name_length 0)",
        idx,
        "open",
        "Invalid",
        "index_entry[0].name_length",
        single(dense().named("")),
    );
    c.add(
        "index_name_invalid_utf8",
        "a tensor name is not valid UTF-8",
        idx,
        "open",
        "InvalidUtf8",
        "index_entry[0].name",
        single(dense().with(|t| t.name = vec![b'a', 0xFF, 0xFE])),
    );
    c.add(
        "index_duplicate_name",
        "two index entries have the same name",
        idx,
        "open",
        "DuplicateName",
        "index_entry[1].name",
        write(WriterOptions::default(), &[], vec![dense(), dense()]),
    );
    c.add(
        "index_entry_flags_nonzero",
        "index entry flags are not zero",
        idx,
        "open",
        "Reserved",
        "index_entry[0].flags",
        single(dense().with(|t| t.index_flags = 1)),
    );
    let b = write(
        raw_opts(RawFileFields {
            file_flags: Some(HAS_INDEX_CRC32C | SORTED_INDEX),
            ..Default::default()
        }),
        &[],
        vec![dense().named("b"), dense().named("a")],
    );
    c.add(
        "index_sorted_flag_on_unsorted_index",
        "SORTED_INDEX is set but the names are not in byte order",
        "file-format.md § File Header › File Flags",
        "open",
        "IndexNotSorted",
        "index_entry[1].name",
        b,
    );
    let mut b = single(dense());
    insert_before_trailer(&mut b, 8);
    let len = trailer_u64(&b, T_INDEX_LENGTH);
    set_trailer_u64(&mut b, T_INDEX_LENGTH, len + 8);
    fix_crc(&mut b);
    c.add(
        "index_trailing_bytes",
        "the index holds bytes after its last entry",
        idx,
        "open",
        "TrailingBytes",
        "index",
        b,
    );
    c.add(
        "index_descriptor_offset_misaligned",
        "descriptor_offset is not a multiple of 8",
        "file-format.md § Tensor Region › Descriptor Placement",
        "open",
        "Invalid",
        "index_entry[0].descriptor_offset",
        single(dense().with(|t| t.index_descriptor_offset = Some(68))),
    )
    .tensor("t");
    c.add(
        "index_descriptor_offset_in_header",
        "descriptor_offset lies inside the header, outside the tensor area",
        region,
        "open",
        "OutOfRange",
        "index_entry[0].descriptor_offset",
        single(dense().with(|t| t.index_descriptor_offset = Some(8))),
    )
    .tensor("t");
    c.add(
        "index_data_length_past_area",
        "data_offset + data_length runs past the tensor area",
        region,
        "open",
        "OutOfRange",
        "index_entry[0].data_length",
        single(dense().with(|t| t.index_data_length = Some(1 << 20))),
    )
    .tensor("t");
    let b = write(
        WriterOptions::default().first_descriptor_offset(4088),
        &[],
        vec![dense().with(|t| t.index_data_offset = Some(4096))],
    );
    c.add(
        "index_descriptor_overlaps_data",
        "the descriptor (4088..4149) overlaps its own data region at 4096",
        place,
        "open",
        "Layout",
        "index_entry[0].descriptor_length",
        b,
    )
    .tensor("t")
    .also("the data region does not hold the buffer bytes the writer placed at 8192");
    c.add(
        "index_data_offset_misaligned",
        "data_offset is not a multiple of data_buffer_alignment",
        place,
        "open",
        "DataOffsetMisaligned",
        "index_entry[0].data_offset",
        single(dense().with(|t| t.index_data_offset = Some(4096 + 64))),
    )
    .tensor("t");
    // The buffer is written one alignment unit later than the first
    // boundary after the descriptor: a zero page in between.
    let t = dense().with(|t| {
        t.bufs.insert(0, vec![0; 4096]);
        t.index_data_offset = Some(8192);
        t.index_data_length = Some(16);
    });
    c.add(
        "index_data_offset_not_first_boundary",
        "data_offset is not the first data_buffer_alignment boundary after the descriptor",
        place,
        "open",
        "Layout",
        "index_entry[0].data_offset",
        single(t),
    )
    .tensor("t");
    c.add(
        "index_gap_between_regions",
        "16 bytes between two tensors: neither padding to 8 nor padding to data_buffer_alignment",
        LAYOUT_ORDER,
        "open",
        "Layout",
        "index_entry[1].descriptor_offset",
        write(
            WriterOptions::default(),
            &[],
            vec![dense().named("a"), dense().named("b").with(|t| t.gap_before = 16)],
        ),
    )
    .tensor("b");
    c.add(
        "index_regions_overlap",
        "a's data region (data_length 4104) overlaps b's descriptor at 8192",
        LAYOUT_ORDER,
        "open",
        "Layout",
        "index_entry[1].descriptor_offset",
        write(
            WriterOptions::default(),
            &[],
            vec![
                dense().named("a").with(|t| t.index_data_length = Some(4104)),
                dense().named("b"),
            ],
        ),
    )
    .tensor("b")
    .also("a's data_length disagrees with its buffer table (checked later, when a is resolved)");
}
