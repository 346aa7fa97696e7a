//! `layouts/coo.md` and `layouts/csf.md`.

use hurray_writer::{ElementType as E, TensorDescriptor};

use super::bases::{coo_with, csf, csf_levels, csf_with, COO_SORTED};
use super::build::{single, Tn};
use super::bytes::{f32b, u64b};
use super::manifest::Corpus;

pub(super) fn coo_csf(c: &mut Corpus) {
    let coo = |s: &str| format!("layouts/coo.md § {s}");
    let t = || coo_with(&COO_SORTED, true);
    c.add(
        "coo_buffer_count_1",
        "buffer_count 1 (must be 2)",
        &coo("Buffer Table"),
        "tensor",
        "Invalid",
        "buffer_count",
        single(t().with(|t| {
            t.desc.buffers.truncate(1);
            t.bufs.truncate(1);
        })),
    );
    c.add(
        "coo_values_size",
        "values buffer of 16 bytes (must be nnz x 4 = 20)",
        &coo("Buffer Size"),
        "tensor",
        "BufferSize",
        "buffer[0].byte_size",
        single(t().with(|t| t.bufs[0].truncate(16)).fit()),
    );
    c.add(
        "coo_indices_size",
        "indices buffer of 72 bytes (must be nnz x rank x 8 = 80)",
        &coo("Buffer Size"),
        "tensor",
        "BufferSize",
        "buffer[1].byte_size",
        single(t().with(|t| t.bufs[1].truncate(72)).fit()),
    );
    c.add(
        "coo_is_sorted_2",
        "is_sorted is 2 (must be 0 or 1)",
        &coo("Additional Descriptor Fields"),
        "tensor",
        "Invalid",
        "is_sorted",
        single(t().d(|d| d.layout_fields[8] = 2)),
    );
    c.add(
        "coo_reserved",
        "the 7 _reserved bytes after is_sorted are not zero",
        &coo("Additional Descriptor Fields"),
        "tensor",
        "Reserved",
        "_reserved",
        single(t().d(|d| d.layout_fields[12] = 1)),
    );
    let mut idx = COO_SORTED;
    idx[9] = 5;
    c.add(
        "coo_index_out_of_bounds",
        "entry 4's column index 5 is not below shape[1] = 5",
        &coo("Validity Constraints"),
        "data",
        "IndexOutOfBounds",
        "indices[9]",
        single(coo_with(&idx, true)),
    );
    let mut idx = COO_SORTED;
    idx[2] = 0;
    idx[3] = 0;
    c.add(
        "coo_duplicate_coordinates",
        "entries 0 and 1 both store (0, 0) (is_sorted = 0)",
        &coo("Validity Constraints"),
        "data",
        "CooOrder",
        "indices[2]",
        single(coo_with(&idx, false)),
    );
    let mut idx = COO_SORTED;
    idx.swap(2, 4);
    idx.swap(3, 5);
    c.add(
        "coo_sorted_flag_on_unsorted",
        "is_sorted = 1 but entry 1 (1, 2) precedes entry 2 (0, 3)",
        &coo("Validity Constraints"),
        "data",
        "CooOrder",
        "indices[4]",
        single(coo_with(&idx, true)),
    );

    let csf_doc = |s: &str| format!("layouts/csf.md § {s}");
    let d2 = TensorDescriptor::csf(E::Float32, vec![2, 3], vec![0, 1], &[2, 3])
        .unwrap()
        .to_raw();
    let bufs = vec![
        f32b(&[1.0, 2.0, 3.0]),
        u64b(&[0, 2]),
        u64b(&[0, 1]),
        u64b(&[0, 2, 3]),
        u64b(&[0, 2, 1]),
    ];
    c.add(
        "csf_rank_2",
        "a rank-2 CSF tensor (CSF needs rank >= 3)",
        &csf_doc("Description"),
        "tensor",
        "RankNotAllowed",
        "rank",
        single(Tn::new("t", d2, bufs)),
    );
    c.add(
        "csf_buffer_count_6",
        "buffer_count 6 for rank 3 (must be 2 x rank + 1 = 7)",
        &csf_doc("Buffer Table"),
        "tensor",
        "Invalid",
        "buffer_count",
        single(csf().with(|t| {
            t.desc.buffers.truncate(6);
            t.bufs.truncate(6);
        })),
    );
    c.add(
        "csf_mode_order_not_permutation",
        "mode_order [0, 0, 2] is not a permutation of 0..3",
        &csf_doc("Mode Ordering"),
        "tensor",
        "Invalid",
        "mode_order[1]",
        single(csf().d(|d| d.layout_fields[12..16].copy_from_slice(&0u32.to_le_bytes()))),
    );
    c.add(
        "csf_reserved",
        "the 8 _reserved bytes after mode_order are not zero",
        &csf_doc("Additional Descriptor Fields"),
        "tensor",
        "Reserved",
        "_reserved",
        single(csf().d(|d| d.layout_fields[20] = 1)),
    );
    let lv = |level: usize, v: Vec<u64>| {
        let mut l = csf_levels();
        l[level] = v;
        csf_with(l)
    };
    c.add(
        "csf_pos_0_first_nonzero",
        "pos_0[0] is 1, must be 0",
        &csf_doc("Storage Invariants"),
        "data",
        "PtrFirst",
        "pos_0[0]",
        single(lv(0, vec![1, 2])),
    );
    c.add(
        "csf_pos_decreasing",
        "pos_2 [0, 2, 1, 3] decreases at position 2",
        &csf_doc("Storage Invariants"),
        "data",
        "PtrDecreasing",
        "pos_2[2]",
        single(lv(4, vec![0, 2, 1, 3])),
    );
    c.add(
        "csf_crd_unsorted",
        "crd_1 under the first level-0 node is [2, 0]: not increasing",
        &csf_doc("Storage Invariants"),
        "data",
        "NotIncreasing",
        "crd_1[1]",
        single(lv(3, vec![2, 0, 1])),
    );
    c.add(
        "csf_crd_out_of_bounds",
        "crd_2[1] = 4 is not below shape[2] = 4",
        &csf_doc("Storage Invariants"),
        "data",
        "IndexOutOfBounds",
        "crd_2[1]",
        single(lv(5, vec![1, 4, 0])),
    );
}
