//! Resolving a tensor from its index entry ([`HurrayFile::tensor`]): parse
//! the descriptor, check the layout's rules ([`rules`](super::rules)),
//! place each buffer in the file, and for a composite head, resolve its
//! members.

use super::{rules, Tensor, MAX_COMPOSITE_DEPTH};
use crate::buffer::Buffer;
use crate::buffer_protocol::check_handles;
use crate::cursor::{align_up, to_u64};
use crate::descriptor::{self, Descriptor, QuantScheme};
use crate::error::{rule, Error, Field, Location, Result, Scope};
use crate::file::{EntryField, HurrayFile, IndexEntry};
use crate::layout::fields::{Layout, LayoutFields};
use crate::layout::plan::{Placed, Plan};
use crate::raw;

impl<'data> HurrayFile<'data> {
    /// Reads and checks the descriptor of the tensor called `name` and
    /// locates its buffers.
    ///
    /// Checks every rule that needs only the descriptor and the container
    /// (`metadata.md`, `buffer-protocol.md`, the layout's buffer table and
    /// sizes, quantization, shard, statistics, composite membership), but
    /// does not scan the data: the sparse views' `validate` does that.
    ///
    /// # Errors
    /// [`Error::NotFound`], or the first rule the descriptor breaks.
    pub fn tensor(&self, name: &str) -> Result<Tensor<'data>> {
        let entry = *self.entry(name).ok_or_else(|| Error::NotFound { name: name.into() })?;
        self.resolve(entry, 0)
    }

    /// Like [`tensor`](Self::tensor), by position in the footer index.
    ///
    /// # Errors
    /// [`Error::PositionNotFound`] past the last entry, else as `tensor`.
    pub fn tensor_at(&self, position: usize) -> Result<Tensor<'data>> {
        self.resolve(self.entry_at(position)?, 0)
    }

    /// The descriptor of the tensor at `position` in the footer index,
    /// parsed and checked on its own (metadata.md): its buffers
    /// are not located, nor checked against the layout. For tools that
    /// show what a descriptor says when [`tensor_at`](Self::tensor_at)
    /// rejects the tensor (a buffer of the wrong size, a statistics block
    /// that disagrees).
    ///
    /// # Errors
    /// [`Error::PositionNotFound`] past the last entry, else the first rule the
    /// descriptor itself breaks.
    pub fn descriptor_at(&self, position: usize) -> Result<Descriptor<'data>> {
        self.descriptor_of(self.entry_at(position)?)
    }

    /// The index entry at `position`, or [`Error::PositionNotFound`].
    fn entry_at(&self, position: usize) -> Result<IndexEntry<'data>> {
        self.entries()
            .get(position)
            .copied()
            .ok_or_else(|| Error::PositionNotFound {
                position: to_u64(position),
                count: to_u64(self.len()),
            })
    }

    fn descriptor_of(&self, entry: IndexEntry<'data>) -> Result<Descriptor<'data>> {
        let name = entry.name();
        let bytes = descriptor::descriptor_bytes(self.data(), entry.descriptor_offset(), entry.descriptor_length())
            .ok_or_else(|| Error::OutOfRange {
                at: Location {
                    scope: Scope::tensor(name),
                    field: Field::member("index_entry", to_u64(entry.position()), "descriptor_offset"),
                    offset: entry.field_offset(EntryField::DescriptorOffset),
                    rule: rule::TENSOR_REGION,
                },
                start: entry.descriptor_offset(),
                end: u128::from(entry.descriptor_offset()) + u128::from(entry.descriptor_length()),
                lower: 0,
                upper: to_u64(self.data().len()),
            })?;
        descriptor::parse::parse(entry, bytes, self.options())
    }

    fn resolve(&self, entry: IndexEntry<'data>, depth: usize) -> Result<Tensor<'data>> {
        self.resolve_parsed(entry, self.descriptor_of(entry)?, depth)
    }

    /// [`resolve`](Self::resolve) with `entry`'s descriptor already parsed
    /// (by [`descriptor_of`](Self::descriptor_of) or, recording its fields,
    /// by `dump_descriptor`).
    pub(crate) fn resolve_parsed(
        &self,
        entry: IndexEntry<'data>,
        descriptor: Descriptor<'data>,
        depth: usize,
    ) -> Result<Tensor<'data>> {
        let options = self.options();
        let name = entry.name();
        let mut tensor = Tensor {
            entry,
            descriptor,
            buffers: Vec::new(),
            options,
            not_viewable: None,
            members: Vec::new(),
            subtree_len: 0,
        };
        let Some(handles) = tensor.descriptor.buffers else {
            tensor.not_viewable = Some("its layout tag is not recognised (accepted in permissive mode); its data must not be interpreted (memory-layout.md § Layout Taxonomy)");
            return Ok(tensor);
        };
        check_handles(&tensor.descriptor, handles)?;
        // The layout's own rules (rank, buffer count and sizes) come before
        // the buffers are placed in the file, so that a wrong byte_size is
        // named as such, not as the buffer after it falling outside the
        // tensor's region; the one rule that reads a placed buffer comes
        // after (check_placed).
        let mut plans = rules::plan_buffers(&tensor.descriptor, options, handles)?;
        let (placed, spans) = place_buffers(self, &tensor.descriptor, &entry, handles)?;
        rules::check_placed(&tensor.descriptor, options, handles, &placed, &mut plans)?;
        check_data_length(name, &entry, spans)?;
        tensor.buffers = placed
            .iter()
            .zip(handles)
            .enumerate()
            .map(|(i, (p, handle))| {
                let plan = plans.get(i).copied().unwrap_or(Plan::unknown());
                Buffer {
                    tensor: name,
                    index: u8::try_from(i).unwrap_or(u8::MAX),
                    role: plan.role,
                    handle,
                    handle_offset: tensor.descriptor.handle_offset(i, 0),
                    file_offset: p.offset,
                    bytes: p.bytes,
                    element_type: plan.element_type,
                    len: plan.len,
                    element_start: plan.element_start,
                }
            })
            .collect();
        rules::check_shard(&tensor.descriptor)?;
        rules::check_statistics(&tensor.descriptor, options)?;
        if tensor.descriptor.element_type.is_none() {
            tensor.not_viewable = Some("its type tag is not recognised (accepted in permissive mode); its data must not be interpreted (element-types.md § Type Identifier Encoding)");
        } else if matches!(
            tensor.descriptor.quantization.map(|q| q.scheme),
            Some(QuantScheme::Unknown)
        ) {
            tensor.not_viewable = Some("its quantization scheme is not recognised (accepted in permissive mode); its data must not be dequantized (quantization.md § Descriptor Header)");
        } else if matches!(tensor.descriptor.layout, Layout::Extension(_)) {
            tensor.not_viewable = Some(
                "it uses an implementation-private layout (metadata.md § Layout-Specific Fields › Extension Layouts)",
            );
        } else if tensor.descriptor.layout == Layout::Composite {
            tensor.not_viewable = Some("it is a composite head, which owns no data: read its members");
            (tensor.members, tensor.subtree_len) = self.composite_members(&tensor, depth)?;
        }
        Ok(tensor)
    }

    /// The direct members of a composite head, checked per member and at
    /// close (`layouts/composite.md` § Validation), and how many index
    /// entries after the head its subtree spans.
    fn composite_members(&self, head: &Tensor<'data>, depth: usize) -> Result<(Vec<usize>, usize)> {
        let LayoutFields::Composite(fields) = head.descriptor.layout_fields else {
            return Ok((Vec::new(), 0));
        };
        let name = head.name();
        let head_offset = head.descriptor.offsets.layout_fields;
        if depth >= MAX_COMPOSITE_DEPTH {
            return Err(Error::Invalid {
                at: Location {
                    scope: Scope::tensor(name),
                    field: Field::new("layout_tag"),
                    offset: head.descriptor.offsets.descriptor + 15,
                    rule: rule::COMPOSITE_BINDING,
                },
                value: u64::from(head.descriptor.layout.tag()),
                expected:
                    "a layout other than composite (0x0B) here: heads nest at most 8 deep, this one would be the 9th",
            });
        }
        crate::layout::composite::check_head(head, fields)?;
        let member_count = u64::from(fields.member_count.get());
        let following = self.following(head.entry.position());
        let mut members = Vec::new();
        let mut members_tensors = Vec::new();
        let mut cursor = 0usize;
        for _ in 0..member_count {
            let Some(entry) = following.get(cursor).and_then(|&i| self.entries().get(i)).copied() else {
                return Err(Error::TornComposite {
                    at: Location {
                        scope: Scope::tensor(name),
                        field: Field::new("member_count"),
                        offset: head_offset + 4,
                        rule: rule::TORN_COMPOSITE,
                    },
                    member_count,
                    found: to_u64(members.len()),
                });
            };
            let member = self.resolve(entry, depth.saturating_add(1)).map_err(|e| match e {
                // A torn nested composite tears this one too.
                Error::TornComposite { .. } => Error::TornComposite {
                    at: Location {
                        scope: Scope::tensor(name),
                        field: Field::new("member_count"),
                        offset: head_offset + 4,
                        rule: rule::TORN_COMPOSITE,
                    },
                    member_count,
                    found: to_u64(members.len()),
                },
                other => other,
            })?;
            cursor = cursor.saturating_add(1).saturating_add(member.subtree_len);
            members.push(entry.position());
            members_tensors.push(member);
        }
        crate::layout::composite::check_members(head, fields, &members_tensors)?;
        Ok((members, cursor))
    }
}

