//! Writes (or finds in the cache) one benchmark matrix and prints where its
//! buffers are, as JSON, so the peers script can map the same bytes with
//! `numpy.memmap`.
//!
//! ```text
//! cargo run --release -p hurray-benches --bin gen -- \
//!     [--format csc|csr|coo] [--pattern random10|short2|onecol] [--values f32|f64] \
//!     [--nnz 100000000] [--dir DIR]
//! ```
//! Defaults: the `random10` CSC with `float32` values and 100 M non-zeros,
//! in the cache folder (`$HURRAY_BENCH_DIR`, else `~/.cache/hurray-bench`).

#![forbid(unsafe_code)]

use std::path::PathBuf;

use hurray_benches::data::{Format, MatrixSpec, Pattern, Values, TENSOR};
use hurray_reader::{MappedFile, Options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut spec = MatrixSpec::new(Pattern::Random10, Format::Csc, Values::F32, 100_000_000);
    let mut dir = hurray_benches::cache_dir();
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--format" => {
                spec.format = match value.as_str() {
                    "csc" => Format::Csc,
                    "csr" => Format::Csr,
                    "coo" => Format::CooSorted,
                    _ => return Err(format!("unknown format {value}").into()),
                }
            }
            "--pattern" => {
                spec.pattern = match value.as_str() {
                    "random10" => Pattern::Random10,
                    "short2" => Pattern::Short2,
                    "onecol" => Pattern::OneColumn,
                    _ => return Err(format!("unknown pattern {value}").into()),
                }
            }
            "--values" => {
                spec.values = match value.as_str() {
                    "f32" => Values::F32,
                    "f64" => Values::F64,
                    _ => return Err(format!("unknown value type {value}").into()),
                }
            }
            "--nnz" => spec.nnz = value.parse()?,
            "--dir" => dir = PathBuf::from(value),
            _ => return Err(format!("unknown argument {flag}").into()),
        }
    }
    std::fs::create_dir_all(&dir)?;
    let path = spec.ensure(&dir)?;
    let mapped = MappedFile::open(&path, Options::default())?;
    let file = mapped.file()?;
    let tensor = file.tensor(TENSOR)?;
    let buffers: Vec<serde_json::Value> = tensor
        .buffers()
        .iter()
        .map(|b| {
            serde_json::json!({
                "role": b.role().as_str(),
                "offset": b.file_offset(),
                "byte_size": b.byte_size(),
                "element_type": b.element_type().map(|t| format!("{t:?}")),
            })
        })
        .collect();
    let info = serde_json::json!({
        "path": path.canonicalize()?,
        "id": spec.id(),
        "format": spec.format.name(),
        "values": spec.values.name(),
        "tensor": TENSOR,
        "shape": tensor.shape().collect::<Vec<u64>>(),
        "nnz": tensor.nnz(),
        "file_bytes": std::fs::metadata(&path)?.len(),
        "buffers": buffers,
    });
    println!("{}", serde_json::to_string_pretty(&info)?);
    Ok(())
}
