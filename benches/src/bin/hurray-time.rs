//! In-process timings of the reader on one CSC file, as JSON (medians of
//! `std::time::Instant` over several runs), for the side-by-side comparison
//! with scipy (`benches/peers/run.sh`).
//!
//! ```text
//! cargo run --release -p hurray-benches --bin hurray-time -- FILE.hry [--runs 10] [--out FILE.json]
//! ```
//!
//! Measures, on the tensor `A` (float32 or float64 CSC, page cache warm:
//! the file is first settled with `data::settle_page_cache`):
//! - `open_to_view`: `MappedFile::open` + `file()` + `tensor` + `csc_unscanned`;
//! - `open_to_first_value`: the same, then the first stored value;
//! - `validate`: `CscStructure::validate()` on the unscanned structure;
//! - `open_to_validated_view`: open + `csc::<T>()` (strict: scans);
//! - `validate_parallel_2threads`: `CscStructure::validate_parallel(2)`;
//! - `validate_2threads_local`: the benches' two-thread stand-in;
//! - `spmv_csc_Ax`: `y = A·x` with `CscView::mul_vec` (x = `x_at`), x and
//!   y in huge pages like numpy's arrays (`HugeVec`);
//! - `spmv_csc_Ax_direct`: the same product by the direct scatter
//!   (`kernels::spmv_csc_direct`, the path `mul_vec` takes for a `y` within
//!   the L2 cache; here `mul_vec` uses propagation blocking), and
//!   `spmv_csc_Ax_direct_same_bits`: whether the two `y` are equal bit for bit;
//! - `spmv_csr_of_At_Atx`: `y = Aᵀ·x` with `CsrView::mul_vec` on
//!   `A.transpose()`, same; `spmv_csr_of_At_Atx_2threads`: with
//!   `CsrView::mul_vec_parallel(.., 2)`, and `..._same_bits`: whether its
//!   `y` equals the one-thread product bit for bit;
//! - `*_vec_4k_pages`: both again with x and y in plain `Vec`s.
//!
//! Each SpMV also reports `sum(y)` (in f64) to cross-check with scipy.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

use hurray_benches::data::TENSOR;
use hurray_benches::kernels::{spmv_csc_direct, validate_threads, x_vector, HugeVec, Real};
use hurray_benches::timing::{sample, summary};
use hurray_reader::{ElementType, MappedFile, Options};

