//! The mutation framework: a [`Mutation`] is a model file with one rule
//! broken and the [`Outcome`] the reader must give; a [`Mutator`] makes
//! them, by patching the encoded bytes or by changing the model and
//! encoding it again.

use super::encode::{encode, Enc};
use super::file::{MFile, HAS_INDEX_CRC32C};

/// What permissive mode does with a mutation strict mode rejects.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Perm {
    Rejects,
    Accepts,
}

#[derive(Debug)]
pub(crate) enum Outcome {
    /// Strict mode fails with this variant (by name) naming this field, in
    /// this tensor's scope when given.
    Rejects {
        variant: &'static str,
        field: String,
        tensor: Option<String>,
        permissive: Perm,
    },
    /// Both modes read the file.
    Accepts,
}

pub(crate) struct Mutation {
    pub(crate) rule: &'static str,
    pub(crate) bytes: Vec<u8>,
    pub(crate) outcome: Outcome,
}

pub(crate) fn set<const N: usize>(b: &mut [u8], at: u64, v: [u8; N]) {
    b[at as usize..at as usize + N].copy_from_slice(&v);
}

pub(crate) fn get_u32(b: &[u8], at: u64) -> u32 {
    u32::from_le_bytes(b[at as usize..at as usize + 4].try_into().unwrap())
}

pub(crate) struct Mutator<'a> {
    pub(crate) f: &'a MFile,
    pub(crate) enc: &'a Enc,
    pub(crate) out: Vec<Mutation>,
}

impl Mutator<'_> {
    /// The model file with `edit` applied to its bytes; the index CRC is
    /// recomputed (when the flag is set) so that only the intended rule
    /// breaks.
    pub(crate) fn patch(&self, edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut b = self.enc.bytes.clone();
        edit(&mut b);
        if get_u32(&b, 12) & HAS_INDEX_CRC32C != 0 {
            let crc = crc32c::crc32c(&b[self.enc.index_offset as usize..self.enc.trailer as usize]);
            set(&mut b, self.enc.trailer + 28, crc.to_le_bytes());
        }
        b
    }

    /// The model changed by `edit`, encoded again.
    pub(crate) fn model(&self, edit: impl FnOnce(&mut MFile)) -> Vec<u8> {
        let mut f = self.f.clone();
        edit(&mut f);
        encode(&f).bytes
    }

    pub(crate) fn rejects(
        &mut self,
        rule: &'static str,
        bytes: Vec<u8>,
        variant: &'static str,
        field: impl Into<String>,
        perm: Perm,
    ) {
        self.out.push(Mutation {
            rule,
            bytes,
            outcome: Outcome::Rejects {
                variant,
                field: field.into(),
                tensor: None,
                permissive: perm,
            },
        });
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn rejects_in(
        &mut self,
        rule: &'static str,
        bytes: Vec<u8>,
        variant: &'static str,
        field: impl Into<String>,
        tensor: &str,
        perm: Perm,
    ) {
        self.out.push(Mutation {
            rule,
            bytes,
            outcome: Outcome::Rejects {
                variant,
                field: field.into(),
                tensor: Some(tensor.to_string()),
                permissive: perm,
            },
        });
    }

    pub(crate) fn accepts(&mut self, rule: &'static str, bytes: Vec<u8>) {
        self.out.push(Mutation {
            rule,
            bytes,
            outcome: Outcome::Accepts,
        });
    }
}
