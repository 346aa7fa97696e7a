//! `CscView::mul_vec` (y = A·x) and `CsrView::mul_vec` (row dot products;
//! on `transpose()`, Aᵀ·x): exact values on the worked example, agreement
//! with a dense product on a larger matrix in `f32` and `f64`, the length
//! errors, an unscanned damaged view that errors instead of answering, and
//! the propagation-blocked path for a large `y` against the direct scatter,
//! bit for bit, and the products on threads against one thread.

use hurray_reader::{AlignedBytes, Error, Field, HurrayFile, Location, Options};
use hurray_writer::{Csc, Csr, FileWriter, WriterOptions};

mod support {
    pub mod worked_example;
}

use support::worked_example::{DENSE, FIXTURE};

#[test]
fn worked_example_products() {
    let bytes = AlignedBytes::read(FIXTURE).unwrap();
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("A").unwrap().csc::<f32>().unwrap();

    // A·[1, 2, 3, 4, 5] = [1·1 + 2·4, 3·3, 4·2 + 5·5, 0].
    let mut y = [f32::NAN; 4]; // overwritten, not accumulated into
    a.mul_vec(&[1.0, 2.0, 3.0, 4.0, 5.0], &mut y).unwrap();
    assert_eq!(y, [9.0, 9.0, 33.0, 0.0]);
    a.mul_vec(&[0.0, 0.0, 0.0, 0.0, 1.0], &mut y).unwrap();
    assert_eq!(y, [0.0, 0.0, 5.0, 0.0]); // column 4

    // Aᵀ·[1, 2, 3, 4] over the same bytes (CSR of Aᵀ).
    let at = a.transpose();
    let mut z = [f32::NAN; 5];
    at.mul_vec(&[1.0, 2.0, 3.0, 4.0], &mut z).unwrap();
    assert_eq!(z, [1.0, 12.0, 6.0, 2.0, 15.0]);

    // The dense products agree for every unit vector.
    for j in 0..5 {
        let mut x = [0f32; 5];
        x[j] = 1.0;
        a.mul_vec(&x, &mut y).unwrap();
        let column: Vec<f32> = DENSE.iter().map(|row| row[j]).collect();
        assert_eq!(y.to_vec(), column, "A·e{j}");
    }
    for i in 0..4 {
        let mut x = [0f32; 4];
        x[i] = 1.0;
        at.mul_vec(&x, &mut z).unwrap();
        assert_eq!(z, DENSE[i], "Aᵀ·e{i}");
    }
}

#[test]
fn wrong_lengths_are_errors_and_write_nothing() {
    let bytes = AlignedBytes::read(FIXTURE).unwrap();
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("A").unwrap().csc::<f32>().unwrap();
    let mut y = [7f32; 4];
    let e = a.mul_vec(&[1.0; 4], &mut y).unwrap_err();
    assert_eq!(
        e,
        Error::LengthMismatch {
            tensor: "A".into(),
            what: "x",
            len: 4,
            expected_name: "ncols",
            expected: 5,
        }
    );
    assert_eq!(e.to_string(), "tensor 'A': x has length 4, expected ncols = 5");
    let mut short = [7f32; 3];
    let e = a.mul_vec(&[1.0; 5], &mut short).unwrap_err();
    assert!(matches!(
        e,
        Error::LengthMismatch {
            what: "y",
            len: 3,
            expected: 4,
            ..
        }
    ));
    assert_eq!(short, [7.0; 3]);
    let mut z = [7f32; 4];
    let e = a.transpose().mul_vec(&[1.0; 4], &mut z).unwrap_err();
    assert!(matches!(
        e,
        Error::LengthMismatch {
            what: "y",
            len: 4,
            expected_name: "nrows of the transpose",
            expected: 5,
            ..
        }
    ));
    // A is 4 × 5: its transpose's 5 rows, not A's 4, are named.
    assert_eq!(
        e.to_string(),
        "tensor 'A': y has length 4, expected nrows of the transpose = 5"
    );
    assert_eq!(z, [7.0; 4]);
    assert_eq!(y, [7.0; 4]);
}

