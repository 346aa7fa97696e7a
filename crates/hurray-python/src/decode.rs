//! Copies for what numpy cannot view in place: element types numpy lacks
//! (packed `bool`, sub-byte integers, float8/6/4, bfloat16), dense layouts
//! that are not strided (tiled, Morton, Hilbert) and quantized tensors'
//! real values. Every element is read through the reader's decoders
//! (`Buffer::value`, `Addressing::positions`, `Tensor::dequantize`).

use hurray_reader::{logical_indices, Buffer, BufferRole, ElementType, Error, Layout, QuantScheme, Tensor, Value};
use pyo3::exceptions::{PyMemoryError, PyTypeError, PyValueError};
use pyo3::PyErr;

use crate::storage::Decoded;

/// The numpy type an element type decodes to: itself where numpy has it,
/// `int8`/`uint8` for 2- and 4-bit integers, `float32` for the small float
/// types (exact); `None` for `float128` and extension types.
fn decoded_type(t: ElementType) -> Option<&'static str> {
    use ElementType::*;
    Some(match t {
        Bool => "bool",
        Int8 | Int4 | Int2 => "int8",
        Uint8 | Uint4 | Uint2 => "uint8",
        Int16 => "int16",
        Uint16 => "uint16",
        Int32 => "int32",
        Uint32 => "uint32",
        Int64 => "int64",
        Uint64 => "uint64",
        Float16 => "float16",
        Float32 | Bfloat16 | Float8E4m3 | Float8E5m2 | Float8E8m0 | Float4E2m1 | Float6E2m3 | Float6E3m2 => "float32",
        Float64 => "float64",
        Complex64 => "complex64",
        Complex128 => "complex128",
        _ => return None,
    })
}

/// Collects `count` values (at most; the reader's checks make it exact)
/// into a vector of `T`, reserving the whole length first so that a
/// length the machine cannot hold is a `MemoryError`, not an abort.
fn collect<T>(
    values: impl Iterator<Item = Result<Value, PyErr>>,
    count: u64,
    convert: impl Fn(Value) -> Option<T>,
) -> Result<Vec<T>, PyErr> {
    let mut out = Vec::new();
    let count = usize::try_from(count).map_err(|_| PyMemoryError::new_err("too many elements to decode"))?;
    out.try_reserve_exact(count)
        .map_err(|_| PyMemoryError::new_err(format!("cannot allocate {count} decoded elements")))?;
    for v in values {
        let v = v?;
        out.push(convert(v).ok_or_else(|| PyValueError::new_err(format!("cannot decode {v:?}")))?);
    }
    if out.len() != count {
        return Err(PyValueError::new_err(format!(
            "decoded {} elements, expected {count}",
            out.len()
        )));
    }
    Ok(out)
}

/// Decodes `values` (elements of `element_type`) into numpy's type for it.
fn decode_as(
    element_type: ElementType,
    values: impl Iterator<Item = Result<Value, PyErr>>,
    count: u64,
) -> Result<Decoded, PyErr> {
    let target = decoded_type(element_type)
        .ok_or_else(|| PyTypeError::new_err(format!("{element_type} has no numpy type: read its raw bytes")))?;
    let int = |v| match v {
        Value::Int(i) => Some(i),
        _ => None,
    };
    let uint = |v| match v {
        Value::UInt(u) => Some(u),
        _ => None,
    };
    let float = |v| match v {
        Value::Float(f) => Some(f),
        _ => None,
    };
    let complex = |v| match v {
        Value::Complex { re, im } => Some((re, im)),
        _ => None,
    };
    // Every conversion below is exact: the element type's values are
    // values of the target type.
    #[allow(clippy::cast_possible_truncation)]
    Ok(match target {
        "bool" => Decoded::Bool(collect(values, count, |v| match v {
            Value::Bool(b) => Some(b),
            _ => None,
        })?),
        "int8" => Decoded::I8(collect(values, count, |v| int(v).and_then(|i| i8::try_from(i).ok()))?),
        "uint8" => Decoded::U8(collect(values, count, |v| uint(v).and_then(|u| u8::try_from(u).ok()))?),
        "int16" => Decoded::I16(collect(values, count, |v| int(v).and_then(|i| i16::try_from(i).ok()))?),
        "uint16" => Decoded::U16(collect(values, count, |v| uint(v).and_then(|u| u16::try_from(u).ok()))?),
        "int32" => Decoded::I32(collect(values, count, |v| int(v).and_then(|i| i32::try_from(i).ok()))?),
        "uint32" => Decoded::U32(collect(values, count, |v| uint(v).and_then(|u| u32::try_from(u).ok()))?),
        "int64" => Decoded::I64(collect(values, count, int)?),
        "uint64" => Decoded::U64(collect(values, count, uint)?),
        "float16" => Decoded::F16(collect(values, count, |v| float(v).map(half::f16::from_f64))?),
        "float32" => Decoded::F32(collect(values, count, |v| float(v).map(|f| f as f32))?),
        "float64" => Decoded::F64(collect(values, count, float)?),
        "complex64" => Decoded::C64(collect(values, count, |v| {
            complex(v).map(|(re, im)| [re as f32, im as f32])
        })?),
        _ => Decoded::C128(collect(values, count, |v| complex(v).map(|(re, im)| [re, im]))?),
    })
}

