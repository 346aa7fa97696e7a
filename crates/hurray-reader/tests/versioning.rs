//! `versioning.md` and the strict/permissive split: newer minor versions
//! are read (their extra trailing bytes skipped); unknown tags are rejected
//! in strict mode and, in permissive mode, the descriptor is kept but its
//! data is never interpreted.

use hurray_reader::{AlignedBytes, Error, Field, HurrayFile, Layout, Location, Options};
use hurray_writer::{
    BufferData, ElementType, FileWriter, RawDescriptor, RawFileFields, RawTensor, TensorDescriptor, WriterOptions,
};

fn csc_descriptor() -> RawDescriptor {
    TensorDescriptor::csc(ElementType::Float32, 4, 5, 5).unwrap().to_raw()
}

/// One tensor `A` with the worked example's buffers and `d` as descriptor.
fn file_with(d: RawDescriptor, options: WriterOptions) -> AlignedBytes {
    let values: Vec<u8> = [1.0f32, 4.0, 3.0, 2.0, 5.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let rows: Vec<u8> = [0u64, 2, 1, 0, 2].iter().flat_map(|v| v.to_le_bytes()).collect();
    let ptr: Vec<u8> = [0u64, 1, 2, 3, 4, 5].iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut w = FileWriter::new(Vec::new(), options).unwrap();
    let buffers = vec![
        BufferData::Bytes(&values),
        BufferData::Bytes(&rows),
        BufferData::Bytes(&ptr),
    ];
    w.write_tensor_unchecked(RawTensor::new("A", d.encode().unwrap(), buffers))
        .unwrap();
    AlignedBytes::from_slice(&w.finish().unwrap())
}

#[test]
fn newer_descriptor_minor_version_skips_trailing_bytes_even_when_strict() {
    let mut d = csc_descriptor();
    d.version_minor = 1;
    d.trailing_bytes = vec![0xAB; 12]; // a field a 1.1 writer appended
    let bytes = file_with(d, WriterOptions::default());
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    let t = file.tensor("A").unwrap();
    assert_eq!(t.descriptor().version(), (1, 1));
    assert_eq!(t.csc::<f32>().unwrap().get(2, 1).unwrap(), Some(&4.0));
}

#[test]
fn trailing_bytes_in_our_own_minor_version_are_strict_errors_permissive_skips() {
    let mut d = csc_descriptor();
    d.trailing_bytes = vec![0; 8];
    let bytes = file_with(d, WriterOptions::default());
    let strict = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    assert!(matches!(
        strict.tensor("A"),
        Err(Error::TrailingBytes {
            at: Location {
                field: Field { name: "descriptor", .. },
                offset: 173,
                ..
            },
            count: 8,
            ..
        })
    ));
    let permissive = HurrayFile::parse(&bytes, Options::permissive()).unwrap();
    assert_eq!(permissive.tensor("A").unwrap().csc::<f32>().unwrap().nnz(), 5);
}

#[test]
fn newer_major_versions_are_rejected_in_both_modes() {
    let mut d = csc_descriptor();
    d.version_major = 2;
    let bytes = file_with(d, WriterOptions::default());
    for options in [Options::strict(), Options::permissive()] {
        let file = HurrayFile::parse(&bytes, options).unwrap();
        assert!(matches!(
            file.tensor("A"),
            Err(Error::UnsupportedVersion {
                found: 2,
                supported: 1,
                ..
            })
        ));
    }
    let raw = RawFileFields {
        container_version: Some([2, 0]),
        ..RawFileFields::default()
    };
    let bytes = file_with(csc_descriptor(), WriterOptions::default().raw(raw));
    assert!(matches!(
        HurrayFile::parse(&bytes, Options::permissive()),
        Err(Error::UnsupportedVersion {
            at: Location {
                field: Field {
                    name: "container_version_major",
                    ..
                },
                ..
            },
            ..
        })
    ));
}

/// `versioning.md` § Compatibility Matrix: a major version below ours is
/// rejected too (no migration path is defined at 1.x), and the message
/// says it is older, not newer.
#[test]
fn older_and_newer_major_versions_are_named_as_such() {
    let container = |major: u8| {
        let raw = RawFileFields {
            container_version: Some([major, 0]),
            ..RawFileFields::default()
        };
        let bytes = file_with(csc_descriptor(), WriterOptions::default().raw(raw));
        HurrayFile::parse(&bytes, Options::permissive())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        container(0),
        "container_version_major at offset 8: version 0 is older than the supported major version 1 \
         (file-format.md § File Header)"
    );
    assert_eq!(
        container(2),
        "container_version_major at offset 8: version 2 is newer than the supported major version 1 \
         (file-format.md § File Header)"
    );
    let descriptor = |major: u8| {
        let mut d = csc_descriptor();
        d.version_major = major;
        let bytes = file_with(d, WriterOptions::default());
        let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
        file.tensor("A").unwrap_err().to_string()
    };
    // The descriptor starts at 64; version_major is its byte 4.
    assert_eq!(
        descriptor(0),
        "tensor 'A': version_major at offset 68: version 0 is older than the supported major version 1 \
         (metadata.md § Version Compatibility; versioning.md § Compatibility Matrix)"
    );
    assert_eq!(
        descriptor(2),
        "tensor 'A': version_major at offset 68: version 2 is newer than the supported major version 1 \
         (metadata.md § Version Compatibility; versioning.md § Compatibility Matrix)"
    );
}

#[test]
fn newer_container_minor_version_is_read() {
    let raw = RawFileFields {
        container_version: Some([1, 3]),
        ..RawFileFields::default()
    };
    let bytes = file_with(csc_descriptor(), WriterOptions::default().raw(raw));
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    assert_eq!(file.container_version(), (1, 3));
    assert!(file.validate().is_ok());
}

/// `versioning.md` § Compatibility Matrix (NOTES.md 'Unknown trailing
/// content in the index and KV sections'): bytes after the last index
/// entry, or after the last KV entry, inside the section's length. In a
/// file of a newer container minor version they are content this reader
/// does not know, skipped by the length even in strict mode; in version
/// 1.0 strict mode rejects them, permissive mode skips them. The files are
/// the malformed corpus's, with `container_version_minor` (byte 9, outside
/// the CRC-covered index) set to 0 and to 1.
#[test]
fn trailing_index_and_kv_content_is_skipped_in_a_newer_container_minor_version() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/invalid");
    let cases = [
        (
            "index_trailing_bytes.hry",
            "index at offset 8235: 8 unexpected bytes after the last field \
             (file-format.md § Index Section › Index Encoding)",
        ),
        (
            "kv_trailing_bytes.hry",
            "KV section at offset 8209: 7 unexpected bytes after the last field \
             (file-format.md § KV Metadata Section › KV Section Encoding)",
        ),
    ];
    for (name, strict_error) in cases {
        let original = std::fs::read(dir.join(name)).unwrap();
        assert_eq!(original[8..10], [1, 0], "{name}: a version 1.0 file");
        for minor in [0u8, 1, 0xFF] {
            let mut patched = original.clone();
            patched[9] = minor;
            let bytes = AlignedBytes::from_slice(&patched);
            let strict = HurrayFile::parse(&bytes, Options::strict());
            if minor == 0 {
                assert_eq!(strict.map(|_| ()).unwrap_err().to_string(), strict_error, "{name}");
            } else {
                let file = strict.unwrap_or_else(|e| panic!("{name}, 1.{minor}: {e}"));
                assert_eq!(file.container_version(), (1, minor));
                assert_eq!(file.validate(), Ok(()), "{name}, 1.{minor}");
            }
            let file = HurrayFile::parse(&bytes, Options::permissive()).unwrap();
            assert_eq!(file.validate(), Ok(()), "{name}, 1.{minor}, permissive");
        }
    }
}