/// A deterministic matrix of small integers (exact in f32 sums), as CSC
/// and as CSR, and its dense form.
struct Matrix {
    nrows: usize,
    ncols: usize,
    csc: (Vec<u64>, Vec<u64>, Vec<f64>),
    csr: (Vec<u64>, Vec<u64>, Vec<f64>),
    dense: Vec<Vec<f64>>,
}

fn matrix(nrows: usize, ncols: usize) -> Matrix {
    let mut dense = vec![vec![0f64; ncols]; nrows];
    let mut h = 0x2545_f491_4f6c_dd1du64;
    for row in dense.iter_mut() {
        for v in row.iter_mut() {
            h ^= h << 13;
            h ^= h >> 7;
            h ^= h << 17;
            if h.is_multiple_of(7) {
                *v = (h >> 40) as f64 % 9.0 - 4.0;
            }
        }
    }
    let compress = |outer: usize, inner: usize, at: &dyn Fn(usize, usize) -> f64| {
        let (mut ptr, mut idx, mut val) = (vec![0u64], Vec::new(), Vec::new());
        for o in 0..outer {
            for i in 0..inner {
                let v = at(o, i);
                if v != 0.0 {
                    idx.push(i as u64);
                    val.push(v);
                }
            }
            ptr.push(idx.len() as u64);
        }
        (ptr, idx, val)
    };
    Matrix {
        nrows,
        ncols,
        csc: compress(ncols, nrows, &|j, i| dense[i][j]),
        csr: compress(nrows, ncols, &|i, j| dense[i][j]),
        dense,
    }
}

#[test]
fn larger_matrix_agrees_with_the_dense_product() {
    let m = matrix(300, 170);
    let csc_f32: Vec<f32> = m.csc.2.iter().map(|&v| v as f32).collect();
    let csr_f32: Vec<f32> = m.csr.2.iter().map(|&v| v as f32).collect();
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    let (nr, nc) = (m.nrows as u64, m.ncols as u64);
    w.write_csc("csc64", &Csc::new(nr, nc, &m.csc.2, &m.csc.1, &m.csc.0).unwrap())
        .unwrap();
    w.write_csc("csc32", &Csc::new(nr, nc, &csc_f32, &m.csc.1, &m.csc.0).unwrap())
        .unwrap();
    w.write_csr("csr64", &Csr::new(nr, nc, &m.csr.2, &m.csr.1, &m.csr.0).unwrap())
        .unwrap();
    w.write_csr("csr32", &Csr::new(nr, nc, &csr_f32, &m.csr.1, &m.csr.0).unwrap())
        .unwrap();
    let bytes = AlignedBytes::from_slice(&w.finish().unwrap());
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();

    let x: Vec<f64> = (0..m.ncols).map(|j| (j % 11) as f64 - 5.0).collect();
    let xt: Vec<f64> = (0..m.nrows).map(|i| (i % 7) as f64 - 3.0).collect();
    let ax: Vec<f64> = m
        .dense
        .iter()
        .map(|row| row.iter().zip(&x).map(|(a, b)| a * b).sum())
        .collect();
    let atx: Vec<f64> = (0..m.ncols)
        .map(|j| m.dense.iter().zip(&xt).map(|(row, b)| row[j] * b).sum())
        .collect();
    assert!(ax.iter().any(|&v| v != 0.0) && atx.iter().any(|&v| v != 0.0));

    let mut y = vec![0f64; m.nrows];
    let mut z = vec![0f64; m.ncols];
    let csc = file.tensor("csc64").unwrap().csc::<f64>().unwrap();
    csc.mul_vec(&x, &mut y).unwrap();
    assert_eq!(y, ax);
    csc.transpose().mul_vec(&xt, &mut z).unwrap();
    assert_eq!(z, atx);
    let csr = file.tensor("csr64").unwrap().csr::<f64>().unwrap();
    csr.mul_vec(&x, &mut y).unwrap();
    assert_eq!(y, ax);
    csr.transpose().mul_vec(&xt, &mut z).unwrap(); // CSC of Aᵀ: scatter
    assert_eq!(z, atx);

    let to32 = |v: &[f64]| v.iter().map(|&a| a as f32).collect::<Vec<f32>>();
    let (x32, xt32) = (to32(&x), to32(&xt));
    let mut y32 = vec![0f32; m.nrows];
    let mut z32 = vec![0f32; m.ncols];
    let csc = file.tensor("csc32").unwrap().csc::<f32>().unwrap();
    csc.mul_vec(&x32, &mut y32).unwrap();
    assert_eq!(y32, to32(&ax));
    csc.transpose().mul_vec(&xt32, &mut z32).unwrap();
    assert_eq!(z32, to32(&atx));
    let csr = file.tensor("csr32").unwrap().csr::<f32>().unwrap();
    csr.mul_vec(&x32, &mut y32).unwrap();
    assert_eq!(y32, to32(&ax));
}

