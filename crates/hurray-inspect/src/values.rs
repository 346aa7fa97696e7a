//! How one decoded element ([`hurray_reader::Value`]) is written: short
//! text for people, exact JSON for scripts.
//!
//! JSON: signed and unsigned integers as JSON integers (every `u64` and
//! `i64` exact); floats as numbers holding the exact value (float16,
//! bfloat16, float32 ... widened to `f64`, so `0.1f32` is
//! `0.10000000149011612`); NaN and infinities as the strings `"nan"`,
//! `"inf"`, `"-inf"`; complex as `[re, im]`; bool as `true`/`false`;
//! raw bits (float128, extension types) as a hex string `"0x..."`, one
//! digit per 4 bits of the type (32 for float128), leading zeros kept.

use std::fmt;

use hurray_reader::{ElementType, Value};
use serde::ser::{SerializeTuple, Serializer};
use serde::Serialize;

/// A value for people: floats in the shortest form that reads back to the
/// stored value of their own width (`0.1` for a float32 `0.1`, `1.0`,
/// `NaN`, `inf`), integers in decimal, complex as `1.0-2.0i`.
pub fn human(value: Value, dtype: Option<ElementType>) -> String {
    Human(value, dtype).to_string()
}

/// A real number computed by the library (a dequantized value): in its
/// shortest `float32` form when it is a `float32`, as most are, else as
/// `float64`.
pub fn human_real(x: f64) -> String {
    human(Value::Float(x), Some(real_type(x)))
}

/// [`human_real`]'s number for JSON.
pub fn json_real(x: f64) -> Json {
    Json(Value::Float(x), Some(real_type(x)))
}

/// `float32` when `x` is one exactly (NaN included), else `float64`.
fn real_type(x: f64) -> ElementType {
    #[allow(clippy::cast_possible_truncation)] // the round trip is the test
    let narrow = x as f32;
    if f64::from(narrow) == x || x.is_nan() {
        ElementType::Float32
    } else {
        ElementType::Float64
    }
}

/// [`human`] as a `Display`, to write without allocating.
#[derive(Debug, Clone, Copy)]
pub struct Human(pub Value, pub Option<ElementType>);

impl fmt::Display for Human {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dtype = self.1;
        match self.0 {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(n) => write!(f, "{n}"),
            Value::UInt(n) => write!(f, "{n}"),
            Value::Float(x) => float(f, x, dtype),
            Value::Complex { re, im } => {
                let sign = if im.is_sign_negative() && !im.is_nan() {
                    "-"
                } else {
                    "+"
                };
                float(f, re, dtype)?;
                f.write_str(sign)?;
                float(f, im.abs(), dtype)?;
                f.write_str("i")
            }
            Value::Bits(bits) => Bits(bits, dtype).fmt(f),
        }
    }
}

/// Raw bits as `0x` and one hex digit per 4 bits of `dtype` (at least the
/// digits the value needs; all of them without a type).
struct Bits(u128, Option<ElementType>);

impl fmt::Display for Bits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A `u128` has 32 digits; wider types are not decoded to values.
        let digits = self
            .1
            .map_or(0, |t| usize::try_from(t.bit_width().div_ceil(4)).unwrap_or(0).min(32));
        write!(f, "0x{:0digits$x}", self.0)
    }
}

/// Every float type but float64 and complex128 holds values a `f32` holds
/// exactly, so its shortest `f32` form is exact and short.
#[allow(clippy::cast_possible_truncation)] // exact: the value came from a type no wider than f32
fn float(f: &mut fmt::Formatter<'_>, x: f64, dtype: Option<ElementType>) -> fmt::Result {
    let wide = matches!(dtype, Some(ElementType::Float64 | ElementType::Complex128) | None);
    if wide {
        write!(f, "{x:?}")
    } else {
        write!(f, "{:?}", x as f32)
    }
}

/// A value of type `dtype` as JSON (see the module docs).
#[derive(Debug, Clone, Copy)]
pub struct Json(pub Value, pub Option<ElementType>);

/// A float as JSON: a number, or `"nan"`, `"inf"`, `"-inf"`.
#[derive(Debug, Clone, Copy)]
pub struct JsonFloat(pub f64);

