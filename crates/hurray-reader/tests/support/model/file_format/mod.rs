//! The container format as `file_format.rs` models it, byte by byte, from
//! the spec text alone: nothing here calls `hurray-writer` or the reader's
//! internals, so a mistake the reader and the writer share is still caught.
//!
//! - `rng`: the seeded generator every choice is drawn from;
//! - `element`: element types (`element-types.md`, extension types);
//! - `tensor` and `file`: the model of a tensor and of a file;
//! - `generate`: random valid models;
//! - `encode`: a model laid out byte by byte, with where every field lies;
//! - `expose`: what the reader must expose for a model file;
//! - `mutator`: a mutation (one broken rule) and the outcome it must have;
//! - `mutations` and `descriptor_mutations`: every mutation of a model
//!   file, the container's and one tensor's.

pub(crate) mod descriptor_mutations;
pub(crate) mod element;
pub(crate) mod encode;
pub(crate) mod expose;
pub(crate) mod file;
pub(crate) mod generate;
pub(crate) mod mutations;
pub(crate) mod mutator;
pub(crate) mod rng;
pub(crate) mod tensor;

pub(crate) use element::Dt;
pub(crate) use encode::{descriptor, encode, Enc};
pub(crate) use expose::{check, check_file};
pub(crate) use file::{MFile, HAS_INDEX_CRC32C};
pub(crate) use generate::file_model;
pub(crate) use mutations::mutations;
pub(crate) use mutator::{Mutation, Outcome, Perm};
pub(crate) use rng::Rng;
pub(crate) use tensor::{Body, MTensor};