#[test]
fn unscanned_damaged_view_errors_instead_of_answering() {
    // Column 1's row is out of bounds (4 >= nrows = 4) in an unscanned view.
    let bytes = AlignedBytes::read(FIXTURE).unwrap();
    let mut raw = bytes.to_vec();
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let rows_at = file.tensor("A").unwrap().buffer(1).unwrap().file_offset() as usize;
    raw[rows_at + 8..rows_at + 16].copy_from_slice(&4u64.to_le_bytes());
    let damaged = AlignedBytes::from_slice(&raw);
    let file = HurrayFile::parse(&damaged, Options::permissive()).unwrap();
    let a = file.tensor("A").unwrap().csc::<f32>().unwrap();
    assert!(!a.is_validated());
    let mut y = [0f32; 4];
    let e = a.mul_vec(&[1.0; 5], &mut y).unwrap_err();
    assert!(
        matches!(
            e,
            Error::IndexOutOfBounds {
                at: Location {
                    field: Field { index: Some(1), .. },
                    ..
                },
                value: 4,
                bound: 4,
                ..
            }
        ),
        "{e:?}"
    );
    // On threads: the same error, and y untouched.
    let mut y = [7f32; 4];
    assert_eq!(a.mul_vec_parallel(&[1.0; 5], &mut y, 2), Err(e));
    assert_eq!(y, [7.0; 4]);
    let mut z = [0f32; 5];
    assert!(a.transpose().mul_vec(&[1.0; 4], &mut z).is_err());
    // Undamaged and unscanned: the product is checked first, then right.
    let file = HurrayFile::parse(&bytes, Options::permissive()).unwrap();
    let a = file.tensor("A").unwrap().csc_unscanned::<f32>().unwrap();
    a.mul_vec(&[1.0, 2.0, 3.0, 4.0, 5.0], &mut y).unwrap();
    assert_eq!(y, [9.0, 9.0, 33.0, 0.0]);
}

/// `y = A·x` the plain way, `y[row] += value · x[col]` column by column:
/// the direct scatter the library uses for a small `y`, and what scipy's
/// `csc_matvec` does.
fn direct_scatter<T: Copy + Default + std::ops::Add<Output = T> + std::ops::Mul<Output = T>>(
    (ptr, idx, val): (&[u64], &[u64], &[T]),
    x: &[T],
    nrows: usize,
) -> Vec<T> {
    let mut y = vec![T::default(); nrows];
    for (j, w) in ptr.windows(2).enumerate() {
        for k in w[0] as usize..w[1] as usize {
            y[idx[k] as usize] = y[idx[k] as usize] + val[k] * x[j];
        }
    }
    y
}

/// Aᵀ·x the plain way: each slice's dot product with `xt`, in storage
/// order from 0 (what scipy's `csr_matvec` does).
fn plain_dots((ptr, idx, val): (&[u64], &[u64], &[f64]), xt: &[f64]) -> Vec<f64> {
    ptr.windows(2)
        .map(|w| (w[0] as usize..w[1] as usize).fold(0.0, |sum, k| sum + val[k] * xt[idx[k] as usize]))
        .collect()
}

/// Pseudo-random `u64`s (xorshift64) from `seed`, the same sequence on
/// every run.
fn xorshift(mut h: u64) -> impl FnMut() -> u64 {
    move || {
        h ^= h << 13;
        h ^= h >> 7;
        h ^= h << 17;
        h
    }
}

