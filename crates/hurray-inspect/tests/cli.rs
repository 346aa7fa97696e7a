//! End-to-end tests of the `hurray-inspect` binary against the shared
//! corpora: `HURRAY_INTEROP_DIR` (files written by the reference
//! implementation) and `HURRAY_CASES_DIR` (bug-derived cases). When a
//! variable is unset the test prints `skipped: ...` and passes; when it is
//! set (absolute, or relative to the workspace root), a missing file fails
//! the test. The project's own `fixtures/` are always tested.

mod support {
    pub mod harness;
}

use std::path::Path;

use serde_json::{json, Value};
use support::harness::{
    assert_golden, assert_json_failure, assert_one_error_line, assert_same, bin, cli_value, corpus, entry, files,
    fixtures_dir, inspect, json_of, manifest, ok_json, path, stderr, stdout, CASES, INTEROP,
};

/// What `--json` must print for a valid manifest entry (with `--validate`
/// when `validated`); the KV values follow the CLI's JSON conventions.
fn expected_json(entry: &Value, validated: bool) -> Value {
    let c = &entry["container"];
    let version = format!("{}.{}", c["container_version"][0], c["container_version"][1]);
    let (mut kv, mut kv_types) = (serde_json::Map::new(), serde_json::Map::new());
    for e in c["kv_entries"].as_array().unwrap() {
        let key = e["key"].as_str().unwrap().to_owned();
        kv.insert(key.clone(), cli_value(&e["value"]));
        let kind = match e["type"].as_str().unwrap() {
            "array" => format!("array<{}>", e["element_type"].as_str().unwrap()),
            other => other.to_owned(),
        };
        kv_types.insert(key, json!(kind));
    }
    let tensors: Vec<Value> = entry["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let buffers: Vec<Value> = t["buffers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| {
                    json!({"role": b["role"], "element_type": b["contents"]["as"], "byte_size": b["byte_size"],
                           "alignment": b["alignment"], "offset": b["file_offset"]})
                })
                .collect();
            let mut tensor = json!({
                "name": t["name"], "dtype": t["element_type"], "layout": t["layout"], "shape": t["shape"],
                "nnz": t.get("nnz").cloned().unwrap_or(Value::Null),
                "quantization": t["quantization"].get("scheme").cloned().unwrap_or(Value::Null),
                "buffers": buffers,
            });
            if validated {
                tensor["valid"] = json!(true);
                // A composite head owns no data: nothing was checked.
                if t["layout"] == "composite" {
                    tensor["not_viewable"] = json!("it is a composite head, which owns no data: read its members");
                }
            }
            tensor
        })
        .collect();
    let flags = c
        .get("file_flags_names")
        .cloned()
        .unwrap_or_else(|| flag_names(c["file_flags"].as_u64().unwrap()));
    let mut expected = json!({
        "file": {"container_version": version, "flags": flags, "data_buffer_alignment": c["data_buffer_alignment"]},
        "kv": kv,
        "kv_types": kv_types,
        "tensors": tensors,
    });
    if validated {
        expected["padding"] = json!({"valid": true});
    }
    expected
}

/// The cases manifest gives `file_flags` as a number only.
fn flag_names(flags: u64) -> Value {
    let names = [(1, "HAS_KV_METADATA"), (2, "SORTED_INDEX"), (4, "HAS_INDEX_CRC32C")];
    names
        .iter()
        .filter(|(bit, _)| flags & bit != 0)
        .map(|(_, n)| json!(n))
        .collect()
}

