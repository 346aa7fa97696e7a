//! Writes the malformed-file corpus `fixtures/invalid/`: one small file per
//! rule, each a valid base with exactly one thing broken, and
//! `manifest.json` naming the rule, the spec section, the stage at which a
//! strict reader must reject the file and the error it must give.
//!
//! ```text
//! cargo run -p hurray-writer --example make_invalid -- fixtures/invalid
//! ```
//!
//! Files are built through the writer's unchecked path (`RawDescriptor`,
//! `RawTensor`, `write_tensor_unchecked`, `add_kv_raw`, `RawFileFields`);
//! the few container fields the writer cannot misplace (index framing,
//! trailer offsets, the KV count) are patched afterwards, the index CRC-32C
//! recomputed when index bytes change. The output is deterministic: a test
//! (`tests/generated_fresh.rs`) regenerates it and compares bytes.

use std::path::{Path, PathBuf};

use hurray_writer::quant::{Mxfp, Nf4, PerBlockAffine, PerChannelAffine, PerTensorAffine, ScaleType};
use hurray_writer::{
    BlockPaged, BufferData, BufferHandle, CompositeHead, CompositeMember, ElementType, ExtensionType, FileWriter,
    Layout, RawDescriptor, RawFileFields, RawTensor, Shard, Statistics, TensorDescriptor, TileInner, TileOrder, Tiled,
    WriterOptions, HAS_INDEX_CRC32C, HAS_KV_METADATA, SORTED_INDEX,
};
use serde_json::{json, Value as Json};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

use ElementType as E;

// ---------------------------------------------------------------------------
// Byte helpers.

