//! One element as text (`--get I,J,...`).

use std::io::{self, Write};

use crate::report::lookup::Lookup;
use crate::shown::display_name;
use crate::values;

/// `--get`: `A[2, 1] = 4.0  (stored at position 1)`, or `= 0 (implicit zero)`.
///
/// # Errors
/// Whatever `out` returns.
pub fn render(l: &Lookup<'_>, out: &mut impl Write) -> io::Result<()> {
    let coords: Vec<String> = l.index.iter().map(u64::to_string).collect();
    let at = format!("{}[{}]", display_name(l.header.name), coords.join(", "));
    let dequantized = l
        .dequantized
        .map(|x| format!("; dequantized {}", values::human_real(x)))
        .unwrap_or_default();
    match (l.value, l.position) {
        (Some(v), Some(p)) => {
            let kind = if l.header.layout.is_sparse() {
                "stored"
            } else {
                "element"
            };
            writeln!(
                out,
                "{at} = {}  ({kind} at position {p}{dequantized})",
                values::human(v, l.header.dtype)
            )
        }
        _ => writeln!(out, "{at} = 0 (implicit zero{dequantized})"),
    }
}

#[cfg(test)]
mod tests {
    use hurray_reader::{ElementType, Layout};

    use super::*;
    use crate::report::header::Header;

    fn header<'a>(name: &'a str, layout: Layout, shape: Vec<u64>, nnz: Option<u64>) -> Header<'a> {
        Header {
            name,
            dtype: Some(ElementType::Float32),
            layout,
            shape,
            nnz,
            type_tag: 0x03,
        }
    }

    fn text(write: impl FnOnce(&mut Vec<u8>) -> io::Result<()>) -> String {
        let mut out = Vec::new();
        write(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn lookups() {
        let mut l = Lookup {
            header: header("A\n", Layout::Csc, vec![4, 5], Some(5)),
            index: vec![3, 1],
            position: None,
            value: None,
            dequantized: None,
        };
        assert_eq!(text(|o| render(&l, o)), "A\\n[3, 1] = 0 (implicit zero)\n");
        l.position = Some(1);
        l.value = Some(hurray_reader::Value::Float(4.0));
        assert_eq!(text(|o| render(&l, o)), "A\\n[3, 1] = 4.0  (stored at position 1)\n");
        // A quantized tensor's real value, float32 shown as such.
        l.dequantized = Some(f64::from(0.1f32));
        assert_eq!(
            text(|o| render(&l, o)),
            "A\\n[3, 1] = 4.0  (stored at position 1; dequantized 0.1)\n"
        );
        l.value = None;
        l.dequantized = Some(0.0);
        assert_eq!(
            text(|o| render(&l, o)),
            "A\\n[3, 1] = 0 (implicit zero; dequantized 0.0)\n"
        );
        l.value = Some(hurray_reader::Value::Float(4.0));
        l.dequantized = None;
        l.header.layout = Layout::RowMajor;
        assert_eq!(text(|o| render(&l, o)), "A\\n[3, 1] = 4.0  (element at position 1)\n");
    }
}
