"""``Tensor.matvec``: ``A @ x`` by the Rust kernels, against scipy and
against sums taken one element at a time in storage order."""

from __future__ import annotations

import array
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
    done = quantized = 0
    for entry in manifest["files"]:
        if entry["expect"] != "accept":
            continue
        with hr.open(folder / entry["file"]) as f:
            for t in f.values():
                if t.quantization is not None and t.layout in ("csc", "csr"):
                    with pytest.raises(TypeError, match="is quantized"):
                        t.matvec([0.0] * t.shape[1])
                    quantized += 1
                    continue
                if t.layout not in ("csc", "csr") or t.element_type not in ("float32", "float64"):
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
    assert quantized >= 1, quantized  # csc_quant_per_tensor_int8.hry


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
        with pytest.raises(TypeError, match=r"x is float32, tensor 'A' float64: convert it, np.asarray\(x, np.float64\)"):
            a.matvec(np.ones(3, np.float32))
        with pytest.raises(ValueError, match=r"x has shape \(4,\); tensor 'A' is \[3, 3\]: x needs \(3,\)"):
            a.matvec(np.ones(4))
        with pytest.raises(ValueError, match=r"x has shape \(3, 1\)"):
            a.matvec(np.ones((3, 1)))
        for scalar, kind in ((np.float64(1.0), "float64"), (3.0, "float"), (np.ones(()), "ndarray"), ("123", "str")):
            with pytest.raises(TypeError, match=rf"x is a scalar \({kind}\): matvec takes a vector, shape \(ncols,\)"):
                a.matvec(scalar)
        with pytest.raises(ValueError, match="threads must be at least 1, not 0"):
            a.matvec(np.ones(3), threads=0)
        with pytest.raises(TypeError, match="threads must be an int, not bool"):
            a.matvec(np.ones(3), threads=True)
        # A strided or misaligned x of the right dtype is taken (copied);
        # a big-endian one is another dtype.
        assert a.matvec(np.arange(6.0)[::2]).tolist() == [0.0, 2.0, 4.0]
        odd = np.frombuffer(b"\0" + np.arange(3.0).tobytes(), np.float64, offset=1)
        assert not odd.flags.aligned and a.matvec(odd).tolist() == [0.0, 1.0, 2.0]
        with pytest.raises(TypeError, match="x is >f8"):
            a.matvec(np.ones(3, ">f8"))
        # Any array but a list or tuple must have the dtype.
        assert a.matvec(array.array("d", [1, 2, 3])).tolist() == [1.0, 2.0, 3.0]
        with pytest.raises(TypeError, match="x is float32"):
            a.matvec(array.array("f", [1, 2, 3]))
        with pytest.raises(TypeError, match="x is None: matvec takes a vector"):
            a.matvec(None)
        with pytest.raises(TypeError, match="x holds object values, not numbers"):
            a.matvec([None, 1, 2])
        with pytest.raises(TypeError, match="x holds <U1 values"):
            a.matvec(["1", "2", "3"])
        assert a.matvec((1, 2.5, True)).tolist() == [1.0, 2.5, 1.0]
        with pytest.raises(TypeError, match="masked array"):
            a.matvec(np.ma.masked_array(np.ones(3), [0, 1, 0]))
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


def test_blocks(tmp_path):
    """``columns=`` / ``rows=``: the product of a block, with the bits of
    scipy's product of the same block (a row block's are the whole
    product's rows)."""
    rng = np.random.default_rng(5)
    a = sp.random_array((300, 200), density=0.1, format="csc", dtype=np.float32, rng=rng)
    a.data = rng.standard_normal(a.nnz).astype(np.float32)
    b = a.tocsr()
    hr.save(tmp_path / "m.hry", {"A": a, "B": b})
    x = rng.standard_normal(200).astype(np.float32)
    z = rng.standard_normal(300).astype(np.float32)
    with hr.open(tmp_path / "m.hry") as f:
        csc, csr = f["A"], f["B"]
        for j0, j1 in ((0, 200), (17, 90), (90, 90), (199, 200)):
            y = csc.matvec(x[j0:j1], columns=range(j0, j1))
            assert y.shape == (300,) and bits(y) == bits(a[:, j0:j1] @ x[j0:j1])
            # Aᵀ of a CSC tensor is CSR: its rows are A's columns.
            assert bits(csc.T.matvec(z, rows=slice(j0, j1))) == bits((a.T @ z)[j0:j1])
        for i0, i1 in ((0, 300), (5, 250), (299, 300)):
            assert bits(csr.matvec(x, rows=range(i0, i1))) == bits((b @ x)[i0:i1])
            got = csr.T.matvec(z[i0:i1], columns=range(i0, i1))
            assert got.shape == (200,) and bits(got) == bits(b[i0:i1, :].T @ z[i0:i1])
        # The parts of A·x add up to it (rounded per part).
        parts = sum(csc.matvec(x[j0:j1], columns=range(j0, j1)) for j0, j1 in ((0, 70), (70, 200)))
        np.testing.assert_allclose(parts, a @ x, rtol=1e-5, atol=1e-5)
        # Bounds as in to_scipy: negative from the end.
        assert bits(csc.matvec(x[-3:], columns=slice(-3, None))) == bits(a[:, 197:] @ x[197:])
        with pytest.raises(ValueError, match=r"x has shape \(200,\); tensor 'A' is \[300, 200\], its columns 1..5: x needs \(4,\)"):
            csc.matvec(x, columns=range(1, 5))
        with pytest.raises(ValueError, match=r"x has shape \(4,\); tensor 'B' is \[300, 200\]: x needs \(200,\)"):
            csr.matvec(x[:4], rows=range(1, 5))
        with pytest.raises(TypeError, match=r"tensor 'A' \(csc\): rows= is for CSR tensors"):
            csc.matvec(x, rows=range(1, 5))
        with pytest.raises(TypeError, match="not both"):
            csr.matvec(x, rows=range(1, 5), columns=range(1, 5))
        with pytest.raises(IndexError, match=r"block 0..201 is outside 0..200"):
            csc.matvec(x, columns=range(0, 201))
        with pytest.raises(ValueError, match="has a step"):
            csc.matvec(x[:5], columns=range(0, 10, 2))


