//! Writes (or finds in the cache) one benchmark matrix and prints where its
//! buffers are, as JSON, so the peers script can map the same bytes with
//! `numpy.memmap`.
//!
//! ```text
//! cargo run --release -p hurray-benches --bin gen -- \
//!     [--format csc|csr|coo] [--pattern random10|short2|onecol] [--values f32|f64] \
//!     [--nnz 100000000] [--rows N] [--dir DIR]
//! ```
//! Defaults: the `random10` CSC with `float32` values and 100 M non-zeros,
//! in the cache folder (`$HURRAY_BENCH_DIR`, else
//! `$XDG_CACHE_HOME/hurray-bench`, else `~/.cache/hurray-bench`). `--help`
//! lists the options.

#![forbid(unsafe_code)]

use std::path::PathBuf;

use clap::Parser;
use hurray_benches::data::{Format, MatrixSpec, Pattern, Values, TENSOR};
use hurray_reader::{MappedFile, Options};

/// Write one benchmark matrix (or find it in the cache folder) and print
/// its path and buffer offsets as JSON.
#[derive(Parser)]
#[command(name = "gen")]
struct Args {
    /// Storage format.
    #[arg(long, value_enum, default_value_t = Format::Csc)]
    format: Format,
    /// Sparsity pattern.
    #[arg(long, value_enum, default_value_t = Pattern::Random10)]
    pattern: Pattern,
    /// Value type.
    #[arg(long, value_enum, default_value_t = Values::F32)]
    values: Values,
    /// Number of stored entries.
    #[arg(long, default_value_t = 100_000_000)]
    nnz: u64,
    /// Bound of the inner indices (`nrows` of a CSC, the length of
    /// `y = A·x`) [default: a square matrix; `onecol`: 4 × nnz rows].
    #[arg(long)]
    rows: Option<u64>,
    /// Folder for the file [default: $HURRAY_BENCH_DIR, else
    /// $XDG_CACHE_HOME/hurray-bench, else ~/.cache/hurray-bench].
    #[arg(long)]
    dir: Option<PathBuf>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let mut spec = MatrixSpec::new(args.pattern, args.format, args.values, args.nnz);
    if let Some(rows) = args.rows {
        spec = spec.with_inner(rows);
    }
    let dir = args.dir.unwrap_or_else(hurray_benches::cache_dir);
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
