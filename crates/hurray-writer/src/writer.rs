//! The single-pass file writer (`file-format.md` § Writer Protocol).

use std::collections::HashMap;
use std::io::{self, Read};

use hurray_format::container;

use crate::descriptor::TensorDescriptor;
use crate::element_type::ElementType;
use crate::error::{Error, Result};
use crate::kv::KvValue;
use crate::layout::{CompositionRule, Layout};
use crate::num::{add, len64, round_up, Enc};
use crate::sink::Sink;

/// File magic at offset 0.
pub const FILE_MAGIC: [u8; 8] = container::FILE_MAGIC;
/// Trailer magic in the last 4 bytes.
pub const TRAILER_MAGIC: [u8; 4] = container::TRAILER_MAGIC;
/// Size of the file header in bytes.
pub const HEADER_LEN: u64 = container::HEADER_LEN;
/// Size of the trailer in bytes.
pub const TRAILER_LEN: u64 = container::TRAILER_LEN;
/// File flag bit 0: a KV section is present.
pub const HAS_KV_METADATA: u32 = container::file_flags::HAS_KV_METADATA;
/// File flag bit 1: index entries are sorted by name bytes.
pub const SORTED_INDEX: u32 = container::file_flags::SORTED_INDEX;
/// File flag bit 2: the trailer carries the index CRC-32C.
pub const HAS_INDEX_CRC32C: u32 = container::file_flags::HAS_INDEX_CRC32C;
/// Default `data_buffer_alignment` in bytes.
pub const DEFAULT_DATA_BUFFER_ALIGNMENT: u32 = 4096;
/// `tensor_count_hint` value meaning "unknown".
pub const UNKNOWN_TENSOR_COUNT: u64 = container::UNKNOWN_TENSOR_COUNT;

/// Bytes gathered before a write reaches the sink; larger writes bypass it.
const STAGE_LEN: usize = 256 * 1024;
/// Chunk size used to pull data from reader and generator sources.
const CHUNK_LEN: usize = 1 << 20;

/// Header and trailer fields that the normal options do not let you break,
/// for building invalid files. Everything defaults to "write the correct
/// value".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawFileFields {
    /// Replaces the computed `file_flags` in the header.
    pub file_flags: Option<u32>,
    /// Replaces `container_version_major` / `_minor` (`[1, 0]`).
    pub container_version: Option<[u8; 2]>,
    /// Header bytes 10–11.
    pub header_reserved: Option<[u8; 2]>,
    /// Header bytes 36–63.
    pub header_reserved_tail: Option<[u8; 28]>,
    /// Value written to the header's `data_buffer_alignment` field; padding
    /// still follows [`WriterOptions::data_buffer_alignment`].
    pub header_data_buffer_alignment: Option<u32>,
    /// Value written as `tensor_count_hint` (bypasses the count check).
    pub tensor_count_hint: Option<u64>,
    /// Value written as `index_entry_count`.
    pub index_entry_count: Option<u64>,
    /// Clears `HAS_INDEX_CRC32C` and writes `index_crc32c = 0` (a valid file
    /// without index checksum).
    pub omit_index_crc: bool,
    /// Value written as `index_crc32c` instead of the computed CRC.
    pub index_crc32c: Option<u32>,
    /// Value written as the trailer's `index_offset`.
    pub trailer_index_offset: Option<u64>,
    /// Value written as the trailer's `index_length`.
    pub trailer_index_length: Option<u64>,
    /// Value written as the trailer's `kv_offset`.
    pub trailer_kv_offset: Option<u64>,
    /// Value written as the trailer's `kv_length`.
    pub trailer_kv_length: Option<u32>,
    /// Trailer bytes 32–35.
    pub trailer_reserved: Option<[u8; 4]>,
    /// Trailer bytes 36–39.
    pub trailer_magic: Option<[u8; 4]>,
}

/// Options of a [`FileWriter`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriterOptions {
    data_buffer_alignment: u32,
    first_descriptor_offset: u64,
    tensor_count_hint: Option<u64>,
    sorted_index: bool,
    kv_metadata: bool,
    sync_on_commit: bool,
    raw: RawFileFields,
}

impl Default for WriterOptions {
    fn default() -> Self {
        Self {
            data_buffer_alignment: DEFAULT_DATA_BUFFER_ALIGNMENT,
            first_descriptor_offset: HEADER_LEN,
            tensor_count_hint: None,
            sorted_index: false,
            kv_metadata: false,
            sync_on_commit: true,
            raw: RawFileFields::default(),
        }
    }
}

impl WriterOptions {
    /// The defaults: alignment 4096, first descriptor at 64, count unknown,
    /// index in write order, sync before rename in path-based writes.
    pub fn new() -> Self {
        Self::default()
    }

    /// Alignment of every data buffer, in bytes: a power of two in
    /// `[4096, 2097152]` (checked by [`FileWriter::new`]).
    #[must_use]
    pub fn data_buffer_alignment(mut self, bytes: u32) -> Self {
        self.data_buffer_alignment = bytes;
        self
    }

    /// Absolute offset of the first descriptor (>= 64, multiple of 8); the
    /// gap after the header is zero-filled.
    #[must_use]
    pub fn first_descriptor_offset(mut self, offset: u64) -> Self {
        self.first_descriptor_offset = offset;
        self
    }

