//! Where each region lies (`file-format.md` § Tensor Data Area, §
//! Alignment and Padding): descriptors and data inside the tensor area, data
//! on `data_buffer_alignment` boundaries after their descriptor, no two
//! regions overlapping and, in strict mode, the regions in file order with
//! only the allowed padding between them. Read from the index alone.

use super::{EntryField, HurrayFile, IndexEntry, TRAILER_LEN};
use crate::cursor::{align_up, to_u64};
use crate::error::{rule, Error, Field, Location, Result, Scope};

impl<'data> HurrayFile<'data> {
    /// Checks every region's placement, from the index alone: descriptors
    /// and data inside the tensor area, data on `data_buffer_alignment`
    /// boundaries right after their descriptor, and (strict) regions in file
    /// order with only the allowed padding between them.
    pub(super) fn check_regions(&self) -> Result<()> {
        let lower = self.header.first_descriptor_offset.get();
        let upper = self.tensor_area_end();
        if lower > upper && !self.entries.is_empty() {
            // No descriptor can fit: blame the header, not the first entry.
            return Err(Error::Layout {
                at: Location {
                    scope: Scope::File,
                    field: Field::new("first_descriptor_offset"),
                    offset: 20,
                    rule: rule::TENSOR_REGION,
                },
                found: lower,
                expected: format!(
                    "at most {upper}, where the tensor region ends (the KV section or, without one, the index starts)"
                )
                .into(),
            });
        }
        let dba = self.data_buffer_alignment();
        for e in &self.entries {
            let scope = || Scope::tensor(e.name);
            let d = e.descriptor_offset();
            let d_end = d.checked_add(e.descriptor_length());
            if d % 8 != 0 {
                return Err(Error::Invalid {
                    at: Location {
                        scope: scope(),
                        field: Field::member("index_entry", to_u64(e.position), "descriptor_offset"),
                        offset: e.field_offset(EntryField::DescriptorOffset),
                        rule: rule::DESCRIPTOR_PLACEMENT,
                    },
                    value: d,
                    expected: "a multiple of 8",
                });
            }
            match d_end {
                Some(end) if d >= lower && end <= upper => {}
                _ => {
                    return Err(Error::OutOfRange {
                        at: Location {
                            scope: scope(),
                            field: Field::member("index_entry", to_u64(e.position), "descriptor_offset"),
                            offset: e.field_offset(EntryField::DescriptorOffset),
                            rule: rule::TENSOR_REGION,
                        },
                        start: d,
                        end: u128::from(d) + u128::from(e.descriptor_length()),
                        lower,
                        upper,
                    })
                }
            }
            let d_end = d_end.unwrap_or(u64::MAX);
            let data_start = e.data_offset();
            let data_end = data_start.checked_add(e.data_length());
            // No data bytes: the offset takes none from the regions after
            // (see `region_end`) and may be the boundary after the
            // descriptor even where the tensor area or the file ends before.
            let upper = if e.data_length() == 0 {
                align_up(d_end, dba).unwrap_or(u64::MAX).max(upper)
            } else {
                upper
            };
            if data_start > upper || data_start < lower {
                return Err(Error::OutOfRange {
                    at: Location {
                        scope: scope(),
                        field: Field::member("index_entry", to_u64(e.position), "data_offset"),
                        offset: e.field_offset(EntryField::DataOffset),
                        rule: rule::TENSOR_REGION,
                    },
                    start: data_start,
                    end: u128::from(data_start) + u128::from(e.data_length()),
                    lower,
                    upper,
                });
            }
            if data_end.is_none_or(|end| end > upper) {
                return Err(Error::OutOfRange {
                    at: Location {
                        scope: scope(),
                        field: Field::member("index_entry", to_u64(e.position), "data_length"),
                        offset: e.field_offset(EntryField::DataLength),
                        rule: rule::TENSOR_REGION,
                    },
                    start: data_start,
                    end: u128::from(data_start) + u128::from(e.data_length()),
                    lower,
                    upper,
                });
            }
            if d_end > data_start {
                return Err(Error::Layout {
                    at: Location {
                        scope: scope(),
                        field: Field::member("index_entry", to_u64(e.position), "descriptor_length"),
                        offset: e.field_offset(EntryField::DescriptorLength),
                        rule: rule::DATA_PLACEMENT,
                    },
                    found: e.descriptor_length(),
                    expected: format!(
                        "the descriptor to end by data_offset {data_start} (descriptor_offset {d} + descriptor_length <= data_offset)"
                    )
                    .into(),
                });
            }
            if e.data_length() > 0 && data_start % dba != 0 {
                return Err(Error::DataOffsetMisaligned {
                    at: Location {
                        scope: Scope::tensor(e.name),
                        field: Field::member("index_entry", to_u64(e.position), "data_offset"),
                        offset: e.field_offset(EntryField::DataOffset),
                        rule: rule::DATA_PLACEMENT,
                    },
                    data_offset: data_start,
                    alignment: dba,
                });
            }
            if self.options.is_strict() {
                self.check_data_placement(e, d_end)?;
            }
        }
        if self.options.is_strict() {
            self.check_order()
        } else {
            self.check_disjoint()
        }
    }