fn f32b(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn u64b(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn u32b(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn rd64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

fn wr(b: &mut [u8], at: usize, v: &[u8]) {
    b[at..at + v.len()].copy_from_slice(v);
}

/// Trailer field offsets, from the end of the file.
const T_INDEX_OFFSET: usize = 40;
const T_INDEX_LENGTH: usize = 32;
const T_KV_OFFSET: usize = 24;
const T_KV_LENGTH: usize = 16;
const T_CRC: usize = 12;

fn trailer_u64(b: &[u8], from_end: usize) -> u64 {
    rd64(b, b.len() - from_end)
}

fn set_trailer_u64(b: &mut [u8], from_end: usize, v: u64) {
    let at = b.len() - from_end;
    wr(b, at, &v.to_le_bytes());
}

fn set_trailer_u32(b: &mut [u8], from_end: usize, v: u32) {
    let at = b.len() - from_end;
    wr(b, at, &v.to_le_bytes());
}

fn index_start(b: &[u8]) -> usize {
    trailer_u64(b, T_INDEX_OFFSET) as usize
}

fn kv_start(b: &[u8]) -> usize {
    trailer_u64(b, T_KV_OFFSET) as usize
}

/// Recomputes the index CRC-32C after index bytes were patched.
fn fix_crc(b: &mut [u8]) {
    let start = index_start(b);
    let len = trailer_u64(b, T_INDEX_LENGTH) as usize;
    let crc = crc32c::crc32c(&b[start..start + len]);
    set_trailer_u32(b, T_CRC, crc);
}

/// Inserts `n` zero bytes between the index and the trailer.
fn insert_before_trailer(b: &mut Vec<u8>, n: usize) {
    let at = b.len() - 40;
    b.splice(at..at, std::iter::repeat_n(0u8, n));
}

// ---------------------------------------------------------------------------
// Building files.

/// One tensor for the unchecked path, with optional index overrides.
struct Tn {
    name: Vec<u8>,
    desc: RawDescriptor,
    bufs: Vec<Vec<u8>>,
    /// Zero bytes written before the descriptor (an unclaimed gap).
    gap_before: usize,
    index_descriptor_length: Option<u32>,
    index_descriptor_offset: Option<u64>,
    index_data_offset: Option<u64>,
    index_data_length: Option<u64>,
    index_flags: u32,
}

impl Tn {
    fn new(name: &str, desc: RawDescriptor, bufs: Vec<Vec<u8>>) -> Self {
        Tn {
            name: name.as_bytes().to_vec(),
            desc,
            bufs,
            gap_before: 0,
            index_descriptor_length: None,
            index_descriptor_offset: None,
            index_data_offset: None,
            index_data_length: None,
            index_flags: 0,
        }
    }

    fn named(mut self, name: &str) -> Self {
        self.name = name.as_bytes().to_vec();
        self
    }

    fn with(mut self, f: impl FnOnce(&mut Tn)) -> Self {
        f(&mut self);
        self
    }

    fn d(self, f: impl FnOnce(&mut RawDescriptor)) -> Self {
        self.with(|t| f(&mut t.desc))
    }

    /// Sets every buffer's `byte_size` to its data length.
    fn fit(mut self) -> Self {
        for (h, b) in self.desc.buffers.iter_mut().zip(&self.bufs) {
            h.byte_size = b.len() as u64;
        }
        self
    }
}

type Kv = (Vec<u8>, u8, Vec<u8>);

fn write(opts: WriterOptions, kv: &[Kv], tensors: Vec<Tn>) -> Vec<u8> {
    let mut w = FileWriter::new(Vec::new(), opts).expect("writer options");
    for (k, tag, payload) in kv {
        w.add_kv_raw(k, *tag, payload).expect("kv");
    }
    for t in &tensors {
        let mut desc = vec![0u8; t.gap_before];
        let encoded = t.desc.encode().expect("encode");
        let len = encoded.len() as u32;
        desc.extend(encoded);
        let pos = w.position();
        let buffers = t.bufs.iter().map(|b| BufferData::Bytes(b)).collect();
        let mut raw = RawTensor::new(t.name.clone(), desc, buffers);
        if t.gap_before > 0 {
            raw.index_descriptor_offset = Some(pos + t.gap_before as u64);
            raw.index_descriptor_length = Some(len);
        }
        raw.index_descriptor_length = t.index_descriptor_length.or(raw.index_descriptor_length);
        raw.index_descriptor_offset = t.index_descriptor_offset.or(raw.index_descriptor_offset);
        raw.index_data_offset = t.index_data_offset;
        raw.index_data_length = t.index_data_length;
        raw.index_flags = t.index_flags;
        w.write_tensor_unchecked(raw).expect("write");
    }
    w.finish().expect("finish")
}

fn single(t: Tn) -> Vec<u8> {
    write(WriterOptions::default(), &[], vec![t])
}

fn raw_opts(raw: RawFileFields) -> WriterOptions {
    WriterOptions::default().raw(raw)
}

// ---------------------------------------------------------------------------
// Valid bases.

/// float32 `[2, 2]` row-major, values 1..4.
fn dense() -> Tn {
    let d = TensorDescriptor::row_major(E::Float32, vec![2, 2]).unwrap().to_raw();
    Tn::new("t", d, vec![f32b(&[1.0, 2.0, 3.0, 4.0])])
}

fn dense_of(ty: ElementType, shape: Vec<u64>, data: Vec<u8>) -> Tn {
    let d = TensorDescriptor::row_major(ty, shape).unwrap().to_raw();
    Tn::new("t", d, vec![data]).fit()
}

fn with_layout(layout: Layout, shape: Vec<u64>, elements: usize) -> Tn {
    let d = TensorDescriptor::new(E::Float32, layout, shape)
        .with_buffer(BufferHandle::new(4 * elements as u64))
        .to_raw();
    let values: Vec<f32> = (0..elements).map(|i| i as f32).collect();
    Tn::new("t", d, vec![f32b(&values)])
}

/// The `layouts/csc.md` worked example: float32 `[4, 5]`, nnz 5.
const VALUES: [f32; 5] = [1.0, 4.0, 3.0, 2.0, 5.0];

fn csc_with(rows: &[u64], ptr: &[u64]) -> Tn {
    let d = TensorDescriptor::csc(E::Float32, 4, 5, 5).unwrap().to_raw();
    Tn::new("t", d, vec![f32b(&VALUES), u64b(rows), u64b(ptr)])
}

fn csc() -> Tn {
    csc_with(&[0, 2, 1, 0, 2], &[0, 1, 2, 3, 4, 5])
}

/// The same matrix as CSR.
fn csr_with(cols: &[u64], ptr: &[u64]) -> Tn {
    let d = TensorDescriptor::csr(E::Float32, 4, 5, 5).unwrap().to_raw();
    Tn::new("t", d, vec![f32b(&[1.0, 2.0, 3.0, 4.0, 5.0]), u64b(cols), u64b(ptr)])
}

fn csr() -> Tn {
    csr_with(&[0, 3, 2, 1, 4], &[0, 2, 3, 5, 5])
}

/// The same matrix as COO, `indices` row by row.
fn coo_with(indices: &[u64], sorted: bool) -> Tn {
    let d = TensorDescriptor::coo(E::Float32, vec![4, 5], 5, sorted)
        .unwrap()
        .to_raw();
    Tn::new("t", d, vec![f32b(&[1.0, 2.0, 3.0, 4.0, 5.0]), u64b(indices)])
}

const COO_SORTED: [u64; 10] = [0, 0, 0, 3, 1, 2, 2, 1, 2, 4];

/// CSF float32 `[2, 3, 4]`, points (0,0,1), (0,2,3), (1,1,0).
fn csf_levels() -> Vec<Vec<u64>> {
    vec![
        vec![0, 2],       // pos_0
        vec![0, 1],       // crd_0
        vec![0, 2, 3],    // pos_1
        vec![0, 2, 1],    // crd_1
        vec![0, 1, 2, 3], // pos_2
        vec![1, 3, 0],    // crd_2
    ]
}

fn csf_with(levels: Vec<Vec<u64>>) -> Tn {
    let d = TensorDescriptor::csf(E::Float32, vec![2, 3, 4], vec![0, 1, 2], &[2, 3, 3])
        .unwrap()
        .to_raw();
    let mut bufs = vec![f32b(&[1.0, 2.0, 3.0])];
    bufs.extend(levels.iter().map(|l| u64b(l)));
    Tn::new("t", d, bufs)
}

fn csf() -> Tn {
    csf_with(csf_levels())
}

/// Block-paged float32 `[4, 1, 2]`: 2 pages of 2 tokens, `uint32` tables.
fn paged_fields(num_seqs: u32) -> BlockPaged {
    BlockPaged {
        page_size: 2,
        num_pages: 2,
        paged_axis: 0,
        num_seqs,
        kv_role: 0,
        layer_index: 0,
        block_table_index_type: 0,
    }
}

fn paged_with(num_seqs: u32, table: &[u32], seq_ptr: &[u32]) -> Tn {
    let d = TensorDescriptor::block_paged(E::Float32, [4, 1, 2], paged_fields(num_seqs), table.len() as u64)
        .unwrap()
        .to_raw();
    let pool: Vec<f32> = (0..8).map(|i| i as f32).collect();
    Tn::new("t", d, vec![f32b(&pool), u32b(table), u32b(seq_ptr)])
}

fn paged() -> Tn {
    paged_with(1, &[0, 1], &[0, 2])
}

/// int8 `[2, 4]` row-major, values 0..8.
fn int8() -> Tn {
    dense_of(E::Int8, vec![2, 4], (0..8).collect())
}

fn quantized(payload: Vec<u8>) -> Tn {
    int8().d(|d| d.quantization = Some(payload))
}

fn per_tensor() -> PerTensorAffine {
    PerTensorAffine {
        scale: 0.5,
        zero_point: 0,
    }
}

/// int8 `[2, 4]` per-channel on axis 0: scales `[0.5, 0.25]` in buffer 1.
fn per_channel_with(q: PerChannelAffine, scales: &[f32]) -> Tn {
    int8().with(|t| t.bufs.push(f32b(scales))).d(|d| {
        d.buffers.push(BufferHandle::new(4 * scales.len() as u64));
        d.quantization = Some(q.encode());
    })
}

fn pc() -> PerChannelAffine {
    PerChannelAffine {
        axis: 0,
        scale_buffer_index: 1,
        zero_point_buffer_index: None,
    }
}

/// int8 `[2, 4]` per-block on axis 1, block 2: 4 float32 scales in buffer 1.
fn pb() -> PerBlockAffine {
    PerBlockAffine {
        axis: 1,
        block_size: 2,
        scale_buffer_index: 1,
        zero_point_buffer_index: None,
        scale_type: ScaleType::Float32,
    }
}

fn per_block_with(q: PerBlockAffine, ty: ElementType) -> Tn {
    let bytes = ty_width(ty) * 8;
    let scales = 2 * 4usize.div_ceil(q.block_size.max(1) as usize);
    dense_of(ty, vec![2, 4], vec![1; bytes])
        .with(|t| t.bufs.push(f32b(&vec![0.5; scales])))
        .d(|d| {
            d.buffers.push(BufferHandle::new(4 * scales as u64));
            d.quantization = Some(q.encode());
        })
}

fn ty_width(ty: ElementType) -> usize {
    match ty {
        E::Int16 | E::UInt16 => 2,
        E::Float32 | E::Int32 => 4,
        _ => 1,
    }
}

/// uint4 `[1, 64]` NF4, block 64: one float32 absmax in buffer 1.
fn nf4_with(ty: ElementType, block_size: u32) -> Tn {
    let q = Nf4 {
        axis: 1,
        block_size,
        scale_buffer_index: 1,
    };
    let blocks = 64usize.div_ceil(block_size as usize);
    dense_of(ty, vec![1, 64], vec![0x21; 32])
        .with(|t| t.bufs.push(f32b(&vec![1.0; blocks])))
        .d(|d| {
            d.buffers.push(BufferHandle::new(4 * blocks as u64));
            d.quantization = Some(q.encode());
        })
}

/// float8_e4m3 `[1, n]` MXFP on axis 1: `n / block_size` e8m0 scales (127).
fn mxfp_with(ty: ElementType, n: u64, block_size: u32, scales: usize) -> Tn {
    let q = Mxfp {
        axis: 1,
        block_size,
        scale_buffer_index: 1,
    };
    let width = if ty == E::Float32 { 4 } else { 1 };
    dense_of(ty, vec![1, n], vec![0x38; width * n as usize])
        .with(|t| t.bufs.push(vec![127; scales]))
        .d(|d| {
            d.buffers.push(BufferHandle::new(scales as u64));
            d.quantization = Some(q.encode());
        })
}

/// A partition of float32 `[4, 2]` into two `[2, 2]` row blocks: the head
/// and its members.
fn partition_head(members: u32) -> Tn {
    let d = TensorDescriptor::composite_head(E::Float32, vec![4, 2], CompositeHead::partition(members)).to_raw();
    Tn::new("head", d, vec![])
}

fn member(name: &str, shape: Vec<u64>, offset: Vec<u64>) -> Tn {
    let n: u64 = shape.iter().product();
    let values: Vec<f32> = (0..n).map(|i| i as f32).collect();
    dense_of(E::Float32, shape, f32b(&values))
        .named(name)
        .d(|d| d.shard = Some(Shard::new(vec![4, 2], offset)))
}

fn partition_parts() -> (Tn, Tn, Tn) {
    (
        partition_head(2),
        member("m0", vec![2, 2], vec![0, 0]),
        member("m1", vec![2, 2], vec![2, 0]),
    )
}

/// An overlay of float32 `[4, 2]`: a full base and one `[2, 2]` correction.
fn overlay_parts() -> (Tn, Tn, Tn) {
    let d = TensorDescriptor::composite_head(
        E::Float32,
        vec![4, 2],
        CompositeHead::overlay(CompositeHead::COMBINE_REPLACE, 2),
    )
    .to_raw();
    let head = Tn::new("head", d, vec![]);
    let base = member("base", vec![4, 2], vec![0, 0]).d(|d| d.composite_member = Some(CompositeMember::base()));
    let fix = member("fix", vec![2, 2], vec![2, 0]).d(|d| d.composite_member = Some(CompositeMember::correction()));
    (head, base, fix)
}

fn files(parts: (Tn, Tn, Tn)) -> Vec<u8> {
    write(WriterOptions::default(), &[], vec![parts.0, parts.1, parts.2])
}

// ---------------------------------------------------------------------------
// The manifest.

/// The rule for regions out of file order, overlapping, or with a gap that is
/// neither allowed padding (the reader's `rule::LAYOUT_ORDER`).
const LAYOUT_ORDER: &str =
    "file-format.md § File Layout; NOTES.md 'Padding after a tensor's last buffer' and 'Overlapping regions'";

struct Case {
    file: String,
    rule: String,
    spec: String,
    variant: String,
    field: String,
    stage: &'static str,
    tensor: Option<String>,
    also: Option<String>,
    gap: Option<String>,
    bytes: Vec<u8>,
}

#[derive(Default)]
struct Corpus {
    cases: Vec<Case>,
}

impl Corpus {
    /// Adds a file: `stage` is `open`, `tensor`, `data` or `file`; for the
    /// last three the offending tensor defaults to `t`.
    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        file: &str,
        rule: &str,
        spec: &str,
        stage: &'static str,
        variant: &str,
        field: &str,
        bytes: Vec<u8>,
    ) -> &mut Case {
        assert!(!self.cases.iter().any(|c| c.file == file), "duplicate file name {file}");
        self.cases.push(Case {
            file: format!("{file}.hry"),
            rule: rule.into(),
            spec: spec.into(),
            variant: variant.into(),
            field: field.into(),
            stage,
            tensor: (stage != "open").then(|| "t".to_string()),
            also: None,
            gap: None,
            bytes,
        });
        self.cases.last_mut().unwrap()
    }
}

impl Case {
    fn tensor(&mut self, name: &str) -> &mut Self {
        self.tensor = Some(name.into());
        self
    }

    fn also(&mut self, what: &str) -> &mut Self {
        self.also = Some(what.into());
        self
    }

    /// Marks a file the reader does not yet answer as expected (reported by
    /// the corpus test, not failed). None at present.
    #[allow(dead_code)]
    fn gap(&mut self, what: &str) -> &mut Self {
        self.gap = Some(what.into());
        self
    }

    fn to_json(&self) -> Json {
        let mut v = json!({
            "file": self.file,
            "rule": self.rule,
            "spec": self.spec,
            "stage": self.stage,
            "expect_variant": self.variant,
            "expect_field": self.field,
        });
        if let Some(t) = &self.tensor {
            v["offending_tensor"] = json!(t);
        }
        if let Some(a) = &self.also {
            v["also_breaks"] = json!(a);
        }
        if let Some(g) = &self.gap {
            v["known_gap"] = json!(g);
        }
        v
    }
}

// ---------------------------------------------------------------------------
// Container: header and trailer.

fn container(c: &mut Corpus) {
    let hdr = "file-format.md § File Header";
    let trl = "file-format.md § Trailer";
    let mut b = single(dense());
    wr(&mut b, 0, b"HRRYFILX");
    c.add(
        "header_magic",
        "file magic is not HRRYFILE",
        hdr,
        "open",
        "BadMagic",
        "magic",
        b,
    );

    let b2 = write(
        raw_opts(RawFileFields {
            container_version: Some([2, 0]),
            ..Default::default()
        }),
        &[],
        vec![dense()],
    );
    c.add(
        "header_container_version_2",
        "container_version_major 2 is newer than supported",
        hdr,
        "open",
        "UnsupportedVersion",
        "container_version_major",
        b2,
    );
    let b = write(
        raw_opts(RawFileFields {
            container_version: Some([0, 0]),
            ..Default::default()
        }),
        &[],
        vec![dense()],
    );
    c.add(
        "header_container_version_0",
        "container_version_major 0 is older than supported (no migration path at 1.x)",
        hdr,
        "open",
        "UnsupportedVersion",
        "container_version_major",
        b,
    );
    let b = write(
        raw_opts(RawFileFields {
            header_reserved: Some([0, 1]),
            ..Default::default()
        }),
        &[],
        vec![dense()],
    );
    c.add(
        "header_reserved_10_11",
        "header _reserved (bytes 10-11) is not zero",
        hdr,
        "open",
        "Reserved",
        "_reserved",
        b,
    );
    let mut tail = [0u8; 28];
    tail[27] = 0x80;
    let b = write(
        raw_opts(RawFileFields {
            header_reserved_tail: Some(tail),
            ..Default::default()
        }),
        &[],
        vec![dense()],
    );
    c.add(
        "header_reserved_36_63",
        "header _reserved_header (bytes 36-63) is not zero",
        hdr,
        "open",
        "Reserved",
        "_reserved_header",
        b,
    );
    let b = write(
        raw_opts(RawFileFields {
            file_flags: Some(HAS_INDEX_CRC32C | 1 << 3),
            ..Default::default()
        }),
        &[],
        vec![dense()],
    );
    c.add(
        "header_file_flags_reserved_bit",
        "reserved file_flags bit 3 is set",
        "file-format.md § File Header › File Flags",
        "open",
        "Reserved",
        "file_flags",
        b,
    );
    for (name, value, why) in [
        ("0", 0u32, "0 is not a power of two"),
        ("6144", 6144, "6144 is not a power of two"),
        ("2048", 2048, "2048 is below the minimum 4096"),
        ("4mib", 4 << 20, "4 MiB is above the maximum 2 MiB"),
    ] {
        let b = write(
            raw_opts(RawFileFields {
                header_data_buffer_alignment: Some(value),
                ..Default::default()
            }),
            &[],
            vec![dense()],
        );
        c.add(
            &format!("header_data_buffer_alignment_{name}"),
            &format!("data_buffer_alignment must be a power of two in [4096, 2 MiB]: {why}"),
            hdr,
            "open",
            "Invalid",
            "data_buffer_alignment",
            b,
        );
    }
    for (value, why) in [
        (63u64, "below the 64-byte header and not a multiple of 8"),
        (68, "not a multiple of 8"),
    ] {
        let mut b = single(dense());
        wr(&mut b, 20, &value.to_le_bytes());
        c.add(
            &format!("header_first_descriptor_offset_{value}"),
            &format!("first_descriptor_offset {value} is {why}"),
            hdr,
            "open",
            "Invalid",
            "first_descriptor_offset",
            b,
        );
    }

    // Trailer.
    let mut b = single(dense());
    let n = b.len();
    wr(&mut b, n - 4, b"HRRX");
    c.add(
        "trailer_magic",
        "trailer magic is not HRRY",
        trl,
        "open",
        "BadMagic",
        "trailer_magic",
        b,
    );
    let b = write(
        raw_opts(RawFileFields {
            trailer_reserved: Some([0, 0, 1, 0]),
            ..Default::default()
        }),
        &[],
        vec![dense()],
    );
    c.add(
        "trailer_reserved",
        "trailer reserved bytes 32-35 are not zero",
        trl,
        "open",
        "Reserved",
        "trailer._reserved",
        b,
    );
    let mut b = single(dense());
    let n = b.len();
    b[n - T_CRC] ^= 1;
    c.add(
        "trailer_index_crc_mismatch",
        "HAS_INDEX_CRC32C is set and index_crc32c does not match the index bytes",
        "file-format.md § File Header › File Flags",
        "open",
        "IndexCrcMismatch",
        "index_crc32c",
        b,
    );
    let b = write(
        raw_opts(RawFileFields {
            omit_index_crc: true,
            index_crc32c: Some(0x1234_5678),
            ..Default::default()
        }),
        &[],
        vec![dense()],
    );
    c.add(
        "trailer_index_crc_without_flag",
        "index_crc32c is non-zero although HAS_INDEX_CRC32C is clear",
        "file-format.md § File Header › File Flags",
        "open",
        "Invalid",
        "index_crc32c",
        b,
    );
    let b = write(
        raw_opts(RawFileFields {
            file_flags: Some(HAS_INDEX_CRC32C | HAS_KV_METADATA),
            ..Default::default()
        }),
        &[],
        vec![dense()],
    );
    c.add(
        "trailer_kv_flag_without_section",
        "HAS_KV_METADATA is set but the trailer locates no KV section",
        "file-format.md § File Header › File Flags; NOTES.md 'HAS_KV_METADATA'",
        "open",
        "Invalid",
        "kv_offset",
        b,
    );
    let mut b = single(dense());
    set_trailer_u64(&mut b, T_INDEX_OFFSET, 1 << 40);
    c.add(
        "trailer_index_offset_past_eof",
        "index_offset lies past the end of the file",
        trl,
        "open",
        "SectionRange",
        "index_offset",
        b,
    );
    let mut b = single(dense());
    let n = b.len() as u64;
    set_trailer_u64(&mut b, T_INDEX_OFFSET, n - 32);
    set_trailer_u64(&mut b, T_INDEX_LENGTH, 8);
    c.add(
        "trailer_index_into_trailer",
        "the index range overlaps the trailer",
        trl,
        "open",
        "SectionRange",
        "index_offset",
        b,
    );
    let mut b = single(dense());
    let start = trailer_u64(&b, T_INDEX_OFFSET);
    let len = trailer_u64(&b, T_INDEX_LENGTH);
    set_trailer_u64(&mut b, T_INDEX_OFFSET, start + 4);
    set_trailer_u64(&mut b, T_INDEX_LENGTH, len - 4);
    c.add(
        "trailer_index_offset_misaligned",
        "index_offset is not a multiple of 8",
        "file-format.md § Index Section",
        "open",
        "Invalid",
        "index_offset",
        b,
    );
    let mut b = single(dense());
    let n = b.len() as u64;
    set_trailer_u64(&mut b, T_INDEX_OFFSET, n - 44);
    set_trailer_u64(&mut b, T_INDEX_LENGTH, 4);
    c.add(
        "trailer_index_length_below_8",
        "index_length is smaller than the 8-byte entry count",
        "file-format.md § Index Section › Index Encoding",
        "open",
        "Invalid",
        "index_length",
        b,
    );
    let mut b = single(dense());
    insert_before_trailer(&mut b, 8);
    c.add(
        "trailer_index_gap_before_trailer",
        "the index does not end where the trailer starts (8 bytes between them)",
        LAYOUT_ORDER,
        "open",
        "Layout",
        "index_length",
        b,
    );
}

// ---------------------------------------------------------------------------
// Footer index and region placement.

fn index(c: &mut Corpus) {
    let idx = "file-format.md § Index Section › Index Encoding";
    let place = "file-format.md § Tensor Region › Data Buffer Placement";
    let region = "file-format.md § Tensor Region";
    let b = write(
        raw_opts(RawFileFields {
            index_entry_count: Some(1000),
            ..Default::default()
        }),
        &[],
        vec![dense()],
    );
    c.add(
        "index_entry_count_too_large",
        "index_entry_count is larger than the index can hold",
        idx,
        "open",
        "CountTooLarge",
        "index_entry_count",
        b,
    );
    c.add(
        "index_name_empty",
        "a tensor name is empty (name_length 0)",
        idx,
        "open",
        "Invalid",
        "index_entry[0].name_length",
        write(
            WriterOptions::default(),
            &[],
            vec![dense().named(""), dense().named("second_tensor")],
        ),
    );
    c.add(
        "index_name_empty_only_entry",
        "the only tensor name is empty (name_length 0)",
        idx,
        "open",
        "Invalid",
        "index_entry[0].name_length",
        single(dense().named("")),
    );
    c.add(
        "index_name_invalid_utf8",
        "a tensor name is not valid UTF-8",
        idx,
        "open",
        "InvalidUtf8",
        "index_entry[0].name",
        single(dense().with(|t| t.name = vec![b'a', 0xFF, 0xFE])),
    );
    c.add(
        "index_duplicate_name",
        "two index entries have the same name",
        idx,
        "open",
        "DuplicateName",
        "index_entry[1].name",
        write(WriterOptions::default(), &[], vec![dense(), dense()]),
    );
    c.add(
        "index_entry_flags_nonzero",
        "index entry flags are not zero",
        idx,
        "open",
        "Reserved",
        "index_entry[0].flags",
        single(dense().with(|t| t.index_flags = 1)),
    );
    let b = write(
        raw_opts(RawFileFields {
            file_flags: Some(HAS_INDEX_CRC32C | SORTED_INDEX),
            ..Default::default()
        }),
        &[],
        vec![dense().named("b"), dense().named("a")],
    );
    c.add(
        "index_sorted_flag_on_unsorted_index",
        "SORTED_INDEX is set but the names are not in byte order",
        "file-format.md § File Header › File Flags",
        "open",
        "IndexNotSorted",
        "index_entry[1].name",
        b,
    );
    let mut b = single(dense());
    insert_before_trailer(&mut b, 8);
    let len = trailer_u64(&b, T_INDEX_LENGTH);
    set_trailer_u64(&mut b, T_INDEX_LENGTH, len + 8);
    fix_crc(&mut b);
    c.add(
        "index_trailing_bytes",
        "the index holds bytes after its last entry",
        idx,
        "open",
        "TrailingBytes",
        "index",
        b,
    );
    c.add(
        "index_descriptor_offset_misaligned",
        "descriptor_offset is not a multiple of 8",
        "file-format.md § Tensor Region › Descriptor Placement",
        "open",
        "Invalid",
        "index_entry[0].descriptor_offset",
        single(dense().with(|t| t.index_descriptor_offset = Some(68))),
    )
    .tensor("t");
    c.add(
        "index_descriptor_offset_in_header",
        "descriptor_offset lies inside the header, outside the tensor area",
        region,
        "open",
        "OutOfRange",
        "index_entry[0].descriptor_offset",
        single(dense().with(|t| t.index_descriptor_offset = Some(8))),
    )
    .tensor("t");
    c.add(
        "index_data_length_past_area",
        "data_offset + data_length runs past the tensor area",
        region,
        "open",
        "OutOfRange",
        "index_entry[0].data_length",
        single(dense().with(|t| t.index_data_length = Some(1 << 20))),
    )
    .tensor("t");
    let b = write(
        WriterOptions::default().first_descriptor_offset(4088),
        &[],
        vec![dense().with(|t| t.index_data_offset = Some(4096))],
    );
    c.add(
        "index_descriptor_overlaps_data",
        "the descriptor (4088..4149) overlaps its own data region at 4096",
        place,
        "open",
        "Layout",
        "index_entry[0].descriptor_length",
        b,
    )
    .tensor("t")
    .also("the data region does not hold the buffer bytes the writer placed at 8192");
    c.add(
        "index_data_offset_misaligned",
        "data_offset is not a multiple of data_buffer_alignment",
        place,
        "open",
        "DataOffsetMisaligned",
        "index_entry[0].data_offset",
        single(dense().with(|t| t.index_data_offset = Some(4096 + 64))),
    )
    .tensor("t");
    // The buffer is written one alignment unit later than the first
    // boundary after the descriptor: a zero page in between.
    let t = dense().with(|t| {
        t.bufs.insert(0, vec![0; 4096]);
        t.index_data_offset = Some(8192);
        t.index_data_length = Some(16);
    });
    c.add(
        "index_data_offset_not_first_boundary",
        "data_offset is not the first data_buffer_alignment boundary after the descriptor",
        place,
        "open",
        "Layout",
        "index_entry[0].data_offset",
        single(t),
    )
    .tensor("t");
    c.add(
        "index_gap_between_regions",
        "16 bytes between two tensors: neither padding to 8 nor padding to data_buffer_alignment",
        LAYOUT_ORDER,
        "open",
        "Layout",
        "index_entry[1].descriptor_offset",
        write(
            WriterOptions::default(),
            &[],
            vec![dense().named("a"), dense().named("b").with(|t| t.gap_before = 16)],
        ),
    )
    .tensor("b");
    c.add(
        "index_regions_overlap",
        "a's data region (data_length 4104) overlaps b's descriptor at 8192",
        LAYOUT_ORDER,
        "open",
        "Layout",
        "index_entry[1].descriptor_offset",
        write(
            WriterOptions::default(),
            &[],
            vec![
                dense().named("a").with(|t| t.index_data_length = Some(4104)),
                dense().named("b"),
            ],
        ),
    )
    .tensor("b")
    .also("a's data_length disagrees with its buffer table (checked later, when a is resolved)");
}

// ---------------------------------------------------------------------------
// KV metadata section.

fn kv_file(entries: &[Kv]) -> Vec<u8> {
    write(WriterOptions::default(), entries, vec![dense()])
}

fn kv(key: &str, tag: u8, payload: Vec<u8>) -> Kv {
    (key.as_bytes().to_vec(), tag, payload)
}

fn str_payload(len: u32, bytes: &[u8]) -> Vec<u8> {
    let mut p = len.to_le_bytes().to_vec();
    p.extend_from_slice(bytes);
    p
}

fn kv_cases(c: &mut Corpus) {
    let sec = "file-format.md § KV Metadata Section › KV Section Encoding";
    let place = "file-format.md § KV Metadata Section";
    let types = "file-format.md § KV Metadata Section › KV Value Types";
    let int = || 7i64.to_le_bytes().to_vec();
    let mut b = kv_file(&[kv("k", 0x02, int())]);
    let at = kv_start(&b);
    wr(&mut b, at, &1000u32.to_le_bytes());
    c.add(
        "kv_count_too_large",
        "kv_count is larger than the KV section can hold",
        sec,
        "open",
        "CountTooLarge",
        "kv_count",
        b,
    );
    c.add(
        "kv_key_empty",
        "a KV key is empty (key_length 0)",
        sec,
        "open",
        "Invalid",
        "kv_entry[0].key_length",
        kv_file(&[kv("", 0x02, int())]),
    );
    c.add(
        "kv_key_invalid_utf8",
        "a KV key is not valid UTF-8",
        sec,
        "open",
        "InvalidUtf8",
        "kv_entry[0].key",
        kv_file(&[(vec![b'k', 0xC3], 0x02, int())]),
    );
    c.add(
        "kv_duplicate_key",
        "two KV entries have the same key",
        sec,
        "open",
        "DuplicateKey",
        "kv_entry[1].key",
        kv_file(&[kv("k", 0x02, int()), kv("k", 0x02, int())]),
    );
    for tag in [0x08u8, 0xEF, 0xF0, 0xFF] {
        c.add(
            &format!("kv_value_tag_{tag:02x}"),
            &format!("value_tag 0x{tag:02X} is not a defined KV value type"),
            types,
            "open",
            "UnknownTag",
            "kv_entry[0].value_tag",
            kv_file(&[kv("k", tag, int())]),
        );
    }
    c.add(
        "kv_bool_byte_2",
        "a bool value byte is 2 (must be 0 or 1)",
        types,
        "open",
        "Invalid",
        "kv_entry[0].bool value",
        kv_file(&[kv("k", 0x05, vec![2])]),
    );
    c.add(
        "kv_string_length_past_section",
        "a string's length runs past the KV section",
        types,
        "open",
        "CountTooLarge",
        "kv_entry[0].string length",
        kv_file(&[kv("k", 0x01, str_payload(1000, b"ab"))]),
    );
    c.add(
        "kv_string_invalid_utf8",
        "a string value is not valid UTF-8",
        types,
        "open",
        "InvalidUtf8",
        "kv_entry[0].string bytes",
        kv_file(&[kv("k", 0x01, str_payload(2, &[0xFF, 0xFE]))]),
    );
    c.add(
        "kv_bytes_length_past_section",
        "a bytes value's length runs past the KV section",
        types,
        "open",
        "CountTooLarge",
        "kv_entry[0].bytes length",
        kv_file(&[kv("k", 0x06, str_payload(1000, b"ab"))]),
    );
    let array = |elem: u8, count: u32, rest: &[u8]| {
        let mut p = vec![elem];
        p.extend(count.to_le_bytes());
        p.extend_from_slice(rest);
        p
    };
    c.add(
        "kv_array_nested",
        "an array's element_type is 0x07 (arrays do not nest)",
        types,
        "open",
        "Invalid",
        "kv_entry[0].element_tag",
        kv_file(&[kv("k", 0x07, array(0x07, 1, &array(0x02, 1, &int())))]),
    );
    c.add(
        "kv_array_element_tag_00",
        "an array's element_type is 0x00",
        types,
        "open",
        "UnknownTag",
        "kv_entry[0].element_tag",
        kv_file(&[kv("k", 0x07, array(0x00, 1, &int()))]),
    );
    c.add(
        "kv_array_count_past_section",
        "an array's count runs past the KV section",
        types,
        "open",
        "CountTooLarge",
        "kv_entry[0].element count",
        kv_file(&[kv("k", 0x07, array(0x02, 1000, &int()))]),
    );
    // "kk" + int64: the section is 17 bytes, padded to 24; claim all 24.
    let mut b = kv_file(&[kv("kk", 0x02, int())]);
    set_trailer_u32(&mut b, T_KV_LENGTH, 24);
    c.add(
        "kv_trailing_bytes",
        "the KV section holds bytes after its last entry",
        sec,
        "open",
        "TrailingBytes",
        "KV section",
        b,
    );
    let mut b = kv_file(&[kv("k", 0x02, int())]);
    set_trailer_u64(&mut b, T_KV_OFFSET, 1 << 40);
    c.add(
        "kv_offset_past_eof",
        "kv_offset lies past the end of the file",
        place,
        "open",
        "SectionRange",
        "kv_offset",
        b,
    );
    let mut b = kv_file(&[kv("k", 0x02, int())]);
    let at = kv_start(&b) as u64;
    set_trailer_u64(&mut b, T_KV_OFFSET, at + 4);
    set_trailer_u32(&mut b, T_KV_LENGTH, 12);
    c.add(
        "kv_offset_misaligned",
        "kv_offset is not a multiple of 8",
        place,
        "open",
        "Invalid",
        "kv_offset",
        b,
    );
}

// ---------------------------------------------------------------------------
// Descriptor fixed header.

fn descriptor(c: &mut Corpus) {
    let fixed = "metadata.md § Fixed Header";
    let flags = "metadata.md § Fixed Header › Flags";
    c.add(
        "descriptor_magic",
        "descriptor magic is not HRRY",
        fixed,
        "tensor",
        "BadMagic",
        "magic",
        single(dense().d(|d| d.magic = *b"HRRX")),
    );
    c.add(
        "descriptor_version_major_2",
        "descriptor version_major 2 is newer than supported",
        "metadata.md § Version Compatibility",
        "tensor",
        "UnsupportedVersion",
        "version_major",
        single(dense().d(|d| d.version_major = 2)),
    );
    c.add(
        "descriptor_version_major_0",
        "descriptor version_major 0 is older than supported (no migration path at 1.x)",
        "metadata.md § Version Compatibility",
        "tensor",
        "UnsupportedVersion",
        "version_major",
        single(dense().d(|d| d.version_major = 0)),
    );
    c.add(
        "descriptor_length_19",
        "descriptor_length 19 is below the 20-byte fixed header (index agrees)",
        fixed,
        "tensor",
        "Invalid",
        "descriptor_length",
        single(
            dense()
                .d(|d| d.descriptor_length = Some(19))
                .with(|t| t.index_descriptor_length = Some(19)),
        ),
    )
    .also("the descriptor bytes past byte 19 are left unclaimed and non-zero (file.validate padding check)");
    c.add(
        "descriptor_length_differs_from_index",
        "the index's descriptor_length (69) differs from the descriptor's (61)",
        "file-format.md § Index Section › Index Encoding",
        "tensor",
        "DescriptorLengthMismatch",
        "index_entry[0].descriptor_length",
        single(dense().with(|t| t.index_descriptor_length = Some(69))),
    );
    for bit in [5u32, 31] {
        c.add(
            &format!("descriptor_flags_reserved_bit_{bit}"),
            &format!("reserved descriptor flag bit {bit} is set"),
            flags,
            "tensor",
            "Reserved",
            "flags",
            single(dense().d(|d| d.flags = Some(1 << bit))),
        );
    }
    c.add(
        "descriptor_extension_flag_on_builtin_type",
        "HAS_EXTENSION_TYPE (with an extension type section) on the built-in type float32",
        flags,
        "tensor",
        "Invalid",
        "flags",
        single(dense().d(|d| d.extension_type = Some(ExtensionType::integer(32, false)))),
    );
    c.add(
        "descriptor_extension_flag_missing",
        "type_tag 0xF0 (extension) without HAS_EXTENSION_TYPE",
        flags,
        "tensor",
        "Invalid",
        "flags",
        single(dense().d(|d| d.type_tag = 0xF0)),
    );
    for tag in [0x00u8, 0x47, 0x05, 0x80, 0xFF] {
        c.add(
            &format!("descriptor_type_tag_{tag:02x}"),
            &format!("type_tag 0x{tag:02X} is not a defined element type"),
            "element-types.md § Type Identifier Encoding",
            "tensor",
            "UnknownTag",
            "type_tag",
            single(dense().d(|d| d.type_tag = tag)),
        );
    }
    for tag in [0x00u8, 0x0C, 0x80, 0xFF] {
        c.add(
            &format!("descriptor_layout_tag_{tag:02x}"),
            &format!("layout_tag 0x{tag:02X} is not a defined layout"),
            "memory-layout.md § Layout Taxonomy",
            "tensor",
            "UnknownTag",
            "layout_tag",
            single(dense().d(|d| d.layout_tag = tag)),
        );
    }
    c.add(
        "descriptor_rank_65",
        "rank 65 exceeds the maximum 64",
        "data-model.md § Rank",
        "tensor",
        "Invalid",
        "rank",
        single(dense_of(E::Float32, vec![1; 65], f32b(&[1.0]))),
    );
    c.add(
        "descriptor_trailing_bytes",
        "8 unexplained bytes after the last section of a version 1.0 descriptor",
        "metadata.md § Version Compatibility",
        "tensor",
        "TrailingBytes",
        "descriptor",
        single(dense().d(|d| d.trailing_bytes = vec![0; 8])),
    );
    // The 61-byte descriptor cut to 53: buffer[0]'s handle is truncated.
    c.add(
        "descriptor_field_truncated",
        "descriptor_length (53) ends inside buffer[0]'s handle",
        fixed,
        "tensor",
        "Truncated",
        "buffer[0]",
        single(
            dense()
                .d(|d| d.descriptor_length = Some(53))
                .with(|t| t.index_descriptor_length = Some(53)),
        ),
    )
    .also("the last 8 bytes of buffer[0]'s handle are left unclaimed and non-zero (file.validate padding check)");
    c.add(
        "descriptor_dynamic_dimension",
        "a dense stored tensor has a dynamic dimension (shape[0] = 0xFFFFFFFFFFFFFFFF)",
        "data-model.md § Dynamic Dimensions",
        "tensor",
        "DynamicDimension",
        "shape[0]",
        single(dense().d(|d| d.shape = vec![u64::MAX, 2])),
    );
    c.add(
        "descriptor_element_count_overflow",
        "the dense element count 2^40 x 2^40 overflows 64 bits",
        "element-types.md § Buffer Size Calculation",
        "tensor",
        "Overflow",
        "shape",
        single(dense().d(|d| d.shape = vec![1 << 40, 1 << 40])),
    );
}

// ---------------------------------------------------------------------------
// Buffer handles and buffer placement.

fn handle(f: impl FnOnce(&mut BufferHandle)) -> Vec<u8> {
    single(dense().d(|d| f(&mut d.buffers[0])))
}

fn handles(c: &mut Corpus) {
    let h = "buffer-protocol.md § Buffer Handle";
    for a in [0u32, 32, 96] {
        c.add(
            &format!("handle_alignment_{a}"),
            &format!("buffer alignment {a}: must be a power of two >= 64 for a non-empty buffer"),
            h,
            "tensor",
            "Invalid",
            "buffer[0].alignment",
            handle(|b| b.alignment = a),
        );
    }
    for tag in [0x09u8, 0xF0, 0xFF] {
        c.add(
            &format!("handle_device_tag_{tag:02x}"),
            &format!("device_tag 0x{tag:02X} is not a defined device"),
            "buffer-protocol.md § Device Tags",
            "tensor",
            "UnknownTag",
            "buffer[0].device_tag",
            handle(|b| b.device_tag = tag),
        );
    }
    for (name, v, why) in [
        ("1_on_cpu", 1u8, "sync_mode 1 (stream) on a CPU buffer"),
        ("3", 3, "sync_mode 3 is not defined"),
        ("ff", 0xFF, "sync_mode 0xFF is not defined"),
    ] {
        c.add(
            &format!("handle_sync_mode_{name}"),
            why,
            "buffer-protocol.md § Stream and Event Synchronisation",
            "tensor",
            "Invalid",
            "buffer[0].sync_mode",
            handle(|b| b.sync_mode = v),
        );
    }
    for (name, v, why) in [
        ("04", 4u8, "memory_class 0x04 is reserved"),
        ("ff", 0xFF, "memory_class 0xFF is reserved"),
        ("peer_on_cpu", 3, "memory_class PEER (3) on a CPU buffer"),
    ] {
        c.add(
            &format!("handle_memory_class_{name}"),
            why,
            "buffer-protocol.md § Memory Class",
            "tensor",
            "Invalid",
            "buffer[0].memory_class",
            handle(|b| b.memory_class = v),
        );
    }
    c.add(
        "handle_reserved_byte",
        "buffer handle byte 15 (reserved) is not zero",
        h,
        "tensor",
        "Reserved",
        "buffer[0]._reserved",
        handle(|b| b.reserved = 1),
    );
    c.add(
        "handle_colocation",
        "buffer[1] is on device 0x01 while buffer[0] is on the CPU (one tensor, one device)",
        "buffer-protocol.md § Device Tags › Device Colocation",
        "tensor",
        "Invalid",
        "buffer[1].device_tag",
        single(csc().d(|d| d.buffers[1].device_tag = 0x01)),
    );
    c.add(
        "handle_buffer_past_data_region",
        "buffer[0] (16 bytes) runs past the tensor's data region (data_length 8)",
        "file-format.md § Tensor Region › Data Buffer Placement",
        "tensor",
        "OutOfRange",
        "buffer[0].byte_size",
        single(dense().with(|t| t.index_data_length = Some(8))),
    )
    .also("data_length 8 also disagrees with the buffer table's span, 16 (checked after placement)");
    c.add(
        "handle_alignment_not_delivered",
        "buffer[0] declares alignment 65536 but starts at offset 4096",
        "buffer-protocol.md § Alignment; NOTES.md 'Declared alignment vs delivered'",
        "tensor",
        "AlignmentNotDelivered",
        "buffer[0].alignment",
        handle(|b| b.alignment = 65536),
    );
    c.add(
        "handle_data_length_too_long",
        "the index's data_length (24) differs from the span of the buffer table (16)",
        "file-format.md § Index Section › Index Encoding; NOTES.md 'data_length'",
        "tensor",
        "DataLengthMismatch",
        "index_entry[0].data_length",
        single(dense().with(|t| t.index_data_length = Some(24))),
    );
    c.add(
        "handle_data_length_too_short",
        "the index's data_length (8) is shorter than buffer[0] (16): the buffer runs past the data region",
        "file-format.md § Tensor Region › Data Buffer Placement; § Index Section › Index Encoding (data_length)",
        "tensor",
        "OutOfRange",
        "buffer[0].byte_size",
        single(dense().with(|t| t.index_data_length = Some(8))),
    );
}

// ---------------------------------------------------------------------------
// Dense, strided, tiled, Morton and Hilbert layouts.

fn tiled(tile: Vec<u64>, inner: TileInner) -> Layout {
    Layout::Tiled(Tiled {
        tile_shape: tile,
        outer: TileOrder::RowMajor,
        inner,
    })
}

fn dense_layouts(c: &mut Corpus) {
    let size = "element-types.md § Buffer Size Calculation";
    let bs = "buffer[0].byte_size";
    c.add(
        "dense_row_major_too_small",
        "row-major float32 [2, 2] buffer of 12 bytes (needs 16)",
        size,
        "tensor",
        "BufferSize",
        bs,
        single(dense().with(|t| t.bufs[0].truncate(12)).fit()),
    );
    c.add(
        "dense_row_major_too_large",
        "row-major float32 [2, 2] buffer of 20 bytes (strict: exactly 16)",
        size,
        "tensor",
        "BufferSize",
        bs,
        single(dense().with(|t| t.bufs[0].extend([0; 4])).fit()),
    );
    c.add(
        "dense_float16_too_small",
        "float16 [2, 2] buffer of 6 bytes (needs 8)",
        size,
        "tensor",
        "BufferSize",
        bs,
        single(
            dense_of(E::Float16, vec![2, 2], vec![0; 8])
                .d(|d| d.buffers[0].byte_size = 6)
                .with(|t| t.bufs[0].truncate(6)),
        ),
    );
    c.add(
        "dense_int4_too_small",
        "int4 [3] (sub-byte, 2 per byte) buffer of 1 byte (needs 2)",
        size,
        "tensor",
        "BufferSize",
        bs,
        single(
            dense_of(E::Int4, vec![3], vec![0x21; 2])
                .d(|d| d.buffers[0].byte_size = 1)
                .with(|t| t.bufs[0].truncate(1)),
        ),
    );
    c.add(
        "dense_float6_too_large",
        "float6_e2m3 [4] (4 elements per 3 bytes) buffer of 4 bytes (exactly 3)",
        size,
        "tensor",
        "BufferSize",
        bs,
        single(dense_of(E::Float6E2M3, vec![4], vec![0; 4])),
    );
    c.add(
        "dense_scalar_column_major",
        "a scalar (rank 0) with the column-major layout",
        "data-model.md § Scalar Tensors",
        "tensor",
        "RankNotAllowed",
        "rank",
        single(Tn::new(
            "t",
            TensorDescriptor::column_major(E::Float32, vec![]).unwrap().to_raw(),
            vec![f32b(&[1.0])],
        )),
    );
    c.add(
        "dense_byte_offset_past_buffer",
        "byte_offset 32 is past the end of the 16-byte buffer",
        "memory-layout.md § Common Fields › byte_offset",
        "tensor",
        "Invalid",
        "byte_offset",
        single(dense().d(|d| d.byte_offset = 32)),
    );
    let strided = |strides: Vec<i64>| Layout::Strided { strides };
    c.add(
        "strided_buffer_too_small",
        "strided [2, 2], strides [2, 1]: 12-byte buffer (needs 16)",
        "layouts/strided.md § Buffer Size",
        "tensor",
        "BufferSize",
        bs,
        single(with_layout(strided(vec![2, 1]), vec![2, 2], 3)),
    );
    c.add(
        "strided_negative_before_start",
        "strided [2, 2], strides [-2, 1] with byte_offset 0: element [1, 0] lies before byte 0",
        "layouts/strided.md § Buffer Size",
        "tensor",
        "Invalid",
        "byte_offset",
        single(with_layout(strided(vec![-2, 1]), vec![2, 2], 4)),
    );
    let tiled_file = |layout: Layout, edit: fn(&mut Vec<u8>)| {
        single(with_layout(layout, vec![4, 4], 16).d(|d| edit(&mut d.layout_fields)))
    };
    let rule = "layouts/tiled.md § Additional Descriptor Fields";
    c.add(
        "tiled_tile_shape_zero",
        "tile_shape[0] is 0",
        rule,
        "tensor",
        "Invalid",
        "tile_shape[0]",
        tiled_file(tiled(vec![0, 2], TileInner::RowMajor), |_| {}),
    );
    c.add(
        "tiled_outer_layout_4",
        "outer_layout 0x04 (only 0x01-0x03 order the tile grid)",
        rule,
        "tensor",
        "Invalid",
        "outer_layout",
        tiled_file(tiled(vec![2, 2], TileInner::RowMajor), |f| f[16] = 4),
    );
    c.add(
        "tiled_inner_layout_5",
        "inner_layout 0x05 (only 0x01-0x04)",
        rule,
        "tensor",
        "Invalid",
        "inner_layout",
        tiled_file(tiled(vec![2, 2], TileInner::RowMajor), |f| f[17] = 5),
    );
    c.add(
        "tiled_reserved",
        "a tiled level's _reserved bytes are not zero",
        rule,
        "tensor",
        "Reserved",
        "_reserved",
        tiled_file(tiled(vec![2, 2], TileInner::RowMajor), |f| f[19] = 1),
    );
    let mut nested = tiled(vec![1, 1], TileInner::RowMajor);
    for _ in 0..8 {
        let Layout::Tiled(t) = nested else { unreachable!() };
        nested = tiled(vec![1, 1], TileInner::Tiled(Box::new(t)));
    }
    c.add(
        "tiled_nine_levels",
        "9 nested tiling levels (the maximum is 8)",
        "layouts/tiled.md § Additional Descriptor Fields",
        "tensor",
        "Invalid",
        "inner_layout",
        tiled_file(nested, |_| {}),
    );
    let morton = |bits: Vec<u32>| Layout::Morton { morton_bits: bits };
    let mrule = "layouts/morton.md § Dimension Size Constraints";
    c.add(
        "morton_bits_zero",
        "morton_bits[0] is 0",
        mrule,
        "tensor",
        "Invalid",
        "morton_bits[0]",
        single(with_layout(morton(vec![0, 1]), vec![2, 2], 2)),
    );
    c.add(
        "morton_shape_exceeds_bits",
        "shape[0] = 4 exceeds 2^morton_bits[0] = 2",
        mrule,
        "tensor",
        "Invalid",
        "morton_bits[0]",
        single(with_layout(morton(vec![1, 1]), vec![4, 2], 4)),
    );
    c.add(
        "morton_bits_sum_64",
        "sum of morton_bits is 64: the buffer would need 2^64 elements",
        "layouts/morton.md § Buffer Size",
        "tensor",
        "Overflow",
        "morton_bits",
        single(with_layout(morton(vec![32, 32]), vec![2, 2], 4)),
    );
    let hilbert = |order: u32, rank: u32| Layout::Hilbert {
        hilbert_order: order,
        hilbert_rank: rank,
    };
    let hrule = "layouts/hilbert.md § Validity Constraints";
    c.add(
        "hilbert_order_zero",
        "hilbert_order is 0",
        hrule,
        "tensor",
        "Invalid",
        "hilbert_order",
        single(with_layout(hilbert(0, 2), vec![1, 1], 1)),
    );
    c.add(
        "hilbert_rank_mismatch",
        "hilbert_rank 3 differs from the tensor's rank 2",
        hrule,
        "tensor",
        "Invalid",
        "hilbert_rank",
        single(with_layout(hilbert(1, 3), vec![2, 2], 4)),
    );
    c.add(
        "hilbert_shape_not_power",
        "shape[1] = 4 is not 2^hilbert_order = 2",
        hrule,
        "tensor",
        "Invalid",
        "shape[1]",
        single(with_layout(hilbert(1, 2), vec![2, 4], 8)),
    );
    c.add(
        "hilbert_rank_1",
        "a rank-1 Hilbert tensor (hilbert_rank must be >= 2)",
        hrule,
        "tensor",
        "RankNotAllowed",
        "rank",
        single(with_layout(hilbert(1, 1), vec![2], 2)),
    );
}

// ---------------------------------------------------------------------------
// CSC and CSR.

/// The rules shared by CSC and CSR: `base(indices, ptr)` builds the tensor,
/// `good` are its valid index and pointer arrays.
fn compressed(c: &mut Corpus, fmt: &str, base: fn(&[u64], &[u64]) -> Tn, good: (&[u64], &[u64])) {
    let (idx_name, ptr_name, outer) = match fmt {
        "csc" => ("row_indices", "col_ptr", "column"),
        _ => ("col_indices", "row_ptr", "row"),
    };
    let doc = format!("layouts/{fmt}.md");
    let sec = |s: &str| format!("{doc} § {s}");
    let t = || base(good.0, good.1);
    let mut add = |name: &str, rule: &str, spec: String, stage: &'static str, variant: &str, field: &str, b| {
        c.add(&format!("{fmt}_{name}"), rule, &spec, stage, variant, field, b);
    };
    for (rank, shape) in [(1, vec![20]), (3, vec![1, 4, 5])] {
        add(
            &format!("rank_{rank}"),
            &format!("{} must have rank 2, found {rank}", fmt.to_uppercase()),
            sec("Description"),
            "tensor",
            "RankNotAllowed",
            "rank",
            single(t().d(|d| d.shape = shape)),
        );
    }
    add(
        "buffer_count_2",
        "buffer_count 2 (must be 3)",
        sec("Buffer Table"),
        "tensor",
        "Invalid",
        "buffer_count",
        single(t().with(|t| {
            t.desc.buffers.truncate(2);
            t.bufs.truncate(2);
        })),
    );
    add(
        "buffer_count_4",
        "buffer_count 4 (must be 3)",
        sec("Buffer Table"),
        "tensor",
        "Invalid",
        "buffer_count",
        single(t().with(|t| {
            t.desc.buffers.push(BufferHandle::new(8));
            t.bufs.push(vec![0; 8]);
        })),
    );
    add(
        "reserved",
        "the 8 _reserved bytes after nnz are not zero",
        sec("Additional Descriptor Fields"),
        "tensor",
        "Reserved",
        "_reserved",
        single(t().d(|d| d.layout_fields[9] = 1)),
    );
    add(
        "byte_offset_4",
        "byte_offset 4 (must be 0 for sparse layouts)",
        "memory-layout.md § Common Fields › byte_offset".into(),
        "tensor",
        "Invalid",
        "byte_offset",
        single(t().d(|d| d.byte_offset = 4)),
    );
    for (i, role, edit) in [(0usize, "values", 16usize), (1, idx_name, 32), (2, ptr_name, 56)] {
        add(
            &format!("{role}_size"),
            &format!("buffer {i} ({role}) is {edit} bytes, not the exact size the layout requires"),
            sec("Buffer Size"),
            "tensor",
            "BufferSize",
            &format!("buffer[{i}].byte_size"),
            single(t().with(|t| t.bufs[i].resize(edit, 0)).fit()),
        );
    }
    let mut ptr = good.1.to_vec();
    ptr[0] = 1;
    add(
        "ptr_first_nonzero",
        &format!("{ptr_name}[0] is 1, must be 0"),
        sec("Storage Invariants (1)"),
        "data",
        "PtrFirst",
        &format!("{ptr_name}[0]"),
        single(base(good.0, &ptr)),
    );
    let mut ptr = good.1.to_vec();
    let last = ptr.len() - 1;
    ptr[last] = 6;
    add(
        "ptr_last_not_nnz",
        &format!("{ptr_name}[{last}] is 6, must equal nnz = 5"),
        sec("Storage Invariants (1)"),
        "data",
        "PtrLast",
        &format!("{ptr_name}[{last}]"),
        single(base(good.0, &ptr)),
    );
    let mut ptr = good.1.to_vec();
    ptr.swap(2, 3);
    if ptr[2] <= ptr[3] {
        ptr[2] = ptr[3] + 1;
    }
    add(
        "ptr_decreasing",
        &format!("{ptr_name} decreases at position 3: {ptr:?}"),
        sec("Storage Invariants (2)"),
        "data",
        "PtrDecreasing",
        &format!("{ptr_name}[3]"),
        single(base(good.0, &ptr)),
    );
    // Both layouts: the first outer slice holds the first two entries.
    let ptr2: Vec<u64> = match fmt {
        "csc" => vec![0, 2, 2, 3, 4, 5],
        _ => good.1.to_vec(),
    };
    let mut idx = good.0.to_vec();
    idx[0] = 3;
    idx[1] = 1;
    add(
        "indices_unsorted",
        &format!("{idx_name} in {outer} 0 are [3, 1]: not increasing"),
        sec("Storage Invariants (3)"),
        "data",
        "NotIncreasing",
        &format!("{idx_name}[1]"),
        single(base(&idx, &ptr2)),
    );
    let mut idx = good.0.to_vec();
    idx[0] = 1;
    idx[1] = 1;
    add(
        "indices_duplicate",
        &format!("{idx_name} in {outer} 0 are [1, 1]: a duplicate"),
        sec("Storage Invariants (3)"),
        "data",
        "NotIncreasing",
        &format!("{idx_name}[1]"),
        single(base(&idx, &ptr2)),
    );
    let mut idx = good.0.to_vec();
    let bound = if fmt == "csc" { 4 } else { 5 };
    idx[4] = bound;
    add(
        "index_out_of_bounds",
        &format!("{idx_name}[4] = {bound} is not below its dimension {bound}"),
        sec("Storage Invariants (4)"),
        "data",
        "IndexOutOfBounds",
        &format!("{idx_name}[4]"),
        single(base(&idx, good.1)),
    );
    add(
        "nnz_overflow",
        "nnz 2^62: nnz x 4 bytes of values overflows 64 bits",
        sec("Buffer Size"),
        "tensor",
        "Overflow",
        "nnz",
        single(t().d(|d| d.layout_fields[..8].copy_from_slice(&(1u64 << 62).to_le_bytes()))),
    );
}

fn csc_csr(c: &mut Corpus) {
    compressed(c, "csc", csc_with, (&[0, 2, 1, 0, 2], &[0, 1, 2, 3, 4, 5]));
    compressed(c, "csr", csr_with, (&[0, 3, 2, 1, 4], &[0, 2, 3, 5, 5]));
}

// ---------------------------------------------------------------------------
// COO and CSF.

fn coo_csf(c: &mut Corpus) {
    let coo = |s: &str| format!("layouts/coo.md § {s}");
    let t = || coo_with(&COO_SORTED, true);
    c.add(
        "coo_buffer_count_1",
        "buffer_count 1 (must be 2)",
        &coo("Buffer Table"),
        "tensor",
        "Invalid",
        "buffer_count",
        single(t().with(|t| {
            t.desc.buffers.truncate(1);
            t.bufs.truncate(1);
        })),
    );
    c.add(
        "coo_values_size",
        "values buffer of 16 bytes (must be nnz x 4 = 20)",
        &coo("Buffer Size"),
        "tensor",
        "BufferSize",
        "buffer[0].byte_size",
        single(t().with(|t| t.bufs[0].truncate(16)).fit()),
    );
    c.add(
        "coo_indices_size",
        "indices buffer of 72 bytes (must be nnz x rank x 8 = 80)",
        &coo("Buffer Size"),
        "tensor",
        "BufferSize",
        "buffer[1].byte_size",
        single(t().with(|t| t.bufs[1].truncate(72)).fit()),
    );
    c.add(
        "coo_is_sorted_2",
        "is_sorted is 2 (must be 0 or 1)",
        &coo("Additional Descriptor Fields"),
        "tensor",
        "Invalid",
        "is_sorted",
        single(t().d(|d| d.layout_fields[8] = 2)),
    );
    c.add(
        "coo_reserved",
        "the 7 _reserved bytes after is_sorted are not zero",
        &coo("Additional Descriptor Fields"),
        "tensor",
        "Reserved",
        "_reserved",
        single(t().d(|d| d.layout_fields[12] = 1)),
    );
    let mut idx = COO_SORTED;
    idx[9] = 5;
    c.add(
        "coo_index_out_of_bounds",
        "entry 4's column index 5 is not below shape[1] = 5",
        &coo("Validity Constraints"),
        "data",
        "IndexOutOfBounds",
        "indices[9]",
        single(coo_with(&idx, true)),
    );
    let mut idx = COO_SORTED;
    idx[2] = 0;
    idx[3] = 0;
    c.add(
        "coo_duplicate_coordinates",
        "entries 0 and 1 both store (0, 0) (is_sorted = 0)",
        &coo("Validity Constraints"),
        "data",
        "CooOrder",
        "indices[2]",
        single(coo_with(&idx, false)),
    );
    let mut idx = COO_SORTED;
    idx.swap(2, 4);
    idx.swap(3, 5);
    c.add(
        "coo_sorted_flag_on_unsorted",
        "is_sorted = 1 but entry 1 (1, 2) precedes entry 2 (0, 3)",
        &coo("Validity Constraints"),
        "data",
        "CooOrder",
        "indices[4]",
        single(coo_with(&idx, true)),
    );

    let csf_doc = |s: &str| format!("layouts/csf.md § {s}");
    let d2 = TensorDescriptor::csf(E::Float32, vec![2, 3], vec![0, 1], &[2, 3])
        .unwrap()
        .to_raw();
    let bufs = vec![
        f32b(&[1.0, 2.0, 3.0]),
        u64b(&[0, 2]),
        u64b(&[0, 1]),
        u64b(&[0, 2, 3]),
        u64b(&[0, 2, 1]),
    ];
    c.add(
        "csf_rank_2",
        "a rank-2 CSF tensor (CSF needs rank >= 3)",
        &csf_doc("Description"),
        "tensor",
        "RankNotAllowed",
        "rank",
        single(Tn::new("t", d2, bufs)),
    );
    c.add(
        "csf_buffer_count_6",
        "buffer_count 6 for rank 3 (must be 2 x rank + 1 = 7)",
        &csf_doc("Buffer Table"),
        "tensor",
        "Invalid",
        "buffer_count",
        single(csf().with(|t| {
            t.desc.buffers.truncate(6);
            t.bufs.truncate(6);
        })),
    );
    c.add(
        "csf_mode_order_not_permutation",
        "mode_order [0, 0, 2] is not a permutation of 0..3",
        &csf_doc("Mode Ordering"),
        "tensor",
        "Invalid",
        "mode_order[1]",
        single(csf().d(|d| d.layout_fields[12..16].copy_from_slice(&0u32.to_le_bytes()))),
    );
    c.add(
        "csf_reserved",
        "the 8 _reserved bytes after mode_order are not zero",
        &csf_doc("Additional Descriptor Fields"),
        "tensor",
        "Reserved",
        "_reserved",
        single(csf().d(|d| d.layout_fields[20] = 1)),
    );
    let lv = |level: usize, v: Vec<u64>| {
        let mut l = csf_levels();
        l[level] = v;
        csf_with(l)
    };
    c.add(
        "csf_pos_0_first_nonzero",
        "pos_0[0] is 1, must be 0",
        &csf_doc("Storage Invariants"),
        "data",
        "PtrFirst",
        "pos_0[0]",
        single(lv(0, vec![1, 2])),
    );
    c.add(
        "csf_pos_decreasing",
        "pos_2 [0, 2, 1, 3] decreases at position 2",
        &csf_doc("Storage Invariants"),
        "data",
        "PtrDecreasing",
        "pos_2[2]",
        single(lv(4, vec![0, 2, 1, 3])),
    );
    c.add(
        "csf_crd_unsorted",
        "crd_1 under the first level-0 node is [2, 0]: not increasing",
        &csf_doc("Storage Invariants"),
        "data",
        "NotIncreasing",
        "crd_1[1]",
        single(lv(3, vec![2, 0, 1])),
    );
    c.add(
        "csf_crd_out_of_bounds",
        "crd_2[1] = 4 is not below shape[2] = 4",
        &csf_doc("Storage Invariants"),
        "data",
        "IndexOutOfBounds",
        "crd_2[1]",
        single(lv(5, vec![1, 4, 0])),
    );
}

// ---------------------------------------------------------------------------
// Block-paged.

fn block_paged(c: &mut Corpus) {
    let fields = "layouts/block-paged.md § Additional Descriptor Fields";
    let inv = "layouts/block-paged.md § Storage Invariants";
    c.add(
        "paged_rank_2",
        "a rank-2 block-paged tensor (must be [total_tokens, num_heads, head_dim])",
        "layouts/block-paged.md § Description",
        "tensor",
        "RankNotAllowed",
        "rank",
        single(paged().d(|d| d.shape = vec![4, 2])),
    );
    for (name, at, v, field, rule) in [
        ("page_size_0", 0usize, 0u8, "page_size", "page_size 0 (must be >= 1)"),
        ("paged_axis_1", 12, 1, "paged_axis", "paged_axis 1 (must be 0)"),
        ("kv_role_3", 20, 3, "kv_role", "kv_role 0x03 (must be 0x00-0x02)"),
        (
            "index_type_2",
            25,
            2,
            "block_table_index_type",
            "block_table_index_type 0x02 (must be 0x00 or 0x01)",
        ),
    ] {
        c.add(
            &format!("paged_{name}"),
            rule,
            fields,
            "tensor",
            "Invalid",
            field,
            single(paged().d(|d| d.layout_fields[at] = v)),
        );
    }
    c.add(
        "paged_reserved",
        "the 6 _reserved bytes are not zero",
        fields,
        "tensor",
        "Reserved",
        "_reserved",
        single(paged().d(|d| d.layout_fields[31] = 1)),
    );
    c.add(
        "paged_byte_offset",
        "byte_offset 4 (must be 0)",
        "memory-layout.md § Common Fields › byte_offset",
        "tensor",
        "Invalid",
        "byte_offset",
        single(paged().d(|d| d.byte_offset = 4)),
    );
    c.add(
        "paged_seq_ptr_first_nonzero",
        "seq_ptr[0] is 1, must be 0",
        inv,
        "data",
        "PtrFirst",
        "seq_ptr[0]",
        single(paged_with(1, &[0, 1], &[1, 2])),
    );
    c.add(
        "paged_seq_ptr_decreasing",
        "seq_ptr [0, 2, 1] decreases at position 2",
        inv,
        "data",
        "PtrDecreasing",
        "seq_ptr[2]",
        single(paged_with(2, &[0], &[0, 2, 1])),
    );
    c.add(
        "paged_page_id_out_of_bounds",
        "block_table[1] = 2 is not below num_pages = 2",
        inv,
        "data",
        "IndexOutOfBounds",
        "block_table[1]",
        single(paged_with(1, &[0, 2], &[0, 2])),
    );
    c.add(
        "paged_block_table_size",
        "a block_table of 3 entries where seq_ptr[num_seqs] = 2 (12 bytes, must be 8)",
        "layouts/block-paged.md § Buffer Table",
        "tensor",
        "BufferSize",
        "buffer[1].byte_size",
        single(paged_with(1, &[0, 1, 1], &[0, 2])),
    );
    // int8 pages, per-channel scales along the paged axis: one per token (4).
    let d = TensorDescriptor::block_paged(E::Int8, [4, 1, 2], paged_fields(1), 2)
        .unwrap()
        .to_raw();
    let channel = Tn::new("t", d, vec![(0..8).collect(), u32b(&[0, 1]), u32b(&[0, 2])]).d(|d| {
        d.buffers.push(BufferHandle::new(16));
        d.quantization = Some(
            PerChannelAffine {
                scale_buffer_index: 3,
                ..pc()
            }
            .encode(),
        );
    });
    c.add(
        "paged_quant_per_channel_axis_0",
        "per-channel quantization along the paged axis 0 (only num_heads or head_dim, axes 1 and 2)",
        "layouts/block-paged.md § Quantization Compatibility › Per-scheme composition",
        "tensor",
        "Invalid",
        "quantization.axis",
        single(channel.with(|t| t.bufs.push(f32b(&[0.5; 4])))),
    );
    // uint64 tables: seq_ptr[num_seqs] = 2^62 entries of 8 bytes do not fit
    // in a u64 byte size.
    let wide = BlockPaged {
        block_table_index_type: 1,
        ..paged_fields(1)
    };
    let d = TensorDescriptor::block_paged(E::Float32, [4, 1, 2], wide, 1)
        .unwrap()
        .to_raw();
    let pool: Vec<f32> = (0..8).map(|i| i as f32).collect();
    c.add(
        "paged_block_table_pages_overflow",
        "seq_ptr[num_seqs] = 2^62 uint64 block_table entries: the byte size overflows",
        "layouts/block-paged.md § Buffer Table",
        "tensor",
        "Overflow",
        "seq_ptr[1]",
        single(Tn::new("t", d, vec![f32b(&pool), u64b(&[0]), u64b(&[0, 1 << 62])])),
    );
}

// ---------------------------------------------------------------------------
// Composite tensors.

fn composite(c: &mut Corpus) {
    let head_rule = "layouts/composite.md § Head Layout-Specific Fields";
    let val = "layouts/composite.md § Validation";
    let pp = partition_parts;
    let mut add = |file: &str, rule: &str, spec: &str, variant: &str, field: &str, b: Vec<u8>| {
        c.add(file, rule, spec, "tensor", variant, field, b).tensor("head");
    };
    let (h, m0, m1) = pp();
    let h = h.with(|t| {
        t.desc.buffers.push(BufferHandle::new(8));
        t.bufs.push(vec![0; 8]);
    });
    add(
        "composite_head_buffer_count_1",
        "a composite head has a buffer (buffer_count must be 0)",
        "layouts/composite.md § Head Descriptor",
        "Invalid",
        "buffer_count",
        files((h, m0, m1)),
    );
    let (h, m0, m1) = pp();
    add(
        "composite_head_byte_offset",
        "a composite head has byte_offset 8 (must be 0)",
        "memory-layout.md § Common Fields › byte_offset",
        "Invalid",
        "byte_offset",
        files((h.d(|d| d.byte_offset = 8), m0, m1)),
    );
    for v in [0u8, 4, 0xFF] {
        let (h, m0, m1) = pp();
        add(
            &format!("composite_rule_{v:02x}"),
            &format!("composition_rule 0x{v:02X} is not defined (0x01-0x03)"),
            head_rule,
            "Invalid",
            "composition_rule",
            files((h.d(|d| d.layout_fields[0] = v), m0, m1)),
        );
    }
    let (h, m0, m1) = pp();
    add(
        "composite_partition_combine_op_1",
        "combine_op 1 on a partition (must be 0)",
        head_rule,
        "Invalid",
        "combine_op",
        files((h.d(|d| d.layout_fields[1] = 1), m0, m1)),
    );
    let (h, m0, m1) = overlay_parts();
    add(
        "composite_overlay_combine_op_0",
        "combine_op 0 on an overlay (must be REPLACE or ADD)",
        head_rule,
        "Invalid",
        "combine_op",
        files((h.d(|d| d.layout_fields[1] = 0), m0, m1)),
    );
    let (h, m0, m1) = pp();
    add(
        "composite_head_reserved",
        "the head's _reserved bytes are not zero",
        head_rule,
        "Reserved",
        "_reserved",
        files((h.d(|d| d.layout_fields[2] = 1), m0, m1)),
    );
    let (h, m0, m1) = pp();
    add(
        "composite_member_count_max",
        "member_count 0xFFFFFFFF: the reserved open-composite sentinel",
        head_rule,
        "Invalid",
        "member_count",
        files((h.d(|d| d.layout_fields[4..8].copy_from_slice(&[0xFF; 4])), m0, m1)),
    );
    let (h, _, _) = overlay_parts();
    add(
        "composite_overlay_zero_members",
        "an overlay head with member_count 0 (an overlay needs a base)",
        val,
        "Invalid",
        "member_count",
        single(h.d(|d| d.layout_fields[4..8].copy_from_slice(&0u32.to_le_bytes()))),
    );
    let (_, m0, m1) = pp();
    add(
        "composite_torn",
        "the head declares 3 members but only 2 tensors follow",
        "file-format.md § Composite Tensors",
        "TornComposite",
        "member_count",
        files((partition_head(3), m0, m1)),
    );
    let (h, m0, _) = pp();
    add(
        "composite_partition_overlap",
        "partition members m0 and m1 both cover rows 0-1",
        val,
        "Composite",
        "member 'm1': shard_offset",
        files((h, m0, member("m1", vec![2, 2], vec![0, 0]))),
    );
    let (h, m0, _) = pp();
    add(
        "composite_partition_gap",
        "partition members leave row 3 uncovered",
        val,
        "Composite",
        "member 'm1': shard_offset",
        files((h, m0, member("m1", vec![1, 2], vec![2, 0]))),
    );
    let (h, m0, m1) = pp();
    add(
        "composite_member_without_shard",
        "partition member m1 carries no shard section",
        val,
        "Composite",
        "member 'm1': flags",
        files((h, m0, m1.d(|d| d.shard = None))),
    );
    let (h, m0, m1) = pp();
    add(
        "composite_member_parent_shape",
        "member m1's parent_shape [4, 3] differs from the head's shape [4, 2]",
        val,
        "Composite",
        "member 'm1': parent_shape[1]",
        files((h, m0, m1.d(|d| d.shard = Some(Shard::new(vec![4, 3], vec![2, 0]))))),
    );
    let (h, base, fix) = overlay_parts();
    add(
        "composite_overlay_first_not_base",
        "the first overlay member has member_role CORRECTION (must be BASE)",
        val,
        "Composite",
        "member 'base': composite_member.member_role",
        files((
            h,
            base.d(|d| d.composite_member = Some(CompositeMember::correction())),
            fix,
        )),
    );
    let (h, base, fix) = overlay_parts();
    add(
        "composite_overlay_member_without_section",
        "overlay member fix carries no composite member section",
        val,
        "Composite",
        "member 'fix': flags",
        files((h, base, fix.d(|d| d.composite_member = None))),
    );
    let (h, m0, m1) = pp();
    add(
        "composite_partition_member_with_section",
        "partition member m1 carries a composite member section",
        val,
        "Composite",
        "member 'm1': flags",
        files((
            h,
            m0,
            m1.d(|d| d.composite_member = Some(CompositeMember::correction())),
        )),
    );
    let (h, m0, _) = pp();
    let m1 = Tn::new(
        "m1",
        TensorDescriptor::row_major(E::Float64, vec![2, 2]).unwrap().to_raw(),
        vec![vec![0; 32]],
    )
    .d(|d| d.shard = Some(Shard::new(vec![4, 2], vec![2, 0])));
    add(
        "composite_member_type",
        "member m1 is float64, the head float32",
        val,
        "Composite",
        "member 'm1': type_tag",
        files((h, m0, m1)),
    );
    // Nine nested group heads (each the single member of the one above).
    let mut tensors: Vec<Tn> = (0..9)
        .map(|i| {
            let d = TensorDescriptor::composite_head(E::Float32, vec![2, 2], CompositeHead::group(1)).to_raw();
            let name = if i == 0 { "head".to_string() } else { format!("g{i}") };
            Tn::new(&name, d, vec![])
        })
        .collect();
    tensors.push(dense().named("leaf"));
    c.add(
        "composite_nesting_9",
        "composite heads nested 9 deep: g8 is the ninth level (the maximum is 8)",
        "layouts/composite.md § Binding",
        "tensor",
        "Invalid",
        "layout_tag",
        write(WriterOptions::default(), &[], tensors),
    )
    .tensor("g8");
}

// ---------------------------------------------------------------------------
// Optional sections: quantization, shard, statistics, extension type,
// composite member; and the data checks of element types.

fn quantization(c: &mut Corpus) {
    let q = |s: &str| format!("quantization.md § {s}");
    let pt = |f: fn(&mut Vec<u8>)| {
        let mut p = per_tensor().encode();
        f(&mut p);
        single(quantized(p))
    };
    for v in [0x00u8, 0x06, 0x60, 0xFF] {
        let mut p = per_tensor().encode();
        p[0] = v;
        c.add(
            &format!("quant_scheme_tag_{v:02x}"),
            &format!("scheme_tag 0x{v:02X} is not a defined scheme"),
            &q("Scheme Tag Space"),
            "tensor",
            "UnknownTag",
            "quantization.scheme_tag",
            single(quantized(p)),
        );
    }
    let ptv = "quantization/per-tensor-affine.md § Validity Constraints";
    c.add(
        "quant_scheme_version_2",
        "per-tensor scheme_version 2 (must be 1)",
        &q("Descriptor Header"),
        "tensor",
        "UnsupportedVersion",
        "quantization.scheme_version",
        pt(|p| p[1] = 2),
    );
    c.add(
        "quant_reserved_flag_bits",
        "per-tensor flags bit 15 is set (no flags are defined)",
        &q("Descriptor Header"),
        "tensor",
        "Reserved",
        "quantization.flags",
        pt(|p| p[3] = 0x80),
    );
    for (name, v) in [("zero", 0.0f32), ("nan", f32::NAN), ("inf", f32::INFINITY)] {
        let mut p = per_tensor().encode();
        p[4..8].copy_from_slice(&v.to_le_bytes());
        c.add(
            &format!("quant_per_tensor_scale_{name}"),
            &format!("per-tensor scale is {name} (must be finite and > 0)"),
            ptv,
            "tensor",
            "InvalidNumber",
            "quantization.scale",
            single(quantized(p)),
        );
    }
    c.add(
        "quant_per_tensor_zero_point_range",
        "zero_point 200 is outside int8's range",
        ptv,
        "tensor",
        "InvalidNumber",
        "quantization.zero_point",
        pt(|p| p[8..12].copy_from_slice(&200i32.to_le_bytes())),
    );
    c.add(
        "quant_per_tensor_reserved",
        "the per-tensor _reserved bytes are not zero",
        ptv,
        "tensor",
        "Reserved",
        "quantization._reserved",
        pt(|p| p[13] = 1),
    );
    c.add(
        "quant_per_tensor_storage_float32",
        "per-tensor affine over float32 storage (must be an integer type)",
        "quantization/per-tensor-affine.md § Valid Storage Types",
        "tensor",
        "Invalid",
        "type_tag",
        single(dense().d(|d| d.quantization = Some(per_tensor().encode()))),
    );

    let pcr = "quantization/per-channel-affine.md § Validity Constraints";
    let pcf = |q: PerChannelAffine, f: fn(&mut Vec<u8>)| {
        let t = per_channel_with(q, &[0.5, 0.25]);
        t.d(|d| f(d.quantization.as_mut().unwrap()))
    };
    c.add(
        "quant_per_channel_axis",
        "per-channel axis 2 is not below rank 2",
        pcr,
        "tensor",
        "Invalid",
        "quantization.axis",
        single(pcf(pc(), |p| p[4] = 2)),
    );
    c.add(
        "quant_per_channel_scale_type",
        "per-channel scale_type_tag 0x01 (must be 0x03, float32)",
        pcr,
        "tensor",
        "Invalid",
        "quantization.scale_type_tag",
        single(pcf(pc(), |p| p[16] = 1)),
    );
    let zp = PerChannelAffine {
        zero_point_buffer_index: Some(2),
        ..pc()
    };
    c.add(
        "quant_per_channel_symmetric_with_zero_point",
        "SYMMETRIC is set but zero_point_buffer_index is 2 (must be 0xFFFFFFFF)",
        pcr,
        "tensor",
        "Invalid",
        "quantization.zero_point_buffer_index",
        single(pcf(zp, |p| p[2] |= 1).with(|t| {
            t.desc.buffers.push(BufferHandle::new(2));
            t.bufs.push(vec![0; 2]);
        })),
    )
    .also("buffer 2 (the zero points the flag disowns) is then an unexplained extra buffer");
    let place = "quantization.md § Buffer Table Placement Rules";
    c.add(
        "quant_per_channel_scale_index_0",
        "scale_buffer_index 0 points at the data buffer",
        place,
        "tensor",
        "Invalid",
        "quantization.scale_buffer_index",
        single(pcf(pc(), |p| p[8] = 0)),
    );
    c.add(
        "quant_per_channel_scale_index_past_count",
        "scale_buffer_index 5 is past buffer_count 2",
        place,
        "tensor",
        "Invalid",
        "quantization.scale_buffer_index",
        single(pcf(pc(), |p| p[8] = 5)),
    );
    c.add(
        "quant_per_channel_scale_size",
        "the scale buffer holds 1 float32 for 2 channels",
        "quantization/per-channel-affine.md § Referenced Buffers",
        "tensor",
        "BufferSize",
        "buffer[1].byte_size",
        single(per_channel_with(pc(), &[0.5])),
    );
    c.add(
        "quant_per_channel_scale_value_zero",
        "scale[1] is 0 (scales must be finite and > 0)",
        "quantization/per-channel-affine.md § Validity Constraints",
        "data",
        "InvalidNumber",
        "scales[1]",
        single(per_channel_with(pc(), &[0.5, 0.0])),
    );

    let pbr = "quantization/per-block-affine.md § Validity Constraints";
    for bs in [3u32, 1, 8] {
        let why = match bs {
            3 => "not a power of two",
            1 => "below 2",
            _ => "above shape[axis] = 4",
        };
        c.add(
            &format!("quant_per_block_block_size_{bs}"),
            &format!("per-block block_size {bs}: {why}"),
            pbr,
            "tensor",
            "Invalid",
            "quantization.block_size",
            single(per_block_with(PerBlockAffine { block_size: bs, ..pb() }, E::Int8)),
        );
    }
    c.add(
        "quant_per_block_scale_type_4",
        "per-block scale_type_tag 0x04 (must be 0x01-0x03)",
        "quantization/per-block-affine.md § Validity Constraints",
        "tensor",
        "Invalid",
        "quantization.scale_type_tag",
        single(per_block_with(pb(), E::Int8).d(|d| d.quantization.as_mut().unwrap()[20] = 4)),
    );
    c.add(
        "quant_per_block_storage_int16",
        "per-block affine over int16 storage (not an allowed storage type)",
        "quantization/per-block-affine.md § Valid Storage Types",
        "tensor",
        "Invalid",
        "type_tag",
        single(per_block_with(pb(), E::Int16)),
    );
    c.add(
        "quant_nf4_storage_int4",
        "NF4 over int4 storage (must be uint4)",
        "quantization/nf4.md § Valid Storage Types",
        "tensor",
        "Invalid",
        "type_tag",
        single(nf4_with(E::Int4, 64)),
    );
    c.add(
        "quant_nf4_block_size_4",
        "NF4 block_size 4 (must be a power of two >= 8)",
        "quantization/nf4.md § Validity Constraints",
        "tensor",
        "Invalid",
        "quantization.block_size",
        single(nf4_with(E::UInt4, 4)),
    );
    let mx = "quantization/mxfp.md § Validity Constraints";
    c.add(
        "quant_mxfp_block_size_8",
        "MXFP block_size 8 (must be a power of two in [16, 2048])",
        mx,
        "tensor",
        "Invalid",
        "quantization.block_size",
        single(mxfp_with(E::Float8E4M3, 32, 8, 4)),
    );
    c.add(
        "quant_mxfp_block_size_4096",
        "MXFP block_size 4096 (must be a power of two in [16, 2048])",
        mx,
        "tensor",
        "Invalid",
        "quantization.block_size",
        single(mxfp_with(E::Float8E4M3, 4096, 4096, 1)),
    );
    c.add(
        "quant_mxfp_partial_block",
        "MXFP shape[axis] 48 is not a multiple of block_size 32",
        mx,
        "tensor",
        "Invalid",
        "shape[1]",
        single(mxfp_with(E::Float8E4M3, 48, 32, 2)),
    );
    c.add(
        "quant_mxfp_storage_float32",
        "MXFP over float32 storage (not an MX element type)",
        "quantization/mxfp.md § Valid Storage Types",
        "tensor",
        "Invalid",
        "type_tag",
        single(mxfp_with(E::Float32, 32, 32, 1)),
    );
    c.add(
        "quant_mxfp_scale_ff",
        "an MXFP scale byte is 0xFF (NaN, reserved)",
        "element-types.md § Tier 2 -- Extended Types › Float8 Variants",
        "data",
        "Invalid",
        "scales[0]",
        single(mxfp_with(E::Float8E4M3, 32, 32, 1).with(|t| t.bufs[1][0] = 0xFF)),
    );
}

fn sections(c: &mut Corpus) {
    let shard = "metadata.md § Shard Section";
    c.add(
        "shard_out_of_parent",
        "shard_offset[0] + shape[0] = 4 exceeds parent_shape[0] = 3",
        shard,
        "tensor",
        "Invalid",
        "shard_offset[0]",
        single(dense().d(|d| d.shard = Some(Shard::new(vec![3, 2], vec![2, 0])))),
    );
    c.add(
        "shard_dynamic_parent",
        "parent_shape[0] is the dynamic sentinel",
        "data-model.md § Dynamic Dimensions",
        "tensor",
        "DynamicDimension",
        "parent_shape[0]",
        single(dense().d(|d| d.shard = Some(Shard::new(vec![u64::MAX, 2], vec![0, 0])))),
    );
    c.add(
        "shard_on_csf",
        "a shard section on a CSF tensor (CSF cannot be sharded)",
        "layouts/csf.md § Sharding",
        "tensor",
        "Invalid",
        "flags",
        single(csf().d(|d| d.shard = Some(Shard::new(vec![2, 3, 4], vec![0, 0, 0])))),
    );
    c.add(
        "shard_on_block_paged",
        "a shard section on a block-paged tensor",
        "layouts/block-paged.md § Sharding",
        "tensor",
        "Invalid",
        "flags",
        single(paged().d(|d| d.shard = Some(Shard::new(vec![4, 1, 2], vec![0, 0, 0])))),
    );
    let stats = "metadata.md § Statistics Section";
    c.add(
        "statistics_mask_bit_6",
        "statistics computed_mask bit 6 (reserved) is set",
        stats,
        "tensor",
        "Reserved",
        "statistics.computed_mask",
        single(dense().d(|d| {
            d.statistics = Some(Statistics {
                computed_mask: 1 << 6,
                ..Default::default()
            })
        })),
    );
    c.add(
        "statistics_reserved",
        "statistics bytes 4-7 (_reserved) are not zero",
        stats,
        "tensor",
        "Reserved",
        "statistics._reserved",
        single(dense().d(|d| {
            d.statistics = Some(Statistics {
                reserved: 1,
                ..Default::default()
            })
        })),
    );
    c.add(
        "statistics_reserved_tail",
        "statistics bytes 68-71 (_reserved2) are not zero",
        stats,
        "tensor",
        "Reserved",
        "statistics._reserved2",
        single(dense().d(|d| {
            d.statistics = Some(Statistics {
                reserved2: [0, 0, 0, 1],
                ..Default::default()
            })
        })),
    );
    let fields = "metadata.md § Statistics Section › Field Encoding";
    c.add(
        "statistics_value_stddev_negative",
        "statistics value_stddev -1.0 with VALUE_STATS_VALID set (must be >= 0.0)",
        fields,
        "tensor",
        "InvalidNumber",
        "statistics.value_stddev",
        single(dense().d(|d| d.statistics = Some(Statistics::default().with_value_stats(2.5, -1.0)))),
    );
    c.add(
        "statistics_value_stddev_nan",
        "statistics value_stddev NaN with VALUE_STATS_VALID set (NaN is not >= 0.0)",
        fields,
        "tensor",
        "InvalidNumber",
        "statistics.value_stddev",
        single(dense().d(|d| d.statistics = Some(Statistics::default().with_value_stats(2.5, f64::NAN)))),
    );
    c.add(
        "statistics_nm_n_above_nm_m",
        "statistics N:M pattern 4:2 with NM_SPARSITY_VALID set (must be nm_n <= nm_m)",
        fields,
        "tensor",
        "Invalid",
        "statistics.nm_n",
        single(dense().d(|d| d.statistics = Some(Statistics::default().with_nm_sparsity(4, 2)))),
    );
    c.add(
        "statistics_sparse_nnz_mismatch",
        "a CSC tensor's statistics nnz 4 differs from its descriptor nnz 5",
        "layouts/csc.md § Interaction with Statistics Section",
        "tensor",
        "StatisticsNnzMismatch",
        "statistics.nnz",
        single(csc().d(|d| d.statistics = Some(Statistics::default().with_nnz(4)))),
    );

    let ext = "metadata.md § Extension Type Section";
    let ext_file = |x: ExtensionType| {
        let bytes = match x.bit_width {
            4 => 2,
            _ => 4,
        };
        single(dense_of(E::UInt8, vec![4], vec![1; bytes]).d(|d| {
            d.type_tag = 0xF0;
            d.extension_type = Some(x);
        }))
    };
    for bw in [0u32, 3, 12] {
        c.add(
            &format!("extension_bit_width_{bw}"),
            &format!("extension bit_width {bw} (must be 1, 2, 4 or a multiple of 8)"),
            ext,
            "tensor",
            "Invalid",
            "extension_type.bit_width",
            ext_file(ExtensionType {
                bit_width: bw,
                ..ExtensionType::integer(8, false)
            }),
        );
    }
    c.add(
        "extension_packing_factor",
        "a 4-bit extension type with packing_factor 1 (must be 8 / 4 = 2)",
        ext,
        "tensor",
        "Invalid",
        "extension_type.packing_factor",
        ext_file(ExtensionType {
            packing_factor: 1,
            ..ExtensionType::integer(4, false)
        }),
    );
    c.add(
        "extension_is_float_2",
        "extension is_float 2 (must be 0 or 1)",
        ext,
        "tensor",
        "Invalid",
        "extension_type.is_float",
        ext_file(ExtensionType {
            is_float: 2,
            ..ExtensionType::integer(8, false)
        }),
    );
    c.add(
        "extension_integer_with_exponent",
        "an integer extension type (is_float 0) with exponent_bits 3",
        ext,
        "tensor",
        "Invalid",
        "extension_type.exponent_bits",
        ext_file(ExtensionType {
            exponent_bits: 3,
            ..ExtensionType::integer(8, false)
        }),
    );
    c.add(
        "extension_reserved",
        "the extension type's _reserved bytes are not zero",
        ext,
        "tensor",
        "Reserved",
        "extension_type._reserved",
        ext_file(ExtensionType {
            reserved: [0, 1],
            ..ExtensionType::integer(8, false)
        }),
    );

    let cm = "metadata.md § Composite Member Section";
    let (h, base, fix) = overlay_parts();
    c.add(
        "composite_member_role_2",
        "member_role 0x02 (must be 0x00 or 0x01)",
        cm,
        "tensor",
        "Invalid",
        "composite_member.member_role",
        files((
            h,
            base,
            fix.d(|d| {
                d.composite_member = Some(CompositeMember {
                    member_role: 2,
                    reserved: [0; 15],
                })
            }),
        )),
    )
    .tensor("fix");
    let (h, base, fix) = overlay_parts();
    let mut reserved = [0u8; 15];
    reserved[14] = 1;
    c.add(
        "composite_member_reserved",
        "the composite member section's _reserved bytes are not zero",
        cm,
        "tensor",
        "Reserved",
        "composite_member._reserved",
        files((
            h,
            base,
            fix.d(|d| {
                d.composite_member = Some(CompositeMember {
                    member_role: 0,
                    reserved,
                })
            }),
        )),
    )
    .tensor("fix");

    c.add(
        "data_float8_e8m0_ff",
        "a float8_e8m0 element is 0xFF (NaN, reserved)",
        "element-types.md § Tier 2 -- Extended Types › Float8 Variants",
        "data",
        "Invalid",
        "data[2]",
        single(dense_of(E::Float8E8M0, vec![4], vec![127, 127, 0xFF, 127])),
    );
    c.add(
        "data_bool_padding_bits",
        "bool [3]: padding bit 7 of the packed byte is set",
        "element-types.md § Tier 1 -- Core Types › Boolean Type (the remaining high-order bits MUST be 0)",
        "data",
        "Reserved",
        "buffer[0].padding bits",
        single(dense_of(E::Bool, vec![3], vec![0x85])),
    );
}

// ---------------------------------------------------------------------------
// Padding: only `file.validate()` reads it.

fn padding(c: &mut Corpus) {
    let rule = "file-format.md § Alignment and Padding Summary";
    let mut b = single(dense());
    b[200] = 0x01;
    c.add(
        "padding_after_descriptor",
        "a padding byte between the descriptor and the first buffer is not zero",
        rule,
        "file",
        "Reserved",
        "padding",
        b,
    );
    let mut b = single(csc());
    b[4096 + 100] = 0x01;
    c.add(
        "padding_between_buffers",
        "a padding byte between buffer 0 and buffer 1 is not zero",
        rule,
        "file",
        "Reserved",
        "padding",
        b,
    );
    let mut b = kv_file(&[kv("kk", 0x02, 7i64.to_le_bytes().to_vec())]);
    let at = kv_start(&b) + 17;
    b[at] = 0x01;
    c.add(
        "padding_after_kv_section",
        "a padding byte between the KV section and the index is not zero",
        rule,
        "file",
        "Reserved",
        "padding",
        b,
    );
}

// ---------------------------------------------------------------------------
// The valid bases, unbroken: a reader test opens each one and expects no
// error at any stage, so every corpus file breaks only what it says.

/// Each valid base file the corpus starts from, by name.
pub fn bases() -> Vec<(&'static str, Vec<u8>)> {
    let int = || 7i64.to_le_bytes().to_vec();
    let mut nested: Vec<Tn> = (0..8)
        .map(|i| {
            let d = TensorDescriptor::composite_head(E::Float32, vec![2, 2], CompositeHead::group(1)).to_raw();
            Tn::new(&format!("g{i}"), d, vec![])
        })
        .collect();
    nested.push(dense().named("leaf"));
    let mut tiled8 = tiled(vec![1, 1], TileInner::RowMajor);
    for _ in 0..7 {
        let Layout::Tiled(t) = tiled8 else { unreachable!() };
        tiled8 = tiled(vec![1, 1], TileInner::Tiled(Box::new(t)));
    }
    let ext = |x: ExtensionType, bytes: usize| {
        single(dense_of(E::UInt8, vec![4], vec![1; bytes]).d(|d| {
            d.type_tag = 0xF0;
            d.extension_type = Some(x);
        }))
    };
    vec![
        ("dense", single(dense())),
        (
            "two_tensors",
            write(
                WriterOptions::default(),
                &[],
                vec![dense().named("a"), dense().named("b")],
            ),
        ),
        (
            "sorted_index",
            write(
                WriterOptions::default().sorted_index(true),
                &[],
                vec![dense().named("b"), dense().named("a")],
            ),
        ),
        (
            "first_descriptor_offset_4088",
            write(
                WriterOptions::default().first_descriptor_offset(4088),
                &[],
                vec![dense()],
            ),
        ),
        ("kv_int", kv_file(&[kv("kk", 0x02, int())])),
        (
            "kv_types",
            kv_file(&[
                kv("s", 0x01, str_payload(2, b"ab")),
                kv("b", 0x05, vec![1]),
                kv("y", 0x06, str_payload(2, &[0xFF, 0xFE])),
                kv("a", 0x07, [&[0x02u8][..], &1u32.to_le_bytes(), &int()].concat()),
            ]),
        ),
        ("float16", single(dense_of(E::Float16, vec![2, 2], vec![0; 8]))),
        ("int4", single(dense_of(E::Int4, vec![3], vec![0x21, 0x03]))),
        ("float6", single(dense_of(E::Float6E2M3, vec![4], vec![0; 3]))),
        ("bool", single(dense_of(E::Bool, vec![3], vec![0x05]))),
        ("float8_e8m0", single(dense_of(E::Float8E8M0, vec![4], vec![127; 4]))),
        ("scalar", single(dense_of(E::Float32, vec![], f32b(&[1.0])))),
        ("rank_64", single(dense_of(E::Float32, vec![1; 64], f32b(&[1.0])))),
        (
            "strided",
            single(with_layout(Layout::Strided { strides: vec![2, 1] }, vec![2, 2], 4)),
        ),
        (
            "strided_negative",
            single(with_layout(Layout::Strided { strides: vec![-2, 1] }, vec![2, 2], 4).d(|d| d.byte_offset = 8)),
        ),
        (
            "tiled",
            single(with_layout(tiled(vec![2, 2], TileInner::RowMajor), vec![4, 4], 16)),
        ),
        ("tiled_8_levels", single(with_layout(tiled8, vec![4, 4], 16))),
        (
            "morton",
            single(with_layout(
                Layout::Morton {
                    morton_bits: vec![1, 1],
                },
                vec![2, 2],
                4,
            )),
        ),
        (
            "hilbert",
            single(with_layout(
                Layout::Hilbert {
                    hilbert_order: 1,
                    hilbert_rank: 2,
                },
                vec![2, 2],
                4,
            )),
        ),
        ("csc", single(csc())),
        ("csr", single(csr())),
        ("coo_sorted", single(coo_with(&COO_SORTED, true))),
        ("coo_unsorted", single(coo_with(&[2, 4, 0, 0, 0, 3, 1, 2, 2, 1], false))),
        ("csf", single(csf())),
        ("block_paged", single(paged())),
        ("block_paged_two_seqs", single(paged_with(2, &[0, 1], &[0, 1, 2]))),
        ("partition", files(partition_parts())),
        ("overlay", files(overlay_parts())),
        ("group_nested_8", write(WriterOptions::default(), &[], nested)),
        ("per_tensor", single(quantized(per_tensor().encode()))),
        ("per_channel", single(per_channel_with(pc(), &[0.5, 0.25]))),
        ("per_block", single(per_block_with(pb(), E::Int8))),
        ("nf4", single(nf4_with(E::UInt4, 64))),
        ("mxfp", single(mxfp_with(E::Float8E4M3, 32, 32, 1))),
        ("extension_8", ext(ExtensionType::integer(8, false), 4)),
        ("extension_4", ext(ExtensionType::integer(4, false), 2)),
        (
            "shard",
            single(dense().d(|d| d.shard = Some(Shard::new(vec![4, 2], vec![2, 0])))),
        ),
        (
            "statistics",
            single(csc().d(|d| d.statistics = Some(Statistics::default().with_nnz(5)))),
        ),
    ]
}

// ---------------------------------------------------------------------------

fn main() -> Result<()> {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "fixtures/invalid".into()));
    let manifest = generate(&dir)?;
    println!("wrote {} files to {}", manifest["file_count"], dir.display());
    Ok(())
}

/// Writes every file and `manifest.json` into `dir`; returns the manifest.
pub fn generate(dir: &Path) -> Result<Json> {
    std::fs::create_dir_all(dir)?;
    let mut c = Corpus::default();
    container(&mut c);
    index(&mut c);
    kv_cases(&mut c);
    descriptor(&mut c);
    handles(&mut c);
    dense_layouts(&mut c);
    csc_csr(&mut c);
    coo_csf(&mut c);
    block_paged(&mut c);
    composite(&mut c);
    quantization(&mut c);
    sections(&mut c);
    padding(&mut c);
    let mut entries = Vec::new();
    for case in &c.cases {
        std::fs::write(dir.join(&case.file), &case.bytes)?;
        entries.push(case.to_json());
    }
    let manifest = json!({
        "description": "Malformed Hurray files: each is a valid file with exactly one rule broken. See README.md.",
        "generator": "cargo run -p hurray-writer --example make_invalid -- fixtures/invalid",
        "file_count": entries.len(),
        "files": entries,
    });
    std::fs::write(
        dir.join("manifest.json"),
        serde_json::to_string_pretty(&manifest)? + "\n",
    )?;
    Ok(manifest)
}
