//! Which tensor a per-tensor command reads: the one `--tensor` names
//! (exactly, as the tool prints it, or cut as a table cuts it), or the
//! file's only tensor.

use hurray_reader::{shown_name, HurrayFile, IndexEntry, Layout, Tensor};

use crate::report::dump::not_decoded;
use crate::report::failure::{Failure, Result};
use crate::report::header::located_buffers;
use crate::shown::display_name;

/// The tensor the per-tensor commands act on: the one named by `--tensor`,
/// or the file's only tensor.
///
/// # Errors
/// [`Failure::Usage`] when the name is unknown (or a cut name matches
/// several tensors), or when none is given and the file does not hold
/// exactly one tensor.
pub fn pick_tensor<'data>(file: &HurrayFile<'data>, name: Option<&str>, flag: &str) -> Result<&'data str> {
    let names = || {
        const SHOWN: usize = 8;
        let mut shown: Vec<String> = file
            .entries()
            .iter()
            .take(SHOWN)
            .map(|e| shown_name(e.name()))
            .collect();
        if file.len() > SHOWN {
            shown.push(format!("... ({} in all)", file.len()));
        }
        shown.join(", ")
    };
    // A name as the tool prints it (escaped: `a\0b`) finds the tensor too,
    // since a command line cannot carry a NUL or other control bytes.
    let printed = |name: &str| {
        file.entries()
            .iter()
            .find(|e| e.name().escape_debug().eq(name.chars()))
            .map(IndexEntry::name)
    };
    // A long name as the summary table or an error line cuts it
    // (`abc...`, `abc... (200 bytes)`) finds its tensor when no other is
    // cut the same way.
    let cut = |name: &str| -> Vec<&'data str> {
        if !name.contains("...") {
            return Vec::new();
        }
        file.entries()
            .iter()
            .filter(|e| display_name(e.name()) == name || shown_name(e.name()) == name)
            .map(IndexEntry::name)
            .take(2)
            .collect()
    };
    match name {
        Some(name) => {
            if let Some(found) = file.entry(name).map(IndexEntry::name).or_else(|| printed(name)) {
                return Ok(found);
            }
            let cut = cut(name);
            let message = match cut[..] {
                [only] => return Ok(only),
                [] if file.is_empty() => format!("no tensor named '{}': the file holds no tensors", shown_name(name)),
                [] => format!(
                    "no tensor named '{}' in the index; it holds: {}",
                    shown_name(name),
                    names()
                ),
                _ => format!(
                    "--tensor '{}' is how several tensor names print cut; give the whole name, \
                     or the longer cut of an error line (64 characters and the name's size): {}",
                    shown_name(name),
                    names()
                ),
            };
            Err(Failure::Usage(message))
        }
        None => match file.entries() {
            [only] => Ok(only.name()),
            [] => Err(Failure::Usage(format!(
                "{flag} needs a tensor, and the file holds none"
            ))),
            _ => Err(Failure::Usage(format!(
                "{flag} needs --tensor NAME: the file holds {} tensors ({})",
                file.len(),
                names()
            ))),
        },
    }
}

/// The tensor a data command reads, resolved (descriptor and buffers checked).
/// Data the library says must not be interpreted (an unknown type tag or
/// quantization scheme kept in permissive mode) is a request that does not
/// fit, like an unknown layout: only `--dump` shows its bytes. (Composite
/// heads get their own message, naming their members.)
pub fn chosen<'data>(file: &HurrayFile<'data>, name: Option<&str>, flag: &str) -> Result<Tensor<'data>> {
    let name = pick_tensor(file, name, flag)?;
    let t = file.tensor(name)?;
    // A known type too wide to decode (an unknown one is `not_viewable`).
    let too_wide = t.element_type().and_then(|e| not_decoded(Some(e)));
    if let (Some(why), false) = (too_wide, flag == "--dump") {
        return Err(Failure::Usage(format!(
            "{flag}: tensor '{}' is not read: {why} (--dump shows its bytes)",
            shown_name(t.name())
        )));
    }
    if let Some(why) = t.not_viewable() {
        if flag != "--dump" && t.layout() != Layout::Composite {
            // An unknown layout's buffers are not located: only its descriptor can be shown.
            let hint = if located_buffers(&t).is_some() {
                "--dump shows its bytes"
            } else {
                "--tensor shows its descriptor"
            };
            return Err(Failure::Usage(format!(
                "{flag}: tensor '{}' is not read: {why} ({hint})",
                shown_name(t.name())
            )));
        }
    }
    Ok(t)
}
