#!/usr/bin/env python3
"""The sparse products beside scipy and MKL on a suite of shapes (issue #34).

    products.py --gen GEN --ours HURRAY_PRODUCTS --dir DIR [--runs R]
                [--shapes a,b,..] [--out results.json]
    products.py --pool run1.json run2.json ..

For each shape of ``SHAPES`` (``y`` within L2, within L3, far beyond it;
about 2, 10 and 100 non-zeros a column; one long column; float32, and one
float64), ``GEN`` writes the CSC file (cached by name in ``DIR``); the
peers read the very same mapped bytes (``hurray_reader.open(p)["A"]
.to_scipy(validate=False)``: int64 views of the file's indices, no copy),
and ``HURRAY_PRODUCTS`` (the Rust bench binary) maps it in its own process
and times the reader's kernels on request. Every routine runs once per
round, in one order, R rounds (A B A B ..), so a slow stretch of the
machine hits every library alike; the medians are compared.

Routines (every output preallocated, as ours are: a fresh ``np.zeros`` of
128 MB costs its page faults inside the timed call):

  ours ax1 / ax2         CscView::mul_vec / mul_vec_parallel(.., 2)
  ours atx1 / atx2       the same on A.transpose() (CSR dot products)
  scipy ax / atx         scipy.sparse._sparsetools.csc_matvec / csr_matvec
                         (what ``A @ x`` runs, less its np.zeros)
  mkl ax1 / ax2          sparse_dot_mkl.dot_product_mkl(A, x, out=y) on 1 / 2
                         threads (mkl_set_num_threads before each call)
  mkl atx1 / atx2        the same on A.T (a CSR over the same arrays)
  ours bound_*           what bounds ours on this machine, the same bytes
                         with less work (see benches/src/bin/hurray-products.rs)

One-thread routines run with every thread of both processes (this one
and ``HURRAY_PRODUCTS``) pinned to one core, the same for every routine of
a round, the next core the next round; two-thread routines run unpinned.
Left to the OS, each process keeps to the core it last ran on, and on a
host whose cores run at different speeds (another tenant on one of them)
the same kernel in two processes differed by 1.5x, round after round.

Which code path MKL took: one A·x and one Aᵀ·x per shape and thread count
in a child process with ``MKL_VERBOSE=1``; its lines go to the JSON.

Each call's CPU time (every thread's: ``process_time`` here, the Rust
process's own clock there) is kept beside its wall time: on a machine
shared with other work, it shows the work a routine does whatever the
waiting.

Prints one table row per shape (medians in ms and the ratios the issue's
targets name), then each target's verdict (``TARGETS``: met, bounded by
what the bound measured, or not met) on the medians and on the fastest
rounds, and writes everything to ``--out``. ``--pool`` measures nothing:
it puts together the rounds of several runs' ``--out`` (of one commit)
and prints the same tables over all of them (written to ``--out`` too).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

# name: (pattern, values, nnz, rows). L2 is 1 MiB a core on the 2-core
# host, L3 32 MiB: 2^17 f32 rows are 512 KiB of y, 2^21 are 8 MiB, 2^25
# are 128 MiB.
SHAPES = {
    "l2-d2": ("short2", "f32", 32_000_000, 1 << 17),
    "l2-d10": ("random10", "f32", 32_000_000, 1 << 17),
    "l2-d100": ("random100", "f32", 32_000_000, 1 << 17),
    "l3-d2": ("short2", "f32", 32_000_000, 1 << 21),
    "l3-d10": ("random10", "f32", 32_000_000, 1 << 21),
    "l3-d100": ("random100", "f32", 32_000_000, 1 << 21),
    "far-d2": ("short2", "f32", 32_000_000, 1 << 25),
    "far-d10": ("random10", "f32", 32_000_000, 1 << 25),
    "far-d100": ("random100", "f32", 32_000_000, 1 << 25),
    "onecol": ("onecol", "f32", 8_000_000, 1 << 25),
    "l3-d10-f64": ("random10", "f64", 32_000_000, 1 << 21),
}

OURS = ["ax1", "ax2", "atx1", "atx2"]
BOUNDS = ["bound_sum1", "bound_sum2", "bound_scatter1", "bound_scatter2", "bound_dot1", "bound_dot2",
          "bound_ax1", "bound_ax2", "bound_atx1", "bound_atx2", "bound_gather1", "bound_gather2"]
PEERS = ["scipy_ax", "scipy_atx", "mkl_ax1", "mkl_ax2", "mkl_atx1", "mkl_atx2"]


def generate(gen: str, directory: str, shape: str) -> str:
    pattern, values, nnz, rows = SHAPES[shape]
    out = subprocess.run(
        [gen, "--format", "csc", "--pattern", pattern, "--values", values,
         "--nnz", str(nnz), "--rows", str(rows), "--dir", directory],
        check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out)["path"]


def x_vector(n: int, dtype):
    import numpy as np

    # data::x_at: (i mod 1024) / 1024 - 0.5, exact in f32.
    return ((np.arange(n, dtype=np.float64) % 1024) / 1024 - 0.5).astype(dtype)


def open_peers(path: str):
    """The file's CSC as scipy sees it, zero-copy, and the peers' routines."""
    import numpy as np
    import scipy.sparse._sparsetools as st
    import sparse_dot_mkl as sdm
    import hurray_reader as hr

    a = hr.open(path)["A"].to_scipy(validate=False)
    assert not a.indices.flags["OWNDATA"], "the peers must read the mapping"
    at = a.T  # csr_array over the same arrays
    nrows, ncols = a.shape
    x = x_vector(ncols, a.dtype)
    xt = x_vector(nrows, a.dtype)
    y = np.zeros(nrows, a.dtype)
    z = np.zeros(ncols, a.dtype)
    ym = np.zeros(nrows, a.dtype)
    zm = np.zeros(ncols, a.dtype)

    def scipy_ax():
        y.fill(0)
        st.csc_matvec(nrows, ncols, a.indptr, a.indices, a.data, x, y)

    def scipy_atx():
        z.fill(0)
        st.csr_matvec(ncols, nrows, at.indptr, at.indices, at.data, xt, z)

    def mkl(m, v, out, threads):
        def run():
            sdm.mkl_set_num_threads(threads)
            sdm.dot_product_mkl(m, v, out=out, out_scalar=0.0)
        return run

    fns = {
        "scipy_ax": scipy_ax,
        "scipy_atx": scipy_atx,
        "mkl_ax1": mkl(a, x, ym, 1),
        "mkl_ax2": mkl(a, x, ym, 2),
        "mkl_atx1": mkl(at, xt, zm, 1),
        "mkl_atx2": mkl(at, xt, zm, 2),
    }
    sums = {"scipy_ax": lambda: float(y.astype(np.float64).sum()),
            "scipy_atx": lambda: float(z.astype(np.float64).sum()),
            "mkl_ax": lambda: float(ym.astype(np.float64).sum()),
            "mkl_atx": lambda: float(zm.astype(np.float64).sum())}
    return a, fns, sums


class Ours:
    """The Rust bench binary, serving one file on a pipe."""

    def __init__(self, binary: str, path: str):
        self.proc = subprocess.Popen([binary, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.hello = json.loads(self.proc.stdout.readline())

    def ask(self, line: str) -> str:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline().strip()
        if reply.startswith("error"):
            raise RuntimeError(f"hurray-products: {reply}")
        return reply

    def run(self, name: str) -> tuple[float, float]:
        """Wall and CPU seconds (every thread's) of one call."""
        reply = self.ask(f"run {name} 1").split()
        return float(reply[1]), float(reply[2])

    def close(self):
        self.proc.stdin.write("quit\n")
        self.proc.stdin.close()
        self.proc.wait()


def mkl_verbose(path: str) -> list[str]:
    """The MKL_VERBOSE lines of one A·x and one Aᵀ·x per thread count."""
    code = (
        "import sys; sys.path.insert(0, %r)\n"
        "import products as p\n"
        "a, fns, _ = p.open_peers(%r)\n"
        "for n in ['mkl_ax1', 'mkl_ax2', 'mkl_atx1', 'mkl_atx2']:\n"
        "    print('CASE', n, flush=True); fns[n]()\n"
    ) % (os.path.dirname(os.path.abspath(__file__)), path)
    env = dict(os.environ, MKL_VERBOSE="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if line.startswith(("CASE", "MKL_VERBOSE"))]


def pin(pids: list[int], cpus: set[int]) -> None:
    """Every thread of each process in ``pids`` to ``cpus`` (Linux; a no-op
    where threads cannot be pinned)."""
    if not hasattr(os, "sched_setaffinity"):
        return
    for pid in pids:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                os.sched_setaffinity(int(tid), cpus)
            except OSError:  # a thread that has just ended
                pass


def measure(shape: str, path: str, ours_bin: str, runs: int) -> dict:
    ours = Ours(ours_bin, path)
    a, fns, sums = open_peers(path)
    names = OURS + PEERS + BOUNDS
    # One warm-up call of each (page cache, huge pages, MKL's first call).
    for n in names:
        if n in OURS or n in BOUNDS:
            ours.run(n)
        else:
            fns[n]()
    times = {n: [] for n in names}
    cpu = {n: [] for n in names}
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [0]
    pids = [os.getpid(), ours.proc.pid]
    for round_ in range(runs):
        one = {cores[round_ % len(cores)]}
        for n in names:
            pin(pids, set(cores) if n.endswith("2") else one)
            if n in OURS or n in BOUNDS:
                wall, used = ours.run(n)
            else:
                t0, c0 = time.perf_counter(), time.process_time()
                fns[n]()
                wall, used = time.perf_counter() - t0, time.process_time() - c0
            times[n].append(wall)
            cpu[n].append(used)
    pin(pids, set(cores))
    check = json.loads(ours.ask("check"))
    ours.close()
    for n in ["scipy_ax", "scipy_atx"]:
        fns[n]()
    fns["mkl_ax1"]()
    fns["mkl_atx1"]()
    got = {k: f() for k, f in sums.items()}
    return {
        "shape": shape,
        "spec": SHAPES[shape],
        "dims": ours.hello,
        "path": path,
        "runs": runs,
        "times_s": times,
        "cpu_s": cpu,
        "load": os.getloadavg(),
        "pinning": "one-thread routines: both processes on one core a round, the cores in turn; two-thread routines: unpinned",
        "check": check,
        "peer_sums": got,
        "mkl_verbose": mkl_verbose(path),
    }


# The targets: (name, ours, peers, factor, bounds). A target is
# met when the fastest peer takes `factor` times our time or more; it is
# bounded when even the bound, measured in our process, is not `factor`
# times faster than that peer: no kernel moving those bytes could meet it
# on this machine. The bound of each product moves every byte the product
# must (its pointers, indices, values, the x it reads and, for Aᵀ·x, the
# y it writes) with less work; where there are two, the faster is the
# bound. A·x: bound_ax* the bare stores (each value stored to its row's
# slot: no read of y, no multiply, no column walk) and bound_gather* its
# loads without the stores (every value times y's entry at its row, in
# four sums), each with the pointers and x summed in step. Aᵀ·x:
# bound_atx* the dot without rows (every value times its x, in four sums:
# no per-row sum, store or branch) with the pointers summed and y written
# in step. A bound that took longer than ours (by more than SLACK, the
# rounds' noise) bounds nothing: our kernel did the work in less time, and
# the target is then not met. Nor does a bound that took longer than the
# peer (by more than SLACK): the peer did the product in less time than
# the bound, so the bound is not what limits this machine (on the Intel
# host of run AE, MKL's Aᵀ·x ran faster than the dot without rows).
# LEAN: the same
# without the pointers, x (A·x) and y (Aᵀ·x), the bounds through run O,
# judged by too (``verdicts_lean``).
TARGETS = [
    ("ax1", "ax1", ("scipy_ax", "mkl_ax1"), 1.2, ("bound_ax1", "bound_gather1")),
    ("atx1", "atx1", ("scipy_atx", "mkl_atx1"), 1.1, ("bound_atx1",)),
    ("ax2", "ax2", ("mkl_ax2",), 1.1, ("bound_ax2", "bound_gather2")),
    ("atx2", "atx2", ("mkl_atx2",), 1.1, ("bound_atx2",)),
]
SLACK = 1.05
LEAN = {"bound_ax1": "bound_scatter1", "bound_gather1": "bound_dot1", "bound_atx1": "bound_dot1",
        "bound_ax2": "bound_scatter2", "bound_gather2": "bound_dot2", "bound_atx2": "bound_dot2"}


def ratios(r: dict) -> dict:
    m = r["median_s"]
    return {
        "ax1_vs_best": min(m["scipy_ax"], m["mkl_ax1"]) / m["ax1"],
        "atx1_vs_best": min(m["scipy_atx"], m["mkl_atx1"]) / m["atx1"],
        "ax2_vs_mkl2": m["mkl_ax2"] / m["ax2"],
        "atx2_vs_mkl2": m["mkl_atx2"] / m["atx2"],
    }


def verdicts(r: dict, stat: str = "median_s", lean: bool = False) -> dict:
    """Each target's ratio, the peer's over the bound's (the faster of
    its bounds), and the verdict: "met", "bounded" (only by a bound that
    took at most ``SLACK`` times ours and the peer's) or "not met", on the medians (or the minimums:
    ``stat="min_s"``) of the rounds; with ``lean``, by the ``LEAN``
    bounds."""
    m = r[stat]
    out = {}
    for name, ours, peers, factor, bounds in TARGETS:
        named = [LEAN[b] if lean else b for b in bounds]
        present = [b for b in named if b in m]
        if not present:
            raise SystemExit(f"products.py: no bound of {name} ({', '.join(bounds)}) in these results")
        bound = min(present, key=lambda b: m[b])  # the faster bound
        peer = min(m[p] for p in peers)
        ratio, headroom = peer / m[ours], peer / m[bound]
        bounds_both = m[bound] <= m[ours] * SLACK and m[bound] <= peer * SLACK
        verdict = "met" if ratio >= factor else "bounded" if headroom < factor and bounds_both else "not met"
        out[name] = {"ratio": ratio, "target": factor, "peer_over_bound": headroom, "bound": bound,
                     "verdict": verdict}
    return out


def print_verdicts(results: list[dict], key: str = "verdicts", title: str = "on the medians") -> None:
    """One line a shape: each target's ratio, verdict and peer ÷ bound."""
    print(f"\nThe targets' verdicts, {title}:")
    print(f"{'shape':>10}  " + "  ".join(f"{name + ' >= ' + str(f):>24}" for name, _, _, f, _ in TARGETS))
    for r in results:
        cells = [f"{v['ratio']:.2f} {v['verdict']} ({v['peer_over_bound']:.2f})" for v in r[key].values()]
        print(f"{r['shape']:>10}  " + "  ".join(f"{c:>24}" for c in cells))
    print("(ratio: peer time / ours; in brackets: peer time / the bound's)")


def summarise(r: dict) -> dict:
    """``r`` with its medians, minimums, ratios and verdicts (re)computed
    from its rounds."""
    r["median_s"] = {n: statistics.median(v) for n, v in r["times_s"].items()}
    r["median_cpu_s"] = {n: statistics.median(v) for n, v in r["cpu_s"].items()}
    r["min_s"] = {n: min(v) for n, v in r["times_s"].items()}
    r["ratios"] = ratios(r)
    r["verdicts"] = verdicts(r)
    r["verdicts_min"] = verdicts(r, "min_s")
    r["verdicts_lean"] = verdicts(r, lean=True)
    return r


def pool(paths: list[str]) -> list[dict]:
    """The shapes of several runs' JSON (``--out``), each shape's rounds
    put together: runs of one commit, to read past a noisy stretch. Exits
    with a message naming the file on anything else: a file given twice,
    not such JSON, a shape whose routines or matrix differ between runs."""
    def fail(path: str, why: str):
        sys.exit(f"products.py --pool: {path}: {why}")

    if len({os.path.realpath(p) for p in paths}) != len(paths):
        sys.exit("products.py --pool: a file is given twice (its rounds would count twice)")
    pooled: dict[str, dict] = {}
    for path in paths:
        try:
            with open(path) as f:
                results = json.load(f)["results"]
            shapes = [(r["shape"], r["spec"], r["runs"], r["times_s"], r["cpu_s"]) for r in results]
        except OSError as e:
            fail(path, e.strerror or str(e))
        except (ValueError, KeyError, TypeError) as e:
            fail(path, f"not the JSON that products.py --out writes ({type(e).__name__}: {e})")
        for r, (shape, spec, runs, times, cpu) in zip(results, shapes):
            missing = [n for n in OURS + PEERS + BOUNDS if not times.get(n) or not cpu.get(n)]
            if missing:
                fail(path, f"shape {shape}: no rounds of {', '.join(missing)}")
            into = pooled.setdefault(shape, dict(r, times_s={}, cpu_s={}, runs=0, pooled_from=[]))
            if into["spec"] != spec:
                fail(path, f"shape {shape} is {spec}, {into['spec']} in {into['pooled_from'][0]}")
            for key, rounds in (("times_s", times), ("cpu_s", cpu)):
                for n, v in rounds.items():
                    into[key].setdefault(n, []).extend(v)
            into["runs"] += runs
            into["pooled_from"].append(path)
    return [summarise(r) for r in pooled.values()]


def print_row(r: dict) -> None:
    """The shape's medians, ratios, CPU times, bounds, checks and MKL path."""
    m = {k: v * 1e3 for k, v in r["median_s"].items()}
    row = [m[k] for k in ("ax1", "ax2", "atx1", "atx2", "scipy_ax", "scipy_atx",
                          "mkl_ax1", "mkl_ax2", "mkl_atx1", "mkl_atx2")]
    print(f"{r['shape']:>9} " + " ".join(f"{v:9.2f}" for v in row) + " "
          + " ".join(f"{v:9.2f}" for v in r["ratios"].values()), flush=True)
    c = {k: round(v * 1e3, 1) for k, v in r["median_cpu_s"].items() if not k.startswith("bound")}
    print(f"{'':>9} cpu ms {c} load {r['load']}", flush=True)
    b = {k: round(v, 2) for k, v in m.items() if k.startswith("bound")}
    print(f"{'':>9} bounds ms {b} check {r['check']} peers {r['peer_sums']}", flush=True)
    print(f"{'':>9} mkl: {mkl_paths(r['mkl_verbose'])}", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gen")
    p.add_argument("--ours")
    p.add_argument("--dir")
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--shapes", default=",".join(SHAPES))
    p.add_argument("--out")
    p.add_argument("--pool", nargs="+", metavar="JSON",
                   help="measure nothing: print the tables of these runs' rounds put together "
                        "(and write them to --out)")
    args = p.parse_args()
    if not args.pool and not (args.gen and args.ours and args.dir):
        p.error("--gen, --ours and --dir are required unless --pool is given")
    results = pool(args.pool) if args.pool else []
    cols = ("shape", "ax1", "ax2", "atx1", "atx2", "sp_ax", "sp_atx", "mkl_ax1", "mkl_ax2", "mkl_atx1", "mkl_atx2",
            "Ax1/best", "Atx1/best", "Ax2/mkl2", "Atx2/mkl2")
    print("Median wall times in ms; ours: ax1/ax2 = A·x on 1/2 threads, atx1/atx2 = Aᵀ·x; sp_ = scipy;\n"
          "mkl_ = MKL on 1/2 threads; then the ratios the targets name (fastest peer / ours, MKL 2t / ours 2t).",
          flush=True)
    print(" ".join(f"{c:>9}" for c in cols), flush=True)
    for r in results:
        print_row(r)
        print(f"{'':>9} pooled: {r['runs']} rounds from {', '.join(r['pooled_from'])}", flush=True)
    if args.pool and args.out:
        with open(args.out, "w") as f:
            json.dump({"host": host(), "pooled": args.pool, "results": results}, f, indent=1)
    if not args.pool:
        for shape in args.shapes.split(","):
            path = generate(args.gen, args.dir, shape)
            r = summarise(measure(shape, path, args.ours, args.runs))
            results.append(r)
            print_row(r)
            if args.out:  # after each shape: a run cut short keeps what it measured
                with open(args.out, "w") as f:
                    json.dump({"host": host(), "results": results}, f, indent=1)
    print_verdicts(results)
    # The fastest round of each: where another tenant of the machine takes
    # a core for a while (two-thread times then fall into two groups),
    # the minimums show what the code does when it has the cores.
    print_verdicts(results, "verdicts_min", "on each routine's fastest round")
    print_verdicts(results, "verdicts_lean", "on the medians, by the bounds without the pointers, x (A·x) and y (Aᵀ·x)")


def mkl_paths(lines: list[str]) -> str:
    """MKL's build line (the code path it dispatched to) and each mv call."""
    head = next((line.split(" for ", 1)[-1] for line in lines if "Product build" in line), "?")
    calls = [line.split("() ", 1)[-1] for line in lines if line.startswith("MKL_VERBOSE END mkl_sparse_") and "_mv()" in line]
    return f"{head}; mv calls: {calls}"


def host() -> dict:
    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    return {"lscpu": lscpu, "uname": os.uname()._asdict() if hasattr(os.uname(), "_asdict") else list(os.uname())}


if __name__ == "__main__":
    main()
