//! Resource bounds (`docs/design.md` § Untrusted input): whatever counts,
//! lengths, ranks or sizes a file claims, opening it, resolving every tensor,
//! validating all data and annotating every descriptor allocates at most a
//! small multiple of the file's own size, and never an amount a field asks
//! for.
//!
//! The global allocator is `cap::Cap`: before each file the limit is set to
//! what is live plus `BUDGET_FACTOR × file size + BUDGET_SLACK`, so an
//! allocation sized by a lying field fails — and, as it is infallible in
//! Rust, aborts this test binary with "memory allocation of N bytes failed"
//! right after the file's name (written unbuffered to stderr). The files:
//! every fixture, the malformed corpus `fixtures/invalid/` (which holds the
//! huge-count cases: `index_entry_count`, `kv_count`, KV lengths, rank 65,
//! element counts and `nnz` that overflow, `member_count` near 2^32, …),
//! extra files below with counts near 2^64, and the bug-class cases when
//! `HURRAY_CASES_DIR` is set.
//!
//! One `#[test]`: the limit is process-wide, so nothing else may allocate
//! while a file is checked. It first shows, in a child process, that the
//! cap does abort an oversized allocation.

mod support {
    pub mod corpus;
}

use std::alloc::System;
use std::io::Write;
use std::path::{Path, PathBuf};

use cap::Cap;
use hurray_reader::{AlignedBytes, HurrayFile, Options};
use hurray_writer::{
    BufferData, BufferHandle, ElementType, FileWriter, Layout, RawTensor, TensorDescriptor, WriterOptions,
};

#[global_allocator]
static ALLOCATOR: Cap<System> = Cap::new(System, usize::MAX);

/// Heap a check may use per byte of file, on top of [`BUDGET_SLACK`].
const BUDGET_FACTOR: usize = 4;
/// Fixed heap a check may use (error messages, small tables).
const BUDGET_SLACK: usize = 64 * 1024;

/// Everything a reader does with an untrusted file short of `to_csr` (the
/// one documented allocation sized by `nrows`): open in both modes, resolve,
/// validate and annotate every tensor. Returns the heap held by the open
/// strict file (its index and KV tables), or 0 if it did not open.
fn check(bytes: &[u8]) -> usize {
    let before = ALLOCATOR.allocated();
    let mut held = 0;
    for options in [Options::strict(), Options::permissive()] {
        let Ok(file) = HurrayFile::parse(bytes, options) else {
            continue;
        };
        if options.is_strict() {
            held = ALLOCATOR.allocated().saturating_sub(before);
        }
        for entry in file.entries() {
            if let Ok(t) = file.tensor(entry.name()) {
                let _ = t.validate_data();
            }
            let _ = file.dump_descriptor(entry.name());
        }
        let _ = file.validate();
    }
    held
}

/// Runs [`check`] under the cap; returns the bytes the open file held.
fn capped(name: &str, bytes: &[u8]) -> usize {
    // Unbuffered and uncaptured, so the name is on screen if the cap aborts.
    let _ = writeln!(std::io::stderr(), "resource_bounds: {name} ({} bytes)", bytes.len());
    let budget = BUDGET_FACTOR.saturating_mul(bytes.len()).saturating_add(BUDGET_SLACK);
    ALLOCATOR
        .set_limit(ALLOCATOR.allocated().saturating_add(budget))
        .unwrap();
    let held = check(bytes);
    ALLOCATOR.set_limit(usize::MAX).unwrap();
    held
}

fn hry_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "hry"))
        .collect();
    files.sort();
    files
}

/// A one-tensor file written through the writer's unchecked path.
fn one_tensor(descriptor: &TensorDescriptor) -> Vec<u8> {
    let mut writer = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    let tensor = RawTensor::from_descriptor("t", descriptor, vec![BufferData::Bytes(&[0; 64])]).unwrap();
    writer.write_tensor_unchecked(tensor).unwrap();
    writer.finish().unwrap()
}

/// Counts near 2^64 in sparse descriptors, beyond what the corpus holds.
fn huge_count_files() -> Vec<(&'static str, Vec<u8>)> {
    let big = u64::MAX - 1;
    let csc = TensorDescriptor::new(ElementType::Float32, Layout::Csc { nnz: big }, vec![4, 5]);
    let csc_cols = TensorDescriptor::new(ElementType::Float32, Layout::Csc { nnz: 1 }, vec![1, big]);
    let csr_rows = TensorDescriptor::new(ElementType::Float32, Layout::Csr { nnz: 1 }, vec![big, 1]);
    let coo = TensorDescriptor::new(
        ElementType::Float32,
        Layout::Coo {
            nnz: big,
            is_sorted: true,
        },
        vec![big, big],
    );
    vec![
        (
            "csc nnz = 2^64 - 2",
            one_tensor(&csc.with_buffers(vec![BufferHandle::new(64); 3])),
        ),
        (
            "csc ncols = 2^64 - 2",
            one_tensor(&csc_cols.with_buffers(vec![BufferHandle::new(64); 3])),
        ),
        (
            "csr nrows = 2^64 - 2",
            one_tensor(&csr_rows.with_buffers(vec![BufferHandle::new(64); 3])),
        ),
        (
            "coo nnz = 2^64 - 2",
            one_tensor(&coo.with_buffers(vec![BufferHandle::new(64); 2])),
        ),
    ]
}

/// Shows that the cap really aborts an oversized allocation, in a child
/// process (this same test, re-run with `RESOURCE_BOUNDS_CHILD` set), so a
/// broken cap cannot pass everything.
fn the_cap_is_enforced() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "allocation_is_bounded_by_the_file_size", "--nocapture"])
        .env("RESOURCE_BOUNDS_CHILD", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "a 1 MiB allocation under a 64 KiB cap succeeded: {stderr}"
    );
    assert!(stderr.contains("memory allocation of 1048576 bytes failed"), "{stderr}");
}

#[test]
fn allocation_is_bounded_by_the_file_size() {
    if std::env::var_os("RESOURCE_BOUNDS_CHILD").is_some() {
        ALLOCATOR.set_limit(ALLOCATOR.allocated() + BUDGET_SLACK).unwrap();
        std::hint::black_box(Vec::<u8>::with_capacity(1 << 20));
        return;
    }
    the_cap_is_enforced();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for dir in ["fixtures", "fixtures/invalid"] {
        for path in hry_files(&root.join(dir)) {
            let name = format!("{dir}/{}", path.file_name().unwrap().to_string_lossy());
            files.push((name, std::fs::read(&path).unwrap()));
        }
    }
    assert!(files.len() >= 250, "the fixtures or the malformed corpus are missing");
    for (name, bytes) in huge_count_files() {
        files.push((name.into(), bytes));
    }
    if let Some((dir, _)) = support::corpus::corpus("HURRAY_CASES_DIR") {
        for path in hry_files(&dir) {
            files.push((path.display().to_string(), std::fs::read(&path).unwrap()));
        }
    }
    let mut worst = (0.0f64, String::new());
    for (name, bytes) in &files {
        // The copy is made before the window: aligned input, as from a mapping.
        let aligned = AlignedBytes::from_slice(bytes);
        let held = capped(name, &aligned);
        let ratio = held as f64 / bytes.len().max(1) as f64;
        if ratio > worst.0 {
            worst = (ratio, name.clone());
        }
    }
    println!(
        "{} files within {BUDGET_FACTOR} x size + {BUDGET_SLACK} B; largest open-file heap / file size: {:.3} ({})",
        files.len(),
        worst.0,
        worst.1
    );
}
