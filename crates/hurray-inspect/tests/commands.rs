//! End-to-end tests of the per-tensor commands (`--tensor`, `--head`,
//! `--get`, `--column`, `--row`, `--dump`) and `--quiet`, on the project's
//! fixtures (always) and on the shared corpora (`HURRAY_INTEROP_DIR`,
//! `HURRAY_CASES_DIR`, skipped when unset). Golden files pin the human
//! output of the worked example; `HURRAY_UPDATE_GOLDEN=1` rewrites them.

mod support {
    pub mod harness;
}

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use support::harness::{
    assert_golden, assert_json_failure, assert_one_error_line, assert_same, assert_usage_error, bin, cli_value, corpus,
    entry, files, fixtures_dir, inspect, json_of, manifest, ok_json, path, stderr, stdout, CASES, INTEROP,
};

fn worked_example() -> PathBuf {
    path(&fixtures_dir(), "csc_worked_example.hry")
}

// ---------------------------------------------------------------------------
// The worked example of layouts/csc.md: tensor A, float32 [4, 5],
// values [1, 4, 3, 2, 5], row_indices [0, 2, 1, 0, 2], col_ptr [0, 1, 2, 3, 4, 5].
// ---------------------------------------------------------------------------

#[test]
fn worked_example_human_goldens() {
    let file = worked_example();
    for (args, golden) in [
        (&[][..], "csc_worked_example.summary.txt"),
        (&["--tensor", "A"][..], "csc_worked_example.tensor_A.txt"),
        (&["--head", "3"][..], "csc_worked_example.head_3.txt"),
        (&["--get", "2,1"][..], "csc_worked_example.get_2_1.txt"),
        (&["--column", "3"][..], "csc_worked_example.column_3.txt"),
        (&["--dump"][..], "csc_worked_example.dump.txt"),
    ] {
        let out = inspect(args, &file);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args:?}");
        assert_golden(&out, golden, &file);
    }
}

#[test]
fn worked_example_tensor_json() {
    let v = ok_json(&["--json", "--tensor", "A"], &worked_example());
    for (key, want) in [
        ("name", json!("A")),
        ("dtype", json!("float32")),
        ("layout", json!("csc")),
        ("shape", json!([4, 5])),
        ("nnz", json!(5)),
    ] {
        assert_eq!(v[key], want, "{key}");
    }
    let e = &v["index_entry"];
    assert_eq!(
        (&e["position"], &e["descriptor_offset"], &e["data_offset"]),
        (&json!(0), &json!(64), &json!(4096))
    );
    assert_eq!(e["descriptor_length"], 109);
    assert_eq!(
        e["field_offsets"],
        json!({"descriptor_offset": 16395, "descriptor_length": 16403, "data_offset": 16407,
               "data_length": 16415, "flags": 16423})
    );
    let fields: BTreeMap<&str, &Value> = v["descriptor"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["field"].as_str().unwrap(), f))
        .collect();
    let field = |name: &str| *fields.get(name).unwrap_or_else(|| panic!("no field {name}"));
    assert_eq!(
        field("magic"),
        &json!({"field": "magic", "offset": 64, "bytes": "48525259", "meaning": "\"HRRY\""})
    );
    assert_eq!(
        field("type_tag"),
        &json!({"field": "type_tag", "offset": 78, "bytes": "03", "meaning": "float32"})
    );
    assert_eq!(
        field("layout_tag"),
        &json!({"field": "layout_tag", "offset": 79, "bytes": "08", "meaning": "csc"})
    );
    assert_eq!(field("shape[1]")["bytes"], "0500000000000000");
    assert_eq!(field("nnz")["meaning"], "5");
    assert_eq!(field("buffer[2].byte_size")["offset"], 157);
    assert_eq!(field("buffer[2].byte_size")["meaning"], "48 bytes");
    // The fields tile the descriptor: contiguous from its first byte to its last.
    let mut at = 64u64;
    for f in v["descriptor"].as_array().unwrap() {
        assert_eq!(f["offset"], at, "{f}");
        at += f["bytes"].as_str().unwrap().len() as u64 / 2;
    }
    assert_eq!(at, 64 + 109);
    assert_eq!(
        v["buffers"],
        json!([
            {"index": 0, "role": "values", "element_type": "float32", "count": 5,
             "offset": 4096, "end": 4116, "byte_size": 20, "alignment": 64},
            {"index": 1, "role": "row_indices", "element_type": "uint64", "count": 5,
             "offset": 8192, "end": 8232, "byte_size": 40, "alignment": 64},
            {"index": 2, "role": "col_ptr", "element_type": "uint64", "count": 6,
             "offset": 12288, "end": 12336, "byte_size": 48, "alignment": 64},
        ])
    );
    assert!(v.get("valid").is_none() && v.get("error").is_none());

    let v = ok_json(&["--json", "--validate", "--tensor", "A"], &worked_example());
    assert_eq!(v["valid"], true);
    let out = inspect(&["--validate", "--tensor", "A"], &worked_example());
    assert!(
        stdout(&out).ends_with("\nValidation (strict mode):\n  A  OK\n"),
        "{}",
        stdout(&out)
    );
}

fn entry_json(index: &[u64], position: u64, value: Value) -> Value {
    json!({"index": index, "position": position, "value": value})
}