impl Serialize for JsonFloat {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let x = self.0;
        if x.is_nan() {
            serializer.serialize_str("nan")
        } else if x.is_infinite() {
            serializer.serialize_str(if x > 0.0 { "inf" } else { "-inf" })
        } else {
            serializer.serialize_f64(x)
        }
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Bool(b) => serializer.serialize_bool(b),
            Value::Int(n) => serializer.serialize_i64(n),
            Value::UInt(n) => serializer.serialize_u64(n),
            Value::Float(x) => JsonFloat(x).serialize(serializer),
            Value::Complex { re, im } => {
                let mut pair = serializer.serialize_tuple(2)?;
                pair.serialize_element(&JsonFloat(re))?;
                pair.serialize_element(&JsonFloat(im))?;
                pair.end()
            }
            Value::Bits(bits) => serializer.collect_str(&Bits(bits, self.1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn human_forms() {
        let f32_ = Some(ElementType::Float32);
        assert_eq!(human(Value::Float(f64::from(0.1f32)), f32_), "0.1");
        assert_eq!(human(Value::Float(0.1), Some(ElementType::Float64)), "0.1");
        assert_eq!(human(Value::Float(1.0), f32_), "1.0");
        assert_eq!(human(Value::Float(-0.0), f32_), "-0.0");
        assert_eq!(human(Value::Float(f64::NAN), f32_), "NaN");
        assert_eq!(
            human(Value::Float(f64::NEG_INFINITY), Some(ElementType::Float16)),
            "-inf"
        );
        assert_eq!(human(Value::Float(65504.0), Some(ElementType::Float16)), "65504.0");
        assert_eq!(
            human(Value::Int(i64::MIN), Some(ElementType::Int64)),
            i64::MIN.to_string()
        );
        assert_eq!(
            human(Value::UInt(u64::MAX), Some(ElementType::Uint64)),
            u64::MAX.to_string()
        );
        assert_eq!(human(Value::Bool(true), Some(ElementType::Bool)), "true");
        assert_eq!(
            human(Value::Complex { re: 1.0, im: -2.0 }, Some(ElementType::Complex64)),
            "1.0-2.0i"
        );
        assert_eq!(
            human(Value::Complex { re: 0.5, im: 0.25 }, Some(ElementType::Complex128)),
            "0.5+0.25i"
        );
        assert_eq!(human(Value::Bits(0xab), None), "0xab");
        // float128 1.0, and one with leading zero bytes: every digit kept.
        assert_eq!(
            human(Value::Bits(0x3fff << 112), Some(ElementType::Float128)),
            "0x3fff0000000000000000000000000000"
        );
        assert_eq!(
            human(
                Value::Bits(0x0f0e0d0c0b0a09080706050403020100),
                Some(ElementType::Float128)
            ),
            "0x0f0e0d0c0b0a09080706050403020100"
        );
    }

    #[test]
    fn json_forms() {
        let to = |v| serde_json::to_value(Json(v, None)).unwrap();
        assert_eq!(to(Value::UInt(u64::MAX)), json!(u64::MAX));
        assert_eq!(to(Value::Int(i64::MIN)), json!(i64::MIN));
        assert_eq!(to(Value::Float(f64::from(0.1f32))), json!(0.10000000149011612));
        assert_eq!(to(Value::Float(f64::NAN)), json!("nan"));
        assert_eq!(to(Value::Float(f64::INFINITY)), json!("inf"));
        assert_eq!(to(Value::Float(f64::NEG_INFINITY)), json!("-inf"));
        assert_eq!(to(Value::Complex { re: 1.0, im: f64::NAN }), json!([1.0, "nan"]));
        assert_eq!(to(Value::Bool(false)), json!(false));
        assert_eq!(to(Value::Bits(0x10)), json!("0x10"));
        assert_eq!(
            serde_json::to_value(Json(Value::Bits(0x10), Some(ElementType::Float128))).unwrap(),
            json!("0x00000000000000000000000000000010")
        );
        assert_eq!(serde_json::to_string(&Json(Value::Float(-0.0), None)).unwrap(), "-0.0");
        assert_eq!(serde_json::to_string(&Json(Value::Float(1.0), None)).unwrap(), "1.0");
    }
}
