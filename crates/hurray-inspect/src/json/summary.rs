//! The summary's object (`FILE --json`, `FILE --json --validate`).
//!
//! KV values: strings as strings, integers exact (`int64` and `uint64`
//! extremes included), finite floats as numbers (`-0.0` keeps its sign),
//! NaN and infinities as the strings `"nan"`, `"inf"`, `"-inf"`, booleans,
//! bytes as an array of byte values (`[0, 255]`), arrays as JSON arrays.

use std::io::{self, Write};

use hurray_reader::KvValue;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::Serialize;

use crate::json::error::JsonErrorAt;
use crate::json::format::{write, Style};
use crate::report::header::{dtype_name, verdict};
use crate::report::summary::{BufferInfo, PaddingCheck, Report, TensorReport, Tensors};

#[derive(Serialize)]
struct JsonReport<'a> {
    file: JsonFile<'a>,
    kv: JsonKv<'a>,
    /// Each KV value's type, by key: what `kv` alone cannot tell apart
    /// (an int64 from a uint64, bytes from an array, NaN from a string).
    kv_types: JsonKvTypes<'a>,
    tensors: JsonTensors<'a>,
    /// With `--validate` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    padding: Option<JsonCheck>,
}

#[derive(Serialize)]
struct JsonFile<'a> {
    /// `"major.minor"`.
    container_version: String,
    flags: &'a [String],
    data_buffer_alignment: u64,
}

#[derive(Serialize)]
struct JsonTensor<'a> {
    name: &'a str,
    /// `None` when the descriptor could not be read; `unknown(0x..)` for
    /// an unknown tag (permissive).
    dtype: Option<String>,
    layout: Option<String>,
    shape: Option<&'a [u64]>,
    nnz: Option<u64>,
    /// A quantized tensor's scheme (`per_tensor_affine`); `null` for one
    /// that is not quantized, or whose descriptor cannot be read.
    quantization: Option<&'a str>,
    /// `None` when the buffers were not located.
    buffers: Option<Vec<JsonBuffer>>,
    /// With `--validate` only; `null` when the data could not be checked
    /// ([`verdict`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    valid: Option<Option<bool>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_at: Option<JsonErrorAt>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    warnings: &'a [String],
    /// With `--validate`: why the data was not checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    not_viewable: Option<&'static str>,
}

#[derive(Serialize)]
struct JsonBuffer {
    /// As in `--tensor`'s buffers.
    role: String,
    element_type: Option<&'static str>,
    byte_size: u64,
    alignment: u64,
    offset: u64,
}

/// `{"valid": true}`, `{"valid": false, "error": ...}` or
/// `{"valid": null, "skipped": why}`.
#[derive(Serialize)]
struct JsonCheck {
    valid: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_at: Option<JsonErrorAt>,
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<&'static str>,
}

/// The tensors, each built and written in turn ([`Tensors`]): a file of a
/// million tensors is never held as a million objects.
struct JsonTensors<'a>(&'a Tensors<'a, 'a>);

impl Serialize for JsonTensors<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for t in self.0.iter() {
            seq.serialize_element(&JsonTensor::new(&t))?;
        }
        seq.end()
    }
}

/// The KV entries as one object, keys in file order.
struct JsonKv<'a>(&'a [(&'a str, KvValue<'a>)]);

impl Serialize for JsonKv<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in self.0 {
            map.serialize_entry(key, &JsonKvValue(*value))?;
        }
        map.end()
    }
}

struct JsonKvTypes<'a>(&'a [(&'a str, KvValue<'a>)]);

impl Serialize for JsonKvTypes<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in self.0 {
            match value {
                KvValue::Array(a) => map.serialize_entry(key, &format!("array<{}>", a.element_type().as_str()))?,
                other => map.serialize_entry(key, other.kv_type().as_str())?,
            }
        }
        map.end()
    }
}

struct JsonKvValue<'a>(KvValue<'a>);

