//! A model tensor: row-major dense (`layouts/row-major.md`) or CSC
//! (`layouts/csc.md`), with its optional descriptor sections
//! (`metadata.md`), buffer handles (`buffer-protocol.md`) and paddings.

use hurray_reader::Value;

use super::super::basics::{dot, row_major_strides};
use super::element::Dt;

#[derive(Debug, Clone)]
pub(crate) enum Body {
    /// Row-major: buffer 0 is `byte_offset` bytes (any content) then the
    /// elements, last dimension fastest (`layouts/row-major.md`).
    Dense {
        shape: Vec<u64>,
        byte_offset: u64,
        buf: Vec<u8>,
    },
    /// CSC: stored cells `(row, col, value bytes)` in column-major order.
    Csc {
        nrows: u64,
        ncols: u64,
        cells: Vec<(u64, u64, Vec<u8>)>,
    },
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Quant {
    pub(crate) scale: f32,
    pub(crate) zero_point: i32,
    /// Trailing padding inside `quantization_length` (quantization.md §
    /// Descriptor Header allows it).
    pub(crate) pad: usize,
}

/// The 72-byte statistics block, field by field.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stats {
    pub(crate) mask: u32,
    pub(crate) nnz: u64,
    pub(crate) f: [f64; 6],
    pub(crate) nm: (u8, u8),
    pub(crate) nan_inf: (u8, u8),
}

#[derive(Debug, Clone)]
pub(crate) struct MTensor {
    pub(crate) name: String,
    pub(crate) dt: Dt,
    pub(crate) version_minor: u8,
    /// Bytes after the last section (a newer minor version's fields).
    pub(crate) trailing: Vec<u8>,
    pub(crate) body: Body,
    pub(crate) quant: Option<Quant>,
    /// `(parent_shape, shard_offset)`.
    pub(crate) shard: Option<(Vec<u64>, Vec<u64>)>,
    pub(crate) stats: Option<Stats>,
    /// `(device_tag, sync_mode, memory_class)`, the same for every buffer.
    pub(crate) device: (u8, u8, u8),
    /// Declared `alignment` per buffer.
    pub(crate) aligns: Vec<u32>,
    /// Bytes appended to each buffer beyond what the layout needs (only
    /// mutations set them).
    pub(crate) extra: Vec<Vec<u8>>,
    /// Pad to `data_buffer_alignment` (then 8) after the last buffer,
    /// instead of to 8 only (NOTES.md accepts both).
    pub(crate) pad_to_dba: bool,
    /// When every buffer is empty: no padding to `data_buffer_alignment`
    /// after the descriptor, `data_offset` still on the boundary there
    /// (NOTES.md 'Padding after a descriptor whose tensor is empty').
    pub(crate) empty_unpadded: bool,
}

impl MTensor {
    pub(crate) fn rank(&self) -> usize {
        match &self.body {
            Body::Dense { shape, .. } => shape.len(),
            Body::Csc { .. } => 2,
        }
    }

    pub(crate) fn shape(&self) -> Vec<u64> {
        match &self.body {
            Body::Dense { shape, .. } => shape.clone(),
            Body::Csc { nrows, ncols, .. } => vec![*nrows, *ncols],
        }
    }

    pub(crate) fn nnz(&self) -> Option<u64> {
        match &self.body {
            Body::Dense { .. } => None,
            Body::Csc { cells, .. } => Some(cells.len() as u64),
        }
    }

    pub(crate) fn layout_tag(&self) -> u8 {
        match self.body {
            Body::Dense { .. } => 0x01,
            Body::Csc { .. } => 0x08,
        }
    }

    pub(crate) fn byte_offset(&self) -> u64 {
        match &self.body {
            Body::Dense { byte_offset, .. } => *byte_offset,
            Body::Csc { .. } => 0,
        }
    }

    /// `col_ptr` of a CSC tensor (`layouts/csc.md` § Buffer Table).
    pub(crate) fn col_ptr(&self) -> Vec<u64> {
        let Body::Csc { ncols, cells, .. } = &self.body else {
            return Vec::new();
        };
        let mut ptr = vec![0u64; *ncols as usize + 1];
        for &(_, c, _) in cells {
            ptr[c as usize + 1] += 1;
        }
        for j in 0..*ncols as usize {
            ptr[j + 1] += ptr[j];
        }
        ptr
    }

    /// The buffers' bytes, in buffer-table order.
    pub(crate) fn buffers(&self) -> Vec<Vec<u8>> {
        let mut out = match &self.body {
            Body::Dense { buf, .. } => vec![buf.clone()],
            Body::Csc { cells, .. } => {
                let values = cells.iter().flat_map(|(_, _, v)| v.clone()).collect();
                let rows = cells.iter().flat_map(|(r, _, _)| r.to_le_bytes()).collect();
                let ptr = self.col_ptr().iter().flat_map(|p| p.to_le_bytes()).collect();
                vec![values, rows, ptr]
            }
        };
        for (b, e) in out.iter_mut().zip(&self.extra) {
            b.extend_from_slice(e);
        }
        out
    }

    pub(crate) fn flags(&self) -> u32 {
        let mut f = 0;
        if self.quant.is_some() {
            f |= 1;
        }
        if self.shard.is_some() {
            f |= 2;
        }
        if matches!(self.dt, Dt::Ext(_)) {
            f |= 4;
        }
        if self.stats.is_some() {
            f |= 8;
        }
        f
    }

    /// The model's value at a logical index.
    pub(crate) fn value(&self, index: &[u64]) -> Option<Value> {
        let w = self.dt.width() as u64;
        match &self.body {
            Body::Dense {
                shape,
                byte_offset,
                buf,
            } => {
                let strides = row_major_strides(shape);
                let linear = dot(index, &strides) as u64;
                let at = (byte_offset + linear * w) as usize;
                Some(self.dt.decode(&buf[at..at + w as usize]))
            }
            Body::Csc { cells, .. } => cells
                .iter()
                .find(|(r, c, _)| *r == index[0] && *c == index[1])
                .map(|(_, _, v)| self.dt.decode(v)),
        }
    }
}
