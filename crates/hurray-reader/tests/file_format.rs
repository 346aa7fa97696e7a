//! The container format against a byte-level model written from the spec
//! text alone, as property tests.
//!
//! Nothing here calls `hurray-writer` or the reader's internals: the model
//! (`support/model/file_format/`) lays a file out byte by byte from
//! `file-format.md` (64-byte header, padding to `first_descriptor_offset`,
//! tensor regions of descriptor → padding → buffers on
//! `data_buffer_alignment` boundaries → padding to 8 or to
//! `data_buffer_alignment`, the KV section, the footer index, the 40-byte
//! trailer with its CRC-32C), `metadata.md` (fixed header, shape,
//! `byte_offset`, layout-specific fields, buffer table, and the quantization,
//! shard, statistics and extension type sections), `buffer-protocol.md`
//! (16-byte handles with `device_tag`, `sync_mode`, `memory_class` as
//! NOTES.md decides), `layouts/row-major.md`, `layouts/csc.md` and
//! `quantization/per-tensor-affine.md`. Each case draws a few tensors
//! (row-major dense of eleven element types and of private extension types,
//! scalars and empty tensors included; CSC matrices), random UTF-8 names
//! (multi-byte characters, combining marks), random KV metadata of every
//! value type (arrays of every element type, empty strings, arrays and byte
//! sequences), and random container choices (alignment, first descriptor
//! offset, count hint, sorted index, CRC flag, `HAS_KV_METADATA` or not,
//! padding to 8 or to the alignment after a tensor, descriptor minor version
//! 1 with trailing bytes). The reader must expose exactly what the model
//! wrote: header and trailer fields, index entries, KV keys and values, every
//! descriptor field, every buffer's offset, size and handle, and every
//! element value.
//!
//! `every_mutation_is_rejected_with_its_error` then breaks one rule of the
//! spec at a time in each model file (the list is the model's `mutations` and
//! `descriptor_mutations`, each with the rule it breaks) and checks that
//! strict mode rejects it with the exact error variant naming the field, and
//! what permissive mode does where the project documents it
//! (`Mode::Permissive`, NOTES.md). A few mutations change something a reader
//! must not depend on (the tensor count hint, a newer container minor
//! version, the KV flag): both modes accept them.
//!
//! The reader bug this file found (permissive mode accepted a CSC buffer
//! larger than `layouts/csc.md` lists) has a focused test in
//! `versioning.rs`, `oversized_sparse_buffers_are_rejected_in_both_modes`.
//!
//! Not modelled: the other layouts (their addressing has property tests of
//! its own: `dense_layouts.rs`, `sparse_layouts.rs`), packed element types,
//! quantization schemes other than per-tensor affine, composite tensors and
//! the composite member section (`layouts/composite.md`), and the
//! sequential-reader protocol.

mod support {
    pub mod model {
        pub mod basics;
        pub mod file_format;
    }
}

use hurray_reader::{AlignedBytes, Error, HurrayFile, MappedFile, Options};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use support::model::basics::{all_indices, cases, fail};
use support::model::file_format::{
    check, check_file, descriptor, encode, file_model, mutations, Body, Dt, Enc, MFile, MTensor, Mutation, Outcome,
    Perm, Rng, HAS_INDEX_CRC32C,
};

// ---------------------------------------------------------------------------
// The valid-file property
// ---------------------------------------------------------------------------

fn strategy() -> impl Strategy<Value = (Vec<u64>, Option<Vec<u64>>, u64)> {
    (
        vec(any::<u64>(), 0..5),
        proptest::option::of(vec(any::<u64>(), 0..6)),
        any::<u64>(),
    )
}

