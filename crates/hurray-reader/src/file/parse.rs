//! [`HurrayFile::parse`]: the header, the trailer, the footer index and the
//! KV section, in one pass over the bytes the trailer locates.

use super::container::{check_ends, check_file_magic, file_flags, kv_section, section};
use super::index::{check_sorted, parse_index, sort_by_name};
use super::{HurrayFile, IndexEntry, Options, CONTAINER_VERSION_MINOR, HEADER_LEN, TRAILER_LEN};
use crate::cursor::to_u64;
use crate::error::{rule, Error, Field, Location, Result, Scope};
use crate::kv;

impl<'data> HurrayFile<'data> {
    /// Parses the container: header, trailer, footer index and KV section,
    /// and checks where every region lies.
    ///
    /// `data` is the whole file: an mmap, a `Vec<u8>`, `include_bytes!`.
    /// Typed views need `data` aligned like the file's buffers (any mmap is;
    /// a `Vec<u8>` usually is to 8 or 16 bytes); a misaligned buffer gives
    /// [`Error::Misaligned`] when a typed view is requested, never UB.
    ///
    /// # Errors
    /// Every rule of `file-format.md` the container breaks, e.g.
    /// [`Error::FileTooSmall`], [`Error::BadMagic`],
    /// [`Error::IndexCrcMismatch`], [`Error::DuplicateName`],
    /// [`Error::OutOfRange`], [`Error::Layout`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry"))?;
    /// let file = hurray_reader::HurrayFile::parse(&bytes, hurray_reader::Options::default())?;
    /// assert_eq!(file.len(), 1);
    /// # Ok(()) }
    /// ```
    pub fn parse(data: &'data [u8], options: Options) -> Result<Self> {
        let size = to_u64(data.len());
        let minimum = HEADER_LEN + TRAILER_LEN;
        if size < minimum {
            // What is there of the magic decides: a short file that does
            // not even start like a Hurray file is reported as such.
            check_file_magic(data)?;
            return Err(Error::FileTooSmall { size, minimum });
        }
        let trailer_offset = size - TRAILER_LEN;
        let end = data.get(data.len().saturating_sub(40)..).unwrap_or_default();
        let (header, trailer) = check_ends(data, end, size)?;

        let index_bytes = section(
            data,
            trailer.index_offset.get(),
            trailer.index_length.get(),
            trailer_offset,
            "index",
            Field::new("index_offset"),
            trailer_offset,
        )?;
        let flags = header.file_flags.get();
        if flags & file_flags::HAS_INDEX_CRC32C != 0 {
            let computed = crc32c::crc32c(index_bytes);
            let stored = trailer.index_crc32c.get();
            if computed != stored {
                return Err(Error::IndexCrcMismatch {
                    at: Location {
                        scope: Scope::File,
                        field: Field::new("index_crc32c"),
                        offset: trailer_offset + 28,
                        rule: rule::INDEX_CRC,
                    },
                    stored,
                    computed,
                });
            }
        }
        // Bytes after the last index entry and after the last KV entry:
        // content a newer container minor version may add, skipped by the
        // section's length (versioning.md § Compatibility Matrix); in our
        // own minor version, an error unless permissive (NOTES.md 'Unknown
        // trailing content in the index and KV sections').
        let newer_minor = header.container_version_minor > CONTAINER_VERSION_MINOR;
        let reject_trailing = options.is_strict() && !newer_minor;
        let entries = parse_index(index_bytes, trailer.index_offset.get(), reject_trailing)?;

        let kv = match kv_section(data, header, trailer, trailer_offset)? {
            Some((bytes, base)) => kv::parse(bytes, base, reject_trailing)?,
            None => Vec::new(),
        };

        let by_name = sort_by_name(&entries)?;
        if flags & file_flags::SORTED_INDEX != 0 {
            check_sorted(&entries)?;
        }
        let mut by_offset: Vec<usize> = (0..entries.len()).collect();
        by_offset.sort_by_key(|&i| entries.get(i).map(IndexEntry::descriptor_offset));

        let file = HurrayFile {
            data,
            options,
            header,
            trailer,
            entries,
            by_name,
            by_offset,
            kv,
        };
        file.check_regions()?;
        Ok(file)
    }
}
