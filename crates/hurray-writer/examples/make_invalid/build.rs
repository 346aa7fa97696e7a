//! Writing files through the writer's unchecked path: one tensor ([`Tn`])
//! with its optional index overrides, and [`write`].

use hurray_writer::{BufferData, FileWriter, RawDescriptor, RawFileFields, RawTensor, WriterOptions};

/// One tensor for the unchecked path, with optional index overrides.
pub(super) struct Tn {
    pub(super) name: Vec<u8>,
    pub(super) desc: RawDescriptor,
    pub(super) bufs: Vec<Vec<u8>>,
    /// Zero bytes written before the descriptor (an unclaimed gap).
    pub(super) gap_before: usize,
    pub(super) index_descriptor_length: Option<u32>,
    pub(super) index_descriptor_offset: Option<u64>,
    pub(super) index_data_offset: Option<u64>,
    pub(super) index_data_length: Option<u64>,
    pub(super) index_flags: u32,
}

impl Tn {
    pub(super) fn new(name: &str, desc: RawDescriptor, bufs: Vec<Vec<u8>>) -> Self {
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

    pub(super) fn named(mut self, name: &str) -> Self {
        self.name = name.as_bytes().to_vec();
        self
    }

    pub(super) fn with(mut self, f: impl FnOnce(&mut Tn)) -> Self {
        f(&mut self);
        self
    }

    pub(super) fn d(self, f: impl FnOnce(&mut RawDescriptor)) -> Self {
        self.with(|t| f(&mut t.desc))
    }

    /// Sets every buffer's `byte_size` to its data length.
    pub(super) fn fit(mut self) -> Self {
        for (h, b) in self.desc.buffers.iter_mut().zip(&self.bufs) {
            h.byte_size = b.len() as u64;
        }
        self
    }
}

pub(super) type Kv = (Vec<u8>, u8, Vec<u8>);

pub(super) fn kv(key: &str, tag: u8, payload: Vec<u8>) -> Kv {
    (key.as_bytes().to_vec(), tag, payload)
}

pub(super) fn str_payload(len: u32, bytes: &[u8]) -> Vec<u8> {
    let mut p = len.to_le_bytes().to_vec();
    p.extend_from_slice(bytes);
    p
}

pub(super) fn write(opts: WriterOptions, kv: &[Kv], tensors: Vec<Tn>) -> Vec<u8> {
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

pub(super) fn single(t: Tn) -> Vec<u8> {
    write(WriterOptions::default(), &[], vec![t])
}

pub(super) fn raw_opts(raw: RawFileFields) -> WriterOptions {
    WriterOptions::default().raw(raw)
}
