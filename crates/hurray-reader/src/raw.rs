//! On-disk structures, byte for byte: the structs of
//! [`hurray_format::raw`], re-exported.
//!
//! Every struct here is `#[repr(C)]`, has alignment 1 and accepts every bit
//! pattern, so `zerocopy` can view it straight from the mapped bytes at any
//! offset. Field names are the spec's. Nothing here is validated: the
//! friendly types of the crate decode and check these fields; this module is
//! the escape hatch for callers who want the raw values.

pub use hurray_format::raw::*;
