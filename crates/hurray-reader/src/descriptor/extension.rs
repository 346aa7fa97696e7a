//! The extension type section (`metadata.md` § Extension Type Section):
//! a private element type's bit width, packing and float layout.

use crate::error::{rule, Error, Field, Location, Result, Scope};
use crate::file::reserved_zero;
use crate::raw;

/// Checks an extension type section and returns its bit width.
pub(super) fn check_extension_type(e: &raw::ExtensionType, offset: u64, name: &str) -> Result<u32> {
    let scope = || Scope::tensor(name);
    let invalid = |field: &'static str, at: u64, value: u64, expected: &'static str| Error::Invalid {
        at: Location {
            scope: scope(),
            field: Field::sub("extension_type", field),
            offset: offset + at,
            rule: rule::EXTENSION_TYPE,
        },
        value,
        expected,
    };
    let bits = e.bit_width.get();
    match bits {
        0 => return Err(invalid("bit_width", 0, 0, "greater than 0")),
        1 | 2 | 4 => {
            if u32::from(e.packing_factor) != 8 / bits {
                return Err(invalid(
                    "packing_factor",
                    4,
                    u64::from(e.packing_factor),
                    "8 / bit_width",
                ));
            }
        }
        b if b >= 8 && b % 8 == 0 => {
            if e.packing_factor != 1 {
                return Err(invalid(
                    "packing_factor",
                    4,
                    u64::from(e.packing_factor),
                    "1 for whole-byte types",
                ));
            }
        }
        other => {
            return Err(invalid(
                "bit_width",
                0,
                u64::from(other),
                "1, 2, 4 or a whole number of bytes",
            ))
        }
    }
    if e.is_float > 1 {
        return Err(invalid("is_float", 5, u64::from(e.is_float), "0 or 1"));
    }
    if e.is_float == 1 {
        if e.is_signed != 0 {
            return Err(invalid("is_signed", 6, u64::from(e.is_signed), "0 for float types"));
        }
        if e.sign_bits > 1 {
            return Err(invalid("sign_bits", 7, u64::from(e.sign_bits), "0 or 1"));
        }
    } else {
        let float_fields = [
            ("sign_bits", 7, u64::from(e.sign_bits)),
            ("exponent_bits", 8, u64::from(e.exponent_bits)),
            ("mantissa_bits", 9, u64::from(e.mantissa_bits)),
            ("exponent_bias", 12, u64::from(e.exponent_bias.get())),
        ];
        for (field, at, value) in float_fields {
            if value != 0 {
                return Err(invalid(field, at, value, "0 for integer types"));
            }
        }
        if e.is_signed > 1 {
            return Err(invalid("is_signed", 6, u64::from(e.is_signed), "0 or 1"));
        }
    }
    reserved_zero(
        &e.reserved,
        Field::sub("extension_type", "_reserved"),
        offset + 10,
        rule::EXTENSION_TYPE,
        scope(),
    )?;
    reserved_zero(
        &e.reserved2,
        Field::sub("extension_type", "_reserved2"),
        offset + 18,
        rule::EXTENSION_TYPE,
        scope(),
    )?;
    Ok(bits)
}
