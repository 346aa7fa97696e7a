#!/usr/bin/env python3
"""scipy side of the peer comparison (issue #4, benchmark 5).

Reads the JSON printed by `hurray-benches --bin gen` (where the .hry file's
buffers are), builds the SAME matrix as an uncompressed .npz from those
bytes (numpy.memmap at the printed offsets; written once, next to the .hry),
then times, with time.perf_counter medians over --runs runs (page cache warm):

  - load_npz                                  (scipy returns int32 indices: it downcasts)
  - check_format(full_check=True)             on the int64-index matrix (headline: the
                                              same u64 bytes our scan reads), and on the
                                              int32 one load_npz returns (extra rows)
  - has_canonical_format                      (cache cleared before each run), both
  - A @ x                                     (SpMV, x as in Rust), int64 and int32
  - A.T @ x                                   (CSR of A^T over the same arrays), both

and whole processes (hyperfine when installed, else --runs subprocess runs):

  - hurray-inspect --validate FILE.hry              (default threads: the machine's)
  - hurray-inspect --validate --threads 1 FILE.hry  (stdout discarded, both)
  - python -c 'load_npz; check_format(full_check=True); has_canonical_format'
  - python -c the same on the int64 arrays (np.load, no downcast)

Merges the Rust in-process figures (--ours, from `hurray-time`) and prints
the comparison rows; writes everything to --out as JSON.
"""

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy
import scipy.sparse as sp

DTYPES = {"Float32": np.float32, "Float64": np.float64, "UInt64": np.uint64}


def timed(fn, runs, warmup=1):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    times.sort()
    return {"median_s": statistics.median(times), "min_s": times[0], "max_s": times[-1], "runs": runs}


def buffers_of(info):
    """name -> numpy.memmap over the .hry bytes."""
    out = {}
    for b in info["buffers"]:
        dtype = np.float32 if b["role"] == "values" and info["values"] == "f32" else None
        if b["role"] == "values" and info["values"] == "f64":
            dtype = np.float64
        if b["role"] in ("row_indices", "col_ptr", "col_indices", "row_ptr", "indices"):
            dtype = np.int64  # u64 on disk; every index is < 2^63
        count = b["byte_size"] // np.dtype(dtype).itemsize
        out[b["role"]] = np.memmap(info["path"], dtype=dtype, mode="r", offset=b["offset"], shape=(count,))
    return out


def csc64(data, indices, indptr, shape):
    """A csc_matrix keeping int64 indices: built empty, then given the arrays
    (the (data, indices, indptr) constructor would scan them and downcast to
    int32)."""
    a = sp.csc_matrix(shape, dtype=data.dtype)
    a.data = data
    a.indices = np.asarray(indices, dtype=np.int64)
    a.indptr = np.asarray(indptr, dtype=np.int64)
    a.check_format(full_check=False)
    assert a.indices.dtype == np.int64 and a.indptr.dtype == np.int64
    return a


def transpose64(a):
    """A^T as the csr_matrix over the same int64 arrays (scipy's a.T builds
    it through the constructor, which downcasts the indices to int32)."""
    nrows, ncols = a.shape
    t = sp.csr_matrix((ncols, nrows), dtype=a.dtype)
    t.data, t.indices, t.indptr = a.data, a.indices, a.indptr
    assert t.indices.dtype == np.int64 and t.indptr.dtype == np.int64
    return t


def write_npz(info, npz):
    buf = buffers_of(info)
    nrows, ncols = info["shape"]
    a = csc64(np.array(buf["values"]), np.array(buf["row_indices"]), np.array(buf["col_ptr"]), (nrows, ncols))
    tmp = npz + ".tmp.npz"
    sp.save_npz(tmp, a, compressed=False)
    os.replace(tmp, npz)


def settle_page_cache(path):
    """Flush, drop from the page cache, read back sequentially (as the Rust side does)."""
    with open(path, "rb") as f:
        os.fsync(f.fileno())
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        while f.read(1 << 24):
            pass


def clear_canonical_cache(a):
    for attr in ("_has_canonical_format", "_has_sorted_indices"):
        if attr in a.__dict__:
            del a.__dict__[attr]


def x_vector(n, dtype):
    # Same as Rust's data::x_at: (i mod 1024) / 1024 - 0.5, exact in float32.
    return ((np.arange(n, dtype=np.int64) % 1024) / 1024.0 - 0.5).astype(dtype)