#[test]
fn csc_example_summary() {
    let Some(dir) = corpus(INTEROP) else { return };
    let file = path(&dir, "csc_spec_example_f32.hry");
    let out = inspect(&[], &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let text = stdout(&out);
    let row: Vec<&str> = text
        .lines()
        .find(|l| l.trim_start().starts_with("csc_example "))
        .unwrap_or_else(|| panic!("{text}"))
        .split_whitespace()
        .collect();
    // name, dtype, layout, shape, nnz, buffers, bytes (20 + 40 + 48), data offset
    assert_eq!(
        row,
        [
            "csc_example",
            "float32",
            "csc",
            "[4,",
            "5]",
            "5",
            "3",
            "108",
            "B",
            "4096"
        ]
    );
    assert_golden(&out, "csc_spec_example_f32.txt", &file);
}

/// The summary of the interop corpus's quantized tensors names each one's
/// scheme after its element type, in the table and in `--json`.
#[test]
fn quantized_tensors_show_their_scheme_in_the_summary() {
    let Some(dir) = corpus(INTEROP) else { return };
    for (name, row, scheme) in [
        (
            "csc_quant_per_tensor_int8.hry",
            "  q_csc  int8 · per_tensor_affine  csc     [4, 5]    5        3   93 B         4096\n",
            "per_tensor_affine",
        ),
        (
            "quant_per_block_int4.hry",
            "  q_int4_blocks  int4 · per_block_affine  row_major  [4, 8]             2   32 B         4096\n",
            "per_block_affine",
        ),
    ] {
        let file = path(&dir, name);
        let out = inspect(&[], &file);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        assert!(stdout(&out).ends_with(row), "{name}: {}", stdout(&out));
        let v = ok_json(&["--json"], &file);
        assert_eq!(v["tensors"][0]["quantization"], scheme, "{name}");
    }
}

#[test]
fn csc_example_json() {
    let Some(dir) = corpus(INTEROP) else { return };
    let file = path(&dir, "csc_spec_example_f32.hry");
    let out = inspect(&["--json", "--validate"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_of(&out);
    assert_same(
        &v,
        &json!({
            "file": {"container_version": "1.0", "flags": ["HAS_INDEX_CRC32C"], "data_buffer_alignment": 4096},
            "kv": {},
            "kv_types": {},
            "tensors": [{
                "name": "csc_example", "dtype": "float32", "layout": "csc", "shape": [4, 5], "nnz": 5,
                "quantization": null,
                "buffers": [
                    {"role": "values", "element_type": "float32", "byte_size": 20, "alignment": 64, "offset": 4096},
                    {"role": "row_indices", "element_type": "uint64", "byte_size": 40, "alignment": 64, "offset": 8192},
                    {"role": "col_ptr", "element_type": "uint64", "byte_size": 48, "alignment": 64, "offset": 12288},
                ],
                "valid": true,
            }],
            "padding": {"valid": true},
        }),
        "csc_spec_example_f32",
    );
    // The same numbers as the manifest.
    let m = manifest(&dir);
    assert_same(
        &v,
        &expected_json(entry(&m, "csc_spec_example_f32.hry"), true),
        "manifest",
    );
}

#[test]
fn kv_all_types_json_matches_manifest() {
    let Some(dir) = corpus(INTEROP) else { return };
    let m = manifest(&dir);
    for name in ["kv_all_types.hry", "kv_all_types_flag_set.hry"] {
        let file = path(&dir, name);
        let out = inspect(&["--json"], &file);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let v = json_of(&out);
        let entries = entry(&m, name)["container"]["kv_entries"].as_array().unwrap();
        assert_eq!(v["kv"].as_object().unwrap().len(), entries.len());
        for e in entries {
            let key = e["key"].as_str().unwrap();
            assert_same(&v["kv"][key], &cli_value(&e["value"]), key);
        }
        // Spot checks of the conventions, spelled out.
        assert_eq!(v["kv"]["int64.min"], json!(i64::MIN));
        assert_eq!(v["kv"]["uint64.max"], json!(u64::MAX));
        assert_eq!(v["kv"]["float64.nan"], json!("nan"));
        assert_eq!(v["kv"]["float64.neg_infinity"], json!("-inf"));
        assert!(v["kv"]["float64.negative_zero"].as_f64().unwrap().is_sign_negative());
        assert_eq!(v["kv"]["bytes.small"], json!([0, 1, 127, 128, 255]));
        assert_eq!(v["kv"]["array.string"], json!(["a", "", "ü"]));
        // Keys in file order.
        let text = stdout(&out);
        let positions: Vec<usize> = entries
            .iter()
            .map(|e| text.find(&format!("\"{}\":", e["key"].as_str().unwrap())).unwrap())
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "KV keys out of file order");
    }
}

#[test]
fn kv_all_types_human_golden() {
    let Some(dir) = corpus(INTEROP) else { return };
    let file = path(&dir, "kv_all_types.hry");
    let out = inspect(&["--validate"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_golden(&out, "kv_all_types.validate.txt", &file);
}

#[test]
fn every_valid_interop_file_validates_and_matches_manifest() {
    let Some(dir) = corpus(INTEROP) else { return };
    let m = manifest(&dir);
    let valid: Vec<&Value> = files(&m).filter(|f| f["expect"] == "accept").collect();
    assert!(!valid.is_empty());
    for e in valid {
        let name = e["file"].as_str().unwrap();
        let file = path(&dir, name);
        let out = inspect(&["--validate"], &file);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{name}");
        assert!(!stdout(&out).contains("INVALID"), "{name}");
        let out = inspect(&["--json", "--validate"], &file);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        assert_same(&json_of(&out), &expected_json(e, true), name);
    }
}

#[test]
fn every_invalid_interop_file_fails_validation() {
    let Some(dir) = corpus(INTEROP) else { return };
    let m = manifest(&dir);
    let invalid: Vec<&Value> = files(&m).filter(|f| f["expect"] == "reject").collect();
    assert!(!invalid.is_empty());
    for e in invalid {
        let name = e["file"].as_str().unwrap();
        assert!(name.starts_with("invalid_"), "{name}");
        check_rejected(&path(&dir, name), e["offending_tensor"].as_str());
    }
}

/// `--validate` exits 1 with one error line; when the container opened, the
/// full report is still printed and shows the offending tensor invalid, in
/// the tables and in the JSON.
fn check_rejected(file: &Path, offending_tensor: Option<&str>) {
    let out = inspect(&["--validate"], file);
    let message = assert_one_error_line(&out, file);
    let opened = !out.stdout.is_empty();
    if opened {
        assert!(stdout(&out).contains("INVALID"), "{}: {}", file.display(), stdout(&out));
    }
    let out = inspect(&["--json", "--validate"], file);
    assert_eq!(assert_one_error_line(&out, file), message);
    if !opened {
        assert_json_failure(&out, &message);
    } else {
        let v = json_of(&out);
        let invalid: Vec<&Value> = v["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["valid"] == false)
            .collect();
        let padding_error = v["padding"]["error"].as_str();
        // The stderr line repeats the first problem of the report.
        let first = invalid.first().and_then(|t| t["error"].as_str()).or(padding_error);
        assert_eq!(first, Some(message.as_str()), "{}", file.display());
        if let Some(name) = offending_tensor {
            assert!(
                invalid.iter().any(|t| t["name"] == name),
                "{}: {name} not reported invalid",
                file.display()
            );
        }
    }
}

#[test]
fn cases_corpus_verdicts() {
    let Some(dir) = corpus(CASES) else { return };
    let m = manifest(&dir);
    let mut seen = 0;
    for e in files(&m) {
        let name = e["file"].as_str().unwrap();
        let file = path(&dir, name);
        match e["expect"].as_str() {
            Some("accept") => {
                let out = inspect(&["--validate"], &file);
                assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
                assert_eq!(stderr(&out), "", "{name}");
            }
            Some("reject") => check_rejected(&file, e["offending_tensor"]["name"].as_str()),
            other => panic!("{name}: expect {other:?}"),
        }
        seen += 1;
    }
    assert_eq!(seen, m["file_count"].as_u64().unwrap());
}

#[test]
fn cases_base_file_json_matches_manifest() {
    let Some(dir) = corpus(CASES) else { return };
    let m = manifest(&dir);
    for name in ["f0_base.hry", "f2_base.hry"] {
        let out = inspect(&["--json"], &path(&dir, name));
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_same(&json_of(&out), &expected_json(entry(&m, name), false), name);
    }
}

#[test]
fn csc_worked_example_fixture() {
    let file = path(&fixtures_dir(), "csc_worked_example.hry");
    let out = inspect(&["--json", "--validate"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // layouts/csc.md § Example: values 5 x 4 bytes, row_indices 5 x 8, col_ptr 6 x 8,
    // each buffer on the next 4096-byte boundary.
    assert_same(
        &json_of(&out)["tensors"],
        &json!([{
            "name": "A", "dtype": "float32", "layout": "csc", "shape": [4, 5], "nnz": 5, "quantization": null,
            "buffers": [
                {"role": "values", "element_type": "float32", "byte_size": 20, "alignment": 64, "offset": 4096},
                {"role": "row_indices", "element_type": "uint64", "byte_size": 40, "alignment": 64, "offset": 8192},
                {"role": "col_ptr", "element_type": "uint64", "byte_size": 48, "alignment": 64, "offset": 12288},
            ],
            "valid": true,
        }]),
        "csc_worked_example",
    );
}

#[test]
fn project_fixtures_match_their_manifest() {
    let dir = fixtures_dir();
    let m = manifest(&dir);
    for e in files(&m) {
        let name = e["file"].as_str().unwrap();
        let out = inspect(&["--json", "--validate"], &path(&dir, name));
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        let v = json_of(&out);
        let tensors = v["tensors"].as_array().unwrap();
        let expected = e["tensors"].as_array().unwrap();
        assert_eq!(tensors.len(), expected.len(), "{name}");
        for (t, x) in tensors.iter().zip(expected) {
            let at = format!("{name}: {}", x["name"]);
            assert_eq!(t["name"], x["name"], "{at}");
            assert_eq!(t["dtype"], x["element_type"], "{at}");
            assert_eq!(t["layout"], x["layout"], "{at}");
            assert_same(&t["shape"], &x["shape"], &at);
            assert_eq!(t["nnz"], x.get("nnz").cloned().unwrap_or(Value::Null), "{at}");
            assert_eq!(
                t["buffers"].as_array().unwrap().len(),
                x["buffers"].as_array().unwrap().len(),
                "{at}"
            );
            assert_eq!(t["valid"], true, "{at}");
        }
        let kv = e["container"]["kv_entries"].as_array().unwrap();
        assert_eq!(v["kv"].as_object().unwrap().len(), kv.len(), "{name}");
        for k in kv {
            let key = k["key"].as_str().unwrap();
            assert_same(&v["kv"][key], &cli_value(&k["value"]), &format!("{name}: {key}"));
        }
    }
}

#[test]
fn descriptor_error_without_validate_still_prints_the_table() {
    let Some(dir) = corpus(INTEROP) else { return };
    let file = path(&dir, "invalid_csc_rank3.hry");
    let out = inspect(&[], &file);
    let message = assert_one_error_line(&out, &file);
    assert!(message.starts_with("tensor 'bad_csc': rank"), "{message}");
    assert!(stdout(&out).contains("Unreadable tensors (1):"), "{}", stdout(&out));
    let out = inspect(&["--json"], &file);
    let v = json_of(&out);
    let t = &v["tensors"][0];
    assert_same(
        t,
        &json!({"name": "bad_csc", "dtype": "float32", "layout": "csc", "shape": [1, 4, 5], "nnz": 7,
                "quantization": null, "buffers": null, "error": message,
                "error_at": {"field": "rank", "offset": 80, "rule": "layouts/csc.md § Description"}}),
        "bad_csc",
    );
}

/// A tensor whose descriptor parses but whose buffers do not check out
/// still shows what the descriptor says; its buffer figures are `?`.
#[test]
fn unresolved_tensor_row_shows_its_descriptor() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/invalid/csc_values_size.hry");
    let out = inspect(&[], &file);
    let message = assert_one_error_line(&out, &file);
    assert_eq!(
        message,
        "tensor 't': buffer[0].byte_size (values) at offset 125: byte_size 16, expected 20 (layouts/csc.md § Buffer Size)"
    );
    let text = stdout(&out);
    assert!(
        text.contains("  t     float32  csc     [4, 5]    5        ?      ?         4096\n"),
        "{text}"
    );
    let out = inspect(&["--validate"], &file);
    assert!(
        stdout(&out).contains("  (padding)  SKIPPED  (a tensor's descriptor or buffers could not be located)\n"),
        "{}",
        stdout(&out)
    );
    let v = json_of(&inspect(&["--json"], &file));
    assert_same(
        &v["tensors"][0],
        &json!({"name": "t", "dtype": "float32", "layout": "csc", "shape": [4, 5], "nnz": 5,
                "quantization": null, "buffers": null, "error": message,
                "error_at": {"field": "buffer[0].byte_size", "offset": 125, "rule": "layouts/csc.md § Buffer Size"}}),
        "t",
    );
    // --tensor: the same facts, then the verdict; no buffer table.
    let out = inspect(&["--tensor", "t"], &file);
    assert_eq!(assert_one_error_line(&out, &file), message);
    let text = stdout(&out);
    assert!(
        text.starts_with(
            "Tensor: t\n  dtype   float32\n  layout  csc\n  rank    2\n  shape   [4, 5]\n  nnz     5\n  tensor  INVALID (see below)\n"
        ),
        "{text}"
    );
    assert!(text.contains(&format!("  ERROR  {message}\n")), "{text}");
    assert!(!text.contains("Buffers ("), "{text}");
    let v = json_of(&inspect(&["--tensor", "t", "--json"], &file));
    for (key, value) in [
        ("dtype", json!("float32")),
        ("layout", json!("csc")),
        ("shape", json!([4, 5])),
        ("nnz", json!(5)),
        ("buffers", Value::Null),
    ] {
        assert_eq!(v[key], value, "{key}");
    }
}

#[test]
fn permissive_keeps_an_unknown_layout() {
    let Some(dir) = corpus(INTEROP) else { return };
    let file = path(&dir, "invalid_layout_tag_unassigned_0x0c.hry");
    let strict = inspect(&["--validate"], &file);
    assert_one_error_line(&strict, &file);
    let out = inspect(&["--permissive", "--validate", "--json"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_of(&out);
    let b = v["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "tensor_b")
        .unwrap();
    assert_eq!(b["layout"], "unknown(0x0c)");
    // Its data was not checked: no verdict (the text reads SKIPPED).
    assert_eq!(b["valid"], Value::Null);
    // The unknown layout hides its buffer table: not located, not "none".
    assert_eq!(b["buffers"], Value::Null);
    assert_eq!(v["padding"], json!({"valid": null, "skipped": "permissive mode"}));
    let human = inspect(&["--permissive", "--validate"], &file);
    assert!(
        stdout(&human).contains("\n  tensor_b  float32  unknown(0x0c)  [5]                ?      ?        16384\n"),
        "{}",
        stdout(&human)
    );
    assert!(
        stdout(&human).contains("Validation (permissive mode):\n  tensor_a   OK\n  tensor_b   SKIPPED  (data not checked: its layout tag is not recognised"),
        "{}",
        stdout(&human)
    );
}

/// Permissive mode keeps a tensor with an unknown type tag; the table
/// names the tag as it names an unknown layout tag.
#[test]
fn permissive_names_an_unknown_type_tag() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/invalid/descriptor_type_tag_05.hry");
    let out = inspect(&["--permissive"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("\n  t     unknown(0x05)  row_major  [2, 2]             1   16 B         4096\n"),
        "{}",
        stdout(&out)
    );
    let v = json_of(&inspect(&["--permissive", "--json"], &file));
    assert_eq!(v["tensors"][0]["dtype"], "unknown(0x05)");
    assert_eq!(v["tensors"][0]["not_viewable"], Value::Null); // only with --validate

    // --validate: its data is not checked, so no verdict (null, SKIPPED),
    // and the exit status is 0.
    let v = json_of(&inspect(&["--permissive", "--validate", "--json"], &file));
    assert_eq!(v["tensors"][0]["valid"], Value::Null, "{v}");
    assert!(
        v["tensors"][0]["not_viewable"]
            .as_str()
            .is_some_and(|w| w.starts_with("its type tag is not recognised")),
        "{v}"
    );
    let out = inspect(&["--permissive", "--validate"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("\n  t          SKIPPED  (data not checked: its type tag is not recognised"),
        "{}",
        stdout(&out)
    );
    let v = json_of(&inspect(
        &["--permissive", "--validate", "--json", "--tensor", "t"],
        &file,
    ));
    assert_eq!(v["valid"], Value::Null, "{v}");
    let out = inspect(&["--permissive", "--validate", "--tensor", "t"], &file);
    assert!(
        stdout(&out).contains("\n  t  SKIPPED  (data not checked: its type tag"),
        "{}",
        stdout(&out)
    );
    // --tensor: the same name; the element count of a buffer of unknown
    // type is unknown, not 0.
    let out = inspect(&["--permissive", "--tensor", "t"], &file);
    let text = stdout(&out);
    assert!(text.starts_with("Tensor: t\n  dtype   unknown(0x05)\n"), "{text}");
    assert!(
        text.contains("\n  0  data  ?         ?  [4096, 4112)         16         64\n"),
        "{text}"
    );
    let v = json_of(&inspect(&["--permissive", "--tensor", "t", "--json"], &file));
    assert_eq!(v["dtype"], "unknown(0x05)");
    assert_eq!(v["buffers"][0]["count"], Value::Null);
    assert_eq!(v["buffers"][0]["byte_size"], 16);
}

/// An unknown layout tag (permissive) hides the buffer table: `--tensor`
/// says so instead of "0 buffers".
#[test]
fn permissive_tensor_detail_of_an_unknown_layout() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/invalid/descriptor_layout_tag_0c.hry");
    let out = inspect(&["--permissive", "--tensor", "t"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("\n  layout  unknown(0x0c)\n"), "{text}");
    assert!(
        text.contains("\n  data    ? (the buffer table is not interpreted)\n"),
        "{text}"
    );
    assert!(!text.contains("Buffers ("), "{text}");
    let v = json_of(&inspect(&["--permissive", "--tensor", "t", "--json"], &file));
    assert_eq!(v["layout"], "unknown(0x0c)");
    assert_eq!(v["buffers"], Value::Null);
    // --dump: the same; --head: a request that does not fit (exit 2).
    let out = inspect(&["--permissive", "--dump"], &file);
    assert!(
        stdout(&out).contains("\n(buffers not located: the layout's buffer table is not interpreted)\n"),
        "{}",
        stdout(&out)
    );
    let v = json_of(&inspect(&["--permissive", "--dump", "--json"], &file));
    assert_eq!(v["buffers"], Value::Null);
    assert_eq!(inspect(&["--permissive", "--head", "2"], &file).status.code(), Some(2));
}

/// Data the library says must not be interpreted (permissive: an unknown
/// type tag or quantization scheme) is not read by the data commands: a
/// request that does not fit (exit 2, naming --dump), as for an unknown
/// layout (naming --tensor); --dump shows the bytes in hex.
#[test]
fn data_commands_refuse_uninterpreted_data() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/invalid");
    for name in ["descriptor_type_tag_05.hry", "quant_scheme_tag_06.hry"] {
        let file = dir.join(name);
        for args in [&["--head", "2"][..], &["--get", "0,0"]] {
            let out = inspect(&[&["--permissive"][..], args].concat(), &file);
            assert_eq!(out.status.code(), Some(2), "{name} {args:?}: {}", stderr(&out));
            assert!(stderr(&out).contains("is not read: its"), "{}", stderr(&out));
            assert!(stderr(&out).ends_with("(--dump shows its bytes)\n"), "{}", stderr(&out));
        }
    }
    // An unknown type: the bytes in hex (2x2 float32 1, 2, 3, 4 under tag 0x05).
    let file = dir.join("descriptor_type_tag_05.hry");
    let out = inspect(&["--permissive", "--dump"], &file);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out).ends_with(
            "\nbuffer 0: data, ? x ?, 16 B at [4096, 4112)\n  \
             (not decoded: unknown element type; its bytes in hex)\n  \
             [0]  00 00 80 3f 00 00 00 40 00 00 40 40 00 00 80 40\n"
        ),
        "{}",
        stdout(&out)
    );
    let v = json_of(&inspect(&["--permissive", "--dump", "--json"], &file));
    assert_eq!(
        v["buffers"],
        json!([{"role": "data", "element_type": null, "byte_size": 16, "values": null,
                "bytes": "0000803f000000400000404000008040"}])
    );
    // An unknown layout: no buffers to show; the hint names --tensor.
    let file = dir.join("descriptor_layout_tag_0c.hry");
    let out = inspect(&["--permissive", "--head", "1"], &file);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).ends_with("(--tensor shows its descriptor)\n"),
        "{}",
        stderr(&out)
    );
}

/// A private extension type: up to 128 bits its elements are raw bits, all
/// digits kept; wider ones are not decoded (they used to keep their low 16
/// bytes): --dump shows their bytes, --head is refused with that hint.
#[test]
fn extension_types_print_their_bits_or_bytes() {
    use hurray_writer::{BufferData, BufferHandle, ElementType, ExtensionType, Layout, TensorDescriptor};
    let bytes: Vec<u8> = (1..=64).collect();
    let tensor = |tag: u8, bit_width: u32, len: u64| {
        TensorDescriptor::new(ElementType::Other(tag), Layout::RowMajor, vec![2])
            .with_buffer(BufferHandle::new(len))
            .with_extension_type(ExtensionType::integer(bit_width, false))
    };
    let (_dir, file) = written(|writer| {
        let narrow = tensor(0xF0, 24, 6);
        writer
            .write_tensor("narrow", &narrow, [BufferData::Bytes(&bytes[..6])])
            .unwrap();
        let wide = tensor(0xF1, 256, 64);
        writer.write_tensor("wide", &wide, [BufferData::Bytes(&bytes)]).unwrap();
    });

    let v = ok_json(&["--tensor", "narrow", "--head", "2", "--json"], &file);
    let values: Vec<&Value> = v["entries"].as_array().unwrap().iter().map(|e| &e["value"]).collect();
    assert_eq!(values, [&json!("0x030201"), &json!("0x060504")]);

    let out = inspect(&["--tensor", "wide", "--head", "1"], &file);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out)
            .ends_with("--head: tensor 'wide' is not read: elements wider than 128 bits (--dump shows its bytes)\n"),
        "{}",
        stderr(&out)
    );
    let out = inspect(&["--tensor", "wide", "--dump"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(
            "  (not decoded: elements wider than 128 bits; its bytes in hex)\n  \
             [0]  01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f 10\n"
        ),
        "{}",
        stdout(&out)
    );
    let v = ok_json(&["--tensor", "wide", "--dump", "--json"], &file);
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(v["buffers"][0]["values"], Value::Null);
    assert_eq!(v["buffers"][0]["bytes"], hex.as_str());
}

/// A composite head whose members break a rule is invalid, but its one
/// region (its descriptor) is known, so strict --validate still checks the
/// padding: it used to be skipped as if a descriptor could not be read.
#[test]
fn padding_is_checked_beside_a_broken_composite() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/invalid");
    for name in ["composite_partition_gap.hry", "composite_member_type.hry"] {
        let file = dir.join(name);
        let out = inspect(&["--validate", "--json"], &file);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stderr(&out));
        let v = json_of(&out);
        assert_eq!(v["tensors"][0]["valid"], false, "{name}: {v}");
        assert_eq!(v["padding"], json!({"valid": true}), "{name}: {v}");
    }
    // The same file with a padding byte set after the head's descriptor.
    let mut bytes = std::fs::read(dir.join("composite_partition_gap.hry")).unwrap();
    let file = hurray_reader::AlignedBytes::read(dir.join("composite_partition_gap.hry")).unwrap();
    let parsed = hurray_reader::HurrayFile::parse(&file, hurray_reader::Options::permissive()).unwrap();
    let head = &parsed.entries()[0];
    let gap = usize::try_from(head.descriptor_offset() + head.descriptor_length()).unwrap();
    assert_eq!(bytes[gap], 0);
    bytes[gap] = 0x5a;
    let damaged = std::env::temp_dir().join(format!("hurray-padding-composite-{}.hry", std::process::id()));
    std::fs::write(&damaged, &bytes).unwrap();
    let v = json_of(&inspect(&["--validate", "--json"], &damaged));
    std::fs::remove_file(&damaged).unwrap();
    assert_eq!(v["padding"]["valid"], false, "{v}");
    assert_eq!(v["padding"]["error_at"]["offset"], json!(gap), "{v}");
}

/// An implementation-private layout whose `extension_layout_id` the reader
/// does not recognise (it recognises none) is an error in strict mode
/// (`metadata.md` § Layout-Specific Fields › Extension Layouts); with
/// --permissive it is kept but its data cannot be checked: --validate says
/// SKIPPED (`valid: null`) and exits 0, where a composite head, which owns
/// no data, is OK.
#[test]
fn an_extension_layout_is_rejected_strictly_and_skipped_permissively() {
    use hurray_writer::{BufferData, BufferHandle, ElementType, Layout, TensorDescriptor};
    let private = Layout::Extension {
        tag: 0xF0,
        extension_layout_id: 7,
        extension_data: vec![1, 2, 3],
    };
    let (_dir, file) = written(|writer| {
        let t = TensorDescriptor::new(ElementType::Float32, private, vec![2]).with_buffer(BufferHandle::new(8));
        writer
            .write_tensor("private", &t, [BufferData::Bytes(&[0; 8])])
            .unwrap();
    });
    let out = inspect(&["--validate"], &file);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains(
            "tensor 'private': extension_layout_id at offset 100: value 7 is not allowed, expected an id the reader recognises"
        ),
        "{}",
        stderr(&out)
    );
    let out = inspect(&["--validate", "--permissive"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(
            "\n  private    SKIPPED  (data not checked: it uses an implementation-private layout (metadata.md § Layout-Specific Fields › Extension Layouts))\n"
        ),
        "{}",
        stdout(&out)
    );
    let v = ok_json(&["--validate", "--json", "--permissive"], &file);
    assert_eq!(v["tensors"][0]["valid"], Value::Null, "{v}");
    assert_eq!(v["tensors"][0]["layout"], "extension(0xf0)", "{v}");
    let v = ok_json(&["--validate", "--json", "--permissive", "--tensor", "private"], &file);
    assert_eq!(v["valid"], Value::Null, "{v}");
}

/// A name with control characters is chosen as the tool prints it
/// (`a\0b`): a command line cannot carry a NUL. The exact name wins.
#[test]
fn a_name_is_found_as_printed() {
    let values = [1.0f32, 2.0];
    let csc = hurray_writer::Csc::new(2, 2, &values, &[0, 1], &[0, 1, 2]).unwrap();
    let (_dir, file) = written(|writer| {
        for name in ["a\0b", "tab\there", r"tab\there"] {
            writer.write_csc(name, &csc).unwrap();
        }
    });

    // (given, the tensor's name as printed): the NUL name as printed; a
    // name typed exactly, even when it is another's printed form.
    for (given, printed) in [
        (r"a\0b", r"a\0b"),
        ("tab\there", r"tab\there"),
        (r"tab\there", r"tab\\there"),
        (r"tab\\there", r"tab\\there"),
    ] {
        let out = inspect(&["--tensor", given, "--get", "1,1"], &file);
        assert_eq!(out.status.code(), Some(0), "{given}: {}", stderr(&out));
        assert_eq!(
            stdout(&out),
            format!("{printed}[1, 1] = 2.0  (stored at position 1)\n"),
            "{given}"
        );
    }
}

/// A long name cut as the summary table prints it (`...`) or as an error
/// line does (`... (N bytes)`) finds the one tensor whose name starts so;
/// a cut that fits several is not a name.
#[test]
fn a_cut_name_finds_its_tensor() {
    let values = [1.0f32, 2.0];
    let csc = hurray_writer::Csc::new(2, 2, &values, &[0, 1], &[0, 1, 2]).unwrap();
    let long = |tail: &str| format!("{}{tail}", "layer.".repeat(20));
    let (_dir, file) = written(|writer| {
        for name in [long("weight"), long("bias"), "other".to_owned()] {
            writer.write_csc(&name, &csc).unwrap();
        }
    });
    let out = inspect(&[], &file);
    let summary = stdout(&out);
    let cut_in_table = summary
        .split_whitespace()
        .find(|w| w.ends_with("..."))
        .unwrap_or_else(|| panic!("no cut name in\n{summary}"))
        .to_owned();
    // Both long names start with the 45 characters the table shows.
    let out = inspect(&["--tensor", &cut_in_table, "--get", "1,1"], &file);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is how several tensor names print cut; give the whole name"),
        "{}",
        stderr(&out)
    );

    // The error line lists the names cut at 64 characters, which tells
    // them apart.
    let listed = stderr(&out);
    let by_error_line = format!("{}... ({} bytes)", &long("bias")[..64], long("bias").len());
    assert!(listed.contains(&by_error_line), "{listed}");
    let weight = format!("{}... ({} bytes)", &long("weight")[..64], long("weight").len());
    for (given, name) in [(by_error_line, long("bias")), (weight, long("weight"))] {
        let v = ok_json(&["--json", "--tensor", &given, "--get", "1,1"], &file);
        assert_eq!((&v["name"], &v["value"]), (&json!(name), &json!(2.0)), "{given}");
    }
    // `...` is not a wildcard: only a cut the tool prints is a name.
    for given in ["oth...", &format!("{}...", &long("weight")[..50])] {
        let out = inspect(&["--tensor", given, "--get", "1,1"], &file);
        assert_eq!(out.status.code(), Some(2), "{given}: {}", stderr(&out));
    }
}

/// Usage errors name a long tensor as error lines do, cut (they printed
/// a 65535-byte name whole), and that form selects the tensor.
#[test]
fn usage_errors_cut_a_long_name() {
    let values = [1.0f32, 2.0];
    let csc = hurray_writer::Csc::new(2, 2, &values, &[0, 1], &[0, 1, 2]).unwrap();
    let name = "h".repeat(65535);
    let (_dir, file) = written(|writer| writer.write_csc(&name, &csc).unwrap());
    let cut = format!("{}... (65535 bytes)", "h".repeat(64));
    for args in [
        &["--get", "9,9"][..],
        &["--get", "0"],
        &["--column", "9"],
        &["--row", "0"],
    ] {
        let out = inspect(&[&["--tensor", cut.as_str()][..], args].concat(), &file);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert!(err.len() < 400 && err.contains(&format!("'{cut}'")), "{args:?}: {err}");
    }
}

/// A dense buffer whose `byte_offset` falls inside an element (float6,
/// offset 1: the 3-byte groups start at byte 1) is read from there:
/// `--dump`, `--get`, `--head` and `--validate` all see 1.0 1.5 -2.0 3.0.
/// It used to be printed from byte 0 (0.0 -0.0 -2.0 0.0), then shown as
/// bytes and refused by the other commands.
#[test]
fn float6_byte_offset_inside_a_group_is_read() {
    use hurray_writer::{BufferData, BufferHandle, ElementType, Layout, TensorDescriptor};
    let stored = [
        0x00u8,
        0x08 | (0x0C << 6),
        (0x0C >> 2) | (0x30 << 4),
        (0x30 >> 4) | (0x14 << 2),
    ];
    let d = TensorDescriptor::new(ElementType::Float6E2M3, Layout::RowMajor, vec![4])
        .with_buffer(BufferHandle::new(4))
        .with_byte_offset(1);
    let (_dir, file) = written(|writer| writer.write_tensor("t", &d, vec![BufferData::Bytes(&stored)]).unwrap());
    let out = inspect(&["--dump"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(
            "  (elements from byte 1: byte_offset 1 is not a whole number of 3-byte groups)\n  [0]  1.0  1.5  -2.0  3.0\n"
        ),
        "{text}"
    );
    let v = ok_json(&["--dump", "--json"], &file);
    assert_eq!(
        (&v["buffers"][0]["element_start"], &v["buffers"][0]["values"]),
        (&json!(1), &json!([1.0, 1.5, -2.0, 3.0])),
        "{v}"
    );
    let out = inspect(&["--get", "2"], &file);
    assert_eq!(
        (out.status.code(), stdout(&out)),
        (Some(0), "t[2] = -2.0  (element at position 2)\n"),
        "{}",
        stderr(&out)
    );
    let v = ok_json(&["--json", "--head", "4"], &file);
    let values: Vec<&Value> = v["entries"].as_array().unwrap().iter().map(|e| &e["value"]).collect();
    assert_eq!(values, [&json!(1.0), &json!(1.5), &json!(-2.0), &json!(3.0)], "{v}");
    let validated = ok_json(&["--validate", "--json"], &file);
    assert_eq!(validated["tensors"][0]["not_viewable"], Value::Null, "{validated}");
}

/// complex64 [3] at `byte_offset` 4 (half an element): `--get` and
/// `--dump` print the stored (re, im) pairs, exit 0.
#[test]
fn complex64_byte_offset_inside_an_element_is_read() {
    use hurray_writer::{BufferData, BufferHandle, ElementType, Layout, TensorDescriptor};
    let mut stored = vec![0xEEu8; 4];
    for v in [1.0f32, -2.0, 3.5, 0.25, -0.5, 8.0] {
        stored.extend(v.to_le_bytes());
    }
    let d = TensorDescriptor::new(ElementType::Complex64, Layout::RowMajor, vec![3])
        .with_buffer(BufferHandle::new(28))
        .with_byte_offset(4);
    let (_dir, file) = written(|writer| writer.write_tensor("t", &d, vec![BufferData::Bytes(&stored)]).unwrap());
    let out = inspect(&["--get", "1"], &file);
    assert_eq!(
        (out.status.code(), stdout(&out)),
        (Some(0), "t[1] = 3.5+0.25i  (element at position 1)\n"),
        "{}",
        stderr(&out)
    );
    let v = ok_json(&["--json", "--get", "2"], &file);
    assert_eq!((&v["position"], &v["value"]), (&json!(2), &json!([-0.5, 8.0])), "{v}");
    let out = inspect(&["--dump"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(
            "buffer 0: data, complex64 x 3, 28 B at [4096, 4124)\n  (elements from byte 4: byte_offset 4 is not a whole number of elements)\n  [0]  1.0-2.0i  3.5+0.25i  -0.5+8.0i\n"
        ),
        "{text}"
    );
    let v = ok_json(&["--dump", "--json"], &file);
    assert_eq!(
        v["buffers"][0]["values"],
        json!([[1.0, -2.0], [3.5, 0.25], [-0.5, 8.0]]),
        "{v}"
    );
    let out = inspect(&["--validate"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[test]
fn dash_reads_stdin() {
    let Some(dir) = corpus(INTEROP) else { return };
    let file = path(&dir, "csc_spec_example_f32.hry");
    let bytes = std::fs::read(&file).unwrap();
    for flags in [&[][..], &["--json", "--validate"][..]] {
        let piped = bin().args(flags).arg("-").write_stdin(bytes.clone()).output().unwrap();
        assert_eq!(piped.status.code(), Some(0), "{}", stderr(&piped));
        let mapped = inspect(flags, &file);
        let rename = |s: &str| s.replace(&file.display().to_string(), "<stdin>");
        assert_eq!(stdout(&piped), rename(stdout(&mapped)));
    }
}

/// The line refusing a path that is not a regular file, as `what` (`cannot
/// map`, or with `--no-mmap` `cannot read`) says it.
fn refusal(path: &Path, what: &str, kind: &str) -> String {
    format!(
        "error: {}: {what}: not a regular file ({kind}): give a stream on standard input instead (hurray-inspect - < FILE)\n",
        path.display()
    )
}

/// A path that is not a regular file is refused at once, exit 1 and one
/// line, mapped or not: a FIFO nobody writes to (a plain open would wait
/// for a writer forever), a pipe named by a path (`/dev/stdin`), a
/// character device (`/dev/null`, `/dev/zero`), a socket (which cannot be
/// opened at all). The timeout fails the test if anything waits.
#[cfg(target_os = "linux")]
#[test]
fn a_path_that_is_not_a_regular_file_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("f.hry");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let run = |args: &[&str], path: &Path| {
        bin()
            .args(args)
            .arg(path)
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .unwrap()
    };
    for (args, what) in [
        (&[][..], "cannot map"),
        (&["--no-mmap", "--validate"][..], "cannot read"),
    ] {
        for (path, kind) in [
            (fifo.as_path(), "a FIFO"),
            (Path::new("/dev/null"), "a character device"),
            (Path::new("/dev/zero"), "a character device"),
        ] {
            let out = run(args, path);
            assert_eq!(out.status.code(), Some(1), "{args:?} {}", path.display());
            assert_eq!(stderr(&out), refusal(path, what, kind), "{args:?}");
            assert!(out.stdout.is_empty());
        }
        // `/dev/stdin` is the pipe that feeds it.
        let out = bin()
            .args(args)
            .arg("/dev/stdin")
            .write_stdin("HRRYFILE")
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(stderr(&out), refusal(Path::new("/dev/stdin"), what, "a FIFO"));
    }
    let socket = dir.path().join("s.hry");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let out = run(&[], &socket);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!(
            "error: {}: cannot open: No such device or address (os error 6): give a stream on standard input \
             instead (hurray-inspect - < FILE)\n",
            socket.display()
        )
    );
    // With --json the refusal is the error object too.
    let out = run(&["--json"], &fifo);
    assert_eq!(out.status.code(), Some(1));
    let message = refusal(&fifo, "cannot map", "a FIFO");
    let message = message.trim_end().strip_prefix("error: ").unwrap();
    assert_eq!(json_of(&out), json!({ "error": message }));
}

/// Standard input is read into memory up to `--stdin-limit` bytes (4 GiB
/// unless raised): exactly the limit is read, one byte more is refused
/// with exit 1 and one line naming the flag. With `--no-mmap`, standard
/// input redirected from a file is read, within the limit, not mapped.
#[test]
fn stdin_is_read_up_to_its_limit() {
    let file = fixtures_dir().join("csc_worked_example.hry");
    let bytes = std::fs::read(&file).unwrap();
    let size = bytes.len().to_string();
    let below = (bytes.len() - 1).to_string();
    let by_path = inspect(&["--validate"], &file);
    let expected = stdout(&by_path).replace(&file.display().to_string(), "<stdin>");
    for limit in [&size[..], "17K", "4G"] {
        let out = bin()
            .args(["--validate", "--stdin-limit", limit, "-"])
            .write_stdin(bytes.clone())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{limit}: {}", stderr(&out));
        assert_eq!(stdout(&out), expected, "{limit}");
    }
    let refused = format!(
        "error: <stdin>: more than {below} bytes, the --stdin-limit: raise it (--stdin-limit SIZE, e.g. 16G) or give the file's path\n"
    );
    let out = bin()
        .args(["--validate", "--stdin-limit", &below, "-"])
        .write_stdin(bytes.clone())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr(&out), refused);
    assert!(out.stdout.is_empty());
    // Redirected from the file: mapped whatever the limit, read within it with --no-mmap.
    let redirected = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_hurray-inspect"))
            .args(args)
            .stdin(std::fs::File::open(&file).unwrap())
            .output()
            .unwrap()
    };
    let out = redirected(&["--validate", "--stdin-limit", &below, "-"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), expected);
    let out = redirected(&["--validate", "--no-mmap", "--stdin-limit", &size, "-"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), expected);
    let out = redirected(&["--validate", "--no-mmap", "--stdin-limit", &below, "-"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr(&out), refused);
}

/// `--no-mmap` reads the file into memory: every file of both corpora
/// gives the same output, error line and exit status as the mapped file,
/// for the summary and for `--validate`, in text and JSON.
#[test]
fn no_mmap_gives_the_same_verdicts_on_the_whole_corpus() {
    for var in [INTEROP, CASES] {
        let Some(dir) = corpus(var) else { continue };
        let m = manifest(&dir);
        let mut compared = 0;
        for e in files(&m) {
            let file = path(&dir, e["file"].as_str().unwrap());
            for args in [&[][..], &["--validate"], &["--json"], &["--json", "--validate"]] {
                let mapped = inspect(args, &file);
                let mut read = args.to_vec();
                read.push("--no-mmap");
                let read = inspect(&read, &file);
                assert_eq!(
                    (read.status.code(), stdout(&read), stderr(&read)),
                    (mapped.status.code(), stdout(&mapped), stderr(&mapped)),
                    "{args:?} {}",
                    file.display()
                );
                let expect = e["expect"].as_str().unwrap();
                let code = if expect == "accept" { 0 } else { 1 };
                if args.contains(&"--validate") {
                    assert_eq!(read.status.code(), Some(code), "{args:?} {}", file.display());
                }
            }
            compared += 1;
        }
        assert_eq!(compared, m["file_count"].as_u64().unwrap(), "{var}");
    }
    let fixture = fixtures_dir().join("csc_worked_example.hry");
    let out = inspect(&["--no-mmap", "--validate"], &fixture);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), stdout(&inspect(&["--validate"], &fixture)));
}

/// `--no-mmap` on a large file that is not a Hurray file (1 GiB of zeros,
/// sparse: no disk used) rejects it on the magic after its first 104 bytes,
/// with the line and exit status of the mapped path, in text and JSON.
/// (Before, it read the whole file into memory first: seconds and 2 GB of
/// memory for a 2 GB file. That it reads no more than those bytes is shown
/// in the library's tests, `aligned.rs`, with a reader that counts.)
#[test]
fn no_mmap_rejects_a_large_non_hurray_file_on_its_magic() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("zeros.hry");
    std::fs::File::create(&file).unwrap().set_len(1 << 30).unwrap();
    let expected = format!(
        "error: {}: magic at offset 0: expected HRRYFILE, found \"{}\" (file-format.md § File Header)\n",
        file.display(),
        "\\x00".repeat(8)
    );
    for args in [&[][..], &["--validate"], &["--json", "--validate"]] {
        let mapped = inspect(args, &file);
        let mut no_mmap = args.to_vec();
        no_mmap.push("--no-mmap");
        let read = inspect(&no_mmap, &file);
        assert_eq!(read.status.code(), Some(1), "{args:?}");
        assert_eq!(stderr(&read), expected, "{args:?}");
        assert!(args.contains(&"--json") || read.stdout.is_empty(), "{args:?}");
        assert_eq!(
            (read.status.code(), stdout(&read), stderr(&read)),
            (mapped.status.code(), stdout(&mapped), stderr(&mapped)),
            "{args:?}"
        );
    }
}

