//! Mutations: what the strict reader must answer for a damaged file (the
//! rule it cites, the field it names), the sections cited, and the helpers
//! both layouts' mutations use.

use hurray_reader::{AlignedBytes, HurrayFile, Options};
use hurray_writer::RawDescriptor;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use super::super::basics::fail;
use super::types::{Packing, Ty};

/// What the strict reader must answer for a damaged file.
#[derive(Debug, Clone)]
pub(crate) struct Expect {
    /// The error's `rule()` starts with one of these.
    pub(crate) rules: Vec<&'static str>,
    /// The error's `field()`: its name, and for `buffer[i].byte_size` one
    /// of the indices allowed.
    pub(crate) field: Option<FieldIs>,
}

#[derive(Debug, Clone)]
pub(crate) enum FieldIs {
    Named(String),
    Buffer(Vec<u64>),
}

pub(crate) fn expect(rules: &[&'static str], field: Option<FieldIs>) -> Expect {
    Expect {
        rules: rules.to_vec(),
        field,
    }
}

pub(crate) fn named(name: impl Into<String>) -> Option<FieldIs> {
    Some(FieldIs::Named(name.into()))
}

pub(crate) fn buffer(indices: &[u64]) -> Option<FieldIs> {
    Some(FieldIs::Buffer(indices.to_vec()))
}

/// The strict verdict: `parse`, then `validate`; the error must match.
pub(crate) fn check_rejected(bytes: &AlignedBytes, e: &Expect, what: &str) -> Result<(), TestCaseError> {
    let err = match HurrayFile::parse(bytes, Options::strict()) {
        Err(err) => err,
        Ok(file) => match file.validate() {
            Ok(()) => return Err(fail(format!("{what}: the strict reader accepts the file"))),
            Err(err) => err,
        },
    };
    let rule = err.rule().unwrap_or("");
    prop_assert!(
        e.rules.iter().any(|r| rule.starts_with(r)),
        "{}: rule {:?} is none of {:?} (error: {})",
        what,
        rule,
        e.rules,
        err
    );
    let field = err.field();
    match &e.field {
        None => {}
        Some(FieldIs::Named(name)) => prop_assert!(
            field.is_some_and(|f| f.name == name),
            "{}: field {:?}, expected {} (error: {})",
            what,
            field,
            name,
            err
        ),
        Some(FieldIs::Buffer(indices)) => prop_assert!(
            field.is_some_and(|f| f.name == "buffer"
                && f.member == Some("byte_size")
                && f.index.is_some_and(|i| indices.contains(&i))),
            "{}: field {:?}, expected buffer{:?}.byte_size (error: {})",
            what,
            field,
            indices,
            err
        ),
    }
    Ok(())
}

pub(crate) const CSF_INV: &str = "layouts/csf.md § Storage Invariants";
pub(crate) const CSF_SIZE: &str = "layouts/csf.md § Buffer Size";
pub(crate) const CSF_TABLE: &str = "layouts/csf.md § Buffer Table";
pub(crate) const BP_INV: &str = "layouts/block-paged.md § Storage Invariants";
pub(crate) const BP_TABLE: &str = "layouts/block-paged.md § Buffer Table";
pub(crate) const BP_FIELDS: &str = "layouts/block-paged.md § Additional Descriptor Fields";
pub(crate) const BYTE_OFFSET: &str = "memory-layout.md § Common Fields › byte_offset";

/// An edit of the encoded descriptor that the typed one cannot express.
pub(crate) type RawEdit = Box<dyn Fn(&mut RawDescriptor)>;

/// Does the last byte of `count` packed elements have padding bits?
pub(crate) fn padding_bits(ty: Ty, count: u64) -> bool {
    match ty.packing() {
        Packing::Whole(_) => false,
        _ => count * u64::from(ty.bits()) < ty.bytes_for(count) * 8,
    }
}