    /// Declares how many tensors will be written (header
    /// `tensor_count_hint`); [`FileWriter::finish`] checks it.
    #[must_use]
    pub fn tensor_count_hint(mut self, count: u64) -> Self {
        self.tensor_count_hint = Some(count);
        self
    }

    /// Writes index entries sorted by the UTF-8 bytes of their names and sets
    /// `SORTED_INDEX`. Tensors stay in write order in the tensor region.
    #[must_use]
    pub fn sorted_index(mut self, sorted: bool) -> Self {
        self.sorted_index = sorted;
        self
    }

    /// Announces a KV section up front: sets `HAS_KV_METADATA` and always
    /// writes a KV section (possibly with zero entries). Without it, the flag
    /// is set only if KV entries are added before the first tensor.
    #[must_use]
    pub fn kv_metadata(mut self, present: bool) -> Self {
        self.kv_metadata = present;
        self
    }

    /// For path-based writing: `fsync` the temporary file before renaming it
    /// into place (default `true`).
    #[must_use]
    pub fn sync_on_commit(mut self, sync: bool) -> Self {
        self.sync_on_commit = sync;
        self
    }

    /// Overrides header / trailer fields (for invalid test files).
    #[must_use]
    pub fn raw(mut self, raw: RawFileFields) -> Self {
        self.raw = raw;
        self
    }

    /// The configured `data_buffer_alignment` in bytes.
    pub fn get_data_buffer_alignment(&self) -> u32 {
        self.data_buffer_alignment
    }

    /// Whether fsync-before-rename is on.
    pub fn get_sync_on_commit(&self) -> bool {
        self.sync_on_commit
    }
}

/// Where the bytes of one buffer come from. The length is in bytes.
pub enum BufferData<'a> {
    /// Bytes held by the caller.
    Bytes(&'a [u8]),
    /// A run of zero bytes; long runs become holes on hole-capable sinks.
    Zeros(u64),
    /// Exactly `len` bytes pulled from a reader (more are not read; fewer
    /// are an error).
    Reader {
        /// The source.
        reader: &'a mut dyn Read,
        /// Bytes to take.
        len: u64,
    },
    /// `len` bytes produced by a callback, in consecutive chunks: it is called
    /// with the byte offset of the chunk within the buffer and a chunk to
    /// fill completely. Every chunk but the last is 1 MiB.
    Generate {
        /// Total bytes.
        len: u64,
        /// Fills one chunk.
        fill: &'a mut dyn FnMut(u64, &mut [u8]) -> io::Result<()>,
    },
}

impl std::fmt::Debug for BufferData<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BufferData::Bytes(b) => write!(f, "Bytes({} bytes)", b.len()),
            BufferData::Zeros(n) => write!(f, "Zeros({n})"),
            BufferData::Reader { len, .. } => write!(f, "Reader({len} bytes)"),
            BufferData::Generate { len, .. } => write!(f, "Generate({len} bytes)"),
        }
    }
}

impl<'a> BufferData<'a> {
    /// Bytes this source produces.
    pub fn len(&self) -> u64 {
        match self {
            BufferData::Bytes(b) => u64::try_from(b.len()).unwrap_or(u64::MAX),
            BufferData::Zeros(n) => *n,
            BufferData::Reader { len, .. } | BufferData::Generate { len, .. } => *len,
        }
    }

    /// Whether the source produces no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The in-memory bytes of a typed slice (`&[f32]`, `&[u64]`, ...).
    pub fn from_slice<T: crate::element_type::Element>(values: &'a [T]) -> Self {
        BufferData::Bytes(zerocopy::IntoBytes::as_bytes(values))
    }

    /// `len` bytes from `reader`.
    pub fn reader(reader: &'a mut dyn Read, len: u64) -> Self {
        BufferData::Reader { reader, len }
    }

    /// `len` bytes from a chunk-filling callback.
    pub fn generate(len: u64, fill: &'a mut dyn FnMut(u64, &mut [u8]) -> io::Result<()>) -> Self {
        BufferData::Generate { len, fill }
    }
}

impl<'a> From<&'a [u8]> for BufferData<'a> {
    fn from(b: &'a [u8]) -> Self {
        BufferData::Bytes(b)
    }
}

impl<'a> From<&'a Vec<u8>> for BufferData<'a> {
    fn from(b: &'a Vec<u8>) -> Self {
        BufferData::Bytes(b.as_slice())
    }
}

impl<'a, const N: usize> From<&'a [u8; N]> for BufferData<'a> {
    fn from(b: &'a [u8; N]) -> Self {
        BufferData::Bytes(b.as_slice())
    }
}

