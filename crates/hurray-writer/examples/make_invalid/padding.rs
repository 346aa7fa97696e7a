//! Padding (`file-format.md` § Alignment and Padding Summary): only
//! `file.validate()` reads it.

use super::bases::kv_file;
use super::bases::{csc, dense};
use super::build::kv;
use super::build::single;
use super::bytes::kv_start;
use super::manifest::Corpus;

pub(super) fn padding(c: &mut Corpus) {
    let rule = "file-format.md § Alignment and Padding Summary";
    let mut b = single(dense());
    b[200] = 0x01;
    c.add(
        "padding_after_descriptor",
        "a padding byte between the descriptor and the first buffer is not zero",
        rule,
        "file",
        "Reserved",
        "padding",
        b,
    );
    let mut b = single(csc());
    b[4096 + 100] = 0x01;
    c.add(
        "padding_between_buffers",
        "a padding byte between buffer 0 and buffer 1 is not zero",
        rule,
        "file",
        "Reserved",
        "padding",
        b,
    );
    let mut b = kv_file(&[kv("kk", 0x02, 7i64.to_le_bytes().to_vec())]);
    let at = kv_start(&b) + 17;
    b[at] = 0x01;
    c.add(
        "padding_after_kv_section",
        "a padding byte between the KV section and the index is not zero",
        rule,
        "file",
        "Reserved",
        "padding",
        b,
    );
}
