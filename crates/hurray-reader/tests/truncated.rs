//! A file cut short before it is opened (a copy interrupted, a download
//! that stopped) is rejected cleanly through [`MappedFile`], with the same
//! error as through [`AlignedBytes`]. (Truncation *while* mapped is the
//! hazard documented on `MappedFile`: it cannot be detected, only avoided
//! by reading into memory.)

use std::path::Path;

use hurray_reader::{AlignedBytes, Error, HurrayFile, Location, MappedFile, Options};

#[test]
fn a_file_truncated_before_opening_is_rejected() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/csc_worked_example.hry");
    let full = std::fs::read(&fixture).unwrap();
    let len = full.len() as u64;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.hry");
    for cut in [0, 1, 63, 64, 103, 104, 4096, len - 40, len - 8, len - 1] {
        std::fs::write(&path, &full).unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(cut)
            .unwrap();

        let mapped = MappedFile::open(&path, Options::strict()).unwrap();
        assert_eq!(mapped.bytes().len() as u64, cut);
        let err = mapped.file().unwrap_err();
        if cut < 104 {
            assert!(
                matches!(err, Error::FileTooSmall { size, minimum: 104 } if size == cut),
                "cut {cut}: {err:?}"
            );
            // It points at the end of the file, where the missing bytes start.
            assert_eq!(err.offset(), Some(cut));
        } else {
            // The last 40 bytes are no longer the trailer: its magic is
            // gone (none of these cuts ends on "HRRY").
            assert!(
                matches!(&err, Error::BadMagic {
                    at: Location { field, offset, .. },
                    ..
                }
                    if field.name == "trailer_magic" && *offset == cut - 4),
                "cut {cut}: {err:?}"
            );
        }
        // Read into memory: refused from its two ends when it is long
        // enough to have them, else read and refused by the parse.
        let same = match AlignedBytes::read(&path) {
            Ok(copy) if cut < 104 => HurrayFile::parse(&copy, Options::strict()).unwrap_err(),
            Ok(_) => panic!("cut {cut}: read whole"),
            Err(e) => e,
        };
        assert_eq!(err.to_string(), same.to_string(), "cut {cut}");
    }
}

/// A file too short to hold a header and a trailer is reported by its
/// magic when what it has of it is wrong (not a Hurray file at all), by
/// its size when it starts as a Hurray file would.
#[test]
fn a_short_file_that_is_not_hurray_names_its_magic() {
    for (bytes, found) in [
        (&b"hello world\n"[..], Some("hello wo")),
        (b"PK\x03", Some("PK\\x03")),
        (b"\x89PNG\r\n\x1a\n-more-bytes", Some("\\x89PNG\\r\\n\\x1a\\n")),
        (b"HRR", None),
        (b"HRRYFILE and then too little", None),
        (b"", None),
    ] {
        let err = HurrayFile::parse(&AlignedBytes::from_slice(bytes), Options::strict()).unwrap_err();
        match found {
            Some(found) => assert!(
                matches!(&err, Error::BadMagic {
                    at: Location { field, offset: 0, .. },
                    found: f,
                    expected: "HRRYFILE",
                    ..
                }
                    if field.name == "magic" && f == found),
                "{bytes:?}: {err:?}"
            ),
            None => assert!(
                matches!(err, Error::FileTooSmall { size, minimum: 104 } if size == bytes.len() as u64),
                "{bytes:?}: {err:?}"
            ),
        }
    }
}