/// A tensor written through the unchecked path: the descriptor bytes are
/// used verbatim and every index field can be overridden.
#[derive(Debug)]
pub struct RawTensor<'a> {
    /// Name bytes (need not be UTF-8, unique or non-empty).
    pub name: Vec<u8>,
    /// Descriptor bytes, written as given.
    pub descriptor: Vec<u8>,
    /// Buffer contents, written in order, each followed by padding to the
    /// data alignment, regardless of what the descriptor declares.
    pub buffers: Vec<BufferData<'a>>,
    /// Pad the descriptor to the data alignment (`true`) or only to 8 bytes
    /// (`false`); `None` = pad to the data alignment iff there are buffers.
    pub pad_after_descriptor: Option<bool>,
    /// Index `descriptor_length` override (default: `descriptor.len()`).
    pub index_descriptor_length: Option<u32>,
    /// Index `descriptor_offset` override.
    pub index_descriptor_offset: Option<u64>,
    /// Index `data_offset` override.
    pub index_data_offset: Option<u64>,
    /// Index `data_length` override.
    pub index_data_length: Option<u64>,
    /// Index entry `flags` (0 in a valid file).
    pub index_flags: u32,
}

impl<'a> RawTensor<'a> {
    /// A raw tensor with no index overrides.
    pub fn new(name: impl Into<Vec<u8>>, descriptor: Vec<u8>, buffers: Vec<BufferData<'a>>) -> Self {
        Self {
            name: name.into(),
            descriptor,
            buffers,
            pad_after_descriptor: None,
            index_descriptor_length: None,
            index_descriptor_offset: None,
            index_data_offset: None,
            index_data_length: None,
            index_flags: 0,
        }
    }

    /// A raw tensor from a typed descriptor, encoded without validation.
    ///
    /// # Errors
    /// [`Error::Overflow`] when a length does not fit its wire field.
    pub fn from_descriptor(
        name: impl Into<Vec<u8>>,
        descriptor: &TensorDescriptor,
        buffers: Vec<BufferData<'a>>,
    ) -> Result<Self> {
        Ok(Self::new(name, descriptor.encode()?, buffers))
    }
}

/// One footer index entry, as written (offsets and lengths in bytes,
/// absolute from the start of the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    /// Name bytes (UTF-8 for tensors written through the checked path).
    pub name: Vec<u8>,
    /// Offset of the descriptor.
    pub descriptor_offset: u64,
    /// Length of the descriptor.
    pub descriptor_length: u32,
    /// Offset of buffer 0 (for a tensor without buffers: the 8-aligned end of
    /// its descriptor).
    pub data_offset: u64,
    /// From the first byte of buffer 0 to the end of the last buffer (padding
    /// between buffers included, padding after the last excluded).
    pub data_length: u64,
    /// Entry flags (0).
    pub flags: u32,
}

/// Staged, position-tracking output over a [`Sink`].
struct Out<S> {
    sink: S,
    pos: u64,
    stage: Vec<u8>,
}

impl<S: Sink> Out<S> {
    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        let new_pos = add(self.pos, len64(bytes.len())?, "file offset")?;
        if bytes.len() >= STAGE_LEN {
            self.flush_stage()?;
            self.sink.write_all(bytes)?;
        } else {
            if self.stage.len().saturating_add(bytes.len()) > STAGE_LEN {
                self.flush_stage()?;
            }
            self.stage.extend_from_slice(bytes);
        }
        self.pos = new_pos;
        Ok(())
    }

    fn zeros(&mut self, len: u64) -> Result<()> {
        let new_pos = add(self.pos, len, "file offset")?;
        match usize::try_from(len) {
            Ok(n) if n < STAGE_LEN => {
                if self.stage.len().saturating_add(n) > STAGE_LEN {
                    self.flush_stage()?;
                }
                self.stage.resize(self.stage.len().saturating_add(n), 0);
            }
            _ => {
                self.flush_stage()?;
                self.sink.write_zeros(len)?;
            }
        }
        self.pos = new_pos;
        Ok(())
    }

    fn pad_to(&mut self, align: u64) -> Result<()> {
        let target = round_up(self.pos, align)?;
        self.zeros(target.saturating_sub(self.pos))
    }

    fn flush_stage(&mut self) -> io::Result<()> {
        if !self.stage.is_empty() {
            self.sink.write_all(&self.stage)?;
            self.stage.clear();
        }
        Ok(())
    }
}

/// A composite head that still waits for members.
#[derive(Debug)]
struct OpenComposite {
    head: u64,
    rule: CompositionRule,
    shape: Vec<u64>,
    element_type: ElementType,
    member_count: u32,
    written: u32,
    /// Partition member boxes `(member, shard_offset, shape)`.
    boxes: Vec<(u64, Vec<u64>, Vec<u64>)>,
    /// Some member was written through the unchecked path.
    unverifiable: bool,
}

/// Streaming, single-pass writer of a Hurray file over a [`Sink`].
///
/// Bytes are emitted strictly forward. The header goes out with the first
/// tensor (or at [`FileWriter::finish`]); each tensor is placed as the
/// Writer Protocol describes; `finish` appends the KV section, the index
/// (with CRC-32C) and the trailer. Memory use is O(number of tensors) plus
/// the KV entries.
///
/// A validation error leaves the writer usable (nothing was written). An
/// error after bytes were emitted (I/O, a short reader) poisons it: later
/// calls return [`Error::Poisoned`].
pub struct FileWriter<S: Sink> {
    out: Out<S>,
    options: WriterOptions,
    alignment: u64,
    header_written: bool,
    kv_flag: bool,
    entries: Vec<IndexEntry>,
    names: HashMap<Vec<u8>, u64>,
    kv: Enc,
    kv_count: u32,
    kv_keys: HashMap<Vec<u8>, u64>,
    composites: Vec<OpenComposite>,
    poisoned: bool,
    chunk: Vec<u8>,
}