/// A value from random bits with a spread of magnitudes (exponents -20..20,
/// both signs), so that adding in another order would change the rounding.
fn spread(bits: u64) -> f64 {
    let mantissa = 1.0 + (bits & 0xFFFF_FFFF) as f64 / 4_294_967_296.0;
    let exponent = ((bits >> 32) % 41) as i32 - 20;
    let sign = if bits >> 63 == 1 { -1.0 } else { 1.0 };
    sign * mantissa * 2f64.powi(exponent)
}

/// A `y` larger than 16 MiB takes the propagation-blocked path of
/// `CscView::mul_vec` (when its bins fill densely enough); its result must
/// equal the direct scatter's bit for bit, in f32 and f64. With 2^21 + 3
/// rows the f64 product is blocked (16 MiB and 24 bytes of `y`) and the
/// f32 one direct with prefetching (8 MiB); with 2^22 + 3 rows the f32
/// product is blocked and the f64 one direct (its bins would be too
/// sparse: `Blocking::plan`'s unit test checks both sizes); on a CPU with
/// AVX-512 that f32 product takes the AVX-512 scatter (5 bins of 4 blocks
/// of 1 MiB, one partition). A third of the
/// columns put their rows in the first 2^17 rows, so that block's bin fills
/// up and is applied many times before the end; the values span 2^±20 so
/// that any change in the order of the additions would show in the
/// rounding.
#[test]
fn blocked_product_equals_the_direct_scatter_bit_for_bit() {
    for nrows in [(1usize << 21) + 3, (1usize << 22) + 3] {
        blocked_and_direct_agree(nrows);
    }
}

