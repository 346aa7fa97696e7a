//! Writes the malformed-file corpus `fixtures/invalid/`: one small file per
//! rule, each a valid base with exactly one thing broken, and
//! `manifest.json` naming the rule, the spec section, the stage at which a
//! strict reader must reject the file and the error it must give.
//!
//! ```text
//! cargo run -p hurray-writer --example make_invalid -- fixtures/invalid
//! ```
//!
//! Files are built through the writer's unchecked path (`RawDescriptor`,
//! `RawTensor`, `write_tensor_unchecked`, `add_kv_raw`, `RawFileFields`);
//! the few container fields the writer cannot misplace (index framing,
//! trailer offsets, the KV count) are patched afterwards, the index CRC-32C
//! recomputed when index bytes change. The output is deterministic: a test
//! (`tests/generated_fresh.rs`) regenerates it and compares bytes.
//!
//! One module per spec area, each adding its files to the [`Corpus`] in
//! the order `generate` calls them (the manifest keeps that order):
//! `container`, `index`, `kv`, `descriptor`, `handles`, `dense`,
//! `compressed` (CSC, CSR), `coo_csf`, `block_paged`, `composite`,
//! `quantization`, `sections`, `padding`. The valid files they start from
//! are in `bases`; `build` writes files, `bytes` patches them.

mod bases;
mod block_paged;
mod build;
mod bytes;
mod composite;
mod compressed;
mod container;
mod coo_csf;
mod dense;
mod descriptor;
mod handles;
mod index;
mod kv;
mod manifest;
mod padding;
mod quantization;
mod sections;

use std::path::{Path, PathBuf};

use serde_json::{json, Value as Json};

use block_paged::block_paged;
use composite::composite;
use compressed::csc_csr;
use container::container;
use coo_csf::coo_csf;
use dense::dense_layouts;
use descriptor::descriptor;
use handles::handles;
use index::index;
use kv::kv_cases;
use manifest::Corpus;
use padding::padding;
use quantization::quantization;
use sections::sections;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> Result<()> {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "fixtures/invalid".into()));
    let manifest = generate(&dir)?;
    println!("wrote {} files to {}", manifest["file_count"], dir.display());
    Ok(())
}

/// Each valid base file the corpus starts from, by name.
pub fn bases() -> Vec<(&'static str, Vec<u8>)> {
    bases::bases()
}

/// Writes every file and `manifest.json` into `dir`; returns the manifest.
pub fn generate(dir: &Path) -> Result<Json> {
    std::fs::create_dir_all(dir)?;
    let mut c = Corpus::default();
    container(&mut c);
    index(&mut c);
    kv_cases(&mut c);
    descriptor(&mut c);
    handles(&mut c);
    dense_layouts(&mut c);
    csc_csr(&mut c);
    coo_csf(&mut c);
    block_paged(&mut c);
    composite(&mut c);
    quantization(&mut c);
    sections(&mut c);
    padding(&mut c);
    let mut entries = Vec::new();
    for case in &c.cases {
        std::fs::write(dir.join(&case.file), &case.bytes)?;
        entries.push(case.to_json());
    }
    let manifest = json!({
        "description": "Malformed Hurray files: each is a valid file with exactly one rule broken. See README.md.",
        "generator": "cargo run -p hurray-writer --example make_invalid -- fixtures/invalid",
        "file_count": entries.len(),
        "files": entries,
    });
    std::fs::write(
        dir.join("manifest.json"),
        serde_json::to_string_pretty(&manifest)? + "\n",
    )?;
    Ok(manifest)
}