#[test]
fn unknown_layout_tag_strict_rejects_permissive_keeps_the_descriptor() {
    let mut d = csc_descriptor();
    d.layout_tag = 0x0C;
    d.layout_fields.clear();
    d.buffers.clear();
    let bytes = file_with(d, WriterOptions::default());
    let strict = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    assert!(matches!(
        strict.tensor("A"),
        Err(Error::UnknownTag {
            value: 0x0C,
            why: "not recognised",
            ..
        })
    ));
    let permissive = HurrayFile::parse(&bytes, Options::permissive()).unwrap();
    let t = permissive.tensor("A").unwrap();
    assert_eq!(t.layout(), Layout::Unknown(0x0C));
    assert_eq!(t.shape().collect::<Vec<_>>(), [4, 5]);
    assert_eq!(t.element_type().map(|e| e.as_str()), Some("float32"));
    assert!(t.not_viewable().is_some());
    assert!(matches!(t.dense::<f32>(), Err(Error::NotViewable { .. })));
    // Invalid tags (0x00, 0xFF) stay errors even in permissive mode.
    let mut d = csc_descriptor();
    d.layout_tag = 0xFF;
    let bytes = file_with(d, WriterOptions::default());
    let permissive = HurrayFile::parse(&bytes, Options::permissive()).unwrap();
    assert!(matches!(
        permissive.tensor("A"),
        Err(Error::UnknownTag {
            value: 0xFF,
            why: "invalid",
            ..
        })
    ));
}