#[test]
fn worked_example_head_get_column_dump_json() {
    let file = worked_example();
    let header = json!({"name": "A", "dtype": "float32", "layout": "csc", "shape": [4, 5], "nnz": 5});
    let with = |extra: Value| {
        let mut v = header.clone();
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        v
    };
    // Storage order, column by column: (row, col, value).
    let all = [
        entry_json(&[0, 0], 0, json!(1.0)),
        entry_json(&[2, 1], 1, json!(4.0)),
        entry_json(&[1, 2], 2, json!(3.0)),
        entry_json(&[0, 3], 3, json!(2.0)),
        entry_json(&[2, 4], 4, json!(5.0)),
    ];
    for (n, shown) in [("0", 0), ("3", 3), ("5", 5), ("100", 5)] {
        // The file's only tensor is used without --tensor.
        assert_same(
            &ok_json(&["--json", "--head", n], &file),
            &with(json!({"order": "column", "total": 5, "entries": all[..shown]})),
            &format!("--head {n}"),
        );
    }
    assert_same(
        &ok_json(&["--json", "--tensor", "A", "--get", "2,1"], &file),
        &with(json!({"index": [2, 1], "stored": true, "position": 1, "value": 4.0})),
        "--get 2,1",
    );
    assert_same(
        &ok_json(&["--json", "--get", "3,1"], &file),
        &with(json!({"index": [3, 1], "stored": false, "position": null, "value": 0.0})),
        "--get 3,1",
    );
    let out = inspect(&["--get", "3,1"], &file);
    assert_eq!(stdout(&out), "A[3, 1] = 0 (implicit zero)\n");
    assert_same(
        &ok_json(&["--json", "--column", "3"], &file),
        &with(json!({"order": "column", "total": 5, "column": 3, "positions": [3, 4], "entries": [all[3]]})),
        "--column 3",
    );
    assert_same(
        &ok_json(&["--json", "--dump"], &file),
        &json!({
            "name": "A", "dtype": "float32", "layout": "csc", "shape": [4, 5], "nnz": 5,
            "buffers": [
                {"role": "values", "element_type": "float32", "byte_size": 20, "values": [1.0, 4.0, 3.0, 2.0, 5.0]},
                {"role": "row_indices", "element_type": "uint64", "byte_size": 40, "values": [0, 2, 1, 0, 2]},
                {"role": "col_ptr", "element_type": "uint64", "byte_size": 48, "values": [0, 1, 2, 3, 4, 5]},
            ],
        }),
        "--dump",
    );
}

#[test]
fn worked_example_every_cell_and_column() {
    let file = worked_example();
    let m = manifest(&fixtures_dir());
    let t = &entry(&m, "csc_worked_example.hry")["tensors"][0];
    check_every_cell(&file, t);
    check_slices(&file, t);
}

// ---------------------------------------------------------------------------
// Every fixture, driven by fixtures/manifest.json.
// ---------------------------------------------------------------------------

/// The stored entries of a manifest tensor in the order `--head` lists
/// them: `(coordinates, position, value)`.
fn expected_entries(t: &Value) -> Vec<Value> {
    let buffers = t["buffers"].as_array().unwrap();
    let values = |k: usize| buffers[k]["contents"]["values"].as_array().unwrap().clone();
    let u64s = |k: usize| -> Vec<u64> { values(k).iter().map(|v| v.as_u64().unwrap()).collect() };
    let vals = values(0);
    let compressed = |transpose: bool| {
        let (idx, ptr) = (u64s(1), u64s(2));
        let mut out = Vec::new();
        for j in 0..ptr.len() - 1 {
            for p in ptr[j] as usize..ptr[j + 1] as usize {
                let index = if transpose {
                    [idx[p], j as u64]
                } else {
                    [j as u64, idx[p]]
                };
                out.push(entry_json(&index, p as u64, cli_value(&vals[p])));
            }
        }
        out
    };
    match t["layout"].as_str().unwrap() {
        "csc" => compressed(true),
        "csr" => compressed(false),
        "coo" | "csf" => {
            // The manifest lists each stored element's coordinates in storage (leaf) order.
            let coords = t["coordinates"].as_array().unwrap();
            coords
                .iter()
                .enumerate()
                .map(|(p, c)| {
                    let index: Vec<u64> = c.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
                    json!({"index": index, "position": p, "value": cli_value(&vals[p])})
                })
                .collect()
        }
        _ => {
            // Dense: logical row-major order; positions are checked by --get.
            let shape: Vec<u64> = t["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .collect();
            cells(&shape)
                .into_iter()
                .map(|index| {
                    let value = cli_value(dense_at(&t["dense"], &index));
                    json!({"index": index, "value": value})
                })
                .collect()
        }
    }
}

/// Every logical index of `shape`, row-major.
fn cells(shape: &[u64]) -> Vec<Vec<u64>> {
    let total: u64 = shape.iter().product();
    (0..total)
        .map(|mut k| {
            let mut index = vec![0; shape.len()];
            for (slot, &n) in index.iter_mut().zip(shape).rev() {
                *slot = k % n;
                k /= n;
            }
            index
        })
        .collect()
}

fn dense_at<'v>(dense: &'v Value, index: &[u64]) -> &'v Value {
    index.iter().fold(dense, |v, &i| &v[i as usize])
}

/// `--head` lists every stored entry (all, and the first 3) as the
/// manifest's buffers say.
fn check_head(file: &Path, t: &Value) {
    let name = t["name"].as_str().unwrap();
    let mut expected = expected_entries(t);
    for n in ["1000000", "3"] {
        let v = ok_json(&["--json", "--tensor", name, "--head", n], file);
        let at = format!("{} {name} --head {n}", file.display());
        assert_eq!(v["name"], name, "{at}");
        assert_eq!(v["dtype"], t["element_type"], "{at}");
        assert_eq!(v["layout"], t["layout"], "{at}");
        let mut got = v["entries"].as_array().unwrap().clone();
        if expected.first().is_some_and(|e| e.get("position").is_none()) {
            for e in &mut got {
                e.as_object_mut().unwrap().remove("position");
            }
        }
        assert_same(&Value::Array(got), &Value::Array(expected.clone()), &at);
        expected.truncate(3);
    }
}

