//! Memory of the summary on a file of very many small tensors (issue 31,
//! item 9): 1 M empty tensors in a 98 MB file took 959 MB to summarise,
//! every tensor's facts and table row held at once. The tool now keeps a
//! byte or two per tensor besides the library's index (56 bytes a tensor)
//! and the mapped file: its peak resident set must stay within 3 times the
//! file's size.
//!
//! The test keeps its own memory small: a child started by `posix_spawn`
//! starts with its parent's peak (`wait4` reports the larger). The file is written to disk as it is made, this
//! process's peak is then reset to what it holds (`/proc/self/clear_refs`),
//! and the outputs are read line by line.
#![cfg(target_os = "linux")]

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter};
use std::path::Path;
use std::process::{Command, Stdio};

use hurray_writer::{ElementType, FileWriter, RawTensor, TensorDescriptor, WriterOptions};

const TENSORS: u64 = 200_000;

/// `TENSORS` empty `float32` tensors of shape `[0]`, as the file:
/// each descriptor (53 bytes) followed by the next at 8-byte padding, its
/// `data_offset` the `data_buffer_alignment` boundary after it (it takes
/// no data bytes). 98 bytes a tensor, the index entry included.
fn many_empty_tensors(path: &Path) -> u64 {
    let descriptor = TensorDescriptor::row_major(ElementType::Float32, vec![0])
        .unwrap()
        .encode()
        .unwrap();
    assert_eq!(descriptor.len(), 53);
    let sink = BufWriter::new(File::create(path).unwrap());
    let mut w = FileWriter::new(sink, WriterOptions::default()).unwrap();
    for i in 0..TENSORS {
        let mut t = RawTensor::new(format!("t{i:07}"), descriptor.clone(), Vec::new());
        t.pad_after_descriptor = Some(false);
        let end = 64 + 56 * i + 53;
        t.index_data_offset = Some(end.div_ceil(4096) * 4096);
        w.write_tensor_unchecked(t).unwrap();
    }
    drop(w.finish().unwrap());
    std::fs::metadata(path).unwrap().len()
}

/// Runs `hurray-inspect ARGS FILE` with stdout to `output`; returns its
/// exit status and its peak resident set in bytes (`wait4`'s usage of
/// that child alone).
#[allow(clippy::zombie_processes)] // reaped by `wait4`, which std does not see
fn run(args: &[&str], file: &Path, output: &Path) -> (i32, u64) {
    let child = Command::new(env!("CARGO_BIN_EXE_hurray-inspect"))
        .args(args)
        .arg(file)
        .stdin(Stdio::null())
        .stdout(File::create(output).unwrap())
        .spawn()
        .unwrap();
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    let mut status = 0;
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `wait4` waits for our child `pid`, then writes its status
    // into `status` and one `rusage` into the zeroed `usage` of this frame.
    // `child` is not waited for again (dropping a `Child` does not wait).
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, usage.as_mut_ptr()) };
    assert_eq!(reaped, pid);
    // SAFETY: zeroed, then filled by a successful `wait4`.
    let usage = unsafe { usage.assume_init() };
    assert!(libc::WIFEXITED(status), "{args:?}: status {status:#x}");
    let peak = u64::try_from(usage.ru_maxrss).unwrap() * 1024; // kilobytes on Linux
    (libc::WEXITSTATUS(status), peak)
}

/// This process's own peak resident set, in bytes (`VmHWM`).
fn own_peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

#[test]
fn the_summary_of_many_small_tensors_stays_within_three_times_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("many.hry");
    let size = many_empty_tensors(&file);
    assert_eq!(size, 98 * TENSORS + 112);
    // The writer's index entries are gone: forget the peak they made.
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    let bound = 3 * size;
    let last_offset = (64 + 56 * (TENSORS - 1) + 53).div_ceil(4096) * 4096;
    let runs: [&[&str]; 4] = [
        &[],
        &["--validate", "--threads", "1"],
        &["--json"],
        &["--json", "--validate", "--threads", "1"],
    ];
    for args in runs {
        // A child starts with this process's peak: keep it well below the bound.
        let own = own_peak_rss();
        assert!(own < bound / 2, "the test itself peaked at {own} bytes");
        let output = dir.path().join("out.txt");
        let (code, peak) = run(args, &file, &output);
        assert_eq!(code, 0, "{args:?}");
        assert!(
            peak <= bound,
            "{args:?}: peak RSS {peak} bytes for a file of {size} bytes ({:.2}x)",
            peak as f64 / size as f64
        );

        let lines = || BufReader::new(File::open(&output).unwrap()).lines().map(Result::unwrap);
        let validate = args.contains(&"--validate");
        if args.contains(&"--json") {
            let names = lines().filter(|l| l.starts_with("      \"name\": \"t")).count();
            assert_eq!(names as u64, TENSORS, "{args:?}");
            let last: Vec<String> = lines()
                .skip_while(|l| l != "      \"name\": \"t0199999\",")
                .take(if validate { 14 } else { 13 })
                .collect();
            let mut expected = vec![
                "      \"name\": \"t0199999\",".to_owned(),
                "      \"dtype\": \"float32\",".into(),
                "      \"layout\": \"row_major\",".into(),
                "      \"shape\": [0],".into(),
                "      \"nnz\": null,".into(),
                "      \"quantization\": null,".into(),
                "      \"buffers\": [".into(),
                "        {".into(),
                "          \"role\": \"data\",".into(),
                "          \"element_type\": \"float32\",".into(),
                "          \"byte_size\": 0,".into(),
                "          \"alignment\": 64,".into(),
                format!("          \"offset\": {last_offset}"),
            ];
            if validate {
                expected.extend(["        }".to_owned()]);
            }
            assert_eq!(last, expected, "{args:?}");
        } else {
            assert!(lines().any(|l| l == "  tensors                200000"));
            let row = format!("  t0199999  float32  row_major  [0]               1    0 B     {last_offset}");
            assert!(lines().any(|l| l == row), "{args:?}: no {row:?}");
            if validate {
                let tail: Vec<String> = lines().skip_while(|l| l != "  t0199999   OK").collect();
                assert_eq!(tail, ["  t0199999   OK", "  (padding)  OK"]);
            }
        }
    }
}
