//! A tiny test-only parser of Hurray container bytes (header, trailer,
//! index, KV section, a tensor's descriptor bytes). Panics on malformed
//! input: tests only.
#![allow(dead_code)]

pub fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap())
}
pub fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
pub fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub version: [u8; 2],
    pub file_flags: u32,
    pub data_buffer_alignment: u32,
    pub first_descriptor_offset: u64,
    pub tensor_count_hint: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Trailer {
    pub index_offset: u64,
    pub index_length: u64,
    pub kv_offset: u64,
    pub kv_length: u32,
    pub index_crc32c: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub name: String,
    pub descriptor_offset: u64,
    pub descriptor_length: u32,
    pub data_offset: u64,
    pub data_length: u64,
    pub flags: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kv {
    Str(String),
    I64(i64),
    U64(u64),
    F64(u64), // bit pattern
    Bool(bool),
    Bytes(Vec<u8>),
    Array(u8, Vec<Kv>),
}

pub struct Parsed {
    pub header: Header,
    pub trailer: Trailer,
    pub entries: Vec<Entry>,
    pub kv: Vec<(String, Kv)>,
}

pub fn header(b: &[u8]) -> Header {
    assert_eq!(&b[..8], b"HRRYFILE");
    assert_eq!(&b[10..12], &[0, 0]);
    assert!(b[36..64].iter().all(|&x| x == 0));
    Header {
        version: [b[8], b[9]],
        file_flags: u32_at(b, 12),
        data_buffer_alignment: u32_at(b, 16),
        first_descriptor_offset: u64_at(b, 20),
        tensor_count_hint: u64_at(b, 28),
    }
}

pub fn trailer(b: &[u8]) -> Trailer {
    let t = &b[b.len() - 40..];
    assert_eq!(&t[36..40], b"HRRY");
    assert_eq!(&t[32..36], &[0, 0, 0, 0]);
    Trailer {
        index_offset: u64_at(t, 0),
        index_length: u64_at(t, 8),
        kv_offset: u64_at(t, 16),
        kv_length: u32_at(t, 24),
        index_crc32c: u32_at(t, 28),
    }
}

pub fn index(b: &[u8]) -> Vec<Entry> {
    let mut at = 8;
    let count = u64_at(b, 0);
    let mut out = Vec::new();
    for _ in 0..count {
        let n = u16_at(b, at) as usize;
        at += 2;
        let name = String::from_utf8(b[at..at + n].to_vec()).unwrap();
        at += n;
        out.push(Entry {
            name,
            descriptor_offset: u64_at(b, at),
            descriptor_length: u32_at(b, at + 8),
            data_offset: u64_at(b, at + 12),
            data_length: u64_at(b, at + 20),
            flags: u32_at(b, at + 28),
        });
        at += 32;
    }
    assert_eq!(at, b.len(), "index has trailing bytes");
    out
}

fn kv_value(b: &[u8], at: &mut usize, tag: u8) -> Kv {
    let take = |at: &mut usize, n: usize| {
        let s = b[*at..*at + n].to_vec();
        *at += n;
        s
    };
    match tag {
        1 => {
            let n = u32_at(b, *at) as usize;
            *at += 4;
            Kv::Str(String::from_utf8(take(at, n)).unwrap())
        }
        2 => Kv::I64(i64::from_le_bytes(take(at, 8).try_into().unwrap())),
        3 => Kv::U64(u64::from_le_bytes(take(at, 8).try_into().unwrap())),
        4 => Kv::F64(u64::from_le_bytes(take(at, 8).try_into().unwrap())),
        5 => {
            let v = take(at, 1)[0];
            assert!(v <= 1);
            Kv::Bool(v == 1)
        }
        6 => {
            let n = u32_at(b, *at) as usize;
            *at += 4;
            Kv::Bytes(take(at, n))
        }
        7 => {
            let et = b[*at];
            *at += 1;
            let n = u32_at(b, *at) as usize;
            *at += 4;
            assert!((1..=6).contains(&et));
            Kv::Array(et, (0..n).map(|_| kv_value(b, at, et)).collect())
        }
        t => panic!("bad kv tag {t}"),
    }
}

pub fn kv(b: &[u8]) -> Vec<(String, Kv)> {
    let count = u32_at(b, 0);
    let mut at = 4;
    let mut out = Vec::new();
    for _ in 0..count {
        let n = u16_at(b, at) as usize;
        at += 2;
        let key = String::from_utf8(b[at..at + n].to_vec()).unwrap();
        at += n;
        let tag = b[at];
        at += 1;
        out.push((key, kv_value(b, &mut at, tag)));
    }
    assert_eq!(at, b.len(), "kv section has trailing bytes");
    out
}

/// Parses and cross-checks a whole file.
pub fn parse(b: &[u8]) -> Parsed {
    let header = header(b);
    let trailer = trailer(b);
    let io = trailer.index_offset as usize;
    let il = trailer.index_length as usize;
    assert_eq!(io % 8, 0, "index not 8-aligned");
    assert_eq!(io + il, b.len() - 40, "index must end at the trailer");
    let index_bytes = &b[io..io + il];
    if header.file_flags & 4 != 0 {
        assert_eq!(crc32c::crc32c(index_bytes), trailer.index_crc32c, "index crc");
    }
    let entries = index(index_bytes);
    let kv = if trailer.kv_offset != 0 {
        assert_eq!(trailer.kv_offset % 8, 0);
        let ko = trailer.kv_offset as usize;
        kv(&b[ko..ko + trailer.kv_length as usize])
    } else {
        assert_eq!(trailer.kv_length, 0);
        Vec::new()
    };
    Parsed {
        header,
        trailer,
        entries,
        kv,
    }
}

/// The descriptor bytes of tensor `name` in a reference file, located via
/// its index.
pub fn descriptor_of<'a>(b: &'a [u8], name: &str) -> &'a [u8] {
    let p = parse(b);
    let e = p
        .entries
        .iter()
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("no tensor {name}"));
    let o = e.descriptor_offset as usize;
    let d = &b[o..o + e.descriptor_length as usize];
    assert_eq!(u32_at(d, 6), e.descriptor_length);
    d
}

/// Descriptor bytes of the tensor named `name` in a file we wrote.
pub fn our_descriptor(b: &[u8], name: &str) -> Vec<u8> {
    descriptor_of(b, name).to_vec()
}
