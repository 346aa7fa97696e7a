//! The crate's single error type.
//!
//! Every variant names what is wrong and, where a format rule is involved, the
//! spec file and section that states the rule. Tensors and KV entries are
//! referred to by their position in write order (0-based), buffers by their
//! index in the buffer table, array elements by their index in the array.

/// Shorthand for `std::result::Result<T, hurray_writer::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while building or writing a Hurray file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The sink or a buffer source reported an I/O error.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),

    /// An earlier call failed after it had started emitting bytes, so the
    /// output is incomplete; the writer refuses further work.
    #[error("the writer failed part-way through an earlier call and can no longer be used")]
    Poisoned,

    /// `data_buffer_alignment` is not a power of two in `[4096, 2097152]`.
    #[error("data_buffer_alignment {value} is not a power of two in [4096, 2097152] (file-format.md § File Header)")]
    InvalidDataBufferAlignment {
        /// The refused value, in bytes.
        value: u32,
    },

    /// `first_descriptor_offset` is below 64 or not a multiple of 8.
    #[error("first_descriptor_offset {value} must be at least 64 and a multiple of 8 (file-format.md § File Header, § Descriptor Placement)")]
    InvalidFirstDescriptorOffset {
        /// The refused value, in bytes.
        value: u64,
    },

    /// A tensor name is empty.
    #[error("tensor {index} has an empty name (file-format.md § Index Section › Index Encoding: name_length must be at least 1)")]
    EmptyTensorName {
        /// Write position of the tensor.
        index: u64,
    },

    /// A KV key is empty.
    #[error("kv entry {index} has an empty key (file-format.md § KV Metadata Section › KV Section Encoding: key_length must be at least 1)")]
    EmptyKvKey {
        /// Position of the entry in the KV section.
        index: u64,
    },

    /// A name or key does not fit its `uint16` length prefix.
    #[error("{what} {index} is {length} bytes long; the uint16 length prefix allows at most 65535 (file-format.md § Index Section › Index Encoding, § KV Section Encoding)")]
    NameTooLong {
        /// `"tensor name"` or `"kv key"`.
        what: &'static str,
        /// Write position of the tensor or KV entry.
        index: u64,
        /// Length of the name in bytes.
        length: u64,
    },

    /// Two tensors share a name.
    #[error("tensor {index} has the same name as tensor {first_index} (file-format.md § Index Section: names must be unique)")]
    DuplicateTensorName {
        /// Write position of the refused tensor.
        index: u64,
        /// Write position of the earlier tensor with that name.
        first_index: u64,
    },

    /// Two KV entries share a key.
    #[error("kv entry {index} has the same key as kv entry {first_index} (file-format.md § KV Metadata Section: keys must be unique)")]
    DuplicateKvKey {
        /// Position of the refused entry.
        index: u64,
        /// Position of the earlier entry with that key.
        first_index: u64,
    },

    /// The encoded KV section would not fit the trailer's `uint32` `kv_length`.
    #[error("the kv section would be {length} bytes; kv_length is a uint32 (file-format.md § Trailer)")]
    KvSectionTooLarge {
        /// Length the section would have, in bytes.
        length: u64,
    },

    /// A KV entry was added after the file header had been written without
    /// the `HAS_KV_METADATA` flag.
    #[error("kv entry added after the header was written without HAS_KV_METADATA; declare it with WriterOptions::kv_metadata(true) or add kv entries before the first tensor (file-format.md § File Header › File Flags)")]
    KvMetadataNotDeclared,

    /// A KV array element type tag outside `0x01`–`0x06`.
    #[error("kv array element type tag {tag:#04x} is not one of 0x01-0x06 (file-format.md § KV Metadata Section › KV Value Types)")]
    InvalidKvArrayElementType {
        /// The refused tag.
        tag: u8,
    },

    /// The number of tensors written differs from the `tensor_count_hint`
    /// given in the options.
    #[error("tensor_count_hint says {hint} tensors but {actual} were written (file-format.md § File Header)")]
    TensorCountMismatch {
        /// The count given in the options.
        hint: u64,
        /// The number of tensors actually written.
        actual: u64,
    },

    /// `finish` was called while a composite head still waits for members.
    #[error("composite head (tensor {head}) declares {member_count} members but only {written} were written (file-format.md § Composite Tensors: torn composite)")]
    TornComposite {
        /// Write position of the head.
        head: u64,
        /// The head's `member_count`.
        member_count: u32,
        /// Members written so far.
        written: u32,
    },

    /// Composite heads nested deeper than 8 levels.
    #[error("composite head (tensor {head}) would nest {depth} levels deep; the limit is 8 (layouts/composite.md § Binding)")]
    CompositeTooDeep {
        /// Write position of the refused head.
        head: u64,
        /// Nesting depth it would have.
        depth: u64,
    },

    /// A member breaks a per-member rule of its composite head.
    #[error("tensor {member} breaks a rule of its composite head (tensor {head}): {problem} ({rule})")]
    CompositeMember {
        /// Write position of the head.
        head: u64,
        /// Write position of the member.
        member: u64,
        /// What is wrong.
        problem: &'static str,
        /// Spec file and section.
        rule: &'static str,
    },

    /// Two members of a partition composite overlap.
    #[error("members {first} and {second} of partition head {head} overlap (layouts/composite.md § Composition Semantics › Partition)")]
    PartitionOverlap {
        /// Write position of the head.
        head: u64,
        /// Write position of the first member.
        first: u64,
        /// Write position of the second member.
        second: u64,
    },

    /// The members of a partition composite leave part of the head's index
    /// space uncovered.
    #[error("members of partition head {head} cover {covered} of its {total} elements (layouts/composite.md § Composition Semantics › Partition: exact cover)")]
    PartitionGap {
        /// Write position of the head.
        head: u64,
        /// Number of covered logical elements.
        covered: u128,
        /// Number of logical elements of the head.
        total: u128,
    },

    /// A size, count or offset computation overflowed `u64` (or `usize`).
    #[error("{what} overflows")]
    Overflow {
        /// What was being computed.
        what: &'static str,
    },

    /// More than 64 dimensions.
    #[error("rank {rank} exceeds 64 (data-model.md § Rank)")]
    RankTooLarge {
        /// The refused rank.
        rank: u64,
    },

    /// A layout used with a rank it does not allow.
    #[error("layout {layout} does not allow rank {rank} ({rule})")]
    RankNotAllowed {
        /// Layout name.
        layout: &'static str,
        /// The refused rank.
        rank: u64,
        /// Spec file and section.
        rule: &'static str,
    },

    /// A shape carries the dynamic-dimension sentinel `u64::MAX`, so no buffer
    /// size can be computed.
    #[error("shape[{dimension}] is the dynamic dimension sentinel; a written tensor needs concrete sizes (metadata.md § Core Variable Fields › shape)")]
    DynamicDimension {
        /// Index of the dimension.
        dimension: u64,
    },

    /// A per-dimension field has the wrong number of entries.
    #[error("{what} has {actual} entries, expected {expected} ({rule})")]
    FieldLength {
        /// Spec field name.
        what: &'static str,
        /// Required number of entries.
        expected: u64,
        /// Number given.
        actual: u64,
        /// Spec file and section.
        rule: &'static str,
    },

    /// A descriptor field holds a value the spec forbids.
    #[error("{what} = {value} is not allowed ({rule})")]
    InvalidField {
        /// Spec field name.
        what: &'static str,
        /// The refused value (widened to `u64`).
        value: u64,
        /// Spec file and section.
        rule: &'static str,
    },

    /// A floating-point descriptor field holds a value the spec forbids.
    #[error("{what} = {value} is not allowed ({rule})")]
    InvalidFloatField {
        /// Spec field name.
        what: &'static str,
        /// The refused value.
        value: f64,
        /// Spec file and section.
        rule: &'static str,
    },

    /// An element type tag the checked path does not accept.
    #[error("element type tag {tag:#04x} is reserved or unknown (element-types.md § Type Identifier Encoding)")]
    UnknownElementType {
        /// The refused tag.
        tag: u8,
    },

    /// A layout the checked path does not accept.
    #[error("layout tag {tag:#04x} is reserved or unknown (memory-layout.md § Layout Taxonomy)")]
    UnknownLayout {
        /// The refused tag.
        tag: u8,
    },

    /// The extension-type section is present without a private type tag, or
    /// missing with one.
    #[error("type tag {type_tag:#04x} with extension type section present = {present}: the section is required exactly for tags 0xF0-0xFE (metadata.md § Extension Type Section)")]
    ExtensionTypeSection {
        /// The descriptor's type tag.
        type_tag: u8,
        /// Whether the section was given.
        present: bool,
    },

    /// A buffer table with the wrong number of entries.
    #[error("layout {layout} needs {expected} buffers, the descriptor has {actual} ({rule})")]
    BufferCount {
        /// Layout name.
        layout: &'static str,
        /// Required buffer count.
        expected: u64,
        /// Buffer count given.
        actual: u64,
        /// Spec file and section.
        rule: &'static str,
    },

    /// A buffer table with too few entries.
    #[error("layout {layout} needs at least {minimum} buffers, the descriptor has {actual} ({rule})")]
    TooFewBuffers {
        /// Layout name.
        layout: &'static str,
        /// Minimum buffer count.
        minimum: u64,
        /// Buffer count given.
        actual: u64,
        /// Spec file and section.
        rule: &'static str,
    },

    /// More than 255 buffers.
    #[error("{count} buffers do not fit the uint8 buffer_count (metadata.md § Buffer Table)")]
    TooManyBuffers {
        /// Number of buffers given.
        count: u64,
    },

    /// A buffer whose `byte_size` differs from the size the layout requires.
    #[error("buffer {buffer} ({what}) has byte_size {actual}, the layout requires exactly {expected} bytes ({rule})")]
    BufferSize {
        /// Buffer table index.
        buffer: u64,
        /// Spec name of the buffer.
        what: &'static str,
        /// Required size in bytes.
        expected: u64,
        /// Declared size in bytes.
        actual: u64,
        /// Spec file and section.
        rule: &'static str,
    },

    /// A dense buffer smaller than its elements need.
    #[error("buffer {buffer} ({what}) has byte_size {actual}, the tensor needs at least {minimum} bytes ({rule})")]
    BufferTooSmall {
        /// Buffer table index.
        buffer: u64,
        /// Spec name of the buffer.
        what: &'static str,
        /// Minimum size in bytes.
        minimum: u64,
        /// Declared size in bytes.
        actual: u64,
        /// Spec file and section.
        rule: &'static str,
    },

    /// A buffer handle field holds a forbidden value.
    #[error("buffer {buffer}: {what} = {value} is not allowed ({rule})")]
    InvalidHandle {
        /// Buffer table index.
        buffer: u64,
        /// Spec field name.
        what: &'static str,
        /// The refused value.
        value: u64,
        /// Spec file and section.
        rule: &'static str,
    },

    /// Buffers of one tensor on different devices or memory classes.
    #[error("buffer {buffer} has a different device_tag or memory_class than buffer 0 (buffer-protocol.md § Device Tags › Device Colocation)")]
    MixedDevices {
        /// Buffer table index of the first differing buffer.
        buffer: u64,
    },

    /// A non-zero `byte_offset` on a layout that requires zero.
    #[error("layout {layout} requires byte_offset 0, got {byte_offset} ({rule})")]
    NonZeroByteOffset {
        /// Layout name.
        layout: &'static str,
        /// The refused offset, in bytes.
        byte_offset: u64,
        /// Spec file and section.
        rule: &'static str,
    },

    /// `byte_offset` lies beyond buffer 0.
    #[error("byte_offset {byte_offset} exceeds the {buffer_size}-byte buffer 0 (metadata.md § Core Variable Fields › byte_offset)")]
    ByteOffsetOutOfRange {
        /// Offset in bytes.
        byte_offset: u64,
        /// Size of buffer 0 in bytes.
        buffer_size: u64,
    },

    /// A shard box that does not fit inside its parent.
    #[error("shard dimension {dimension}: shard_offset {shard_offset} + shape {size} exceeds parent_shape {parent} (metadata.md § Shard Section)")]
    ShardOutOfBounds {
        /// Dimension index.
        dimension: u64,
        /// `shard_offset[dimension]`.
        shard_offset: u64,
        /// `shape[dimension]`.
        size: u64,
        /// `parent_shape[dimension]`.
        parent: u64,
    },

    /// An optional section or flag that this kind of tensor must not carry.
    #[error("a {layout} tensor must not carry a {section} section ({rule})")]
    SectionNotAllowed {
        /// Name of the section.
        section: &'static str,
        /// Layout name.
        layout: &'static str,
        /// Spec file and section.
        rule: &'static str,
    },

    /// Statistics `nnz` (marked valid) differs from the sparse layout's `nnz`.
    #[error("statistics nnz {statistics_nnz} differs from the layout nnz {nnz} ({rule})")]
    StatisticsNnzMismatch {
        /// `nnz` in the statistics section.
        statistics_nnz: u64,
        /// `nnz` in the layout fields.
        nnz: u64,
        /// Spec file and section.
        rule: &'static str,
    },

    /// The number of data sources differs from the number of buffer handles.
    #[error("{actual} data sources given for {expected} buffers")]
    SourceCount {
        /// Number of buffer handles.
        expected: u64,
        /// Number of data sources.
        actual: u64,
    },

    /// A data source's length differs from its handle's `byte_size`.
    #[error("data source for buffer {buffer} holds {actual} bytes but the handle declares byte_size {expected}")]
    SourceLength {
        /// Buffer table index.
        buffer: u64,
        /// `byte_size` of the handle.
        expected: u64,
        /// Length of the source in bytes.
        actual: u64,
    },

    /// A reader source ended before producing its declared length.
    #[error("data source for buffer {buffer} ended after {actual} of {expected} bytes")]
    SourceTooShort {
        /// Buffer table index.
        buffer: u64,
        /// Bytes expected.
        expected: u64,
        /// Bytes produced before end of input.
        actual: u64,
    },

    /// A values byte slice whose length does not match its element count.
    #[error("{count} elements need {expected} bytes, the values slice has {actual} (element-types.md § Buffer Size Calculation)")]
    ValuesLength {
        /// Number of elements.
        count: u64,
        /// Required length in bytes.
        expected: u64,
        /// Given length in bytes.
        actual: u64,
    },

    /// Unused bits after the last packed sub-byte element are not zero.
    #[error("packed values: unused bits in byte {byte} are not zero (element-types.md § Tier 2 -- Extended Types › Sub-Byte Integer Types, § Boolean Type)")]
    NonZeroPaddingBits {
        /// Index of the offending byte within the values.
        byte: u64,
    },

    /// The number of values differs from the number the shape or index arrays
    /// require.
    #[error("{what}: expected {expected} values, got {actual} ({rule})")]
    ValueCount {
        /// What the count refers to.
        what: &'static str,
        /// Required number of values.
        expected: u64,
        /// Number given.
        actual: u64,
        /// Spec file and section.
        rule: &'static str,
    },

    /// A sparse pointer array with the wrong length.
    #[error("{array} has {actual} entries, expected {expected} ({rule})")]
    PointerLength {
        /// Spec array name.
        array: &'static str,
        /// Required length in elements.
        expected: u64,
        /// Given length in elements.
        actual: u64,
        /// Spec file and section.
        rule: &'static str,
    },

    /// A sparse pointer array that does not start at 0.
    #[error("{array}[0] = {value}, must be 0 ({rule})")]
    PointerStart {
        /// Spec array name.
        array: &'static str,
        /// The first entry.
        value: u64,
        /// Spec file and section.
        rule: &'static str,
    },

    /// A sparse pointer array whose last entry is not the stored count.
    #[error("{array}[{position}] = {value}, must equal {expected} ({rule})")]
    PointerEnd {
        /// Spec array name.
        array: &'static str,
        /// Index of the last entry.
        position: u64,
        /// The last entry.
        value: u64,
        /// Required value (nnz or the level's node count).
        expected: u64,
        /// Spec file and section.
        rule: &'static str,
    },

    /// A sparse pointer array that decreases.
    #[error("{array}[{position}] = {value} > {array}[{position} + 1] = {next}: must be non-decreasing ({rule})")]
    PointerDecreasing {
        /// Spec array name.
        array: &'static str,
        /// Index of the entry before the drop.
        position: u64,
        /// Entry at `position`.
        value: u64,
        /// Entry at `position + 1`.
        next: u64,
        /// Spec file and section.
        rule: &'static str,
    },

    /// A sparse index array with the wrong length.
    #[error("{array} has {actual} entries, expected {expected} ({rule})")]
    IndexLength {
        /// Spec array name.
        array: &'static str,
        /// Required length in elements.
        expected: u64,
        /// Given length in elements.
        actual: u64,
        /// Spec file and section.
        rule: &'static str,
    },

    /// Indices within one column / row / parent slice are not strictly
    /// increasing (unsorted or duplicated).
    #[error("{array}[{position}] = {value} does not exceed the previous index {previous} in the same slice: must be strictly increasing ({rule})")]
    IndicesNotIncreasing {
        /// Spec array name.
        array: &'static str,
        /// Index of the offending entry.
        position: u64,
        /// Entry before it in the same slice.
        previous: u64,
        /// The offending entry.
        value: u64,
        /// Spec file and section.
        rule: &'static str,
    },

    /// An index at or beyond its dimension's size.
    #[error("{array}[{position}] = {value} is out of bounds for size {bound} ({rule})")]
    IndexOutOfBounds {
        /// Spec array name.
        array: &'static str,
        /// Index of the offending entry.
        position: u64,
        /// The offending entry.
        value: u64,
        /// The dimension size it must stay below.
        bound: u64,
        /// Spec file and section.
        rule: &'static str,
    },

    /// Two COO entries with the same coordinates.
    #[error("COO entries {first} and {second} have the same coordinates (layouts/coo.md § Validity Constraints (2))")]
    DuplicateCoordinate {
        /// Storage position of the first entry.
        first: u64,
        /// Storage position of the second entry.
        second: u64,
    },

    /// `is_sorted` claimed, but a COO entry is lexicographically smaller than
    /// its predecessor.
    #[error("COO entry {position} is lexicographically smaller than entry {position} - 1 although is_sorted is set (layouts/coo.md § Validity Constraints (3))")]
    CoordinatesNotSorted {
        /// Storage position of the offending entry.
        position: u64,
    },

    /// Two triplets at the same coordinates, with [`Duplicates::Reject`](crate::Duplicates::Reject).
    #[error("triplets {first} and {second} are both at (row {row}, col {col}): a compressed matrix stores each element once (layouts/csc.md § Storage Invariants (3), layouts/csr.md § Storage Invariants (3))")]
    DuplicateEntry {
        /// The shared row.
        row: u64,
        /// The shared column.
        col: u64,
        /// Position of the first triplet in the input.
        first: u64,
        /// Position of the second.
        second: u64,
    },

    /// Integer values summed at one coordinate ([`Duplicates::Sum`](crate::Duplicates::Sum)) overflow their type.
    #[error("the values summed at (row {row}, col {col}) overflow their integer type")]
    SumOverflow {
        /// The row.
        row: u64,
        /// The column.
        col: u64,
    },

    /// Memory for an array the caller's sizes ask for could not be had.
    #[error("cannot allocate the {what} ({count} elements)")]
    AllocationFailed {
        /// Which array.
        what: &'static str,
        /// How many elements it needs.
        count: u64,
    },

    /// A CSF `mode_order` that is not a permutation of `0..rank`.
    #[error("mode_order[{position}] = {value} makes mode_order not a permutation of 0..rank (layouts/csf.md § Mode Ordering)")]
    ModeOrderNotPermutation {
        /// Index of the offending entry.
        position: u64,
        /// The offending entry.
        value: u64,
    },
}

impl Error {
    /// Builds an [`Error::Overflow`].
    pub(crate) const fn overflow(what: &'static str) -> Self {
        Error::Overflow { what }
    }
}
