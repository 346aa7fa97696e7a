#!/usr/bin/env python3
"""``Tensor.matvec`` beside scipy's ``A @ x``, as a Python user calls them.

    matvec.py FILE.hry [FILE.hry ..] [--tensor A] [--rounds 15]

For each file's CSC tensor (``float32`` or ``float64``): ``t.matvec(x)``
on one and two threads against scipy's ``A @ x`` over the same mapped
arrays (``t.to_scipy()``), and the transposes (``t.T.matvec(z)``,
``A.T @ z``). Every call allocates its ``y``, as a user's does. The
routines run once per round, in rotation (A B A B ..), after one warm-up
call each (the first ``matvec`` scans the invariants, ``to_scipy`` did
too); one-thread routines pinned to one core (the next core each round),
two-thread ones unpinned. Prints the medians (ms) and scipy's time over
ours; every ``y`` is checked against scipy's (bit for bit on one thread).
The products suite (``products.sh``) times the Rust kernels themselves.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

import hurray_reader as hr


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+")
    p.add_argument("--tensor", default="A")
    p.add_argument("--rounds", type=int, default=15)
    args = p.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    print(f"{'file':<48} {'ours A·x 1t/2t':>16} {'scipy':>7} {'ratio 1t/2t':>12}"
          f" {'ours Aᵀ·x 1t/2t':>17} {'scipy':>7} {'ratio 1t/2t':>12}")
    for path in args.files:
        with hr.open(path) as f:
            t = f[args.tensor]
            a = t.to_scipy()
            nrows, ncols = t.shape
            x = ((np.arange(ncols) % 1024 - 512) / 1024).astype(t.dtype)
            z = ((np.arange(nrows) % 1024 - 512) / 1024).astype(t.dtype)
            routines = {
                "ax1": lambda: t.matvec(x, threads=1),
                "ax2": lambda: t.matvec(x, threads=2),
                "scipy_ax": lambda: a @ x,
                "atx1": lambda: t.T.matvec(z, threads=1),
                "atx2": lambda: t.T.matvec(z, threads=2),
                "scipy_atx": lambda: a.T @ z,
            }
            outputs = {name: run() for name, run in routines.items()}
            for ours, peer in (("ax1", "scipy_ax"), ("atx1", "scipy_atx")):
                assert outputs[ours].tobytes() == outputs[peer].tobytes(), (path, ours)
            # Two threads may add a row's (column's) parts apart: close only.
            for ours, peer in (("ax2", "scipy_ax"), ("atx2", "scipy_atx")):
                np.testing.assert_allclose(outputs[ours], outputs[peer], rtol=1e-3, atol=1e-3)
            times: dict[str, list[float]] = {name: [] for name in routines}
            try:
                for r in range(args.rounds):
                    for name, run in routines.items():
                        pin = {cores[r % len(cores)]} if not name.endswith("2") else set(cores)
                        os.sched_setaffinity(0, pin)
                        start = time.perf_counter()
                        run()
                        times[name].append(time.perf_counter() - start)
            finally:
                os.sched_setaffinity(0, set(cores))
            m = {name: statistics.median(ts) * 1e3 for name, ts in times.items()}
            print(
                f"{os.path.basename(path):<48} {m['ax1']:>7.1f} /{m['ax2']:>7.1f} {m['scipy_ax']:>7.1f}"
                f" {m['scipy_ax'] / m['ax1']:>5.2f} /{m['scipy_ax'] / m['ax2']:>5.2f}"
                f" {m['atx1']:>8.1f} /{m['atx2']:>7.1f} {m['scipy_atx']:>7.1f}"
                f" {m['scipy_atx'] / m['atx1']:>5.2f} /{m['scipy_atx'] / m['atx2']:>5.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
