//! The vocabulary of the Hurray tensor format, shared by `hurray-reader`
//! and `hurray-writer` so that the two cannot disagree on a byte.
//!
//! - [`raw`]: the on-disk structs, byte for byte (`zerocopy` views that
//!   read and write them), with [`raw::Described`] naming every byte;
//! - [`ElementType`]: element type tags, names, bit widths and storage
//!   sizes (`element-types.md`), and [`narrow`]: the scalar conversions of
//!   the 4-, 6- and 8-bit float formats;
//! - [`Layout`]: layout tags and names (`memory-layout.md`), with the tag
//!   tables of the layout-specific fields ([`layout`]);
//! - [`container`] and [`descriptor`]: magic numbers, versions, flag bits
//!   and sentinels of the file and of a descriptor; [`buffer`]: buffer
//!   handle tags; [`quant`]: quantization scheme and scale type tags.
//!
//! Nothing here validates: the reader checks, the writer encodes. The
//! tests of both crates keep their own models of the spec, so that a
//! mistake made here is still caught there.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)
)]

pub mod buffer;
pub mod container;
pub mod descriptor;
mod element_type;
pub mod layout;
pub mod narrow;
pub mod quant;
pub mod raw;

pub use element_type::{ElementType, TagClass};
pub use layout::Layout;
