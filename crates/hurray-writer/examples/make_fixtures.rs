//! Writes the project's committed fixtures and their expected facts.
//!
//! ```text
//! cargo run -p hurray-writer --example make_fixtures -- fixtures
//! ```
//!
//! Every fixture is built from plain arrays defined here; `manifest.json`
//! records what a reader must find in each file (same shape as the interop
//! corpus manifest: names, element types, layouts, shapes, nnz, every
//! buffer's values and the logical dense view). The output is deterministic:
//! a test regenerates it and compares bytes.

use std::path::{Path, PathBuf};

use hurray_writer::{Coo, Csc, Csf, CsfLevel, Csr, Dense, ElementType, FileWriter, Values, WriterOptions};
use serde_json::{json, Value as Json};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// A small real matrix, the source of every sparse fixture.
struct Matrix {
    rows: Vec<Vec<f64>>,
}

impl Matrix {
    fn nrows(&self) -> u64 {
        self.rows.len() as u64
    }

    fn ncols(&self) -> u64 {
        self.rows.first().map_or(0, |r| r.len() as u64)
    }

    /// `(values, row_indices, col_ptr)`: non-zeros column by column.
    fn csc(&self) -> (Vec<f64>, Vec<u64>, Vec<u64>) {
        let (mut values, mut rows, mut ptr) = (vec![], vec![], vec![0]);
        for j in 0..self.ncols() as usize {
            for (i, row) in self.rows.iter().enumerate() {
                if row[j] != 0.0 {
                    values.push(row[j]);
                    rows.push(i as u64);
                }
            }
            ptr.push(values.len() as u64);
        }
        (values, rows, ptr)
    }

    /// `(values, col_indices, row_ptr)`: non-zeros row by row.
    fn csr(&self) -> (Vec<f64>, Vec<u64>, Vec<u64>) {
        let (mut values, mut cols, mut ptr) = (vec![], vec![], vec![0]);
        for row in &self.rows {
            for (j, &v) in row.iter().enumerate() {
                if v != 0.0 {
                    values.push(v);
                    cols.push(j as u64);
                }
            }
            ptr.push(values.len() as u64);
        }
        (values, cols, ptr)
    }

    /// `(values, indices)` in row-major (sorted) order.
    fn coo(&self) -> (Vec<f64>, Vec<u64>) {
        let (values, cols, ptr) = self.csr();
        let mut indices = vec![];
        for i in 0..self.nrows() as usize {
            for &c in &cols[ptr[i] as usize..ptr[i + 1] as usize] {
                indices.extend([i as u64, c]);
            }
        }
        (values, indices)
    }

    fn dense_json(&self, as_f32: bool) -> Json {
        json!(self
            .rows
            .iter()
            .map(|r| r.iter().map(|&v| number(v, as_f32)).collect::<Vec<_>>())
            .collect::<Vec<_>>())
    }

    fn row_major(&self) -> Vec<f64> {
        self.rows.iter().flatten().copied().collect()
    }

    fn col_major(&self) -> Vec<f64> {
        (0..self.ncols() as usize)
            .flat_map(|j| self.rows.iter().map(move |r| r[j]))
            .collect()
    }
}

fn number(v: f64, as_f32: bool) -> Json {
    if as_f32 {
        json!(f64::from(v as f32))
    } else {
        json!(v)
    }
}

/// A float as the manifests spell it: non-finite values as strings.
fn float(v: f64) -> Json {
    match v {
        v if v.is_nan() => json!("NaN"),
        f64::INFINITY => json!("Infinity"),
        f64::NEG_INFINITY => json!("-Infinity"),
        v => json!(v),
    }
}

fn f32s(v: &[f64]) -> Vec<f32> {
    v.iter().map(|&x| x as f32).collect()
}

fn buffer(role: &str, as_type: &str, values: Json) -> Json {
    let count = values.as_array().map_or(0, Vec::len);
    json!({ "role": role, "contents": { "as": as_type, "count": count, "values": values } })
}

fn u64s(v: &[u64]) -> Json {
    json!(v)
}

