//! Dense addressing against a model written from the spec, as property tests.
//!
//! The model below maps a logical index to a linear element offset for every
//! dense layout, from the formulas of `layouts/row-major.md`,
//! `column-major.md`, `strided.md`, `tiled.md`, `morton.md` and `hilbert.md`
//! (nothing of the reader's own addressing is called), and places each
//! element's bits in buffer 0 by `memory-layout.md` § Element Address
//! Computation: whole-byte types at `byte_offset + offset * width`; `bool`,
//! 4- and 2-bit types packed LSB first at byte `byte_offset + floor(offset /
//! P)`, bit `(offset mod P) * B`; 6-bit types in groups of four elements in
//! three bytes (`element-types.md` § 6-bit packing).
//!
//! Each case draws a shape (rank 1-4, dimensions 0-6; Hilbert: rank 2-3,
//! sides `2^order`), a layout valid for it, an element type from a
//! representative set, a `byte_offset` and element values. Buffer 0 is built
//! by the model (slots no index reaches, and the bytes before `byte_offset`,
//! are zero; `float8_e8m0`, which has no zero, is not drawn), exactly as large as the model says, written with the checked
//! `FileWriter::write_tensor`, opened strictly, validated whole, and every
//! element read back through `Addressing::position`, `Tensor::dense_value`
//! and, for whole-byte types, `DenseView::get`. Values are drawn per storage
//! slot: where a layout maps several indices to one slot (zero strides,
//! overlapping strided tile grids), they all read that slot's value.
//!
//! `unaddressed_bytes_may_hold_anything` runs the same cases with random
//! bits where no element is stored (tile padding, strided gaps, unused Morton
//! codes, bytes before `byte_offset`): readers must not depend on them.
//!
//! Left out of the main properties, each with its reason where it is
//! filtered or not drawn: Morton shapes whose codes pass
//! `2^sum(morton_bits)` (both sides refuse them, intended) and tile grids
//! reaching before slot 0 (valid at the top level with a `byte_offset`
//! that covers them: `tests/dense_buffer_sizes.rs`; not drawn here). A `byte_offset` inside an element (half a
//! complex, a float6 group off a multiple of 3) has its own property,
//! `dense_layouts_with_byte_offset_inside_an_element`. The reader bug this
//! file found (nested strided tile grids) has a minimal test at the end.
//!
//! Where the spec leaves a reading open, the model takes one and says so:
//! - a recursive tile whose inner tiling pads (inner tiles that do not divide
//!   the outer tile) takes its padded storage, not `product(tile_shape)`
//!   (`layouts/tiled.md` § Element Address multiplies by
//!   `total_tile_elements`; taken literally, such tiles would overlap);
//! - a strided tile grid spans from slot 0 to the highest slot it addresses;
//! - an empty tensor stores nothing, except Morton, whose buffer holds
//!   `2^sum(morton_bits)` elements whatever the shape (`layouts/morton.md` §
//!   Buffer Size);
//! - the buffer runs from its first byte (before `byte_offset`) to the byte
//!   holding the highest slot.

mod support {
    pub mod model {
        pub mod basics;
    }
}

use std::collections::BTreeMap;
use std::fmt;
use std::ops::RangeInclusive;

use hurray_reader::half::{bf16, f16};
use hurray_reader::{logical_indices, AlignedBytes, Complex, Element, Float8E4m3, HurrayFile, Options, Tensor, Value};
use hurray_writer::{
    BufferData, BufferHandle, FileWriter, TensorDescriptor, TileInner, TileOrder, Tiled, WriterOptions,
};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestCaseError;
use support::model::basics::*;

/// Cases of the main property; with the case sizes below the whole file runs
/// in a few seconds in a debug build. `PROPTEST_CASES` overrides it (for a
/// longer search: `PROPTEST_CASES=20000 cargo test --release --test
/// dense_layouts`).
const CASES: u32 = 1024;

// ---------------------------------------------------------------------------
// Element types and byte placement (memory-layout.md § Element Address
// Computation, element-types.md)
// ---------------------------------------------------------------------------

/// The element types drawn: every packing family, the float formats with
/// special patterns, and both complex widths. `float8_e8m0` is left out: it
/// has no zero to fill unused slots with (0x00 is reserved).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    Float32,
    Float64,
    Int8,
    Uint16,
    Int64,
    Float16,
    Bfloat16,
    Complex64,
    Complex128,
    Bool,
    Int4,
    Uint2,
    Float6E2m3,
    Float8E4m3,
}

const TYPES: [Ty; 14] = [
    Ty::Float32,
    Ty::Float64,
    Ty::Int8,
    Ty::Uint16,
    Ty::Int64,
    Ty::Float16,
    Ty::Bfloat16,
    Ty::Complex64,
    Ty::Complex128,
    Ty::Bool,
    Ty::Int4,
    Ty::Uint2,
    Ty::Float6E2m3,
    Ty::Float8E4m3,
];

/// How elements sit in bytes.
#[derive(Debug, Clone, Copy)]
enum Packing {
    /// `width` bytes per element, little-endian.
    Whole(u64),
    /// `per_byte` elements of `bits` bits in each byte, LSB first.
    Sub { per_byte: u64, bits: u32 },
    /// Four 6-bit elements in every three bytes, LSB first.
    Six,
}

impl Ty {
    fn writer(self) -> hurray_writer::ElementType {
        use hurray_writer::ElementType as W;
        match self {
            Ty::Float32 => W::Float32,
            Ty::Float64 => W::Float64,
            Ty::Int8 => W::Int8,
            Ty::Uint16 => W::UInt16,
            Ty::Int64 => W::Int64,
            Ty::Float16 => W::Float16,
            Ty::Bfloat16 => W::BFloat16,
            Ty::Complex64 => W::Complex64,
            Ty::Complex128 => W::Complex128,
            Ty::Bool => W::Bool,
            Ty::Int4 => W::Int4,
            Ty::Uint2 => W::UInt2,
            Ty::Float6E2m3 => W::Float6E2M3,
            Ty::Float8E4m3 => W::Float8E4M3,
        }
    }