impl<S: Sink> std::fmt::Debug for FileWriter<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileWriter")
            .field("position", &self.out.pos)
            .field("tensors", &self.entries.len())
            .field("kv_entries", &self.kv_count)
            .field("poisoned", &self.poisoned)
            .finish_non_exhaustive()
    }
}

impl<S: Sink> FileWriter<S> {
    /// A writer over `sink`, which should be empty (offsets count from the
    /// first byte this writer emits).
    ///
    /// # Errors
    /// [`Error::InvalidDataBufferAlignment`],
    /// [`Error::InvalidFirstDescriptorOffset`].
    pub fn new(sink: S, options: WriterOptions) -> Result<Self> {
        let a = options.data_buffer_alignment;
        if !a.is_power_of_two() || !(4096..=2 * 1024 * 1024).contains(&a) {
            return Err(Error::InvalidDataBufferAlignment { value: a });
        }
        let first = options.first_descriptor_offset;
        if first < HEADER_LEN || !first.is_multiple_of(8) {
            return Err(Error::InvalidFirstDescriptorOffset { value: first });
        }
        Ok(Self {
            out: Out {
                sink,
                pos: 0,
                stage: Vec::new(),
            },
            alignment: u64::from(a),
            options,
            header_written: false,
            kv_flag: false,
            entries: Vec::new(),
            names: HashMap::new(),
            kv: Enc::new(),
            kv_count: 0,
            kv_keys: HashMap::new(),
            composites: Vec::new(),
            poisoned: false,
            chunk: Vec::new(),
        })
    }

    /// Bytes emitted so far (the absolute offset of the next byte, counting
    /// the header even if it has not been flushed yet).
    pub fn position(&self) -> u64 {
        if self.header_written {
            self.out.pos
        } else {
            self.options.first_descriptor_offset
        }
    }

    /// Index entries of the tensors written so far, in write order.
    pub fn entries(&self) -> &[IndexEntry] {
        &self.entries
    }

    /// The options this writer was created with.
    pub fn options(&self) -> &WriterOptions {
        &self.options
    }

    /// The sink (bytes may still sit in the writer's staging buffer).
    pub fn sink(&self) -> &S {
        &self.out.sink
    }

    fn check_usable(&self) -> Result<()> {
        if self.poisoned {
            Err(Error::Poisoned)
        } else {
            Ok(())
        }
    }