/// The layouts/csc.md worked example: float32 [4, 5], nnz 5.
fn worked_example() -> Matrix {
    Matrix {
        rows: vec![
            vec![1.0, 0.0, 0.0, 2.0, 0.0],
            vec![0.0, 0.0, 3.0, 0.0, 0.0],
            vec![0.0, 4.0, 0.0, 0.0, 5.0],
            vec![0.0, 0.0, 0.0, 0.0, 0.0],
        ],
    }
}

/// A [5, 6] float64 matrix with empty columns 1 and 4 and a full column 5.
fn patterns() -> Matrix {
    Matrix {
        rows: vec![
            vec![1.5, 0.0, 0.0, -2.0, 0.0, 10.0],
            vec![0.0, 0.0, 3.25, 0.0, 0.0, 11.0],
            vec![-0.5, 0.0, 0.0, 0.0, 0.0, 12.0],
            vec![0.0, 0.0, 4.0, 7.0, 0.0, 13.0],
            vec![6.0, 0.0, 0.0, 0.0, 0.0, -14.0],
        ],
    }
}

struct Fixture {
    file: &'static str,
    description: &'static str,
    tensors: Vec<Json>,
    kv: Vec<Json>,
}

fn write(dir: &Path, fixture: &Fixture, build: impl FnOnce(&mut FileWriter<Vec<u8>>) -> Result<()>) -> Result<Json> {
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default().kv_metadata(!fixture.kv.is_empty()))?;
    build(&mut w)?;
    let bytes = w.finish()?;
    std::fs::write(dir.join(fixture.file), &bytes)?;
    Ok(json!({
        "file": fixture.file,
        "expect": "accept",
        "description": fixture.description,
        "size_bytes": bytes.len(),
        "container": { "container_version": [1, 0], "kv_entries": fixture.kv },
        "tensors": fixture.tensors,
    }))
}

fn csc_worked_example(dir: &Path) -> Result<Json> {
    let m = worked_example();
    let (values, rows, ptr) = m.csc();
    // The exact buffers of layouts/csc.md § Example.
    assert_eq!(f32s(&values), [1.0, 4.0, 3.0, 2.0, 5.0]);
    assert_eq!(rows, [0, 2, 1, 0, 2]);
    assert_eq!(ptr, [0, 1, 2, 3, 4, 5]);
    let fixture = Fixture {
        file: "csc_worked_example.hry",
        description: "layouts/csc.md § Example: tensor 'A', float32 [4, 5], nnz 5, one entry per column",
        kv: vec![],
        tensors: vec![json!({
            "name": "A", "index_position": 0, "element_type": "float32", "layout": "csc",
            "shape": [4, 5], "nnz": 5, "byte_offset": 0, "buffer_count": 3,
            "descriptor_offset": 64, "data_offset": 4096,
            "buffers": [
                buffer("values", "float32", json!([1.0, 4.0, 3.0, 2.0, 5.0])),
                buffer("row_indices", "uint64", u64s(&rows)),
                buffer("col_ptr", "uint64", u64s(&ptr)),
            ],
            "nnz_per_column": [1, 1, 1, 1, 1],
            "dense": m.dense_json(true),
        })],
    };
    let values = f32s(&values);
    write(dir, &fixture, |w| {
        w.write_csc("A", &Csc::new(4, 5, &values, &rows, &ptr)?)?;
        Ok(())
    })
}