/// `--get` on every cell: the manifest's dense value; `stored` exactly for
/// the stored entries of a sparse tensor.
fn check_every_cell(file: &Path, t: &Value) {
    let name = t["name"].as_str().unwrap();
    let shape: Vec<u64> = t["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    let sparse = t.get("nnz").is_some();
    // CSF entries without listed coordinates: only the values are compared.
    let listed = t.get("coordinates").is_some() || !matches!(t["layout"].as_str(), Some("coo" | "csf"));
    let stored: Option<BTreeMap<String, Value>> = (sparse && listed).then(|| {
        expected_entries(t)
            .into_iter()
            .map(|e| (e["index"].to_string(), e))
            .collect()
    });
    for index in cells(&shape) {
        let coords: Vec<String> = index.iter().map(u64::to_string).collect();
        let coords = coords.join(",");
        let v = ok_json(&["--json", "--tensor", name, "--get", &coords], file);
        let at = format!("{} {name} --get {coords}", file.display());
        assert_eq!(v["index"], json!(index), "{at}");
        let want = cli_value(dense_at(&t["dense"], &index));
        if !sparse {
            assert_eq!(v["stored"], true, "{at}");
            assert_same(&v["value"], &want, &at);
            continue;
        }
        let Some(stored) = &stored else {
            assert_eq!(v["value"].as_f64(), want.as_f64(), "{at}");
            assert_eq!(v["stored"], want.as_f64() != Some(0.0), "{at}");
            continue;
        };
        match stored.get(&json!(index).to_string()) {
            Some(e) => {
                assert_eq!(v["stored"], true, "{at}");
                assert_eq!(v["position"], e["position"], "{at}");
                assert_same(&v["value"], &e["value"], &at);
                assert_same(&v["value"], &want, &at);
            }
            None => {
                assert_eq!(v["stored"], false, "{at}");
                assert_eq!(v["position"], Value::Null, "{at}");
                assert_same(&v["value"], &want, &at); // the zero of the dtype
                assert_eq!(want.as_f64(), Some(0.0), "{at}: the manifest's dense view");
            }
        }
    }
}

/// `--column j` of a CSC tensor, `--row i` of a CSR one, for every slice;
/// the other flag is a usage error.
fn check_slices(file: &Path, t: &Value) {
    let name = t["name"].as_str().unwrap();
    let (flag, other, axis) = match t["layout"].as_str().unwrap() {
        "csc" => ("--column", "--row", 1),
        "csr" => ("--row", "--column", 0),
        _ => return,
    };
    let all = expected_entries(t);
    let n = t["shape"][axis].as_u64().unwrap();
    for j in 0..n {
        let v = ok_json(&["--json", "--tensor", name, flag, &j.to_string()], file);
        let at = format!("{} {name} {flag} {j}", file.display());
        let want: Vec<Value> = all.iter().filter(|e| e["index"][axis] == j).cloned().collect();
        assert_same(&v["entries"], &Value::Array(want.clone()), &at);
        assert_eq!(v[&flag[2..]], j, "{at}");
        if let (Some(first), Some(last)) = (want.first(), want.last()) {
            let end = last["position"].as_u64().unwrap() + 1;
            assert_eq!(v["positions"], json!([first["position"], end]), "{at}");
        }
    }
    assert_usage_error(&inspect(&["--tensor", name, flag, &n.to_string()], file), file);
    assert_usage_error(&inspect(&["--tensor", name, other, "0"], file), file);
}

/// `--dump --json` gives every buffer's values as the manifest lists them.
fn check_dump(file: &Path, t: &Value) {
    let name = t["name"].as_str().unwrap();
    let v = ok_json(&["--json", "--tensor", name, "--dump"], file);
    let at = format!("{} {name} --dump", file.display());
    assert_eq!(v["name"], name, "{at}");
    assert_eq!(v["dtype"], t["element_type"], "{at}");
    assert_eq!(v["layout"], t["layout"], "{at}");
    assert_same(&v["shape"], &t["shape"], &at);
    assert_eq!(v["nnz"], t.get("nnz").cloned().unwrap_or(Value::Null), "{at}");
    let got = v["buffers"].as_array().unwrap();
    let want = t["buffers"].as_array().unwrap();
    assert_eq!(got.len(), want.len(), "{at}: buffer count");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let at = format!("{at} buffer {k}");
        assert_eq!(g["role"], w["role"], "{at}");
        if let Some(size) = w.get("byte_size") {
            assert_eq!(&g["byte_size"], size, "{at}");
        }
        if let Some(as_) = w["contents"].get("as") {
            assert_eq!(&g["element_type"], as_, "{at}");
        }
        assert_same(&g["values"], &cli_value(&w["contents"]["values"]), &at);
    }
}

#[test]
fn every_fixture_tensor_head_get_slices_dump() {
    let dir = fixtures_dir();
    let m = manifest(&dir);
    let mut seen = 0;
    for f in files(&m) {
        let file = path(&dir, f["file"].as_str().unwrap());
        for t in f["tensors"].as_array().unwrap() {
            check_head(&file, t);
            check_every_cell(&file, t);
            check_slices(&file, t);
            check_dump(&file, t);
            seen += 1;
        }
    }
    assert!(seen >= 27, "{seen} tensors");
}

#[test]
fn sparse_formats_spot_checks() {
    let file = path(&fixtures_dir(), "sparse_formats.hry");
    // CSF: the layouts/csf.md example, leaf order, logical coordinates.
    let v = ok_json(&["--json", "--tensor", "csf", "--head", "2"], &file);
    assert_same(
        &v,
        &json!({"name": "csf", "dtype": "float32", "layout": "csf", "shape": [2, 3, 4], "nnz": 4,
                "order": "leaf", "total": 4,
                "entries": [entry_json(&[0, 0, 1], 0, json!(1.0)), entry_json(&[0, 2, 3], 1, json!(2.0))]}),
        "csf head",
    );
    // An unsorted COO lists its entries in storage order.
    let v = ok_json(&["--json", "--tensor", "m.coo_unsorted", "--head", "1"], &file);
    assert_same(&v["entries"], &json!([entry_json(&[4, 5], 0, json!(-14.0))]), "coo");
    // Column-major dense: logical order, positions in storage.
    let v = ok_json(&["--json", "--tensor", "m.dense_col_major", "--head", "2"], &file);
    assert_same(
        &v["entries"],
        &json!([entry_json(&[0, 0], 0, json!(1.5)), entry_json(&[0, 1], 5, json!(0.0))]),
        "col_major",
    );
    assert_eq!(v["order"], "logical");
    assert_eq!(v["total"], 30);
    // Human --head groups a CSR matrix by row.
    let out = inspect(&["--tensor", "m.csr", "--head", "4"], &file);
    assert_eq!(
        stdout(&out),
        "m.csr: float64 csr [5, 6], nnz 12\n\
         First 4 of 12 stored entries (storage order, row by row):\n\
         \x20 row 0:\n\
         \x20   (0, 0)  1.5\n\
         \x20   (0, 3)  -2.0\n\
         \x20   (0, 5)  10.0\n\
         \x20 row 1:\n\
         \x20   (1, 2)  3.25\n"
    );
    let out = inspect(&["--tensor", "m.csc", "--column", "1"], &file);
    assert_eq!(
        stdout(&out),
        "m.csc: float64 csc [5, 6], nnz 12\nColumn 1: no stored entries\n"
    );
    let out = inspect(&["--tensor", "csf", "--get", "1,1,2"], &file);
    assert_eq!(stdout(&out), "csf[1, 1, 2] = 4.0  (stored at position 3)\n");
    let out = inspect(&["--tensor", "m.dense", "--get", "4,5"], &file);
    assert_eq!(stdout(&out), "m.dense[4, 5] = -14.0  (element at position 29)\n");
}