fn blocked_and_direct_agree(nrows: usize) {
    let ncols = 1usize << 20;
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
    let (mut ptr, mut idx, mut val) = (vec![0u64], Vec::new(), Vec::new());
    for j in 0..ncols {
        let count = next() % 5;
        let span = if j % 3 == 0 { 1u64 << 17 } else { nrows as u64 };
        let mut rows: Vec<u64> = (0..count).map(|_| next() % span).collect();
        rows.sort_unstable();
        rows.dedup();
        for r in rows {
            idx.push(r);
            val.push(spread(next()));
        }
        ptr.push(idx.len() as u64);
    }
    let nnz = idx.len();
    assert!(nnz > 2_000_000, "{nnz}");
    // The last row is used, and an empty last column.
    idx.push(nrows as u64 - 1);
    val.push(1.5);
    *ptr.last_mut().unwrap() += 1;
    ptr.push(idx.len() as u64);
    let ncols = ncols + 1;
    let x: Vec<f64> = (0..ncols).map(|_| spread(next())).collect();
    let val32: Vec<f32> = val.iter().map(|&v| v as f32).collect();
    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();

    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    let (nr, nc) = (nrows as u64, ncols as u64);
    w.write_csc("f64", &Csc::new(nr, nc, &val, &idx, &ptr).unwrap())
        .unwrap();
    w.write_csc("f32", &Csc::new(nr, nc, &val32, &idx, &ptr).unwrap())
        .unwrap();
    let bytes = AlignedBytes::from_slice(&w.finish().unwrap());
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();

    // A second `x` for a second product, which takes the bins the first
    // left (kept between products, not zeroed): any slot read before it
    // is written would carry the first product's contributions.
    let x_again: Vec<f64> = (0..ncols).map(|_| spread(next())).collect();
    let bits = |v: &[f64]| v.iter().map(|a| a.to_bits()).collect::<Vec<u64>>();
    for (x, name) in [(&x, "f64"), (&x_again, "f64, again")] {
        let expected = direct_scatter((&ptr, &idx, &val), x, nrows);
        let mut y = vec![f64::NAN; nrows];
        let a = file.tensor("f64").unwrap().csc::<f64>().unwrap();
        a.mul_vec(x, &mut y).unwrap();
        assert!(bits(&y) == bits(&expected), "{name}: blocked and direct differ");
    }
    let expected = direct_scatter((&ptr, &idx, &val), &x, nrows);
    // On threads, above 16 MiB of y each range of rows planned on its
    // own: the same bits. (Up to 16 MiB the columns are cut, and the
    // rounding follows the cut: `parallel_scatter_by_columns_adds_the_parts_in_order`.)
    for threads in [2, 3].into_iter().filter(|_| nrows * 8 > 16 << 20) {
        let mut y = vec![f64::NAN; nrows];
        let a = file.tensor("f64").unwrap().csc::<f64>().unwrap();
        a.mul_vec_parallel(&x, &mut y, threads).unwrap();
        assert!(bits(&y) == bits(&expected), "f64: {threads} threads");
    }

    let x32_again: Vec<f32> = x_again.iter().map(|&v| v as f32).collect();
    let bits = |v: &[f32]| v.iter().map(|a| a.to_bits()).collect::<Vec<u32>>();
    for (x, name) in [(&x32, "f32"), (&x32_again, "f32, again")] {
        let expected = direct_scatter((&ptr, &idx, &val32), x, nrows);
        let mut y = vec![f32::NAN; nrows];
        let a = file.tensor("f32").unwrap().csc::<f32>().unwrap();
        a.mul_vec(x, &mut y).unwrap();
        assert!(bits(&y) == bits(&expected), "{name}: blocked and direct differ");
    }
    let expected = direct_scatter((&ptr, &idx, &val32), &x32, nrows);
    // The same for f32, above 16 MiB of y.
    for threads in [2, 3].into_iter().filter(|_| nrows * 4 > 16 << 20) {
        let mut y = vec![f32::NAN; nrows];
        let a = file.tensor("f32").unwrap().csc::<f32>().unwrap();
        a.mul_vec_parallel(&x32, &mut y, threads).unwrap();
        assert!(bits(&y) == bits(&expected), "f32: {threads} threads");
    }

    // Aᵀ·x through the CSR view of the same bytes: dot products gathering
    // from an x of 16 MiB or more, which they prefetch from.
    let xt: Vec<f64> = (0..nrows).map(|_| spread(next())).collect();
    let dots = plain_dots((&ptr, &idx, &val), &xt);
    let at = file.tensor("f64").unwrap().csc::<f64>().unwrap().transpose();
    let bits64 = |v: &[f64]| v.iter().map(|a| a.to_bits()).collect::<Vec<u64>>();
    for threads in [1, 2, 3] {
        let mut z = vec![f64::NAN; ncols];
        at.mul_vec_parallel(&xt, &mut z, threads).unwrap();
        assert!(bits64(&z) == bits64(&dots), "Aᵀ·x: {threads} threads");
    }
    let mut z = vec![f64::NAN; ncols];
    at.mul_vec(&xt, &mut z).unwrap();
    assert!(bits64(&z) == bits64(&dots), "Aᵀ·x");

    // The order matters for these values: summing each row's products in
    // reverse changes some results (so the check above can fail).
    let mut reversed = vec![0f32; nrows];
    for (j, w) in ptr.windows(2).enumerate().rev() {
        for k in (w[0] as usize..w[1] as usize).rev() {
            reversed[idx[k] as usize] += val32[k] * x32[j];
        }
    }
    assert!(bits(&reversed) != bits(&expected));
}

/// `parallel(y, threads)` (a `mul_vec_parallel` writing into `y`, full of
/// NaN before each call) for 0, 1, 2, 3, 5, 64 and 1000 threads gives
/// `expected` (`mul_vec`'s product, with no NaN) bit for bit.
fn same_bits_on_threads(name: &str, expected: &[f64], parallel: impl Fn(&mut [f64], usize)) {
    let bits = |v: &[f64]| v.iter().map(|a| a.to_bits()).collect::<Vec<u64>>();
    assert!(expected.iter().all(|v| !v.is_nan()), "{name}");
    for threads in [0, 1, 2, 3, 5, 64, 1000] {
        let mut y = vec![f64::NAN; expected.len()];
        parallel(&mut y, threads);
        assert!(bits(&y) == bits(expected), "{name}, {threads} threads");
    }
}