fn time_file<T: Real>(path: &Path, runs: usize) -> serde_json::Value {
    let fast_runs = runs.max(1) * 10;
    let open_to_view = sample(3, fast_runs, || {
        let mapped = MappedFile::open(path, Options::default()).expect("open");
        let file = mapped.file().expect("parse");
        let view = file.tensor(TENSOR).expect("tensor").csc_unscanned::<T>().expect("view");
        view.nnz()
    });
    let open_to_first_value = sample(3, fast_runs, || {
        let mapped = MappedFile::open(path, Options::default()).expect("open");
        let file = mapped.file().expect("parse");
        let view = file.tensor(TENSOR).expect("tensor").csc_unscanned::<T>().expect("view");
        (0..view.ncols())
            .find_map(|j| view.column(j).expect("column").next())
            .map(|(_, v)| *v)
    });

    let mapped = MappedFile::open(path, Options::default()).expect("open");
    let file = mapped.file().expect("parse");
    let tensor = file.tensor(TENSOR).expect("tensor");
    let structure = tensor.csc_structure().expect("structure");
    let (ptr, idx, nrows) = (structure.col_ptr(), structure.row_indices(), structure.nrows());
    let scanned_bytes = ((ptr.len() + idx.len()) * 8) as u64;
    let validate = sample(1, runs, || structure.validate().expect("valid"));
    let validate_parallel = sample(1, runs, || structure.validate_parallel(2).expect("valid"));
    let validate_2threads = sample(1, runs, || assert!(validate_threads(ptr, idx, nrows, 2)));
    let open_to_validated_view = sample(1, runs, || {
        let mapped = MappedFile::open(path, Options::default()).expect("open");
        let file = mapped.file().expect("parse");
        let view = file.tensor(TENSOR).expect("tensor").csc::<T>().expect("strict view");
        view.nnz()
    });

    let a = tensor.csc::<T>().expect("strict view");
    // x and y in huge pages, as numpy allocates them (see HugeVec).
    let x = HugeVec::from_slice(&x_vector::<T>(a.ncols()));
    let mut y = HugeVec::<T>::zeroed(a.nrows() as usize);
    let spmv = sample(1, runs, || a.mul_vec(x.as_slice(), y.as_mut_slice()).expect("mul_vec"));
    let y_sum: f64 = y.as_slice().iter().map(|v| v.to_f64()).sum();
    let mut y_direct = HugeVec::<T>::zeroed(a.nrows() as usize);
    let spmv_direct = sample(1, runs, || spmv_csc_direct(&a, x.as_slice(), y_direct.as_mut_slice()));
    let bits = |v: &[T]| v.iter().map(|a| a.to_f64().to_bits()).collect::<Vec<u64>>();
    let direct_same_bits = bits(y.as_slice()) == bits(y_direct.as_slice());
    drop(y_direct);
    let mut y2 = HugeVec::<T>::zeroed(a.nrows() as usize);
    let spmv_2threads = sample(1, runs, || {
        a.mul_vec_parallel(x.as_slice(), y2.as_mut_slice(), 2)
            .expect("mul_vec_parallel")
    });
    let csc_parallel_same_bits = bits(y.as_slice()) == bits(y2.as_slice());
    drop(y2);
    let at = a.transpose();
    let xt = HugeVec::from_slice(&x_vector::<T>(at.ncols()));
    let mut z = HugeVec::<T>::zeroed(at.nrows() as usize);
    let spmv_t = sample(1, runs, || {
        at.mul_vec(xt.as_slice(), z.as_mut_slice()).expect("mul_vec")
    });
    let z_sum: f64 = z.as_slice().iter().map(|v| v.to_f64()).sum();
    let mut z2 = HugeVec::<T>::zeroed(at.nrows() as usize);
    let spmv_t_2threads = sample(1, runs, || {
        at.mul_vec_parallel(xt.as_slice(), z2.as_mut_slice(), 2)
            .expect("mul_vec_parallel")
    });
    let parallel_same_bits = bits(z.as_slice()) == bits(z2.as_slice());
    drop(z2);
    // The same kernels with x and y in plain Vecs (4 KiB pages).
    let x4k: Vec<T> = x_vector(a.ncols());
    let mut y4k = vec![T::default(); a.nrows() as usize];
    let spmv_4k = sample(1, runs, || a.mul_vec(&x4k, &mut y4k).expect("mul_vec"));
    let xt4k: Vec<T> = x_vector(at.ncols());
    let mut z4k = vec![T::default(); at.nrows() as usize];
    let spmv_t_4k = sample(1, runs, || at.mul_vec(&xt4k, &mut z4k).expect("mul_vec"));

    serde_json::json!({
        "file": path,
        "file_bytes": std::fs::metadata(path).expect("metadata").len(),
        "shape": [a.nrows(), a.ncols()],
        "nnz": a.nnz(),
        "scanned_bytes": scanned_bytes,
        "open_to_view": summary(&open_to_view),
        "open_to_first_value": summary(&open_to_first_value),
        "validate": summary(&validate),
        "validate_parallel_2threads": summary(&validate_parallel),
        "validate_2threads_local": summary(&validate_2threads),
        "open_to_validated_view": summary(&open_to_validated_view),
        "spmv_csc_Ax": summary(&spmv),
        "spmv_csc_Ax_sum_y": y_sum,
        "spmv_csc_Ax_direct": summary(&spmv_direct),
        "spmv_csc_Ax_direct_same_bits": direct_same_bits,
        "spmv_csc_Ax_2threads": summary(&spmv_2threads),
        "spmv_csc_Ax_2threads_same_bits": csc_parallel_same_bits,
        "spmv_csr_of_At_Atx": summary(&spmv_t),
        "spmv_csr_of_At_Atx_sum_y": z_sum,
        "spmv_csr_of_At_Atx_2threads": summary(&spmv_t_2threads),
        "spmv_csr_of_At_Atx_2threads_same_bits": parallel_same_bits,
        "spmv_csc_Ax_vec_4k_pages": summary(&spmv_4k),
        "spmv_csr_of_At_Atx_vec_4k_pages": summary(&spmv_t_4k),
    })
}

/// In-process timings of the reader on one CSC file, as JSON.
#[derive(clap::Parser)]
#[command(name = "hurray-time")]
struct Args {
    /// The file (tensor `A`, float32 or float64 CSC), e.g. written by `gen`.
    file: PathBuf,
    /// Runs per measurement (the median is reported).
    #[arg(long, default_value_t = 10)]
    runs: usize,
    /// Also write the JSON to this file.
    #[arg(long)]
    out: Option<PathBuf>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Args { file: path, runs, out } = clap::Parser::parse();
    hurray_benches::data::settle_page_cache(&path)?;
    let element_type = hurray_benches::data::tensor_element_type(&path)?;
    let result = match element_type {
        Some(ElementType::Float32) => time_file::<f32>(&path, runs),
        Some(ElementType::Float64) => time_file::<f64>(&path, runs),
        other => return Err(format!("tensor A has element type {other:?}; want float32 or float64").into()),
    };
    let text = serde_json::to_string_pretty(&result)?;
    if let Some(out) = out {
        std::fs::write(&out, format!("{text}\n"))?;
    }
    println!("{text}");
    Ok(())
}