#[test]
fn dtypes_decode_every_element_type() {
    let file = path(&fixtures_dir(), "dtypes.hry");
    let dump = |name: &str| ok_json(&["--json", "--tensor", name, "--dump"], &file)["buffers"][0]["values"].clone();
    assert_same(&dump("f16"), &json!([1.0, -0.0, 65504.0, "inf"]), "f16");
    assert_same(&dump("bf16"), &json!([1.0, -2.5, 3.00405527047391e38, "-inf"]), "bf16");
    assert_same(&dump("u64"), &json!([0, 1, u64::MAX]), "u64");
    assert_same(&dump("i64"), &json!([i64::MIN, 0, i64::MAX]), "i64");
    assert_same(&dump("c64"), &json!([[1.0, -2.0], [0.5, 0.25]]), "c64");
    assert_same(&dump("bool"), &json!([true, false, true, true, false]), "bool");
    assert_same(&dump("uint4"), &json!([5, 12, 3]), "uint4");
    assert_same(&dump("uint2"), &json!([3, 1, 2]), "uint2");
    assert_same(&dump("int4"), &json!([-8, 7, 1, -1]), "int4");
    assert_same(&dump("float6"), &json!([1.0, 1.5, -2.0, 3.0, 0.5]), "float6");
    // A scalar: rank 0, one element at the empty index.
    let v = ok_json(&["--json", "--tensor", "scalar", "--get", ""], &file);
    assert_same(&v["value"], &json!(3.5), "scalar");
    assert_eq!(v["index"], json!([]));
    let out = inspect(&["--tensor", "scalar", "--head", "5"], &file);
    assert_eq!(
        stdout(&out),
        "scalar: float32 row_major []\nFirst 1 of 1 element (logical row-major order):\n  ()  3.5\n"
    );
    // Human forms: shortest text of the stored width, complex as a+bi.
    let out = inspect(&["--tensor", "c64", "--dump"], &file);
    assert!(
        stdout(&out).contains("\n  [0]  1.0-2.0i  0.5+0.25i\n"),
        "{}",
        stdout(&out)
    );
    let out = inspect(&["--tensor", "f16", "--head", "4"], &file);
    assert!(
        stdout(&out).ends_with("  (2)  65504.0\n  (3)  inf\n"),
        "{}",
        stdout(&out)
    );
    // Column-major int64: logical order, storage positions.
    let v = ok_json(&["--json", "--tensor", "i64", "--head", "3"], &file);
    assert_same(
        &v["entries"],
        &json!([
            entry_json(&[0, 0], 0, json!(i64::MIN)),
            entry_json(&[1, 0], 1, json!(0)),
            entry_json(&[2, 0], 2, json!(i64::MAX)),
        ]),
        "i64",
    );
}

#[test]
fn empty_tensors() {
    let file = path(&fixtures_dir(), "empty.hry");
    for name in ["csc_0x5", "csc_5x0", "csc_0x0", "csc_3x4_nnz0", "csr_0x3", "dense_3x0"] {
        let v = ok_json(&["--json", "--tensor", name, "--head", "10"], &file);
        assert_eq!(v["entries"], json!([]), "{name}");
        assert_eq!(v["total"], 0, "{name}");
        let out = inspect(&["--tensor", name, "--head", "10"], &file);
        assert!(stdout(&out).ends_with("\nNo stored entries.\n") || stdout(&out).ends_with("\nNo elements.\n"));
    }
    // Out of range, not an implicit zero: usage errors naming the shape.
    let message = assert_usage_error(&inspect(&["--tensor", "csc_0x5", "--get", "0,0"], &file), &file);
    assert!(message.contains("shape [0, 5]"), "{message}");
    assert_usage_error(&inspect(&["--tensor", "csc_5x0", "--column", "0"], &file), &file);
    let v = ok_json(&["--json", "--tensor", "csc_3x4_nnz0", "--get", "2,3"], &file);
    assert_eq!((&v["stored"], &v["value"]), (&json!(false), &json!(0.0)));
}

// ---------------------------------------------------------------------------
// Usage errors, stdin, --quiet, --help.
// ---------------------------------------------------------------------------