/// `CsrView::mul_vec_parallel` shares the elements out evenly between
/// the threads, each taking the rows that start in its share, and cuts no
/// row of 4 096 elements or fewer: whatever the thread count and however
/// the elements fall (empty rows, one row holding most elements, no rows,
/// no elements), every `y[i]` equals `mul_vec`'s bit for bit, and all of
/// `y` is overwritten. Values span 2^±20, so a change in the order of the
/// additions would show in the rounding. (Rows that are cut: the unit
/// tests of `kernels/product/dots.rs`.)
#[test]
fn parallel_dot_products_equal_one_thread_bit_for_bit() {
    let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
    let ncols = 1000u64;
    // (name, elements per row)
    let shapes: [(&str, Vec<u64>); 5] = [
        (
            "varied",
            (0..2000).map(|i| if i % 5 == 0 { 0 } else { next() % 40 }).collect(),
        ),
        (
            "one long row",
            (0..300)
                .map(|i| if i == 17 { 900 } else { u64::from(i % 50 == 0) })
                .collect(),
        ),
        (
            "long last row",
            (0..10).map(|i| if i == 9 { 1000 } else { 0 }).collect(),
        ),
        ("no elements", vec![0; 7]),
        ("no rows", vec![]),
    ];
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    let mut stored = Vec::new();
    for (name, lengths) in &shapes {
        let (mut ptr, mut idx, mut val) = (vec![0u64], Vec::new(), Vec::new());
        for &len in lengths {
            // `len` distinct sorted columns: every ncols/len-th, shifted.
            let step = ncols / len.max(1);
            let shift = next() % step.max(1);
            idx.extend((0..len).map(|k| k * step + shift));
            val.extend((0..len).map(|_| spread(next())));
            ptr.push(idx.len() as u64);
        }
        let nrows = lengths.len() as u64;
        w.write_csr(name, &Csr::new(nrows, ncols, &val, &idx, &ptr).unwrap())
            .unwrap();
        stored.push((name, nrows as usize));
    }
    let bytes = AlignedBytes::from_slice(&w.finish().unwrap());
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let x: Vec<f64> = (0..ncols).map(|_| spread(next())).collect();
    for (name, nrows) in stored {
        let a = file.tensor(name).unwrap().csr::<f64>().unwrap();
        let mut expected = vec![f64::NAN; nrows];
        a.mul_vec(&x, &mut expected).unwrap();
        same_bits_on_threads(name, &expected, |y, threads| {
            a.mul_vec_parallel(&x, y, threads).unwrap()
        });
    }
    // The worked example's Aᵀ·x (rows of Aᵀ = columns of A), in f32.
    let bytes = AlignedBytes::read(FIXTURE).unwrap();
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let at = file.tensor("A").unwrap().csc::<f32>().unwrap().transpose();
    let mut z = [f32::NAN; 5];
    at.mul_vec_parallel(&[1.0, 2.0, 3.0, 4.0], &mut z, 3).unwrap();
    assert_eq!(z, [1.0, 12.0, 6.0, 2.0, 15.0]);
    let e = at.mul_vec_parallel(&[1.0; 3], &mut z, 2).unwrap_err();
    assert!(
        matches!(
            e,
            Error::LengthMismatch {
                what: "x",
                len: 3,
                expected_name: "ncols of the transpose",
                expected: 4,
                ..
            }
        ),
        "{e:?}"
    );
}

