//! `name`, `dtype`, `layout`, `shape`, `nnz`: how the objects of
//! `--head`, `--column`, `--row`, `--get` and `--dump` start.

use serde::Serialize;

use crate::report::header::Header;

/// The facts every per-tensor object starts with.
#[derive(Serialize)]
pub struct JsonHeader<'a> {
    name: &'a str,
    dtype: String,
    layout: String,
    shape: &'a [u64],
    nnz: Option<u64>,
}

impl<'a> JsonHeader<'a> {
    pub fn new(h: &'a Header<'a>) -> Self {
        JsonHeader {
            name: h.name,
            dtype: h.dtype_name(),
            layout: h.layout.to_string(),
            shape: &h.shape,
            nnz: h.nnz,
        }
    }
}