    fn packing(self) -> Packing {
        match self {
            Ty::Int8 | Ty::Float8E4m3 => Packing::Whole(1),
            Ty::Uint16 | Ty::Float16 | Ty::Bfloat16 => Packing::Whole(2),
            Ty::Float32 => Packing::Whole(4),
            Ty::Float64 | Ty::Int64 | Ty::Complex64 => Packing::Whole(8),
            Ty::Complex128 => Packing::Whole(16),
            Ty::Bool => Packing::Sub { per_byte: 8, bits: 1 },
            Ty::Int4 => Packing::Sub { per_byte: 2, bits: 4 },
            Ty::Uint2 => Packing::Sub { per_byte: 4, bits: 2 },
            Ty::Float6E2m3 => Packing::Six,
        }
    }

    /// Bits per element.
    fn bits(self) -> u32 {
        match self.packing() {
            Packing::Whole(w) => 8 * w as u32,
            Packing::Sub { bits, .. } => bits,
            Packing::Six => 6,
        }
    }

    /// The step between the `byte_offset`s drawn for this type: one element
    /// for whole-byte types (for the non-complex types that is their
    /// alignment, `element-types.md` § Type Properties Summary), one byte for
    /// 1-, 2- and 4-bit types (`memory-layout.md` § Alignment), one group of
    /// three bytes for 6-bit types.
    fn offset_unit(self) -> u64 {
        match self.packing() {
            Packing::Whole(w) => w,
            Packing::Sub { .. } => 1,
            Packing::Six => 3,
        }
    }

    /// Bytes for `count` elements from the element at `byte_offset`
    /// (`element-types.md` § Buffer Size Calculation).
    fn bytes_for(self, count: u64) -> u64 {
        match self.packing() {
            Packing::Whole(w) => count * w,
            Packing::Sub { per_byte, .. } => count.div_ceil(per_byte),
            Packing::Six => count.div_ceil(4) * 3,
        }
    }

    /// The least `byte_offset` (in whole steps) at which offset `lowest`
    /// (≤ 0) still lies in the buffer.
    fn byte_offset_for(self, lowest: i128) -> u64 {
        let below = u64::try_from(-lowest).expect("lowest offset is at most 0");
        match self.packing() {
            Packing::Whole(w) => below * w,
            Packing::Sub { per_byte, .. } => below.div_ceil(per_byte),
            Packing::Six => below.div_ceil(4) * 3,
        }
    }

    /// `byte_offset` in elements from the buffer's first byte, when it is a
    /// whole number of them.
    fn origin(self, byte_offset: u64) -> Option<u64> {
        match self.packing() {
            Packing::Whole(w) => byte_offset.is_multiple_of(w).then_some(byte_offset / w),
            Packing::Sub { per_byte, .. } => Some(byte_offset * per_byte),
            Packing::Six => byte_offset.is_multiple_of(3).then_some(byte_offset / 3 * 4),
        }
    }

    /// Puts the `bits()`-bit pattern `bits` of the element at linear offset
    /// `offset` into `buf`, replacing what was there (`memory-layout.md` § Element Address Computation;
    /// 6-bit in-group layout from `element-types.md` § 6-bit packing: element
    /// `j` of a group takes bits `6j .. 6j + 6` of the group's three bytes
    /// read as one little-endian 24-bit number).
    fn place(self, buf: &mut [u8], byte_offset: u64, offset: i128, bits: u128) {
        let base = i128::from(byte_offset);
        let at = |byte: i128| usize::try_from(byte).expect("element before the buffer");
        match self.packing() {
            Packing::Whole(w) => {
                let start = at(base + offset * i128::from(w));
                buf[start..start + w as usize].copy_from_slice(&bits.to_le_bytes()[..w as usize]);
            }
            Packing::Sub { per_byte, bits: b } => {
                let p = i128::from(per_byte);
                let byte = at(base + offset.div_euclid(p));
                let shift = offset.rem_euclid(p) as u32 * b;
                let mask = ((1u16 << b) - 1) as u8;
                buf[byte] = buf[byte] & !(mask << shift) | (bits as u8 & mask) << shift;
            }
            Packing::Six => {
                let start = at(base + offset.div_euclid(4) * 3);
                let j = offset.rem_euclid(4) as u32;
                let group = &mut buf[start..start + 3];
                let mut word = u32::from(group[0]) | u32::from(group[1]) << 8 | u32::from(group[2]) << 16;
                word = word & !(0x3F << (6 * j)) | (bits as u32 & 0x3F) << (6 * j);
                group.copy_from_slice(&word.to_le_bytes()[..3]);
            }
        }
    }

    /// The value of bit pattern `bits`, decoded from `element-types.md`.
    fn value(self, bits: u128) -> Value {
        match self {
            Ty::Float32 => Value::Float(f64::from(f32::from_bits(bits as u32))),
            Ty::Float64 => Value::Float(f64::from_bits(bits as u64)),
            Ty::Int8 => Value::Int(i64::from(bits as u8 as i8)),
            Ty::Uint16 => Value::UInt(bits as u64),
            Ty::Int64 => Value::Int(bits as u64 as i64),
            // IEEE binary16: 5 exponent bits, bias 15, all-ones exponent inf/NaN.
            Ty::Float16 => Value::Float(ieee_minifloat(bits as u32, 5, 10, 15)),
            // bfloat16: 8 exponent bits, bias 127, as float32.
            Ty::Bfloat16 => Value::Float(ieee_minifloat(bits as u32, 8, 7, 127)),
            Ty::Complex64 => Value::Complex {
                re: f64::from(f32::from_bits(bits as u32)),
                im: f64::from(f32::from_bits((bits >> 32) as u32)),
            },
            Ty::Complex128 => Value::Complex {
                re: f64::from_bits(bits as u64),
                im: f64::from_bits((bits >> 64) as u64),
            },
            Ty::Bool => Value::Bool(bits & 1 == 1),
            // Two's complement in 4 bits.
            Ty::Int4 => Value::Int(i64::from(((bits as u8) << 4) as i8 >> 4)),
            Ty::Uint2 => Value::UInt(bits as u64),
            // 1-2-3, bias 1, no inf or NaN.
            Ty::Float6E2m3 => Value::Float(minifloat(bits as u32, 2, 3, 1)),
            // OCP E4M3, bias 7: S.1111.111 is NaN, no infinities.
            Ty::Float8E4m3 => Value::Float(if bits as u8 & 0x7F == 0x7F {
                f64::NAN
            } else {
                minifloat(bits as u32, 4, 3, 7)
            }),
        }
    }
}

