//! The partition check (`layouts/composite.md` § Validation: member boxes
//! pairwise disjoint, together covering the head) costs work bounded by a
//! budget that is known before the sweep runs, and the sweep runs along the
//! dimension where the fewest boxes overlap. A review built 20 000 members
//! `[i, i + 1) × [i, n)`: disjoint along rows, all overlapping along
//! columns; the sweep went along columns (as many distinct starts as rows,
//! and the tie went to the last dimension), spent its whole budget there
//! and rejected the file as too costly to check, after ~1.2 s per head.

use hurray_reader::{AlignedBytes, Error, HurrayFile, Location, Options, Scope};
use hurray_writer::{CompositeHead, ElementType, FileWriter, RawTensor, Shard, TensorDescriptor, WriterOptions};

/// A partition head of shape `[n, n]` followed by one member-less group
/// head per box `(start, shape)`.
fn partition(n: u64, boxes: &[([u64; 2], [u64; 2])]) -> AlignedBytes {
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    let count = u32::try_from(boxes.len()).unwrap();
    let head = TensorDescriptor::composite_head(ElementType::Float32, vec![n, n], CompositeHead::partition(count));
    w.write_tensor_unchecked(RawTensor::from_descriptor("P", &head, Vec::new()).unwrap())
        .unwrap();
    for (i, (start, shape)) in boxes.iter().enumerate() {
        let member = TensorDescriptor::composite_head(ElementType::Float32, shape.to_vec(), CompositeHead::group(0))
            .with_shard(Shard::new(vec![n, n], start.to_vec()));
        w.write_tensor_unchecked(RawTensor::from_descriptor(format!("m{i}"), &member, Vec::new()).unwrap())
            .unwrap();
    }
    AlignedBytes::from_slice(&w.finish().unwrap())
}

const NOT_A_COVER: &str = "partition members do not cover the head's index space exactly";

fn error_of(bytes: &AlignedBytes) -> Error {
    let file = HurrayFile::parse(bytes, Options::strict()).unwrap();
    file.tensor("P").unwrap_err()
}

/// Rows `[i, i + 1)`, columns `[i, n)`: no pair to compare along rows, so
/// the check reaches the cover rule, which these boxes break (they leave the
/// lower triangle empty).
#[test]
fn the_sweep_takes_the_dimension_with_fewest_overlaps() {
    let n = 20_000;
    let boxes: Vec<([u64; 2], [u64; 2])> = (0..n).map(|i| ([i, i], [1, n - i])).collect();
    let e = error_of(&partition(n, &boxes));
    assert!(
        matches!(&e, Error::Composite { what, .. } if *what == NOT_A_COVER),
        "{e}"
    );
    // The same boxes as full rows cover the head exactly.
    let rows: Vec<([u64; 2], [u64; 2])> = (0..n).map(|i| ([i, 0], [1, n])).collect();
    let bytes = partition(n, &rows);
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    assert_eq!(file.tensor("P").unwrap().composite_members().len(), 20_000);
}

/// Two families that overlap along every dimension: `m` row stripes in the
/// top-left quadrant (all starting at column 0) and `m` column stripes in
/// the bottom-right one (all starting at row `m`). Either sweep compares
/// `m(m - 1)/2` pairs: 50 005 000 for `m = 10 001`, above the budget of
/// 50 000 000, so the check refuses before comparing any, naming the head,
/// its last member and that member's `shard_offset`.
#[test]
fn a_partition_beyond_the_budget_is_refused_before_the_sweep() {
    let m = 10_001;
    let mut boxes: Vec<([u64; 2], [u64; 2])> = (0..m).map(|i| ([i, 0], [1, m])).collect();
    boxes.extend((0..m).map(|j| ([m, m + j], [m, 1])));
    let e = error_of(&partition(2 * m, &boxes));
    match &e {
        Error::Composite {
            at: Location {
                scope: Scope::Tensor(tensor),
                ..
            },
            member,
            what,
            ..
        } => {
            assert_eq!(&**tensor, "P");
            assert_eq!(&**member, "m20001");
            assert_eq!(*what, "too many overlapping member boxes to verify the partition");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(e.field().map(|f| f.to_string()), Some("shard_offset".into()));
    // One member fewer on each side: 49 995 000 pairs, within the budget;
    // the boxes are disjoint, and the two empty quadrants break the cover.
    let m = m - 1;
    let mut boxes: Vec<([u64; 2], [u64; 2])> = (0..m).map(|i| ([i, 0], [1, m])).collect();
    boxes.extend((0..m).map(|j| ([m, m + j], [m, 1])));
    let e = error_of(&partition(2 * m, &boxes));
    assert!(
        matches!(&e, Error::Composite { what, .. } if *what == NOT_A_COVER),
        "{e}"
    );
}