/// `CscView::mul_vec_parallel` on fewer than 2^16 elements (every shape
/// here) runs `mul_vec`, and above 16 MiB of `y` cuts the rows
/// (`blocked_scatter_through_the_view`): whatever the thread count and
/// however the elements fall (empty columns, one column holding most
/// elements, every element in one row, no rows, no elements), every `y[i]`
/// equals `mul_vec`'s bit for bit, and all of `y` is overwritten. Values span 2^±20, so a change in the order
/// of the additions would show in the rounding. (More threads than cores:
/// the library's proptest of `scatter_threads`.)
#[test]
fn parallel_scatter_equals_one_thread_bit_for_bit() {
    let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
    // (name, nrows, rows of each column)
    let columns = |nrows: u64, counts: &[u64], next: &mut dyn FnMut() -> u64| -> Vec<Vec<u64>> {
        counts
            .iter()
            .map(|&count| {
                let mut rows: Vec<u64> = (0..count).map(|_| next() % nrows.max(1)).collect();
                rows.sort_unstable();
                rows.dedup();
                rows
            })
            .collect()
    };
    let varied: Vec<u64> = (0..1500).map(|j| if j % 4 == 0 { 0 } else { next() % 30 }).collect();
    let long: Vec<u64> = (0..200)
        .map(|j| if j == 77 { 5000 } else { u64::from(j % 9 == 0) })
        .collect();
    let shapes: Vec<(&str, u64, Vec<Vec<u64>>)> = vec![
        ("varied", 300_000, columns(300_000, &varied, &mut next)),
        ("one long column", 300_000, columns(300_000, &long, &mut next)),
        ("small y", 2000, columns(2000, &varied, &mut next)),
        (
            "one row",
            500,
            (0..300).map(|j| if j % 3 == 0 { vec![250] } else { vec![] }).collect(),
        ),
        ("no elements", 7, vec![vec![]; 40]),
        ("no rows", 0, vec![vec![]; 5]),
    ];
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    let mut stored = Vec::new();
    for (name, nrows, cols) in &shapes {
        let (mut ptr, mut idx, mut val) = (vec![0u64], Vec::new(), Vec::new());
        for rows in cols {
            idx.extend(rows);
            val.extend(rows.iter().map(|_| spread(next())));
            ptr.push(idx.len() as u64);
        }
        let ncols = cols.len() as u64;
        w.write_csc(name, &Csc::new(*nrows, ncols, &val, &idx, &ptr).unwrap())
            .unwrap();
        stored.push((name, *nrows as usize, cols.len()));
    }
    let bytes = AlignedBytes::from_slice(&w.finish().unwrap());
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    for (name, nrows, ncols) in stored {
        let a = file.tensor(name).unwrap().csc::<f64>().unwrap();
        let x: Vec<f64> = (0..ncols).map(|_| spread(next())).collect();
        let mut expected = vec![f64::NAN; nrows];
        a.mul_vec(&x, &mut expected).unwrap();
        same_bits_on_threads(name, &expected, |y, threads| {
            a.mul_vec_parallel(&x, y, threads).unwrap()
        });
    }
    // The worked example, in f32, and a length error (a damaged view:
    // `unscanned_damaged_view_errors_instead_of_answering`).
    let bytes = AlignedBytes::read(FIXTURE).unwrap();
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("A").unwrap().csc::<f32>().unwrap();
    let mut y = [f32::NAN; 4];
    a.mul_vec_parallel(&[1.0, 2.0, 3.0, 4.0, 5.0], &mut y, 3).unwrap();
    assert_eq!(y, [9.0, 9.0, 33.0, 0.0]);
    let mut y = [7f32; 4];
    let e = a.mul_vec_parallel(&[1.0; 4], &mut y, 2).unwrap_err();
    assert!(
        matches!(
            e,
            Error::LengthMismatch {
                what: "x",
                len: 4,
                expected: 5,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(y, [7.0; 4]);
}

/// `CscView::mul_vec_parallel` with up to 16 MiB of `y` and 2^16 elements
/// or more cuts the columns at `t/threads` of the elements and adds the
/// threads' parts in order, as its documentation says: computed here from
/// that description (each part a `mul_vec` of its columns), bit for bit;
/// and, with values of many magnitudes, some rows differ from `mul_vec`'s
/// in the last bits, the others equal.
#[test]
fn parallel_scatter_by_columns_adds_the_parts_in_order() {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
    let (nrows, ncols) = (3000usize, 7000usize);
    let (mut ptr, mut idx, mut val) = (vec![0u64], Vec::new(), Vec::new());
    for _ in 0..ncols {
        let mut rows: Vec<u64> = (0..next() % 40).map(|_| next() % nrows as u64).collect();
        rows.sort_unstable();
        rows.dedup();
        idx.extend(&rows);
        val.extend(rows.iter().map(|_| spread(next())));
        ptr.push(idx.len() as u64);
    }
    assert!(idx.len() >= 1 << 16);
    let x: Vec<f64> = (0..ncols).map(|_| spread(next())).collect();
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.write_csc("A", &Csc::new(nrows as u64, ncols as u64, &val, &idx, &ptr).unwrap())
        .unwrap();
    let bytes = AlignedBytes::from_slice(&w.finish().unwrap());
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("A").unwrap().csc::<f64>().unwrap();
    let mut one = vec![f64::NAN; nrows];
    a.mul_vec(&x, &mut one).unwrap();
    let bits = |v: &[f64]| v.iter().map(|a| a.to_bits()).collect::<Vec<u64>>();
    for threads in [2, 3] {
        let used = threads.min(cores);
        let nnz = idx.len();
        let cut = |t: usize| {
            ptr.partition_point(|&p| (p as usize) < nnz / used * t + nnz % used * t / used)
                .min(ncols)
        };
        let mut expected = vec![0f64; nrows];
        for t in 0..used {
            let (from, to) = (cut(t), if t + 1 == used { ncols } else { cut(t + 1) });
            let mut part = vec![0f64; nrows];
            for j in from..to {
                for k in ptr[j] as usize..ptr[j + 1] as usize {
                    part[idx[k] as usize] += val[k] * x[j];
                }
            }
            for (e, p) in expected.iter_mut().zip(&part) {
                *e += p;
            }
        }
        let mut y = vec![f64::NAN; nrows];
        a.mul_vec_parallel(&x, &mut y, threads).unwrap();
        assert!(bits(&y) == bits(&expected), "{threads} threads");
        if used > 1 {
            let differ = bits(&y).iter().zip(bits(&one)).filter(|(a, b)| *a != b).count();
            assert!(differ > 0 && differ < nrows, "{differ} of {nrows} rows differ");
        } else {
            assert!(bits(&y) == bits(&one));
        }
    }
}

/// With the vector from 8 to 16 MiB and about 10 elements a slice, the
/// products prefetch the vector 128 elements ahead and follow their index
/// and value arrays too (`kernels::product::lookahead`): `f64` with
/// 2^20 + 1 rows (8 MiB and 8 bytes) and 2^21 rows (16 MiB). A·x equals
/// the plain scatter and Aᵀ·x the plain dot products, bit for bit, on one
/// thread and on two.
#[test]
fn products_with_the_vector_from_8_to_16_mib() {
    for nrows in [(1usize << 20) + 1, 1 << 21] {
        let ncols = 1usize << 16;
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64 ^ nrows as u64);
        let (mut ptr, mut idx, mut val) = (vec![0u64], Vec::new(), Vec::new());
        for _ in 0..ncols {
            let mut rows: Vec<u64> = (0..next() % 21).map(|_| next() % nrows as u64).collect();
            rows.sort_unstable();
            rows.dedup();
            for r in rows {
                idx.push(r);
                val.push(spread(next()));
            }
            ptr.push(idx.len() as u64);
        }
        let x: Vec<f64> = (0..ncols).map(|_| spread(next())).collect();
        let xt: Vec<f64> = (0..nrows).map(|_| spread(next())).collect();
        let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
        w.write_csc("A", &Csc::new(nrows as u64, ncols as u64, &val, &idx, &ptr).unwrap())
            .unwrap();
        let bytes = AlignedBytes::from_slice(&w.finish().unwrap());
        let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
        let a = file.tensor("A").unwrap().csc::<f64>().unwrap();
        let bits = |v: &[f64]| v.iter().map(|a| a.to_bits()).collect::<Vec<u64>>();

        let expected = direct_scatter((&ptr, &idx, &val), &x, nrows);
        let mut y = vec![f64::NAN; nrows];
        a.mul_vec(&x, &mut y).unwrap();
        assert!(bits(&y) == bits(&expected), "A·x, {nrows} rows");
        let dots = plain_dots((&ptr, &idx, &val), &xt);
        for threads in [1, 2] {
            let mut z = vec![f64::NAN; ncols];
            a.transpose().mul_vec_parallel(&xt, &mut z, threads).unwrap();
            assert!(bits(&z) == bits(&dots), "Aᵀ·x, {nrows} rows, {threads} threads");
        }
    }
}
