//! Helpers for the corpus tests: locating a corpus from its environment
//! variable, comparing what the reader decodes with the manifests' JSON
//! (exact integers, bit-exact floats), and checking that an error gives its
//! location and cites the manifest's rule.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};

use hurray_reader::{logical_indices, AlignedBytes, Error, HurrayFile, KvValue, Layout, Options, Tensor, Value};
use serde_json::Value as Json;

/// The corpus folder named by `var`. `None` (after printing a "skipped"
/// line) when the variable is unset; panics when it is set but the folder or
/// its manifest is missing, so CI cannot silently skip. Relative paths are
/// taken from the workspace root, where `.ci/run` runs.
pub fn corpus(var: &str) -> Option<(PathBuf, Json)> {
    let Some(dir) = std::env::var_os(var) else {
        // Straight to stderr: the harness captures `println!` of passing tests.
        let _ = writeln!(
            std::io::stderr(),
            "skipped: {var} not set (set it to a corpus folder to run this test)"
        );
        return None;
    };
    let dir = PathBuf::from(dir);
    let dir = if dir.is_relative() {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(dir)
    } else {
        dir
    };
    let manifest_path = dir.join("manifest.json");
    let text = std::fs::read_to_string(&manifest_path)
        .unwrap_or_else(|e| panic!("{var} is set but {} cannot be read: {e}", manifest_path.display()));
    let manifest: Json = serde_json::from_str(&text).expect("manifest.json parses");
    Some((dir, manifest))
}

pub fn read(dir: &Path, file: &str) -> AlignedBytes {
    bytes_of(&dir.join(file))
}

/// The bytes of the file at `path`, whatever they hold, in aligned
/// storage. Not `AlignedBytes::read`: it refuses a file that does not start
/// with the file magic after its first bytes, and these tests parse such a
/// file to see the error (`tests/verdicts.rs` checks that the refusal is
/// that error).
pub fn bytes_of(path: &Path) -> AlignedBytes {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    AlignedBytes::from_reader(file).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Opens, resolves every tensor and validates all data: the strict verdict.
pub fn full_check(bytes: &[u8]) -> Result<(), Error> {
    let file = HurrayFile::parse(bytes, Options::default())?;
    file.validate()
}

fn float_json(j: &Json) -> Option<f64> {
    match j {
        Json::String(s) if s == "NaN" => Some(f64::NAN),
        Json::String(s) if s == "Infinity" => Some(f64::INFINITY),
        Json::String(s) if s == "-Infinity" => Some(f64::NEG_INFINITY),
        other => other.as_f64(),
    }
}

/// Float equality as the manifests define it: bit-exact after rounding to
/// the element's width (a float32 was widened to f64 in the JSON), any NaN
/// equal to any NaN.
fn float_eq(got: f64, want: f64, single: bool) -> bool {
    if got.is_nan() || want.is_nan() {
        return got.is_nan() && want.is_nan();
    }
    if single {
        (got as f32).to_bits() == (want as f32).to_bits()
    } else {
        got.to_bits() == want.to_bits()
    }
}

/// Does the decoded `v` equal the manifest value `j` of type `as_type`?
pub fn value_eq(v: Value, j: &Json, as_type: &str) -> bool {
    let single = matches!(as_type, "float32" | "complex64");
    match v {
        Value::Bool(b) => j.as_bool() == Some(b),
        Value::Int(i) => j.as_i64() == Some(i),
        Value::UInt(u) => j.as_u64() == Some(u),
        Value::Float(x) => float_json(j).is_some_and(|w| float_eq(x, w, single)),
        Value::Complex { re, im } => match j.as_array().map(Vec::as_slice) {
            Some([r, i]) => {
                float_json(r).is_some_and(|w| float_eq(re, w, single))
                    && float_json(i).is_some_and(|w| float_eq(im, w, single))
            }
            _ => false,
        },
        Value::Bits(_) => false,
    }
}

/// Is `j` the zero of its type (`0`, `0.0`, `false`, `[0.0, 0.0]`)?
pub fn is_zero(j: &Json) -> bool {
    match j {
        Json::Bool(b) => !b,
        Json::Number(n) => n.as_f64() == Some(0.0),
        Json::Array(parts) => parts.iter().all(is_zero),
        _ => false,
    }
}

/// Flattens `dense` for a tensor of element type `dtype`: complex values
/// are `[re, im]` leaves, everything else a scalar leaf.
pub fn flatten_dense<'a>(j: &'a Json, complex: bool, out: &mut Vec<&'a Json>) {
    match j {
        Json::Array(items) if complex && items.len() == 2 && items.iter().all(|x| !x.is_array()) => out.push(j),
        Json::Array(items) => {
            for item in items {
                flatten_dense(item, complex, out);
            }
        }
        leaf => out.push(leaf),
    }
}