    /// Permissive mode's part of [`check_order`](Self::check_order): the
    /// tensors' regions (descriptor to data end) do not overlap, whatever
    /// the gaps between them. Not a rule the spec states for permissive
    /// reading, but index entries aliasing one region would have
    /// `validate` scan its data once per entry: a million entries at 38
    /// bytes each, a million scans.
    fn check_disjoint(&self) -> Result<()> {
        let mut previous_end: Option<u64> = None;
        for e in self.entries_in_file_order() {
            let start = e.descriptor_offset();
            if let Some(end) = previous_end.filter(|&end| start < end) {
                return Err(Error::Layout {
                    at: Location {
                        scope: Scope::tensor(e.name),
                        field: Field::member("index_entry", to_u64(e.position), "descriptor_offset"),
                        offset: e.field_offset(EntryField::DescriptorOffset),
                        rule: rule::LAYOUT_ORDER,
                    },
                    found: start,
                    expected: format!(
                        "at least {end}, where the previous tensor's region ends (regions never overlap, in either mode)"
                    )
                    .into(),
                });
            }
            previous_end = Some(e.region_end().max(start));
        }
        Ok(())
    }

    /// Data starts at the first `data_buffer_alignment` boundary after the
    /// descriptor. A tensor with no data bytes may also be a composite head,
    /// whose data offset the writer may leave unpadded.
    fn check_data_placement(&self, e: &IndexEntry<'data>, d_end: u64) -> Result<()> {
        let dba = self.data_buffer_alignment();
        let aligned = align_up(d_end, dba).unwrap_or(u64::MAX);
        let data_start = e.data_offset();
        let ok = data_start == aligned
            || (e.data_length() == 0 && (data_start == d_end || Some(data_start) == align_up(d_end, 8)));
        if ok {
            return Ok(());
        }
        Err(Error::Layout {
            at: Location {
                scope: Scope::tensor(e.name),
                field: Field::member("index_entry", to_u64(e.position), "data_offset"),
                offset: e.field_offset(EntryField::DataOffset),
                rule: rule::DATA_PLACEMENT,
            },
            found: data_start,
            expected: format!(
                "{aligned}, the first data_buffer_alignment ({dba}) boundary after the descriptor's end {d_end}"
            )
            .into(),
        })
    }

    /// Regions follow each other in file order — tensors (by descriptor
    /// offset), then the KV section, then the index, then the trailer — each
    /// starting where the previous one ends, padded to 8 bytes or to
    /// `data_buffer_alignment` (NOTES.md: both writers' paddings are accepted).
    fn check_order(&self) -> Result<()> {
        let dba = self.data_buffer_alignment();
        let first = self.header.first_descriptor_offset.get();
        // `previous_end` is None before the first region.
        let check = |previous_end: Option<u64>, start: u64, scope: Scope, field: Field, offset: u64| -> Result<()> {
            let ok = match previous_end {
                None => start == first,
                Some(end) => {
                    start == align_up(end, 8).unwrap_or(u64::MAX) || start == align_up(end, dba).unwrap_or(u64::MAX)
                }
            };
            if ok {
                return Ok(());
            }
            let expected = match previous_end {
                None => format!("first_descriptor_offset {first}"),
                Some(end) => format!(
                    "the previous region's end {end} padded to 8 ({}) or to data_buffer_alignment ({})",
                    align_up(end, 8).unwrap_or(u64::MAX),
                    align_up(end, dba).unwrap_or(u64::MAX)
                ),
            };
            Err(Error::Layout {
                at: Location {
                    scope,
                    field,
                    offset,
                    rule: rule::LAYOUT_ORDER,
                },
                found: start,
                expected: expected.into(),
            })
        };
        let mut previous_end: Option<u64> = None;
        for e in self.entries_in_file_order() {
            check(
                previous_end,
                e.descriptor_offset(),
                Scope::tensor(e.name),
                Field::member("index_entry", to_u64(e.position), "descriptor_offset"),
                e.field_offset(EntryField::DescriptorOffset),
            )?;
            previous_end = Some(e.region_end());
        }
        // With no tensors, the next section may start at the first descriptor offset.
        let mut previous_end = previous_end.unwrap_or(first);
        let trailer_offset = to_u64(self.data.len()).saturating_sub(TRAILER_LEN);
        if let Some((start, end)) = self.kv_range() {
            check(
                Some(previous_end),
                start,
                Scope::File,
                Field::new("kv_offset"),
                trailer_offset + 16,
            )?;
            previous_end = end;
        }
        let index_start = self.trailer.index_offset.get();
        check(
            Some(previous_end),
            index_start,
            Scope::File,
            Field::new("index_offset"),
            trailer_offset,
        )?;
        let index_end = index_start.saturating_add(self.trailer.index_length.get());
        if index_end != trailer_offset {
            return Err(Error::Layout {
                at: Location {
                    scope: Scope::File,
                    field: Field::new("index_length"),
                    offset: trailer_offset + 8,
                    rule: rule::LAYOUT_ORDER,
                },
                found: self.trailer.index_length.get(),
                expected: format!("the index to end where the trailer starts, at {trailer_offset}").into(),
            });
        }
        Ok(())
    }
}
