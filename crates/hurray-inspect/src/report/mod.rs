//! What each command reports about a file, gathered from the library once,
//! then rendered twice: as text (`crate::text`) and as JSON
//! (`crate::json`). One file per command; every value, index and offset
//! comes from a `hurray_reader` accessor, and a report reads no more than
//! its command shows (the data of `--dump` and of `--column` / `--row` is
//! read as it is written).

pub mod dump;
pub mod entries;
pub mod failure;
pub mod header;
pub mod lookup;
pub mod pick;
pub mod summary;
pub mod tensor;