// ---------------------------------------------------------------------------
// Layouts: logical index -> linear element offset
// ---------------------------------------------------------------------------

/// Order of a tile grid (`outer_layout`).
#[derive(Debug, Clone)]
enum Order {
    RowMajor,
    ColumnMajor,
    /// Strides in tiles.
    Strided(Vec<i64>),
}

/// Order inside a tile (`inner_layout`).
#[derive(Debug, Clone)]
enum Inner {
    RowMajor,
    ColumnMajor,
    /// Strides in elements within the tile.
    Strided(Vec<i64>),
    /// Recursive tiling of each tile.
    Tiled(Box<Tiling>),
}

/// One level of `layouts/tiled.md`.
#[derive(Debug, Clone)]
struct Tiling {
    tile_shape: Vec<u64>,
    outer: Order,
    inner: Inner,
}

/// A dense layout with its fields.
#[derive(Debug, Clone)]
enum Lay {
    RowMajor,
    ColumnMajor,
    Strided(Vec<i64>),
    Tiled(Tiling),
    Morton(Vec<u32>),
    /// `hilbert_order`; `hilbert_rank` is the rank.
    Hilbert(u32),
}

fn wide(strides: &[i64]) -> Vec<i128> {
    strides.iter().map(|&s| i128::from(s)).collect()
}

/// Lowest and highest of `sum(i_k * strides[k])` over a non-empty `shape`
/// (`layouts/strided.md` § Buffer Size: `min_offset`, `max_offset`).
fn reach(shape: &[u64], strides: &[i128]) -> (i128, i128) {
    shape.iter().zip(strides).fold((0, 0), |(lo, hi), (&n, &s)| {
        let r = s * (i128::from(n) - 1);
        (lo + r.min(0), hi + r.max(0))
    })
}

impl Order {
    fn offset(&self, index: &[u64], grid: &[u64]) -> i128 {
        match self {
            Order::RowMajor => dot(index, &row_major_strides(grid)),
            Order::ColumnMajor => dot(index, &column_major_strides(grid)),
            Order::Strided(s) => dot(index, &wide(s)),
        }
    }
}

impl Tiling {
    /// `layouts/tiled.md` § Element Address, steps 1-5.
    fn offset(&self, shape: &[u64], index: &[u64]) -> i128 {
        let grid: Vec<u64> = shape
            .iter()
            .zip(&self.tile_shape)
            .map(|(&n, &t)| n.div_ceil(t))
            .collect();
        let tile: Vec<u64> = index.iter().zip(&self.tile_shape).map(|(&i, &t)| i / t).collect();
        let within: Vec<u64> = index.iter().zip(&self.tile_shape).map(|(&i, &t)| i % t).collect();
        let tile_start = self.outer.offset(&tile, &grid) * self.tile_elements();
        let inner = match &self.inner {
            Inner::RowMajor => dot(&within, &row_major_strides(&self.tile_shape)),
            Inner::ColumnMajor => dot(&within, &column_major_strides(&self.tile_shape)),
            Inner::Strided(s) => dot(&within, &wide(s)),
            Inner::Tiled(t) => t.offset(&self.tile_shape, &within),
        };
        tile_start + inner
    }

    /// Elements one tile takes: `product(tile_shape)`, or what a recursive
    /// tiling of the tile stores, padding included.
    fn tile_elements(&self) -> i128 {
        match &self.inner {
            Inner::Tiled(t) => t.storage(&self.tile_shape),
            _ => i128::from(count(&self.tile_shape)),
        }
    }

    /// Elements a tensor of `shape` stores, padding included
    /// (`layouts/tiled.md` § Boundary Padding; a strided grid from slot 0 to
    /// its highest slot).
    fn storage(&self, shape: &[u64]) -> i128 {
        if count(shape) == 0 {
            return 0;
        }
        let grid: Vec<u64> = shape
            .iter()
            .zip(&self.tile_shape)
            .map(|(&n, &t)| n.div_ceil(t))
            .collect();
        let slots = match &self.outer {
            Order::Strided(s) => reach(&grid, &wide(s)).1 + 1,
            _ => i128::from(count(&grid)),
        };
        slots * self.tile_elements()
    }

    fn writer(&self) -> Tiled {
        Tiled {
            tile_shape: self.tile_shape.clone(),
            outer: match &self.outer {
                Order::RowMajor => TileOrder::RowMajor,
                Order::ColumnMajor => TileOrder::ColumnMajor,
                Order::Strided(s) => TileOrder::Strided(s.clone()),
            },
            inner: match &self.inner {
                Inner::RowMajor => TileInner::RowMajor,
                Inner::ColumnMajor => TileInner::ColumnMajor,
                Inner::Strided(s) => TileInner::Strided(s.clone()),
                Inner::Tiled(t) => TileInner::Tiled(Box::new(t.writer())),
            },
        }
    }
}

/// `layouts/hilbert.md` § Normative Index Mapping, `CoordsToHilbert`.
fn coords_to_hilbert(coords: &[u64], p: u32) -> u64 {
    let r = coords.len();
    let mut x = coords.to_vec();
    let m = 1u64 << (p - 1);
    let mut q = m;
    while q > 1 {
        let pp = q - 1;
        for i in 0..r {
            if x[i] & q != 0 {
                x[0] ^= pp;
            } else {
                let t = (x[0] ^ x[i]) & pp;
                x[0] ^= t;
                x[i] ^= t;
            }
        }
        q >>= 1;
    }
    for i in 1..r {
        x[i] ^= x[i - 1];
    }
    let mut t = 0;
    q = m;
    while q > 1 {
        if x[r - 1] & q != 0 {
            t ^= q - 1;
        }
        q >>= 1;
    }
    for v in &mut x {
        *v ^= t;
    }
    let mut h = 0u64;
    for b in 0..p as usize {
        for (d, &v) in x.iter().enumerate() {
            h |= ((v >> b) & 1) << (b * r + (r - 1 - d));
        }
    }
    h
}

