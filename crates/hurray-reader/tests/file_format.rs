//! The container format against a byte-level model written from the spec
//! text alone, as property tests.
//!
//! Nothing here calls `hurray-writer` or the reader's internals: the model
//! below lays a file out byte by byte from `file-format.md` (64-byte header,
//! padding to `first_descriptor_offset`, tensor regions of descriptor →
//! padding → buffers on `data_buffer_alignment` boundaries → padding to 8 or
//! to `data_buffer_alignment`, the KV section, the footer index, the 40-byte
//! trailer with its CRC-32C), `metadata.md` (fixed header, shape,
//! `byte_offset`, layout-specific fields, buffer table, and the quantization,
//! shard, statistics and extension type sections), `buffer-protocol.md`
//! (16-byte handles with `device_tag`, `sync_mode`, `memory_class` as
//! NOTES.md decides), `layouts/row-major.md`, `layouts/csc.md` and
//! `quantization/per-tensor-affine.md`. Each case draws a few tensors
//! (row-major dense of eleven element types and of private extension types,
//! scalars and empty tensors included; CSC matrices), random UTF-8 names
//! (multi-byte characters, combining marks), random KV metadata of every
//! value type (arrays of every element type, empty strings, arrays and byte
//! sequences), and random container choices (alignment, first descriptor
//! offset, count hint, sorted index, CRC flag, `HAS_KV_METADATA` or not,
//! padding to 8 or to the alignment after a tensor, descriptor minor version
//! 1 with trailing bytes). The reader must expose exactly what the model
//! wrote: header and trailer fields, index entries, KV keys and values,
//! every descriptor field, every buffer's offset, size and handle, and every
//! element value.
//!
//! `every_mutation_is_rejected_with_its_error` then breaks one rule of the
//! spec at a time in each model file (the list is `mutations`, each with the
//! rule it breaks) and checks that strict mode rejects it with the exact
//! error variant naming the field, and what permissive mode does where the
//! project documents it (`Mode::Permissive`, NOTES.md). A few mutations
//! change something a reader must not depend on (the tensor count hint, a
//! newer container minor version, the KV flag): both modes accept them.
//!
//! The reader bug this file found (permissive mode accepted a CSC buffer
//! larger than `layouts/csc.md` lists) has a focused test in
//! `versioning.rs`, `oversized_sparse_buffers_are_rejected_in_both_modes`.
//!
//! Not modelled: the other layouts (their addressing has property tests of
//! its own: `dense_layouts.rs`, `sparse_layouts.rs`), packed element types,
//! quantization schemes other than per-tensor affine, composite tensors and
//! the composite member section (`layouts/composite.md`), and the
//! sequential-reader protocol.

#[path = "support/spec_model.rs"]
mod spec_model;

use std::collections::BTreeSet;

use hurray_reader::half::bf16;
use hurray_reader::{AlignedBytes, Error, HurrayFile, KvValue, MappedFile, Options, Value};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use spec_model::{all_indices, cases, fail, next, same};
use zerocopy::IntoBytes;

// ---------------------------------------------------------------------------
// A small deterministic generator (each tensor and KV entry from its seed)
// ---------------------------------------------------------------------------

struct Rng(u64);

impl Rng {
    fn u64(&mut self) -> u64 {
        next(&mut self.0)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.u64() % n
        }
    }
    fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }
    fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize].clone()
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.u64() as u8).collect()
    }
    /// 1-`max` characters: ASCII, two-, three- and four-byte UTF-8, a
    /// combining mark (no normalisation: `é` and `e` + U+0301 differ).
    fn text(&mut self, min: usize, max: usize) -> String {
        const CHARS: [&str; 14] = [
            "a", "Z", "0", ".", "_", "/", " ", "é", "ß", "中", "𝄞", "e\u{301}", "\u{7f}", "Ω",
        ];
        let n = min + self.below((max - min + 1) as u64) as usize;
        (0..n).map(|_| self.pick(&CHARS)).collect()
    }
}

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

// ---------------------------------------------------------------------------
// Element types (element-types.md; metadata.md § Extension Type Section)
// ---------------------------------------------------------------------------

/// The extension type section, field by field (20 bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Ext {
    tag: u8,
    bit_width: u32,
    is_float: u8,
    is_signed: u8,
    sign_bits: u8,
    exponent_bits: u8,
    mantissa_bits: u8,
    exponent_bias: u32,
    has_nan: u8,
    has_inf: u8,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Dt {
    F32,
    F64,
    Bf16,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    Ext(Ext),
}

const BUILT_IN: [Dt; 11] = [
    Dt::F32,
    Dt::F64,
    Dt::Bf16,
    Dt::I8,
    Dt::U8,
    Dt::I16,
    Dt::U16,
    Dt::I32,
    Dt::U32,
    Dt::I64,
    Dt::U64,
];

impl Dt {
    fn tag(self) -> u8 {
        match self {
            Dt::Bf16 => 0x02,
            Dt::F32 => 0x03,
            Dt::F64 => 0x04,
            Dt::I8 => 0x10,
            Dt::U8 => 0x11,
            Dt::I16 => 0x12,
            Dt::U16 => 0x13,
            Dt::I32 => 0x14,
            Dt::U32 => 0x15,
            Dt::I64 => 0x16,
            Dt::U64 => 0x17,
            Dt::Ext(e) => e.tag,
        }
    }

    /// Bytes per element.
    fn width(self) -> usize {
        match self {
            Dt::I8 | Dt::U8 => 1,
            Dt::Bf16 | Dt::I16 | Dt::U16 => 2,
            Dt::F32 | Dt::I32 | Dt::U32 => 4,
            Dt::F64 | Dt::I64 | Dt::U64 => 8,
            Dt::Ext(e) => (e.bit_width / 8) as usize,
        }
    }

    /// One element's little-endian bytes, decoded as the spec defines the type.
    fn decode(self, b: &[u8]) -> Value {
        let mut le = [0u8; 16];
        le[..b.len()].copy_from_slice(b);
        let u = u128::from_le_bytes(le);
        match self {
            Dt::F32 => Value::Float(f64::from(f32::from_bits(u as u32))),
            Dt::F64 => Value::Float(f64::from_bits(u as u64)),
            // bfloat16: the high half of a binary32.
            Dt::Bf16 => Value::Float(f64::from(f32::from_bits((u as u32) << 16))),
            Dt::I8 => Value::Int(i64::from(u as u8 as i8)),
            Dt::I16 => Value::Int(i64::from(u as u16 as i16)),
            Dt::I32 => Value::Int(i64::from(u as u32 as i32)),
            Dt::I64 => Value::Int(u as u64 as i64),
            Dt::U8 | Dt::U16 | Dt::U32 | Dt::U64 => Value::UInt(u as u64),
            // A private type: the reader hands out its raw bits.
            Dt::Ext(_) => Value::Bits(u),
        }
    }

    fn is_quantizable(self) -> bool {
        // quantization/per-tensor-affine.md § Valid Storage Types (whole-byte ones).
        matches!(self, Dt::I8 | Dt::U8 | Dt::I16 | Dt::U16 | Dt::I32 | Dt::U32)
    }

    fn range(self) -> (i64, i64) {
        match self {
            Dt::I8 => (-128, 127),
            Dt::U8 => (0, 255),
            Dt::I16 => (-32768, 32767),
            Dt::U16 => (0, 65535),
            Dt::I32 => (i64::from(i32::MIN), i64::from(i32::MAX)),
            _ => (0, i64::from(i32::MAX)),
        }
    }
}

/// Runs `$body` with `$T` the Rust element type of a built-in `Dt`
/// (`None` for extension types).
macro_rules! with_type {
    ($dt:expr, $T:ident => $body:expr) => {
        match $dt {
            Dt::F32 => {
                type $T = f32;
                Some($body)
            }
            Dt::F64 => {
                type $T = f64;
                Some($body)
            }
            Dt::Bf16 => {
                type $T = bf16;
                Some($body)
            }
            Dt::I8 => {
                type $T = i8;
                Some($body)
            }
            Dt::U8 => {
                type $T = u8;
                Some($body)
            }
            Dt::I16 => {
                type $T = i16;
                Some($body)
            }
            Dt::U16 => {
                type $T = u16;
                Some($body)
            }
            Dt::I32 => {
                type $T = i32;
                Some($body)
            }
            Dt::U32 => {
                type $T = u32;
                Some($body)
            }
            Dt::I64 => {
                type $T = i64;
                Some($body)
            }
            Dt::U64 => {
                type $T = u64;
                Some($body)
            }
            Dt::Ext(_) => None,
        }
    };
}

// ---------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Body {
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
struct Quant {
    scale: f32,
    zero_point: i32,
    /// Trailing padding inside `quantization_length` (quantization.md §
    /// Descriptor Header allows it).
    pad: usize,
}

/// The 72-byte statistics block, field by field.
#[derive(Debug, Clone, Copy)]
struct Stats {
    mask: u32,
    nnz: u64,
    f: [f64; 6],
    nm: (u8, u8),
    nan_inf: (u8, u8),
}

#[derive(Debug, Clone)]
struct MTensor {
    name: String,
    dt: Dt,
    version_minor: u8,
    /// Bytes after the last section (a newer minor version's fields).
    trailing: Vec<u8>,
    body: Body,
    quant: Option<Quant>,
    /// `(parent_shape, shard_offset)`.
    shard: Option<(Vec<u64>, Vec<u64>)>,
    stats: Option<Stats>,
    /// `(device_tag, sync_mode, memory_class)`, the same for every buffer.
    device: (u8, u8, u8),
    /// Declared `alignment` per buffer.
    aligns: Vec<u32>,
    /// Bytes appended to each buffer beyond what the layout needs (only
    /// mutations set them).
    extra: Vec<Vec<u8>>,
    /// Pad to `data_buffer_alignment` (then 8) after the last buffer,
    /// instead of to 8 only (NOTES.md accepts both).
    pad_to_dba: bool,
    /// When every buffer is empty: no padding to `data_buffer_alignment`
    /// after the descriptor, `data_offset` still on the boundary there
    /// (NOTES.md 'Padding after a descriptor whose tensor is empty').
    empty_unpadded: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Kv {
    Str(String),
    I64(i64),
    U64(u64),
    /// By bit pattern.
    F64(u64),
    Bool(bool),
    Bytes(Vec<u8>),
    /// Element tag (0x01-0x06) and elements.
    Array(u8, Vec<Kv>),
}

impl Kv {
    fn tag(&self) -> u8 {
        match self {
            Kv::Str(_) => 1,
            Kv::I64(_) => 2,
            Kv::U64(_) => 3,
            Kv::F64(_) => 4,
            Kv::Bool(_) => 5,
            Kv::Bytes(_) => 6,
            Kv::Array(..) => 7,
        }
    }
}

#[derive(Debug, Clone)]
struct MFile {
    container_minor: u8,
    flags: u32,
    dba: u32,
    first: u64,
    hint: u64,
    tensors: Vec<MTensor>,
    /// Index entries sorted by name bytes rather than in write order.
    index_sorted: bool,
    kv: Option<Vec<(String, Kv)>>,
    /// Bytes after the last KV entry / index entry (only mutations).
    kv_extra: Vec<u8>,
    index_extra: Vec<u8>,
}

const HAS_KV_METADATA: u32 = 1;
const SORTED_INDEX: u32 = 2;
const HAS_INDEX_CRC32C: u32 = 4;

impl MTensor {
    fn rank(&self) -> usize {
        match &self.body {
            Body::Dense { shape, .. } => shape.len(),
            Body::Csc { .. } => 2,
        }
    }

