//! The quantization section of a descriptor (`quantization.md` §
//! Descriptor Header): `quantization_length`, the 4-byte scheme header, and
//! the scheme's fixed fields, which each scheme's module reads.

use super::{per_block_affine, per_channel_affine, per_tensor_affine};
use crate::cursor::Cursor;
use crate::error::{rule, Error, Field, Location, Result, Scope};
use crate::raw;

/// A quantization scheme with its fixed fields (`quantization.md`).
#[non_exhaustive]
#[derive(Debug, Clone, Copy)]
pub enum QuantScheme<'data> {
    /// 0x01.
    PerTensorAffine(&'data raw::PerTensorAffine),
    /// 0x02.
    PerChannelAffine(&'data raw::PerChannelAffine),
    /// 0x03.
    PerBlockAffine(&'data raw::PerBlockAffine),
    /// 0x04.
    Nf4(&'data raw::BlockScaled),
    /// 0x05.
    Mxfp(&'data raw::BlockScaled),
    /// A scheme this reader does not know (permissive mode only).
    Unknown,
}

impl QuantScheme<'_> {
    /// The scheme's name: `per_tensor_affine`, `per_channel_affine`,
    /// `per_block_affine`, `nf4`, `mxfp`, `unknown`.
    pub fn as_str(&self) -> &'static str {
        match self {
            QuantScheme::PerTensorAffine(_) => "per_tensor_affine",
            QuantScheme::PerChannelAffine(_) => "per_channel_affine",
            QuantScheme::PerBlockAffine(_) => "per_block_affine",
            QuantScheme::Nf4(_) => "nf4",
            QuantScheme::Mxfp(_) => "mxfp",
            QuantScheme::Unknown => "unknown",
        }
    }
}

/// The quantization section.
#[derive(Clone, Copy)]
pub struct Quantization<'data> {
    /// The 4-byte scheme header.
    pub header: &'data raw::QuantizationHeader,
    /// The decoded scheme.
    pub scheme: QuantScheme<'data>,
    /// The whole payload (`quantization_length` bytes, header included).
    pub payload: &'data [u8],
    /// Absolute offset of the payload.
    pub offset: u64,
}

/// The scheme and its fixed fields, the payload's length and first bytes.
impl std::fmt::Debug for Quantization<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Quantization")
            .field("header", self.header)
            .field("scheme", &self.scheme)
            .field("payload", &crate::debug::few(self.payload))
            .field("offset", &self.offset)
            .finish()
    }
}

/// Parses the quantization section: `quantization_length`, then the
/// payload it delimits (the cursor moves past the whole payload).
pub(crate) fn parse<'data>(c: &mut Cursor<'data>, name: &'data str, strict: bool) -> Result<Quantization<'data>> {
    let length = c.u32(Field::new("quantization_length"))?;
    let offset = c.offset();
    let payload = c.take_quiet(u64::from(length), Field::new("quantization_descriptor"))?;
    let mut q = c.sub(payload, offset, "quantization descriptor", rule::QUANT);
    let result = parse_scheme(&mut q, payload, offset, name, strict);
    c.absorb(q);
    result
}

/// The scheme header and fields inside the quantization payload.
fn parse_scheme<'data>(
    q: &mut Cursor<'data>,
    payload: &'data [u8],
    offset: u64,
    name: &'data str,
    strict: bool,
) -> Result<Quantization<'data>> {
    let scope = || Scope::tensor(name);
    let header =
        q.read_struct::<raw::QuantizationHeader>(Field::sub("quantization", "scheme_tag"), Some("quantization"))?;
    let tag = header.scheme_tag;
    let known = matches!(tag, 0x01..=0x05);
    if !known {
        let why = match tag {
            0x00 | 0xFF => "invalid",
            0x60..=0xEF => "reserved",
            _ => "not recognised",
        };
        if strict || why == "invalid" {
            return Err(Error::UnknownTag {
                at: Location {
                    scope: scope(),
                    field: Field::sub("quantization", "scheme_tag"),
                    offset,
                    rule: rule::SCHEME_TAGS,
                },
                value: tag,
                why,
            });
        }
        return Ok(Quantization {
            header,
            scheme: QuantScheme::Unknown,
            payload,
            offset,
        });
    }
    if header.scheme_version != 1 {
        return Err(Error::UnsupportedVersion {
            at: Location {
                scope: scope(),
                field: Field::sub("quantization", "scheme_version"),
                offset: offset + 1,
                rule: rule::QUANT,
            },
            found: header.scheme_version,
            supported: 1,
        });
    }
    // Only the SYMMETRIC bit of per-channel and per-block schemes is defined.
    let allowed_flags: u16 = if matches!(tag, 0x02 | 0x03) { 1 } else { 0 };
    let qflags = header.flags.get();
    if qflags & !allowed_flags != 0 {
        return Err(Error::Reserved {
            at: Location {
                scope: scope(),
                field: Field::sub("quantization", "flags"),
                offset: offset + 2,
                rule: rule::QUANT,
            },
            value: u64::from(qflags & !allowed_flags),
            byte: None,
        });
    }
    // Trailing padding after the scheme's fields is allowed
    // (quantization.md § Descriptor Header).
    let scheme = match tag {
        0x01 => QuantScheme::PerTensorAffine(per_tensor_affine::parse(q, offset, scope())?),
        0x02 => QuantScheme::PerChannelAffine(per_channel_affine::parse(q, offset, scope())?),
        0x03 => QuantScheme::PerBlockAffine(per_block_affine::parse(q, offset, scope())?),
        0x04 => QuantScheme::Nf4(
            q.read_struct::<raw::BlockScaled>(Field::sub("quantization", "axis"), Some("quantization"))?,
        ),
        _ => QuantScheme::Mxfp(
            q.read_struct::<raw::BlockScaled>(Field::sub("quantization", "axis"), Some("quantization"))?,
        ),
    };
    Ok(Quantization {
        header,
        scheme,
        payload,
        offset,
    })
}
