//! Element types (`element-types.md`): the tags, widths and buffer sizes
//! of [`hurray_format::ElementType`], and the Rust types a typed view can
//! hand out.

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

pub use hurray_format::ElementType;
pub(crate) use hurray_format::TagClass;

/// A complex number stored as two consecutive floats, real part first
/// (`complex64` = `Complex<f32>`, `complex128` = `Complex<f64>`).
#[derive(Debug, Clone, Copy, PartialEq, Default, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
pub struct Complex<T> {
    /// Real part.
    pub re: T,
    /// Imaginary part.
    pub im: T,
}

macro_rules! byte_float {
    ($(#[$doc:meta])* $name:ident, $variant:ident, $decode:path) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, FromBytes, IntoBytes, KnownLayout, Immutable)]
        #[repr(transparent)]
        pub struct $name(pub u8);

        impl $name {
            /// The value this bit pattern encodes.
            pub fn to_f32(self) -> f32 {
                $decode(self.0)
            }
        }

        impl Element for $name {
            const ELEMENT_TYPE: ElementType = ElementType::$variant;
        }
    };
}

byte_float!(
    /// One `float8_e4m3` element (bit pattern).
    Float8E4m3,
    Float8E4m3,
    hurray_format::narrow::float8_e4m3_to_f32
);
byte_float!(
    /// One `float8_e5m2` element (bit pattern).
    Float8E5m2,
    Float8E5m2,
    hurray_format::narrow::float8_e5m2_to_f32
);
byte_float!(
    /// One `float8_e8m0` element (bit pattern): the scale `2^(bits - 127)`.
    Float8E8m0,
    Float8E8m0,
    hurray_format::narrow::float8_e8m0_to_f32
);

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that a typed view can hand out for one element type, with
/// no conversion: the buffer's bytes are the slice's bytes.
///
/// Implemented for `u8`…`u64`, `i8`…`i64`, `f32`, `f64`, [`half::f16`],
/// [`half::bf16`], [`Complex<f32>`], [`Complex<f64>`] and the float8 newtypes.
/// Packed sub-byte types have no `Element`: read them through
/// [`Buffer::packed`](crate::Buffer::packed).
pub trait Element: FromBytes + Immutable + KnownLayout + Copy + sealed::Sealed + 'static {
    /// The one element type this Rust type stands for.
    const ELEMENT_TYPE: ElementType;
}

macro_rules! element {
    ($($t:ty => $v:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const ELEMENT_TYPE: ElementType = ElementType::$v;
        }
    )*};
}

element!(
    u8 => Uint8, i8 => Int8, u16 => Uint16, i16 => Int16,
    u32 => Uint32, i32 => Int32, u64 => Uint64, i64 => Int64,
    f32 => Float32, f64 => Float64,
    half::f16 => Float16, half::bf16 => Bfloat16,
    Complex<f32> => Complex64, Complex<f64> => Complex128,
);
impl sealed::Sealed for Float8E4m3 {}
impl sealed::Sealed for Float8E5m2 {}
impl sealed::Sealed for Float8E8m0 {}
