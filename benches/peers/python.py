#!/usr/bin/env python3
"""The Python package beside its peers on one matrix (issue #30).

    python.py --hry FILE.hry [--runs R] [--out results.json]

Cases, each timed in rotation (one run of each per round, R rounds, the page
cache warm for every file), and each also run once in a fresh process for
its peak RSS growth (``VmHWM`` after the call minus before it, imports
done and the file in the page cache):

  unchecked   hurray_reader.open(p)["A"].to_scipy(validate=False)
  strict      hurray_reader.open(p)["A"].to_scipy()          (the scan, default threads)
  strict_1    the same with threads=1
  load_npz    scipy.sparse.load_npz of the same matrix (uncompressed .npz, written once)
  pyhurray    hurray.load(p)["A"].to_scipy()                  (the reference binding)

and ``A @ x`` on our csc_array against the same on an in-memory copy of it
(``A.copy()``: the same int64 indices, owned memory), in rotation; with
``--dask``, ``A @ x`` through ``hurray_reader.dask.from_hurray`` on a
``LocalCluster`` of 1 and of 2 worker processes (one thread each; the
first compute, which compiles pydata sparse's kernels, is not timed)
against scipy's ``A @ x`` on the whole mapped matrix.

Prints the ratios the issue's targets name and writes everything as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

CASES = {
    "unchecked": "import hurray_reader as hr\ndef run(p, npz):\n    return hr.open(p)['A'].to_scipy(validate=False)",
    "strict": "import hurray_reader as hr\ndef run(p, npz):\n    return hr.open(p)['A'].to_scipy()",
    "strict_1": "import hurray_reader as hr\ndef run(p, npz):\n    return hr.open(p, threads=1)['A'].to_scipy()",
    "load_npz": "import scipy.sparse as sp\ndef run(p, npz):\n    return sp.load_npz(npz)",
    "pyhurray": "import hurray\ndef run(p, npz):\n    return hurray.load(p)['A'].to_scipy()",
}


def case(name: str):
    scope: dict = {}
    exec(CASES[name], scope)
    return scope["run"]


def warm(path: str) -> None:
    """Read the file once so every case starts from the page cache."""
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def status(field: str) -> int | None:
    """A ``/proc/self/status`` figure in bytes (Linux), else ``None``."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def peak_rss() -> int:
    """This process's peak resident set, in bytes: ``VmHWM``, which starts
    afresh at exec, unlike ``ru_maxrss``, which a child inherits from its
    parent's peak."""
    peak = status("VmHWM")
    return peak if peak is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child(name: str, hry: str, npz: str) -> None:
    """One run of one case in this (fresh) process: its time and RSS growth."""
    import numpy  # noqa: F401  (imports are not the case's memory)
    import scipy.sparse  # noqa: F401

    run = case(name)
    before, anon = peak_rss(), status("RssAnon") or 0
    start = time.perf_counter()
    matrix = run(hry, npz)
    seconds = time.perf_counter() - start
    # RSS counts the mapped file's pages a scan touched (page cache, shared,
    # dropped under pressure); RssAnon only memory of the process's own.
    grown = {"rss_growth_bytes": peak_rss() - before, "anon_growth_bytes": (status("RssAnon") or 0) - anon}
    print(json.dumps({"seconds": seconds, **grown, "nnz": int(matrix.nnz)}))


def ensure_npz(hry: str) -> str:
    import scipy.sparse as sp

    import hurray_reader as hr

    npz = hry[: -len(".hry")] + ".npz"
    if not os.path.exists(npz):
        a = hr.open(hry)["A"].to_scipy()
        sp.save_npz(npz + ".tmp.npz", a, compressed=False)
        os.replace(npz + ".tmp.npz", npz)
    return npz


def rotated(fns: dict, runs: int) -> dict:
    times = {k: [] for k in fns}
    for _ in range(runs):
        for name, fn in fns.items():
            start = time.perf_counter()
            result = fn()
            times[name].append(time.perf_counter() - start)
            del result
    return {k: {"median_s": statistics.median(v), "min_s": min(v), "max_s": max(v), "runs": len(v)} for k, v in times.items()}


