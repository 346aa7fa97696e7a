//! The object of one element (`--get I,J,... --json`).

use std::io::{self, Write};

use serde::Serialize;

use crate::json::format::{write, Style};
use crate::json::header::JsonHeader;
use crate::report::lookup::Lookup;
use crate::values::{json_real, Json};

#[derive(Serialize)]
struct JsonLookup<'a> {
    #[serde(flatten)]
    header: JsonHeader<'a>,
    index: &'a [u64],
    /// False for a sparse tensor's implicit zero.
    stored: bool,
    position: Option<u64>,
    /// The implicit zero is `0`.
    value: Json,
    /// A quantized tensor's real value (0.0 for an implicit zero).
    #[serde(skip_serializing_if = "Option::is_none")]
    dequantized: Option<Json>,
}

/// Writes `--get` as one JSON object.
///
/// # Errors
/// Whatever `out` returns.
pub fn render(l: &Lookup<'_>, out: &mut impl Write) -> io::Result<()> {
    let json = JsonLookup {
        header: JsonHeader::new(&l.header),
        index: &l.index,
        stored: l.value.is_some(),
        position: l.position,
        // An implicit zero in the tensor's own type: `false`, `0`, `0.0`, `[0.0, 0.0]`.
        value: Json(
            l.value.unwrap_or_else(|| {
                l.header
                    .dtype
                    .map_or(hurray_reader::Value::UInt(0), hurray_reader::Value::zero)
            }),
            l.header.dtype,
        ),
        dequantized: l.dequantized.map(json_real),
    };
    write(out, &json, Style::Pretty)
}

#[cfg(test)]
mod tests {
    use hurray_reader::{ElementType, Layout};
    use serde_json::{json, Value};

    use super::*;
    use crate::report::header::Header;

    #[test]
    fn an_implicit_zero_has_the_tensor_dtype() {
        let zero = |dtype| {
            let l = Lookup {
                header: Header {
                    name: "A",
                    dtype,
                    layout: Layout::Csc,
                    shape: vec![2, 2],
                    nnz: Some(0),
                    type_tag: 0x03,
                },
                index: vec![1, 1],
                position: None,
                value: None,
                dequantized: None,
            };
            let mut out = Vec::new();
            render(&l, &mut out).unwrap();
            serde_json::from_slice::<Value>(&out).unwrap()["value"].clone()
        };
        assert_eq!(zero(Some(ElementType::Bool)), json!(false));
        assert_eq!(zero(Some(ElementType::Int32)), json!(0));
        assert_eq!(zero(Some(ElementType::Float32)), json!(0.0));
        assert_eq!(zero(Some(ElementType::Complex64)), json!([0.0, 0.0]));
        assert_eq!(zero(None), json!(0));
    }
}
