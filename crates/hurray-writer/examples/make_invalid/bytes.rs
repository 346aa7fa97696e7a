//! Byte helpers: little-endian arrays, and patching a written file's
//! trailer fields and index CRC-32C.

pub(super) fn f32b(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(super) fn u64b(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(super) fn u32b(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn rd64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

pub(super) fn wr(b: &mut [u8], at: usize, v: &[u8]) {
    b[at..at + v.len()].copy_from_slice(v);
}

/// Trailer field offsets, from the end of the file.
pub(super) const T_INDEX_OFFSET: usize = 40;
pub(super) const T_INDEX_LENGTH: usize = 32;
pub(super) const T_KV_OFFSET: usize = 24;
pub(super) const T_KV_LENGTH: usize = 16;
pub(super) const T_CRC: usize = 12;

pub(super) fn trailer_u64(b: &[u8], from_end: usize) -> u64 {
    rd64(b, b.len() - from_end)
}

pub(super) fn set_trailer_u64(b: &mut [u8], from_end: usize, v: u64) {
    let at = b.len() - from_end;
    wr(b, at, &v.to_le_bytes());
}

pub(super) fn set_trailer_u32(b: &mut [u8], from_end: usize, v: u32) {
    let at = b.len() - from_end;
    wr(b, at, &v.to_le_bytes());
}

fn index_start(b: &[u8]) -> usize {
    trailer_u64(b, T_INDEX_OFFSET) as usize
}

pub(super) fn kv_start(b: &[u8]) -> usize {
    trailer_u64(b, T_KV_OFFSET) as usize
}

/// Recomputes the index CRC-32C after index bytes were patched.
pub(super) fn fix_crc(b: &mut [u8]) {
    let start = index_start(b);
    let len = trailer_u64(b, T_INDEX_LENGTH) as usize;
    let crc = crc32c::crc32c(&b[start..start + len]);
    set_trailer_u32(b, T_CRC, crc);
}

/// Inserts `n` zero bytes between the index and the trailer.
pub(super) fn insert_before_trailer(b: &mut Vec<u8>, n: usize) {
    let at = b.len() - 40;
    b.splice(at..at, std::iter::repeat_n(0u8, n));
}