/// The value at a logical index, whatever the layout: the element of a dense
/// tensor, the stored value or implicit zero (`None`) of a sparse one.
pub fn logical_value(t: &Tensor<'_>, index: &[u64]) -> Result<Option<Value>, Error> {
    let position = match t.layout() {
        l if l.is_dense() => return t.dense_value(index).map(Some),
        Layout::Csc => {
            let (&r, &c) = (index.first().expect("row"), index.get(1).expect("col"));
            t.csc_structure()?.validated()?.position(r, c)?.map(|p| p as u64)
        }
        Layout::Csr => {
            let (&r, &c) = (index.first().expect("row"), index.get(1).expect("col"));
            t.csr_structure()?.validated()?.position(r, c)?.map(|p| p as u64)
        }
        Layout::Coo => t.coo_structure()?.validated()?.position(index)?,
        Layout::Csf => t.csf_structure()?.validated()?.position(index)?,
        other => panic!("no logical view for {other}"),
    };
    Ok(position.and_then(|p| t.buffer(0).ok()?.value(p)))
}

/// Compares a tensor with its manifest entry; returns the mismatches.
pub fn compare_tensor(file: &HurrayFile<'_>, want: &Json) -> Vec<String> {
    let name = want["name"].as_str().expect("name");
    let mut problems = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            problems.push(format!("{name}: {what}"));
        }
    };
    let t = match file.tensor(name) {
        Ok(t) => t,
        Err(e) => return vec![format!("{name}: cannot resolve: {e}")],
    };
    let entry = t.entry();
    // Facts absent from a manifest entry are not compared.
    let absent = |j: &Json, key: &str| j.get(key).is_none();
    for (got, key) in [
        (entry.position() as u64, "index_position"),
        (entry.descriptor_offset(), "descriptor_offset"),
        (entry.descriptor_length(), "descriptor_length"),
        (entry.data_offset(), "data_offset"),
        (entry.data_length(), "data_length"),
        (u64::from(t.descriptor().flags()), "descriptor_flags"),
        (u64::from(t.rank()), "rank"),
        (t.descriptor().byte_offset(), "byte_offset"),
        (t.buffers().len() as u64, "buffer_count"),
    ] {
        check(
            absent(want, key) || Some(got) == want[key].as_u64(),
            format!("{key}: got {got}, want {}", want[key]),
        );
    }
    let dtype = t.element_type().map(|e| e.as_str()).unwrap_or("?");
    check(want["element_type"] == dtype, format!("element_type {dtype}"));
    check(want["layout"] == t.layout().as_str(), format!("layout {}", t.layout()));
    let shape: Vec<u64> = t.shape().collect();
    let want_shape: Vec<u64> = want["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    check(shape == want_shape, format!("shape {shape:?}"));
    if let Some(nnz) = want.get("nnz") {
        check(t.nnz() == nnz.as_u64(), format!("nnz {:?}", t.nnz()));
    }
    // Every buffer, handle and element.
    for (b, wb) in t.buffers().iter().zip(want["buffers"].as_array().unwrap()) {
        let i = b.index();
        check(
            wb["role"] == b.role().to_string(),
            format!("buffer {i} role {}", b.role()),
        );
        for (got, key) in [
            (b.file_offset(), "file_offset"),
            (b.byte_size(), "byte_size"),
            (b.alignment(), "alignment"),
            (u64::from(b.handle().device_tag), "device_tag"),
            (u64::from(b.handle().sync_mode), "sync_mode"),
            (u64::from(b.handle().memory_class), "memory_class"),
        ] {
            check(
                absent(wb, key) || Some(got) == wb[key].as_u64(),
                format!("buffer {i} {key}: got {got}"),
            );
        }
        let contents = &wb["contents"];
        if contents.is_null() || contents.get("all_zero").is_some() {
            continue;
        }
        let as_type = contents["as"].as_str().unwrap();
        let count = contents["count"].as_u64().unwrap();
        check(
            b.len() >= count,
            format!("buffer {i} holds {} elements, want {count}", b.len()),
        );
        if let Some(raw) = contents.get("raw_bytes") {
            let raw: Vec<u8> = raw
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap() as u8)
                .collect();
            check(b.bytes() == raw.as_slice(), format!("buffer {i} raw_bytes"));
        }
        if let Some(bits) = contents.get("bits") {
            // Raw bit patterns: u16 for float16/bfloat16, the code of a packed type.
            for (k, w) in bits.as_array().unwrap().iter().enumerate() {
                let got = match b.packed() {
                    Ok(packed) => packed.code(k as u64).map(u64::from),
                    Err(_) => b
                        .bytes()
                        .get(2 * k..2 * k + 2)
                        .map(|p| u64::from(u16::from_le_bytes([p[0], p[1]]))),
                };
                check(
                    got == w.as_u64(),
                    format!("buffer {i} bits[{k}]: got {got:?}, want {w}"),
                );
            }
        }
        if let Some(values) = contents.get("values").and_then(Json::as_array) {
            check(values.len() as u64 == count, format!("buffer {i} manifest count"));
            for (k, w) in values.iter().enumerate() {
                let got = b.value(k as u64);
                check(
                    got.is_some_and(|v| value_eq(v, w, as_type)),
                    format!("buffer {i}[{k}]: got {got:?}, want {w}"),
                );
            }
        }
    }
    // The logical view, element by element.
    if let Some(dense) = want.get("dense") {
        let mut leaves = Vec::new();
        let complex = dtype.starts_with("complex");
        flatten_dense(dense, complex, &mut leaves);
        if t.rank() == 0 {
            leaves = vec![dense];
        }
        let indices: Vec<Vec<u64>> = logical_indices(&shape).collect();
        check(
            indices.len() == leaves.len(),
            format!("dense has {} leaves for {} indices", leaves.len(), indices.len()),
        );
        for (index, w) in indices.iter().zip(leaves) {
            match logical_value(&t, index) {
                Ok(Some(v)) => check(value_eq(v, w, dtype), format!("dense{index:?}: got {v:?}, want {w}")),
                Ok(None) => check(is_zero(w), format!("dense{index:?}: implicit zero, want {w}")),
                Err(e) => check(false, format!("dense{index:?}: {e}")),
            }
        }
    }
    // Quantized: the real values, exactly (the manifest's are float32
    // results). An implicit zero of a sparse tensor is 0.0 (docs/design.md).
    if let Some(dequantized) = want.get("dequantized_dense") {
        let mut leaves = Vec::new();
        flatten_dense(dequantized, false, &mut leaves);
        for (index, w) in logical_indices(&shape).zip(leaves) {
            let got = match logical_value(&t, &index) {
                Ok(Some(q)) => t.dequantize(&index, q),
                Ok(None) => Ok(0.0),
                Err(e) => Err(e),
            };
            check(
                got.as_ref().ok() == w.as_f64().as_ref(),
                format!("dequantized{index:?}: got {got:?}, want {w}"),
            );
        }
    }
    if let Some(values) = want.get("dequantized_values").and_then(Json::as_array) {
        // Every stored value, in storage order (CSC: column by column).
        let s = t.csc_structure().unwrap();
        let stored = t.buffer(0).unwrap();
        let mut got = Vec::new();
        for (j, w) in (0u64..).zip(s.col_ptr().windows(2)) {
            for k in w[0]..w[1] {
                let row = s.row_indices()[k as usize];
                got.push(t.dequantize(&[row, j], stored.value(k).unwrap()).unwrap());
            }
        }
        let want: Vec<f64> = values.iter().map(|v| v.as_f64().unwrap()).collect();
        check(got == want, format!("dequantized_values {got:?}, want {want:?}"));
    }
    if let Some(counts) = want.get("nnz_per_column").and_then(Json::as_array) {
        let s = t.csc_structure().unwrap();
        let got: Vec<u64> = s.col_ptr().windows(2).map(|w| w[1] - w[0]).collect();
        let want: Vec<u64> = counts.iter().map(|c| c.as_u64().unwrap()).collect();
        check(got == want, format!("nnz_per_column {got:?}"));
    }
    if let Some(coords) = want.get("coordinates").and_then(Json::as_array) {
        let got: Vec<Vec<u64>> = match t.layout() {
            Layout::Coo => {
                let s = t.coo_structure().unwrap();
                (0..s.nnz()).map(|i| s.coordinates(i).unwrap().to_vec()).collect()
            }
            Layout::Csf => t.csf_structure().unwrap().entries().unwrap().map(|(c, _)| c).collect(),
            _ => Vec::new(),
        };
        let want: Vec<Vec<u64>> = coords
            .iter()
            .map(|c| c.as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect())
            .collect();
        check(got == want, format!("coordinates {got:?}"));
    }
    if let Some(members) = want.get("composite_members").and_then(Json::as_array) {
        let got: Vec<&str> = t
            .composite_members()
            .iter()
            .map(|&p| file.entries()[p].name())
            .collect();
        check(
            members.iter().map(|m| m.as_str().unwrap()).eq(got.iter().copied()),
            format!("members {got:?}"),
        );
    }
    if let Some(lookups) = want.get("lookups").and_then(Json::as_array) {
        let a = t.csc::<f32>().unwrap();
        for l in lookups {
            let expects_error = l["expect"].as_str().is_some_and(|x| x.starts_with("error"));
            if let Some(j) = l.get("column").and_then(Json::as_u64) {
                let got = a.column(j);
                check(
                    got.is_err() == expects_error,
                    format!("column({j}): {:?}", got.map(|c| c.count())),
                );
                continue;
            }
            let (r, c) = (l["row"].as_u64().unwrap(), l["col"].as_u64().unwrap());
            match a.get(r, c) {
                Ok(v) => {
                    let got = v.copied().unwrap_or(0.0);
                    check(
                        !expects_error && f64::from(got) == l["value"].as_f64().unwrap(),
                        format!("get({r}, {c}) = {got}"),
                    );
                }
                Err(e) => check(expects_error, format!("get({r}, {c}): {e}")),
            }
        }
    }
    problems
}

