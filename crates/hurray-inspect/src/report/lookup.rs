//! `--get I,J,...`: one element, stored or an implicit zero, and for a
//! quantized tensor its real value.

use hurray_reader::{shown_name, HurrayFile, Layout, Tensor, Value};

use crate::report::failure::{to_u64, unsupported, value_at, Failure, Result};
use crate::report::header::Header;
use crate::shown::shape_text;

/// `--get`: one element.
#[derive(Debug, Clone)]
pub struct Lookup<'data> {
    pub header: Header<'data>,
    pub index: Vec<u64>,
    /// Position in buffer 0; `None` for a sparse tensor's implicit zero.
    pub position: Option<u64>,
    /// `None` for an implicit zero.
    pub value: Option<Value>,
    /// For a quantized tensor, the real value (`Tensor::dequantize`).
    pub dequantized: Option<f64>,
}

/// `--get`: the element at `index`.
///
/// # Errors
/// [`Failure::Usage`] for coordinates that do not fit the shape or a layout
/// without elements; the library's error for damaged data on the way.
pub fn get<'data>(file: &HurrayFile<'data>, t: &Tensor<'data>, index: &[u64]) -> Result<Lookup<'data>> {
    let header = Header::of(t);
    let name = shown_name(t.name());
    let shape = shape_text(&header.shape);
    if index.len() != header.shape.len() {
        let given = index.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
        return Err(Failure::Usage(format!(
            "--get '{}': tensor '{name}' of shape {shape} needs {} comma-separated coordinates, got {}",
            shown_name(&given),
            header.shape.len(),
            index.len()
        )));
    }
    if let Some((k, (&i, &n))) = index.iter().zip(&header.shape).enumerate().find(|(_, (&i, &n))| i >= n) {
        let allowed = if n == 0 {
            format!("dimension {k} is 0: the tensor has no elements")
        } else {
            format!("must be < {n}")
        };
        return Err(Failure::Usage(format!(
            "--get: coordinate {k} is {i}, outside tensor '{name}' of shape {shape} ({allowed})"
        )));
    }
    let stored = |position: Option<u64>| -> Result<(Option<u64>, Option<Value>)> {
        match position {
            Some(p) => Ok((Some(p), Some(value_at(t, t.buffer(0)?, p)?))),
            None => Ok((None, None)),
        }
    };
    let (position, value) = match (t.layout(), index) {
        (Layout::Csc, &[r, c]) => stored(t.csc_structure()?.position(r, c)?.map(to_u64))?,
        (Layout::Csr, &[r, c]) => stored(t.csr_structure()?.position(r, c)?.map(to_u64))?,
        (Layout::Coo, _) => stored(t.coo_structure()?.position(index)?)?,
        (Layout::Csf, _) => stored(t.csf_structure()?.position(index)?)?,
        (l, _) if l.is_dense() => {
            let p = t.addressing()?.position(index)?;
            stored(Some(p))?
        }
        _ => return Err(unsupported(t, file, "--get")),
    };
    // A quantized tensor's real value; an implicit zero's is 0.0
    // (docs/design.md, "Decisions where the spec leaves room").
    let dequantized = match (t.descriptor().quantization(), value) {
        (None, _) => None,
        (Some(_), Some(q)) => Some(t.dequantize(index, q)?),
        (Some(_), None) => Some(0.0),
    };
    Ok(Lookup {
        header,
        index: index.to_vec(),
        position,
        value,
        dequantized,
    })
}
