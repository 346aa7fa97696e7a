//! The footer index (`file-format.md` § Footer Index): one entry per
//! tensor, its name and where its descriptor and data lie; parsed, ordered
//! by name for lookup, and checked against SORTED_INDEX.

use super::MIN_INDEX_ENTRY;
use crate::cursor::{to_u64, Cursor};
use crate::error::{rule, Error, Field, Location, Result, Scope};
use crate::raw;

/// One entry of the footer index: a tensor's name and where its descriptor
/// and data lie. All offsets are absolute, in bytes.
#[derive(Clone, Copy)]
pub struct IndexEntry<'data> {
    pub(super) position: usize,
    pub(super) name: &'data str,
    /// Offset of the entry's `name_length` field.
    pub(super) offset: u64,
    pub(super) tail: &'data raw::IndexEntryTail,
}

/// The entry's fields, its name cut after a few dozen characters.
impl std::fmt::Debug for IndexEntry<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexEntry")
            .field("position", &self.position)
            .field("name", &crate::debug::Text(self.name))
            .field("offset", &self.offset)
            .field("descriptor_offset", &self.descriptor_offset())
            .field("descriptor_length", &self.descriptor_length())
            .field("data_offset", &self.data_offset())
            .field("data_length", &self.data_length())
            .finish()
    }
}

impl<'data> IndexEntry<'data> {
    /// The tensor's name.
    pub fn name(&self) -> &'data str {
        self.name
    }

    /// Position of this entry in the footer index.
    pub fn position(&self) -> usize {
        self.position
    }

    /// Offset of the descriptor, in bytes from the start of the file.
    pub fn descriptor_offset(&self) -> u64 {
        self.tail.descriptor_offset.get()
    }

    /// Length of the descriptor, in bytes.
    pub fn descriptor_length(&self) -> u64 {
        u64::from(self.tail.descriptor_length.get())
    }

    /// Offset of the first data buffer, in bytes from the start of the file.
    pub fn data_offset(&self) -> u64 {
        self.tail.data_offset.get()
    }

    /// Bytes from the first byte of buffer 0 to the last byte of the last buffer.
    pub fn data_length(&self) -> u64 {
        self.tail.data_length.get()
    }

    /// Offset of this entry (its `name_length` field) in the file.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Absolute offset (bytes) of a field of the fixed part that follows
    /// the name (`file-format.md` § Index Section), for pointing at it.
    pub fn field_offset(&self, field: EntryField) -> u64 {
        let name_len = to_u64(self.name.len());
        let tail = self.offset.saturating_add(2).saturating_add(name_len);
        tail.saturating_add(match field {
            EntryField::DescriptorOffset => 0,
            EntryField::DescriptorLength => 8,
            EntryField::DataOffset => 12,
            EntryField::DataLength => 20,
            EntryField::Flags => 28,
        })
    }

    /// The value of a field of the fixed part.
    pub fn field_value(&self, field: EntryField) -> u64 {
        match field {
            EntryField::DescriptorOffset => self.tail.descriptor_offset.get(),
            EntryField::DescriptorLength => u64::from(self.tail.descriptor_length.get()),
            EntryField::DataOffset => self.tail.data_offset.get(),
            EntryField::DataLength => self.tail.data_length.get(),
            EntryField::Flags => u64::from(self.tail.flags.get()),
        }
    }

    /// The raw fixed part of the entry.
    pub fn raw(&self) -> &'data raw::IndexEntryTail {
        self.tail
    }

    /// One past the last descriptor byte (checked at open).
    pub(crate) fn descriptor_end(&self) -> u64 {
        self.descriptor_offset().saturating_add(self.descriptor_length())
    }

    /// One past the last data byte (checked at open).
    pub(crate) fn data_end(&self) -> u64 {
        self.data_offset().saturating_add(self.data_length())
    }

    /// One past the last byte the entry's region occupies: the end of its
    /// data, or with no data bytes the end of its descriptor. An empty
    /// tensor's `data_offset` names a boundary it takes no bytes from: the
    /// next descriptor may follow the descriptor padded to 8 bytes or to
    /// `data_buffer_alignment` (NOTES.md 'Padding after a descriptor whose
    /// tensor is empty').
    pub(crate) fn region_end(&self) -> u64 {
        if self.data_length() == 0 {
            self.descriptor_end()
        } else {
            self.data_end()
        }
    }
}

/// The fields of an index entry after its name
/// ([`IndexEntry::field_offset`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryField {
    /// `descriptor_offset` (u64).
    DescriptorOffset,
    /// `descriptor_length` (u32).
    DescriptorLength,
    /// `data_offset` (u64).
    DataOffset,
    /// `data_length` (u64).
    DataLength,
    /// `flags` (u32, must be zero).
    Flags,
}