def test_a_block_is_scanned_alone():
    """A block product scans its block, not the whole tensor: columns 1..5
    of this matrix are sound, column 0 is not."""
    path = FIXTURES / "invalid" / "csc_indices_unsorted.hry"
    for permissive in (False, True):
        with hr.open(path, permissive=permissive) as f:
            t = f["t"]  # 4 × 5; column 0 holds rows 3, 1
            ones = np.ones(4, np.float32)
            assert t.matvec(ones, columns=range(1, 5)).tolist() == [2.0, 3.0, 5.0, 0.0]
            assert t.T.matvec(ones, rows=range(1, 5)).tolist() == [0.0, 3.0, 2.0, 5.0]
            for block in (range(0, 1), range(0, 5)):
                with pytest.raises(hr.FormatError) as e:
                    t.matvec(np.ones(len(block), np.float32), columns=block)
                assert e.value.rule == "layouts/csc.md § Storage Invariants (3)"
            with pytest.raises(hr.FormatError):
                t.matvec(np.ones(5, np.float32))
            # Still refused, and the sound block still computed.
            assert t.matvec(ones, columns=range(1, 5)).tolist() == [2.0, 3.0, 5.0, 0.0]


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


def test_a_large_y_is_binned_and_split_by_rows(tmp_path):
    # y of 5 Mi float32 rows (20 MiB): the binned scatter, and on two
    # threads each thread's rows: the same bits as one thread.
    rng = np.random.default_rng(5)
    nrows, ncols, nnz = 5 << 20, 1000, 2_000_000
    rows = rng.integers(0, nrows, nnz)
    cols = np.sort(rng.integers(0, ncols, nnz))
    a = sp.csc_array((rng.standard_normal(nnz).astype(np.float32), (rows, cols)), shape=(nrows, ncols))
    a.sum_duplicates()
    hr.save(tmp_path / "a.hry", {"A": a})
    x = rng.standard_normal(ncols).astype(np.float32)
    want = stored_order(a.indices, np.repeat(np.arange(ncols), np.diff(a.indptr)), a.data, x, nrows)
    with hr.open(tmp_path / "a.hry") as f:
        t = f["A"]
        assert bits(t.matvec(x)) == bits(want)
        assert bits(t.matvec(x, threads=2)) == bits(want)
    # Its scratch is kept for the next product, until released.
    assert hr.release_scratch() > 0
    assert hr.release_scratch() == 0


def test_a_long_csr_row_may_be_cut_between_threads(tmp_path):
    rng = np.random.default_rng(9)
    dense = np.zeros((3, 300_000), np.float32)
    dense[1] = rng.standard_normal(300_000).astype(np.float32)  # one row of 300 000
    dense[0, :10] = dense[2, -10:] = 1.0
    hr.save(tmp_path / "r.hry", {"R": sp.csr_array(dense)})
    x = rng.standard_normal(300_000).astype(np.float32)
    with hr.open(tmp_path / "r.hry") as f:
        t = f["R"]
        one = t.matvec(x)
        assert bits(one) == bits(sp.csr_array(dense) @ x)
        two = t.matvec(x, threads=2)
        assert bits(two) == bits(t.matvec(x, threads=2))  # the same bits every call
        assert two[0] == one[0] and two[2] == one[2]
        np.testing.assert_allclose(two, one, rtol=1e-4)


def test_y_is_made_out_of_pythons_reach(monkeypatch):
    # The kernels write y before any Python code can see it: not made by
    # numpy.empty or numpy.zeros, which Python code may replace.
    def refuse(*args, **kwargs):
        raise AssertionError("a numpy constructor was called")

    for name in ("empty", "zeros", "empty_like", "zeros_like"):
        monkeypatch.setattr(np, name, refuse)
    with hr.open(WORKED) as f:
        y = f["A"].matvec([1, 2, 3, 4, 5])
    assert y.tolist() == [9.0, 9.0, 33.0, 0.0] and y.flags.writeable
