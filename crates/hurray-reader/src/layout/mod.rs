//! The layouts (`memory-layout.md` and `layouts/*.md`), one module per
//! spec file (`layouts/csc.md` is [`csc`], `layouts/row-major.md` is
//! [`row_major`], ...): each holds what its section defines — its
//! descriptor rules as a [`spec::LayoutSpec`] (rank, buffer count, the
//! buffer plans and sizes), its data checks, its addressing and its view.
//! [`table`] maps a layout tag to its spec: adding a layout is a module
//! here and a line there. What is shared lives in [`fields`] (the tags
//! and layout-specific fields), [`plan`] (what a buffer must hold),
//! [`storage`] (the dense layouts' data buffer), [`compressed`] (CSC and
//! CSR's common structure), [`dense`] (the dense layouts' view) and
//! [`view`] (what every view checks first).

pub(crate) mod block_paged;
pub(crate) mod column_major;
pub(crate) mod composite;
pub mod compressed;
pub mod coo;
pub mod csc;
mod csc_csr;
pub mod csf;
pub mod csr;
pub mod dense;
pub(crate) mod fields;
pub(crate) mod hilbert;
pub(crate) mod morton;
pub(crate) mod plan;
pub(crate) mod row_major;
pub(crate) mod spec;
pub(crate) mod storage;
pub(crate) mod strided;
pub(crate) mod table;
pub(crate) mod tiled;
pub(crate) mod view;

pub use fields::{Layout, LayoutFields, TiledLevel};