impl EntryField {
    /// Every field, in file order.
    pub const ALL: [EntryField; 5] = [
        EntryField::DescriptorOffset,
        EntryField::DescriptorLength,
        EntryField::DataOffset,
        EntryField::DataLength,
        EntryField::Flags,
    ];

    /// The spec's name of the field.
    pub fn name(self) -> &'static str {
        match self {
            EntryField::DescriptorOffset => "descriptor_offset",
            EntryField::DescriptorLength => "descriptor_length",
            EntryField::DataOffset => "data_offset",
            EntryField::DataLength => "data_length",
            EntryField::Flags => "flags",
        }
    }
}

/// Parses the footer index; `reject_trailing`: bytes after the last entry
/// are an error rather than skipped.
pub(super) fn parse_index(bytes: &[u8], base: u64, reject_trailing: bool) -> Result<Vec<IndexEntry<'_>>> {
    let mut c = Cursor::new(bytes, base, "index", rule::INDEX);
    let count = c.u64(Field::new("index_entry_count"))?;
    let max = to_u64(c.remaining()) / MIN_INDEX_ENTRY;
    if count > max {
        return Err(Error::CountTooLarge {
            at: Location {
                scope: Scope::File,
                field: Field::new("index_entry_count"),
                offset: base,
                rule: rule::INDEX,
            },
            count,
            max,
            section: "index",
        });
    }
    let mut entries = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
    for i in 0..count {
        let offset = c.offset();
        let name_length = c.u16(Field::member("index_entry", i, "name_length"))?;
        if name_length == 0 {
            return Err(Error::Invalid {
                at: Location {
                    scope: Scope::File,
                    field: Field::member("index_entry", i, "name_length"),
                    offset,
                    rule: rule::INDEX,
                },
                value: 0,
                expected: "at least 1",
            });
        }
        let name_offset = c.offset();
        let name_bytes = c.take(u64::from(name_length), Field::member("index_entry", i, "name"))?;
        let name = std::str::from_utf8(name_bytes).map_err(|_| Error::InvalidUtf8 {
            at: Location {
                scope: Scope::File,
                field: Field::member("index_entry", i, "name"),
                offset: name_offset,
                rule: rule::INDEX,
            },
        })?;
        let tail_offset = c.offset();
        let tail = c.read::<raw::IndexEntryTail>(Field::member("index_entry", i, "descriptor_offset"))?;
        if tail.flags.get() != 0 {
            return Err(Error::Reserved {
                at: Location {
                    scope: Scope::tensor(name),
                    field: Field::member("index_entry", i, "flags"),
                    offset: tail_offset + 28,
                    rule: rule::INDEX,
                },
                value: u64::from(tail.flags.get()),
                byte: None,
            });
        }
        entries.push(IndexEntry {
            position: usize::try_from(i).unwrap_or(usize::MAX),
            name,
            offset,
            tail,
        });
    }
    if reject_trailing && c.remaining() != 0 {
        return Err(Error::TrailingBytes {
            at: Location {
                scope: Scope::File,
                field: Field::new("index"),
                offset: c.offset(),
                rule: rule::INDEX,
            },
            count: to_u64(c.remaining()),
        });
    }
    Ok(entries)
}

/// Orders entry positions by name bytes and rejects duplicate names.
pub(super) fn sort_by_name(entries: &[IndexEntry<'_>]) -> Result<Vec<usize>> {
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by(|&a, &b| {
        let name = |i: usize| entries.get(i).map(|e| e.name.as_bytes());
        name(a).cmp(&name(b)).then(a.cmp(&b))
    });
    for pair in order.windows(2) {
        let (Some(a), Some(b)) = (
            pair.first().and_then(|&i| entries.get(i)),
            pair.get(1).and_then(|&i| entries.get(i)),
        ) else {
            continue;
        };
        if a.name == b.name {
            return Err(Error::DuplicateName {
                at: Location {
                    scope: Scope::File,
                    field: Field::member("index_entry", to_u64(b.position), "name"),
                    offset: b.offset.saturating_add(2),
                    rule: rule::UNIQUE_NAMES,
                },
                name: b.name.into(),
                first: to_u64(a.position),
                second: to_u64(b.position),
            });
        }
    }
    Ok(order)
}

/// With `SORTED_INDEX`, names must be strictly increasing in index order.
pub(super) fn check_sorted(entries: &[IndexEntry<'_>]) -> Result<()> {
    for pair in entries.windows(2) {
        let (Some(a), Some(b)) = (pair.first(), pair.get(1)) else {
            continue;
        };
        if a.name.as_bytes() >= b.name.as_bytes() {
            return Err(Error::IndexNotSorted {
                at: Location {
                    scope: Scope::File,
                    field: Field::member("index_entry", to_u64(b.position), "name"),
                    offset: b.offset.saturating_add(2),
                    rule: rule::FILE_FLAGS,
                },
                name: b.name.into(),
                previous: a.name.into(),
            });
        }
    }
    Ok(())
}
