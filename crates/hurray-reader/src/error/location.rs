//! Where an error about the file's bytes points: [`Location`] (scope,
//! field, offset, rule) and its parts, [`Scope`] and [`Field`]; and
//! [`Number`], a value read from the file as an error shows it.

use std::fmt;

use super::shown::shown_name;

/// Where an error about the file's bytes points, and which rule it breaks:
/// every such [`Error`](super::Error) variant carries one, as its `at`
/// field, and [`Error::location`](super::Error::location) gives it.
///
/// Displays as the message's prefix, `{scope}{field} at offset {offset}`:
/// `tensor 'A': col_ptr[3] at offset 12312`. The rule ends the message, in
/// parentheses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The tensor or KV key concerned, or the file as a whole.
    pub scope: Scope,
    /// The field, as the spec spells it (`col_ptr[3]`, `buffer[1].byte_size`).
    pub field: Field,
    /// The absolute byte offset of the field in the file (for
    /// [`HurrayFile::parse`](crate::HurrayFile::parse) over a slice: in that
    /// slice).
    pub offset: u64,
    /// The spec rule broken: the spec file and section
    /// (`layouts/csc.md § Storage Invariants (2)`); its form is described at
    /// [`Error::rule`](super::Error::rule).
    pub rule: &'static str,
}

impl Location {
    /// The tensor's name, when the scope is a tensor.
    pub fn tensor(&self) -> Option<&str> {
        match &self.scope {
            Scope::Tensor(name) => Some(name),
            Scope::File | Scope::Key(_) => None,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{} at offset {}", self.scope, self.field, self.offset)
    }
}

/// Names a field of the format, as the spec spells it: `shape[1]`,
/// `buffer[0].alignment`, `index_entry[2].name`, `col_ptr[3]`.
///
/// `name` is the spec's field name, `index` the element of an array field and
/// `member` a sub-field of that element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Field {
    /// The spec's field name, e.g. `"shape"` or `"buffer"`.
    pub name: &'static str,
    /// Which element of an array field, e.g. the `1` of `shape[1]`.
    pub index: Option<u64>,
    /// A sub-field of that element, e.g. the `alignment` of `buffer[0].alignment`.
    pub member: Option<&'static str>,
}

impl Field {
    /// A scalar field such as `descriptor_length`.
    pub const fn new(name: &'static str) -> Self {
        Field {
            name,
            index: None,
            member: None,
        }
    }

    /// One element of an array field, such as `shape[1]`.
    pub const fn at(name: &'static str, index: u64) -> Self {
        Field {
            name,
            index: Some(index),
            member: None,
        }
    }

    /// A sub-field of a section, such as `statistics.nnz`.
    pub const fn sub(name: &'static str, member: &'static str) -> Self {
        Field {
            name,
            index: None,
            member: Some(member),
        }
    }

    /// A sub-field of one element, such as `buffer[0].alignment`.
    pub const fn member(name: &'static str, index: u64, member: &'static str) -> Self {
        Field {
            name,
            index: Some(index),
            member: Some(member),
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)?;
        if let Some(i) = self.index {
            write!(f, "[{i}]")?;
        }
        if let Some(m) = self.member {
            write!(f, ".{m}")?;
        }
        Ok(())
    }
}

/// What an error is about, beyond the field: the whole file, one tensor, or
/// one KV entry. Displays as the message prefix (`tensor 'A': `).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Scope {
    /// A container-level field (header, trailer, index framing).
    #[default]
    File,
    /// A tensor, by its name in the footer index.
    Tensor(Box<str>),
    /// A KV metadata entry, by its key.
    Key(Box<str>),
}

impl Scope {
    pub(crate) fn tensor(name: &str) -> Self {
        Scope::Tensor(name.into())
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::File => Ok(()),
            Scope::Tensor(name) => write!(f, "tensor '{}': ", shown_name(name)),
            Scope::Key(key) => write!(f, "KV key '{}': ", shown_name(key)),
        }
    }
}

/// A number read from the file, as an error shows it: integers exactly,
/// floats as `f64` (`NaN`, `inf`, `-0.0`, `1e-45`). A float is kept as its
/// bits so that errors compare equal exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Number {
    /// A signed integer.
    Int(i64),
    /// A float, by the bits of its `f64` widening ([`Number::float`]).
    Float(u64),
}

impl Number {
    /// `v` as a [`Number::Float`].
    pub fn float(v: f64) -> Self {
        Number::Float(v.to_bits())
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Number::Int(v) => write!(f, "{v}"),
            // Debug: shortest round-trip text, `NaN` and `inf` by name.
            Number::Float(bits) => write!(f, "{:?}", f64::from_bits(bits)),
        }
    }
}