/// `layouts/hilbert.md` § Normative Index Mapping, `HilbertToCoords` (used
/// only to check the model's `coords_to_hilbert`).
fn hilbert_to_coords(h: u64, r: usize, p: u32) -> Vec<u64> {
    let mut x = vec![0u64; r];
    for b in 0..p as usize {
        for (d, v) in x.iter_mut().enumerate() {
            *v |= ((h >> (b * r + (r - 1 - d))) & 1) << b;
        }
    }
    let t = x[r - 1] >> 1;
    for i in (1..r).rev() {
        x[i] ^= x[i - 1];
    }
    x[0] ^= t;
    let mut q = 2u64;
    while q != 1 << p {
        let pp = q - 1;
        for i in (0..r).rev() {
            if x[i] & q != 0 {
                x[0] ^= pp;
            } else {
                let t = (x[0] ^ x[i]) & pp;
                x[0] ^= t;
                x[i] ^= t;
            }
        }
        q <<= 1;
    }
    x
}

impl Lay {
    /// Linear element offset of `index`, relative to the element at
    /// `byte_offset`.
    fn offset(&self, shape: &[u64], index: &[u64]) -> i128 {
        match self {
            Lay::RowMajor => dot(index, &row_major_strides(shape)),
            Lay::ColumnMajor => dot(index, &column_major_strides(shape)),
            Lay::Strided(s) => dot(index, &wide(s)),
            Lay::Tiled(t) => t.offset(shape, index),
            Lay::Morton(bits) => i128::from(morton(index, bits)),
            Lay::Hilbert(p) => i128::from(coords_to_hilbert(index, *p)),
        }
    }

    /// `(lowest offset, one past the highest slot)` the buffer must cover,
    /// relative to the element at `byte_offset`.
    fn extent(&self, shape: &[u64]) -> (i128, i128) {
        let n = i128::from(count(shape));
        match self {
            Lay::RowMajor | Lay::ColumnMajor => (0, n),
            Lay::Strided(_) | Lay::Tiled(_) if n == 0 => (0, 0),
            Lay::Strided(s) => {
                let (lo, hi) = reach(shape, &wide(s));
                (lo, hi + 1)
            }
            Lay::Tiled(t) => (0, t.storage(shape)),
            Lay::Morton(bits) => (0, 1i128 << bits.iter().sum::<u32>()),
            Lay::Hilbert(p) => (0, 1i128 << (p * shape.len() as u32)),
        }
    }

    fn writer(&self, shape: &[u64]) -> hurray_writer::Layout {
        use hurray_writer::Layout as W;
        match self {
            Lay::RowMajor => W::RowMajor,
            Lay::ColumnMajor => W::ColumnMajor,
            Lay::Strided(s) => W::Strided { strides: s.clone() },
            Lay::Tiled(t) => W::Tiled(t.writer()),
            Lay::Morton(bits) => W::Morton {
                morton_bits: bits.clone(),
            },
            Lay::Hilbert(p) => W::Hilbert {
                hilbert_order: *p,
                hilbert_rank: shape.len() as u32,
            },
        }
    }
}

// ---------------------------------------------------------------------------
// One case: model, file, reader
// ---------------------------------------------------------------------------

#[derive(Clone)]
struct Case {
    ty: Ty,
    shape: Vec<u64>,
    layout: Lay,
    /// Whole `offset_unit`s of `byte_offset` past the least one.
    extra_units: u64,
    /// Bytes added to `byte_offset` on top (0 in the main property).
    misalign: u64,
    /// Fill what no element takes (bytes before the first slot, slots no
    /// index reaches) with random bits instead of zeros.
    garbage: bool,
    /// Seeds the element values.
    seed: u64,
}

impl Case {
    fn byte_offset(&self) -> u64 {
        let (lowest, _) = self.layout.extent(&self.shape);
        self.ty.byte_offset_for(lowest) + self.extra_units * self.ty.offset_unit() + self.misalign
    }
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} shape {:?} {:?} byte_offset {} seed {:#x}{}",
            self.ty,
            self.shape,
            self.layout,
            self.byte_offset(),
            self.seed,
            if self.garbage {
                " (unaddressed bytes random)"
            } else {
                ""
            }
        )
    }
}

/// What the model says the file holds.
struct Model {
    byte_offset: u64,
    /// Buffer 0, exactly as large as the layout requires.
    buffer: Vec<u8>,
    /// Every logical index with its offset (relative to `byte_offset`) and
    /// the bit pattern stored there.
    elements: Vec<(Vec<u64>, i128, u128)>,
}

/// A `bits`-bit pattern: mostly random, sometimes zero, the sign bit alone
/// (-0.0) or all ones.
fn pattern(state: &mut u64, bits: u32) -> u128 {
    let mask = if bits == 128 { u128::MAX } else { (1u128 << bits) - 1 };
    let random = (u128::from(next(state)) << 64 | u128::from(next(state))) & mask;
    match next(state) % 16 {
        0 => 0,
        1 => 1u128 << (bits - 1),
        2 => mask,
        _ => random,
    }
}