/// `metadata.md` § Layout-Specific Fields › Extension Layouts: a reader
/// that does not recognise `extension_layout_id` MUST reject the
/// descriptor unless permissive. Strict mode recognises the ids the caller
/// names (`Options::with_extension_layouts`); no mode interprets the data.
#[test]
fn unrecognised_extension_layout_id_strict_rejects_permissive_keeps_the_descriptor() {
    let mut d = csc_descriptor();
    d.layout_tag = 0xF3;
    d.layout_fields = [7u64.to_le_bytes().as_slice(), &3u32.to_le_bytes(), &[1, 2, 3]].concat();
    let bytes = file_with(d, WriterOptions::default());
    // The layout fields follow the 20-byte fixed header, the shape and byte_offset.
    let layout_fields = 64 + 20 + 2 * 8 + 8;
    let strict = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    match strict.tensor("A") {
        Err(Error::Invalid {
            at: Location {
                field, offset, rule, ..
            },
            value: 7,
            ..
        }) => {
            assert_eq!(field, Field::new("extension_layout_id"));
            assert_eq!(offset, layout_fields);
            assert_eq!(rule, "metadata.md § Layout-Specific Fields › Extension Layouts");
        }
        other => panic!("{other:?}"),
    }
    assert!(strict.validate().is_err());
    const OTHERS: &[u64] = &[8];
    let strict_other = HurrayFile::parse(&bytes, Options::strict().with_extension_layouts(OTHERS)).unwrap();
    assert!(matches!(strict_other.tensor("A"), Err(Error::Invalid { value: 7, .. })));
    const OURS: &[u64] = &[8, 7];
    for options in [Options::strict().with_extension_layouts(OURS), Options::permissive()] {
        let file = HurrayFile::parse(&bytes, options).unwrap();
        let t = file.tensor("A").unwrap();
        assert_eq!(t.layout(), Layout::Extension(0xF3));
        assert_eq!(t.shape().collect::<Vec<_>>(), [4, 5]);
        assert!(t.not_viewable().is_some());
        assert!(matches!(t.csc::<f32>(), Err(Error::LayoutMismatch { .. })));
        assert!(matches!(t.dense::<f32>(), Err(Error::NotViewable { .. })));
        assert_eq!(t.buffers().len(), 3);
        assert_eq!(t.buffers()[1].bytes().len(), 40, "row_indices' bytes, uninterpreted");
        file.validate().unwrap();
    }
}

#[test]
fn unknown_type_tag_strict_rejects_permissive_refuses_views() {
    let mut d = csc_descriptor();
    d.type_tag = 0x47;
    let bytes = file_with(d, WriterOptions::default());
    let strict = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    assert!(matches!(
        strict.tensor("A"),
        Err(Error::UnknownTag {
            value: 0x47,
            why: "reserved",
            ..
        })
    ));
    let permissive = HurrayFile::parse(&bytes, Options::permissive()).unwrap();
    let t = permissive.tensor("A").unwrap();
    assert_eq!(t.element_type(), None);
    assert_eq!(t.nnz(), Some(5));
    assert!(matches!(t.csc::<f32>(), Err(Error::NotViewable { .. })));
    assert!(matches!(t.csc_structure(), Err(Error::NotViewable { .. })));
    assert_eq!(t.buffers().len(), 3);
    assert!(t.validate_data().is_ok(), "nothing to interpret, nothing to reject");
}

#[test]
fn unknown_quantization_scheme_strict_rejects_permissive_refuses_views() {
    let mut d = csc_descriptor();
    d.type_tag = ElementType::Int8.tag();
    d.buffers[0].byte_size = 5;
    d.quantization = Some(vec![0x20, 0x01, 0x00, 0x00]);
    let bytes = file_with(d, WriterOptions::default());
    let strict = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    assert!(matches!(
        strict.tensor("A"),
        Err(Error::UnknownTag {
            at: Location {
                field: Field {
                    name: "quantization",
                    member: Some("scheme_tag"),
                    ..
                },
                ..
            },
            value: 0x20,
            ..
        })
    ));
    let permissive = HurrayFile::parse(&bytes, Options::permissive()).unwrap();
    let t = permissive.tensor("A").unwrap();
    assert!(t.not_viewable().is_some());
    assert!(matches!(t.csc::<i8>(), Err(Error::NotViewable { .. })));
}
