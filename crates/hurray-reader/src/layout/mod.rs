//! The layouts (`memory-layout.md` and `layouts/*.md`), one module per
//! spec file: each holds what its section defines — the layout's rules
//! (rank, `byte_offset`, buffer table and sizes), its data checks and its
//! view. [`table`] maps a layout tag to its rules; what is shared lives in
//! [`fields`] (the tags and layout-specific fields), [`plan`] (what a
//! buffer must hold), [`compressed`] (CSC and CSR's structure), [`dense`]
//! (the dense layouts' addressing and view) and [`view`].

pub(crate) mod block_paged;
pub(crate) mod composite;
pub mod compressed;
pub mod coo;
pub mod csc;
pub mod csf;
pub mod csr;
pub mod dense;
pub(crate) mod fields;
pub(crate) mod hilbert;
pub(crate) mod morton;
pub(crate) mod plan;
pub(crate) mod strided;
pub(crate) mod tiled;
pub(crate) mod view;

pub use fields::{Layout, LayoutFields, TiledLevel};