/// Compares the container facts and KV entries of an accepted file.
pub fn compare_container(file: &HurrayFile<'_>, want: &Json) -> Vec<String> {
    let mut problems = Vec::new();
    let c = &want["container"];
    let (major, minor) = file.container_version();
    let trailer = file.trailer();
    let header = file.header();
    for (got, key) in [
        (u64::from(file.file_flags()), "file_flags"),
        (file.data_buffer_alignment(), "data_buffer_alignment"),
        (header.first_descriptor_offset.get(), "first_descriptor_offset"),
        (header.tensor_count_hint.get(), "tensor_count_hint"),
        (trailer.index_offset.get(), "index_offset"),
        (trailer.index_length.get(), "index_length"),
        (file.len() as u64, "index_entry_count"),
        (u64::from(trailer.index_crc32c.get()), "index_crc32c"),
        (trailer.kv_offset.get(), "kv_offset"),
        (u64::from(trailer.kv_length.get()), "kv_length"),
    ] {
        if c.get(key).is_some() && Some(got) != c[key].as_u64() {
            problems.push(format!("container {key}: got {got}, want {}", c[key]));
        }
    }
    if c.get("container_version").is_some() && c["container_version"] != serde_json::json!([major, minor]) {
        problems.push("container_version".into());
    }
    let kv = c["kv_entries"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    if kv.len() != file.kv().len() {
        problems.push(format!("{} KV entries, want {}", file.kv().len(), kv.len()));
    }
    for (got, w) in file.kv().iter().zip(kv) {
        if w["key"] != got.key() || w["type"] != got.value().kv_type().as_str() {
            problems.push(format!("KV {}: key or type", got.key()));
        }
        if !kv_eq(got.value(), &w["value"]) {
            problems.push(format!(
                "KV {}: value {:?}, want {}",
                got.key(),
                got.value(),
                w["value"]
            ));
        }
    }
    let order: Vec<&str> = file.entries_in_file_order().map(|e| e.name()).collect();
    if let Some(want_order) = want.get("tensor_order_in_file").and_then(Json::as_array) {
        if !want_order.iter().map(|n| n.as_str().unwrap()).eq(order.iter().copied()) {
            problems.push(format!("tensor_order_in_file {order:?}"));
        }
    }
    problems
}

fn kv_eq(v: KvValue<'_>, j: &Json) -> bool {
    match v {
        KvValue::String(s) => j.as_str() == Some(s),
        KvValue::Int64(i) => j.as_i64() == Some(i),
        KvValue::Uint64(u) => j.as_u64() == Some(u),
        KvValue::Float64(x) => float_json(j).is_some_and(|w| float_eq(x, w, false)),
        KvValue::Bool(b) => j.as_bool() == Some(b),
        KvValue::Bytes(bytes) => j.as_array().is_some_and(|a| {
            a.iter()
                .map(|x| x.as_u64())
                .eq(bytes.iter().map(|&b| Some(u64::from(b))))
        }),
        KvValue::Array(a) => j
            .as_array()
            .is_some_and(|items| items.len() == a.len() as usize && a.iter().zip(items).all(|(v, w)| kv_eq(v, w))),
    }
}

/// An error about a file's bytes gives its field, offset and rule through
/// the accessors (no field for `FileTooSmall`), and its message shows each
/// of them: the field as displayed, `at offset N`, the rule as its last
/// parenthesis. `Err` says what is missing.
pub fn located(e: &Error) -> Result<(), String> {
    let text = e.to_string();
    let mut missing = Vec::new();
    match e.field() {
        Some(field) if text.contains(&field.to_string()) => {}
        Some(field) => missing.push(format!("field() {field} not in the message")),
        // The one error about the file as a whole: its size.
        None if matches!(e, Error::FileTooSmall { .. }) => {}
        None => missing.push("no field()".to_string()),
    }
    match e.offset() {
        Some(offset) if text.contains(&format!("at offset {offset}")) => {}
        Some(offset) => missing.push(format!("offset() {offset} not in the message")),
        None => missing.push("no offset()".to_string()),
    }
    match e.rule() {
        Some(rule) if text.ends_with(&format!("({rule})")) => {}
        Some(rule) => missing.push(format!("rule() '{rule}' does not end the message")),
        None => missing.push("no rule()".to_string()),
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("{}: {text}", missing.join("; ")))
    }
}