    /// Runs `f`, poisoning the writer if it fails (bytes may be half out).
    fn emitting<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        let r = f(self);
        if r.is_err() {
            self.poisoned = true;
        }
        r
    }

    fn file_flags(&self, kv: bool) -> u32 {
        let mut flags = 0;
        if kv {
            flags |= HAS_KV_METADATA;
        }
        if self.options.sorted_index {
            flags |= SORTED_INDEX;
        }
        if !self.options.raw.omit_index_crc {
            flags |= HAS_INDEX_CRC32C;
        }
        self.options.raw.file_flags.unwrap_or(flags)
    }

    fn ensure_header(&mut self) -> Result<()> {
        if self.header_written {
            return Ok(());
        }
        let raw = &self.options.raw;
        let kv = self.options.kv_metadata || self.kv_count > 0;
        let mut e = Enc::new();
        e.bytes(&FILE_MAGIC);
        e.bytes(&raw.container_version.unwrap_or([1, 0]));
        e.bytes(&raw.header_reserved.unwrap_or([0; 2]));
        e.u32(self.file_flags(kv));
        e.u32(
            raw.header_data_buffer_alignment
                .unwrap_or(self.options.data_buffer_alignment),
        );
        e.u64(self.options.first_descriptor_offset);
        e.u64(
            raw.tensor_count_hint
                .or(self.options.tensor_count_hint)
                .unwrap_or(UNKNOWN_TENSOR_COUNT),
        );
        e.bytes(&raw.header_reserved_tail.unwrap_or([0; 28]));
        let first = self.options.first_descriptor_offset;
        self.emitting(|w| {
            w.out.write(&e.buf)?;
            w.out.zeros(first.saturating_sub(HEADER_LEN))
        })?;
        self.kv_flag = kv;
        self.header_written = true;
        Ok(())
    }

    fn check_name(&self, name: &[u8]) -> Result<()> {
        let index = len64(self.entries.len())?;
        if name.is_empty() {
            return Err(Error::EmptyTensorName { index });
        }
        check_name_length("tensor name", index, name)?;
        if let Some(&first_index) = self.names.get(name) {
            return Err(Error::DuplicateTensorName { index, first_index });
        }
        Ok(())
    }

    /// Writes one tensor after checking its name and descriptor.
    ///
    /// `data` gives one source per entry of `descriptor.buffers`, each
    /// producing exactly that buffer's `byte_size` bytes. The descriptor is
    /// validated with [`TensorDescriptor::validate`]; buffer *contents* are
    /// not inspected (use the typed helpers of [`crate::sparse`] for checked
    /// sparse data). Composite heads and their members are tracked: member
    /// rules are checked as members arrive and [`FileWriter::finish`] refuses
    /// a torn composite.
    ///
    /// # Errors
    /// Name errors ([`Error::EmptyTensorName`], [`Error::DuplicateTensorName`],
    /// [`Error::NameTooLong`]), any descriptor rule, a declared buffer
    /// alignment above `data_buffer_alignment` ([`Error::InvalidHandle`]),
    /// composite member rules,
    /// [`Error::SourceCount`] / [`Error::SourceLength`] (nothing written for
    /// any of these); I/O errors and [`Error::SourceTooShort`] while writing
    /// (the writer is then poisoned).
    pub fn write_tensor<'a>(
        &mut self,
        name: &str,
        descriptor: &TensorDescriptor,
        data: impl IntoIterator<Item = BufferData<'a>>,
    ) -> Result<()> {
        self.check_usable()?;
        self.check_name(name.as_bytes())?;
        descriptor.validate()?;
        let sources: Vec<BufferData<'a>> = data.into_iter().collect();
        let expected = len64(descriptor.buffers.len())?;
        let actual = len64(sources.len())?;
        if expected != actual {
            return Err(Error::SourceCount { expected, actual });
        }
        for (i, (src, handle)) in sources.iter().zip(&descriptor.buffers).enumerate() {
            if src.len() != handle.byte_size {
                return Err(Error::SourceLength {
                    buffer: len64(i)?,
                    expected: handle.byte_size,
                    actual: src.len(),
                });
            }
        }
        for (i, handle) in descriptor.buffers.iter().enumerate() {
            if u64::from(handle.alignment) > self.alignment {
                return Err(Error::InvalidHandle {
                    buffer: len64(i)?,
                    what: "alignment",
                    value: u64::from(handle.alignment),
                    rule: "buffer-protocol.md § Alignment › Minimum Alignment: the declared alignment must be one the file delivers (at most data_buffer_alignment)",
                });
            }
        }
        let index = len64(self.entries.len())?;
        self.precheck_composite(index, descriptor)?;
        let bytes = descriptor.encode()?;
        let pad = !descriptor.buffers.is_empty();
        self.ensure_header()?;
        let entry =
            self.emitting(|w| w.place(name.as_bytes().to_vec(), &bytes, sources, pad, &Overrides::default()))?;
        self.push_entry(entry)?;
        self.advance_composites(index, Some(descriptor));
        Ok(())
    }

    /// Writes a tensor through the unchecked path: descriptor bytes verbatim,
    /// any name bytes, any buffer contents and index overrides. Used to build
    /// invalid files. The writer still places the tensor (8-aligned
    /// descriptor, aligned buffers) and indexes it; it counts as a member of
    /// an open composite but is not checked against it.
    ///
    /// # Errors
    /// [`Error::NameTooLong`] (the name must fit its `u16` length), I/O
    /// errors and [`Error::SourceTooShort`] (poisoning the writer).
    pub fn write_tensor_unchecked(&mut self, tensor: RawTensor<'_>) -> Result<()> {
        self.check_usable()?;
        let index = len64(self.entries.len())?;
        check_name_length("tensor name", index, &tensor.name)?;
        let pad = tensor.pad_after_descriptor.unwrap_or(!tensor.buffers.is_empty());
        let overrides = Overrides {
            descriptor_length: tensor.index_descriptor_length,
            descriptor_offset: tensor.index_descriptor_offset,
            data_offset: tensor.index_data_offset,
            data_length: tensor.index_data_length,
            flags: tensor.index_flags,
        };
        self.ensure_header()?;
        let entry = self.emitting(|w| w.place(tensor.name, &tensor.descriptor, tensor.buffers, pad, &overrides))?;
        self.push_entry(entry)?;
        self.advance_composites(index, None);
        Ok(())
    }

    fn push_entry(&mut self, entry: IndexEntry) -> Result<()> {
        let index = len64(self.entries.len())?;
        self.names.entry(entry.name.clone()).or_insert(index);
        self.entries.push(entry);
        Ok(())
    }

    /// Places descriptor and buffers; returns the index entry.
    fn place(
        &mut self,
        name: Vec<u8>,
        descriptor: &[u8],
        sources: Vec<BufferData<'_>>,
        pad_to_data: bool,
        ov: &Overrides,
    ) -> Result<IndexEntry> {
        self.out.pad_to(8)?;
        let descriptor_offset = self.out.pos;
        self.out.write(descriptor)?;
        self.out.pad_to(if pad_to_data { self.alignment } else { 8 })?;
        let data_offset = self.out.pos;
        let mut data_end = data_offset;
        for (i, src) in sources.into_iter().enumerate() {
            self.write_source(len64(i)?, src)?;
            data_end = self.out.pos;
            self.out.pad_to(self.alignment)?;
        }
        self.out.pad_to(8)?;
        let descriptor_length = u32::try_from(descriptor.len()).map_err(|_| Error::overflow("descriptor_length"))?;
        Ok(IndexEntry {
            name,
            descriptor_offset: ov.descriptor_offset.unwrap_or(descriptor_offset),
            descriptor_length: ov.descriptor_length.unwrap_or(descriptor_length),
            data_offset: ov.data_offset.unwrap_or(data_offset),
            data_length: ov.data_length.unwrap_or(data_end.saturating_sub(data_offset)),
            flags: ov.flags,
        })
    }

    fn write_source(&mut self, buffer: u64, src: BufferData<'_>) -> Result<()> {
        match src {
            BufferData::Bytes(b) => self.out.write(b),
            BufferData::Zeros(n) => self.out.zeros(n),
            BufferData::Reader { reader, len } => {
                let mut done = 0u64;
                while done < len {
                    let want = chunk_len(len.saturating_sub(done));
                    let chunk = chunk_buf(&mut self.chunk, want);
                    let mut filled = 0usize;
                    while filled < want {
                        let Some(dst) = chunk.get_mut(filled..) else {
                            break;
                        };
                        match reader.read(dst) {
                            Ok(0) => {
                                return Err(Error::SourceTooShort {
                                    buffer,
                                    expected: len,
                                    actual: add(done, len64(filled)?, "source length")?,
                                })
                            }
                            Ok(n) => filled = filled.saturating_add(n),
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                            Err(e) => return Err(e.into()),
                        }
                    }
                    self.out.write(chunk)?;
                    done = add(done, len64(want)?, "source length")?;
                }
                Ok(())
            }
            BufferData::Generate { len, fill } => {
                let mut done = 0u64;
                while done < len {
                    let want = chunk_len(len.saturating_sub(done));
                    let chunk = chunk_buf(&mut self.chunk, want);
                    fill(done, chunk)?;
                    self.out.write(chunk)?;
                    done = add(done, len64(want)?, "source length")?;
                }
                Ok(())
            }
        }
    }

    /// Adds a KV metadata entry, written after the last tensor.
    ///
    /// The `HAS_KV_METADATA` flag lives in the header, which goes out with
    /// the first tensor: add entries before the first tensor, or announce
    /// them with [`WriterOptions::kv_metadata`].
    ///
    /// # Errors
    /// [`Error::EmptyKvKey`], [`Error::NameTooLong`], [`Error::DuplicateKvKey`],
    /// [`Error::KvMetadataNotDeclared`], [`Error::KvSectionTooLarge`],
    /// [`Error::Overflow`] for over-long values.
    pub fn add_kv(&mut self, key: &str, value: impl Into<KvValue>) -> Result<()> {
        self.check_usable()?;
        let index = u64::from(self.kv_count);
        if key.is_empty() {
            return Err(Error::EmptyKvKey { index });
        }
        if let Some(&first_index) = self.kv_keys.get(key.as_bytes()) {
            return Err(Error::DuplicateKvKey { index, first_index });
        }
        if self.header_written && !self.kv_flag {
            return Err(Error::KvMetadataNotDeclared);
        }
        let value = value.into();
        self.push_kv(key.as_bytes(), value.tag(), &value.encode_payload()?)
    }

    /// Adds a KV entry with any key bytes, any `value_tag` and a verbatim
    /// payload (no uniqueness, emptiness or flag checks). For invalid files.
    ///
    /// # Errors
    /// [`Error::NameTooLong`], [`Error::KvSectionTooLarge`].
    pub fn add_kv_raw(&mut self, key: &[u8], value_tag: u8, payload: &[u8]) -> Result<()> {
        self.check_usable()?;
        self.push_kv(key, value_tag, payload)
    }

    fn push_kv(&mut self, key: &[u8], tag: u8, payload: &[u8]) -> Result<()> {
        let index = u64::from(self.kv_count);
        let key_len = check_name_length("kv key", index, key)?;
        let entry_len = add(
            add(3, len64(key.len())?, "kv entry")?,
            len64(payload.len())?,
            "kv entry",
        )?;
        let total = add(
            add(4, len64(self.kv.buf.len())?, "kv section")?,
            entry_len,
            "kv section",
        )?;
        if total > u64::from(u32::MAX) {
            return Err(Error::KvSectionTooLarge { length: total });
        }
        let count = self.kv_count.checked_add(1).ok_or(Error::overflow("kv_count"))?;
        self.kv.u16(key_len);
        self.kv.bytes(key);
        self.kv.u8(tag);
        self.kv.bytes(payload);
        self.kv_keys.entry(key.to_vec()).or_insert(index);
        self.kv_count = count;
        Ok(())
    }

    /// Checks composite member rules for a tensor about to be written at
    /// position `index`, and the close-time rules of every composite it
    /// would complete. Changes nothing.
    fn precheck_composite(&self, index: u64, d: &TensorDescriptor) -> Result<()> {
        let mut opens = false;
        if let Layout::Composite(h) = &d.layout {
            if h.member_count > 0 {
                opens = true;
                let depth = add(len64(self.composites.len())?, 1, "composite depth")?;
                if depth > 8 {
                    return Err(Error::CompositeTooDeep { head: index, depth });
                }
            } else {
                // A head without members is complete at once.
                close_check(&open_composite(index, d, h), None)?;
            }
        }
        let Some(top) = self.composites.last() else {
            return Ok(());
        };
        check_member(top, index, d)?;
        if opens || top.written.saturating_add(1) < top.member_count {
            return Ok(());
        }
        // This tensor completes `top`; each parent whose last member was the
        // head below it completes too.
        close_check(top, member_box(top, index, d).as_ref())?;
        for open in self.composites.iter().rev().skip(1) {
            if open.written < open.member_count {
                break;
            }
            close_check(open, None)?;
        }
        Ok(())
    }

    /// Updates composite bookkeeping after tensor `index` was written;
    /// `descriptor` is `None` for unchecked tensors.
    fn advance_composites(&mut self, index: u64, descriptor: Option<&TensorDescriptor>) {
        if let Some(top) = self.composites.last_mut() {
            top.written = top.written.saturating_add(1);
            match descriptor.and_then(|d| member_box(top, index, d)) {
                Some(b) => top.boxes.push(b),
                None if descriptor.is_none() => top.unverifiable = true,
                None => {}
            }
        }
        if let Some(d) = descriptor {
            if let Layout::Composite(h) = &d.layout {
                if h.member_count > 0 {
                    self.composites.push(open_composite(index, d, h));
                }
            }
        }
        while self.composites.last().is_some_and(|c| c.written >= c.member_count) {
            self.composites.pop();
        }
    }

    /// Completes the file: KV section (if any), index, trailer; flushes the
    /// sink and returns it.
    ///
    /// # Errors
    /// [`Error::TornComposite`] when a composite head still waits for
    /// members, [`Error::TensorCountMismatch`] when a declared count differs,
    /// I/O errors.
    pub fn finish(mut self) -> Result<S> {
        self.check_usable()?;
        if let Some(open) = self.composites.last() {
            return Err(Error::TornComposite {
                head: open.head,
                member_count: open.member_count,
                written: open.written,
            });
        }
        let actual = len64(self.entries.len())?;
        if let (Some(hint), None) = (self.options.tensor_count_hint, self.options.raw.tensor_count_hint) {
            if hint != actual {
                return Err(Error::TensorCountMismatch { hint, actual });
            }
        }
        self.ensure_header()?;
        self.emitting(|w| w.write_footer(actual))?;
        let mut out = self.out;
        out.flush_stage()?;
        out.sink.finish_sink()?;
        Ok(out.sink)
    }

    fn write_footer(&mut self, count: u64) -> Result<()> {
        self.out.pad_to(8)?;
        let (kv_offset, kv_length) = if self.kv_flag || self.kv_count > 0 {
            let offset = self.out.pos;
            let mut section = Enc::new();
            section.u32(self.kv_count);
            section.bytes(&self.kv.buf);
            let length = u32::try_from(section.buf.len()).map_err(|_| Error::KvSectionTooLarge {
                length: len64(section.buf.len()).unwrap_or(u64::MAX),
            })?;
            self.out.write(&section.buf)?;
            self.out.pad_to(8)?;
            (offset, length)
        } else {
            (0, 0)
        };

        let index_offset = self.out.pos;
        let mut order: Vec<&IndexEntry> = self.entries.iter().collect();
        if self.options.sorted_index {
            order.sort_by(|a, b| a.name.cmp(&b.name));
        }
        let mut index = Enc::new();
        index.u64(self.options.raw.index_entry_count.unwrap_or(count));
        for entry in order {
            let name_len = u16::try_from(entry.name.len()).map_err(|_| Error::overflow("name_length"))?;
            index.u16(name_len);
            index.bytes(&entry.name);
            index.u64(entry.descriptor_offset);
            index.u32(entry.descriptor_length);
            index.u64(entry.data_offset);
            index.u64(entry.data_length);
            index.u32(entry.flags);
        }
        let raw = &self.options.raw;
        let crc = if raw.omit_index_crc {
            0
        } else {
            crc32c::crc32c(&index.buf)
        };
        let crc = raw.index_crc32c.unwrap_or(crc);
        let mut trailer = Enc::new();
        trailer.u64(raw.trailer_index_offset.unwrap_or(index_offset));
        trailer.u64(raw.trailer_index_length.unwrap_or(len64(index.buf.len())?));
        trailer.u64(raw.trailer_kv_offset.unwrap_or(kv_offset));
        trailer.u32(raw.trailer_kv_length.unwrap_or(kv_length));
        trailer.u32(crc);
        trailer.bytes(&raw.trailer_reserved.unwrap_or([0; 4]));
        trailer.bytes(&raw.trailer_magic.unwrap_or(TRAILER_MAGIC));
        self.out.write(&index.buf)?;
        self.out.write(&trailer.buf)
    }
}

