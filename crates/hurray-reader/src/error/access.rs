//! The accessors: [`Error::location`], one `match`, and its parts
//! ([`Error::tensor`], [`Error::field`], [`Error::offset`],
//! [`Error::rule`]), one line each, which for the variants without a
//! [`Location`] read what those variants carry instead.

use super::{rule, Error, Field, Location};

impl Error {
    /// Where the error points and the rule it breaks: every variant about the
    /// file's bytes has one, except [`Error::FileTooSmall`] (the file as a
    /// whole, no field); request, I/O and allocation errors have none.
    pub fn location(&self) -> Option<&Location> {
        match self {
            Error::Truncated { at, .. }
            | Error::BadMagic { at, .. }
            | Error::UnsupportedVersion { at, .. }
            | Error::Invalid { at, .. }
            | Error::InvalidNumber { at, .. }
            | Error::Reserved { at, .. }
            | Error::UnknownTag { at, .. }
            | Error::IndexCrcMismatch { at, .. }
            | Error::SectionRange { at, .. }
            | Error::CountTooLarge { at, .. }
            | Error::TrailingBytes { at, .. }
            | Error::InvalidUtf8 { at, .. }
            | Error::DuplicateName { at, .. }
            | Error::DuplicateKey { at, .. }
            | Error::IndexNotSorted { at, .. }
            | Error::OutOfRange { at, .. }
            | Error::Layout { at, .. }
            | Error::DataOffsetMisaligned { at, .. }
            | Error::DescriptorLengthMismatch { at, .. }
            | Error::DataLengthMismatch { at, .. }
            | Error::RankNotAllowed { at, .. }
            | Error::DynamicDimension { at, .. }
            | Error::Overflow { at, .. }
            | Error::BufferSize { at, .. }
            | Error::NnzMismatch { at, .. }
            | Error::AlignmentNotDelivered { at, .. }
            | Error::PtrFirst { at, .. }
            | Error::PtrLast { at, .. }
            | Error::PtrDecreasing { at, .. }
            | Error::PtrTooLarge { at, .. }
            | Error::NotIncreasing { at, .. }
            | Error::IndexOutOfBounds { at, .. }
            | Error::CooOrder { at, .. }
            | Error::StatisticsNnzMismatch { at, .. }
            | Error::TornComposite { at, .. }
            | Error::Composite { at, .. } => Some(at),
            _ => None,
        }
    }

    /// The tensor the error concerns, by its name in the footer index (for
    /// [`Error::NotFound`], the name looked up).
    pub fn tensor(&self) -> Option<&str> {
        self.location().map_or(self.unlocated().tensor, Location::tensor)
    }

    /// The field the error names, as the spec spells it (`col_ptr[3]`,
    /// `buffer[1].byte_size`, `index_entry[0].data_offset`; displays as the
    /// message does). Every variant about the file's bytes has one, except
    /// [`Error::FileTooSmall`]; argument and I/O errors have none, but for
    /// [`Error::TypeMismatch`] (`type_tag`) and [`Error::LayoutMismatch`]
    /// (`layout_tag`), the descriptor fields they compare, and
    /// [`Error::Misaligned`] (`buffer[i]`).
    pub fn field(&self) -> Option<Field> {
        self.location().map_or(self.unlocated().field, |at| Some(at.field))
    }

    /// The absolute byte offset the error points at, when it has one (every
    /// variant about the file's bytes does, [`Error::FileTooSmall`] the file
    /// size; [`Error::Misaligned`] the buffer's; argument and I/O errors do
    /// not).
    pub fn offset(&self) -> Option<u64> {
        self.location().map_or(self.unlocated().offset, |at| Some(at.offset))
    }

    /// The spec rule the file breaks: the spec file and section, as the
    /// message cites it (`layouts/csc.md § Storage Invariants (2)`). Every
    /// variant about the file's bytes has one; [`Error::Misaligned`] (the
    /// slice given to the reader, not the file, is misaligned),
    /// [`Error::NotViewable`] (which gives its reason in words), argument
    /// and I/O errors have none.
    ///
    /// The form, for programs that read it: one or more citations joined by
    /// `"; "`. Each is a spec file, `" § "` and the heading path joined by
    /// `" › "` (`file-format.md § File Header › File Flags`), sometimes
    /// followed by `": "` and the rule's own words (`...: names are unique`),
    /// or `NOTES.md` and the names of its decision rows in quotes
    /// (`NOTES.md 'data_length'`). A cited section is a heading of that file, checked
    /// against the spec by the crate's tests.
    pub fn rule(&self) -> Option<&'static str> {
        self.location().map_or(self.unlocated().rule, |at| Some(at.rule))
    }

    /// What the accessors give for a variant without a [`Location`].
    fn unlocated<'a>(&'a self) -> Unlocated<'a> {
        let of = |tensor: &'a str, field: Option<Field>| Unlocated {
            tensor: Some(tensor),
            field,
            ..Unlocated::default()
        };
        match self {
            Error::FileTooSmall { size, .. } => Unlocated {
                offset: Some(*size),
                rule: Some(rule::FILE_LAYOUT),
                ..Unlocated::default()
            },
            Error::Misaligned {
                tensor, buffer, offset, ..
            } => Unlocated {
                offset: Some(*offset),
                ..of(tensor, Some(Field::at("buffer", u64::from(*buffer))))
            },
            Error::TypeMismatch { tensor, .. } => of(tensor, Some(Field::new("type_tag"))),
            Error::LayoutMismatch { tensor, .. } => of(tensor, Some(Field::new("layout_tag"))),
            Error::NotViewable { tensor, .. }
            | Error::IndexArgument { tensor, .. }
            | Error::BlockArgument { tensor, .. }
            | Error::CoordinateArgument { tensor, .. }
            | Error::LengthMismatch { tensor, .. }
            | Error::AllocationFailed { tensor, .. }
            // The name asked for, which no entry has.
            | Error::NotFound { name: tensor } => of(tensor, None),
            _ => Unlocated::default(),
        }
    }
}

/// The accessors' answers for a variant that carries no [`Location`].
#[derive(Default)]
struct Unlocated<'a> {
    tensor: Option<&'a str>,
    field: Option<Field>,
    offset: Option<u64>,
    rule: Option<&'static str>,
}
