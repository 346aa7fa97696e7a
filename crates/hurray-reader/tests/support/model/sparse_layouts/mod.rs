//! CSF and block-paged storage as `sparse_layouts.rs` models them, from the
//! spec text alone (nothing of the reader or the writer computes the
//! model; the writer only writes the bytes the model gives it).
//!
//! - `types`: the element types drawn, their packing; writing files;
//! - `csf` and `block_paged`: a case, its model, the file written from it,
//!   what the reader must expose, and the strategies that draw cases;
//! - `damage`: what the strict reader must answer for a damaged file;
//! - `csf_damage` and `block_paged_damage`: one rule broken at a time.

pub(crate) mod block_paged;
pub(crate) mod block_paged_damage;
pub(crate) mod csf;
pub(crate) mod csf_damage;
pub(crate) mod damage;
pub(crate) mod types;

pub(crate) use block_paged::{bp_case, bp_model, check_bp, BpCase};
pub(crate) use block_paged_damage::{bp_break, break_bp, damaged_bp_reads};
pub(crate) use csf::{check_csf, csf_case, csf_descriptor, csf_model, CsfCase, Stats};
pub(crate) use csf_damage::{break_csf, csf_break, damaged_csf_lookups};
pub(crate) use damage::{check_rejected, CSF_INV};
pub(crate) use types::{le_index, le_u64s, write_raw, Ty};