#[test]
fn usage_errors_exit_2_with_one_line() {
    let sparse = path(&fixtures_dir(), "sparse_formats.hry");
    let worked = worked_example();
    let cases: [(&[&str], &Path, &str); 10] = [
        (
            &["--head", "3"],
            &sparse,
            "--head needs --tensor NAME: the file holds 8 tensors",
        ),
        (&["--dump"], &sparse, "--dump needs --tensor NAME"),
        (
            &["--tensor", "nope"],
            &sparse,
            "no tensor named 'nope' in the index; it holds: m.csc, m.csr",
        ),
        (&["--tensor", "nope", "--head", "1"], &worked, "no tensor named 'nope'"),
        (
            &["--tensor", "m.csr", "--column", "1"],
            &sparse,
            "--column reads a csc matrix; tensor 'm.csr' is csr",
        ),
        (
            &["--tensor", "m.csc", "--row", "1"],
            &sparse,
            "--row reads a csr matrix",
        ),
        (
            &["--tensor", "m.coo", "--column", "1"],
            &sparse,
            "tensor 'm.coo' is coo: use --head or --get",
        ),
        (
            &["--get", "1,2,3"],
            &worked,
            "needs 2 comma-separated coordinates, got 3",
        ),
        (
            &["--get", "4,0"],
            &worked,
            "coordinate 0 is 4, outside tensor 'A' of shape [4, 5] (must be < 4)",
        ),
        (
            &["--column", "5"],
            &worked,
            "--column 5: tensor 'A' of shape [4, 5] has 5 columns (must be < 5)",
        ),
    ];
    for (args, file, wanted) in cases {
        let message = assert_usage_error(&inspect(args, file), file);
        assert!(message.contains(wanted), "{args:?}: {message}");
    }
    // A long --get list is cut as a long name is.
    let many = vec!["0"; 101].join(",");
    let message = assert_usage_error(&inspect(&["--get", &many], &worked), &worked);
    assert_eq!(
        message,
        format!(
            "--get '{}... (201 bytes)': tensor 'A' of shape [4, 5] needs 2 comma-separated coordinates, got 101",
            "0,".repeat(32)
        )
    );
    // A long unknown name is cut to 64 characters, its length given.
    let long = "x".repeat(5000);
    let message = assert_usage_error(&inspect(&["--tensor", &long], &worked), &worked);
    assert_eq!(
        message,
        format!(
            "no tensor named '{}... (5000 bytes)' in the index; it holds: A",
            "x".repeat(64)
        )
    );
    // Caught by clap: malformed coordinates and indices (negative ones
    // included: they are values, not flags), two data commands, --validate with one.
    for (args, wanted) in [
        (
            &["--get", "-1,2"][..],
            "'--get <I,J,...>': `-1` is not a coordinate: expected non-negative integers",
        ),
        (&["--get", "2, x"], "`x` is not a coordinate"),
        (
            &["--get", "1,18446744073709551616"],
            "coordinate `18446744073709551616` is larger than any dimension can be (2^64 - 1)",
        ),
        (
            &["--column", "-1"],
            "'--column <J>': `-1` is not a column index: expected a non-negative integer",
        ),
        (&["--row", "-2"], "'--row <I>': `-2` is not a row index"),
        (&["--column", "--json"], "`--json` is not a column index"),
        (
            &["--head", "-1"],
            "'--head <N>': `-1` is not a count: expected a non-negative integer up to 1048576",
        ),
        (
            &["--head", "99999999999999999999"],
            "'--head <N>': --head lists at most 1048576 entries",
        ),
        (
            &["--validate", "--threads", "-1"],
            "'--threads <N>': `-1` is not a thread count: expected an integer from 1 to 65535",
        ),
        (
            &["--validate", "--threads", "0"],
            "'--threads <N>': thread count 0 is out of range: expected 1 to 65535",
        ),
    ] {
        let out = inspect(args, &worked);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert!(
            err.starts_with("error: invalid value ") && err.contains(wanted),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty());
    }
    for args in [&["--head", "3", "--dump"][..], &["--validate", "--head", "1"]] {
        let out = inspect(args, &worked);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).starts_with("error: "), "{}", stderr(&out));
    }
}

#[test]
fn per_tensor_commands_read_stdin() {
    let file = worked_example();
    let bytes = std::fs::read(&file).unwrap();
    for args in [
        &["--tensor", "A"][..],
        &["--head", "3", "--json"],
        &["--get", "2,1"],
        &["--column", "3"],
        &["--dump", "--json"],
    ] {
        let piped = bin().args(args).arg("-").write_stdin(bytes.clone()).output().unwrap();
        assert_eq!(piped.status.code(), Some(0), "{args:?}: {}", stderr(&piped));
        let mapped = inspect(args, &file);
        let rename = |s: &str| s.replace(&file.display().to_string(), "<stdin>");
        assert_eq!(stdout(&piped), rename(stdout(&mapped)), "{args:?}");
    }
}

#[test]
fn quiet_prints_only_the_error_line() {
    let file = worked_example();
    for args in [
        &["-q"][..],
        &["--quiet", "--validate"],
        &["-q", "--tensor", "A"],
        &["-q", "--head", "3", "--json"],
        &["-q", "--dump"],
    ] {
        let out = inspect(args, &file);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{args:?}");
    }
    let out = inspect(&["-q", "--tensor", "B"], &file);
    assert_usage_error(&out, &file);
    let Some(dir) = corpus(INTEROP) else { return };
    let bad = path(&dir, "invalid_csc_unsorted_rows.hry");
    let out = inspect(&["-q", "--validate"], &bad);
    assert!(out.stdout.is_empty());
    assert_one_error_line(&out, &bad);
}

/// With `--json`, an error of the file before any output is one object on
/// stdout too (exit 1): the file does not open, the tensor does not
/// resolve, or what a data command reads breaks a rule. Not with `-q`, and
/// not for usage errors (exit 2).
#[test]
fn json_errors_before_any_output_are_an_object() {
    let invalid = fixtures_dir().join("invalid");
    let unsorted = invalid.join("csc_indices_unsorted.hry");
    let message = "tensor 't': row_indices[1] at offset 8200: in column 0, 1 at row_indices position 1 \
                   is smaller than the index before it, 3 (indices must be strictly increasing, no duplicates) \
                   (layouts/csc.md § Storage Invariants (3))";
    for args in [&["--json", "--column", "0"][..], &["--json", "--get", "1,0"]] {
        let out = inspect(args, &unsorted);
        assert_eq!(assert_one_error_line(&out, &unsorted), message, "{args:?}");
        assert_eq!(
            json_of(&out),
            json!({
                "error": message,
                "error_at": {
                    "field": "row_indices[1]",
                    "offset": 8200,
                    "rule": "layouts/csc.md § Storage Invariants (3)"
                },
                "tensor": "t"
            }),
            "{args:?}"
        );
    }

    let rank3 = invalid.join("csc_rank_3.hry");
    let out = inspect(&["--json", "--dump"], &rank3);
    let message = assert_one_error_line(&out, &rank3);
    assert_eq!(
        message,
        "tensor 't': rank at offset 80: rank 3 is not allowed for layout csc, expected 2 \
         (layouts/csc.md § Description)"
    );
    assert_json_failure(&out, &message);
    assert_eq!(json_of(&out)["error_at"]["offset"], 80);

    let magic = invalid.join("header_magic.hry");
    let out = inspect(&["--json", "--validate"], &magic);
    let message = assert_one_error_line(&out, &magic);
    assert_json_failure(&out, &message);
    assert_eq!(json_of(&out)["error_at"]["field"], "magic");
    let out = inspect(&["--json", "-q"], &magic);
    assert_eq!(assert_one_error_line(&out, &magic), message);
    assert!(out.stdout.is_empty());

    // I/O errors have no field, offset or rule: only `error`.
    let missing = invalid.join("no-such-file.hry");
    let out = inspect(&["--json"], &missing);
    assert_eq!(out.status.code(), Some(1));
    let v = json_of(&out);
    assert_eq!(v.as_object().unwrap().len(), 1, "{v}");
    assert!(v["error"].as_str().unwrap().contains("cannot open"), "{v}");

    let out = inspect(&["--json", "--tensor", "B"], &worked_example());
    assert_usage_error(&out, &worked_example());
}