def whole_process(cmds, runs, hyperfine):
    """name -> {median_s, ...}; cmds: name -> argv."""
    if hyperfine:
        with tempfile.TemporaryDirectory() as d:
            export = os.path.join(d, "hf.json")
            argv = [hyperfine, "-N", "--warmup", "1", "--runs", str(runs), "--export-json", export]
            names = list(cmds)
            for name in names:
                argv += ["--command-name", name]
            argv += [shlex.join(cmds[n]) for n in names]
            subprocess.run(argv, check=True, stdout=sys.stderr)
            with open(export) as f:
                res = json.load(f)["results"]
            return {
                n: {"median_s": r["median"], "min_s": r["min"], "max_s": r["max"], "runs": len(r["times"]),
                    "tool": "hyperfine -N"}
                for n, r in zip(names, res)
            }
    out = {}
    for name, argv in cmds.items():
        def run():
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        out[name] = timed(run, runs) | {"tool": "subprocess loop"}
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--info", required=True, help="JSON printed by the gen bin")
    p.add_argument("--ours", required=True, help="JSON printed by the hurray-time bin")
    p.add_argument("--inspect", required=True, help="path of the hurray-inspect binary")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--process-runs", type=int, default=10)
    p.add_argument("--out", required=True)
    args = p.parse_args()

    with open(args.info) as f:
        info = json.load(f)
    with open(args.ours) as f:
        ours = json.load(f)
    hry = info["path"]
    npz = os.path.splitext(hry)[0] + ".npz"
    if not os.path.exists(npz):
        t0 = time.perf_counter()
        write_npz(info, npz)
        print(f"peers: wrote {npz} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    settle_page_cache(npz)
    nrows, ncols = info["shape"]
    dtype = np.float32 if info["values"] == "f32" else np.float64

    r = {"numpy": np.__version__, "scipy": scipy.__version__, "python": sys.version.split()[0],
         "hry": hry, "hry_bytes": os.path.getsize(hry), "npz": npz, "npz_bytes": os.path.getsize(npz),
         "shape": [nrows, ncols], "nnz": info["nnz"], "values": info["values"]}

    # load_npz, as users call it (returns int32 indices: scipy downcasts).
    r["load_npz"] = timed(lambda: sp.load_npz(npz), args.runs)
    loaded = sp.load_npz(npz)
    r["load_npz_index_dtype"] = str(loaded.indices.dtype)

    def load_first_value():
        a = sp.load_npz(npz)
        return a.data[0]
    r["load_npz_to_first_value"] = timed(load_first_value, args.runs)

    # The int64 matrix: same bytes as the .hry.
    with np.load(npz) as z:
        a = csc64(z["data"], z["indices"], z["indptr"], (nrows, ncols))
    del loaded

    def checks(m):
        def run():
            m.check_format(full_check=True)
            clear_canonical_cache(m)
            assert m.has_canonical_format
        return run

    def canonical(m):
        def run():
            clear_canonical_cache(m)
            assert m.has_canonical_format
        return run

    # Headline: int64 indices, the same bytes as our u64 arrays.
    r["check_format_full"] = timed(lambda: a.check_format(full_check=True), args.runs)
    r["has_canonical_format"] = timed(canonical(a), args.runs)
    r["checks_both"] = timed(checks(a), args.runs)
    assert a.indices.dtype == np.int64 and a.indptr.dtype == np.int64
    r["checks_index_dtype"] = str(a.indices.dtype)

    x = x_vector(ncols, dtype)
    y = a @ x
    r["spmv_Ax"] = timed(lambda: a @ x, args.runs)
    r["spmv_Ax_sum_y"] = float(np.sum(y, dtype=np.float64))
    xt = x_vector(nrows, dtype)
    at = transpose64(a)  # csr_matrix over the same arrays (a.T would downcast)
    z = at @ xt
    r["spmv_Atx"] = timed(lambda: at @ xt, args.runs)
    r["spmv_Atx_sum_y"] = float(np.sum(z, dtype=np.float64))
    del a, at

    # Extra rows: the int32 matrix load_npz returns (half the index bytes).
    a32 = sp.load_npz(npz)
    assert a32.indices.dtype == np.int32 and a32.indptr.dtype == np.int32
    r["check_format_full_int32"] = timed(lambda: a32.check_format(full_check=True), args.runs)
    r["has_canonical_format_int32"] = timed(canonical(a32), args.runs)
    r["checks_both_int32"] = timed(checks(a32), args.runs)
    r["spmv_Ax_int32"] = timed(lambda: a32 @ x, args.runs)
    at32 = a32.T  # int32 already: no downcast to avoid
    assert at32.indices.dtype == np.int32
    r["spmv_Atx_int32"] = timed(lambda: at32 @ xt, args.runs)
    r["spmv_int32_same_y"] = bool(np.array_equal(a32 @ x, y) and np.array_equal(at32 @ xt, z))
    del a32, at32, y, z

    py_check = ("import scipy.sparse as sp, sys; a = sp.load_npz(sys.argv[1]); "
                "a.check_format(full_check=True); assert a.has_canonical_format")
    py_check64 = ("import numpy as np, scipy.sparse as sp, sys; z = np.load(sys.argv[1]); "
                  "a = sp.csc_matrix(tuple(z['shape']), dtype=z['data'].dtype); "
                  "a.data, a.indices, a.indptr = z['data'], z['indices'], z['indptr']; "
                  "assert a.indices.dtype == np.int64; "
                  "a.check_format(full_check=True); assert a.has_canonical_format")
    cmds = {
        "hurray-inspect --validate": [args.inspect, "--validate", hry],
        "hurray-inspect --validate --threads 1": [args.inspect, "--validate", "--threads", "1", hry],
        "python load_npz + checks": [sys.executable, "-c", py_check, npz],
        "python int64 + checks": [sys.executable, "-c", py_check64, npz],
        "python import scipy.sparse only": [sys.executable, "-c", "import scipy.sparse"],
    }
    for name, argv in cmds.items():
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)  # must succeed
    r["threads_available"] = os.cpu_count()
    r["process"] = whole_process(cmds, args.process_runs, shutil.which("hyperfine"))
    r["process_commands"] = {n: shlex.join(c) for n, c in cmds.items()}

    med = lambda d: d["median_s"]  # noqa: E731
    proc = lambda n: med(r["process"][n])  # noqa: E731
    ratios = {
        "validate_vs_scipy_checks": med(r["checks_both"]) / med(ours["validate"]),
        "validate_parallel_vs_scipy_checks": med(r["checks_both"]) / med(ours["validate_parallel_2threads"]),
        "validate_vs_scipy_checks_int32": med(r["checks_both_int32"]) / med(ours["validate"]),
        "open_to_first_value_vs_load_npz": med(r["load_npz_to_first_value"]) / med(ours["open_to_first_value"]),
        "whole_process_validate_vs_python": proc("python load_npz + checks") / proc("hurray-inspect --validate"),
        "whole_process_validate_1thread_vs_python": proc("python load_npz + checks")
        / proc("hurray-inspect --validate --threads 1"),
        "whole_process_validate_vs_python_int64": proc("python int64 + checks") / proc("hurray-inspect --validate"),
        "spmv_Ax_vs_scipy": med(r["spmv_Ax"]) / med(ours["spmv_csc_Ax"]),
        "spmv_Atx_vs_scipy": med(r["spmv_Atx"]) / med(ours["spmv_csr_of_At_Atx"]),
        "spmv_Ax_vs_scipy_int32": med(r["spmv_Ax_int32"]) / med(ours["spmv_csc_Ax"]),
        "spmv_Atx_vs_scipy_int32": med(r["spmv_Atx_int32"]) / med(ours["spmv_csr_of_At_Atx"]),
    }
    r["ratios"] = ratios
    r["ours"] = ours
    r["sum_y_rel_diff"] = abs(r["spmv_Ax_sum_y"] - ours["spmv_csc_Ax_sum_y"]) / max(1.0, abs(r["spmv_Ax_sum_y"]))
    r["sum_z_rel_diff"] = abs(r["spmv_Atx_sum_y"] - ours["spmv_csr_of_At_Atx_sum_y"]) / max(
        1.0, abs(r["spmv_Atx_sum_y"]))
    with open(args.out, "w") as f:
        json.dump(r, f, indent=2)
        f.write("\n")

    ms = lambda s: f"{s * 1e3:.3f} ms" if s < 1 else f"{s:.3f} s"  # noqa: E731
    print(f"peers: {nrows} x {ncols}, nnz {info['nnz']}, {info['values']}, .hry {r['hry_bytes']} B, "
          f".npz {r['npz_bytes']} B; numpy {np.__version__}, scipy {scipy.__version__}")
    rows = [
        ("validation", "CscStructure::validate()", med(ours["validate"]),
         "check_format(full_check=True) + has_canonical_format (int64)", med(r["checks_both"]),
         ratios["validate_vs_scipy_checks"], ">= 3x"),
        ("validation, 2 threads", "CscStructure::validate_parallel(2)", med(ours["validate_parallel_2threads"]),
         "same two checks (int64)", med(r["checks_both"]), ratios["validate_parallel_vs_scipy_checks"], "-"),
        ("validation vs int32", "CscStructure::validate()", med(ours["validate"]),
         "same two checks (int32)", med(r["checks_both_int32"]), ratios["validate_vs_scipy_checks_int32"], "-"),
        ("open to first value", "open + view + first value", med(ours["open_to_first_value"]),
         "load_npz + first value", med(r["load_npz_to_first_value"]),
         ratios["open_to_first_value_vs_load_npz"], ">= 1000x"),
        ("whole-process validate", "hurray-inspect --validate",
         proc("hurray-inspect --validate"), "python: load_npz + both checks",
         proc("python load_npz + checks"), ratios["whole_process_validate_vs_python"], ">= 20x"),
        ("whole-process validate, 1 thread", "hurray-inspect --validate --threads 1",
         proc("hurray-inspect --validate --threads 1"), "python: load_npz + both checks",
         proc("python load_npz + checks"), ratios["whole_process_validate_1thread_vs_python"], "-"),
        ("whole-process validate vs int64", "hurray-inspect --validate",
         proc("hurray-inspect --validate"), "python: np.load int64 + both checks",
         proc("python int64 + checks"), ratios["whole_process_validate_vs_python_int64"], "-"),
        ("SpMV y = A x", "CscView::mul_vec", med(ours["spmv_csc_Ax"]), "A @ x (int64)",
         med(r["spmv_Ax"]), ratios["spmv_Ax_vs_scipy"], ">= 1.5x"),
        ("SpMV y = A x, direct scatter", "kernels::spmv_csc_direct", med(ours["spmv_csc_Ax_direct"]),
         "A @ x (int64)", med(r["spmv_Ax"]), med(r["spmv_Ax"]) / med(ours["spmv_csc_Ax_direct"]), "-"),
        ("SpMV y = A^T x", "CsrView::mul_vec on A.transpose()", med(ours["spmv_csr_of_At_Atx"]),
         "A.T @ x (int64)", med(r["spmv_Atx"]), ratios["spmv_Atx_vs_scipy"], "-"),
        ("SpMV y = A^T x, 2 threads", "CsrView::mul_vec_parallel(.., 2) on A.transpose()",
         med(ours["spmv_csr_of_At_Atx_2threads"]), "A.T @ x (int64, one thread)", med(r["spmv_Atx"]),
         med(r["spmv_Atx"]) / med(ours["spmv_csr_of_At_Atx_2threads"]), "-"),
        ("SpMV y = A x vs int32", "CscView::mul_vec", med(ours["spmv_csc_Ax"]), "A @ x (int32)",
         med(r["spmv_Ax_int32"]), ratios["spmv_Ax_vs_scipy_int32"], "-"),
        ("SpMV y = A^T x vs int32", "CsrView::mul_vec on A.transpose()", med(ours["spmv_csr_of_At_Atx"]),
         "A.T @ x (int32)", med(r["spmv_Atx_int32"]), ratios["spmv_Atx_vs_scipy_int32"], "-"),
    ]
    print("| what | ours | time | scipy | time | ratio (scipy / ours) | target | met |")
    print("|---|---|---:|---|---:|---:|---|---|")
    for what, o, ot, s, st, ratio, target in rows:
        met = "-" if target == "-" else ("yes" if ratio >= float(target.strip(">= x")) else "**no**")
        print(f"| {what} | {o} | {ms(ot)} | {s} | {ms(st)} | {ratio:.1f}x | {target} | {met} |")
    print(f"SpMV cross-check: |sum(y) scipy - ours| / |sum(y)| = {r['sum_y_rel_diff']:.2e} (A x), "
          f"{r['sum_z_rel_diff']:.2e} (A^T x); mul_vec and the direct scatter bit for bit equal: "
          f"{ours.get('spmv_csc_Ax_direct_same_bits')}")


if __name__ == "__main__":
    main()
