//! A zero-copy, read-only reader for Hurray tensor files.
//!
//! Hurray is a binary tensor format (spec: `shared/spec/`, starting with
//! `file-format.md`). This crate parses a file's container (header,
//! trailer, footer index, KV metadata) and each tensor's descriptor straight
//! from the bytes, checks every rule it can before handing anything out,
//! and gives borrowed views (`&[u64]`, `&[f32]`, ...) whose lifetime is tied
//! to those bytes. Nothing proportional to the data is copied.
//!
//! - [`HurrayFile::parse`] works on any byte slice; [`MappedFile`] maps a
//!   file (read its hazard section); [`AlignedBytes`] reads one into memory.
//! - [`HurrayFile::entries`] lists the tensors (the footer index: name,
//!   descriptor and data ranges) and [`HurrayFile::kv`] the KV metadata,
//!   both read when the file is opened.
//! - [`HurrayFile::tensor`] reads and checks one descriptor and locates its
//!   buffers: cost independent of the data size.
//! - Views: [`Tensor::csc`] ([`CscView`]: `get`, `column`, `columns`, `iter`,
//!   `transpose`, `to_csr`, `mul_vec`, `mul_vec_parallel`), [`Tensor::csr`]
//!   ([`CsrView`]: the same by rows), [`Tensor::coo`],
//!   [`Tensor::csf`], [`Tensor::dense`]; [`Buffer::as_slice`] and
//!   [`Buffer::packed`] for raw buffers.
//! - Strict by default ([`Options`]): a sparse view runs its storage
//!   invariant scan (one pass, no allocation) before it is returned.
//!   Permissive mode is an explicit option; [`Options::with_threads`]
//!   splits the scans over threads.
//! - [`HurrayFile::validate`] checks the whole file, as `hurray-inspect
//!   --validate` does: every tensor's data checks ([`Tensor::validate_data`]:
//!   storage invariants, quantization parameters, packing padding bits) and
//!   the padding between regions. A strict view checks only its own
//!   tensor's storage invariants. Each call scans again: after `validate`,
//!   [`Tensor::csc_unscanned`] and [`Tensor::csr_unscanned`] skip a second scan.
//! - Errors: one [`Error`] enum. An error about the file's bytes names the
//!   tensor (when there is one), the field, the absolute byte offset and the
//!   spec rule, in its message and through [`Error::tensor`],
//!   [`Error::field`], [`Error::offset`] and [`Error::rule`]. Errors about a
//!   request ([`Error::NotFound`], [`Error::TypeMismatch`], a column past the
//!   end) and I/O errors have no offset or rule.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use hurray_reader::{MappedFile, Options};
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry");
//! let mapped = MappedFile::open(path, Options::default())?;
//! let file = mapped.file()?;
//! let names: Vec<&str> = file.entries().iter().map(|e| e.name()).collect();
//! assert_eq!(names, ["A"]);
//! let a = file.tensor("A")?.csc::<f32>()?;
//! assert_eq!(a.get(0, 3)?, Some(&2.0));
//! assert_eq!(a.transpose().get(3, 0)?, Some(&2.0));
//! # Ok(()) }
//! ```
#![deny(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)
)]

#[cfg(target_endian = "big")]
compile_error!(
    "hurray-reader hands out native &[u64]/&[f32] views of little-endian data: big-endian targets are not supported"
);

mod aligned;
mod annotate;
mod buffer;
mod buffer_protocol;
mod cursor;
mod debug;
mod descriptor;
mod element_type;
mod error;
mod file;
mod interop;
mod kernels;
mod kv;
mod layout;
#[cfg(feature = "mmap")]
mod mmap;
mod open;
mod packed;
mod quantization;
pub mod raw;
mod shared;
mod tensor;
mod validate;
mod value;

/// Internals that the workspace's benchmarks (`benches/`) must match, so
/// that their bounds do what the library does: not part of the API, no
/// stability promise.
#[doc(hidden)]
pub mod for_benches {
    /// Runs `jobs` on the threads the scans and products use (the last on
    /// the calling thread, the others on the library's pool); their
    /// results, in order.
    pub fn run_all<R: Send>(jobs: Vec<impl FnOnce() -> R + Send>) -> Vec<R> {
        crate::kernels::threads::run_all(jobs)
    }
}

pub use aligned::AlignedBytes;
pub use annotate::{AnnotatedField, DescriptorDump};
pub use buffer::{Buffer, BufferRole};
pub use buffer_protocol::{PageAlignmentShortfall, PAGE_ALIGNMENT};
pub use descriptor::{
    fixed_header, flags as descriptor_flags, statistics::statistics_mask, Descriptor, Offsets, QuantScheme,
    Quantization, Shard, DESCRIPTOR_VERSION_MAJOR, DESCRIPTOR_VERSION_MINOR, DYNAMIC, MAX_RANK, MAX_TILED_DEPTH,
};
pub use element_type::{Complex, Element, ElementType, Float8E4m3, Float8E5m2, Float8E8m0};
pub use error::{shown_name, shown_path, Error, Field, Location, Number, Result, Scope};
pub use file::{
    file_flags, EntryField, HurrayFile, IndexEntry, Mode, Options, CONTAINER_VERSION_MAJOR, CONTAINER_VERSION_MINOR,
    FILE_MAGIC,
};
/// The `half` crate, whose [`f16`](half::f16) and [`bf16`](half::bf16) are
/// the element types of `float16` and `bfloat16` views: use these
/// re-exported types, so that a different `half` version in your own
/// dependencies cannot make `Element` unimplemented for them.
pub use half;
pub use kv::{KvArray, KvEntry, KvType, KvValue};
pub use layout::compressed::{Float, Slices};
pub use layout::coo::{CooStructure, CooView};
pub use layout::csc::{Column, CscStructure, CscView, Entries};
pub use layout::csf::{CsfEntries, CsfLevel, CsfStructure, CsfView};
pub use layout::csr::{CsrMatrix, CsrStructure, CsrView};
pub use layout::dense::{logical_indices, Addressing, DenseView};
pub use layout::{Layout, LayoutFields, TiledLevel};
#[cfg(feature = "mmap")]
pub use mmap::MappedFile;
pub use packed::{
    float4_e2m1_to_f32, float6_e2m3_to_f32, float6_e3m2_to_f32, float8_e4m3_to_f32, float8_e5m2_to_f32,
    float8_e8m0_to_f32, PackedView,
};
pub use shared::{SharedCsc, SharedCsr, SharedFile, SharedTensor};
pub use tensor::{Tensor, MAX_COMPOSITE_DEPTH};
pub use value::Value;

/// Frees the scratch memory that the sparse products keep between calls;
/// returns its size in bytes (0 if none was kept).
///
/// [`CscView::mul_vec`] and [`CscView::mul_vec_parallel`] with a `y` over
/// 16 MiB bin their contributions in scratch (*propagation blocking*: up to
/// 128 MiB a thread, `docs/design.md` § The sparse products). Rather than
/// return it to the OS after each call, and fault each page in again on
/// the next, they keep up to 256 MiB of it for each of `f32`, `f64` and the
/// AVX-512 scatter, as MKL keeps its buffers until `mkl_free_buffers`.
/// Call this after the last product to give that memory back; the next
/// product allocates again. A product still running on another thread
/// gives its scratch back when it finishes, to be kept again.
///
/// ```
/// assert_eq!(hurray_reader::release_scratch(), 0); // no product ran
/// ```
pub fn release_scratch() -> usize {
    kernels::scratch::release()
}
