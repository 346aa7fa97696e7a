//! Tensor descriptors (`metadata.md`): the typed [`TensorDescriptor`] with its
//! validation, and the byte-level [`RawDescriptor`] used to encode it (or to
//! build deliberately broken descriptors).

mod checks;
mod dense;
mod layout_rules;
mod raw;
mod tensor;
#[cfg(test)]
mod tests;

pub(crate) use checks::check_permutation;
pub use raw::RawDescriptor;
pub use tensor::{
    TensorDescriptor, HAS_COMPOSITE_MEMBER, HAS_EXTENSION_TYPE, HAS_QUANTIZATION, HAS_SHARD, HAS_STATISTICS, MAX_RANK,
    MAX_TILING_DEPTH,
};
