"""``Tensor.matvec``: ``A @ x`` by the Rust kernels, against scipy and
against sums taken one element at a time in storage order."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import scipy.sparse as sp

import hurray_reader as hr

from corpus import FIXTURES, corpus

WORKED = FIXTURES / "csc_worked_example.hry"


def bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


def test_worked_example():
    with hr.open(WORKED) as f:
        a = f["A"]  # 4 × 5, float32
        y = a.matvec(np.arange(1, 6, dtype=np.float32))
        assert y.dtype == np.float32 and y.shape == (4,) and y.flags.writeable
        assert y.tolist() == [9.0, 9.0, 33.0, 0.0]
        assert a.matvec([1, 2, 3, 4, 5], threads=2).tolist() == [9.0, 9.0, 33.0, 0.0]
        # The transpose: Aᵀ·x, a CSR read of the same buffers.
        assert a.T.matvec([1.0, 10.0, 100.0, 1000.0]).tolist() == [1.0, 400.0, 30.0, 2.0, 500.0]
        y[0] = 5.0  # a new array, not the file's


def stored_order(rows, cols, values, x, n) -> np.ndarray:
    """``y[rows[k]] += values[k] * x[cols[k]]`` for k in storage order, in
    the values' dtype (``np.add.at`` is unbuffered: one element at a time)."""
    y = np.zeros(n, values.dtype)
    np.add.at(y, rows, values * x[cols])
    return y


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_random_matrices_sum_in_storage_order(tmp_path, dtype):
    rng = np.random.default_rng(7)
    nrows, ncols = 3000, 2000
    # ~150 000 elements: above the 2^16 under which one thread does it all.
    a = sp.random_array((nrows, ncols), density=0.025, format="csc", dtype=np.float64, rng=rng)
    a.data = (rng.standard_normal(a.nnz) * 1e4 ** rng.integers(-1, 2, a.nnz)).astype(dtype)
    a.data[::97] = -0.0
    path = tmp_path / "a.hry"
    hr.save(path, {"A": a, "B": a.tocsr()})
    x = rng.standard_normal(ncols).astype(dtype)
    z = rng.standard_normal(nrows).astype(dtype)
    cols = np.repeat(np.arange(ncols), np.diff(a.indptr))
    with hr.open(path) as f:
        csc, csr = f["A"], f["B"]
        assert csc.nnz > 2**16
        want_ax = stored_order(a.indices, cols, a.data, x, nrows)
        want_atz = stored_order(cols, a.indices, a.data, z, ncols)
        assert bits(csc.matvec(x, threads=1)) == bits(want_ax) == bits(csc.to_scipy() @ x)
        # Aᵀ·z: each column's dot product, in storage order, on any threads
        # (no column here is long enough to be cut).
        for threads in (1, 2, 3):
            assert bits(csc.T.matvec(z, threads=threads)) == bits(want_atz)
        # Two threads cut A·x's columns: a row with elements on both sides
        # is summed in two parts, so only close.
        np.testing.assert_allclose(csc.matvec(x, threads=2), want_ax, rtol=1e-4, atol=1e-3)
        # The CSR tensor: its rows' dot products, and its transpose's scatter.
        b = csr.to_scipy()
        assert bits(csr.matvec(x, threads=1)) == bits(b @ x) == bits(csr.matvec(x, threads=2))
        rows_b = np.repeat(np.arange(nrows), np.diff(b.indptr))
        assert bits(csr.T.matvec(z, threads=1)) == bits(stored_order(b.indices, rows_b, b.data, z, ncols))


def test_two_threads_equal_one_on_exact_values(tmp_path):
    # Values k/1024 and x (j - 512)/1024 make every product and sum exact:
    # the column split gives one thread's bits.
    rng = np.random.default_rng(11)
    a = sp.random_array((5000, 4000), density=0.02, format="csc", rng=rng)
    a.data = (rng.integers(0, 1024, a.nnz) / 1024).astype(np.float32)
    hr.save(tmp_path / "a.hry", {"A": a})
    x = ((np.arange(4000) % 1024 - 512) / 1024).astype(np.float32)
    with hr.open(tmp_path / "a.hry") as f:
        one = f["A"].matvec(x, threads=1)
        assert bits(f["A"].matvec(x, threads=2)) == bits(one) == bits(a @ x)