/// Standard input that cannot be read is named `<stdin>`, as in every other
/// message (it was `-`).
#[cfg(target_os = "linux")]
#[test]
fn unreadable_stdin_is_named_stdin() {
    let dir = std::fs::File::open(env!("CARGO_MANIFEST_DIR")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hurray-inspect"))
        .arg("-")
        .stdin(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).starts_with("error: <stdin>: cannot read: Is a directory"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn empty_stdin_is_a_bad_file() {
    let out = bin().arg("-").write_stdin("").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: <stdin>: file size 0: the file ends at offset 0, below the minimum 104 bytes"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn missing_file_exits_1_with_one_line() {
    let missing = std::env::temp_dir().join(format!("hurray-inspect-no-such-file-{}.hry", std::process::id()));
    let out = inspect(&[], &missing);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ") && err.contains(&missing.display().to_string()),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn usage_errors_exit_2() {
    // As docs/cli.md says: an unknown flag or a missing FILE prints the
    // usage line, a rejected value only the --help hint.
    let hint = "For more information, try '--help'.\n";
    let usage = "\nUsage: hurray-inspect ";
    for (args, with_usage) in [
        (&["--bogus", "x.hry"][..], true),
        (&[], true),
        (&["x.hry", "--head", "x"], false),
        (&["x.hry", "--threads", "0"], false),
        // --threads without --validate, which alone uses it.
        (&["x.hry", "--threads", "2"], true),
    ] {
        let out = bin().args(args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(err.starts_with("error: ") && err.ends_with(hint), "{args:?}: {err}");
        assert_eq!(err.contains(usage), with_usage, "{args:?}: {err}");
    }
}

/// A file written by `hurray-writer` into a fresh temporary folder (kept
/// while the returned guard lives).
fn written(write: impl FnOnce(&mut hurray_writer::FileWriter<Vec<u8>>)) -> (tempfile::TempDir, std::path::PathBuf) {
    let mut writer = hurray_writer::FileWriter::new(Vec::new(), hurray_writer::WriterOptions::default()).unwrap();
    write(&mut writer);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("written.hry");
    std::fs::write(&file, writer.finish().unwrap()).unwrap();
    (dir, file)
}

/// `--column` streams: a column longer than `--head`'s bound (1048576) is
/// listed whole, in text and JSON, widths set by its widest (last) row.
#[test]
fn a_long_column_is_listed_whole() {
    const N: u64 = (1 << 20) + 3;
    let rows: Vec<u64> = (0..N).chain([5]).collect();
    let values: Vec<f32> = (0..N).map(|r| r as f32).chain([-1.0]).collect();
    let csc = hurray_writer::Csc::new(N + 10, 2, &values, &rows, &[0, N, N + 1]).unwrap();
    let (_dir, file) = written(|writer| {
        writer.write_csc("long", &csc).unwrap();
    });

    let out = inspect(&["--column", "0"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len() as u64, N + 2);
    assert_eq!(lines[1], "Column 0: 1048579 stored entries (positions 0..1048579):");
    assert_eq!(lines[2], "  (0, 0)        0.0");
    assert_eq!(lines.last(), Some(&"  (1048578, 0)  1048578.0"));

    let out = inspect(&["--column", "0", "--json"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_of(&out);
    assert_eq!(v["positions"], json!([0, N]));
    let entries = v["entries"].as_array().unwrap();
    assert_eq!(entries.len() as u64, N);
    for (k, e) in (0..).zip(entries) {
        let (index, position, value) = (&e["index"], &e["position"], &e["value"]);
        assert!(
            index[0] == k && index[1] == 0 && *position == k && value.as_f64() == Some(k as f64),
            "{e}"
        );
    }
    let v = ok_json(&["--column", "1", "--json"], &file);
    assert_eq!(v["entries"], json!([{"index": [5, 1], "position": N, "value": -1.0}]));
}

/// `--head` collects its entries before printing, so it is bounded.
#[test]
fn head_is_bounded() {
    let fixture = path(&fixtures_dir(), "csc_worked_example.hry");
    let out = bin().arg(&fixture).args(["--head", "1048577"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(
            "'--head <N>': --head lists at most 1048576 entries (they are held in memory); \
             --dump streams every value"
        ),
        "{}",
        stderr(&out)
    );
    let out = bin().arg(&fixture).args(["--head", "1048576"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("First 5 of 5 stored entries"), "{}", stdout(&out));
}

#[test]
fn help_shows_an_example_per_flag() {
    let out = bin().arg("--help").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let help = stdout(&out);
    for example in [
        "hurray-inspect --validate ",
        "hurray-inspect --json ",
        "hurray-inspect --permissive ",
        "| hurray-inspect -",
        "hurray-inspect --no-mmap ",
        "--stdin-limit 16G",
    ] {
        assert!(help.contains(example), "no `{example}` in --help:\n{help}");
    }
    // When to use --no-mmap, in its own help.
    let no_mmap = help.split("--no-mmap\n").nth(1).unwrap();
    assert!(
        no_mmap.contains("truncated or rewritten while it is read") && no_mmap.contains("ends the process with SIGBUS"),
        "{no_mmap}"
    );
}

/// A stream that does not start like a Hurray file is rejected after its
/// first bytes, not read to the end (`/dev/zero` on standard input never
/// ends).
#[cfg(unix)]
#[test]
fn endless_stream_is_rejected_on_its_magic() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hurray-inspect"))
        .arg("-")
        .stdin(std::fs::File::open("/dev/zero").unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "error: <stdin>: magic at offset 0: expected HRRYFILE, found \"\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\" (file-format.md § File Header)\n"
    );
}

#[test]
fn a_directory_is_named_as_such() {
    let dir = fixtures_dir();
    let out = bin().arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).ends_with(": cannot map: is a directory\n"),
        "{}",
        stderr(&out)
    );
}

/// `--json` gives where an error points beside its message: `error_at`
/// with the field, the offset and the rule, for a tensor's data
/// (`--tensor --validate`) and for the padding check.
#[test]
fn json_errors_carry_field_offset_and_rule() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/invalid");
    let v = json_of(&inspect(
        &["--json", "--validate", "--tensor", "t"],
        &dir.join("csc_indices_unsorted.hry"),
    ));
    assert_eq!(
        v["error_at"],
        json!({"field": "row_indices[1]", "offset": 8200, "rule": "layouts/csc.md § Storage Invariants (3)"})
    );
    assert!(
        v["error"].as_str().unwrap().contains("row_indices[1] at offset 8200"),
        "{v}"
    );
    let v = json_of(&inspect(
        &["--json", "--validate"],
        &dir.join("padding_between_buffers.hry"),
    ));
    assert_eq!(v["padding"]["valid"], json!(false));
    assert_eq!(v["padding"]["error_at"]["field"], json!("padding"));
    assert_eq!(v["padding"]["error_at"]["offset"], json!(4196));
    assert_eq!(
        v["padding"]["error"],
        json!("tensor 't': padding at offset 4196: a padding byte is 0x01; padding must be 0x00 (file-format.md § Alignment and Padding Summary (padding bytes are 0x00))")
    );
}

/// `- < file.hry`: standard input redirected from a regular file is mapped
/// (not read into memory) and reads as the path does; a handle someone has
/// already read from is read as a stream from where it stands.
#[cfg(unix)]
#[test]
fn stdin_redirected_from_a_file_reads_as_the_path() {
    use std::io::{Seek, SeekFrom};
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/csc_worked_example.hry");
    let run = |stdin: std::fs::File| {
        std::process::Command::new(env!("CARGO_BIN_EXE_hurray-inspect"))
            .args(["--validate", "-"])
            .stdin(stdin)
            .output()
            .unwrap()
    };
    let out = run(std::fs::File::open(&file).unwrap());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let by_path = inspect(&["--validate"], &file);
    assert_eq!(
        stdout(&out),
        stdout(&by_path).replace(&file.display().to_string(), "<stdin>")
    );
    let mut advanced = std::fs::File::open(&file).unwrap();
    advanced.seek(SeekFrom::Start(8)).unwrap();
    let out = run(advanced);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).starts_with("error: <stdin>: magic at offset 0: expected HRRYFILE"),
        "{}",
        stderr(&out)
    );
}

/// A quantized tensor: `--dump` shows a shared `[scales | zero_points]`
/// parameter buffer as its two arrays, each decoded with its own type (it
/// used to print hex, as if the buffer's type were unknown), and `--get`
/// and `--head` add each element's dequantized value.
#[test]
fn a_quantized_tensor_dumps_its_parameters_and_gets_real_values() {
    use hurray_writer::quant::PerChannelAffine;
    let payload = PerChannelAffine {
        axis: 0,
        scale_buffer_index: 1,
        zero_point_buffer_index: Some(1),
    }
    .encode();
    let d = hurray_writer::TensorDescriptor::row_major(hurray_writer::ElementType::UInt8, vec![2, 3])
        .unwrap()
        .with_quantization(payload)
        .with_buffer(hurray_writer::BufferHandle::new(16));
    let params: Vec<u8> = [0.5f32, 0.25]
        .iter()
        .flat_map(|s| s.to_le_bytes())
        .chain([7i32, 200].iter().flat_map(|z| z.to_le_bytes()))
        .collect();
    let (_dir, file) = written(|writer| {
        let data = [1u8, 2, 3, 4, 5, 6];
        let buffers = [
            hurray_writer::BufferData::Bytes(&data),
            hurray_writer::BufferData::Bytes(&params),
        ];
        writer.write_tensor("q", &d, buffers).unwrap();
    });

    // The summary names the scheme beside the element type, and its JSON
    // buffers carry their role and type (null for the shared parameters).
    let out = inspect(&[], &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).ends_with(
            "  NAME  DTYPE                       LAYOUT     SHAPE   NNZ  BUFFERS  BYTES  DATA OFFSET\n\
             \x20 q     uint8 · per_channel_affine  row_major  [2, 3]             2   22 B         4096\n"
        ),
        "{}",
        stdout(&out)
    );
    let v = ok_json(&["--json"], &file);
    assert_eq!(v["tensors"][0]["dtype"], "uint8");
    assert_eq!(v["tensors"][0]["quantization"], "per_channel_affine");
    assert_eq!(
        v["tensors"][0]["buffers"],
        json!([
            {"role": "data", "element_type": "uint8", "byte_size": 6, "alignment": 64, "offset": 4096},
            {"role": "scales_and_zero_points", "element_type": null, "byte_size": 16, "alignment": 64, "offset": 8192},
        ])
    );

    let out = inspect(&["--dump"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().skip(3).collect();
    assert_eq!(
        lines,
        [
            "buffer 1: scales_and_zero_points, 16 B at [8192, 8208): the scales, then the zero points",
            "buffer 1 scales, float32 x 2, 8 B at [8192, 8200)",
            "  [0]  0.5  0.25",
            "buffer 1 zero_points, int32 x 2, 8 B at [8200, 8208)",
            "  [0]  7  200",
        ]
    );

    let out = inspect(&["--dump", "--json"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let dump: Value = serde_json::from_str(stdout(&out)).unwrap();
    assert_eq!(
        dump["buffers"][1],
        json!({
            "role": "scales_and_zero_points", "element_type": null, "byte_size": 16, "values": null,
            "parts": [
                {"role": "scales", "element_type": "float32", "byte_size": 8, "values": [0.5, 0.25]},
                {"role": "zero_points", "element_type": "int32", "byte_size": 8, "values": [7, 200]},
            ]
        })
    );

    // --get gives the stored code and its real value: channel 1 (row 1),
    // scale 0.25, zero point 200.
    let out = inspect(&["--get", "1,2"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "q[1, 2] = 6  (element at position 5; dequantized -48.5)\n"
    );
    let out = inspect(&["--get", "0,0", "--json"], &file);
    let get: Value = serde_json::from_str(stdout(&out)).unwrap();
    assert_eq!((&get["value"], &get["dequantized"]), (&json!(1), &json!(-3.0)));

    // --head lists codes and real values: row 0 has scale 0.5, zero point 7.
    let out = inspect(&["--head", "2"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines: Vec<&str> = stdout(&out).lines().skip(2).collect();
    assert_eq!(
        lines,
        ["  (0, 0)  1  (dequantized -3.0)", "  (0, 1)  2  (dequantized -2.5)"]
    );
    let out = inspect(&["--head", "4", "--json"], &file);
    let head: Value = serde_json::from_str(stdout(&out)).unwrap();
    let real: Vec<&Value> = head["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["dequantized"])
        .collect();
    assert_eq!(real, [&json!(-3.0), &json!(-2.5), &json!(-2.0), &json!(-49.0)]);
}

/// A file name with control characters is shown escaped, on stdout and in
/// errors, as tensor names are: a name cannot send escape sequences to the
/// terminal (it went out raw; found by a fresh-user review).
#[test]
fn control_characters_in_a_path_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let valid = dir.path().join("a\u{1b}[31mz.hry");
    std::fs::copy(fixtures_dir().join("empty.hry"), &valid).unwrap();
    let out = inspect(&[], &valid);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).starts_with(&format!("File: {}/a\\u{{1b}}[31mz.hry\n", dir.path().display())));
    assert!(!out.stdout.contains(&0x1b));

    let missing = dir.path().join("b\u{7}.hry");
    let out = inspect(&[], &missing);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("b\\u{7}.hry: cannot open"), "{}", stderr(&out));
    assert!(!out.stderr.contains(&0x07));
}

/// `--column` of a quantized CSC matrix (the interop corpus's int8,
/// per-tensor scale 0.25, zero point -3) lists each stored code with its
/// dequantized value, as the manifest's `dequantized_dense` has them.
#[test]
fn a_quantized_column_lists_real_values() {
    let Some(dir) = corpus(INTEROP) else {
        return;
    };
    let file = dir.join("csc_quant_per_tensor_int8.hry");
    let out = inspect(&["--column", "3"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).lines().last(),
        Some("  (0, 3)  -128  (dequantized -31.25)")
    );
    let mut real = Vec::new();
    for j in 0..5 {
        let out = inspect(&["--column", &j.to_string(), "--json"], &file);
        let column: Value = serde_json::from_str(stdout(&out)).unwrap();
        for e in column["entries"].as_array().unwrap() {
            real.push((e["index"].clone(), e["dequantized"].as_f64().unwrap()));
        }
    }
    let want = [
        ([0, 0], 2.0),
        ([2, 1], 0.0),
        ([1, 2], 25.75),
        ([0, 3], -31.25),
        ([2, 4], 32.5),
    ];
    assert_eq!(real, want.map(|(i, x)| (json!(i), x)));
}

/// What permissive mode accepts but strict mode rejects is shown, not
/// silent: a statistics `nnz` that disagrees with the descriptor's is a
/// WARNING line and a `warnings` entry (summary and --tensor), and the
/// bytes after a descriptor's last field are listed as `(skipped)`.
#[test]
fn permissive_relaxations_are_shown() {
    let invalid = fixtures_dir().join("invalid");
    let file = path(&invalid, "statistics_sparse_nnz_mismatch.hry");
    let warning = "statistics nnz is 4, but the descriptor's nnz is 5: accepted by permissive mode, \
                   which uses the descriptor's (strict mode rejects it)";
    let out = inspect(&["--validate", "--permissive"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!("\n  t          WARNING  {warning}\n")),
        "{}",
        stdout(&out)
    );
    let v = ok_json(&["--validate", "--permissive", "--json"], &file);
    assert_eq!(v["tensors"][0]["warnings"], json!([warning]), "{v}");
    let v = ok_json(&["--validate", "--permissive", "--json", "--tensor", "t"], &file);
    assert_eq!(v["warnings"], json!([warning]), "{v}");
    let v = ok_json(&["--permissive", "--json", "--tensor", "t"], &file);
    assert!(v.get("warnings").is_none(), "only with --validate: {v}");

    let file = path(&invalid, "descriptor_trailing_bytes.hry");
    let v = ok_json(&["--permissive", "--json", "--tensor", "t"], &file);
    let last = v["descriptor"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        last,
        json!({"field": "(skipped)", "offset": 125, "bytes": "0000000000000000",
               "meaning": "skipped: past the fields this version defines (newer minor version, or permissive mode)"})
    );
}

/// A statistics block that breaks a field rule (`value_stddev` below 0.0,
/// `metadata.md` § Statistics Section › Field Encoding) is an error in
/// strict mode; with --permissive the tensor is accepted and the broken
/// rule shown as a WARNING line and a `warnings` entry.
#[test]
fn a_statistics_rule_permissive_mode_accepts_is_a_warning() {
    let file = path(&fixtures_dir().join("invalid"), "statistics_value_stddev_negative.hry");
    let out = inspect(&["--validate"], &file);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let warning = "statistics.value_stddev at offset 181: value -1.0 is not allowed, expected a standard \
                   deviation >= 0.0 (not NaN) (metadata.md § Statistics Section › Field Encoding): accepted by \
                   permissive mode, which keeps the advisory block (strict mode rejects it)";
    let out = inspect(&["--validate", "--permissive"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!("\n  t          WARNING  {warning}\n")),
        "{}",
        stdout(&out)
    );
    let v = ok_json(&["--validate", "--permissive", "--json"], &file);
    assert_eq!(v["tensors"][0]["warnings"], json!([warning]), "{v}");
    let v = ok_json(&["--validate", "--permissive", "--json", "--tensor", "t"], &file);
    assert_eq!(v["warnings"], json!([warning]), "{v}");
}

/// `buffer-protocol.md` § Alignment › Page Alignment for GPU and IPC: a
/// writer targeting GPU or IPC transport must declare an alignment of at
/// least 4096. The reader cannot know the target, so a non-empty CUDA
/// buffer declaring 64 is accepted in both modes and reported: a WARNING
/// line under --validate and a `warnings` entry (summary and --tensor);
/// a CPU buffer declaring 64 is not reported.
#[test]
fn a_gpu_buffer_below_page_alignment_is_a_warning() {
    use hurray_writer::{BufferData, BufferHandle, ElementType, Layout, TensorDescriptor};
    let values: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    let (_dir, file) = written(|writer| {
        for (name, device) in [("cpu", 0x00), ("gpu", 0x01)] {
            let t = TensorDescriptor::new(ElementType::Float32, Layout::RowMajor, vec![2, 2])
                .with_buffer(BufferHandle::new(16).with_device_tag(device));
            writer.write_tensor(name, &t, [BufferData::Bytes(&values)]).unwrap();
        }
    });
    // Tensor 'gpu' is the second: its descriptor at 4096 + 4096 (after
    // 'cpu''s data), its handle after 20 + 16 + 8 + 1 bytes, alignment at 8.
    let warning = "buffer[0].alignment at offset 8245: 64 on device_tag 0x01 (CUDA), below the 4096 a writer \
                   targeting GPU or IPC transport must declare (buffer-protocol.md § Alignment › Page Alignment \
                   for GPU and IPC); accepted, as a reader cannot know the writer's target";
    for mode in [&[][..], &["--permissive"][..]] {
        let out = inspect(&[&["--validate"][..], mode].concat(), &file);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains(&format!("\n  gpu        WARNING  {warning}\n")), "{text}");
        assert_eq!(text.matches("WARNING").count(), 1, "{text}");
        let v = ok_json(&[&["--validate", "--json"][..], mode].concat(), &file);
        assert!(v["tensors"][0].get("warnings").is_none(), "{v}");
        assert_eq!(v["tensors"][1]["warnings"], json!([warning]), "{v}");
        let v = ok_json(
            &[&["--validate", "--json", "--tensor", "gpu"][..], mode].concat(),
            &file,
        );
        assert_eq!(v["warnings"], json!([warning]), "{v}");
    }
}

/// Every `hurray-inspect --json ...` example in `docs/cli.md` followed by
/// its JSON output is what the tool prints today, byte for byte (an example
/// shortened with a `...` line matches line by line up to and after it).
#[test]
fn cli_md_json_examples_are_the_tool_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc = std::fs::read_to_string(root.join("docs/cli.md")).unwrap();
    let mut checked = 0;
    let mut rest = doc.as_str();
    while let Some(at) = rest.find("```sh\nhurray-inspect --json") {
        let block = &rest[at + "```sh\n".len()..];
        let (command, after) = block.split_once("\n```\n").unwrap();
        rest = after;
        let Some(json) = after.strip_prefix("\n```json\n") else {
            continue;
        };
        let (expected, _) = json.split_once("\n```").unwrap();
        let out = bin()
            .current_dir(&root)
            .args(command.split_whitespace().skip(1))
            .output()
            .unwrap();
        let actual = stdout(&out).trim_end();
        match expected.split_once("\n    ...\n") {
            None => assert_eq!(actual, expected, "{command}"),
            Some((head, tail)) => {
                assert!(
                    actual.starts_with(head) && actual.ends_with(tail),
                    "{command}:\n{actual}"
                );
            }
        }
        checked += 1;
    }
    assert_eq!(checked, 6, "examples found in docs/cli.md");
}

/// Every character `--json` must write as `\uXXXX`: the C0 controls, DEL,
/// the C1 controls, the bidi embeddings, overrides and isolates, the
/// line and paragraph separators, and the invisible format characters.
fn terminal_controls() -> String {
    let mut s: String = ('\u{0}'..='\u{1f}').collect();
    s.push('\u{7f}');
    s.extend('\u{80}'..='\u{9f}');
    s.extend('\u{202a}'..='\u{202e}');
    s.extend('\u{2066}'..='\u{2069}');
    s.extend(['\u{2028}', '\u{2029}']);
    s.extend(['\u{ad}', '\u{61c}']);
    s.extend('\u{200b}'..='\u{200f}');
    s.extend('\u{2060}'..='\u{2064}');
    s.push('\u{feff}');
    s
}

/// A tensor name, a KV key and KV strings made of exactly those
/// characters: every JSON output writes each of them as `\uXXXX` (lower
/// case hex), holds none of them raw but the line breaks of its own
/// layout, and parses back to the original strings.
#[test]
fn json_escapes_every_terminal_control() {
    let hostile = terminal_controls();
    assert_eq!(hostile.chars().count(), 89);
    let (_dir, file) = written(|w| {
        w.add_kv(&hostile, hostile.clone()).unwrap();
        w.add_kv("list", hurray_writer::KvArray::String(vec![hostile.clone()]))
            .unwrap();
        let values = [1.5f32, 2.5];
        w.write_dense(&hostile, &hurray_writer::Dense::row_major(&[2], &values[..]).unwrap())
            .unwrap();
    });
    let escaped: String = hostile.chars().map(|c| format!("\\u{:04x}", u32::from(c))).collect();
    assert!(escaped.starts_with("\\u0000\\u0001") && escaped.ends_with("\\u2064\\ufeff"));
    let shown = hurray_reader::shown_name(&hostile);
    for args in [
        &["--json"][..],
        &["--json", "--validate"],
        &["--json", "--tensor", &shown],
        &["--json", "--dump"],
        &["--json", "--head", "2"],
        &["--json", "--get", "1"],
    ] {
        let out = inspect(args, &file);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        let text = stdout(&out);
        let raw: Vec<char> = text
            .chars()
            .filter(|&c| c != '\n' && terminal_controls().contains(c))
            .collect();
        assert!(raw.is_empty(), "{args:?}: raw {raw:?}");
        assert!(text.contains(&format!("\"name\": \"{escaped}\"")), "{args:?}: {text}");
        let v = json_of(&out);
        assert_eq!(
            v["name"].as_str().or(v["tensors"][0]["name"].as_str()),
            Some(&hostile[..]),
            "{args:?}"
        );
        if args.len() == 1 || args[1] == "--validate" {
            assert!(text.contains(&format!("\"{escaped}\": \"{escaped}\"")), "{text}");
            assert_eq!(v["kv"][&hostile], json!(hostile));
            assert_eq!(v["kv"]["list"], json!([hostile]));
            assert_eq!(v["kv_types"][&hostile], "string");
        }
    }
}