fn model(case: &Case) -> Model {
    let byte_offset = case.byte_offset();
    let (_, end) = case.layout.extent(&case.shape);
    let size = byte_offset + case.ty.bytes_for(u64::try_from(end).expect("extent"));
    let mut buffer = vec![0u8; size as usize];
    let mut state = case.seed;
    if case.garbage {
        buffer.iter_mut().for_each(|b| *b = next(&mut state) as u8);
        // The bits after the highest slot, in its byte or group, stay zero
        // (`element-types.md`: unused high-order bits of the final byte or
        // group MUST be 0).
        let used = match case.ty.packing() {
            Packing::Whole(_) => size * 8,
            _ => byte_offset * 8 + u64::try_from(end).expect("extent") * u64::from(case.ty.bits()),
        };
        for bit in used..size * 8 {
            buffer[(bit / 8) as usize] &= !(1 << (bit % 8));
        }
    }
    let mut slots: BTreeMap<i128, u128> = BTreeMap::new();
    let mut elements = Vec::new();
    for index in all_indices(&case.shape) {
        let offset = case.layout.offset(&case.shape, &index);
        let bits = *slots
            .entry(offset)
            .or_insert_with(|| pattern(&mut state, case.ty.bits()));
        elements.push((index, offset, bits));
    }
    for (&offset, &bits) in &slots {
        case.ty.place(&mut buffer, byte_offset, offset, bits);
    }
    Model {
        byte_offset,
        buffer,
        elements,
    }
}

/// The case written with the checked writer, as aligned bytes.
fn write(case: &Case, m: &Model) -> Result<AlignedBytes, TestCaseError> {
    let d = TensorDescriptor::new(case.ty.writer(), case.layout.writer(&case.shape), case.shape.clone())
        .with_buffer(BufferHandle::new(m.buffer.len() as u64))
        .with_byte_offset(m.byte_offset);
    let refused = |e: hurray_writer::Error| fail(format!("the checked writer refuses: {e}"));
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).map_err(refused)?;
    w.write_tensor("t", &d, vec![BufferData::Bytes(&m.buffer)])
        .map_err(refused)?;
    Ok(AlignedBytes::from_slice(&w.finish().map_err(refused)?))
}

/// `DenseView::get` for every element, compared by bit pattern.
fn check_typed<T: Element + fmt::Debug>(t: &Tensor<'_>, m: &Model, bits: fn(T) -> u128) -> Result<(), TestCaseError> {
    let view = t
        .dense::<T>()
        .map_err(|e| fail(format!("reader: dense::<{}>: {e}", std::any::type_name::<T>())))?;
    for (index, offset, expected) in &m.elements {
        let got = view
            .get(index)
            .map_err(|e| fail(format!("reader: get({index:?}) (model offset {offset}): {e}")))?;
        prop_assert_eq!(
            bits(*got),
            *expected,
            "get({:?}) at model offset {} reads {:?}",
            index,
            offset,
            got
        );
    }
    Ok(())
}

fn check(case: &Case) -> Result<(), TestCaseError> {
    let m = model(case);
    let bytes = write(case, &m)?;
    let file = HurrayFile::parse(&bytes, Options::strict()).map_err(|e| fail(format!("reader: parse: {e}")))?;
    file.validate().map_err(|e| fail(format!("reader: validate: {e}")))?;
    let t = file.tensor("t").map_err(|e| fail(format!("reader: tensor: {e}")))?;
    prop_assert_eq!(t.not_viewable(), None, "reader: not viewable");
    let buffer = t.buffer(0).map_err(|e| fail(format!("reader: buffer 0: {e}")))?;
    prop_assert_eq!(buffer.bytes(), &m.buffer[..], "buffer 0 bytes");
    let addressing = t.addressing().map_err(|e| fail(format!("reader: addressing: {e}")))?;
    let indices: Vec<Vec<u64>> = logical_indices(&case.shape).collect();
    prop_assert!(
        indices.iter().eq(m.elements.iter().map(|(index, _, _)| index)),
        "logical_indices walks {:?}",
        indices
    );
    let origin = case.ty.origin(m.byte_offset).map(i128::from);
    for (index, offset, bits) in &m.elements {
        let position = addressing
            .position(index)
            .map_err(|e| fail(format!("reader: position({index:?}) (model offset {offset}): {e}")))?;
        if let Some(origin) = origin {
            prop_assert_eq!(
                i128::from(position),
                origin + offset,
                "position({:?}): model offset {} from element origin {}",
                index,
                offset,
                origin
            );
        }
        let got = t
            .dense_value(index)
            .map_err(|e| fail(format!("reader: dense_value({index:?}) (model offset {offset}): {e}")))?;
        let expected = case.ty.value(*bits);
        prop_assert!(
            same(&got, &expected),
            "dense_value({:?}) at model offset {} (bits {:#x}) = {:?}, expected {:?}",
            index,
            offset,
            bits,
            got,
            expected
        );
    }
    match case.ty {
        Ty::Float32 => check_typed::<f32>(&t, &m, |v| u128::from(v.to_bits())),
        Ty::Float64 => check_typed::<f64>(&t, &m, |v| u128::from(v.to_bits())),
        Ty::Int8 => check_typed::<i8>(&t, &m, |v| u128::from(v as u8)),
        Ty::Uint16 => check_typed::<u16>(&t, &m, u128::from),
        Ty::Int64 => check_typed::<i64>(&t, &m, |v| u128::from(v as u64)),
        Ty::Float16 => check_typed::<f16>(&t, &m, |v| u128::from(v.to_bits())),
        Ty::Bfloat16 => check_typed::<bf16>(&t, &m, |v| u128::from(v.to_bits())),
        Ty::Complex64 => check_typed::<Complex<f32>>(&t, &m, |v| {
            u128::from(v.re.to_bits()) | u128::from(v.im.to_bits()) << 32
        }),
        Ty::Complex128 => check_typed::<Complex<f64>>(&t, &m, |v| {
            u128::from(v.re.to_bits()) | u128::from(v.im.to_bits()) << 64
        }),
        Ty::Float8E4m3 => check_typed::<Float8E4m3>(&t, &m, |v| u128::from(v.0)),
        Ty::Bool | Ty::Int4 | Ty::Uint2 | Ty::Float6E2m3 => Ok(()),
    }
}

// ---------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------

/// Dimensions 0-6, zero less often (one zero empties the tensor).
fn dim() -> impl Strategy<Value = u64> {
    prop_oneof![1 => Just(0u64), 10 => 1u64..=6]
}

