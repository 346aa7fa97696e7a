#!/usr/bin/env python3
"""``hurray_reader.dask.matvec`` beside Dask's own ``A @ x`` on
``from_hurray``'s chunks, as a Dask user computes them.

    dask_matvec.py FILE.hry [FILE.hry ..] [--tensor A] [--rounds 9]
                   [--chunk-cols N] [--workers 2] [--processes]

For each file's CSC tensor (``float32`` or ``float64``), over the same
blocks (``from_hurray``'s cut: about ``BLOCK_BYTES`` a block, or
``--chunk-cols`` columns): ``hd.matvec(path, name, x)`` (each block
multiplied by the Rust kernels) against ``(from_hurray(path, name) @
x)`` (each block a pydata ``sparse.GCXS``, multiplied by sparse), and the
transposes (``transpose=True`` against ``A.T @ z``). Each ``compute()``
builds the graph anew, as a user's call does. Dask's threaded scheduler
with ``--workers`` threads, or with ``--processes`` a
``distributed.LocalCluster`` of that many single-thread worker processes.
The routines run once per round, in rotation (A B A B ..), after a
warm-up call each (sparse compiles its kernels with numba then); prints
the medians (ms) and sparse's time over ours, and checks every ``y``
against ``t.matvec``'s. ``x`` is a numpy array, which Dask puts in the
graph, for both routines alike.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time
import warnings
from typing import Any

import dask
import numpy as np

import hurray_reader as hr
import hurray_reader.dask as hd


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+")
    p.add_argument("--tensor", default="A")
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--chunk-cols", type=int, default=None)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--processes", action="store_true")
    args = p.parse_args()
    # An x in memory travels in the graph, for both routines alike;
    # distributed warns of it on every compute above 10 MiB.
    warnings.filterwarnings("ignore", message="Sending large graph")
    with scheduler(args.workers, args.processes) as compute:
        print(f"{'file':<48} {'blocks':>6} {'ours A·x':>9} {'sparse':>8} {'ratio':>6}"
              f" {'ours Aᵀ·x':>10} {'sparse':>8} {'ratio':>6}")
        for path in args.files:
            measure(path, args, compute)


@contextlib.contextmanager
def scheduler(workers: int, processes: bool) -> Any:
    """``compute(array) -> numpy.ndarray`` on the scheduler asked for."""
    if not processes:
        with dask.config.set(scheduler="threads", num_workers=workers):
            yield lambda a: a.compute()
        return
    import distributed

    with distributed.LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
    ) as cluster, distributed.Client(cluster) as client:
        yield lambda a: client.compute(a).result()


def measure(path: str, args: argparse.Namespace, compute: Any) -> None:
    name = args.tensor
    with hr.open(path) as f:
        t = f[name]
        nrows, ncols = t.shape
        x = ((np.arange(ncols) % 1024 - 512) / 1024).astype(t.dtype)
        z = ((np.arange(nrows) % 1024 - 512) / 1024).astype(t.dtype)
        want = {"ax": t.matvec(x), "atx": t.T.matvec(z)}
    chunks = args.chunk_cols

    def sparse_product(v: np.ndarray, transpose: bool) -> np.ndarray:
        a = hd.from_hurray(path, name, chunks)
        y = compute((a.T if transpose else a) @ v)
        return y.todense() if hasattr(y, "todense") else np.asarray(y)

    routines = {
        "ours_ax": lambda: compute(hd.matvec(path, name, x, chunks)),
        "sparse_ax": lambda: sparse_product(x, False),
        "ours_atx": lambda: compute(hd.matvec(path, name, z, chunks, transpose=True)),
        "sparse_atx": lambda: sparse_product(z, True),
    }
    for routine, run in routines.items():
        got = run()  # the warm-up
        np.testing.assert_allclose(got, want[routine.split("_")[1]], rtol=1e-4, atol=1e-3)
    times: dict[str, list[float]] = {routine: [] for routine in routines}
    for _ in range(args.rounds):
        for routine, run in routines.items():
            start = time.perf_counter()
            run()
            times[routine].append(time.perf_counter() - start)
    m = {routine: statistics.median(ts) * 1e3 for routine, ts in times.items()}
    blocks = len(hd.from_hurray(path, name, chunks).chunks[1])
    print(
        f"{os.path.basename(path):<48} {blocks:>6} {m['ours_ax']:>9.1f} {m['sparse_ax']:>8.1f}"
        f" {m['sparse_ax'] / m['ours_ax']:>6.2f} {m['ours_atx']:>10.1f} {m['sparse_atx']:>8.1f}"
        f" {m['sparse_atx'] / m['ours_atx']:>6.2f}",
        flush=True,
    )


if __name__ == "__main__":
    main()