fn read_back(f: &MFile, enc: &Enc, mapped: bool) -> Result<(), TestCaseError> {
    let aligned = AlignedBytes::from_slice(&enc.bytes);
    for options in [Options::strict(), Options::permissive()] {
        let file = HurrayFile::parse(&aligned, options).map_err(|e| fail(format!("parse: {e}")))?;
        check_file(f, enc, &file)?;
    }
    if mapped {
        let dir = tempfile::tempdir().map_err(|e| fail(e.to_string()))?;
        let path = dir.path().join("model.hry");
        std::fs::write(&path, &enc.bytes).map_err(|e| fail(e.to_string()))?;
        let mapped = MappedFile::open(&path, Options::default()).map_err(|e| fail(format!("open: {e}")))?;
        check!(mapped.bytes() == &enc.bytes[..], "mapped bytes differ");
        let file = mapped.file().map_err(|e| fail(format!("mapped parse: {e}")))?;
        check_file(f, enc, &file)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn model_files_read_back_exactly((tensors, kv, seed) in strategy()) {
        let f = file_model(&tensors, kv.as_deref(), seed);
        let enc = encode(&f);
        read_back(&f, &enc, seed % 16 == 0)?;
    }
}

// ---------------------------------------------------------------------------
// Mutations: one broken rule each
// ---------------------------------------------------------------------------

/// Opens `bytes`, resolves every tensor, builds its views (strict: the CSC
/// scan) and, strictly, validates the whole file.
fn exercise(bytes: &[u8], options: Options) -> Result<(), Error> {
    let file = HurrayFile::parse(bytes, options)?;
    for position in 0..file.len() {
        let t = file.tensor_at(position)?;
        if t.not_viewable().is_some() {
            continue;
        }
        if t.layout() == hurray_reader::Layout::Csc {
            let s = t.csc_structure()?;
            if options.is_strict() {
                s.validate()?;
            }
        } else {
            let shape: Vec<u64> = t.shape().collect();
            if t.element_count()? <= 4096 {
                let indices = if shape.is_empty() {
                    vec![vec![]]
                } else {
                    all_indices(&shape)
                };
                for index in indices {
                    t.dense_value(&index)?;
                }
            }
        }
    }
    if options.is_strict() {
        file.validate()?;
    }
    Ok(())
}

fn variant(e: &Error) -> String {
    format!("{e:?}")
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_string()
}

fn check_mutation(mu: &Mutation) -> Result<(), TestCaseError> {
    let aligned = AlignedBytes::from_slice(&mu.bytes);
    let strict = exercise(&aligned, Options::strict());
    let permissive = exercise(&aligned, Options::permissive());
    match &mu.outcome {
        Outcome::Accepts => {
            check!(strict.is_ok(), "{}: strict rejects: {}", mu.rule, strict.unwrap_err());
            check!(
                permissive.is_ok(),
                "{}: permissive rejects: {}",
                mu.rule,
                permissive.unwrap_err()
            );
        }
        Outcome::Rejects {
            variant: want,
            field,
            tensor,
            permissive: perm,
        } => {
            let Err(e) = strict else {
                return Err(fail(format!("{}: strict mode accepts the file", mu.rule)));
            };
            let got_field = e.field().map(|f| f.to_string());
            check!(
                variant(&e) == *want && got_field.as_deref() == Some(field.as_str()),
                "{}: expected {want} naming {field}, got {} naming {got_field:?}: {e}",
                mu.rule,
                variant(&e)
            );
            check!(
                e.to_string().contains(field.as_str()),
                "{}: the message does not name {field}: {e}",
                mu.rule
            );
            if let Some(name) = tensor {
                check!(
                    e.tensor() == Some(name.as_str()),
                    "{}: error about {:?}, not '{name}': {e}",
                    mu.rule,
                    e.tensor()
                );
            }
            match (perm, permissive) {
                (Perm::Accepts, Err(p)) => return Err(fail(format!("{}: permissive rejects: {p}", mu.rule))),
                (Perm::Rejects, Ok(())) => return Err(fail(format!("{}: permissive accepts ({e})", mu.rule))),
                _ => {}
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn every_mutation_is_rejected_with_its_error((tensors, kv, seed) in strategy()) {
        let f = file_model(&tensors, kv.as_deref(), seed);
        let enc = encode(&f);
        for mu in mutations(&f, &enc, &mut Rng(seed ^ 0xB4D)) {
            check_mutation(&mu)?;
        }
    }
}

/// A row-major float32 tensor with no optional section, one buffer `buf`
/// (alignment 64, on the CPU) and the default paddings.
fn plain_f32(name: &str, shape: Vec<u64>, buf: Vec<u8>) -> MTensor {
    MTensor {
        name: name.into(),
        dt: Dt::F32,
        version_minor: 0,
        trailing: Vec::new(),
        body: Body::Dense {
            shape,
            byte_offset: 0,
            buf,
        },
        quant: None,
        shard: None,
        stats: None,
        device: (0, 0, 0),
        aligns: vec![64],
        extra: vec![Vec::new()],
        pad_to_dba: false,
        empty_unpadded: false,
    }
}

/// NOTES.md 'Padding after a descriptor whose tensor is empty': `A`
/// (float32 `[0]`) is followed by `B`'s descriptor after 8-byte padding,
/// while `A`'s `data_offset` is the `data_buffer_alignment` boundary after
/// its descriptor, which `B`'s data also starts at. Both modes accept it;
/// before, both rejected `B`'s `descriptor_offset` as inside `A`'s region.
/// As the last tensor, `A`'s boundary lies past the end of the file.
#[test]
fn an_empty_tensor_may_be_followed_by_8_byte_padding() {
    let dense = |name: &str, shape: Vec<u64>, buf: Vec<u8>| MTensor {
        empty_unpadded: true,
        ..plain_f32(name, shape, buf)
    };
    let values: Vec<u8> = [1.5f32, -2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    for order in [["A", "B"], ["B", "A"]] {
        let tensors = order
            .iter()
            .map(|&n| match n {
                "A" => dense("A", vec![0], Vec::new()),
                _ => dense("B", vec![2], values.clone()),
            })
            .collect();
        let f = MFile {
            container_minor: 0,
            flags: HAS_INDEX_CRC32C,
            dba: 4096,
            first: 64,
            hint: 2,
            tensors,
            index_sorted: false,
            kv: None,
            kv_extra: Vec::new(),
            index_extra: Vec::new(),
        };
        let enc = encode(&f);
        let a = &enc.desc[order.iter().position(|&n| n == "A").unwrap()];
        assert_eq!(
            (a.data_offset, a.data_length),
            ((a.start + a.len).div_ceil(4096) * 4096, 0)
        );
        assert_eq!(a.region_end, (a.start + a.len).div_ceil(8) * 8);
        if order[0] == "A" {
            assert_eq!(
                enc.desc[1].start, a.region_end,
                "B's descriptor follows at the next 8 bytes"
            );
            assert_eq!(enc.desc[1].data_offset, 4096, "B's data starts at A's data_offset");
        } else {
            assert!(
                (enc.bytes.len() as u64) < a.data_offset,
                "A's data_offset lies past the file's end"
            );
        }
        read_back(&f, &enc, true).unwrap();
    }
}

/// `metadata.md` § Worked Example, byte for byte: the model's descriptor
/// encoding is the spec's (the example's 192-byte buffer is larger than
/// `[3, 4]` float32 needs; only the descriptor is compared).
#[test]
fn model_descriptor_is_the_worked_example() {
    let t = plain_f32("w", vec![3, 4], vec![0; 192]);
    let (bytes, map) = descriptor(&t);
    let mut want = Vec::new();
    want.extend_from_slice(&[
        0x48, 0x52, 0x52, 0x59, 0x01, 0x00, 0x3D, 0, 0, 0, 0, 0, 0, 0, 0x03, 0x01, 2, 0, 0, 0,
    ]);
    want.extend_from_slice(&[3, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0]);
    want.extend_from_slice(&[0; 8]);
    want.push(1);
    want.extend_from_slice(&[0xC0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(bytes, want);
    assert_eq!(
        (map.len, map.shape, map.byte_offset, map.buffer_count),
        (61, 20, 36, 44)
    );
}
