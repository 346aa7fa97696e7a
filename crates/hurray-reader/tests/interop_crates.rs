//! The hand-offs to sprs, faer and ndarray (features `sprs`, `faer`,
//! `ndarray`): each borrows the file's arrays (pointer equality), and the
//! other crate's own operations on them agree with this crate's.

use hurray_reader::{AlignedBytes, Error, HurrayFile, Options};
use ndarray::Dimension;

fn fixture(name: &str) -> AlignedBytes {
    AlignedBytes::read(format!("{}/../../fixtures/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// `x` of `n` entries, exact in f64 and not all alike.
fn x(n: usize) -> Vec<f64> {
    (0..n).map(|j| (j as f64) * 0.75 - 1.5).collect()
}

#[test]
fn sprs_views_borrow_the_file_and_compute_the_same() {
    let bytes = fixture("sparse_formats.hry");
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("m.csc").unwrap().csc::<f64>().unwrap(); // 5 x 6
    for (j0, j1) in [(0, 6), (1, 5), (2, 3), (4, 4)] {
        let b = a.column_block(j0..j1).unwrap();
        let m = b.as_sprs().unwrap();
        assert!(m.is_csc());
        assert_eq!((m.rows(), m.cols(), m.nnz()), (5, j1 - j0, b.nnz() as usize));
        // The same memory: no copy, a block's pointer window included.
        assert_eq!(m.data().as_ptr(), b.values().as_ptr());
        assert_eq!(m.indices().as_ptr(), b.row_indices().as_ptr());
        assert_eq!(m.indptr().raw_storage().as_ptr(), b.col_ptr().as_ptr());
        for i in 0..5 {
            for j in 0..j1 - j0 {
                assert_eq!(m.get(i, j), b.get(i as u64, j as u64).unwrap());
            }
        }
        // sprs's product, column by column as ours: equal bit for bit.
        let xs = x(j1 - j0);
        let mut theirs = vec![0.0; 5];
        sprs::prod::mul_acc_mat_vec_csc(m, &xs[..], &mut theirs[..]);
        let mut ours = vec![f64::NAN; 5];
        b.mul_vec(&xs, &mut ours).unwrap();
        assert_eq!(ours, theirs, "block {j0}..{j1}");
    }
    let csr = file.tensor("m.csr").unwrap().csr::<f64>().unwrap();
    let m = csr.as_sprs().unwrap();
    assert!(m.is_csr());
    let mut theirs = vec![0.0; 5];
    sprs::prod::mul_acc_mat_vec_csr(m, &x(6)[..], &mut theirs[..]);
    let mut ours = vec![0.0; 5];
    csr.mul_vec(&x(6), &mut ours).unwrap();
    assert_eq!(ours, theirs);
    // The transpose's sprs view is the CSR of Aᵀ over the CSC's arrays.
    let t = a.transpose().as_sprs().unwrap();
    assert_eq!((t.rows(), t.cols()), (6, 5));
    assert_eq!(t.transpose_view().to_owned(), a.as_sprs().unwrap().to_owned());
}

#[test]
fn an_unvalidated_view_is_scanned_before_the_hand_off() {
    let bytes = fixture("invalid/csc_indices_unsorted.hry");
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("t").unwrap().csc_unscanned::<f32>().unwrap();
    let e = a.as_sprs().unwrap_err();
    assert!(matches!(e, Error::NotIncreasing { .. }), "{e:?}");
    assert_eq!(a.as_faer().unwrap_err(), e);
    // Its clean columns hand off.
    let clean = a.column_block(1..a.ncols() as usize).unwrap();
    assert_eq!(clean.as_sprs().unwrap().nnz() as u64, clean.nnz());
    assert_eq!(clean.as_faer().unwrap().compute_nnz() as u64, clean.nnz());
}

#[test]
fn faer_views_borrow_the_file_and_compute_the_same() {
    use faer::linalg::matmul::matmul;
    use faer::sparse::linalg::matmul::sparse_dense_matmul;
    use faer::{Accum, Mat, Par};

    let bytes = fixture("sparse_formats.hry");
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("m.csc").unwrap().csc::<f64>().unwrap();
    for (j0, j1) in [(0, 6), (1, 5), (2, 3), (4, 4)] {
        let b = a.column_block(j0..j1).unwrap();
        let m = b.as_faer().unwrap();
        assert_eq!((m.nrows(), m.ncols(), m.compute_nnz()), (5, j1 - j0, b.nnz() as usize));
        // The file's arrays, a block's pointer window as it is.
        let (symbolic, values) = m.parts();
        assert_eq!(symbolic.col_ptr().as_ptr(), b.col_ptr().as_ptr());
        assert_eq!(values.as_ptr(), a.values().as_ptr());
        for i in 0..5 {
            for j in 0..j1 - j0 {
                assert_eq!(m.get(i, j), b.get(i as u64, j as u64).unwrap());
            }
        }
        // faer's sparse × dense product; its sums may run in another order,
        // so equal to ours within 4 ulps of the largest term.
        let xs = x(j1 - j0);
        let dense_x = Mat::from_fn(j1 - j0, 1, |j, _| xs[j]);
        let mut y = Mat::<f64>::zeros(5, 1);
        sparse_dense_matmul(y.as_mut(), Accum::Replace, m, dense_x.as_ref(), 1.0, Par::Seq);
        let mut ours = vec![f64::NAN; 5];
        b.mul_vec(&xs, &mut ours).unwrap();
        for (i, &o) in ours.iter().enumerate() {
            assert!(
                (y[(i, 0)] - o).abs() <= 4.0 * f64::EPSILON * 64.0,
                "row {i}: {} vs {o}",
                y[(i, 0)]
            );
        }
        // And against faer's dense product of the same matrix.
        let dense = Mat::from_fn(5, j1 - j0, |i, j| {
            b.get(i as u64, j as u64).unwrap().copied().unwrap_or(0.0)
        });
        let mut z = Mat::<f64>::zeros(5, 1);
        matmul(
            z.as_mut(),
            Accum::Replace,
            dense.as_ref(),
            dense_x.as_ref(),
            1.0,
            Par::Seq,
        );
        for i in 0..5 {
            assert!((z[(i, 0)] - ours[i]).abs() <= 4.0 * f64::EPSILON * 64.0);
        }
    }
    let csr = file.tensor("m.csr").unwrap().csr::<f64>().unwrap();
    let m = csr.as_faer().unwrap();
    assert_eq!((m.nrows(), m.ncols()), (5, 6));
    for i in 0..5 {
        for j in 0..6 {
            assert_eq!(m.get(i, j), csr.get(i as u64, j as u64).unwrap());
        }
    }
}

#[test]
fn ndarray_views_of_dense_tensors() {
    let bytes = fixture("sparse_formats.hry");
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    for name in ["m.dense", "m.dense_col_major"] {
        let d = file.tensor(name).unwrap().dense::<f64>().unwrap();
        let a = d.as_ndarray().unwrap();
        assert_eq!(a.shape(), [5, 6]);
        for i in 0..5u64 {
            for j in 0..6u64 {
                assert_eq!(a[[i as usize, j as usize]], *d.get(&[i, j]).unwrap());
            }
        }
        // ndarray's own sum, against ours.
        let ours: f64 = (0..5u64)
            .flat_map(|i| (0..6u64).map(move |j| (i, j)))
            .map(|(i, j)| *d.get(&[i, j]).unwrap())
            .sum();
        assert_eq!(a.sum(), ours);
    }
    let col = file.tensor("m.dense_col_major").unwrap().dense::<f64>().unwrap();
    assert_eq!(col.as_ndarray().unwrap().strides(), [1, 5]);
    assert_eq!(col.as_ndarray().unwrap().as_ptr(), col.as_slice().as_ptr());
    let bytes = fixture("dtypes.hry");
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let scalar = file.tensor("scalar").unwrap().dense::<f32>().unwrap();
    assert_eq!(scalar.as_ndarray().unwrap().ndim(), 0);
    let bytes = fixture("empty.hry");
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    assert_eq!(
        file.tensor("dense_3x0")
            .unwrap()
            .dense::<f32>()
            .unwrap()
            .as_ndarray()
            .unwrap()
            .shape(),
        [3, 0]
    );
}

/// Strided tensors of the interop corpus (negative and zero strides), tiled,
/// Morton and Hilbert ones: viewed where ndarray can, refused where not.
#[test]
fn ndarray_views_of_the_corpus_strided_tensors() {
    let Some(dir) = std::env::var_os("HURRAY_INTEROP_DIR") else {
        eprintln!("skipped: HURRAY_INTEROP_DIR not set (set it to a corpus folder to run this test)");
        return;
    };
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(dir);
    let (mut viewed, mut refused) = (0, 0);
    for entry in std::fs::read_dir(&dir).expect("HURRAY_INTEROP_DIR is set but cannot be read") {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".hry") || name.starts_with("invalid_") {
            continue;
        }
        let bytes = AlignedBytes::read(&path).unwrap();
        let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
        for e in file.entries() {
            let t = file.tensor(e.name()).unwrap();
            let Ok(d) = t.dense::<f32>() else { continue };
            match d.as_ndarray() {
                Ok(a) => {
                    for (index, v) in a.indexed_iter() {
                        let index: Vec<u64> = index.slice().iter().map(|&i| i as u64).collect();
                        assert_eq!(v, d.get(&index).unwrap(), "{name}: {} {index:?}", e.name());
                    }
                    viewed += 1;
                }
                Err(Error::NotViewable { .. }) => refused += 1,
                Err(other) => panic!("{name}: {other}"),
            }
        }
    }
    assert!(viewed >= 5 && refused >= 3, "{viewed} viewed, {refused} refused");
}