/// Files whose manifest `offending_offset` is not the offset our error
/// reports, by a difference of convention: `(file, our offset, why)`. Our
/// offset is where the broken field starts; the manifests sometimes point at
/// the patched byte inside it, or at another field the same patch broke.
const OFFSET_CONVENTIONS: &[(&str, u64, &str)] = &[
    (
        "invalid_file_magic.hry",
        0,
        "the magic field; the manifest points at its differing byte 7",
    ),
    (
        "invalid_trailer_magic.hry",
        16584,
        "trailer_magic; the manifest points at its differing last byte",
    ),
    (
        "invalid_descriptor_magic.hry",
        12336,
        "the descriptor's magic; the manifest points at its differing byte",
    ),
    (
        "invalid_header_reserved_nonzero.hry",
        36,
        "_reserved_header; the message names its byte 4, at offset 40",
    ),
    (
        "invalid_duplicate_tensor_names.hry",
        16508,
        "the entry's name field; the manifest points at the patched byte 7 of the name",
    ),
    (
        "invalid_truncated_file.hry",
        9948,
        "trailer_magic, the file's last 4 bytes; the manifest points at the file's end",
    ),
    (
        "invalid_buffer_past_eof.hry",
        16536,
        "the index's data_length, read before the descriptor's byte_size (both patched)",
    ),
    (
        "invalid_sorted_flag_on_unsorted_index.hry",
        12342,
        "the name out of order; the manifest points at the SORTED_INDEX flag",
    ),
    (
        "bug03e_descriptor_length_4100.hry",
        16403,
        "the index entry's descriptor_length, read before the descriptor's own (both patched)",
    ),
];

