//! The `--json` rendering: CLI-owned `Serialize` structs built from the
//! [`Report`], written as one JSON object.
//!
//! KV values: strings as strings, integers exact (`int64` and `uint64`
//! extremes included), finite floats as numbers (`-0.0` keeps its sign),
//! NaN and infinities as the strings `"nan"`, `"inf"`, `"-inf"`, booleans,
//! bytes as an array of byte values (`[0, 255]`), arrays as JSON arrays.

use std::io::{self, Write};

use hurray_reader::KvValue;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use crate::model::{BufferInfo, PaddingCheck, Report, TensorReport};

#[derive(Serialize)]
struct JsonReport<'a> {
    file: JsonFile<'a>,
    kv: JsonKv<'a>,
    tensors: Vec<JsonTensor<'a>>,
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
    dtype: Option<&'static str>,
    layout: Option<&'static str>,
    shape: Option<&'a [u64]>,
    nnz: Option<u64>,
    buffers: Vec<JsonBuffer>,
    /// With `--validate` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    valid: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    warnings: &'a [String],
}

#[derive(Serialize)]
struct JsonBuffer {
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
    skipped: Option<&'static str>,
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
            dtype: info.and_then(|i| i.element_type).map(|e| e.as_str()),
            layout: info.map(|i| i.layout.as_str()),
            shape: info.map(|i| i.shape.as_slice()),
            nnz: info.and_then(|i| i.nnz),
            buffers: info.map_or_else(Vec::new, |i| i.buffers.iter().map(JsonBuffer::new).collect()),
            valid: t.validated.then_some(t.error.is_none()),
            error: t.error.as_ref().map(ToString::to_string),
            warnings: &t.warnings,
        }
    }
}

impl JsonBuffer {
    fn new(b: &BufferInfo) -> Self {
        JsonBuffer {
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
                skipped: None,
            },
            PaddingCheck::Invalid(e) => JsonCheck {
                valid: Some(false),
                error: Some(e.to_string()),
                skipped: None,
            },
            PaddingCheck::Skipped(why) => JsonCheck {
                valid: None,
                error: None,
                skipped: Some(why),
            },
        }
    }
}

/// Writes the report as one pretty-printed JSON object and a newline.
///
/// # Errors
/// Whatever `out` returns.
pub fn render(report: &Report<'_>, out: &mut impl Write) -> io::Result<()> {
    let (major, minor) = report.container_version;
    let json = JsonReport {
        file: JsonFile {
            container_version: format!("{major}.{minor}"),
            flags: &report.flags,
            data_buffer_alignment: report.data_buffer_alignment,
        },
        kv: JsonKv(&report.kv),
        tensors: report.tensors.iter().map(JsonTensor::new).collect(),
        padding: report.padding.as_ref().map(JsonCheck::new),
    };
    serde_json::to_writer_pretty(&mut *out, &json)?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use hurray_reader::{ElementType, Error, Layout};
    use serde_json::{json, Value};

    use super::*;
    use crate::model::TensorInfo;

    fn to_value(report: &Report<'_>) -> Value {
        let mut out = Vec::new();
        render(report, &mut out).unwrap();
        serde_json::from_slice(&out).unwrap()
    }

    fn report<'a>(kv: Vec<(&'a str, KvValue<'a>)>, tensors: Vec<TensorReport<'a>>) -> Report<'a> {
        Report {
            container_version: (1, 0),
            flags: vec!["HAS_INDEX_CRC32C".into()],
            data_buffer_alignment: 4096,
            strict: true,
            kv,
            tensors,
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
        // Keys stay in file order.
        let pos = |k: &str| text.find(&format!("\"{k}\":")).unwrap();
        assert!(pos("s") < pos("min") && pos("min") < pos("bytes"));
    }

    #[test]
    fn tensor_fields_and_validation() {
        let good = TensorReport {
            name: "A",
            data_offset: 4096,
            info: Some(TensorInfo {
                element_type: Some(ElementType::Float32),
                layout: Layout::Csc,
                shape: vec![4, 5],
                nnz: Some(5),
                buffers: vec![BufferInfo {
                    byte_size: 20,
                    alignment: 64,
                    offset: 4096,
                }],
                not_viewable: None,
            }),
            validated: true,
            error: None,
            warnings: Vec::new(),
        };
        let bad = TensorReport {
            name: "B",
            data_offset: 8192,
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
                "tensors": [
                    {"name": "A", "dtype": "float32", "layout": "csc", "shape": [4, 5], "nnz": 5,
                     "buffers": [{"byte_size": 20, "alignment": 64, "offset": 4096}], "valid": true},
                    {"name": "B", "dtype": null, "layout": null, "shape": null, "nnz": null, "buffers": [],
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
