//! The statistics section's own rules (`metadata.md` § Statistics Section):
//! reserved bits and bytes, and the field-level MUSTs of the fields whose
//! `computed_mask` bit is set. The rules that compare the statistics with
//! the data live with the tensor (`Tensor::statistics_rule_violation`).

use crate::error::{rule, Error, Field, Location, Number, Result, Scope};
use crate::file::reserved_zero;
use crate::raw;

pub use hurray_format::descriptor::statistics_mask;

pub(super) fn check_statistics(s: &raw::Statistics, offset: u64, name: &str) -> Result<()> {
    let scope = || Scope::tensor(name);
    let mask = s.computed_mask.get();
    if mask >> 6 != 0 {
        return Err(Error::Reserved {
            at: Location {
                scope: scope(),
                field: Field::sub("statistics", "computed_mask"),
                offset,
                rule: rule::STATISTICS,
            },
            value: u64::from(mask & !0x3F),
            byte: None,
        });
    }
    if s.reserved.get() != 0 {
        return Err(Error::Reserved {
            at: Location {
                scope: scope(),
                field: Field::sub("statistics", "_reserved"),
                offset: offset + 4,
                rule: rule::STATISTICS,
            },
            value: u64::from(s.reserved.get()),
            byte: None,
        });
    }
    reserved_zero(
        &s.reserved2,
        Field::sub("statistics", "_reserved2"),
        offset + 68,
        rule::STATISTICS,
        scope(),
    )
}

/// The field-level MUSTs of the statistics block beyond its reserved bits
/// and bytes (`metadata.md` § Statistics Section › Field Encoding), for
/// the fields whose `computed_mask` bit is set (a field whose bit is clear
/// is unknown, whatever it holds): `value_stddev >= 0.0` (a NaN is not)
/// under `VALUE_STATS_VALID`, `nm_n <= nm_m` under `NM_SPARSITY_VALID`.
/// `offset` is the block's first byte.
pub(crate) fn statistics_value_violation(s: &raw::Statistics, offset: u64, name: &str) -> Option<Error> {
    let mask = s.computed_mask.get();
    let stddev = s.value_stddev.get();
    // A NaN is not >= 0.0; -0.0 is (it compares equal to 0.0).
    if mask & statistics_mask::VALUE_STATS_VALID != 0 && (stddev < 0.0 || stddev.is_nan()) {
        return Some(Error::InvalidNumber {
            at: Location {
                scope: Scope::tensor(name),
                field: Field::sub("statistics", "value_stddev"),
                offset: offset + 56,
                rule: rule::STATISTICS_FIELDS,
            },
            value: Number::float(stddev),
            expected: "a standard deviation >= 0.0 (not NaN)",
        });
    }
    if mask & statistics_mask::NM_SPARSITY_VALID != 0 && s.nm_n > s.nm_m {
        return Some(Error::Invalid {
            at: Location {
                scope: Scope::tensor(name),
                field: Field::sub("statistics", "nm_n"),
                offset: offset + 64,
                rule: rule::STATISTICS_FIELDS,
            },
            value: u64::from(s.nm_n),
            expected: "at most nm_m (the next byte)",
        });
    }
    None
}