/// COO `--get` and `--head` check what they read: a coordinate out of
/// bounds, a false `is_sorted` claim or a duplicate is the error, never a
/// value (`--get 0,0` used to print 1.0 on a file whose entry 1 repeats
/// (0, 0), and `--head` listed `(2, 5)` in a [4, 5] tensor).
#[test]
fn coo_get_and_head_report_damage_instead_of_values() {
    let invalid = fixtures_dir().join("invalid");
    let rule = "(layouts/coo.md § Validity Constraints)";
    let duplicate = format!("tensor 't': indices[2] at offset 8208: entry 1: duplicate coordinates {rule}");
    let out_of_bounds =
        format!("tensor 't': indices[9] at offset 8264: index 5 is out of bounds, must be < shape[1] = 5 {rule}");
    let unordered = format!(
        "tensor 't': indices[4] at offset 8224: entry 2: entries are not in strictly increasing \
         lexicographic order although is_sorted = 1 {rule}"
    );
    for (file, args, message) in [
        ("coo_duplicate_coordinates", &["--get", "0,0"][..], &duplicate),
        ("coo_duplicate_coordinates", &["--head", "2"], &duplicate),
        ("coo_index_out_of_bounds", &["--get", "0,0"], &out_of_bounds),
        ("coo_index_out_of_bounds", &["--head", "10"], &out_of_bounds),
        ("coo_sorted_flag_on_unsorted", &["--get", "2,4"], &unordered),
        ("coo_sorted_flag_on_unsorted", &["--head", "3"], &unordered),
    ] {
        let file = invalid.join(format!("{file}.hry"));
        let out = inspect(args, &file);
        assert!(out.stdout.is_empty(), "{args:?}: {}", stdout(&out));
        assert_eq!(&assert_one_error_line(&out, &file), message, "{args:?}");
    }
    // What the damage does not touch is still answered: (2, 1) is stored
    // once, and the first entries are sound among themselves.
    let file = invalid.join("coo_duplicate_coordinates.hry");
    let v = ok_json(&["--json", "--get", "2,1"], &file);
    assert_eq!((&v["position"], &v["value"]), (&json!(3), &json!(4.0)), "{v}");
    let v = ok_json(&["--json", "--head", "1"], &file);
    assert_eq!(
        v["entries"],
        json!([{"index": [0, 0], "position": 0, "value": 1.0}]),
        "{v}"
    );
    let file = invalid.join("coo_index_out_of_bounds.hry");
    let v = ok_json(&["--json", "--head", "4"], &file);
    let listed: Vec<&Value> = v["entries"].as_array().unwrap().iter().map(|e| &e["index"]).collect();
    assert_eq!(
        listed,
        [&json!([0, 0]), &json!([0, 3]), &json!([1, 2]), &json!([2, 1])],
        "{v}"
    );
}

/// A last pointer below nnz hides the entries after it: `--get`,
/// `--column`/`--row` and `--head` on the last column or row name it
/// (they used to answer "implicit zero", "no stored entries" and "First 4
/// of 5", exit 0).
#[test]
fn a_last_pointer_below_nnz_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let patched = |fixture: &str, offset: usize, value: u64| {
        let mut bytes = std::fs::read(fixtures_dir().join(fixture)).unwrap();
        bytes[offset..offset + 8].copy_from_slice(&value.to_le_bytes());
        let file = dir.path().join(fixture.replace('/', "_"));
        std::fs::write(&file, bytes).unwrap();
        file
    };
    // col_ptr = [0, 1, 2, 3, 4, 4] with nnz 5: 5.0 at (2, 4) is lost.
    let csc = patched("invalid/csc_ptr_last_not_nnz.hry", 12288 + 5 * 8, 4);
    let message = "tensor 't': col_ptr[5] at offset 12328: is 4, must be nnz = 5 \
                   (layouts/csc.md § Storage Invariants (1))";
    for args in [&["--get", "2,4"][..], &["--column", "4"], &["--head", "5"]] {
        let out = inspect(args, &csc);
        assert_eq!(assert_one_error_line(&out, &csc), message, "{args:?}");
    }
    // What comes before the last column is still listed.
    let v = ok_json(&["--json", "--head", "4"], &csc);
    assert_eq!(v["entries"].as_array().map(Vec::len), Some(4), "{v}");

    // col_ptr = [0, 1, 2, 3, 5, 6]: all 5 entries lie before column 4, whose
    // end is past nnz. A complete listing ("5 of 5") checks every pointer
    // (it used to print all five, exit 0).
    let past = patched("invalid/csc_ptr_last_not_nnz.hry", 12288 + 4 * 8, 5);
    let out = inspect(&["--head", "5"], &past);
    let line = assert_one_error_line(&out, &past);
    assert!(
        line.starts_with("tensor 't': col_ptr[5] at offset 12328: is 6, must be nnz = 5"),
        "{line}"
    );
    assert_eq!(
        ok_json(&["--json", "--head", "4"], &past)["entries"]
            .as_array()
            .map(Vec::len),
        Some(4)
    );

    // row_ptr[5] of m.csr (nrows 5, nnz 12) set to 11: -14.0 at (4, 5) is lost.
    let csr = patched("sparse_formats.hry", 28712, 11);
    for args in [
        &["--tensor", "m.csr", "--get", "4,5"][..],
        &["--tensor", "m.csr", "--row", "4"],
    ] {
        let out = inspect(args, &csr);
        let line = assert_one_error_line(&out, &csr);
        assert!(
            line.starts_with("tensor 'm.csr': row_ptr[5] at offset 28712: is 11, must be nnz = 12"),
            "{args:?}: {line}"
        );
    }
}