/// Index field overrides of the unchecked path.
#[derive(Debug, Default)]
struct Overrides {
    descriptor_length: Option<u32>,
    descriptor_offset: Option<u64>,
    data_offset: Option<u64>,
    data_length: Option<u64>,
    flags: u32,
}

fn check_name_length(what: &'static str, index: u64, name: &[u8]) -> Result<u16> {
    u16::try_from(name.len()).map_err(|_| Error::NameTooLong {
        what,
        index,
        length: len64(name.len()).unwrap_or(u64::MAX),
    })
}

fn chunk_len(left: u64) -> usize {
    usize::try_from(left).map_or(CHUNK_LEN, |l| l.min(CHUNK_LEN))
}

fn chunk_buf(chunk: &mut Vec<u8>, want: usize) -> &mut [u8] {
    if chunk.len() < want {
        chunk.resize(want, 0);
    }
    let len = chunk.len();
    chunk.get_mut(..want.min(len)).unwrap_or_default()
}

fn open_composite(head: u64, d: &TensorDescriptor, h: &crate::layout::CompositeHead) -> OpenComposite {
    OpenComposite {
        head,
        rule: h.composition_rule,
        shape: d.shape.clone(),
        element_type: d.element_type,
        member_count: h.member_count,
        written: 0,
        boxes: Vec::new(),
        unverifiable: false,
    }
}

