//! The `--json` rendering: for each command's report (`crate::report`), a
//! `Serialize` struct owned by this crate, one file per command, all
//! written by the one writer of [`format`](mod@format) (docs/cli.md, "JSON
//! conventions").

pub mod dump;
pub mod entries;
pub mod error;
pub mod format;
pub mod header;
pub mod lookup;
pub mod summary;
pub mod tensor;
