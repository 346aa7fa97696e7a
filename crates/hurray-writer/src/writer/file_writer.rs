//! [`FileWriter`]: places each tensor as the Writer Protocol describes
//! (`file-format.md` § Writer Protocol) and ends the file.

use std::collections::HashMap;

use crate::data::BufferData;
use crate::descriptor::TensorDescriptor;
use crate::error::{Error, Result};
use crate::kv::KvValue;
use crate::num::{add, len64, Enc};
use crate::sink::Sink;

use zerocopy::IntoBytes;

use super::composite::Composites;
use super::container;
use super::entry::{check_name_length, IndexEntry, Overrides, RawTensor};
use super::options::{WriterOptions, HAS_INDEX_CRC32C, HAS_KV_METADATA, HEADER_LEN, SORTED_INDEX};
use super::out::Out;

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
    composites: Composites,
    poisoned: bool,
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
            out: Out::new(sink),
            alignment: u64::from(a),
            options,
            header_written: false,
            kv_flag: false,
            entries: Vec::new(),
            names: HashMap::new(),
            kv: Enc::new(),
            kv_count: 0,
            kv_keys: HashMap::new(),
            composites: Composites::default(),
            poisoned: false,
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
        let kv = self.options.kv_metadata || self.kv_count > 0;
        let header = container::header(&self.options, self.file_flags(kv));
        let first = self.options.first_descriptor_offset;
        self.emitting(|w| {
            w.out.write(header.as_bytes())?;
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
        self.composites.precheck(index, descriptor)?;
        let bytes = descriptor.encode()?;
        let pad = !descriptor.buffers.is_empty();
        self.ensure_header()?;
        let entry =
            self.emitting(|w| w.place(name.as_bytes().to_vec(), &bytes, sources, pad, &Overrides::default()))?;
        self.push_entry(entry)?;
        self.composites.advance(index, Some(descriptor));
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
        self.composites.advance(index, None);
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
            self.out.write_source(len64(i)?, src)?;
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

    /// Completes the file: KV section (if any), index, trailer; flushes the
    /// sink and returns it.
    ///
    /// # Errors
    /// [`Error::TornComposite`] when a composite head still waits for
    /// members, [`Error::TensorCountMismatch`] when a declared count differs,
    /// I/O errors.
    pub fn finish(mut self) -> Result<S> {
        self.check_usable()?;
        self.composites.check_closed()?;
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
            let (section, length) = container::kv_section(self.kv_count, &self.kv.buf)?;
            self.out.write(&section)?;
            self.out.pad_to(8)?;
            (offset, length)
        } else {
            (0, 0)
        };
        let index_offset = self.out.pos;
        let entry_count = self.options.raw.index_entry_count.unwrap_or(count);
        let index = container::index(&self.entries, self.options.sorted_index, entry_count)?;
        let trailer = container::trailer(&self.options, index_offset, &index, kv_offset, kv_length)?;
        self.out.write(&index)?;
        self.out.write(trailer.as_bytes())
    }
}