fn shape() -> impl Strategy<Value = Vec<u64>> {
    vec(dim(), 1..=4)
}

/// Strides that lay `shape` out densely with the dimensions in the order
/// `perm` (slowest first).
fn dense_strides(shape: &[u64], perm: &[usize]) -> Vec<i64> {
    let mut strides = vec![0i64; shape.len()];
    let mut step = 1i64;
    for &k in perm.iter().rev() {
        strides[k] = step;
        step *= shape[k].max(1) as i64;
    }
    strides
}

/// `layouts/strided.md`: any strides — negative, zero (broadcast), gaps,
/// overlaps — or a permutation of dense strides with random signs.
fn strides(shape: Vec<u64>) -> BoxedStrategy<Vec<i64>> {
    let rank = shape.len();
    let dense = (permutation(rank), vec(any::<bool>(), rank)).prop_map(move |(perm, negative)| {
        dense_strides(&shape, &perm)
            .into_iter()
            .zip(negative)
            .map(|(s, n)| if n { -s } else { s })
            .collect()
    });
    prop_oneof![vec(-7i64..=7, rank), dense].boxed()
}

/// Tile grid strides: non-negative along dimensions with more than one tile
/// (grids reaching before slot 0 are tested in `dense_buffer_sizes.rs`), any
/// along the others. Random ones may leave gaps or put two tiles in one slot.
fn grid_strides(grid: Vec<u64>) -> BoxedStrategy<Vec<i64>> {
    let random: Vec<BoxedStrategy<i64>> = grid
        .iter()
        .map(|&g| {
            if g <= 1 {
                (-3i64..=3).boxed()
            } else {
                (0i64..=6).boxed()
            }
        })
        .collect();
    let dense = permutation(grid.len()).prop_map(move |perm| dense_strides(&grid, &perm));
    prop_oneof![random, dense].boxed()
}

/// Strides inside a tile that keep every in-tile offset in
/// `0..product(tile_shape)`: random ones when they do (zero strides and
/// overlaps included), otherwise a dense permutation.
fn in_tile_strides(tile: Vec<u64>) -> BoxedStrategy<Vec<i64>> {
    let elements = count(&tile) as i64;
    let random: Vec<BoxedStrategy<i64>> = tile
        .iter()
        .map(|&t| {
            if t == 1 {
                (-3i64..=3).boxed()
            } else {
                (0..elements).boxed()
            }
        })
        .collect();
    (random, permutation(tile.len()))
        .prop_map(move |(random, perm)| {
            let (lo, hi) = reach(&tile, &wide(&random));
            if lo >= 0 && hi < i128::from(elements) {
                random
            } else {
                dense_strides(&tile, &perm)
            }
        })
        .boxed()
}

/// One tiled level over `shape` (tiles of 1 to `shape[k] + 1`, at most 5),
/// recursing up to three levels.
fn tiling(shape: Vec<u64>, depth: u32) -> BoxedStrategy<Tiling> {
    let tile: Vec<RangeInclusive<u64>> = shape.iter().map(|&n| 1..=(n.max(1) + 1).min(5)).collect();
    tile.prop_flat_map(move |tile_shape| {
        let grid: Vec<u64> = shape.iter().zip(&tile_shape).map(|(&n, &t)| n.div_ceil(t)).collect();
        let outer = prop_oneof![
            Just(Order::RowMajor),
            Just(Order::ColumnMajor),
            grid_strides(grid).prop_map(Order::Strided),
        ];
        let flat = prop_oneof![
            Just(Inner::RowMajor),
            Just(Inner::ColumnMajor),
            in_tile_strides(tile_shape.clone()).prop_map(Inner::Strided),
        ];
        let inner = if depth < 3 {
            prop_oneof![
                3 => flat,
                1 => tiling(tile_shape.clone(), depth + 1).prop_map(|t| Inner::Tiled(Box::new(t))),
            ]
            .boxed()
        } else {
            flat.boxed()
        };
        (Just(tile_shape), outer, inner).prop_map(|(tile_shape, outer, inner)| Tiling {
            tile_shape,
            outer,
            inner,
        })
    })
    .boxed()
}

/// Morton bits: enough for each dimension, sometimes one more; at most 12 in
/// all (4096 slots).
fn morton_bits(shape: Vec<u64>) -> impl Strategy<Value = Vec<u32>> {
    let per_dim: Vec<RangeInclusive<u32>> = shape.iter().map(|&n| bits_needed(n)..=bits_needed(n) + 1).collect();
    per_dim.prop_filter("at most 12 Morton bits", |bits| bits.iter().sum::<u32>() <= 12)
}

/// Every index's Morton code below `2^sum(morton_bits)`. With unequal bits,
/// bit `b` of dimension `d` lands at `b * rank + d`, which can pass the
/// buffer of `layouts/morton.md` § Buffer Size; both sides refuse such
/// shapes (intended: `dense_addressing.rs`, `morton_codes_must_fit_the_buffer`).
fn morton_codes_fit(shape: &[u64], bits: &[u32]) -> bool {
    let total: u32 = bits.iter().sum();
    all_indices(shape).iter().all(|i| morton(i, bits) < 1 << total)
}

fn shaped_layout() -> impl Strategy<Value = (Vec<u64>, Lay)> {
    prop_oneof![
        2 => shape().prop_map(|s| (s, Lay::RowMajor)),
        2 => shape().prop_map(|s| (s, Lay::ColumnMajor)),
        4 => shape().prop_flat_map(|s| (Just(s.clone()), strides(s).prop_map(Lay::Strided))),
        6 => shape().prop_flat_map(|s| (Just(s.clone()), tiling(s, 1).prop_map(Lay::Tiled))),
        3 => shape()
            .prop_flat_map(|s| (Just(s.clone()), morton_bits(s)))
            .prop_filter("Morton codes past 2^sum(morton_bits) (refused, intended)", |(s, bits)| {
                morton_codes_fit(s, bits)
            })
            .prop_map(|(s, bits)| (s, Lay::Morton(bits))),
        2 => prop_oneof![(Just(2usize), 1u32..=3), (Just(3usize), 1u32..=2)]
            .prop_map(|(rank, order)| (vec![1u64 << order; rank], Lay::Hilbert(order))),
    ]
}