fn sparse_formats(dir: &Path) -> Result<Json> {
    let m = patterns();
    let (cv, cr, cp) = m.csc();
    let (rv, rc, rp) = m.csr();
    let (ov, oi) = m.coo();
    // The same entries in reverse storage order, claimed unsorted.
    let rev_values: Vec<f64> = ov.iter().rev().copied().collect();
    let rev_indices: Vec<u64> = oi.chunks(2).rev().flatten().copied().collect();
    let rev_coords: Vec<Vec<u64>> = oi.chunks(2).rev().map(<[u64]>::to_vec).collect();
    let coords: Vec<Vec<u64>> = oi.chunks(2).map(<[u64]>::to_vec).collect();
    let ints: Vec<i32> = cv.iter().map(|&v| (v * 4.0) as i32).collect();
    let int_dense = json!(m
        .rows
        .iter()
        .map(|r| r.iter().map(|&v| (v * 4.0) as i32).collect::<Vec<_>>())
        .collect::<Vec<_>>());
    let row_major = m.row_major();
    let col_major = m.col_major();
    // CSF: layouts/csf.md § Example, float32 [2, 3, 4].
    let csf_values = [1.0f32, 2.0, 3.0, 4.0];
    let (pos0, crd0) = ([0u64, 2], [0u64, 1]);
    let (pos1, crd1) = ([0u64, 2, 3], [0u64, 2, 1]);
    let (pos2, crd2) = ([0u64, 1, 2, 4], [1u64, 3, 0, 2]);
    let csf_dense = json!([
        [[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 2.0]],
        [[0.0, 0.0, 0.0, 0.0], [3.0, 0.0, 4.0, 0.0], [0.0, 0.0, 0.0, 0.0]]
    ]);
    let fixture = Fixture {
        file: "sparse_formats.hry",
        description: "One float64 [5, 6] matrix (empty columns 1 and 4, full column 5) as CSC, CSR, sorted and unsorted COO, row- and column-major dense; an int32 CSC of the same pattern; the layouts/csf.md example; KV metadata of every type",
        kv: vec![
            json!({"key": "producer", "type": "string", "value": "hurray-writer make_fixtures"}),
            json!({"key": "matrix.nnz", "type": "uint64", "value": cv.len()}),
            json!({"key": "matrix.offset", "type": "int64", "value": -3}),
            json!({"key": "matrix.scale", "type": "float64", "value": 0.25}),
            json!({"key": "matrix.symmetric", "type": "bool", "value": false}),
            json!({"key": "matrix.tag", "type": "bytes", "value": [0, 1, 254, 255]}),
            json!({"key": "matrix.names", "type": "array", "value": ["csc", "csr", "coo"]}),
        ],
        tensors: vec![
            json!({"name": "m.csc", "element_type": "float64", "layout": "csc", "shape": [5, 6], "nnz": cv.len(),
                "buffers": [buffer("values", "float64", json!(cv)), buffer("row_indices", "uint64", u64s(&cr)), buffer("col_ptr", "uint64", u64s(&cp))],
                "nnz_per_column": [3, 0, 2, 2, 0, 5], "dense": m.dense_json(false)}),
            json!({"name": "m.csr", "element_type": "float64", "layout": "csr", "shape": [5, 6], "nnz": rv.len(),
                "buffers": [buffer("values", "float64", json!(rv)), buffer("col_indices", "uint64", u64s(&rc)), buffer("row_ptr", "uint64", u64s(&rp))],
                "dense": m.dense_json(false)}),
            json!({"name": "m.coo", "element_type": "float64", "layout": "coo", "shape": [5, 6], "nnz": ov.len(),
                "buffers": [buffer("values", "float64", json!(ov)), buffer("indices", "uint64", u64s(&oi))],
                "coordinates": coords, "dense": m.dense_json(false)}),
            json!({"name": "m.coo_unsorted", "element_type": "float64", "layout": "coo", "shape": [5, 6], "nnz": ov.len(),
                "buffers": [buffer("values", "float64", json!(rev_values)), buffer("indices", "uint64", u64s(&rev_indices))],
                "coordinates": rev_coords, "dense": m.dense_json(false)}),
            json!({"name": "m.dense", "element_type": "float64", "layout": "row_major", "shape": [5, 6],
                "buffers": [buffer("data", "float64", json!(row_major))], "dense": m.dense_json(false)}),
            json!({"name": "m.dense_col_major", "element_type": "float64", "layout": "col_major", "shape": [5, 6],
                "buffers": [buffer("data", "float64", json!(col_major))], "dense": m.dense_json(false)}),
            json!({"name": "m.csc_int32", "element_type": "int32", "layout": "csc", "shape": [5, 6], "nnz": ints.len(),
                "buffers": [buffer("values", "int32", json!(ints)), buffer("row_indices", "uint64", u64s(&cr)), buffer("col_ptr", "uint64", u64s(&cp))],
                "dense": int_dense}),
            json!({"name": "csf", "element_type": "float32", "layout": "csf", "shape": [2, 3, 4], "nnz": 4,
                "buffers": [buffer("values", "float32", json!([1.0, 2.0, 3.0, 4.0])),
                    buffer("pos_0", "uint64", u64s(&pos0)), buffer("crd_0", "uint64", u64s(&crd0)),
                    buffer("pos_1", "uint64", u64s(&pos1)), buffer("crd_1", "uint64", u64s(&crd1)),
                    buffer("pos_2", "uint64", u64s(&pos2)), buffer("crd_2", "uint64", u64s(&crd2))],
                "coordinates": [[0, 0, 1], [0, 2, 3], [1, 1, 0], [1, 1, 2]], "dense": csf_dense}),
        ],
    };
    write(dir, &fixture, |w| {
        w.add_kv("producer", "hurray-writer make_fixtures")?;
        w.add_kv("matrix.nnz", cv.len() as u64)?;
        w.add_kv("matrix.offset", -3i64)?;
        w.add_kv("matrix.scale", 0.25f64)?;
        w.add_kv("matrix.symmetric", false)?;
        w.add_kv("matrix.tag", hurray_writer::KvValue::Bytes(vec![0, 1, 254, 255]))?;
        w.add_kv(
            "matrix.names",
            hurray_writer::KvValue::Array(hurray_writer::KvArray::String(vec![
                "csc".into(),
                "csr".into(),
                "coo".into(),
            ])),
        )?;
        w.write_csc("m.csc", &Csc::new(5, 6, &cv, &cr, &cp)?)?;
        w.write_csr("m.csr", &Csr::new(5, 6, &rv, &rc, &rp)?)?;
        w.write_coo("m.coo", &Coo::new(&[5, 6], &ov, &oi, true)?)?;
        w.write_coo("m.coo_unsorted", &Coo::new(&[5, 6], &rev_values, &rev_indices, false)?)?;
        w.write_dense("m.dense", &Dense::row_major(&[5, 6], &row_major)?)?;
        w.write_dense("m.dense_col_major", &Dense::column_major(&[5, 6], &col_major)?)?;
        w.write_csc("m.csc_int32", &Csc::new(5, 6, &ints, &cr, &cp)?)?;
        let levels = [
            CsfLevel { pos: &pos0, crd: &crd0 },
            CsfLevel { pos: &pos1, crd: &crd1 },
            CsfLevel { pos: &pos2, crd: &crd2 },
        ];
        w.write_csf("csf", &Csf::new(&[2, 3, 4], &[0, 1, 2], &csf_values, &levels)?)?;
        Ok(())
    })
}

