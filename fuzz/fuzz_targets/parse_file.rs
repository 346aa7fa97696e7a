//! Whole files: parse in strict and permissive mode, then look up, view and
//! validate every tensor. Nothing may panic, overflow or read out of bounds.
#![no_main]

use hurray_reader::{AlignedBytes, Options};
use libfuzzer_sys::fuzz_target;

#[path = "../../crates/hurray-reader/tests/support/exercise.rs"]
mod exercise;

fuzz_target!(|data: &[u8]| {
    let bytes = AlignedBytes::from_slice(data);
    for options in [Options::strict(), Options::permissive()] {
        exercise::exercise(&bytes, options);
    }
});
