//! Dequantization: the real value of a quantized tensor's stored element
//! (`quantization.md`; each scheme's § Dequantization Formula). One element
//! at a time, for inspection and checks; a call allocates only a copy of
//! the shape (`rank` entries), nothing proportional to the data.

use super::nf4;
use super::section::QuantScheme;
use crate::error::{Error, Result};
use crate::layout::view::check_index;
use crate::tensor::Tensor;
use crate::value::Value;

impl Tensor<'_> {
    /// The real value of the stored element `q` at logical `index` (`rank`
    /// coordinates) of a quantized tensor, by its scheme's § Dequantization
    /// Formula:
    /// - per-tensor, per-channel and per-block affine: `scale * (q -
    ///   zero_point)`, the difference exact (the spec's "signed 32-bit"
    ///   subtraction overflows for some `uint32` and `int32` codes), rounded
    ///   to `float32`, and multiplied in `float32` (a float16 or bfloat16
    ///   scale widened exactly);
    /// - NF4: `scale * nf4[q]` in `float32`;
    /// - MXFP: `2^(e - 127) * q` (the code's value for float storage), exact
    ///   in `f64` (the spec allows "float32 or higher").
    ///
    /// The scale and zero point are those of `index`'s channel (`index[axis]`)
    /// or block (`quantization/per-block-affine.md` § Block Layout), read
    /// through [`scales`](Self::scales) and [`zero_points`](Self::zero_points).
    /// `q` is the storage code as [`dense_value`](Self::dense_value), a
    /// sparse view's value or [`Buffer::value`](crate::Buffer::value) return
    /// it. For a sparse tensor, an element it does not store has no code:
    /// its dequantized value is 0.0 (the spec is silent; see
    /// `docs/design.md`).
    ///
    /// # Errors
    /// [`Error::NotViewable`] when the tensor is not quantized, its scheme is
    /// unknown (permissive mode), its scale or zero-point entry cannot be
    /// read, or `q` is not a code of its storage type (a float for an
    /// integer type, an NF4 code above 15);
    /// [`Error::LengthMismatch`] and [`Error::CoordinateArgument`] for an
    /// index that is not in the shape.
    ///
    /// # Example
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use hurray_writer::{quant::PerTensorAffine, BufferData, ElementType, FileWriter, TensorDescriptor, WriterOptions};
    /// # let quantization = PerTensorAffine { scale: 0.5, zero_point: 128 }.encode();
    /// # let d = TensorDescriptor::row_major(ElementType::UInt8, vec![2, 2])?.with_quantization(quantization);
    /// # let mut w = FileWriter::new(Vec::new(), WriterOptions::default())?;
    /// # w.write_tensor("q", &d, [BufferData::Bytes(&[128, 130, 0, 255])])?;
    /// # let bytes = hurray_reader::AlignedBytes::from_slice(&w.finish()?);
    /// use hurray_reader::{HurrayFile, Options, Value};
    /// // "q": uint8 [2, 2], per-tensor affine, scale 0.5, zero point 128.
    /// let file = HurrayFile::parse(&bytes, Options::default())?;
    /// let q = file.tensor("q")?;
    /// let code = q.dense_value(&[0, 1])?;
    /// assert_eq!(code, Value::UInt(130));
    /// assert_eq!(q.dequantize(&[0, 1], code)?, 1.0); // 0.5 * (130 - 128)
    /// assert_eq!(q.dense_dequantized(&[1, 0])?, -64.0); // code 0
    /// # Ok(()) }
    /// ```
    pub fn dequantize(&self, index: &[u64], q: Value) -> Result<f64> {
        let not = |why: &'static str| Error::NotViewable {
            tensor: self.name().into(),
            why,
        };
        let quantization = self
            .descriptor()
            .quantization()
            .ok_or_else(|| not("the tensor is not quantized (quantization.md)"))?;
        // The shape has `rank` entries, and rank is bounded by the
        // descriptor's length.
        let shape: Vec<u64> = self.shape().collect();
        check_index(self.name(), index, &shape)?;
        let code = || match q {
            Value::Int(v) => Some(v),
            Value::UInt(v) => i64::try_from(v).ok(),
            _ => None,
        };
        let bad_code = || not("the value is not a code of the tensor's storage type");
        let bad_parameter = || not("its scale or zero point cannot be read (quantization.md)");
        let block = |axis: u32, block_size: u32| block_index(&shape, index, axis, block_size);
        let group = match quantization.scheme {
            QuantScheme::PerTensorAffine(p) => {
                let difference = affine_difference(code().ok_or_else(bad_code)?, i64::from(p.zero_point.get()));
                return Ok(f64::from(p.scale.get() * difference));
            }
            QuantScheme::PerChannelAffine(p) => usize::try_from(p.axis.get())
                .ok()
                .and_then(|axis| index.get(axis).copied()),
            QuantScheme::PerBlockAffine(p) => block(p.axis.get(), p.block_size.get()),
            QuantScheme::Nf4(p) | QuantScheme::Mxfp(p) => block(p.axis.get(), p.block_size.get()),
            QuantScheme::Unknown => return Err(not("its quantization scheme is not recognised (permissive mode)")),
        };
        // None only for fields the reader refused at open (axis, block size).
        let group = group.ok_or_else(bad_parameter)?;
        let scale = match self.scales().and_then(|b| b.value(group)) {
            Some(Value::Float(s)) => s,
            _ => return Err(bad_parameter()),
        };
        match quantization.scheme {
            QuantScheme::Nf4(_) => {
                let level = usize::try_from(code().ok_or_else(bad_code)?)
                    .ok()
                    .and_then(|q| nf4::LEVELS.get(q))
                    .ok_or_else(bad_code)?;
                // The scale is a float32, exact in f64 and back.
                Ok(f64::from(scale as f32 * level))
            }
            QuantScheme::Mxfp(_) => {
                let value = match q {
                    Value::Float(v) => v,
                    // int8 and int4 codes: |q| <= 128, exact in f64.
                    _ => code().ok_or_else(bad_code)? as f64,
                };
                Ok(scale * value)
            }
            _ => {
                let zero_point = match self.zero_points() {
                    None => 0,
                    Some(b) => match b.value(group) {
                        Some(Value::Int(z)) => z,
                        _ => return Err(bad_parameter()),
                    },
                };
                let difference = affine_difference(code().ok_or_else(bad_code)?, zero_point);
                // float32, float16 and bfloat16 scales are exact in f32.
                Ok(f64::from(scale as f32 * difference))
            }
        }
    }

    /// The element at `index` of a dense quantized tensor, dequantized:
    /// [`dequantize`](Self::dequantize) of [`dense_value`](Self::dense_value).
    ///
    /// # Errors
    /// As those two.
    pub fn dense_dequantized(&self, index: &[u64]) -> Result<f64> {
        self.dequantize(index, self.dense_value(index)?)
    }
}

/// `q - zero_point`, exact (both fit in 33 bits), rounded to `float32`.
fn affine_difference(q: i64, zero_point: i64) -> f32 {
    q.saturating_sub(zero_point) as f32
}

/// The block of `index` (`quantization/per-block-affine.md` § Block Layout):
/// `outer * ceil(shape[axis] / block_size) + index[axis] / block_size`,
/// `outer` the row-major linear index over the other dimensions. `None` on
/// a field the reader would have refused (axis past the rank, block size 0)
/// or an overflow.
fn block_index(shape: &[u64], index: &[u64], axis: u32, block_size: u32) -> Option<u64> {
    let axis = usize::try_from(axis).ok()?;
    let block_size = u64::from(block_size);
    let per_axis = shape.get(axis)?.checked_next_multiple_of(block_size)? / block_size;
    let outer = (0..)
        .zip(shape.iter().zip(index))
        .filter(|&(k, _)| k != axis)
        .try_fold(0u64, |outer, (_, (&n, &i))| outer.checked_mul(n)?.checked_add(i))?;
    outer
        .checked_mul(per_axis)?
        .checked_add(index.get(axis)?.checked_div(block_size)?)
}