fn empty(dir: &Path) -> Result<Json> {
    let none_f32: [f32; 0] = [];
    let none_u64: [u64; 0] = [];
    let fixture = Fixture {
        file: "empty.hry",
        description: "Empty matrices: CSC [0, 5], [5, 0], [0, 0], [3, 4] with nnz 0 (all-empty columns), CSR [0, 3], dense [3, 0]",
        kv: vec![],
        tensors: vec![
            json!({"name": "csc_0x5", "element_type": "float32", "layout": "csc", "shape": [0, 5], "nnz": 0,
                "buffers": [buffer("values", "float32", json!([])), buffer("row_indices", "uint64", json!([])), buffer("col_ptr", "uint64", json!([0, 0, 0, 0, 0, 0]))],
                "dense": []}),
            json!({"name": "csc_5x0", "element_type": "float32", "layout": "csc", "shape": [5, 0], "nnz": 0,
                "buffers": [buffer("values", "float32", json!([])), buffer("row_indices", "uint64", json!([])), buffer("col_ptr", "uint64", json!([0]))],
                "dense": [[], [], [], [], []]}),
            json!({"name": "csc_0x0", "element_type": "float32", "layout": "csc", "shape": [0, 0], "nnz": 0,
                "buffers": [buffer("values", "float32", json!([])), buffer("row_indices", "uint64", json!([])), buffer("col_ptr", "uint64", json!([0]))],
                "dense": []}),
            json!({"name": "csc_3x4_nnz0", "element_type": "float32", "layout": "csc", "shape": [3, 4], "nnz": 0,
                "buffers": [buffer("values", "float32", json!([])), buffer("row_indices", "uint64", json!([])), buffer("col_ptr", "uint64", json!([0, 0, 0, 0, 0]))],
                "nnz_per_column": [0, 0, 0, 0], "dense": [[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]}),
            json!({"name": "csr_0x3", "element_type": "float32", "layout": "csr", "shape": [0, 3], "nnz": 0,
                "buffers": [buffer("values", "float32", json!([])), buffer("col_indices", "uint64", json!([])), buffer("row_ptr", "uint64", json!([0]))],
                "dense": []}),
            json!({"name": "dense_3x0", "element_type": "float32", "layout": "row_major", "shape": [3, 0],
                "buffers": [buffer("data", "float32", json!([]))], "dense": [[], [], []]}),
        ],
    };
    write(dir, &fixture, |w| {
        w.write_csc("csc_0x5", &Csc::new(0, 5, &none_f32, &none_u64, &[0; 6])?)?;
        w.write_csc("csc_5x0", &Csc::new(5, 0, &none_f32, &none_u64, &[0])?)?;
        w.write_csc("csc_0x0", &Csc::new(0, 0, &none_f32, &none_u64, &[0])?)?;
        w.write_csc("csc_3x4_nnz0", &Csc::new(3, 4, &none_f32, &none_u64, &[0; 5])?)?;
        w.write_csr("csr_0x3", &Csr::new(0, 3, &none_f32, &none_u64, &[0])?)?;
        w.write_dense("dense_3x0", &Dense::row_major(&[3, 0], &none_f32)?)?;
        Ok(())
    })
}

fn dtypes(dir: &Path) -> Result<Json> {
    let f16 = [1.0f32, -0.0, 65504.0, f32::INFINITY].map(half::f16::from_f32);
    let bf16 = [1.0f32, -2.5, 3.0e38, f32::NEG_INFINITY].map(half::bf16::from_f32);
    let i8s = [-128i8, -1, 0, 127];
    let u64s_ = [0u64, 1, u64::MAX];
    let i64s = [i64::MIN, 0, i64::MAX];
    let complex: [f32; 4] = [1.0, -2.0, 0.5, 0.25];
    let scalar = [3.5f32];
    // Packed types, the element-types.md examples.
    let bools = Values::new(ElementType::Bool, 5, &[0x0D])?;
    let uint4 = Values::new(ElementType::UInt4, 3, &[0xC5, 0x03])?;
    let uint2 = Values::new(ElementType::UInt2, 3, &[0x27])?;
    let int4 = Values::new(ElementType::Int4, 4, &[0x78, 0xF1])?;
    // float6_e2m3 [1.0, 1.5, -2.0, 3.0, 0.5] = codes 08 0C 30 14 04.
    let f6 = Values::new(ElementType::Float6E2M3, 5, &[0x08, 0x03, 0x53, 0x04, 0x00, 0x00])?;
    let fixture = Fixture {
        file: "dtypes.hry",
        description: "Row-major tensors of many element types, including the element-types.md packing examples and a float32 scalar",
        kv: vec![],
        tensors: vec![
            json!({"name": "f16", "element_type": "float16", "layout": "row_major", "shape": [4],
                "buffers": [{"role": "data", "contents": {"as": "float16", "count": 4, "bits": [15360, 32768, 31743, 31744], "values": [1.0, -0.0, 65504.0, "Infinity"]}}],
                "dense": [1.0, -0.0, 65504.0, "Infinity"]}),
            json!({"name": "bf16", "element_type": "bfloat16", "layout": "row_major", "shape": [2, 2],
                "buffers": [{"role": "data", "contents": {"as": "bfloat16", "count": 4, "bits": bf16.map(|b| b.to_bits()), "values": bf16.map(|b| float(f64::from(b.to_f32())))}}],
                "dense": [[1.0, -2.5], [f64::from(bf16[2].to_f32()), "-Infinity"]]}),
            json!({"name": "i8", "element_type": "int8", "layout": "row_major", "shape": [4],
                "buffers": [buffer("data", "int8", json!(i8s))], "dense": i8s}),
            json!({"name": "u64", "element_type": "uint64", "layout": "row_major", "shape": [3],
                "buffers": [buffer("data", "uint64", json!(u64s_))], "dense": u64s_}),
            json!({"name": "i64", "element_type": "int64", "layout": "col_major", "shape": [3, 1],
                "buffers": [buffer("data", "int64", json!(i64s))], "dense": [[i64s[0]], [i64s[1]], [i64s[2]]]}),
            json!({"name": "c64", "element_type": "complex64", "layout": "row_major", "shape": [2],
                "buffers": [buffer("data", "complex64", json!([[1.0, -2.0], [0.5, 0.25]]))], "dense": [[1.0, -2.0], [0.5, 0.25]]}),
            json!({"name": "scalar", "element_type": "float32", "layout": "row_major", "shape": [],
                "buffers": [buffer("data", "float32", json!([3.5]))], "dense": 3.5}),
            json!({"name": "bool", "element_type": "bool", "layout": "row_major", "shape": [5],
                "buffers": [{"role": "data", "contents": {"as": "bool", "count": 5, "raw_bytes": [13], "values": [true, false, true, true, false]}}],
                "dense": [true, false, true, true, false]}),
            json!({"name": "uint4", "element_type": "uint4", "layout": "row_major", "shape": [3],
                "buffers": [{"role": "data", "contents": {"as": "uint4", "count": 3, "raw_bytes": [197, 3], "values": [5, 12, 3]}}],
                "dense": [5, 12, 3]}),
            json!({"name": "uint2", "element_type": "uint2", "layout": "row_major", "shape": [3],
                "buffers": [{"role": "data", "contents": {"as": "uint2", "count": 3, "raw_bytes": [39], "values": [3, 1, 2]}}],
                "dense": [3, 1, 2]}),
            json!({"name": "int4", "element_type": "int4", "layout": "row_major", "shape": [2, 2],
                "buffers": [{"role": "data", "contents": {"as": "int4", "count": 4, "raw_bytes": [120, 241], "values": [-8, 7, 1, -1]}}],
                "dense": [[-8, 7], [1, -1]]}),
            json!({"name": "float6", "element_type": "float6_e2m3", "layout": "row_major", "shape": [5],
                "buffers": [{"role": "data", "contents": {"as": "float6_e2m3", "count": 5, "bits": [8, 12, 48, 20, 4], "values": [1.0, 1.5, -2.0, 3.0, 0.5]}}],
                "dense": [1.0, 1.5, -2.0, 3.0, 0.5]}),
        ],
    };
    write(dir, &fixture, |w| {
        w.write_dense("f16", &Dense::row_major(&[4], &f16)?)?;
        w.write_dense("bf16", &Dense::row_major(&[2, 2], &bf16)?)?;
        w.write_dense("i8", &Dense::row_major(&[4], &i8s)?)?;
        w.write_dense("u64", &Dense::row_major(&[3], &u64s_)?)?;
        w.write_dense("i64", &Dense::column_major(&[3, 1], &i64s)?)?;
        let c64 = Values::new(ElementType::Complex64, 2, zerocopy::IntoBytes::as_bytes(&complex[..]))?;
        w.write_dense("c64", &Dense::row_major(&[2], c64)?)?;
        w.write_dense("scalar", &Dense::row_major(&[], &scalar)?)?;
        w.write_dense("bool", &Dense::row_major(&[5], bools)?)?;
        w.write_dense("uint4", &Dense::row_major(&[3], uint4)?)?;
        w.write_dense("uint2", &Dense::row_major(&[3], uint2)?)?;
        w.write_dense("int4", &Dense::row_major(&[2, 2], int4)?)?;
        w.write_dense("float6", &Dense::row_major(&[5], f6)?)?;
        Ok(())
    })
}

/// Writes every fixture and `manifest.json` into `dir`.
pub fn generate(dir: &Path) -> Result<Json> {
    std::fs::create_dir_all(dir)?;
    let files = vec![
        csc_worked_example(dir)?,
        sparse_formats(dir)?,
        empty(dir)?,
        dtypes(dir)?,
    ];
    let manifest = json!({
        "corpus": "hurray-reader fixtures",
        "manifest_version": 1,
        "producer": "cargo run -p hurray-writer --example make_fixtures -- fixtures",
        "file_count": files.len(),
        "files": files,
    });
    std::fs::write(
        dir.join("manifest.json"),
        serde_json::to_string_pretty(&manifest)? + "\n",
    )?;
    Ok(manifest)
}

#[allow(dead_code)]
fn main() -> Result<()> {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "fixtures".into()));
    let manifest = generate(&dir)?;
    println!("wrote {} fixtures to {}", manifest["file_count"], dir.display());
    Ok(())
}