def dask_spmv(hry: str, x, runs: int) -> dict:
    """A @ x through Dask on 1 and 2 worker processes, and scipy's on the
    whole matrix, medians of ``runs``."""
    import dask.distributed as dd

    import hurray_reader as hr
    import hurray_reader.dask as hd

    whole = hr.open(hry)["A"].to_scipy()
    out = {"scipy": rotated({"scipy": lambda: whole @ x}, runs)["scipy"]}
    for workers in (1, 2):
        with dd.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                             dashboard_address=None, silence_logs=40) as cluster, dd.Client(cluster) as client:
            a = hd.from_hurray(hry, "A")
            product = a @ x
            client.compute(product).result()  # compiles pydata sparse's kernels on each worker
            out[str(workers)] = rotated({"dask": lambda: client.compute(product).result()}, runs)["dask"]
            out[str(workers)]["blocks"] = len(a.chunks[1])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hry", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out")
    ap.add_argument("--dask", action="store_true", help="also time A @ x through Dask")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--npz", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.hry, args.npz)
        return

    import numpy as np
    import scipy
    import scipy.sparse as sp

    import hurray_reader as hr

    hry = os.path.abspath(args.hry)
    npz = ensure_npz(hry)
    for path in (hry, npz):
        warm(path)

    # Time, in rotation within this process.
    fns = {name: (lambda run=case(name): run(hry, npz)) for name in CASES}
    timing = rotated(fns, args.runs)
    # Memory, one fresh process per case.
    memory = {}
    for name in CASES:
        out = subprocess.run(
            [sys.executable, __file__, "--child", name, "--hry", hry, "--npz", npz],
            check=True, capture_output=True, text=True,
        ).stdout
        memory[name] = json.loads(out)

    # A @ x: the mapped matrix against an in-memory copy of it.
    a = hr.open(hry)["A"].to_scipy()
    copy = a.copy()
    x = np.random.default_rng(1).standard_normal(a.shape[1]).astype(np.float32)
    spmv = rotated({"ours": lambda: a @ x, "in_memory": lambda: copy @ x}, max(args.runs, 7))

    dask_timing = dask_spmv(hry, x, max(args.runs, 5)) if args.dask else None

    t = {k: v["median_s"] for k, v in timing.items()}
    results = {
        "matrix": {"path": hry, "shape": list(a.shape), "nnz": int(a.nnz), "bytes": os.path.getsize(hry)},
        "versions": {"numpy": np.__version__, "scipy": scipy.__version__, "python": sys.version.split()[0]},
        "cpus": len(os.sched_getaffinity(0)),
        "timing": timing,
        "memory": memory,
        "spmv": spmv,
        "dask": dask_timing,
        "ratios": {
            "load_npz / unchecked": t["load_npz"] / t["unchecked"],
            "load_npz / strict": t["load_npz"] / t["strict"],
            "load_npz / strict_1": t["load_npz"] / t["strict_1"],
            "pyhurray / strict": t["pyhurray"] / t["strict"],
            "pyhurray / strict_1": t["pyhurray"] / t["strict_1"],
            "A@x ours / in_memory": spmv["ours"]["median_s"] / spmv["in_memory"]["median_s"],
        },
    }
    targets = {
        "load_npz / unchecked": (">=", 1000),
        "load_npz / strict": (">=", 5),
        "pyhurray / strict": (">=", 20),
        "A@x ours / in_memory": ("<=", 1.10),
    }
    print(f"matrix {a.shape[0]} x {a.shape[1]}, nnz {a.nnz}, {results['matrix']['bytes']} bytes, {results['cpus']} CPUs")
    for name in CASES:
        m = memory[name]
        rss, anon = m["rss_growth_bytes"] / 2**20, m["anon_growth_bytes"] / 2**20
        print(f"  {name:10s} {t[name] * 1e3:10.3f} ms (median of {args.runs})   peak RSS +{rss:7.1f} MiB, anonymous +{anon:7.1f} MiB")
    print(f"  A @ x      ours {spmv['ours']['median_s'] * 1e3:.1f} ms, in-memory copy {spmv['in_memory']['median_s'] * 1e3:.1f} ms")
    for key, value in results["ratios"].items():
        op, bound = targets.get(key, (None, None))
        verdict = "" if op is None else ("met" if (value >= bound if op == ">=" else value <= bound) else "MISSED")
        goal = "" if op is None else f"(target {op} {bound})"
        print(f"  {key:24s} {value:10.2f}  {goal} {verdict}")
    if dask_timing:
        scipy_s = dask_timing["scipy"]["median_s"]
        for workers in ("1", "2"):
            d = dask_timing[workers]["median_s"]
            print(f"  A @ x through Dask, {workers} worker(s): {d * 1e3:.1f} ms, scipy on the whole matrix {scipy_s * 1e3:.1f} ms ({d / scipy_s:.2f}x its time)")
    unchecked_rss = memory["unchecked"]["rss_growth_bytes"]
    print(f"  unchecked RSS growth {unchecked_rss / 2**20:.1f} MiB (target < 64 MiB) {'met' if unchecked_rss < 64 * 2**20 else 'MISSED'}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