/// The partition box a member contributes, if the head is a partition.
fn member_box(top: &OpenComposite, index: u64, d: &TensorDescriptor) -> Option<(u64, Vec<u64>, Vec<u64>)> {
    if top.rule != CompositionRule::Partition {
        return None;
    }
    d.shard
        .as_ref()
        .map(|s| (index, s.shard_offset.clone(), d.shape.clone()))
}

/// Per-member rules (`layouts/composite.md` § Validation › Per-member checks).
fn check_member(top: &OpenComposite, member: u64, d: &TensorDescriptor) -> Result<()> {
    const SHARD: &str = "layouts/composite.md § Members › Shard section";
    const TYPE: &str = "layouts/composite.md § Members › Element type across members";
    const ROLE: &str = "layouts/composite.md § Composite Member Section";
    let fail = |problem, rule| {
        Err(Error::CompositeMember {
            head: top.head,
            member,
            problem,
            rule,
        })
    };
    match top.rule {
        CompositionRule::Partition | CompositionRule::Overlay => {
            let Some(shard) = &d.shard else {
                return fail("partition and overlay members need a shard section", SHARD);
            };
            if shard.parent_shape != top.shape {
                return fail("shard parent_shape differs from the head's shape", SHARD);
            }
            if d.quantization.is_none() && d.element_type != top.element_type {
                return fail("member element type differs from the head's type_tag", TYPE);
            }
            if top.rule == CompositionRule::Overlay {
                let Some(section) = &d.composite_member else {
                    return fail("overlay members need a composite member section", ROLE);
                };
                if top.written == 0 {
                    if section.member_role != crate::sections::CompositeMember::BASE {
                        return fail("the first overlay member must have member_role base", ROLE);
                    }
                    if shard.shard_offset.iter().any(|&o| o != 0) || d.shape != top.shape {
                        return fail(
                            "the overlay base must span the head's whole index space",
                            "layouts/composite.md § Composition Semantics › Overlay",
                        );
                    }
                } else if section.member_role != crate::sections::CompositeMember::CORRECTION {
                    return fail("overlay members after the first must have member_role correction", ROLE);
                }
            } else if d.composite_member.is_some() {
                return fail("partition members must not carry a composite member section", ROLE);
            }
        }
        CompositionRule::Group => {
            if d.composite_member.is_some() {
                return fail("group members must not carry a composite member section", ROLE);
            }
        }
        CompositionRule::Other(_) => {}
    }
    Ok(())
}