/// Cases with a `byte_offset` that is a whole number of elements (groups
/// for 6-bit types), as the reader addresses today.
fn whole_cases() -> impl Strategy<Value = Case> {
    (
        select(TYPES.to_vec()),
        shaped_layout(),
        prop_oneof![3 => Just(0u64), 1 => 1u64..=3],
        any::<u64>(),
    )
        .prop_map(|(ty, (shape, layout), extra_units, seed)| Case {
            ty,
            shape,
            layout,
            extra_units,
            misalign: 0,
            garbage: false,
            seed,
        })
}

/// Cases whose `byte_offset` the alignment rules allow but which is not a
/// whole number of elements: half a complex element (complex64 aligns to 4
/// bytes, complex128 to 8: `element-types.md` § Type Properties Summary) or
/// a float6 group starting 1 or 2 bytes past a multiple of 3 (6-bit types
/// align to 1 byte; elements are addressed in groups from `byte_offset`,
/// `memory-layout.md` § Sub-Byte Types).
fn split_element_cases() -> impl Strategy<Value = Case> {
    (
        select(vec![Ty::Complex64, Ty::Complex128, Ty::Float6E2m3]),
        shaped_layout(),
        0u64..=2,
        1u64..=2,
        any::<u64>(),
    )
        .prop_map(|(ty, (shape, layout), extra_units, misalign, seed)| {
            let misalign = match ty {
                Ty::Complex64 => 4,
                Ty::Complex128 => 8,
                _ => misalign,
            };
            Case {
                ty,
                shape,
                layout,
                extra_units,
                misalign,
                garbage: false,
                seed,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(CASES)))]

    #[test]
    fn dense_layouts_match_the_spec_model(case in whole_cases()) {
        check(&case)?;
    }

    /// Slots no index reaches (tile padding, strided gaps, Morton codes
    /// past the shape) and the bytes before `byte_offset` hold random bits:
    /// their values are undefined (`layouts/tiled.md` § Boundary Padding),
    /// nothing may depend on them. Only the bits after the highest slot in
    /// its byte or group stay zero.
    #[test]
    fn unaddressed_bytes_may_hold_anything(
        case in whole_cases().prop_map(|c| Case { garbage: true, ..c })
    ) {
        check(&case)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(CASES / 2)))]

    /// A dense tensor whose `byte_offset` is not a whole number of elements
    /// (the reader refused these as not viewable before `Buffer::element_start`).
    /// `Addressing::position` is not compared here (it counts from
    /// `element_start`, not from byte 0); `dense_value` and the typed `get`
    /// must read the element at `byte_offset + offset * width` (6-bit: the
    /// group at `byte_offset + 3 * floor(offset / 4)`).
    #[test]
    fn dense_layouts_with_byte_offset_inside_an_element(case in split_element_cases()) {
        check(&case)?;
    }
}

// ---------------------------------------------------------------------------
// The model against the spec's own examples
// ---------------------------------------------------------------------------

#[test]
fn model_follows_the_spec_examples() {
    // layouts/row-major.md and column-major.md § Example: [1, 2] of [3, 4].
    assert_eq!(Lay::RowMajor.offset(&[3, 4], &[1, 2]), 6);
    assert_eq!(Lay::ColumnMajor.offset(&[3, 4], &[1, 2]), 7);
    // layouts/strided.md § Example: strides [-4, 1], [2, 3] at -5. The
    // example says the buffer covers offsets -8 to 0 (9 elements), but by
    // § Buffer Size (max_offset = 3 * 1) and by [0, 3] at offset 3, it
    // covers -8 to 3: 12 elements, the formula is followed.
    let strided = Lay::Strided(vec![-4, 1]);
    assert_eq!(strided.offset(&[3, 4], &[2, 3]), -5);
    assert_eq!(strided.offset(&[3, 4], &[0, 3]), 3);
    assert_eq!(strided.extent(&[3, 4]), (-8, 4));
    assert_eq!(Ty::Float32.byte_offset_for(-8), 32);
    // layouts/tiled.md § Example: [3, 5] of [6, 8] in [2, 4] tiles at 29.
    let tiled = Lay::Tiled(Tiling {
        tile_shape: vec![2, 4],
        outer: Order::RowMajor,
        inner: Inner::RowMajor,
    });
    assert_eq!(tiled.offset(&[6, 8], &[3, 5]), 29);
    assert_eq!(tiled.extent(&[6, 8]), (0, 48));
    assert_eq!(tiled.extent(&[5, 7]), (0, 48));
    // layouts/morton.md § Example: [2, 3] with bits [2, 2] has code 14.
    assert_eq!(morton(&[2, 3], &[2, 2]), 14);
    // layouts/hilbert.md § Conformance Check, r = 2, p = 2.
    let table = [
        [0, 0],
        [1, 0],
        [1, 1],
        [0, 1],
        [0, 2],
        [0, 3],
        [1, 3],
        [1, 2],
        [2, 2],
        [2, 3],
        [3, 3],
        [3, 2],
        [3, 1],
        [2, 1],
        [2, 0],
        [3, 0],
    ];
    for (h, x) in table.iter().enumerate() {
        assert_eq!(coords_to_hilbert(x, 2), h as u64, "{x:?}");
    }
}

/// The two Hilbert directions of the spec invert each other, and
/// consecutive indices are neighbours (`layouts/hilbert.md` § Description).
#[test]
fn model_hilbert_is_a_curve() {
    for (r, p) in [(2, 1), (2, 2), (2, 3), (3, 1), (3, 2)] {
        let mut previous: Option<Vec<u64>> = None;
        for h in 0..1u64 << (r as u32 * p) {
            let x = hilbert_to_coords(h, r, p);
            assert_eq!(coords_to_hilbert(&x, p), h, "r {r} p {p} {x:?}");
            if let Some(prev) = previous {
                let moved: u64 = prev.iter().zip(&x).map(|(a, b)| a.abs_diff(*b)).sum();
                assert_eq!(moved, 1, "r {r} p {p}: {prev:?} -> {x:?}");
            }
            previous = Some(x);
        }
    }
}