/// Locates each buffer: buffer 0 at `data_offset`, each next one at the
/// first `data_buffer_alignment` boundary after the previous one's end (an
/// empty buffer takes no space). Checks that the buffers lie in the data
/// region and start at their declared alignment; returns them with their
/// [`Spans`] (see [`check_data_length`]).
fn place_buffers<'data>(
    file: &HurrayFile<'data>,
    d: &Descriptor<'data>,
    entry: &IndexEntry<'data>,
    handles: &'data [raw::BufferHandle],
) -> Result<(Vec<Placed<'data>>, Spans)> {
    let scope = || Scope::tensor(d.name);
    let dba = file.data_buffer_alignment();
    let data_start = entry.data_offset();
    let data_end = entry.data_end();
    if !handles.is_empty() && !data_start.is_multiple_of(dba) {
        return Err(Error::DataOffsetMisaligned {
            at: Location {
                scope: Scope::tensor(d.name),
                field: Field::member("index_entry", to_u64(entry.position()), "data_offset"),
                offset: entry.field_offset(EntryField::DataOffset),
                rule: rule::DATA_PLACEMENT,
            },
            data_offset: data_start,
            alignment: dba,
        });
    }
    let mut placed = Vec::with_capacity(handles.len());
    let mut at = data_start;
    let mut last_end = data_start;
    let mut max_nonempty_end = data_start;
    for (i, h) in handles.iter().enumerate() {
        if i > 0 {
            at = align_up(last_end, dba).unwrap_or(u64::MAX);
        }
        let size = h.byte_size.get();
        let end = at.checked_add(size);
        // An empty buffer may sit at a data offset past the file's end
        // (`IndexEntry::region_end`): its bytes are the empty slice at the
        // file's start, which is aligned for any typed view.
        let bytes = end.filter(|&end| end <= data_end).and_then(|end| match size {
            0 => file.data().get(..0),
            _ => descriptor::descriptor_bytes(file.data(), at, end - at),
        });
        let Some(bytes) = bytes else {
            return Err(Error::OutOfRange {
                at: Location {
                    scope: scope(),
                    field: Field::member("buffer", to_u64(i), "byte_size"),
                    offset: d.handle_offset(i, 0),
                    rule: rule::DATA_REGION,
                },
                start: at,
                end: u128::from(at) + u128::from(size),
                lower: data_start,
                upper: data_end,
            });
        };
        let alignment = u64::from(h.alignment.get());
        if size > 0 && !at.is_multiple_of(alignment) {
            return Err(Error::AlignmentNotDelivered {
                at: Location {
                    scope: Scope::tensor(d.name),
                    field: Field::member("buffer", u64::from(u8::try_from(i).unwrap_or(u8::MAX)), "alignment"),
                    offset: d.handle_offset(i, 8),
                    rule: rule::ALIGNMENT_DELIVERED,
                },
                alignment,
                file_offset: at,
            });
        }
        last_end = at.saturating_add(size);
        if size > 0 {
            max_nonempty_end = last_end;
        }
        placed.push(Placed { offset: at, bytes });
    }
    let spans = Spans {
        all: last_end - data_start,
        nonempty: max_nonempty_end - data_start,
    };
    Ok((placed, spans))
}

/// Bytes from `data_offset` to the end of the last buffer, and of the last
/// non-empty one: what `data_length` may say.
#[derive(Debug, Clone, Copy)]
struct Spans {
    all: u64,
    nonempty: u64,
}

/// `data_length` equals the buffers' span. Checked after the layout's
/// buffer sizes, so that a wrong `byte_size` is reported as such rather
/// than as an index that disagrees with it.
fn check_data_length(name: &str, entry: &IndexEntry<'_>, spans: Spans) -> Result<()> {
    if entry.data_length() != spans.all && entry.data_length() != spans.nonempty {
        return Err(Error::DataLengthMismatch {
            at: Location {
                scope: Scope::tensor(name),
                field: Field::member("index_entry", to_u64(entry.position()), "data_length"),
                offset: entry.field_offset(EntryField::DataLength),
                rule: rule::DATA_LENGTH,
            },
            index_value: entry.data_length(),
            expected: spans.all,
        });
    }
    Ok(())
}
