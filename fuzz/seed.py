#!/usr/bin/env python3
"""Seeds the fuzz corpora from every .hry file under the given folders.

parse_file gets each file as is; descriptor gets each tensor as
[log2(data_buffer_alignment): u8][descriptor_length: u16 LE][descriptor][data region],
the input format of fuzz_targets/descriptor.rs. Files that do not parse this
far (invalid on purpose) only seed parse_file.

    python3 fuzz/seed.py fixtures ../shared/interop ../shared/cases
"""
import hashlib
import pathlib
import struct
import sys

HERE = pathlib.Path(__file__).resolve().parent


def save(target, data):
    folder = HERE / "corpus" / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def tensors(data):
    """(alignment, descriptor, data region) per index entry, by the trailer."""
    if len(data) < 104 or data[:8] != b"HRRYFILE":
        return
    alignment = struct.unpack_from("<I", data, 16)[0]
    index_offset, index_length = struct.unpack_from("<QQ", data, len(data) - 40)
    end = index_offset + index_length
    if end > len(data) or alignment == 0 or alignment & (alignment - 1):
        return
    (count,) = struct.unpack_from("<Q", data, index_offset)
    at = index_offset + 8
    for _ in range(min(count, 10_000)):
        if at + 2 > end:
            return
        (name_length,) = struct.unpack_from("<H", data, at)
        at += 2 + name_length
        if at + 32 > end:
            return
        d_off, d_len, x_off, x_len, _flags = struct.unpack_from("<QIQQI", data, at)
        at += 32
        if d_len < 65536 and d_off + d_len <= len(data) and x_off + x_len <= len(data):
            yield alignment, data[d_off:d_off + d_len], data[x_off:x_off + x_len]


def main(folders):
    files = descriptors = 0
    for folder in folders:
        for path in sorted(pathlib.Path(folder).rglob("*.hry")):
            data = path.read_bytes()
            if len(data) > 1 << 20:
                continue
            save("parse_file", data)
            files += 1
            for alignment, descriptor, region in tensors(data):
                head = struct.pack("<BH", alignment.bit_length() - 1, len(descriptor))
                save("descriptor", head + descriptor + region[: 1 << 16])
                descriptors += 1
    print(f"{files} files, {descriptors} descriptors")


if __name__ == "__main__":
    main(sys.argv[1:] or ["fixtures"])