    fn shape(&self) -> Vec<u64> {
        match &self.body {
            Body::Dense { shape, .. } => shape.clone(),
            Body::Csc { nrows, ncols, .. } => vec![*nrows, *ncols],
        }
    }

    fn nnz(&self) -> Option<u64> {
        match &self.body {
            Body::Dense { .. } => None,
            Body::Csc { cells, .. } => Some(cells.len() as u64),
        }
    }

    fn layout_tag(&self) -> u8 {
        match self.body {
            Body::Dense { .. } => 0x01,
            Body::Csc { .. } => 0x08,
        }
    }

    fn byte_offset(&self) -> u64 {
        match &self.body {
            Body::Dense { byte_offset, .. } => *byte_offset,
            Body::Csc { .. } => 0,
        }
    }

    /// `col_ptr` of a CSC tensor (`layouts/csc.md` § Buffer Table).
    fn col_ptr(&self) -> Vec<u64> {
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
    fn buffers(&self) -> Vec<Vec<u8>> {
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

    fn flags(&self) -> u32 {
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
    fn value(&self, index: &[u64]) -> Option<Value> {
        let w = self.dt.width() as u64;
        match &self.body {
            Body::Dense {
                shape,
                byte_offset,
                buf,
            } => {
                let strides = spec_model::row_major_strides(shape);
                let linear = spec_model::dot(index, &strides) as u64;
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

// ---------------------------------------------------------------------------
// Generating valid models
// ---------------------------------------------------------------------------

/// A valid `(device_tag, sync_mode, memory_class)` (buffer-protocol.md §
/// Per-Device Validity; a CPU buffer is SYNC_PRODUCER_SYNCED).
fn device(g: &mut Rng) -> (u8, u8, u8) {
    if g.chance(2) {
        return (0, 0, g.pick(&[0, 1, 2]));
    }
    let device = 1 + g.below(8) as u8;
    let classes: &[u8] = match device {
        1 | 2 | 4 | 7 => &[0, 1, 2, 3],
        3 | 6 | 8 => &[0, 1, 2],
        _ => &[0], // WebGPU
    };
    (device, g.below(3) as u8, g.pick(classes))
}

fn ext_type(g: &mut Rng) -> Ext {
    let bit_width = g.pick(&[8u32, 16, 24, 32, 64, 128]);
    let float = g.chance(2);
    Ext {
        tag: 0xF0 + g.below(15) as u8,
        bit_width,
        is_float: u8::from(float),
        is_signed: if float { 0 } else { g.below(2) as u8 },
        sign_bits: if float { 1 } else { 0 },
        exponent_bits: if float { 5 } else { 0 },
        mantissa_bits: if float { (bit_width - 6).min(255) as u8 } else { 0 },
        exponent_bias: if float { 15 } else { 0 },
        has_nan: if float { g.below(2) as u8 } else { 0 },
        has_inf: if float { g.below(2) as u8 } else { 0 },
    }
}

fn stats(g: &mut Rng, t: &MTensor) -> Stats {
    let mask = g.below(64) as u32;
    let nnz = t.nnz().unwrap_or_else(|| g.below(100));
    let total: u64 = t.shape().iter().product();
    let sparsity = if total == 0 {
        0.0
    } else {
        1.0 - nnz as f64 / total as f64
    };
    let (a, b) = (g.below(1000) as f64 - 500.0, g.below(1000) as f64 - 500.0);
    let (min, max) = (a.min(b), a.max(b));
    let n = g.below(5) as u8;
    Stats {
        mask,
        nnz,
        f: [
            sparsity,
            min,
            max,
            min.abs().max(max.abs()),
            (min + max) / 2.0,
            (max - min) / 3.0,
        ],
        nm: (n, n + g.below(4) as u8),
        nan_inf: (g.below(2) as u8, g.below(2) as u8),
    }
}

fn tensor(seed: u64) -> MTensor {
    let g = &mut Rng(seed);
    let csc = g.chance(3);
    let dt = if !csc && g.chance(6) {
        Dt::Ext(ext_type(g))
    } else {
        g.pick(&BUILT_IN)
    };
    let w = dt.width() as u64;
    let body = if csc {
        let (nrows, ncols) = (g.below(7), g.below(7));
        let mut cells = Vec::new();
        for c in 0..ncols {
            for r in 0..nrows {
                if g.chance(3) {
                    cells.push((r, c, g.bytes(w as usize)));
                }
            }
        }
        Body::Csc { nrows, ncols, cells }
    } else {
        let rank = g.below(4) as usize;
        let shape: Vec<u64> = (0..rank)
            .map(|_| if g.chance(8) { 0 } else { 1 + g.below(5) })
            .collect();
        let n: u64 = shape.iter().product();
        // A multiple of the element's alignment (its width here).
        let byte_offset = if g.chance(2) { 0 } else { w * g.below(4) };
        Body::Dense {
            byte_offset,
            buf: g.bytes((byte_offset + n * w) as usize),
            shape,
        }
    };
    let mut t = MTensor {
        name: String::new(),
        dt,
        version_minor: 0,
        trailing: Vec::new(),
        body,
        quant: None,
        shard: None,
        stats: None,
        device: device(g),
        aligns: Vec::new(),
        extra: Vec::new(),
        pad_to_dba: g.chance(3),
        empty_unpadded: g.chance(2),
    };
    if !csc && dt.is_quantizable() && g.chance(2) {
        let (lo, hi) = dt.range();
        let scale = loop {
            let s = f32::from_bits(g.u64() as u32);
            if s.is_finite() && s != 0.0 {
                break s;
            }
        };
        t.quant = Some(Quant {
            scale,
            zero_point: (lo + g.below((hi - lo) as u64 + 1) as i64) as i32,
            pad: g.pick(&[0, 0, 4, 8]),
        });
    }
    if g.chance(3) {
        let shape = t.shape();
        let extra: Vec<u64> = shape.iter().map(|_| g.below(4)).collect();
        let parent = shape.iter().zip(&extra).map(|(s, e)| s + e).collect();
        let offset = extra.iter().map(|&e| g.below(e + 1)).collect();
        t.shard = Some((parent, offset));
    }
    if g.chance(3) {
        t.stats = Some(stats(g, &t));
    }
    if g.chance(5) {
        // A newer minor version's trailing fields: skipped by a 1.0 reader.
        t.version_minor = 1;
        let n = g.below(12) as usize;
        t.trailing = g.bytes(n);
    }
    let sizes: Vec<usize> = t.buffers().iter().map(Vec::len).collect();
    t.aligns = sizes
        .iter()
        .map(|&s| {
            if s == 0 && g.chance(2) {
                1 << g.below(13) // any power of two for an empty buffer
            } else {
                64 << g.below(7) // 64 ..= 4096, delivered by the 4096 grid
            }
        })
        .collect();
    t.extra = vec![Vec::new(); sizes.len()];
    t
}

fn kv_value(g: &mut Rng, tag: u8) -> Kv {
    match tag {
        1 => Kv::Str(if g.chance(5) { String::new() } else { g.text(1, 6) }),
        2 => Kv::I64(g.u64() as i64),
        3 => Kv::U64(g.u64()),
        4 => Kv::F64(if g.chance(4) {
            g.pick(&[
                f64::NAN.to_bits(),
                (-0.0f64).to_bits(),
                f64::INFINITY.to_bits(),
                0x7FF0_0000_0000_0001,
            ])
        } else {
            g.u64()
        }),
        5 => Kv::Bool(g.chance(2)),
        6 => {
            let n = g.below(6) as usize;
            Kv::Bytes(g.bytes(n))
        }
        _ => {
            let element = 1 + g.below(6) as u8;
            let n = g.below(4);
            Kv::Array(element, (0..n).map(|_| kv_value(g, element)).collect())
        }
    }
}

fn file_model(tensor_seeds: &[u64], kv_seeds: Option<&[u64]>, seed: u64) -> MFile {
    let g = &mut Rng(seed);
    let mut names = BTreeSet::new();
    let mut tensors = Vec::new();
    for &s in tensor_seeds {
        let mut t = tensor(s);
        let mut name = Rng(s ^ 0x5EED).text(1, 8);
        while !names.insert(name.clone()) {
            name.push('#');
        }
        t.name = name;
        tensors.push(t);
    }
    let kv = kv_seeds.map(|seeds| {
        let mut keys = BTreeSet::new();
        seeds
            .iter()
            .map(|&s| {
                let g = &mut Rng(s);
                let mut key = g.text(1, 6);
                while !keys.insert(key.clone()) {
                    key.push('~');
                }
                let tag = 1 + g.below(7) as u8;
                (key, kv_value(g, tag))
            })
            .collect()
    });
    let index_sorted = g.chance(2);
    let mut flags = 0;
    if index_sorted && g.chance(2) {
        flags |= SORTED_INDEX;
    }
    if !g.chance(4) {
        flags |= HAS_INDEX_CRC32C;
    }
    // NOTES.md 'HAS_KV_METADATA': the trailer decides; the flag is optional.
    if kv.is_some() && g.chance(2) {
        flags |= HAS_KV_METADATA;
    }
    let n = tensors.len() as u64;
    MFile {
        container_minor: 0,
        flags,
        dba: g.pick(&[4096, 4096, 8192]),
        first: 64 + 8 * g.pick(&[0, 0, 1, 3]),
        hint: if g.chance(2) { n } else { u64::MAX },
        tensors,
        index_sorted,
        kv,
        kv_extra: Vec::new(),
        index_extra: Vec::new(),
    }
}

// ---------------------------------------------------------------------------
// Encoding, byte by byte, recording where every field lies
// ---------------------------------------------------------------------------

/// Absolute positions of a descriptor's fields and of its data.
#[derive(Debug, Clone, Default)]
struct DescMap {
    start: u64,
    len: u64,
    shape: u64,
    byte_offset: u64,
    layout_fields: u64,
    buffer_count: u64,
    /// Offset of each handle.
    handles: Vec<u64>,
    /// The quantization payload (after `quantization_length`).
    quant: Option<u64>,
    shard: Option<u64>,
    stats: Option<u64>,
    ext: Option<u64>,
    /// Each buffer's `(offset, byte_size)`.
    buffers: Vec<(u64, u64)>,
    data_offset: u64,
    data_length: u64,
    /// Where the next region starts.
    region_end: u64,
}

#[derive(Debug, Clone, Copy)]
struct EntryMap {
    at: u64,
    tail: u64,
}

#[derive(Debug, Clone, Copy)]
struct KvMap {
    at: u64,
    key: u64,
    tag: u64,
    value: u64,
}

#[derive(Debug, Clone)]
struct Enc {
    bytes: Vec<u8>,
    /// Per tensor, in write order.
    desc: Vec<DescMap>,
    /// Tensor (write-order position) of each index entry.
    index_order: Vec<usize>,
    /// Per index entry.
    entries: Vec<EntryMap>,
    kv: Vec<KvMap>,
    kv_range: Option<(u64, u64)>,
    index_offset: u64,
    index_length: u64,
    trailer: u64,
}

fn put_u16(b: &mut Vec<u8>, v: u16) {
    b.extend_from_slice(&v.to_le_bytes());
}
fn put_u32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_le_bytes());
}
fn put_u64(b: &mut Vec<u8>, v: u64) {
    b.extend_from_slice(&v.to_le_bytes());
}
fn pad_to(b: &mut Vec<u8>, at: u64) {
    assert!(b.len() as u64 <= at);
    b.resize(at as usize, 0);
}

/// `metadata.md`: the descriptor of `t`, its field offsets relative to its
/// start.
fn descriptor(t: &MTensor) -> (Vec<u8>, DescMap) {
    let mut b = Vec::new();
    let mut m = DescMap::default();
    b.extend_from_slice(b"HRRY");
    b.push(1);
    b.push(t.version_minor);
    put_u32(&mut b, 0); // descriptor_length, patched below
    put_u32(&mut b, t.flags());
    b.push(t.dt.tag());
    b.push(t.layout_tag());
    put_u32(&mut b, t.rank() as u32);
    m.shape = b.len() as u64;
    for d in t.shape() {
        put_u64(&mut b, d);
    }
    m.byte_offset = b.len() as u64;
    put_u64(&mut b, t.byte_offset());
    m.layout_fields = b.len() as u64;
    if let Some(nnz) = t.nnz() {
        put_u64(&mut b, nnz); // nnz
        b.extend_from_slice(&[0; 8]); // _reserved
    }
    m.buffer_count = b.len() as u64;
    let buffers = t.buffers();
    b.push(buffers.len() as u8);
    let (device, sync, class) = t.device;
    for (buf, &align) in buffers.iter().zip(&t.aligns) {
        m.handles.push(b.len() as u64);
        put_u64(&mut b, buf.len() as u64);
        put_u32(&mut b, align);
        b.extend_from_slice(&[device, sync, class, 0]);
    }
    if let Some(q) = t.quant {
        put_u32(&mut b, 16 + q.pad as u32);
        m.quant = Some(b.len() as u64);
        b.extend_from_slice(&[0x01, 0x01, 0, 0]); // scheme_tag, scheme_version, flags
        b.extend_from_slice(&q.scale.to_le_bytes());
        b.extend_from_slice(&q.zero_point.to_le_bytes());
        b.extend_from_slice(&[0; 4]);
        b.resize(b.len() + q.pad, 0);
    }
    if let Some((parent, offset)) = &t.shard {
        m.shard = Some(b.len() as u64);
        parent.iter().chain(offset).for_each(|&v| put_u64(&mut b, v));
    }
    if let Some(s) = t.stats {
        m.stats = Some(b.len() as u64);
        put_u32(&mut b, s.mask);
        put_u32(&mut b, 0);
        put_u64(&mut b, s.nnz);
        s.f.iter().for_each(|v| put_u64(&mut b, v.to_bits()));
        b.extend_from_slice(&[s.nm.0, s.nm.1, s.nan_inf.0, s.nan_inf.1, 0, 0, 0, 0]);
    }
    if let Dt::Ext(e) = t.dt {
        m.ext = Some(b.len() as u64);
        put_u32(&mut b, e.bit_width);
        let packing = if e.bit_width >= 8 { 1 } else { (8 / e.bit_width) as u8 };
        b.extend_from_slice(&[
            packing,
            e.is_float,
            e.is_signed,
            e.sign_bits,
            e.exponent_bits,
            e.mantissa_bits,
            0,
            0,
        ]);
        put_u32(&mut b, e.exponent_bias);
        b.extend_from_slice(&[e.has_nan, e.has_inf, 0, 0]);
    }
    b.extend_from_slice(&t.trailing);
    let len = b.len() as u32;
    b[6..10].copy_from_slice(&len.to_le_bytes());
    m.len = u64::from(len);
    (b, m)
}

fn kv_payload(b: &mut Vec<u8>, v: &Kv) {
    match v {
        Kv::Str(s) => {
            put_u32(b, s.len() as u32);
            b.extend_from_slice(s.as_bytes());
        }
        Kv::I64(x) => b.extend_from_slice(&x.to_le_bytes()),
        Kv::U64(x) | Kv::F64(x) => put_u64(b, *x),
        Kv::Bool(x) => b.push(u8::from(*x)),
        Kv::Bytes(x) => {
            put_u32(b, x.len() as u32);
            b.extend_from_slice(x);
        }
        Kv::Array(tag, xs) => {
            b.push(*tag);
            put_u32(b, xs.len() as u32);
            xs.iter().for_each(|x| kv_payload(b, x));
        }
    }
}

/// `file-format.md` § File Layout, in write order.
fn encode(f: &MFile) -> Enc {
    let dba = u64::from(f.dba);
    let mut b = Vec::new();
    b.extend_from_slice(b"HRRYFILE");
    b.extend_from_slice(&[1, f.container_minor, 0, 0]);
    put_u32(&mut b, f.flags);
    put_u32(&mut b, f.dba);
    put_u64(&mut b, f.first);
    put_u64(&mut b, f.hint);
    b.extend_from_slice(&[0; 28]);
    assert_eq!(b.len(), 64);
    pad_to(&mut b, f.first);

    let mut desc = Vec::new();
    for t in &f.tensors {
        let start = b.len() as u64;
        assert_eq!(start % 8, 0);
        let (bytes, mut m) = descriptor(t);
        b.extend_from_slice(&bytes);
        for o in [
            &mut m.shape,
            &mut m.byte_offset,
            &mut m.layout_fields,
            &mut m.buffer_count,
        ] {
            *o += start;
        }
        m.handles.iter_mut().for_each(|h| *h += start);
        for o in [&mut m.quant, &mut m.shard, &mut m.stats, &mut m.ext]
            .into_iter()
            .flatten()
        {
            *o += start;
        }
        m.start = start;
        // § Data Buffer Placement: every buffer on a boundary.
        let data_offset = align_up(b.len() as u64, dba);
        let buffers = t.buffers();
        if t.empty_unpadded && buffers.iter().all(Vec::is_empty) {
            // Every buffer at `data_offset`, no byte written there.
            m.buffers = buffers.iter().map(|_| (data_offset, 0)).collect();
        } else {
            pad_to(&mut b, data_offset);
            for buf in buffers {
                let at = align_up(b.len() as u64, dba);
                pad_to(&mut b, at);
                m.buffers.push((b.len() as u64, buf.len() as u64));
                b.extend_from_slice(&buf);
            }
        }
        m.data_offset = data_offset;
        // NOTES.md 'data_length': to the last byte of the last buffer.
        m.data_length = (b.len() as u64).saturating_sub(data_offset);
        let mut end = b.len() as u64;
        if t.pad_to_dba {
            end = align_up(end, dba);
        }
        pad_to(&mut b, align_up(end, 8));
        m.region_end = b.len() as u64;
        desc.push(m);
    }

    let mut kv_map = Vec::new();
    let kv_range = f.kv.as_ref().map(|kv| {
        let start = b.len() as u64;
        put_u32(&mut b, kv.len() as u32);
        for (key, value) in kv {
            let at = b.len() as u64;
            put_u16(&mut b, key.len() as u16);
            let key_at = b.len() as u64;
            b.extend_from_slice(key.as_bytes());
            let tag = b.len() as u64;
            b.push(value.tag());
            kv_map.push(KvMap {
                at,
                key: key_at,
                tag,
                value: tag + 1,
            });
            kv_payload(&mut b, value);
        }
        b.extend_from_slice(&f.kv_extra);
        let end = b.len() as u64;
        pad_to(&mut b, align_up(end, 8));
        (start, end)
    });

    let mut index_order: Vec<usize> = (0..f.tensors.len()).collect();
    if f.index_sorted {
        index_order.sort_by(|&a, &b| f.tensors[a].name.as_bytes().cmp(f.tensors[b].name.as_bytes()));
    }
    let index_offset = b.len() as u64;
    put_u64(&mut b, index_order.len() as u64);
    let mut entries = Vec::new();
    for &i in &index_order {
        let (t, m) = (&f.tensors[i], &desc[i]);
        let at = b.len() as u64;
        put_u16(&mut b, t.name.len() as u16);
        b.extend_from_slice(t.name.as_bytes());
        let tail = b.len() as u64;
        put_u64(&mut b, m.start);
        put_u32(&mut b, m.len as u32);
        put_u64(&mut b, m.data_offset);
        put_u64(&mut b, m.data_length);
        put_u32(&mut b, 0);
        entries.push(EntryMap { at, tail });
    }
    b.extend_from_slice(&f.index_extra);
    let index_length = b.len() as u64 - index_offset;

    let trailer = b.len() as u64;
    put_u64(&mut b, index_offset);
    put_u64(&mut b, index_length);
    let (kv_offset, kv_length) = kv_range.map_or((0, 0), |(s, e)| (s, e - s));
    put_u64(&mut b, kv_offset);
    put_u32(&mut b, kv_length as u32);
    let crc = if f.flags & HAS_INDEX_CRC32C != 0 {
        crc32c::crc32c(&b[index_offset as usize..trailer as usize])
    } else {
        0
    };
    put_u32(&mut b, crc);
    b.extend_from_slice(&[0; 4]);
    b.extend_from_slice(b"HRRY");
    Enc {
        bytes: b,
        desc,
        index_order,
        entries,
        kv: kv_map,
        kv_range,
        index_offset,
        index_length,
        trailer,
    }
}

// ---------------------------------------------------------------------------
// What the reader must expose
// ---------------------------------------------------------------------------

fn kv_equal(model: &Kv, read: &KvValue<'_>) -> bool {
    match (model, read) {
        (Kv::Str(a), KvValue::String(b)) => a == b,
        (Kv::I64(a), KvValue::Int64(b)) => a == b,
        (Kv::U64(a), KvValue::Uint64(b)) => a == b,
        (Kv::F64(a), KvValue::Float64(b)) => *a == b.to_bits(),
        (Kv::Bool(a), KvValue::Bool(b)) => a == b,
        (Kv::Bytes(a), KvValue::Bytes(b)) => a == b,
        (Kv::Array(tag, xs), KvValue::Array(arr)) => {
            arr.element_type().tag() == *tag
                && arr.len() as usize == xs.len()
                && xs.iter().zip(arr.iter()).all(|(x, y)| kv_equal(x, &y))
                && arr.iter().count() == xs.len()
        }
        _ => false,
    }
}

macro_rules! check {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            return Err(fail(format!($($arg)*)));
        }
    };
}

fn eq<T: PartialEq + std::fmt::Debug>(what: &str, got: T, want: T) -> Result<(), TestCaseError> {
    check!(got == want, "{what}: reader {got:?}, model {want:?}");
    Ok(())
}

fn check_file(f: &MFile, enc: &Enc, file: &HurrayFile<'_>) -> Result<(), TestCaseError> {
    let h = file.header();
    eq("container_version", file.container_version(), (1, f.container_minor))?;
    eq("file_flags", file.file_flags(), f.flags)?;
    eq("data_buffer_alignment", file.data_buffer_alignment(), u64::from(f.dba))?;
    eq("first_descriptor_offset", h.first_descriptor_offset.get(), f.first)?;
    eq("tensor_count_hint", h.tensor_count_hint.get(), f.hint)?;
    let tr = file.trailer();
    eq("index_offset", tr.index_offset.get(), enc.index_offset)?;
    eq("index_length", tr.index_length.get(), enc.index_length)?;
    let (kv_offset, kv_length) = enc.kv_range.map_or((0, 0), |(s, e)| (s, e - s));
    eq("kv_offset", tr.kv_offset.get(), kv_offset)?;
    eq("kv_length", u64::from(tr.kv_length.get()), kv_length)?;
    let crc = if f.flags & HAS_INDEX_CRC32C != 0 {
        crc32c::crc32c(&enc.bytes[enc.index_offset as usize..enc.trailer as usize])
    } else {
        0
    };
    eq("index_crc32c", tr.index_crc32c.get(), crc)?;

    // The footer index, in index order, and the file order.
    eq("tensor count", file.len(), f.tensors.len())?;
    for (pos, (e, &i)) in file.entries().iter().zip(&enc.index_order).enumerate() {
        let (t, m) = (&f.tensors[i], &enc.desc[i]);
        eq("entry name", e.name(), t.name.as_str())?;
        eq("entry position", e.position(), pos)?;
        eq("entry offset", e.offset(), enc.entries[pos].at)?;
        eq("descriptor_offset", e.descriptor_offset(), m.start)?;
        eq("descriptor_length", e.descriptor_length(), m.len)?;
        eq("data_offset", e.data_offset(), m.data_offset)?;
        eq("data_length", e.data_length(), m.data_length)?;
        eq("entry flags", e.raw().flags.get(), 0)?;
        eq("lookup by name", file.entry(&t.name).map(|x| x.position()), Some(pos))?;
    }
    let file_order: Vec<&str> = file.entries_in_file_order().map(|e| e.name()).collect();
    let model_order: Vec<&str> = f.tensors.iter().map(|t| t.name.as_str()).collect();
    eq("file order", file_order, model_order)?;
    check!(file.entry("\u{0}absent").is_none(), "an absent name is found");
    check!(
        matches!(file.tensor("\u{0}absent"), Err(Error::NotFound { .. })),
        "an absent name is not NotFound"
    );

    // KV metadata, in file order.
    let kv = f.kv.as_deref().unwrap_or_default();
    eq("kv count", file.kv().len(), kv.len())?;
    for ((key, value), (entry, m)) in kv.iter().zip(file.kv().iter().zip(&enc.kv)) {
        eq("kv key", entry.key(), key.as_str())?;
        eq("kv entry offset", entry.offset(), m.at)?;
        check!(
            kv_equal(value, &entry.value()),
            "kv '{key}': reader {:?}, model {value:?}",
            entry.value()
        );
    }

    for (i, t) in f.tensors.iter().enumerate() {
        let pos = enc.index_order.iter().position(|&k| k == i).unwrap();
        check_tensor(t, &enc.desc[i], file, pos)?;
    }
    file.validate().map_err(|e| fail(format!("validate: {e}")))?;
    Ok(())
}

fn check_tensor(t: &MTensor, m: &DescMap, file: &HurrayFile<'_>, pos: usize) -> Result<(), TestCaseError> {
    let name = &t.name;
    let r = file.tensor(name).map_err(|e| fail(format!("tensor '{name}': {e}")))?;
    let by_pos = file
        .tensor_at(pos)
        .map_err(|e| fail(format!("tensor_at({pos}): {e}")))?;
    eq("tensor_at name", by_pos.name(), name.as_str())?;
    let d = r.descriptor();
    eq("descriptor bytes", d.bytes().len() as u64, m.len)?;
    eq("version", d.version(), (1, t.version_minor))?;
    eq("flags", d.flags(), t.flags())?;
    eq("type_tag", d.header().type_tag, t.dt.tag())?;
    eq("element type tag", r.element_type().map(|e| e.tag()), Some(t.dt.tag()))?;
    eq("layout_tag", r.layout().tag(), t.layout_tag())?;
    eq("rank", r.rank() as usize, t.rank())?;
    eq("shape", r.shape().collect::<Vec<_>>(), t.shape())?;
    eq("byte_offset", d.byte_offset(), t.byte_offset())?;
    eq("nnz", r.nnz(), t.nnz())?;
    let o = d.offsets();
    eq("offsets.descriptor", o.descriptor, m.start)?;
    eq("offsets.shape", o.shape, m.shape)?;
    eq("offsets.byte_offset", o.byte_offset, m.byte_offset)?;
    eq("offsets.layout_fields", o.layout_fields, m.layout_fields)?;
    eq("offsets.buffer_count", o.buffer_count, m.buffer_count)?;
    if let Some(s) = m.stats {
        eq("offsets.statistics", o.statistics, s)?;
    }
    if let Some(s) = m.ext {
        eq("offsets.extension_type", o.extension_type, s)?;
    }

    // Buffers: offsets, sizes, handles.
    let model = t.buffers();
    eq("buffer count", r.buffers().len(), model.len())?;
    for (k, (b, bytes)) in r.buffers().iter().zip(&model).enumerate() {
        eq("buffer index", usize::from(b.index()), k)?;
        eq("buffer file_offset", b.file_offset(), m.buffers[k].0)?;
        eq("buffer byte_size", b.byte_size(), bytes.len() as u64)?;
        eq("buffer alignment", b.alignment(), u64::from(t.aligns[k]))?;
        eq("buffer handle_offset", b.handle_offset(), m.handles[k])?;
        let h = b.handle();
        eq(
            "buffer handle",
            (h.device_tag, h.sync_mode, h.memory_class, h.reserved),
            {
                let (dv, s, c) = t.device;
                (dv, s, c, 0)
            },
        )?;
        check!(b.bytes() == &bytes[..], "buffer {k} bytes differ");
    }

    // Optional sections.
    match (d.quantization(), t.quant) {
        (None, None) => {}
        (Some(q), Some(mq)) => {
            eq("quantization offset", q.offset, m.quant.unwrap())?;
            eq("quantization payload", q.payload.len(), 16 + mq.pad)?;
            eq(
                "scheme",
                (q.header.scheme_tag, q.header.scheme_version, q.header.flags.get()),
                (1, 1, 0),
            )?;
            let hurray_reader::QuantScheme::PerTensorAffine(p) = q.scheme else {
                return Err(fail(format!("scheme {}", q.scheme.as_str())));
            };
            eq("scale", p.scale.get().to_bits(), mq.scale.to_bits())?;
            eq("zero_point", p.zero_point.get(), mq.zero_point)?;
        }
        (got, want) => return Err(fail(format!("quantization: reader {got:?}, model {want:?}"))),
    }
    match (d.shard(), &t.shard) {
        (None, None) => {}
        (Some(s), Some((parent, offset))) => {
            eq("shard offset", s.offset, m.shard.unwrap())?;
            eq(
                "parent_shape",
                s.parent_shape.iter().map(|v| v.get()).collect(),
                parent.clone(),
            )?;
            eq(
                "shard_offset",
                s.shard_offset.iter().map(|v| v.get()).collect(),
                offset.clone(),
            )?;
        }
        (got, want) => return Err(fail(format!("shard: reader {got:?}, model {want:?}"))),
    }
    match (d.statistics(), t.stats) {
        (None, None) => {}
        (Some(s), Some(ms)) => {
            let got = (s.computed_mask.get(), s.reserved.get(), s.nnz.get());
            eq("statistics", got, (ms.mask, 0, ms.nnz))?;
            let floats = [
                s.sparsity_ratio.get(),
                s.value_min.get(),
                s.value_max.get(),
                s.value_abs_max.get(),
                s.value_mean.get(),
                s.value_stddev.get(),
            ];
            eq("statistics floats", floats.map(f64::to_bits), ms.f.map(f64::to_bits))?;
            eq(
                "nm",
                (s.nm_n, s.nm_m, s.has_nan, s.has_inf),
                (ms.nm.0, ms.nm.1, ms.nan_inf.0, ms.nan_inf.1),
            )?;
            eq("sparsity_ratio_mismatch", r.sparsity_ratio_mismatch(), None)?;
        }
        (got, want) => return Err(fail(format!("statistics: reader {got:?}, model {want:?}"))),
    }
    match (d.extension_type(), t.dt) {
        (None, Dt::Ext(_)) => return Err(fail("no extension type section")),
        (Some(_), dt) if !matches!(dt, Dt::Ext(_)) => return Err(fail("an extension type section")),
        (Some(x), Dt::Ext(e)) => {
            eq("bit_width", x.bit_width.get(), e.bit_width)?;
            let got = (
                x.packing_factor,
                x.is_float,
                x.is_signed,
                x.sign_bits,
                x.exponent_bits,
                x.mantissa_bits,
            );
            eq(
                "extension fields",
                got,
                (
                    1,
                    e.is_float,
                    e.is_signed,
                    e.sign_bits,
                    e.exponent_bits,
                    e.mantissa_bits,
                ),
            )?;
            eq(
                "extension bias",
                (x.exponent_bias.get(), x.has_nan, x.has_inf),
                (e.exponent_bias, e.has_nan, e.has_inf),
            )?;
        }
        _ => {}
    }
    check!(d.composite_member().is_none(), "a composite member section");
    eq("not_viewable", r.not_viewable(), None)?;

    // Every element value.
    let shape = t.shape();
    let wants_bytes = |index: &[u64]| -> Option<Vec<u8>> {
        let w = t.dt.width();
        match &t.body {
            Body::Dense {
                shape,
                byte_offset,
                buf,
            } => {
                let linear = spec_model::dot(index, &spec_model::row_major_strides(shape)) as usize;
                let at = *byte_offset as usize + linear * w;
                Some(buf[at..at + w].to_vec())
            }
            Body::Csc { cells, .. } => cells
                .iter()
                .find(|(r, c, _)| *r == index[0] && *c == index[1])
                .map(|(_, _, v)| v.clone()),
        }
    };
    match &t.body {
        Body::Dense { .. } => {
            eq(
                "element_count",
                r.element_count().ok(),
                Some(shape.iter().product::<u64>()),
            )?;
            let indices = if shape.is_empty() {
                vec![vec![]]
            } else {
                all_indices(&shape)
            };
            for index in &indices {
                let got = r.dense_value(index).map_err(|e| fail(format!("dense_value: {e}")))?;
                let want = t.value(index).unwrap();
                check!(same(&got, &want), "'{name}'{index:?}: reader {got:?}, model {want:?}");
            }
            with_type!(t.dt, T => {
                let view = r.dense::<T>().map_err(|e| fail(format!("dense view: {e}")))?;
                for index in &indices {
                    let got = view.get(index).map_err(|e| fail(format!("dense get: {e}")))?;
                    check!(got.as_bytes() == &wants_bytes(index).unwrap()[..], "'{name}'{index:?}: typed view");
                }
                Ok::<(), TestCaseError>(())
            })
            .transpose()?;
        }
        Body::Csc { cells, .. } => {
            with_type!(t.dt, T => {
                let view = r.csc::<T>().map_err(|e| fail(format!("csc view: {e}")))?;
                eq("col_ptr", view.col_ptr().to_vec(), t.col_ptr())?;
                eq("row_indices", view.row_indices().to_vec(), cells.iter().map(|c| c.0).collect())?;
                let values: Vec<u8> = cells.iter().flat_map(|c| c.2.clone()).collect();
                check!(view.values().as_bytes() == &values[..], "'{name}': values differ");
                for index in all_indices(&shape) {
                    let got = view.get(index[0], index[1]).map_err(|e| fail(format!("csc get: {e}")))?;
                    eq("csc get", got.map(|v| v.as_bytes().to_vec()), wants_bytes(&index))?;
                }
                Ok::<(), TestCaseError>(())
            })
            .transpose()?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// The valid-file property
// ---------------------------------------------------------------------------

fn strategy() -> impl Strategy<Value = (Vec<u64>, Option<Vec<u64>>, u64)> {
    (
        vec(any::<u64>(), 0..5),
        proptest::option::of(vec(any::<u64>(), 0..6)),
        any::<u64>(),
    )
}

fn read_back(f: &MFile, enc: &Enc, mapped: bool) -> Result<(), TestCaseError> {
    let aligned = AlignedBytes::from_slice(&enc.bytes);
    for options in [Options::strict(), Options::permissive()] {
        let file = HurrayFile::parse(&aligned, options).map_err(|e| fail(format!("parse: {e}")))?;
        check_file(f, enc, &file)?;
    }
    if mapped {
        let dir = tempfile::tempdir().map_err(|e| fail(e.to_string()))?;
        let path = dir.path().join("model.hry");
        std::fs::write(&path, &enc.bytes).map_err(|e| fail(e.to_string()))?;
        let mapped = MappedFile::open(&path, Options::default()).map_err(|e| fail(format!("open: {e}")))?;
        check!(mapped.bytes() == &enc.bytes[..], "mapped bytes differ");
        let file = mapped.file().map_err(|e| fail(format!("mapped parse: {e}")))?;
        check_file(f, enc, &file)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn model_files_read_back_exactly((tensors, kv, seed) in strategy()) {
        let f = file_model(&tensors, kv.as_deref(), seed);
        let enc = encode(&f);
        read_back(&f, &enc, seed % 16 == 0)?;
    }
}

// ---------------------------------------------------------------------------
// Mutations: one broken rule each
// ---------------------------------------------------------------------------

/// What permissive mode does with a mutation strict mode rejects.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Perm {
    Rejects,
    Accepts,
}

#[derive(Debug)]
enum Outcome {
    /// Strict mode fails with this variant (by name) naming this field, in
    /// this tensor's scope when given.
    Rejects {
        variant: &'static str,
        field: String,
        tensor: Option<String>,
        permissive: Perm,
    },
    /// Both modes read the file.
    Accepts,
}

struct Mutation {
    rule: &'static str,
    bytes: Vec<u8>,
    outcome: Outcome,
}

fn set<const N: usize>(b: &mut [u8], at: u64, v: [u8; N]) {
    b[at as usize..at as usize + N].copy_from_slice(&v);
}

fn get_u32(b: &[u8], at: u64) -> u32 {
    u32::from_le_bytes(b[at as usize..at as usize + 4].try_into().unwrap())
}

struct Mutator<'a> {
    f: &'a MFile,
    enc: &'a Enc,
    out: Vec<Mutation>,
}

impl Mutator<'_> {
    /// The model file with `edit` applied to its bytes; the index CRC is
    /// recomputed (when the flag is set) so that only the intended rule
    /// breaks.
    fn patch(&self, edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut b = self.enc.bytes.clone();
        edit(&mut b);
        if get_u32(&b, 12) & HAS_INDEX_CRC32C != 0 {
            let crc = crc32c::crc32c(&b[self.enc.index_offset as usize..self.enc.trailer as usize]);
            set(&mut b, self.enc.trailer + 28, crc.to_le_bytes());
        }
        b
    }

    /// The model changed by `edit`, encoded again.
    fn model(&self, edit: impl FnOnce(&mut MFile)) -> Vec<u8> {
        let mut f = self.f.clone();
        edit(&mut f);
        encode(&f).bytes
    }

    fn rejects(
        &mut self,
        rule: &'static str,
        bytes: Vec<u8>,
        variant: &'static str,
        field: impl Into<String>,
        perm: Perm,
    ) {
        self.out.push(Mutation {
            rule,
            bytes,
            outcome: Outcome::Rejects {
                variant,
                field: field.into(),
                tensor: None,
                permissive: perm,
            },
        });
    }

    #[allow(clippy::too_many_arguments)]
    fn rejects_in(
        &mut self,
        rule: &'static str,
        bytes: Vec<u8>,
        variant: &'static str,
        field: impl Into<String>,
        tensor: &str,
        perm: Perm,
    ) {
        self.out.push(Mutation {
            rule,
            bytes,
            outcome: Outcome::Rejects {
                variant,
                field: field.into(),
                tensor: Some(tensor.to_string()),
                permissive: perm,
            },
        });
    }

    fn accepts(&mut self, rule: &'static str, bytes: Vec<u8>) {
        self.out.push(Mutation {
            rule,
            bytes,
            outcome: Outcome::Accepts,
        });
    }
}

/// Every mutation that applies to the model file, choices drawn from `g`.
fn mutations(f: &MFile, enc: &Enc, g: &mut Rng) -> Vec<Mutation> {
    use Perm::*;
    let mut m = Mutator {
        f,
        enc,
        out: Vec::new(),
    };
    let tr = enc.trailer;
    let dba = u64::from(f.dba);
    let has_crc = f.flags & HAS_INDEX_CRC32C != 0;

    // file-format.md § File Header.
    let b = m.patch(|b| b[g.below(8) as usize] ^= 0x20);
    m.rejects("header magic is HRRYFILE", b, "BadMagic", "magic", Rejects);
    let v = 2 + g.below(254) as u8;
    let b = m.patch(|b| b[8] = v);
    m.rejects(
        "container_version_major above the supported one",
        b,
        "UnsupportedVersion",
        "container_version_major",
        Rejects,
    );
    let at = 10 + g.below(2);
    let b = m.patch(|b| b[at as usize] = 1);
    m.rejects("header _reserved is zero", b, "Reserved", "_reserved", Rejects);
    let bit = 1u32 << (3 + g.below(29));
    let b = m.patch(|b| set(b, 12, (f.flags | bit).to_le_bytes()));
    m.rejects("reserved file flag bits are zero", b, "Reserved", "file_flags", Rejects);
    let v = g.pick(&[0u32, 2048, 6144, 4 << 20, 4097]);
    let b = m.patch(|b| set(b, 16, v.to_le_bytes()));
    m.rejects(
        "data_buffer_alignment is a power of two in [4096, 2 MiB]",
        b,
        "Invalid",
        "data_buffer_alignment",
        Rejects,
    );
    let v = g.pick(&[0u64, 56, f.first + 4]);
    let b = m.patch(|b| set(b, 20, v.to_le_bytes()));
    m.rejects(
        "first_descriptor_offset is 8-aligned and at least 64",
        b,
        "Invalid",
        "first_descriptor_offset",
        Rejects,
    );
    if !f.tensors.is_empty() {
        // Past where the tensor region ends (the KV section, else the index):
        // no descriptor fits, and the header field is named, not an entry.
        let end = enc.kv_range.map_or(enc.index_offset, |(start, _)| start);
        let v = (end + 8).next_multiple_of(8) + 8 * g.below(4);
        let b = m.patch(|b| set(b, 20, v.to_le_bytes()));
        m.rejects(
            "first_descriptor_offset lies within the tensor region",
            b,
            "Layout",
            "first_descriptor_offset",
            Rejects,
        );
    }
    let at = 36 + g.below(28);
    let b = m.patch(|b| b[at as usize] = 0x80);
    m.rejects("_reserved_header is zero", b, "Reserved", "_reserved_header", Rejects);

    // file-format.md § Trailer.
    let at = tr + 36 + g.below(4);
    let b = m.patch(|b| b[at as usize] = b'x');
    m.rejects("trailer_magic is HRRY", b, "BadMagic", "trailer_magic", Rejects);
    let b = m.patch(|b| b.push(0));
    m.rejects(
        "the trailer is the file's last 40 bytes",
        b,
        "BadMagic",
        "trailer_magic",
        Rejects,
    );
    let at = tr + 32 + g.below(4);
    let b = m.patch(|b| b[at as usize] = 1);
    m.rejects("trailer _reserved is zero", b, "Reserved", "trailer._reserved", Rejects);
    let mut b = enc.bytes.clone();
    if has_crc {
        b[tr as usize + 28 + g.below(4) as usize] ^= 1 << g.below(8);
        m.rejects(
            "HAS_INDEX_CRC32C: the CRC matches",
            b,
            "IndexCrcMismatch",
            "index_crc32c",
            Rejects,
        );
    } else {
        set(&mut b, tr + 28, (1 + g.below(u64::from(u32::MAX)) as u32).to_le_bytes());
        m.rejects(
            "index_crc32c is 0 when HAS_INDEX_CRC32C is clear",
            b,
            "Invalid",
            "index_crc32c",
            Rejects,
        );
    }
    let b = m.patch(|b| set(b, tr + 8, (enc.index_length + 8).to_le_bytes()));
    m.rejects(
        "the index ends before the trailer",
        b,
        "SectionRange",
        "index_offset",
        Rejects,
    );
    let b = m.patch(|b| set(b, tr + 8, g.below(8).to_le_bytes()));
    m.rejects(
        "the index holds index_entry_count",
        b,
        "Invalid",
        "index_length",
        Rejects,
    );
    let b = m.patch(|b| {
        set(b, tr, (enc.index_offset - 4).to_le_bytes());
        set(b, tr + 8, (enc.index_length + 4).to_le_bytes());
    });
    if enc.index_offset - 4 >= 64 {
        m.rejects("the index is 8-aligned", b, "Invalid", "index_offset", Rejects);
    } else {
        m.rejects(
            "the index lies after the header",
            b,
            "SectionRange",
            "index_offset",
            Rejects,
        );
    }
    match enc.kv_range {
        Some((start, end)) => {
            let b = m.patch(|b| set(b, tr + 16, (1u64 << 40).to_le_bytes()));
            m.rejects(
                "the KV section lies before the index",
                b,
                "SectionRange",
                "kv_offset",
                Rejects,
            );
            let b = m.patch(|b| {
                set(b, tr + 16, (start - 4).to_le_bytes());
                set(b, tr + 24, ((end - start + 4) as u32).to_le_bytes());
            });
            if start - 4 >= 64 {
                m.rejects("the KV section is 8-aligned", b, "Invalid", "kv_offset", Rejects);
            } else {
                m.rejects(
                    "the KV section lies after the header",
                    b,
                    "SectionRange",
                    "kv_offset",
                    Rejects,
                );
            }
        }
        None => {
            let b = m.patch(|b| set(b, 12, (f.flags | HAS_KV_METADATA).to_le_bytes()));
            m.rejects("HAS_KV_METADATA means a KV section", b, "Invalid", "kv_offset", Rejects);
            let b = m.patch(|b| set(b, tr + 24, 8u32.to_le_bytes()));
            m.rejects(
                "kv_offset is 0 only without a KV section",
                b,
                "SectionRange",
                "kv_offset",
                Rejects,
            );
        }
    }

    // file-format.md § Index Section.
    let b = m.patch(|b| set(b, enc.index_offset, (u64::MAX / 2).to_le_bytes()));
    m.rejects(
        "index_entry_count fits the index",
        b,
        "CountTooLarge",
        "index_entry_count",
        Rejects,
    );
    let b = m.model(|f| f.index_extra = vec![0; 8]);
    m.rejects(
        "nothing follows the last index entry",
        b,
        "TrailingBytes",
        "index",
        Accepts,
    );
    let minor = 1 + g.below(255) as u8;
    let b = m.model(|f| {
        f.index_extra = vec![0xA5; 8];
        f.container_minor = minor;
    });
    m.accepts(
        "a newer container minor version's content after the last index entry is skipped",
        b,
    );
    if !f.tensors.is_empty() {
        let p = g.below(f.tensors.len() as u64) as usize;
        let (e, i) = (enc.entries[p], enc.index_order[p]);
        let (t, d) = (&f.tensors[i], &enc.desc[i]);
        let name = t.name.as_str();
        let entry = |field: &str| format!("index_entry[{p}].{field}");
        let b = m.patch(|b| set(b, e.at, 0u16.to_le_bytes()));
        m.rejects("name_length is at least 1", b, "Invalid", entry("name_length"), Rejects);
        let b = m.patch(|b| b[e.at as usize + 2] = 0xFF);
        m.rejects("names are UTF-8", b, "InvalidUtf8", entry("name"), Rejects);
        let v = 1u32 << g.below(32);
        let b = m.patch(|b| set(b, e.tail + 28, v.to_le_bytes()));
        m.rejects_in(
            "index entry flags are zero",
            b,
            "Reserved",
            entry("flags"),
            name,
            Rejects,
        );
        let b = m.patch(|b| set(b, e.tail, (d.start + 4).to_le_bytes()));
        m.rejects_in(
            "descriptors are 8-aligned",
            b,
            "Invalid",
            entry("descriptor_offset"),
            name,
            Rejects,
        );
        let b = m.patch(|b| set(b, e.tail, (1u64 << 40).to_le_bytes()));
        m.rejects_in(
            "descriptors lie in the tensor region",
            b,
            "OutOfRange",
            entry("descriptor_offset"),
            name,
            Rejects,
        );
        // Not for an empty tensor without padding: a shorter region may
        // misplace the next one, which is reported first.
        if (d.start + d.len - 1) % dba != 0 && d.region_end >= d.data_offset {
            let b = m.patch(|b| set(b, e.tail + 8, (d.len as u32 - 1).to_le_bytes()));
            m.rejects_in(
                "the index's descriptor_length equals the descriptor's",
                b,
                "DescriptorLengthMismatch",
                entry("descriptor_length"),
                name,
                Rejects,
            );
        }
        if d.data_length > 0 && d.start + d.len + 8 <= d.data_offset {
            let b = m.patch(|b| set(b, e.tail + 12, (d.data_offset - 8).to_le_bytes()));
            m.rejects_in(
                "data starts on a data_buffer_alignment boundary",
                b,
                "DataOffsetMisaligned",
                entry("data_offset"),
                name,
                Rejects,
            );
        }
        // data_length covering the next region: an overlap.
        let b = m.patch(|b| set(b, e.tail + 20, (d.data_length + dba).to_le_bytes()));
        let area_end = enc.kv_range.map_or(enc.index_offset, |r| r.0);
        if d.data_offset > area_end {
            // An empty tensor's boundary past the tensor area: data there
            // starts outside it.
            m.rejects_in(
                "data lies in the tensor region",
                b,
                "OutOfRange",
                entry("data_offset"),
                name,
                Rejects,
            );
        } else if d.data_offset + d.data_length + dba > area_end {
            m.rejects_in(
                "data lies in the tensor region",
                b,
                "OutOfRange",
                entry("data_length"),
                name,
                Rejects,
            );
        } else if i + 1 < f.tensors.len() {
            let q = enc.index_order.iter().position(|&k| k == i + 1).unwrap();
            let next = &f.tensors[i + 1].name;
            let field = format!("index_entry[{q}].descriptor_offset");
            m.rejects_in("regions do not overlap", b, "Layout", field, next, Rejects);
        } else {
            let field = if enc.kv_range.is_some() {
                "kv_offset"
            } else {
                "index_offset"
            };
            m.rejects("regions do not overlap", b, "Layout", field, Rejects);
        }
        // The padding between a descriptor and its data (or, for an empty
        // tensor without it, the next region) is zero.
        let gap_end = d.data_offset.min(d.region_end);
        if d.start + d.len < gap_end {
            let at = d.start + d.len + g.below(gap_end - d.start - d.len);
            let b = m.patch(|b| b[at as usize] = 1 + g.below(255) as u8);
            m.rejects("padding bytes are zero", b, "Reserved", "padding", Accepts);
        }
    }
    if f.first > 64 {
        let at = 64 + g.below(f.first - 64);
        let b = m.patch(|b| b[at as usize] = 0xFF);
        m.rejects("padding bytes are zero", b, "Reserved", "padding", Accepts);
    }
    if f.tensors.len() >= 2 {
        // The entry of the second tensor in file order made to point at the
        // first one's region (its descriptor and data): two entries, one
        // region. Rejected in both modes: permissive reading allows gaps,
        // never overlaps (an aliased region would be scanned per entry).
        let (pa, pb) = (
            enc.index_order.iter().position(|&k| k == 0).unwrap(),
            enc.index_order.iter().position(|&k| k == 1).unwrap(),
        );
        let (from, to) = (enc.entries[pa].tail as usize, enc.entries[pb].tail as usize);
        let b = m.patch(|b| {
            let tail: Vec<u8> = b[from..from + 32].to_vec();
            b[to..to + 32].copy_from_slice(&tail);
        });
        // Of two entries at one offset, the later index position comes second.
        let q = pa.max(pb);
        let name = &f.tensors[enc.index_order[q]].name;
        let field = format!("index_entry[{q}].descriptor_offset");
        m.rejects_in("regions do not overlap", b, "Layout", field, name, Rejects);
    }
    if f.tensors.len() >= 2 {
        let i = g.below(f.tensors.len() as u64 - 1) as usize;
        let j = i + 1 + g.below((f.tensors.len() - i - 1) as u64) as usize;
        let b = m.model(|f| f.tensors[j].name = f.tensors[i].name.clone());
        // Equal names: the one at the later index position is the duplicate.
        let dup = {
            let mut f2 = f.clone();
            f2.tensors[j].name = f.tensors[i].name.clone();
            let e2 = encode(&f2);
            let pi2 = e2.index_order.iter().position(|&k| k == i).unwrap();
            let pj2 = e2.index_order.iter().position(|&k| k == j).unwrap();
            pi2.max(pj2)
        };
        m.rejects(
            "tensor names are unique",
            b,
            "DuplicateName",
            format!("index_entry[{dup}].name"),
            Rejects,
        );
        let names: Vec<&[u8]> = enc.index_order.iter().map(|&k| f.tensors[k].name.as_bytes()).collect();
        if let Some(p) = (1..names.len()).find(|&p| names[p - 1] >= names[p]) {
            let b = m.patch(|b| set(b, 12, (f.flags | SORTED_INDEX).to_le_bytes()));
            m.rejects(
                "SORTED_INDEX is set only when the index is sorted",
                b,
                "IndexNotSorted",
                format!("index_entry[{p}].name"),
                Rejects,
            );
        }
    }

    // file-format.md § KV Metadata Section, § KV Value Types.
    if let (Some(kv), Some((start, _))) = (&f.kv, enc.kv_range) {
        let b = m.model(|f| f.kv_extra = vec![0; 4]);
        m.rejects(
            "nothing follows the last KV entry",
            b,
            "TrailingBytes",
            "KV section",
            Accepts,
        );
        let minor = 1 + g.below(255) as u8;
        let b = m.model(|f| {
            f.kv_extra = vec![0xA5; 4];
            f.container_minor = minor;
        });
        m.accepts(
            "a newer container minor version's content after the last KV entry is skipped",
            b,
        );
        let b = m.patch(|b| set(b, start, u32::MAX.to_le_bytes()));
        m.rejects("kv_count fits the KV section", b, "CountTooLarge", "kv_count", Rejects);
        if !kv.is_empty() {
            let i = g.below(kv.len() as u64) as usize;
            let (e, entry) = (enc.kv[i], |field: &str| format!("kv_entry[{i}].{field}"));
            let b = m.patch(|b| set(b, e.at, 0u16.to_le_bytes()));
            m.rejects("key_length is at least 1", b, "Invalid", entry("key_length"), Rejects);
            let b = m.patch(|b| b[e.key as usize] = 0xFF);
            m.rejects("keys are UTF-8", b, "InvalidUtf8", entry("key"), Rejects);
            let tag = g.pick(&[0x00u8, 0x08, 0x42, 0xEF, 0xF0, 0xFE, 0xFF]);
            let b = m.patch(|b| b[e.tag as usize] = tag);
            m.rejects("value tags are 0x01-0x07", b, "UnknownTag", entry("value_tag"), Rejects);
            match &kv[i].1 {
                Kv::Bool(_) => {
                    let v = 2 + g.below(254) as u8;
                    let b = m.patch(|b| b[e.value as usize] = v);
                    m.rejects("a bool is 0x00 or 0x01", b, "Invalid", entry("bool value"), Rejects);
                }
                Kv::Array(..) => {
                    let b = m.patch(|b| b[e.value as usize] = 0x07);
                    m.rejects("arrays do not nest", b, "Invalid", entry("element_tag"), Rejects);
                    let tag = g.pick(&[0x00u8, 0x08, 0xFF]);
                    let b = m.patch(|b| b[e.value as usize] = tag);
                    m.rejects(
                        "array element tags are 0x01-0x06",
                        b,
                        "UnknownTag",
                        entry("element_tag"),
                        Rejects,
                    );
                }
                Kv::Str(s) => {
                    if !s.is_empty() {
                        let b = m.patch(|b| b[e.value as usize + 4] = 0xFF);
                        m.rejects("strings are UTF-8", b, "InvalidUtf8", entry("string bytes"), Rejects);
                    }
                    let b = m.patch(|b| set(b, e.value, u32::MAX.to_le_bytes()));
                    m.rejects(
                        "a string fits the KV section",
                        b,
                        "CountTooLarge",
                        entry("string length"),
                        Rejects,
                    );
                }
                _ => {}
            }
        }
        if kv.len() >= 2 {
            let i = g.below(kv.len() as u64 - 1) as usize;
            let j = i + 1 + g.below((kv.len() - i - 1) as u64) as usize;
            let b = m.model(|f| {
                let kv = f.kv.as_mut().unwrap();
                kv[j].0 = kv[i].0.clone();
            });
            m.rejects(
                "KV keys are unique",
                b,
                "DuplicateKey",
                format!("kv_entry[{j}].key"),
                Rejects,
            );
        }
    }

    // Things a reader must not depend on.
    let hint = g.u64();
    let b = m.patch(|b| set(b, 28, hint.to_le_bytes()));
    m.accepts("readers do not rely on tensor_count_hint", b);
    let minor = 1 + g.below(255) as u8;
    let b = m.patch(|b| b[9] = minor);
    m.accepts("a newer container minor version is read", b);

    if !f.tensors.is_empty() {
        let i = g.below(f.tensors.len() as u64) as usize;
        descriptor_mutations(&mut m, g, i);
    }
    m.out
}

/// metadata.md, buffer-protocol.md and the layouts, on tensor `i`.
fn descriptor_mutations(m: &mut Mutator<'_>, g: &mut Rng, i: usize) {
    use Perm::*;
    let (f, enc) = (m.f, m.enc);
    let (t, d) = (&f.tensors[i], &enc.desc[i]);
    let name = t.name.as_str();
    let p = enc.index_order.iter().position(|&k| k == i).unwrap();
    let e = enc.entries[p];
    let dba = u64::from(f.dba);
    let ext = matches!(t.dt, Dt::Ext(_));
    let w = t.dt.width() as u64;

    let at = d.start + g.below(4);
    let b = m.patch(|b| b[at as usize] ^= 0x01);
    m.rejects_in("descriptor magic is HRRY", b, "BadMagic", "magic", name, Rejects);
    let b = m.patch(|b| b[d.start as usize + 4] = 2 + g.below(254) as u8);
    m.rejects_in(
        "version_major above the supported one",
        b,
        "UnsupportedVersion",
        "version_major",
        name,
        Rejects,
    );
    // Only where the next region does not start right after the
    // descriptor (an empty tensor without padding): there a shorter
    // descriptor misplaces the next region, which is reported first.
    if (d.start + 16).div_ceil(dba) * dba == d.data_offset && d.region_end >= d.data_offset {
        let b = m.patch(|b| {
            set(b, d.start + 6, 16u32.to_le_bytes());
            set(b, e.tail + 8, 16u32.to_le_bytes());
        });
        m.rejects_in(
            "descriptor_length is at least 20",
            b,
            "Invalid",
            "descriptor_length",
            name,
            Rejects,
        );
    }
    let bit = 1u32 << (5 + g.below(27));
    let b = m.patch(|b| set(b, d.start + 10, (t.flags() | bit).to_le_bytes()));
    m.rejects_in(
        "reserved descriptor flag bits are zero",
        b,
        "Reserved",
        "flags",
        name,
        Rejects,
    );
    let b = m.patch(|b| set(b, d.start + 10, (t.flags() ^ 4).to_le_bytes()));
    m.rejects_in(
        "HAS_EXTENSION_TYPE iff a private type tag",
        b,
        "Invalid",
        "flags",
        name,
        Rejects,
    );
    if !ext {
        let tag = g.pick(&[0x00u8, 0xFF]);
        let b = m.patch(|b| b[d.start as usize + 14] = tag);
        m.rejects_in(
            "type tags 0x00 and 0xFF are invalid",
            b,
            "UnknownTag",
            "type_tag",
            name,
            Rejects,
        );
        if t.quant.is_none() {
            let tag = g.pick(&[0x05u8, 0x30, 0x47, 0x52, 0x7F, 0x80, 0xEF]);
            let b = m.patch(|b| b[d.start as usize + 14] = tag);
            m.rejects_in(
                "unknown type tags (permissive: kept, not interpreted)",
                b,
                "UnknownTag",
                "type_tag",
                name,
                Accepts,
            );
        }
    }
    let tag = g.pick(&[0x0Cu8, 0x20, 0x3F, 0x41, 0x80, 0xEF]);
    let b = m.patch(|b| b[d.start as usize + 15] = tag);
    m.rejects_in(
        "unknown layout tags (permissive: kept, not interpreted)",
        b,
        "UnknownTag",
        "layout_tag",
        name,
        Accepts,
    );
    let tag = g.pick(&[0x00u8, 0xFF]);
    let b = m.patch(|b| b[d.start as usize + 15] = tag);
    m.rejects_in(
        "layout tags 0x00 and 0xFF are invalid",
        b,
        "UnknownTag",
        "layout_tag",
        name,
        Rejects,
    );
    let rank = 65 + g.below(1000) as u32;
    let b = m.patch(|b| set(b, d.start + 16, rank.to_le_bytes()));
    m.rejects_in("rank is at most 64", b, "Invalid", "rank", name, Rejects);
    let bytes_trailing = m.model(|f| {
        f.tensors[i].version_minor = 0;
        f.tensors[i].trailing = vec![0; 1 + g.below(8) as usize];
    });
    m.rejects_in(
        "no bytes after the last section at version 1.0",
        bytes_trailing,
        "TrailingBytes",
        "descriptor",
        name,
        Accepts,
    );
    let b = m.patch(|b| b[d.start as usize + 5] = 2 + g.below(254) as u8);
    m.accepts("a newer descriptor minor version is read", b);

    // buffer-protocol.md § Buffer Handle.
    let k = g.below(d.handles.len() as u64) as usize;
    let h = d.handles[k];
    let buf = |field: &str| format!("buffer[{k}].{field}");
    let (size, device) = (d.buffers[k].1, t.device.0);
    let v = if size > 0 {
        g.pick(&[0u32, 96, 32, 1])
    } else {
        g.pick(&[0u32, 96, 3])
    };
    let b = m.patch(|b| set(b, h + 8, v.to_le_bytes()));
    m.rejects_in(
        "alignment is a power of two, at least 64 when non-empty",
        b,
        "Invalid",
        buf("alignment"),
        name,
        Rejects,
    );
    let v = g.pick(&[0x09u8, 0xEF, 0xF0, 0xFF]);
    let b = m.patch(|b| b[h as usize + 12] = v);
    m.rejects_in(
        "device tags are defined",
        b,
        "UnknownTag",
        buf("device_tag"),
        name,
        Rejects,
    );
    let v = if device == 0 && g.chance(2) {
        1 + g.below(2) as u8
    } else {
        3 + g.below(253) as u8
    };
    let b = m.patch(|b| b[h as usize + 13] = v);
    m.rejects_in(
        "sync_mode is defined (0 on CPU)",
        b,
        "Invalid",
        buf("sync_mode"),
        name,
        Rejects,
    );
    let v = if device == 0 && g.chance(2) {
        3
    } else {
        g.pick(&[0x04u8, 0xEF, 0xF0, 0xFF])
    };
    let b = m.patch(|b| b[h as usize + 14] = v);
    m.rejects_in(
        "memory_class is defined for the device",
        b,
        "Invalid",
        buf("memory_class"),
        name,
        Rejects,
    );
    let b = m.patch(|b| b[h as usize + 15] = 1 + g.below(255) as u8);
    m.rejects_in(
        "the handle's reserved byte is zero",
        b,
        "Reserved",
        buf("_reserved"),
        name,
        Rejects,
    );
    if d.handles.len() > 1 {
        let k = 1 + g.below(d.handles.len() as u64 - 1) as usize;
        let others: Vec<u8> = [1u8, 2, 4, 7].into_iter().filter(|&x| x != device).collect();
        let v = g.pick(&others);
        let b = m.patch(|b| b[d.handles[k] as usize + 12] = v);
        m.rejects_in(
            "all buffers share device_tag and memory_class",
            b,
            "Invalid",
            format!("buffer[{k}].device_tag"),
            name,
            Rejects,
        );
    }

    // Layouts, buffer sizes, byte_offset.
    match &t.body {
        Body::Dense { shape, .. } => {
            let b = m.model(|f| {
                f.tensors[i].extra[0] = vec![0; w as usize];
                f.tensors[i].aligns[0] = f.tensors[i].aligns[0].max(64);
            });
            m.rejects_in(
                "a dense buffer has the computed size (permissive: at least)",
                b,
                "BufferSize",
                "buffer[0].byte_size",
                name,
                Accepts,
            );
            let v = d.buffers[0].1 + w;
            let b = m.patch(|b| set(b, d.byte_offset, v.to_le_bytes()));
            m.rejects_in(
                "byte_offset is at most buffer 0's size",
                b,
                "Invalid",
                "byte_offset",
                name,
                Rejects,
            );
            if !ext && w >= 2 {
                let b = m.model(|f| {
                    let Body::Dense { byte_offset, buf, .. } = &mut f.tensors[i].body else {
                        unreachable!()
                    };
                    *byte_offset += 1;
                    buf.insert(0, 0);
                    f.tensors[i].aligns[0] = f.tensors[i].aligns[0].max(64);
                });
                m.rejects_in(
                    "byte_offset keeps elements aligned (permissive: decoded)",
                    b,
                    "Invalid",
                    "byte_offset",
                    name,
                    Accepts,
                );
            }
            if !shape.is_empty() {
                let k = g.below(shape.len() as u64) as usize;
                let b = m.patch(|b| set(b, d.shape + 8 * k as u64, u64::MAX.to_le_bytes()));
                m.rejects_in(
                    "a stored tensor has no dynamic dimension",
                    b,
                    "DynamicDimension",
                    format!("shape[{k}]"),
                    name,
                    Rejects,
                );
                let rest: u64 = shape[1..].iter().product();
                if shape.iter().all(|&s| s > 0) && rest * w >= 4 {
                    let b = m.patch(|b| set(b, d.shape, (1u64 << 62).to_le_bytes()));
                    m.rejects_in("sizes do not overflow", b, "Overflow", "shape", name, Rejects);
                }
            }
        }
        Body::Csc { nrows, ncols, cells } => {
            let nnz = cells.len() as u64;
            let b = m.model(|f| f.tensors[i].extra[2] = vec![0; 8]);
            m.rejects_in(
                "sparse buffers have exactly the listed size",
                b,
                "BufferSize",
                "buffer[2].byte_size",
                name,
                Rejects,
            );
            let b = m.patch(|b| set(b, d.layout_fields, (nnz + 1).to_le_bytes()));
            m.rejects_in("nnz agrees with the buffers", b, "NnzMismatch", "nnz", name, Rejects);
            let at = d.layout_fields + 8 + g.below(8);
            let b = m.patch(|b| b[at as usize] = 1);
            m.rejects_in("CSC _reserved is zero", b, "Reserved", "_reserved", name, Rejects);
            let b = m.patch(|b| set(b, d.byte_offset, 8u64.to_le_bytes()));
            m.rejects_in("a CSC byte_offset is 0", b, "Invalid", "byte_offset", name, Rejects);
            // layouts/csc.md § Storage Invariants: strict views scan, permissive ones do not.
            let (rows_at, ptr_at) = (d.buffers[1].0, d.buffers[2].0);
            let ptr = t.col_ptr();
            let b = m.patch(|b| set(b, ptr_at, (1 + g.below(5)).to_le_bytes()));
            m.rejects_in("col_ptr[0] = 0", b, "PtrFirst", "col_ptr[0]", name, Accepts);
            if *ncols > 0 {
                let b = m.patch(|b| set(b, ptr_at + 8 * ncols, (nnz + 1).to_le_bytes()));
                m.rejects_in(
                    "col_ptr[ncols] = nnz",
                    b,
                    "PtrLast",
                    format!("col_ptr[{ncols}]"),
                    name,
                    Accepts,
                );
            }
            if *ncols > 1 {
                let j = 1 + g.below(ncols - 1);
                let b = m.patch(|b| set(b, ptr_at + 8 * j, (nnz + 1).to_le_bytes()));
                m.rejects_in(
                    "col_ptr is non-decreasing",
                    b,
                    "PtrTooLarge",
                    format!("col_ptr[{j}]"),
                    name,
                    Accepts,
                );
            }
            let dup: Vec<usize> = (0..*ncols as usize).filter(|&j| ptr[j + 1] - ptr[j] >= 2).collect();
            if !dup.is_empty() {
                let j = g.pick(&dup);
                let q = ptr[j] + g.below(ptr[j + 1] - ptr[j] - 1) + 1;
                let prev = cells[q as usize - 1].0;
                let b = m.patch(|b| set(b, rows_at + 8 * q, (prev - g.below(prev + 1)).to_le_bytes()));
                m.rejects_in(
                    "rows strictly increase within a column",
                    b,
                    "NotIncreasing",
                    format!("row_indices[{q}]"),
                    name,
                    Accepts,
                );
            }
            let filled: Vec<usize> = (0..*ncols as usize).filter(|&j| ptr[j + 1] > ptr[j]).collect();
            if !filled.is_empty() {
                let j = g.pick(&filled);
                let q = ptr[j + 1] - 1;
                let b = m.patch(|b| set(b, rows_at + 8 * q, (nrows + g.below(3)).to_le_bytes()));
                m.rejects_in(
                    "row indices are below nrows",
                    b,
                    "IndexOutOfBounds",
                    format!("row_indices[{q}]"),
                    name,
                    Accepts,
                );
            }
        }
    }

    // Optional sections.
    if let Some(q) = d.quant {
        let v = g.pick(&[0.0f32, -0.0, f32::NAN, f32::INFINITY]);
        let b = m.patch(|b| set(b, q + 4, v.to_le_bytes()));
        m.rejects_in(
            "a per-tensor scale is finite and non-zero",
            b,
            "InvalidNumber",
            "quantization.scale",
            name,
            Rejects,
        );
        let (lo, hi) = t.dt.range();
        if t.dt != Dt::I32 {
            let v = if g.chance(2) { lo - 1 } else { hi + 1 } as i32;
            let b = m.patch(|b| set(b, q + 8, v.to_le_bytes()));
            m.rejects_in(
                "the zero point fits the storage type",
                b,
                "InvalidNumber",
                "quantization.zero_point",
                name,
                Rejects,
            );
        }
        let b = m.patch(|b| b[q as usize + 1] = 2 + g.below(254) as u8);
        m.rejects_in(
            "scheme_version is defined",
            b,
            "UnsupportedVersion",
            "quantization.scheme_version",
            name,
            Rejects,
        );
        let b = m.patch(|b| set(b, q + 2, (1u16 << g.below(16)).to_le_bytes()));
        m.rejects_in(
            "per-tensor flags are zero",
            b,
            "Reserved",
            "quantization.flags",
            name,
            Rejects,
        );
        let at = q + 12 + g.below(4);
        let b = m.patch(|b| b[at as usize] = 1);
        m.rejects_in(
            "per-tensor _reserved is zero",
            b,
            "Reserved",
            "quantization._reserved",
            name,
            Rejects,
        );
        let tag = g.pick(&[0x06u8, 0x20, 0x5F, 0xF0]);
        let b = m.patch(|b| b[q as usize] = tag);
        m.rejects_in(
            "unknown schemes (permissive: kept, not dequantized)",
            b,
            "UnknownTag",
            "quantization.scheme_tag",
            name,
            Accepts,
        );
        let tag = g.pick(&[0x00u8, 0xFF]);
        let b = m.patch(|b| b[q as usize] = tag);
        m.rejects_in(
            "scheme tags 0x00 and 0xFF are invalid",
            b,
            "UnknownTag",
            "quantization.scheme_tag",
            name,
            Rejects,
        );
    }
    if let (Some(s), Some((parent, _))) = (d.shard, &t.shard) {
        if !parent.is_empty() {
            let k = g.below(parent.len() as u64) as usize;
            let shape = t.shape();
            let v = parent[k] - shape[k] + 1 + g.below(3);
            let b = m.patch(|b| set(b, s + 8 * (parent.len() + k) as u64, v.to_le_bytes()));
            m.rejects_in(
                "shard_offset + shape <= parent_shape",
                b,
                "Invalid",
                format!("shard_offset[{k}]"),
                name,
                Rejects,
            );
        }
    }
    if let (Some(s), Some(st)) = (d.stats, t.stats) {
        let bit = 1u32 << (6 + g.below(26));
        let b = m.patch(|b| set(b, s, (st.mask | bit).to_le_bytes()));
        m.rejects_in(
            "reserved computed_mask bits are zero",
            b,
            "Reserved",
            "statistics.computed_mask",
            name,
            Rejects,
        );
        let b = m.patch(|b| b[s as usize + 4 + g.below(4) as usize] = 1);
        m.rejects_in(
            "statistics _reserved is zero",
            b,
            "Reserved",
            "statistics._reserved",
            name,
            Rejects,
        );
        let b = m.patch(|b| b[s as usize + 68 + g.below(4) as usize] = 1);
        m.rejects_in(
            "statistics _reserved2 is zero",
            b,
            "Reserved",
            "statistics._reserved2",
            name,
            Rejects,
        );
        // metadata.md § Statistics Section › Field Encoding: checked only
        // under their computed_mask bit (NOTES.md 'value_stddev, nm_n/nm_m':
        // strict; permissive keeps the advisory block).
        let stddev = g.pick(&[-1.0f64, -f64::MIN_POSITIVE, f64::NEG_INFINITY, f64::NAN]);
        let b = m.patch(|b| set(b, s + 56, stddev.to_le_bytes()));
        if st.mask & 8 != 0 {
            m.rejects_in(
                "value_stddev >= 0.0 under VALUE_STATS_VALID",
                b,
                "InvalidNumber",
                "statistics.value_stddev",
                name,
                Accepts,
            );
        } else {
            m.accepts("value_stddev is unknown without VALUE_STATS_VALID", b);
        }
        let n = 1 + g.below(255) as u8;
        let below_n = g.below(u64::from(n)) as u8;
        let b = m.patch(|b| {
            b[s as usize + 64] = n;
            b[s as usize + 65] = below_n;
        });
        if st.mask & 16 != 0 {
            m.rejects_in(
                "nm_n <= nm_m under NM_SPARSITY_VALID",
                b,
                "Invalid",
                "statistics.nm_n",
                name,
                Accepts,
            );
        } else {
            m.accepts("nm_n and nm_m are unknown without NM_SPARSITY_VALID", b);
        }
        if t.nnz().is_some() && st.mask & 1 != 0 {
            let b = m.patch(|b| set(b, s + 8, (st.nnz + 1 + g.below(9)).to_le_bytes()));
            m.rejects_in(
                "statistics nnz equals the CSC nnz (permissive: the descriptor's wins)",
                b,
                "StatisticsNnzMismatch",
                "statistics.nnz",
                name,
                Accepts,
            );
        }
    }
    if let Some(x) = d.ext {
        let b = m.patch(|b| b[x as usize + 4] = 2 + g.below(6) as u8);
        m.rejects_in(
            "packing_factor is 1 for whole-byte types",
            b,
            "Invalid",
            "extension_type.packing_factor",
            name,
            Rejects,
        );
        let v = g.pick(&[0u32, 3, 5, 7, 12]);
        let b = m.patch(|b| set(b, x, v.to_le_bytes()));
        m.rejects_in(
            "bit_width is 1, 2, 4 or whole bytes",
            b,
            "Invalid",
            "extension_type.bit_width",
            name,
            Rejects,
        );
        let b = m.patch(|b| b[x as usize + 10 + g.below(2) as usize] = 1);
        m.rejects_in(
            "extension _reserved is zero",
            b,
            "Reserved",
            "extension_type._reserved",
            name,
            Rejects,
        );
        let b = m.patch(|b| b[x as usize + 18 + g.below(2) as usize] = 1);
        m.rejects_in(
            "extension _reserved2 is zero",
            b,
            "Reserved",
            "extension_type._reserved2",
            name,
            Rejects,
        );
    }
}

/// Opens `bytes`, resolves every tensor, builds its views (strict: the CSC
/// scan) and, strictly, validates the whole file.
fn exercise(bytes: &[u8], options: Options) -> Result<(), Error> {
    let file = HurrayFile::parse(bytes, options)?;
    for position in 0..file.len() {
        let t = file.tensor_at(position)?;
        if t.not_viewable().is_some() {
            continue;
        }
        if t.layout() == hurray_reader::Layout::Csc {
            let s = t.csc_structure()?;
            if options.is_strict() {
                s.validate()?;
            }
        } else {
            let shape: Vec<u64> = t.shape().collect();
            if t.element_count()? <= 4096 {
                let indices = if shape.is_empty() {
                    vec![vec![]]
                } else {
                    all_indices(&shape)
                };
                for index in indices {
                    t.dense_value(&index)?;
                }
            }
        }
    }
    if options.is_strict() {
        file.validate()?;
    }
    Ok(())
}

fn variant(e: &Error) -> String {
    format!("{e:?}")
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_string()
}

fn check_mutation(mu: &Mutation) -> Result<(), TestCaseError> {
    let aligned = AlignedBytes::from_slice(&mu.bytes);
    let strict = exercise(&aligned, Options::strict());
    let permissive = exercise(&aligned, Options::permissive());
    match &mu.outcome {
        Outcome::Accepts => {
            check!(strict.is_ok(), "{}: strict rejects: {}", mu.rule, strict.unwrap_err());
            check!(
                permissive.is_ok(),
                "{}: permissive rejects: {}",
                mu.rule,
                permissive.unwrap_err()
            );
        }
        Outcome::Rejects {
            variant: want,
            field,
            tensor,
            permissive: perm,
        } => {
            let Err(e) = strict else {
                return Err(fail(format!("{}: strict mode accepts the file", mu.rule)));
            };
            let got_field = e.field().map(|f| f.to_string());
            check!(
                variant(&e) == *want && got_field.as_deref() == Some(field.as_str()),
                "{}: expected {want} naming {field}, got {} naming {got_field:?}: {e}",
                mu.rule,
                variant(&e)
            );
            check!(
                e.to_string().contains(field.as_str()),
                "{}: the message does not name {field}: {e}",
                mu.rule
            );
            if let Some(name) = tensor {
                check!(
                    e.tensor() == Some(name.as_str()),
                    "{}: error about {:?}, not '{name}': {e}",
                    mu.rule,
                    e.tensor()
                );
            }
            match (perm, permissive) {
                (Perm::Accepts, Err(p)) => return Err(fail(format!("{}: permissive rejects: {p}", mu.rule))),
                (Perm::Rejects, Ok(())) => return Err(fail(format!("{}: permissive accepts ({e})", mu.rule))),
                _ => {}
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn every_mutation_is_rejected_with_its_error((tensors, kv, seed) in strategy()) {
        let f = file_model(&tensors, kv.as_deref(), seed);
        let enc = encode(&f);
        for mu in mutations(&f, &enc, &mut Rng(seed ^ 0xB4D)) {
            check_mutation(&mu)?;
        }
    }
}

/// A row-major float32 tensor with no optional section, one buffer `buf`
/// (alignment 64, on the CPU) and the default paddings.
fn plain_f32(name: &str, shape: Vec<u64>, buf: Vec<u8>) -> MTensor {
    MTensor {
        name: name.into(),
        dt: Dt::F32,
        version_minor: 0,
        trailing: Vec::new(),
        body: Body::Dense {
            shape,
            byte_offset: 0,
            buf,
        },
        quant: None,
        shard: None,
        stats: None,
        device: (0, 0, 0),
        aligns: vec![64],
        extra: vec![Vec::new()],
        pad_to_dba: false,
        empty_unpadded: false,
    }
}

/// NOTES.md 'Padding after a descriptor whose tensor is empty': `A`
/// (float32 `[0]`) is followed by `B`'s descriptor after 8-byte padding,
/// while `A`'s `data_offset` is the `data_buffer_alignment` boundary after
/// its descriptor, which `B`'s data also starts at. Both modes accept it;
/// before, both rejected `B`'s `descriptor_offset` as inside `A`'s region.
/// As the last tensor, `A`'s boundary lies past the end of the file.
#[test]
fn an_empty_tensor_may_be_followed_by_8_byte_padding() {
    let dense = |name: &str, shape: Vec<u64>, buf: Vec<u8>| MTensor {
        empty_unpadded: true,
        ..plain_f32(name, shape, buf)
    };
    let values: Vec<u8> = [1.5f32, -2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    for order in [["A", "B"], ["B", "A"]] {
        let tensors = order
            .iter()
            .map(|&n| match n {
                "A" => dense("A", vec![0], Vec::new()),
                _ => dense("B", vec![2], values.clone()),
            })
            .collect();
        let f = MFile {
            container_minor: 0,
            flags: HAS_INDEX_CRC32C,
            dba: 4096,
            first: 64,
            hint: 2,
            tensors,
            index_sorted: false,
            kv: None,
            kv_extra: Vec::new(),
            index_extra: Vec::new(),
        };
        let enc = encode(&f);
        let a = &enc.desc[order.iter().position(|&n| n == "A").unwrap()];
        assert_eq!(
            (a.data_offset, a.data_length),
            ((a.start + a.len).div_ceil(4096) * 4096, 0)
        );
        assert_eq!(a.region_end, (a.start + a.len).div_ceil(8) * 8);
        if order[0] == "A" {
            assert_eq!(
                enc.desc[1].start, a.region_end,
                "B's descriptor follows at the next 8 bytes"
            );
            assert_eq!(enc.desc[1].data_offset, 4096, "B's data starts at A's data_offset");
        } else {
            assert!(
                (enc.bytes.len() as u64) < a.data_offset,
                "A's data_offset lies past the file's end"
            );
        }
        read_back(&f, &enc, true).unwrap();
    }
}

/// `metadata.md` § Worked Example, byte for byte: the model's descriptor
/// encoding is the spec's (the example's 192-byte buffer is larger than
/// `[3, 4]` float32 needs; only the descriptor is compared).
#[test]
fn model_descriptor_is_the_worked_example() {
    let t = plain_f32("w", vec![3, 4], vec![0; 192]);
    let (bytes, map) = descriptor(&t);
    let mut want = Vec::new();
    want.extend_from_slice(&[
        0x48, 0x52, 0x52, 0x59, 0x01, 0x00, 0x3D, 0, 0, 0, 0, 0, 0, 0, 0x03, 0x01, 2, 0, 0, 0,
    ]);
    want.extend_from_slice(&[3, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0]);
    want.extend_from_slice(&[0; 8]);
    want.push(1);
    want.extend_from_slice(&[0xC0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(bytes, want);
    assert_eq!(
        (map.len, map.shape, map.byte_offset, map.buffer_count),
        (61, 20, 36, 44)
    );
}