/// Close-time rules: a partition's members cover the head exactly.
fn close_check(c: &OpenComposite, extra: Option<&(u64, Vec<u64>, Vec<u64>)>) -> Result<()> {
    if c.rule != CompositionRule::Partition || c.unverifiable {
        return Ok(());
    }
    let boxes: Vec<&(u64, Vec<u64>, Vec<u64>)> = c.boxes.iter().chain(extra).collect();
    for (i, a) in boxes.iter().enumerate() {
        for b in boxes.iter().skip(i.saturating_add(1)) {
            if boxes_overlap(a, b) {
                return Err(Error::PartitionOverlap {
                    head: c.head,
                    first: a.0,
                    second: b.0,
                });
            }
        }
    }
    let volume = |shape: &[u64]| shape.iter().try_fold(1u128, |acc, &s| acc.checked_mul(u128::from(s)));
    let total = volume(&c.shape).ok_or(Error::overflow("composite volume"))?;
    let covered = boxes
        .iter()
        .try_fold(0u128, |acc, b| volume(&b.2).and_then(|v| acc.checked_add(v)))
        .ok_or(Error::overflow("composite volume"))?;
    if covered != total {
        return Err(Error::PartitionGap {
            head: c.head,
            covered,
            total,
        });
    }
    Ok(())
}

fn boxes_overlap(a: &(u64, Vec<u64>, Vec<u64>), b: &(u64, Vec<u64>, Vec<u64>)) -> bool {
    // Empty boxes overlap nothing.
    if a.2.contains(&0) || b.2.contains(&0) {
        return false;
    }
    a.1.iter()
        .zip(&a.2)
        .zip(b.1.iter().zip(&b.2))
        .all(|((&ao, &asz), (&bo, &bsz))| {
            let a_end = u128::from(ao).saturating_add(u128::from(asz));
            let b_end = u128::from(bo).saturating_add(u128::from(bsz));
            u128::from(ao) < b_end && u128::from(bo) < a_end
        })
}
