//! The text rendering of each command's report (`crate::report`), one file
//! per command: aligned tables, sizes like `1.2 KiB`, long values cut,
//! names and strings escaped so control bytes in a file cannot reach the
//! terminal. The text forms are for people and may change; scripts use
//! `--json`.

pub mod dump;
pub mod entries;
pub mod lookup;
pub mod parts;
pub mod summary;
pub mod table;
pub mod tensor;
