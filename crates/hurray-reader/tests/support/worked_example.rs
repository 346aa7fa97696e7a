//! The worked example of `layouts/csc.md`, shared by the tests that check
//! values against it.

/// `fixtures/csc_worked_example.hry`: tensor `A`, float32, shape [4, 5], nnz 5.
pub const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry");

/// `A` dense (rows 0..4, columns 0..5).
pub const DENSE: [[f32; 5]; 4] = [
    [1.0, 0.0, 0.0, 2.0, 0.0],
    [0.0, 0.0, 3.0, 0.0, 0.0],
    [0.0, 4.0, 0.0, 0.0, 5.0],
    [0.0, 0.0, 0.0, 0.0, 0.0],
];