impl Serialize for JsonKvValue<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            KvValue::String(s) => serializer.serialize_str(s),
            KvValue::Int64(n) => serializer.serialize_i64(n),
            KvValue::Uint64(n) => serializer.serialize_u64(n),
            KvValue::Float64(x) if x.is_nan() => serializer.serialize_str("nan"),
            KvValue::Float64(x) if x.is_infinite() => serializer.serialize_str(if x > 0.0 { "inf" } else { "-inf" }),
            KvValue::Float64(x) => serializer.serialize_f64(x),
            KvValue::Bool(b) => serializer.serialize_bool(b),
            KvValue::Bytes(bytes) => serializer.collect_seq(bytes),
            KvValue::Array(a) => serializer.collect_seq(a.iter().map(JsonKvValue)),
        }
    }
}

impl<'a> JsonTensor<'a> {
    fn new(t: &'a TensorReport<'a>) -> Self {
        let info = t.info.as_ref();
        JsonTensor {
            name: t.name,
            dtype: info.map(|i| dtype_name(i.element_type, i.type_tag)),
            layout: info.map(|i| i.layout.to_string()),
            shape: info.map(|i| i.shape.as_slice()),
            nnz: info.and_then(|i| i.nnz),
            quantization: info.and_then(|i| i.quantization.as_deref()),
            buffers: info
                .and_then(|i| i.buffers.as_ref())
                .map(|b| b.iter().map(JsonBuffer::new).collect()),
            valid: t.validated.then(|| {
                verdict(
                    t.error.is_some(),
                    info.map(|i| i.layout),
                    info.and_then(|i| i.not_viewable),
                )
            }),
            error: t.error.as_ref().map(ToString::to_string),
            error_at: t.error.as_ref().and_then(JsonErrorAt::new),
            warnings: &t.warnings,
            not_viewable: info
                .and_then(|i| i.not_viewable)
                .filter(|_| t.validated && t.error.is_none()),
        }
    }
}

impl JsonBuffer {
    fn new(b: &BufferInfo) -> Self {
        JsonBuffer {
            role: b.role.to_string(),
            element_type: b.element_type.map(|t| t.as_str()),
            byte_size: b.byte_size,
            alignment: b.alignment,
            offset: b.offset,
        }
    }
}

impl JsonCheck {
    fn new(check: &PaddingCheck) -> Self {
        match check {
            PaddingCheck::Ok => JsonCheck {
                valid: Some(true),
                error: None,
                error_at: None,
                skipped: None,
            },
            PaddingCheck::Invalid(e) => JsonCheck {
                valid: Some(false),
                error: Some(e.to_string()),
                error_at: JsonErrorAt::new(e),
                skipped: None,
            },
            PaddingCheck::Skipped(why) => JsonCheck {
                valid: None,
                error: None,
                error_at: None,
                skipped: Some(why),
            },
        }
    }
}

/// Writes the summary as one JSON object and a newline.
///
/// # Errors
/// Whatever `out` returns.
pub fn render(report: &Report<'_, '_>, out: &mut impl Write) -> io::Result<()> {
    let (major, minor) = report.container_version;
    let json = JsonReport {
        file: JsonFile {
            container_version: format!("{major}.{minor}"),
            flags: &report.flags,
            data_buffer_alignment: report.data_buffer_alignment,
        },
        kv: JsonKv(&report.kv),
        kv_types: JsonKvTypes(&report.kv),
        tensors: JsonTensors(&report.tensors),
        padding: report.padding.as_ref().map(JsonCheck::new),
    };
    write(out, &json, Style::Pretty)
}

#[cfg(test)]
mod tests {
    use hurray_reader::{BufferRole, ElementType, Error, Layout};
    use serde_json::{json, Value};

    use super::*;
    use crate::report::summary::TensorInfo;

    fn to_value(report: &Report<'_, '_>) -> Value {
        let mut out = Vec::new();
        render(report, &mut out).unwrap();
        serde_json::from_slice(&out).unwrap()
    }