def test_interop_matrices_agree_with_scipy():
    folder, manifest = corpus("HURRAY_INTEROP_DIR")
    done = 0
    for entry in manifest["files"]:
        if entry["expect"] != "accept":
            continue
        with hr.open(folder / entry["file"]) as f:
            for t in f.values():
                if t.layout not in ("csc", "csr") or t.element_type not in ("float32", "float64"):
                    continue
                if t.quantization is not None:
                    continue
                nrows, ncols = t.shape
                x = np.linspace(-1, 1, ncols, dtype=t.dtype)
                z = np.linspace(-2, 3, nrows, dtype=t.dtype)
                a = t.to_scipy()
                for threads in (1, 2):
                    assert bits(t.matvec(x, threads=threads)) == bits(a @ x), (entry["file"], t.name)
                    assert bits(t.T.matvec(z, threads=threads)) == bits(a.T @ z), (entry["file"], t.name)
                done += 1
    assert done >= 10, done


def test_refusals(tmp_path):
    hr.save(
        tmp_path / "m.hry",
        {
            "coo": sp.coo_array(np.eye(3, dtype=np.float32)),
            "ints": sp.csc_array(np.eye(3, dtype=np.int32)),
            "dense": np.eye(3, dtype=np.float32),
            "A": sp.csc_array(np.eye(3, dtype=np.float64)),
        },
    )
    with hr.open(tmp_path / "m.hry") as f:
        for name in ("coo", "ints", "dense"):
            with pytest.raises(TypeError, match="matvec is for CSC and CSR tensors of float32 or float64"):
                f[name].matvec([1, 2, 3])
        a = f["A"]
        with pytest.raises(TypeError, match=r"x is float32, tensor 'A' float64: pass x.astype\(np.float64\)"):
            a.matvec(np.ones(3, np.float32))
        with pytest.raises(ValueError, match=r"x has shape \(4,\); tensor 'A' is \[3, 3\]: x needs \(3,\)"):
            a.matvec(np.ones(4))
        with pytest.raises(ValueError, match=r"x has shape \(3, 1\)"):
            a.matvec(np.ones((3, 1)))
        with pytest.raises(ValueError, match=r"x has shape \(\)"):
            a.matvec(np.float64(1.0))
        with pytest.raises(ValueError, match="threads must be at least 1, not 0"):
            a.matvec(np.ones(3), threads=0)
        with pytest.raises(TypeError, match="threads must be an int, not bool"):
            a.matvec(np.ones(3), threads=True)
        # Strided and big-endian x are taken (copied into the tensor's layout).
        assert a.matvec(np.arange(6.0)[::2]).tolist() == [0.0, 2.0, 4.0]
        with pytest.raises(TypeError, match="x is >f8"):
            a.matvec(np.ones(3, ">f8"))
    with pytest.raises(ValueError, match="closed"):
        a.matvec(np.ones(3))


def test_a_broken_matrix_is_refused_in_either_mode():
    path = FIXTURES / "invalid" / "csc_indices_unsorted.hry"
    for permissive in (False, True):
        with hr.open(path, permissive=permissive) as f:
            (t,) = f.values()
            x = np.ones(t.shape[1], t.dtype)
            for _ in range(2):  # the failed scan is not kept as a pass
                with pytest.raises(hr.FormatError) as e:
                    t.matvec(x)
                assert e.value.rule == "layouts/csc.md § Storage Invariants (3)"


def test_threads_share_a_file(tmp_path):
    rng = np.random.default_rng(3)
    a = sp.random_array((20000, 20000), density=0.001, format="csc", dtype=np.float32, rng=rng)
    hr.save(tmp_path / "a.hry", {"A": a})
    x = rng.standard_normal(20000).astype(np.float32)
    with hr.open(tmp_path / "a.hry") as f:
        t = f["A"]
        want = bits(a @ x)
        got: list[bytes] = []

        def work():
            for _ in range(5):
                got.append(bits(t.matvec(x)))  # one thread: scipy's bits

        threads = [threading.Thread(target=work) for _ in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert got == [want] * 20
