//! Calls everything a reader of untrusted bytes might call. Shared by the
//! mutation test and the fuzz targets (`fuzz/`, which include this file by
//! path: keep it free of other `support` modules); nothing here may panic
//! on any input.

use hurray_reader::{logical_indices, HurrayFile, Layout, Options, Tensor};

/// Exercises everything a reader of `bytes` might call.
pub fn exercise(bytes: &[u8], options: Options) -> usize {
    let Ok(file) = HurrayFile::parse(bytes, options) else {
        return 0;
    };
    let mut touched = file.kv().len();
    for (position, entry) in file.entries().iter().enumerate() {
        let _ = file.entry(entry.name());
        if let Ok(d) = file.descriptor_at(position) {
            touched += d.shape().len();
        }
        let resolved = file.tensor(entry.name());
        if let Ok(t) = &resolved {
            touched += touch(t);
            let _ = t.validate_data();
        }
        if let Ok(dump) = file.dump_descriptor(entry.name()) {
            touched += dump.fields.len();
            // The dump resolves the descriptor it recorded: the verdict of
            // `tensor`, to the message.
            assert_eq!(
                dump.error.as_ref().map(ToString::to_string),
                resolved.as_ref().err().map(ToString::to_string),
                "dump_descriptor and tensor disagree on {:?}",
                entry.name()
            );
        }
    }
    // The padding between regions: every region located, or the error of
    // a tensor whose buffers are not (a composite head's members aside).
    touched += usize::from(file.check_padding().is_ok());
    touched
}

/// Reads a few elements through every view the tensor's layout offers.
pub fn touch(t: &Tensor<'_>) -> usize {
    let mut n = 0;
    for b in t.buffers() {
        n += b.values().take(4).count();
    }
    match t.layout() {
        Layout::Csc => {
            if let Ok(a) = t.csc_unscanned::<f32>() {
                for c in 0..a.ncols().min(6) {
                    n += a.column(c).map(|col| col.count()).unwrap_or(0);
                    for r in 0..a.nrows().min(6) {
                        n += usize::from(a.get(r, c).is_ok());
                    }
                }
                n += a.iter().map(|it| it.count()).unwrap_or(0);
                // to_csr allocates 8 x (nrows + 1) bytes: a caller checks
                // nrows first on files it does not trust, and so do we.
                if a.nrows() <= 1 << 20 {
                    n += a.to_csr().map(|m| m.values().len()).unwrap_or(0);
                }
                n += usize::from(a.transpose().get(0, 0).is_ok());
            }
            if let Ok(s) = t.csc_structure() {
                n += usize::from(s.position(0, 0).is_ok());
            }
        }
        Layout::Csr => {
            if let Ok(a) = t.csr_unscanned::<f64>() {
                for r in 0..a.nrows().min(6) {
                    n += a.row(r).map(|row| row.count()).unwrap_or(0);
                }
                n += a.iter().map(|it| it.count()).unwrap_or(0);
            }
            if let Ok(s) = t.csr_structure() {
                n += usize::from(s.position(0, 0).is_ok());
            }
        }
        Layout::Coo => {
            if let Ok(s) = t.coo_structure() {
                let _ = s.validate();
                n += usize::from(s.position(&vec![0; s.rank()]).is_ok());
            }
        }
        Layout::Csf => {
            if let Ok(s) = t.csf_structure() {
                n += s.entries().map(|e| e.map(|(c, _)| c.len()).sum::<usize>()).unwrap_or(0);
            }
        }
        l if l.is_dense() => {
            let shape: Vec<u64> = t.shape().collect();
            for index in logical_indices(&shape).take(8) {
                n += usize::from(t.dense_value(&index).is_ok());
                n += usize::from(t.dense_dequantized(&index).is_ok());
            }
        }
        _ => {}
    }
    n += usize::from(t.scales().is_some()) + usize::from(t.zero_points().is_some());
    n
}