/// Real values (`Tensor::dequantize`) as `float32`, or `float64` for MXFP,
/// whose scales reach 2^127 (`quantization/mxfp.md`).
fn dequantized(
    tensor: &Tensor<'_>,
    reals: impl Iterator<Item = Result<f64, PyErr>>,
    count: u64,
) -> Result<Decoded, PyErr> {
    let mxfp = matches!(
        tensor.descriptor().quantization().map(|q| q.scheme),
        Some(QuantScheme::Mxfp(_))
    );
    let values = reals.map(|r| r.map(Value::Float));
    #[allow(clippy::cast_possible_truncation)]
    Ok(if mxfp {
        Decoded::F64(collect(values, count, |v| match v {
            Value::Float(f) => Some(f),
            _ => None,
        })?)
    } else {
        Decoded::F32(collect(values, count, |v| match v {
            Value::Float(f) => Some(f as f32),
            _ => None,
        })?)
    })
}

fn to_u64(k: usize) -> u64 {
    u64::try_from(k).unwrap_or(u64::MAX)
}

fn read_error(e: Error) -> PyErr {
    crate::error::ReadError(e).into()
}

fn element_type(tensor: &Tensor<'_>) -> Result<ElementType, PyErr> {
    tensor
        .element_type()
        .ok_or_else(|| PyTypeError::new_err(format!("tensor '{}': unknown element type", tensor.name())))
}

/// The elements of a dense tensor in logical row-major order, decoded (or
/// dequantized).
pub fn dense(tensor: &Tensor<'_>, dequantize: bool) -> Result<Decoded, PyErr> {
    let addressing = tensor.addressing().map_err(read_error)?;
    let count = tensor.element_count().map_err(read_error)?;
    if dequantize && tensor.descriptor().quantization().is_some() {
        let shape = addressing.shape();
        let reals = logical_indices(shape).map(|index| tensor.dense_dequantized(&index).map_err(read_error));
        return dequantized(tensor, reals, count);
    }
    let buffer = tensor.buffer(0).map_err(read_error)?;
    let values = addressing.positions().map(|p| element(tensor, buffer, p));
    decode_as(element_type(tensor)?, values, count)
}

fn element(tensor: &Tensor<'_>, buffer: &Buffer<'_>, p: u64) -> Result<Value, PyErr> {
    buffer.value(p).ok_or_else(|| {
        read_error(Error::IndexArgument {
            tensor: tensor.name().into(),
            what: "element position",
            index: p,
            bound: buffer.len(),
        })
    })
}

