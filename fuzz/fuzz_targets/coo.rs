//! Differential fuzzing of COO against a naive model.
//!
//! The input gives a shape (rank 1 to 4), coordinates — listed, or the
//! first `n` index tuples of the shape in order — an `is_sorted` claim and
//! edits to the `indices` buffer that may break any validity constraint of
//! `layouts/coo.md`. Then:
//!
//! * the reader accepts the tensor exactly when the naive check does, and a
//!   rejection is the variant of a constraint that is broken (bounds:
//!   `IndexOutOfBounds`; duplicates or claimed order: `CooOrder`);
//! * single-threaded and parallel validation return the same result;
//! * a lookup on the unvalidated structure answers only when no bound, no
//!   claimed order and no second entry at its coordinate is broken, and
//!   `validate_prefix(k)` agrees with the naive check of the first k entries;
//! * on a valid tensor, `get` (binary search when sorted, linear scan
//!   otherwise) and `iter` agree with the entries as written.
#![no_main]

use std::collections::HashSet;

use hurray_reader::{AlignedBytes, Error, HurrayFile, Options};
use hurray_writer::{BufferData, ElementType, FileWriter, TensorDescriptor, WriterOptions};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Entries {
    /// Coordinates, each taken modulo its dimension (when not 0).
    Listed(Vec<[u16; 4]>),
    /// The first `n % 4096` index tuples of the shape, in lexicographic order.
    Leading(u16),
}