#[test]
fn help_leads_to_shape_nnz_descriptor_bytes_and_a_column() {
    let out = bin().arg("--help").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let help = stdout(&out);
    for wanted in [
        "every tensor's name, dtype, layout, shape, nnz and size\n  hurray-inspect model.hry\n",
        "each descriptor field's file offset, raw bytes (hex) and meaning",
        "hurray-inspect model.hry --tensor A\n",
        "hurray-inspect model.hry --tensor A --head 10\n",
        "hurray-inspect model.hry --tensor A --get 2,1\n",
        "# Column 3 of a CSC matrix (--row I for a CSR matrix)\n  hurray-inspect model.hry --tensor A --column 3\n",
        "hurray-inspect model.hry --tensor A --dump --json\n",
        "-q, --quiet",
        "Example: hurray-inspect weights.hry --tensor A --column 3",
    ] {
        assert!(help.contains(wanted), "no `{wanted}` in --help:\n{help}");
    }
    // Every option's long help carries an example.
    let options = help.split("Options:").nth(1).unwrap();
    let options = options.split("Examples:").next().unwrap();
    let flags = options.lines().filter(|l| l.trim_start().starts_with('-')).count();
    let examples = options.matches("Example: hurray-inspect").count();
    // --help and --version are clap's own.
    assert_eq!(examples, flags - 2, "{options}");
}

/// An index-entry error found when the tensor is resolved names the
/// field as `index_entry[k].<field>` at an offset the `--tensor` listing
/// shows for that field.
#[test]
fn index_entry_errors_are_listed_at_their_offset() {
    let file = fixtures_dir().join("invalid/handle_data_length_too_long.hry");
    let out = inspect(&["--tensor", "t"], &file);
    let line = assert_one_error_line(&out, &file);
    assert!(line.contains("index_entry[0].data_length at offset 8223:"), "{line}");
    let row: Vec<&str> = stdout(&out)
        .lines()
        .find(|l| l.trim_start().starts_with("8223 "))
        .map(|l| l.split_whitespace().collect())
        .unwrap_or_default();
    assert_eq!(row, ["8223", "data_length", "24"], "{}", stdout(&out));
}

/// `members` in `--tensor --json`: a composite head's direct members, `null`
/// when the head did not resolve (its members are not known), absent for
/// other layouts.
#[test]
fn composite_members_json() {
    let bad = fixtures_dir().join("invalid/composite_member_role_2.hry");
    let d = json_of(&inspect(&["--json", "--tensor", "head"], &bad));
    assert_eq!(d["layout"], json!("composite"));
    assert_eq!(d.get("members"), Some(&Value::Null), "{d}");
    let d = ok_json(&["--json", "--tensor", "A"], &worked_example());
    assert_eq!(d.get("members"), None);
    let Some(dir) = corpus(INTEROP) else { return };
    let file = path(&dir, "composite_overlay.hry");
    let d = ok_json(&["--json", "--tensor", "fixed"], &file);
    assert_eq!(d["members"], json!(["fixed.base", "fixed.correction"]));
    // --validate: a head owns no data, so nothing went unchecked: OK, with
    // the reason there is no data, not SKIPPED.
    let d = ok_json(&["--json", "--validate", "--tensor", "fixed"], &file);
    assert_eq!(d["valid"], true, "{d}");
    let out = inspect(&["--validate"], &file);
    assert!(
        stdout(&out)
            .contains("\n  fixed             OK  (it is a composite head, which owns no data: read its members)\n"),
        "{}",
        stdout(&out)
    );
}

// ---------------------------------------------------------------------------
// The shared corpora.
// ---------------------------------------------------------------------------

/// `--dump --json` of every tensor of every valid interop file matches the
/// manifest's buffer contents.
#[test]
fn interop_dump_matches_manifest() {
    let Some(dir) = corpus(INTEROP) else { return };
    let m = manifest(&dir);
    let mut seen = 0;
    for f in files(&m).filter(|f| f["expect"] == "accept") {
        let file = path(&dir, f["file"].as_str().unwrap());
        for t in f["tensors"].as_array().unwrap() {
            check_dump(&file, t);
            seen += 1;
        }
    }
    assert!(seen > 100, "{seen} tensors");
}

/// The sparse and dense interop examples answer --head, --get, --column
/// and --row as their manifest says.
#[test]
fn interop_spec_examples_lookups() {
    let Some(dir) = corpus(INTEROP) else { return };
    let m = manifest(&dir);
    for name in [
        "csc_spec_example_f32.hry",
        "csr_spec_example_f32.hry",
        "coo_spec_example_sorted_f32.hry",
        "csf_spec_example_rank3_f32.hry",
        "csc_column_patterns.hry",
        "dense_col_major.hry",
        "strided_negative_stride_f32.hry",
        "tiled_f32.hry",
        "morton_f32.hry",
        "hilbert_f32_4x4.hry",
    ] {
        let file = path(&dir, name);
        for t in entry(&m, name)["tensors"].as_array().unwrap() {
            if t.get("dense").is_none() {
                continue;
            }
            if t.get("coordinates").is_some() || !matches!(t["layout"].as_str(), Some("coo" | "csf")) {
                check_head(&file, t);
            }
            check_every_cell(&file, t);
            check_slices(&file, t);
        }
    }
}

