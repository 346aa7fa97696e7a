//! `layouts/csc.md` and `layouts/csr.md`: the rules they share.

use hurray_writer::BufferHandle;

use super::bases::{csc_with, csr_with};
use super::build::{single, Tn};
use super::manifest::Corpus;

/// The rules shared by CSC and CSR: `base(indices, ptr)` builds the tensor,
/// `good` are its valid index and pointer arrays.
fn compressed(c: &mut Corpus, fmt: &str, base: fn(&[u64], &[u64]) -> Tn, good: (&[u64], &[u64])) {
    let (idx_name, ptr_name, outer) = match fmt {
        "csc" => ("row_indices", "col_ptr", "column"),
        _ => ("col_indices", "row_ptr", "row"),
    };
    let doc = format!("layouts/{fmt}.md");
    let sec = |s: &str| format!("{doc} § {s}");
    let t = || base(good.0, good.1);
    let mut add = |name: &str, rule: &str, spec: String, stage: &'static str, variant: &str, field: &str, b| {
        c.add(&format!("{fmt}_{name}"), rule, &spec, stage, variant, field, b);
    };
    for (rank, shape) in [(1, vec![20]), (3, vec![1, 4, 5])] {
        add(
            &format!("rank_{rank}"),
            &format!("{} must have rank 2, found {rank}", fmt.to_uppercase()),
            sec("Description"),
            "tensor",
            "RankNotAllowed",
            "rank",
            single(t().d(|d| d.shape = shape)),
        );
    }
    add(
        "buffer_count_2",
        "buffer_count 2 (must be 3)",
        sec("Buffer Table"),
        "tensor",
        "Invalid",
        "buffer_count",
        single(t().with(|t| {
            t.desc.buffers.truncate(2);
            t.bufs.truncate(2);
        })),
    );
    add(
        "buffer_count_4",
        "buffer_count 4 (must be 3)",
        sec("Buffer Table"),
        "tensor",
        "Invalid",
        "buffer_count",
        single(t().with(|t| {
            t.desc.buffers.push(BufferHandle::new(8));
            t.bufs.push(vec![0; 8]);
        })),
    );
    add(
        "reserved",
        "the 8 _reserved bytes after nnz are not zero",
        sec("Additional Descriptor Fields"),
        "tensor",
        "Reserved",
        "_reserved",
        single(t().d(|d| d.layout_fields[9] = 1)),
    );
    add(
        "byte_offset_4",
        "byte_offset 4 (must be 0 for sparse layouts)",
        "memory-layout.md § Common Fields › byte_offset".into(),
        "tensor",
        "Invalid",
        "byte_offset",
        single(t().d(|d| d.byte_offset = 4)),
    );
    for (i, role, edit) in [(0usize, "values", 16usize), (1, idx_name, 32), (2, ptr_name, 56)] {
        add(
            &format!("{role}_size"),
            &format!("buffer {i} ({role}) is {edit} bytes, not the exact size the layout requires"),
            sec("Buffer Size"),
            "tensor",
            "BufferSize",
            &format!("buffer[{i}].byte_size"),
            single(t().with(|t| t.bufs[i].resize(edit, 0)).fit()),
        );
    }
    let mut ptr = good.1.to_vec();
    ptr[0] = 1;
    add(
        "ptr_first_nonzero",
        &format!("{ptr_name}[0] is 1, must be 0"),
        sec("Storage Invariants (1)"),
        "data",
        "PtrFirst",
        &format!("{ptr_name}[0]"),
        single(base(good.0, &ptr)),
    );
    let mut ptr = good.1.to_vec();
    let last = ptr.len() - 1;
    ptr[last] = 6;
    add(
        "ptr_last_not_nnz",
        &format!("{ptr_name}[{last}] is 6, must equal nnz = 5"),
        sec("Storage Invariants (1)"),
        "data",
        "PtrLast",
        &format!("{ptr_name}[{last}]"),
        single(base(good.0, &ptr)),
    );
    let mut ptr = good.1.to_vec();
    ptr.swap(2, 3);
    if ptr[2] <= ptr[3] {
        ptr[2] = ptr[3] + 1;
    }
    add(
        "ptr_decreasing",
        &format!("{ptr_name} decreases at position 3: {ptr:?}"),
        sec("Storage Invariants (2)"),
        "data",
        "PtrDecreasing",
        &format!("{ptr_name}[3]"),
        single(base(good.0, &ptr)),
    );
    // Both layouts: the first outer slice holds the first two entries.
    let ptr2: Vec<u64> = match fmt {
        "csc" => vec![0, 2, 2, 3, 4, 5],
        _ => good.1.to_vec(),
    };
    let mut idx = good.0.to_vec();
    idx[0] = 3;
    idx[1] = 1;
    add(
        "indices_unsorted",
        &format!("{idx_name} in {outer} 0 are [3, 1]: not increasing"),
        sec("Storage Invariants (3)"),
        "data",
        "NotIncreasing",
        &format!("{idx_name}[1]"),
        single(base(&idx, &ptr2)),
    );
    let mut idx = good.0.to_vec();
    idx[0] = 1;
    idx[1] = 1;
    add(
        "indices_duplicate",
        &format!("{idx_name} in {outer} 0 are [1, 1]: a duplicate"),
        sec("Storage Invariants (3)"),
        "data",
        "NotIncreasing",
        &format!("{idx_name}[1]"),
        single(base(&idx, &ptr2)),
    );
    let mut idx = good.0.to_vec();
    let bound = if fmt == "csc" { 4 } else { 5 };
    idx[4] = bound;
    add(
        "index_out_of_bounds",
        &format!("{idx_name}[4] = {bound} is not below its dimension {bound}"),
        sec("Storage Invariants (4)"),
        "data",
        "IndexOutOfBounds",
        &format!("{idx_name}[4]"),
        single(base(&idx, good.1)),
    );
    add(
        "nnz_overflow",
        "nnz 2^62: nnz x 4 bytes of values overflows 64 bits",
        sec("Buffer Size"),
        "tensor",
        "Overflow",
        "nnz",
        single(t().d(|d| d.layout_fields[..8].copy_from_slice(&(1u64 << 62).to_le_bytes()))),
    );
}

pub(super) fn csc_csr(c: &mut Corpus) {
    compressed(c, "csc", csc_with, (&[0, 2, 1, 0, 2], &[0, 1, 2, 3, 4, 5]));
    compressed(c, "csr", csr_with, (&[0, 3, 2, 1, 4], &[0, 2, 3, 5, 5]));
}