/// The stored values of a sparse tensor (CSC, CSR, COO, CSF) in storage
/// order, decoded (or dequantized: CSC, CSR and COO). With `block`
/// (`start..stop`: columns of a CSC tensor, rows of a CSR one), only the
/// values of those slices, `col_ptr[start]..col_ptr[stop]`: nothing
/// outside them is read.
pub fn values(tensor: &Tensor<'_>, dequantize: bool, block: Option<std::ops::Range<u64>>) -> Result<Decoded, PyErr> {
    let buffer = tensor
        .buffers()
        .iter()
        .find(|b| b.role() == BufferRole::Values)
        .ok_or_else(|| PyTypeError::new_err(format!("tensor '{}' has no values buffer", tensor.name())))?;
    let layout = tensor.layout();
    // The outer slices to decode and the positions their values hold.
    let (slices, positions) = match (&block, layout) {
        (None, _) => (None, 0..tensor.nnz().unwrap_or(0)),
        (Some(b), Layout::Csc) => {
            let s = tensor
                .csc_structure()
                .map_err(read_error)?
                .column_block(b.clone())
                .map_err(read_error)?;
            (Some(b.clone()), pointer_span(s.col_ptr()))
        }
        (Some(b), Layout::Csr) => {
            let s = tensor
                .csr_structure()
                .map_err(read_error)?
                .row_block(b.clone())
                .map_err(read_error)?;
            (Some(b.clone()), pointer_span(s.row_ptr()))
        }
        (Some(_), _) => {
            return Err(PyTypeError::new_err(format!(
                "tensor '{}' ({layout}): blocks are for CSC and CSR tensors",
                tensor.name()
            )))
        }
    };
    let count = positions.end - positions.start;
    if !(dequantize && tensor.descriptor().quantization().is_some()) {
        return decode_as(
            element_type(tensor)?,
            positions.map(|k| element(tensor, buffer, k)),
            count,
        );
    }
    let real = |index: &[u64], k: u64| {
        element(tensor, buffer, k).and_then(|q| tensor.dequantize(index, q).map_err(read_error))
    };
    match layout {
        Layout::Csc => {
            let s = tensor.csc_structure().map_err(read_error)?;
            let rows = s.row_indices();
            let reals = slices
                .unwrap_or(0..s.ncols())
                .flat_map(|j| s.column_range(j).unwrap_or(0..0).map(move |k| (j, k)))
                .map(|(j, k)| real(&[rows.get(k).copied().unwrap_or(u64::MAX), j], to_u64(k)));
            dequantized(tensor, reals, count)
        }
        Layout::Csr => {
            let s = tensor.csr_structure().map_err(read_error)?;
            let cols = s.col_indices();
            let reals = slices
                .unwrap_or(0..s.nrows())
                .flat_map(|i| s.row_range(i).unwrap_or(0..0).map(move |k| (i, k)))
                .map(|(i, k)| real(&[i, cols.get(k).copied().unwrap_or(u64::MAX)], to_u64(k)));
            dequantized(tensor, reals, count)
        }
        Layout::Coo => {
            let s = tensor.coo_structure().map_err(read_error)?;
            let reals = positions.map(|k| match s.coordinates(k) {
                Some(index) => real(index, k),
                None => Err(PyValueError::new_err(format!("no coordinates for stored value {k}"))),
            });
            dequantized(tensor, reals, count)
        }
        _ => Err(PyTypeError::new_err(format!(
            "tensor '{}': dequantizing a {} tensor is not supported: read its codes with dequantize=False",
            tensor.name(),
            tensor.layout()
        ))),
    }
}

/// Positions `ptr[0]..ptr[last]` of a block's values (its pointers are the
/// file's: `column_block` / `row_block` checked `ptr[0] <= ptr[last]`).
fn pointer_span(ptr: &[u64]) -> std::ops::Range<u64> {
    let first = ptr.first().copied().unwrap_or(0);
    first..ptr.last().copied().unwrap_or(first).max(first)
}

/// The logical coordinates of a CSF tensor's stored elements, leaf order
/// (the order of its `values`), as `nnz × rank` `int64` (every coordinate
/// is below its dimension, so below 2^63 once the scan has passed): the
/// COO form of the tree. Scans the tree first (`CsfStructure::entries`).
pub fn csf_coordinates(tensor: &Tensor<'_>) -> Result<Decoded, PyErr> {
    let structure = tensor.csf_structure().map_err(read_error)?;
    let entries = structure.entries().map_err(read_error)?;
    let count = u64::from(tensor.rank())
        .checked_mul(tensor.nnz().unwrap_or(0))
        .ok_or_else(|| PyMemoryError::new_err("too many coordinates"))?;
    let coordinates = entries
        .flat_map(|(coords, _)| coords)
        .map(|c| Ok(Value::Int(i64::try_from(c).unwrap_or(-1))));
    decode_as(ElementType::Int64, coordinates, count)
}