/// The cases corpus: every valid file's tensors dump as listed; the
/// manifest's lookups answer as listed.
#[test]
fn cases_dump_and_lookups() {
    let Some(dir) = corpus(CASES) else { return };
    let m = manifest(&dir);
    for f in files(&m).filter(|f| f["expect"] == "accept") {
        let file = path(&dir, f["file"].as_str().unwrap());
        for t in f["tensors"].as_array().unwrap() {
            let name = t["name"].as_str().unwrap();
            if name.contains('\0') {
                continue; // cannot be passed as an argument
            }
            check_dump(&file, t);
            for lookup in t.get("lookups").and_then(Value::as_array).into_iter().flatten() {
                let at = format!("{} {name} {lookup}", file.display());
                let args: Vec<String> = match (lookup.get("row"), lookup.get("col"), lookup.get("column")) {
                    (Some(r), Some(c), _) => vec!["--get".into(), format!("{r},{c}")],
                    (_, _, Some(j)) => vec!["--column".into(), j.to_string()],
                    _ => panic!("{at}: unknown lookup"),
                };
                let mut all = vec!["--json", "--tensor", name];
                all.extend(args.iter().map(String::as_str));
                let out = inspect(&all, &file);
                if lookup.get("expect").is_some() {
                    assert_usage_error(&out, &file);
                    continue;
                }
                assert_eq!(out.status.code(), Some(0), "{at}: {}", stderr(&out));
                let v = json_of(&out);
                let want = lookup["value"].as_f64().unwrap();
                assert_eq!(v["value"].as_f64(), Some(want), "{at}");
                assert_eq!(v["stored"], want != 0.0, "{at}");
            }
        }
    }
}

/// Every rejected file whose container opens: `--tensor` on the offending
/// tensor exits 1 with one error line naming the field and offset — the
/// same message the summary gives that tensor — in the tables and in JSON.
/// Returns whether a tensor was shown.
fn check_tensor_rejected(file: &Path, offending: Option<&str>) -> bool {
    let summary = inspect(&["--json", "--validate"], file);
    let v = json_of(&summary);
    if v.get("tensors").is_none() {
        // The container does not open: every command fails the same way.
        let message = assert_one_error_line(&summary, file);
        assert_json_failure(&summary, &message);
        let out = inspect(&["--tensor", offending.unwrap_or("A")], file);
        assert_eq!(assert_one_error_line(&out, file), message);
        return false;
    }
    let tensors = v["tensors"].as_array().unwrap();
    let invalid = |t: &&Value| t["valid"] == false;
    // The error may surface on another tensor than the one it names: a
    // composite nested too deep is rejected when its outermost head is read.
    let Some(t) = offending
        .and_then(|name| tensors.iter().find(|t| t["name"] == name))
        .filter(invalid)
        .or_else(|| tensors.iter().find(invalid))
    else {
        // Only the padding is wrong: no tensor to show.
        assert_eq!(v["padding"]["valid"], false, "{}", file.display());
        return false;
    };
    let name = t["name"].as_str().unwrap();
    assert!(invalid(&t), "{}: {name} reported valid", file.display());
    let message = t["error"].as_str().unwrap();

    let out = inspect(&["--tensor", name, "--validate"], file);
    assert_eq!(assert_one_error_line(&out, file), message, "{}", file.display());
    assert!(stdout(&out).contains("INVALID") || stdout(&out).contains("ERROR"));
    let out = inspect(&["--json", "--tensor", name, "--validate"], file);
    assert_eq!(assert_one_error_line(&out, file), message);
    let d = json_of(&out);
    assert_eq!((&d["valid"], &d["error"]), (&json!(false), &json!(message)));

    // Without --validate only the descriptor is read: a descriptor error
    // still fails, a data error does not show.
    let descriptor_error = t["dtype"].is_null();
    let out = inspect(&["--tensor", name], file);
    if descriptor_error {
        assert_eq!(assert_one_error_line(&out, file), message);
        assert!(stdout(&out).contains("\n  ERROR  "), "{}", stdout(&out));
        let out = inspect(&["--json", "--tensor", name], file);
        assert_eq!(assert_one_error_line(&out, file), message);
        assert_eq!(json_of(&out)["error"], message);
    } else {
        assert!(
            out.status.code() == Some(0) || assert_one_error_line(&out, file) == message,
            "{}",
            file.display()
        );
    }
    true
}

#[test]
fn interop_invalid_files_fail_with_tensor() {
    let Some(dir) = corpus(INTEROP) else { return };
    let m = manifest(&dir);
    let mut shown = 0;
    for f in files(&m).filter(|f| f["expect"] == "reject") {
        let file = path(&dir, f["file"].as_str().unwrap());
        shown += usize::from(check_tensor_rejected(&file, f["offending_tensor"].as_str()));
    }
    println!("--tensor shown on {shown} invalid files");
    assert!(shown >= 20, "{shown}");
}

#[test]
fn cases_rejects_fail_with_tensor() {
    let Some(dir) = corpus(CASES) else { return };
    let m = manifest(&dir);
    let mut shown = 0;
    for f in files(&m).filter(|f| f["expect"] == "reject") {
        let file = path(&dir, f["file"].as_str().unwrap());
        shown += usize::from(check_tensor_rejected(&file, f["offending_tensor"]["name"].as_str()));
    }
    println!("--tensor shown on {shown} invalid files");
    assert!(shown >= 20, "{shown}");
}

/// `fixtures/invalid/`, when the project has it: every file fails
/// `--validate`, and `--tensor` on its bad tensor.
#[test]
fn project_invalid_fixtures() {
    let dir = fixtures_dir().join("invalid");
    let Ok(listing) = std::fs::read_dir(&dir) else {
        println!("skipped: no {}", dir.display());
        return;
    };
    let m = dir.join("manifest.json").is_file().then(|| manifest(&dir));
    for item in listing {
        let file = item.unwrap().path();
        if file.extension().is_none_or(|e| e != "hry") {
            continue;
        }
        let out = inspect(&["--validate"], &file);
        assert_one_error_line(&out, &file);
        let name = file.file_name().unwrap().to_str().unwrap();
        let offending = m
            .as_ref()
            .and_then(|m| files(m).find(|f| f["file"] == name))
            // A "file"-stage entry breaks only the padding: its tensor is valid.
            .filter(|f| f["stage"] != "file")
            .and_then(|f| {
                let o = &f["offending_tensor"];
                o.as_str().or_else(|| o["name"].as_str())
            });
        check_tensor_rejected(&file, offending);
    }
}
