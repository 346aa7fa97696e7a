//! For the rule tests on built files: where a descriptor field or a buffer
//! byte of tensor `A` lies, as the reader's own dump places it.
#![allow(dead_code)] // each test file uses its own subset

use hurray_reader::{HurrayFile, Options};

/// Absolute offset of the descriptor field `name` of tensor `A`
/// (`hurray-inspect --dump` shows the same).
pub fn field_offset(bytes: &[u8], name: &str) -> u64 {
    let file = HurrayFile::parse(bytes, Options::permissive()).unwrap();
    let dump = file.dump_descriptor("A").unwrap();
    let names: Vec<String> = dump.fields.iter().map(|f| f.field.to_string()).collect();
    dump.fields
        .iter()
        .find(|f| f.field.to_string() == name)
        .unwrap_or_else(|| panic!("no field {name} in {names:?}"))
        .offset
}

/// Absolute offset of buffer `i` of tensor `A`, as the (possibly broken)
/// file places it.
pub fn buffer_offset(bytes: &[u8], i: usize) -> u64 {
    let file = HurrayFile::parse(bytes, Options::permissive()).unwrap();
    file.tensor("A").unwrap().buffer(i).unwrap().file_offset()
}

/// Where an error should point in tensor `A`: a descriptor field, or a byte
/// of buffer `i`.
pub enum At {
    Field(&'static str),
    Buffer(usize, u64),
}

impl At {
    /// The absolute offset in `bytes`.
    pub fn offset(&self, bytes: &[u8]) -> u64 {
        match *self {
            At::Field(name) => field_offset(bytes, name),
            At::Buffer(i, byte) => buffer_offset(bytes, i) + byte,
        }
    }
}
