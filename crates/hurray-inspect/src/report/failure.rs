//! Why a command could not print what was asked, and the failures the
//! data commands share.

use hurray_reader::{shown_name, Buffer, Error, HurrayFile, Layout, Tensor, Value};

/// Why a command could not print what was asked.
#[derive(Debug)]
pub enum Failure {
    /// The file breaks a rule (exit 1).
    File(Error),
    /// The request does not fit the file (exit 2): unknown tensor, wrong
    /// layout for the command, coordinates outside the shape.
    Usage(String),
    /// The library handed out less than its own checks promise (exit 1).
    Internal(String),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::File(e)
    }
}

/// What the report builders return.
pub type Result<T> = std::result::Result<T, Failure>;

/// A [`Failure::Internal`] about tensor `t`: `what` could not be read,
/// though the library's checks promised it.
pub fn internal(t: &Tensor<'_>, what: &str) -> Failure {
    Failure::Internal(format!(
        "tensor '{}': {what} (the library's checks promised it)",
        shown_name(t.name())
    ))
}

/// Element `p` of buffer 0, decoded.
pub fn value_at(t: &Tensor<'_>, values: &Buffer<'_>, p: u64) -> Result<Value> {
    values
        .value(p)
        .ok_or_else(|| internal(t, &format!("element {p} of buffer 0 cannot be read")))
}

/// A count or position as `u64` (saturating).
pub fn to_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// A request the layout cannot answer, or a composite head (which owns no data).
pub fn unsupported(t: &Tensor<'_>, file: &HurrayFile<'_>, flag: &str) -> Failure {
    let name = shown_name(t.name());
    if t.layout() == Layout::Composite {
        let members: Vec<String> = t
            .composite_members()
            .iter()
            .filter_map(|&p| file.entries().get(p))
            .map(|e| shown_name(e.name()))
            .collect();
        return Failure::Usage(format!(
            "{flag}: tensor '{name}' is a composite head and owns no data; read its members: {}",
            members.join(", ")
        ));
    }
    Failure::Usage(format!(
        "{flag} reads csc, csr, coo, csf and dense tensors; tensor '{name}' is {} (try --dump)",
        t.layout()
    ))
}