/// The error's offset is the manifest entry's `offending_offset` (when it
/// has one), or the one `OFFSET_CONVENTIONS` lists for the file.
pub fn offset_agrees(name: &str, e: &Error, entry: &Json) -> Result<(), String> {
    let Some(want) = entry["offending_offset"].as_u64() else {
        return Ok(());
    };
    let want = OFFSET_CONVENTIONS
        .iter()
        .find(|(file, _, _)| *file == name)
        .map_or(want, |&(_, ours, _)| ours);
    match e.offset() {
        Some(got) if got == want => Ok(()),
        got => Err(format!("error offset {got:?}, expected {want}: {e}")),
    }
}

/// The error cites (in [`Error::rule`]) at least one of the sections the
/// manifest entry names with `§` in its `spec`, or in one of its
/// `also_breaks` (the rule a reader may meet first): `"file-format.md §
/// Index Encoding; § Trailer"` names `Index Encoding` and `Trailer`, and
/// `"file-format.md § Index Section › Index Encoding"` cites both.
pub fn cites_section(e: &Error, entry: &Json) -> Result<(), String> {
    let rule = e.rule().unwrap_or_default();
    let also = entry["also_breaks"].as_array().into_iter().flatten();
    let specs: Vec<&str> = std::iter::once(&entry["spec"])
        .chain(also)
        .filter_map(Json::as_str)
        .collect();
    let sections: Vec<&str> = specs
        .iter()
        .flat_map(|spec| spec.split('§').skip(1))
        .map(|s| {
            s.split([';', ',', '(', ':', '/', '›', '\''])
                .next()
                .unwrap_or_default()
                .trim()
        })
        .filter(|s| !s.is_empty())
        .collect();
    if sections.iter().any(|s| rule.contains(s)) {
        Ok(())
    } else {
        Err(format!("the error cites '{rule}', none of {sections:?}: {e}"))
    }
}

/// Every number and every quoted or plain word of a manifest hint such as
/// `"col_ptr[3] = 2 < col_ptr[2] = 3"` or `"KV entry 1"` appears in the
/// message (words compared with `_`, `[`, `]`, `.` read as spaces).
pub fn mentions(message: &str, hint: &str) -> bool {
    let normalize = |s: &str| -> String {
        s.to_lowercase()
            .chars()
            .map(|c| {
                if matches!(c, '_' | '[' | ']' | '\'' | '"' | ',' | ':' | '(' | ')') {
                    ' '
                } else {
                    c
                }
            })
            .collect::<String>()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let m = normalize(message);
    let h = normalize(hint);
    if m.contains(&h) {
        return true;
    }
    // Fall back to every token of the hint appearing somewhere.
    h.split(' ')
        .filter(|w| !matches!(*w, "=" | "<" | "<=" | ">" | "and" | "x"))
        .all(|w| m.split(' ').any(|x| x == w || x.trim_end_matches('.') == w) || m.contains(w))
}