#[test]
fn model_packs_as_the_spec_examples() {
    let packed = |ty: Ty, bits: &[u128]| {
        let mut buf = vec![0u8; ty.bytes_for(bits.len() as u64) as usize];
        for (i, &b) in bits.iter().enumerate() {
            ty.place(&mut buf, 0, i as i128, b);
        }
        buf
    };
    // element-types.md § Tier 1 -- Core Types › Boolean Type, § 4-bit packing (uint4 there; int4
    // packs the same), § 2-bit packing and the 6-bit worked example.
    assert_eq!(packed(Ty::Bool, &[1, 0, 1, 1, 0]), [0x0D]);
    assert_eq!(packed(Ty::Int4, &[5, 12, 3]), [0xC5, 0x03]);
    assert_eq!(packed(Ty::Uint2, &[3, 1, 2]), [0x27]);
    assert_eq!(packed(Ty::Float6E2m3, &[1, 2, 4, 8]), [0x81, 0x40, 0x20]);
    assert_eq!(
        packed(Ty::Float6E2m3, &[1, 2, 4, 8, 0x3F]),
        [0x81, 0x40, 0x20, 0x3F, 0, 0]
    );
    // Negative offsets before byte_offset: offset -1 is the last element of
    // the byte (group) before.
    let mut buf = [0u8; 2];
    Ty::Int4.place(&mut buf, 1, -1, 0xA);
    assert_eq!(buf, [0xA0, 0]);
    // Values: float6_e2m3 (bias 1), float8_e4m3 (bias 7), float16.
    assert!(same(&Ty::Float6E2m3.value(0x08), &Value::Float(1.0)));
    // The largest: element-types.md writes `(1 + 7/8) * 2^(3-1) = 3.75`;
    // the product is 7.5 (OCP MX v1.0 § 5.3 agrees).
    assert!(same(&Ty::Float6E2m3.value(0x1F), &Value::Float(7.5)));
    assert!(same(&Ty::Float6E2m3.value(0x21), &Value::Float(-0.125)));
    assert!(same(&Ty::Float6E2m3.value(0x20), &Value::Float(-0.0)));
    assert!(same(&Ty::Float8E4m3.value(0x7E), &Value::Float(448.0)));
    assert!(same(&Ty::Float8E4m3.value(0x01), &Value::Float(2f64.powi(-9))));
    assert!(same(&Ty::Float8E4m3.value(0xFF), &Value::Float(f64::NAN)));
    assert!(same(&Ty::Float16.value(0x3C00), &Value::Float(1.0)));
    assert!(same(&Ty::Float16.value(0xFC00), &Value::Float(f64::NEG_INFINITY)));
    assert!(same(&Ty::Float16.value(0x0001), &Value::Float(2f64.powi(-24))));
    assert!(same(&Ty::Bfloat16.value(0x3F80), &Value::Float(1.0)));
    assert!(same(&Ty::Int4.value(0x8), &Value::Int(-8)));
    assert!(!same(&Value::Float(0.0), &Value::Float(-0.0)));
}

// ---------------------------------------------------------------------------
// Bugs found by the properties, minimised
// ---------------------------------------------------------------------------

/// float32 `[4]` in tiles of 2 (tile grid row-major); each tile tiled again
/// in tiles of 1 whose grid of 2 has `outer_strides = [2]`: the two inner
/// tiles sit in slots 0 and 2, and a first-level tile takes slots 0 to 2,
/// three elements (`layouts/tiled.md` § Element Address, step 3: the tile
/// number times the tile's elements; the writer's and the reader's own size
/// check both count three). So `[0, 1, 2, 3]` are at positions 0, 2, 3, 5
/// of a 6-element buffer. The reader's addressing took a first-level tile
/// as two elements (one per inner tile, ignoring the inner grid's strides:
/// `view/dense.rs` `padded_elements`) and read `[2]` and `[3]` at 2 and 4;
/// inner grids whose tiles share slots (zero strides) were misaddressed the
/// same way, one slot per tile.
/// Found by the properties above before the fix (shrunk: float32 `[1, 2]`,
/// tiles `[2, 1]`, inner tiles `[1, 1]` with grid strides `[2, 0]`).
#[test]
fn nested_strided_tile_grid_is_addressed_by_its_slots() {
    let layout = hurray_writer::Layout::Tiled(Tiled {
        tile_shape: vec![2],
        outer: TileOrder::RowMajor,
        inner: TileInner::Tiled(Box::new(Tiled {
            tile_shape: vec![1],
            outer: TileOrder::Strided(vec![2]),
            inner: TileInner::RowMajor,
        })),
    });
    let stored: Vec<u8> = [10.0f32, 0.0, 11.0, 12.0, 0.0, 13.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let d = TensorDescriptor::new(hurray_writer::ElementType::Float32, layout, vec![4])
        .with_buffer(BufferHandle::new(stored.len() as u64));
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.write_tensor("t", &d, vec![BufferData::Bytes(&stored)]).unwrap();
    let bytes = AlignedBytes::from_slice(&w.finish().unwrap());
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    assert_eq!(file.validate(), Ok(()));
    let t = file.tensor("t").unwrap();
    let addressing = t.addressing().unwrap();
    let view = t.dense::<f32>().unwrap();
    let positions: Vec<_> = (0..4).map(|i| addressing.position(&[i])).collect();
    let values: Vec<_> = (0..4).map(|i| view.get(&[i]).copied()).collect();
    assert_eq!(positions, [Ok(0), Ok(2), Ok(3), Ok(5)]);
    assert_eq!(values, [Ok(10.0), Ok(11.0), Ok(12.0), Ok(13.0)]);
}
