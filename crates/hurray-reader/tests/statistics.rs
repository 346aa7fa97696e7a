//! `metadata.md` § Statistics Section › Field Encoding: the field-level
//! rules a reader can check from the 72-byte block alone, beyond its
//! reserved bits and bytes (those are in the malformed corpus,
//! `invalid/statistics_*`). `value_stddev` MUST be >= 0.0 (a NaN is not)
//! and `nm_n <= nm_m`, each only when its `computed_mask` bit is set: a
//! field whose bit is clear is unknown, whatever it holds. Strict mode
//! rejects a violation when the tensor is resolved; permissive mode keeps
//! the (advisory) block and reports it through
//! `Tensor::statistics_rule_violation` (NOTES.md 'value_stddev, nm_n/nm_m').

use hurray_reader::{AlignedBytes, Error, Field, HurrayFile, Location, Number, Options};
use hurray_writer::{BufferData, ElementType, FileWriter, RawTensor, Statistics, TensorDescriptor, WriterOptions};

/// The `layouts/csc.md` worked example (`A`, float32 `[4, 5]`, nnz 5) with
/// `statistics` as its statistics section. The descriptor starts at 64 and
/// its statistics block at 173 (20 + 16 shape + 8 byte_offset + 16 CSC
/// fields + 1 + 3 × 16 handles), so `value_stddev` is at 229, `nm_n` at 237.
fn csc_with(statistics: Statistics) -> AlignedBytes {
    let mut d = TensorDescriptor::csc(ElementType::Float32, 4, 5, 5).unwrap().to_raw();
    d.statistics = Some(statistics);
    let values: Vec<u8> = [1.0f32, 4.0, 3.0, 2.0, 5.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let rows: Vec<u8> = [0u64, 2, 1, 0, 2].iter().flat_map(|v| v.to_le_bytes()).collect();
    let ptr: Vec<u8> = [0u64, 1, 2, 3, 4, 5].iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    let buffers = vec![
        BufferData::Bytes(&values),
        BufferData::Bytes(&rows),
        BufferData::Bytes(&ptr),
    ];
    w.write_tensor_unchecked(RawTensor::new("A", d.encode().unwrap(), buffers))
        .unwrap();
    AlignedBytes::from_slice(&w.finish().unwrap())
}

const RULE: &str = "metadata.md § Statistics Section › Field Encoding";

/// Strict: the tensor's error, as a string, with its parts checked; and
/// permissive mode accepts the file and reports the same error.
fn strict_error(statistics: Statistics) -> Error {
    let bytes = csc_with(statistics);
    let strict = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    let e = strict.tensor("A").map(|_| ()).unwrap_err();
    assert_eq!(e.tensor(), Some("A"));
    assert_eq!(e.rule(), Some(RULE));
    let permissive = HurrayFile::parse(&bytes, Options::permissive()).unwrap();
    let t = permissive.tensor("A").unwrap();
    assert_eq!(
        t.statistics_rule_violation().as_ref(),
        Some(&e),
        "permissive reports it"
    );
    permissive.validate().unwrap();
    e
}

/// Both modes accept the file and report nothing.
fn accepted(statistics: Statistics) {
    let bytes = csc_with(statistics);
    for options in [Options::strict(), Options::permissive()] {
        let file = HurrayFile::parse(&bytes, options).unwrap();
        assert_eq!(
            file.tensor("A").unwrap().statistics_rule_violation(),
            None,
            "{options:?}"
        );
        file.validate().unwrap();
    }
}

#[test]
fn value_stddev_below_zero_or_nan_is_rejected_under_value_stats_valid() {
    let e = strict_error(Statistics::default().with_value_stats(3.0, -1.0));
    assert_eq!(
        e.to_string(),
        "tensor 'A': statistics.value_stddev at offset 229: value -1.0 is not allowed, expected a \
         standard deviation >= 0.0 (not NaN) (metadata.md § Statistics Section › Field Encoding)"
    );
    assert_eq!(e.field(), Some(Field::sub("statistics", "value_stddev")));
    assert_eq!(e.offset(), Some(229));
    assert!(matches!(e, Error::InvalidNumber { value, .. } if value == Number::float(-1.0)));

    // A NaN is not >= 0.0; the smallest negative subnormal and -inf neither.
    let e = strict_error(Statistics::default().with_value_stats(3.0, f64::NAN));
    assert_eq!(
        e.to_string(),
        "tensor 'A': statistics.value_stddev at offset 229: value NaN is not allowed, expected a \
         standard deviation >= 0.0 (not NaN) (metadata.md § Statistics Section › Field Encoding)"
    );
    for stddev in [-f64::from_bits(1), f64::NEG_INFINITY] {
        let e = strict_error(Statistics::default().with_value_stats(0.0, stddev));
        assert!(matches!(e, Error::InvalidNumber {
            at: Location { offset: 229, .. },
            value,
            ..
        } if value == Number::float(stddev)));
    }

    // 0.0 and -0.0 (equal to 0.0) and +inf are >= 0.0.
    for stddev in [0.0, -0.0, 2.5, f64::INFINITY] {
        accepted(Statistics::default().with_value_stats(0.0, stddev));
    }
}

#[test]
fn nm_n_above_nm_m_is_rejected_under_nm_sparsity_valid() {
    let e = strict_error(Statistics::default().with_nm_sparsity(4, 2));
    assert_eq!(
        e.to_string(),
        "tensor 'A': statistics.nm_n at offset 237: value 4 is not allowed, expected at most nm_m \
         (the next byte) (metadata.md § Statistics Section › Field Encoding)"
    );
    assert_eq!(e.field(), Some(Field::sub("statistics", "nm_n")));
    assert!(matches!(
        e,
        Error::Invalid {
            at: Location { offset: 237, .. },
            value: 4,
            ..
        }
    ));
    let e = strict_error(Statistics::default().with_nm_sparsity(1, 0));
    assert!(matches!(
        e,
        Error::Invalid {
            at: Location { offset: 237, .. },
            value: 1,
            ..
        }
    ));

    for (n, m) in [(2, 4), (4, 4), (0, 0), (0, 255)] {
        accepted(Statistics::default().with_nm_sparsity(n, m));
    }
}

/// A field whose `computed_mask` bit is clear MUST be treated as unknown:
/// the same bytes are accepted without their bit, in both modes.
#[test]
fn fields_whose_mask_bit_is_clear_are_never_checked() {
    let mut s = Statistics::default().with_nnz(5);
    s.value_stddev = -1.0;
    s.nm_n = 4;
    s.nm_m = 2;
    accepted(s);
    s.value_stddev = f64::NAN;
    accepted(s);
    // With both bits set, the first rule in block order is named.
    let both = Statistics::default().with_value_stats(0.0, -1.0).with_nm_sparsity(4, 2);
    assert!(matches!(
        strict_error(both),
        Error::InvalidNumber {
            at: Location { offset: 229, .. },
            ..
        }
    ));
}
