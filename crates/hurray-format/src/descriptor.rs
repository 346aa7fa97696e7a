//! Descriptor-level constants (`metadata.md`).

/// The 4 bytes every descriptor starts with (`metadata.md` § Fixed Header).
pub const DESCRIPTOR_MAGIC: [u8; 4] = *b"HRRY";
/// The descriptor major version of this spec.
pub const DESCRIPTOR_VERSION_MAJOR: u8 = 1;
/// The descriptor minor version of this spec.
pub const DESCRIPTOR_VERSION_MINOR: u8 = 0;
/// Size of the fixed header in bytes.
pub const FIXED_HEADER_LEN: u64 = 20;
/// Largest rank a descriptor may declare (`data-model.md` § Rank).
pub const MAX_RANK: u32 = 64;
/// Deepest nesting of tiled levels (`layouts/tiled.md`).
pub const MAX_TILED_DEPTH: u32 = 8;
/// The dynamic-dimension sentinel of `shape`.
pub const DYNAMIC: u64 = u64::MAX;

/// Descriptor flag bits (`metadata.md` § Fixed Header › Flags).
pub mod flags {
    /// A quantization section is present.
    pub const HAS_QUANTIZATION: u32 = 1 << 0;
    /// A shard section is present.
    pub const HAS_SHARD: u32 = 1 << 1;
    /// An extension type section is present.
    pub const HAS_EXTENSION_TYPE: u32 = 1 << 2;
    /// A statistics section is present.
    pub const HAS_STATISTICS: u32 = 1 << 3;
    /// A composite member section is present.
    pub const HAS_COMPOSITE_MEMBER: u32 = 1 << 4;
    /// Every bit this version defines.
    pub const KNOWN: u32 = 0x1F;
    /// Names of the defined bits, in bit order.
    pub const NAMES: [(u32, &str); 5] = [
        (HAS_QUANTIZATION, "HAS_QUANTIZATION"),
        (HAS_SHARD, "HAS_SHARD"),
        (HAS_EXTENSION_TYPE, "HAS_EXTENSION_TYPE"),
        (HAS_STATISTICS, "HAS_STATISTICS"),
        (HAS_COMPOSITE_MEMBER, "HAS_COMPOSITE_MEMBER"),
    ];
}

/// Statistics `computed_mask` bits (`metadata.md` § Statistics Section › computed_mask).
pub mod statistics_mask {
    /// `nnz` is valid.
    pub const NNZ_VALID: u32 = 1 << 0;
    /// `sparsity_ratio` is valid.
    pub const SPARSITY_VALID: u32 = 1 << 1;
    /// `value_min`, `value_max`, `value_abs_max` are valid.
    pub const VALUE_RANGE_VALID: u32 = 1 << 2;
    /// `value_mean`, `value_stddev` are valid.
    pub const VALUE_STATS_VALID: u32 = 1 << 3;
    /// `nm_n`, `nm_m` are valid.
    pub const NM_SPARSITY_VALID: u32 = 1 << 4;
    /// `has_nan`, `has_inf` are valid.
    pub const NAN_INF_VALID: u32 = 1 << 5;
    /// Names of the defined bits, in bit order.
    pub const NAMES: [(u32, &str); 6] = [
        (NNZ_VALID, "NNZ_VALID"),
        (SPARSITY_VALID, "SPARSITY_VALID"),
        (VALUE_RANGE_VALID, "VALUE_RANGE_VALID"),
        (VALUE_STATS_VALID, "VALUE_STATS_VALID"),
        (NM_SPARSITY_VALID, "NM_SPARSITY_VALID"),
        (NAN_INF_VALID, "NAN_INF_VALID"),
    ];
}

/// `member_role` of the composite member section (`metadata.md` §
/// Composite Member Section).
pub mod member_role {
    /// A correction of an overlay.
    pub const CORRECTION: u8 = 0x00;
    /// The base of an overlay (or any member of a partition or group).
    pub const BASE: u8 = 0x01;
}