/// A change to the `indices` buffer at position `at` (modulo its length).
#[derive(Arbitrary, Debug)]
enum Edit {
    Set {
        at: u32,
        value: u64,
    },
    Add {
        at: u32,
        delta: i8,
    },
    /// Swap entry `at` with the next one (all coordinates).
    SwapEntries {
        at: u32,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    shape: [u16; 4],
    rank: u8,
    entries: Entries,
    sort: bool,
    is_sorted: bool,
    edits: Vec<Edit>,
    threads: u8,
}

/// Row-major index tuples `0..n` of `shape` (fewer if the shape is smaller).
fn leading(shape: &[u64], n: u64) -> Vec<Vec<u64>> {
    let total: u64 = shape.iter().product();
    (0..n.min(total))
        .map(|mut i| {
            let mut c = vec![0; shape.len()];
            for (d, &size) in shape.iter().enumerate().rev() {
                c[d] = i % size;
                i /= size;
            }
            c
        })
        .collect()
}

fn build(input: &Input) -> (Vec<u64>, Vec<Vec<u64>>) {
    let rank = usize::from(input.rank % 4) + 1;
    let shape: Vec<u64> = input.shape[..rank].iter().map(|&n| u64::from(n % 64)).collect();
    let mut entries: Vec<Vec<u64>> = match &input.entries {
        Entries::Listed(list) => list
            .iter()
            .map(|c| {
                c[..rank]
                    .iter()
                    .zip(&shape)
                    .map(|(&x, &n)| if n == 0 { u64::from(x) } else { u64::from(x) % n })
                    .collect()
            })
            .collect(),
        Entries::Leading(n) => leading(&shape, u64::from(*n % 4096)),
    };
    if input.sort {
        entries.sort();
        entries.dedup();
    }
    let nnz = entries.len();
    for edit in &input.edits {
        if nnz == 0 {
            break;
        }
        let slot = |at: u32| (at as usize % (nnz * rank)) / rank;
        let dim = |at: u32| at as usize % rank;
        match *edit {
            Edit::Set { at, value } => entries[slot(at)][dim(at)] = value,
            Edit::Add { at, delta } => {
                let x = &mut entries[slot(at)][dim(at)];
                *x = x.wrapping_add_signed(i64::from(delta));
            }
            Edit::SwapEntries { at } => entries.swap(slot(at), (slot(at) + 1) % nnz),
        }
    }
    (shape, entries)
}

/// Broken constraints: bit 0 bounds, bit 1 duplicates, bit 2 claimed order.
fn violations(shape: &[u64], entries: &[Vec<u64>], is_sorted: bool) -> u8 {
    let mut broken = 0;
    if entries.iter().any(|c| c.iter().zip(shape).any(|(&x, &n)| x >= n)) {
        broken |= 1;
    }
    if entries.iter().collect::<HashSet<_>>().len() != entries.len() {
        broken |= 2;
    }
    if is_sorted && entries.windows(2).any(|w| w[0] >= w[1]) {
        broken |= 4;
    }
    broken
}

fuzz_target!(|input: Input| {
    let (shape, entries) = build(&input);
    let nnz = entries.len() as u64;
    let indices: Vec<u64> = entries.concat();
    let values: Vec<f32> = (0..entries.len()).map(|i| i as f32).collect();
    let mut writer = FileWriter::new(Vec::new(), WriterOptions::new()).unwrap();
    let d = TensorDescriptor::coo(ElementType::Float32, shape.clone(), nnz, input.is_sorted).unwrap();
    let data = [BufferData::from_slice(&values), BufferData::from_slice(&indices)];
    writer.write_tensor("C", &d, data).unwrap();
    let bytes = AlignedBytes::from_slice(&writer.finish().unwrap());
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    let tensor = file.tensor("C").unwrap();

    let broken = violations(&shape, &entries, input.is_sorted);
    let view = tensor.coo::<f32>();
    match &view {
        Ok(_) => assert_eq!(broken, 0, "accepted, but constraints {broken:03b} are broken"),
        Err(Error::IndexOutOfBounds { .. }) => assert_ne!(broken & 1, 0, "{view:?}"),
        Err(Error::CooOrder { .. }) => assert_ne!(broken & 6, 0, "{view:?}"),
        Err(e) => panic!("unexpected error {e:?} for constraints {broken:03b}"),
    }
    let structure = tensor.coo_structure().unwrap();
    let threads = usize::from(input.threads % 8).max(1);
    assert_eq!(
        structure.validate().map_err(|e| e.to_string()),
        structure.validate_parallel(threads).map_err(|e| e.to_string()),
        "validate vs validate_parallel({threads})"
    );
    // Unscanned lookups answer only when the tensor has no coordinate out
    // of bounds, no false order claim and no second entry at the probe.
    // Each one is O(nnz): a sample of 16.
    let zero = vec![0; shape.len()];
    let inside = |c: &&Vec<u64>| c.iter().zip(&shape).all(|(&x, &n)| x < n);
    for c in entries
        .iter()
        .step_by(entries.len() / 16 + 1)
        .chain([&zero])
        .filter(inside)
    {
        let at: Vec<u64> = (0..nnz).filter(|&i| entries[i as usize] == *c).collect();
        match structure.position(c) {
            Ok(p) => {
                assert_eq!(
                    broken & 5,
                    0,
                    "position({c:?}) answered {p:?} with constraints {broken:03b} broken"
                );
                assert!(at.len() < 2, "position({c:?}) answered {p:?}, stored at {at:?}");
                assert_eq!(p, at.first().copied(), "position({c:?})");
            }
            Err(Error::IndexOutOfBounds { .. }) => assert_ne!(broken & 1, 0),
            Err(Error::CooOrder { .. }) => assert!(broken & 4 != 0 || at.len() > 1, "position({c:?})"),
            Err(e) => panic!("position({c:?}): unexpected error {e:?}"),
        }
    }
    // The first k entries checked among themselves.
    for k in [0, 1, nnz / 2, nnz.saturating_sub(1), nnz, u64::MAX] {
        let prefix = &entries[..k.min(nnz) as usize];
        let expected = violations(&shape, prefix, input.is_sorted) == 0;
        assert_eq!(structure.validate_prefix(k).is_ok(), expected, "validate_prefix({k})");
    }
    let Ok(view) = view else { return };
    let step = if input.is_sorted { 1 } else { entries.len() / 16 + 1 };
    // Unsorted lookups are linear scans: probe a bounded, spread-out sample
    // (`step`) so that one input costs O(nnz), not O(nnz²).
    for (i, c) in entries.iter().enumerate().step_by(step) {
        assert_eq!(view.get(c).unwrap(), Some(&(i as f32)), "get({c:?})");
    }
    if shape.iter().all(|&n| n > 0) {
        let linear = entries.iter().position(|c| *c == zero).map(|i| i as f32);
        assert_eq!(view.get(&zero).unwrap().copied(), linear);
    }
    let iterated: Vec<(Vec<u64>, f32)> = view.iter().unwrap().map(|(c, &v)| (c.to_vec(), v)).collect();
    let expected: Vec<(Vec<u64>, f32)> = entries.iter().cloned().zip(values.iter().copied()).collect();
    assert_eq!(iterated, expected);
});