    fn report<'a>(kv: Vec<(&'a str, KvValue<'a>)>, tensors: Vec<TensorReport<'a>>) -> Report<'static, 'a> {
        Report {
            container_version: (1, 0),
            flags: vec!["HAS_INDEX_CRC32C".into()],
            data_buffer_alignment: 4096,
            strict: true,
            kv,
            tensors: Tensors::List(tensors),
            padding: None,
        }
    }

    #[test]
    fn kv_values_keep_their_exact_value() {
        let kv = vec![
            ("s", KvValue::String("Grüße")),
            ("min", KvValue::Int64(i64::MIN)),
            ("max", KvValue::Uint64(u64::MAX)),
            ("nan", KvValue::Float64(f64::NAN)),
            ("inf", KvValue::Float64(f64::INFINITY)),
            ("ninf", KvValue::Float64(f64::NEG_INFINITY)),
            ("nzero", KvValue::Float64(-0.0)),
            ("tiny", KvValue::Float64(5e-324)),
            ("b", KvValue::Bool(true)),
            ("bytes", KvValue::Bytes(&[0, 127, 255])),
        ];
        let mut out = Vec::new();
        render(&report(kv, Vec::new()), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("\"nzero\": -0.0"), "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v["kv"],
            json!({"s": "Grüße", "min": i64::MIN, "max": u64::MAX, "nan": "nan", "inf": "inf",
                   "ninf": "-inf", "nzero": -0.0, "tiny": 5e-324, "b": true, "bytes": [0, 127, 255]})
        );
        assert_eq!(
            v["kv_types"],
            json!({"s": "string", "min": "int64", "max": "uint64", "nan": "float64", "inf": "float64",
                   "ninf": "float64", "nzero": "float64", "tiny": "float64", "b": "bool", "bytes": "bytes"})
        );
        // Keys stay in file order.
        let pos = |k: &str| text.find(&format!("\"{k}\":")).unwrap();
        assert!(pos("s") < pos("min") && pos("min") < pos("bytes"));
    }

    #[test]
    fn tensor_fields_and_validation() {
        let good = TensorReport {
            name: "A",
            data_offset: 4096,
            resolved: true,
            info: Some(TensorInfo {
                element_type: Some(ElementType::Float32),
                type_tag: 0x03,
                layout: Layout::Csc,
                shape: vec![4, 5],
                nnz: Some(5),
                buffers: Some(vec![BufferInfo {
                    role: BufferRole::Values,
                    element_type: Some(ElementType::Float32),
                    byte_size: 20,
                    alignment: 64,
                    offset: 4096,
                }]),
                not_viewable: None,
                quantization: None,
            }),
            validated: true,
            error: None,
            warnings: Vec::new(),
        };
        let bad = TensorReport {
            name: "B",
            data_offset: 8192,
            resolved: false,
            info: None,
            validated: true,
            error: Some(Error::NotFound { name: "B".into() }),
            warnings: vec!["w".into()],
        };
        let mut r = report(Vec::new(), vec![good, bad]);
        r.padding = Some(PaddingCheck::Skipped("permissive mode"));
        assert_eq!(
            to_value(&r),
            json!({
                "file": {"container_version": "1.0", "flags": ["HAS_INDEX_CRC32C"], "data_buffer_alignment": 4096},
                "kv": {},
                "kv_types": {},
                "tensors": [
                    {"name": "A", "dtype": "float32", "layout": "csc", "shape": [4, 5], "nnz": 5, "quantization": null,
                     "buffers": [{"role": "values", "element_type": "float32", "byte_size": 20, "alignment": 64,
                                  "offset": 4096}], "valid": true},
                    {"name": "B", "dtype": null, "layout": null, "shape": null, "nnz": null, "quantization": null,
                     "buffers": null,
                     "valid": false, "error": "no tensor named 'B' in the index", "warnings": ["w"]}
                ],
                "padding": {"valid": null, "skipped": "permissive mode"}
            })
        );
    }

    #[test]
    fn no_validation_fields_without_validate() {
        let t = TensorReport {
            name: "A",
            data_offset: 64,
            resolved: false,
            info: None,
            validated: false,
            error: None,
            warnings: Vec::new(),
        };
        let v = to_value(&report(Vec::new(), vec![t]));
        assert!(v.get("padding").is_none());
        assert!(v["tensors"][0].get("valid").is_none());
    }
}
