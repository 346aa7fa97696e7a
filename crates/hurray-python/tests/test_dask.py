"""``hurray_reader.dask.from_hurray`` on a real scheduler: a
``dask.distributed.LocalCluster`` of worker processes computes ``A @ x``,
``A.sum(axis=0)`` and ``A[:, j0:j1]`` on corpus files and on a 100 M
non-zero matrix, equal to scipy on the whole matrix; the task graph holds
no data. ``hurray_reader.dask.matvec`` gives ``t.matvec``'s products."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import hurray_reader as hr

from corpus import FIXTURES, corpus

da = pytest.importorskip("dask.array", reason="the dask extra is not installed")
distributed = pytest.importorskip("dask.distributed")
hd = pytest.importorskip("hurray_reader.dask")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
    ) as cluster, distributed.Client(cluster) as c:
        yield c


def dense(x):
    return x.todense() if hasattr(x, "todense") else np.asarray(x)


def agree(client, path, name, chunk_cols):
    """Every operation through Dask equals scipy's on the whole matrix."""
    with hr.open(path) as f:
        whole = f[name].to_scipy()
    a = hd.from_hurray(path, name, chunk_cols=chunk_cols)
    assert a.shape == whole.shape and a.dtype == whole.dtype
    x = np.linspace(-1, 1, whole.shape[1]).astype(whole.dtype if whole.dtype.kind == "f" else np.float64)
    got_ax = dense(client.compute(a @ x).result())
    assert np.allclose(got_ax, whole @ x, rtol=1e-5, atol=1e-6)
    got_sum = dense(client.compute(a.sum(axis=0)).result())
    assert np.allclose(got_sum, whole.sum(axis=0), rtol=1e-5, atol=1e-6)
    j0, j1 = whole.shape[1] // 3, (2 * whole.shape[1]) // 3 + 1
    got_block = dense(client.compute(a[:, j0:j1]).result())
    assert np.array_equal(got_block, whole[:, j0:j1].toarray())
    return a


def test_fixture_and_corpus_matrices(client):
    agree(client, FIXTURES / "csc_worked_example.hry", "A", 2)
    agree(client, FIXTURES / "sparse_formats.hry", "m.csc", 4)
    agree(client, FIXTURES / "sparse_formats.hry", "m.csr", 2)  # row blocks
    folder, _ = corpus("HURRAY_INTEROP_DIR")
    a = agree(client, folder / "csc_random_f64_200x300.hry", "random_f64", 64)
    assert a.chunks == ((200,), (64, 64, 64, 64, 44))
    agree(client, folder / "csc_column_patterns.hry", "wide_columns", None)
    # (float32 and float64 only: pydata sparse compiles its kernels with
    # numba in each worker, for each value type, ~10 s a type.)


def test_blocks_by_bytes_and_arguments(tmp_path):
    path = tmp_path / "m.hry"
    a = sp.random_array((50, 1000), density=0.1, format="csc", dtype=np.float32, rng=5)
    hr.save(path, {"A": a})
    whole = hd.from_hurray(path, "A")
    assert whole.chunks == ((50,), (1000,))  # 5 000 values: one block
    old = hd.BLOCK_BYTES
    try:
        hd.BLOCK_BYTES = 12 * 1000  # about 1 000 non-zeros (4 + 8 bytes each) a block
        blocks = hd.from_hurray(path, "A")
    finally:
        hd.BLOCK_BYTES = old
    widths = blocks.chunks[1]
    assert sum(widths) == 1000 and 4 <= len(widths) <= 6
    with pytest.raises(ValueError, match="positive int"):
        hd.from_hurray(path, "A", chunk_cols=0)
    for bad in (True, 2.0, np.int64(-1)):
        with pytest.raises(ValueError, match="positive int"):
            hd.from_hurray(path, "A", chunk_cols=bad)
    # numpy integers are ints (they were refused).
    assert hd.from_hurray(path, "A", chunk_cols=np.int64(300)).chunks == ((50,), (300, 300, 300, 100))
    with pytest.raises(KeyError):
        hd.from_hurray(path, "B")
    # No columns: one empty block, by bytes or by count (was `[0]`: no block).
    hr.save(tmp_path / "e.hry", {"E": sp.csc_array((5, 0), dtype=np.float32)})
    for chunk in (None, 3):
        empty = hd.from_hurray(tmp_path / "e.hry", "E", chunk_cols=chunk)
        assert empty.chunks == ((5,), (0,)) and empty.sum(axis=0).compute(scheduler="sync").shape == (0,)
        assert hd.matvec(tmp_path / "e.hry", "E", np.zeros(0, np.float32), chunk).compute().tolist() == [0.0] * 5
    hr.save(tmp_path / "d.hry", {"D": np.ones((2, 2))})
    with pytest.raises(TypeError, match="CSC or CSR"):
        hd.from_hurray(tmp_path / "d.hry", "D")


def test_a_broken_block_fails_its_task(tmp_path, client):
    """Each task scans its own block: the block holding the damage raises
    FormatError on the worker, the others compute."""
    src = FIXTURES / "invalid" / "csc_indices_unsorted.hry"
    a = hd.from_hurray(src, "t", chunk_cols=1)
    with hr.open(src) as f:
        ncols = f["t"].shape[1]
    outcomes = []
    for j in range(ncols):
        try:
            client.compute(a[:, j : j + 1]).result()
            outcomes.append("ok")
        except hr.FormatError as e:
            outcomes.append(e.field)
    assert "row_indices[1]" in outcomes and "ok" in outcomes


@pytest.mark.parametrize("position, pointer", [(5, 2**52), (5, 2**62), (5, 2**64 - 1), (0, 2**63)])
def test_pointers_nothing_scanned_yet_cut_no_blocks(tmp_path, position, pointer):
    """The blocks are cut by the descriptor's nnz, which the open checked
    against the buffers, not by the unscanned ``col_ptr``: a claim of
    2**52 elements in a file of 12 KB is not allocated for (it took 83 s
    and 6.5 GB), and computing refuses the file by its rule."""
    path = tmp_path / "claims.hry"
    data = bytearray((FIXTURES / "csc_worked_example.hry").read_bytes())
    with hr.open(FIXTURES / "csc_worked_example.hry") as f:
        col_ptr = next(b for b in f["A"]._info["buffers"] if b["role"] == "col_ptr")
    data[col_ptr["offset"] + 8 * position : col_ptr["offset"] + 8 * position + 8] = pointer.to_bytes(8, "little")
    path.write_bytes(data)
    a = hd.from_hurray(path, "A")
    assert a.chunks == ((4,), (5,))  # one block: 5 elements
    with pytest.raises(hr.FormatError) as e:
        a.compute(scheduler="sync")
    assert e.value.field == f"col_ptr[{position}]" and "Storage Invariants" in e.value.rule
    with pytest.raises(hr.FormatError):
        hd.matvec(path, "A", np.ones(5, np.float32)).compute(scheduler="sync")


def test_matvec_by_blocks_on_workers(client):
    """``hd.matvec`` equals ``t.matvec``: bit for bit where the blocks cut
    the rows of the matrix multiplied, within rounding where they cut its
    columns (bit for bit again with one block)."""
    folder, _ = corpus("HURRAY_INTEROP_DIR")
    cases = [
        (FIXTURES / "csc_worked_example.hry", "A", 2),
        (FIXTURES / "sparse_formats.hry", "m.csr", 2),
        (folder / "csc_random_f64_200x300.hry", "random_f64", 64),
        (folder / "csc_column_patterns.hry", "wide_columns", None),
    ]
    for path, name, chunk in cases:
        with hr.open(path) as f:
            t = f[name]
            nrows, ncols = t.shape
            x = np.linspace(-1, 1, ncols, dtype=t.dtype)
            z = np.linspace(-2, 3, nrows, dtype=t.dtype)
            want_ax, want_atz = t.matvec(x), t.T.matvec(z)
            cut_columns = t.layout == "csc"
        ax = hd.matvec(path, name, x, chunk)
        atz = hd.matvec(path, name, z, chunk, transpose=True)
        assert ax.shape == (nrows,) and ax.dtype == t.dtype and atz.shape == (ncols,)
        got_ax, got_atz = client.gather(client.compute([ax, atz]))
        summed, whole = (got_ax, want_ax) if cut_columns else (got_atz, want_atz)
        np.testing.assert_allclose(summed, whole, rtol=1e-5, atol=1e-6)
        cut, want = (got_atz, want_atz) if cut_columns else (got_ax, want_ax)
        assert cut.tobytes() == want.tobytes(), (path, name)
        one = hd.matvec(path, name, x if cut_columns else z, 10**9, transpose=not cut_columns)
        assert client.compute(one).result().tobytes() == (want_ax if cut_columns else want_atz).tobytes()
    # x may be a Dask array, chunked any way.
    path = folder / "csc_random_f64_200x300.hry"
    x = np.linspace(-1, 1, 300)
    with hr.open(path) as f:
        want = f["random_f64"].matvec(x)
    got = client.compute(hd.matvec(path, "random_f64", da.from_array(x, chunks=7), 64)).result()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_matvec_adds_many_parts_and_refuses(tmp_path):
    """300 one-column blocks: their parts added in a tree of groups of
    ``ADD_FAN_IN``; exact values, so every order gives the same bits."""
    rng = np.random.default_rng(2)
    a = sp.random_array((40, 300), density=0.2, format="csc", dtype=np.float32, rng=rng)
    a.data = (rng.integers(0, 1024, a.nnz) / 1024).astype(np.float32)
    path = tmp_path / "m.hry"
    hr.save(path, {"A": a, "D": np.ones((2, 2), np.float32)})
    x = ((np.arange(300) % 1024 - 512) / 1024).astype(np.float32)
    y = hd.matvec(path, "A", x, 1)
    adds = [k for k in dict(y.__dask_graph__()) if "-add" in str(k[0]) or k == (y.name, 0)]
    assert len(adds) == 38 + 5 + 1  # 300 parts, by 8: 38, 5, 1
    assert y.compute(scheduler="sync").tobytes() == (a @ x).tobytes()
    with pytest.raises(TypeError, match="x is float64, tensor 'A' float32"):
        hd.matvec(path, "A", x.astype(np.float64))
    with pytest.raises(ValueError, match=r"x has shape \(299,\); the matrix is 40 x 300: x needs \(300,\)"):
        hd.matvec(path, "A", x[1:])
    with pytest.raises(ValueError, match=r"x needs \(40,\)"):
        hd.matvec(path, "A", x, transpose=True)
    with pytest.raises(TypeError, match="matvec is for CSC and CSR tensors"):
        hd.matvec(path, "D", np.ones(2, np.float32))
    with pytest.raises(TypeError, match="transpose"):
        hd.matvec(path, "A", x, transpose=1)
    # A broken block fails when computed, naming the rule.
    broken = FIXTURES / "invalid" / "csc_indices_unsorted.hry"
    y = hd.matvec(broken, "t", np.ones(5, np.float32), 1)
    with pytest.raises(hr.FormatError) as e:
        y.compute(scheduler="sync")
    assert e.value.rule == "layouts/csc.md § Storage Invariants (3)"


def test_a_worker_knows_the_arrays_file(tmp_path, monkeypatch):
    """On the array's machine, a file moved over the path is another file,
    whatever its size and modification time: a file replaced within one
    clock tick of its writing kept both, and served stale arrays. On
    another machine (another host name), which may see a copy of its own
    (another inode), a copy that keeps the size and the modification time
    to the second serves (tasks compared the inode there too, and refused
    every copy); another tensor under the name never does."""
    import shutil

    path, copy = tmp_path / "m.hry", tmp_path / "copy.hry"
    a = sp.random_array((30, 20), density=0.3, format="csc", dtype=np.float64, rng=4)
    hr.save(path, {"A": a})
    x = np.linspace(-1, 1, 20)
    y = hd.matvec(path, "A", x, 5)
    blocks = hd.from_hurray(path, "A", chunk_cols=5)
    shutil.copy2(path, copy)  # the bytes, the size and the modification time (ns)
    os.replace(copy, path)
    for stale in (y, blocks.sum(axis=0)):
        with pytest.raises(RuntimeError, match="where the array was made, it is another file"):
            stale.compute(scheduler="sync")
    monkeypatch.setattr(hd.socket, "gethostname", lambda: "another-machine")
    np.testing.assert_allclose(y.compute(scheduler="sync"), a @ x, rtol=1e-12)
    np.testing.assert_allclose(dense(blocks.sum(axis=0).compute(scheduler="sync")), a.sum(axis=0))
    st = os.stat(path)
    second = st.st_mtime_ns // 10**9 * 10**9
    os.utime(path, ns=(st.st_atime_ns, second))  # as tar and scp -p keep it
    np.testing.assert_allclose(y.compute(scheduler="sync"), a @ x, rtol=1e-12)
    for mtime in (second + 10**9, st.st_mtime_ns + 1 if st.st_mtime_ns % 10**9 else st.st_mtime_ns + 2):
        # Another second; or the same second, but not a whole one: the
        # same file's time, to the nanosecond, or another file's.
        os.utime(path, ns=(st.st_atime_ns, mtime))
        with pytest.raises(RuntimeError, match=r"it was modified at .*, the array's file at"):
            y.compute(scheduler="sync")
    # Another tensor under the name, or none, the file's identity kept.
    identity = hd._identity(os.stat(path))
    wrong_shape = r"tensor 'A' there is csc of float64, shape \[30, 20\]; the array's was csc of float64, shape \[30, 21\]"
    for name, shape, why in (("A", (30, 21), wrong_shape), ("B", (30, 20), "no tensor 'B' there")):
        source = hd._Source(str(path), False, "another-machine", identity, name, "csc", "float64", shape)
        with pytest.raises(RuntimeError, match=why):
            source.tensor()


def test_a_file_replaced_in_the_tick_it_was_written_is_refused(tmp_path):
    """helper-42's case: a file written, an array made, the file replaced
    by hr.save within one clock tick (the same size and, often, the same
    mtime_ns): the array served the new file's values 18 times in 20."""
    import shutil

    m = sp.random_array((300, 200), density=0.05, format="csc", dtype=np.float32, rng=1)
    source, path = tmp_path / "src.hry", tmp_path / "p.hry"
    hr.save(source, {"A": m})
    x = np.ones(200, np.float32)
    for _ in range(10):
        shutil.copyfile(source, path)
        y = hd.matvec(path, "A", x)
        hr.save(path, {"A": sp.csc_array(2 * m)})
        with pytest.raises(RuntimeError, match="is not the file this Dask array was made from"):
            y.compute(scheduler="sync")


def test_a_file_replaced_while_a_task_opens_it_is_refused(tmp_path, monkeypatch):
    """Between a task's check of the file and its open, the path can change
    hands: the new file was opened, served and kept under the old file's
    identity (helper-43: up to 9% of computes with a writer racing)."""
    path = tmp_path / "m.hry"
    a = sp.csc_array(np.eye(4, dtype=np.float64))
    hr.save(path, {"A": a})
    y = hd.matvec(path, "A", np.ones(4))
    opener = hd._open

    def replace_then_open(p, **kw):
        hr.save(path, {"A": 2 * a})
        return opener(p, **kw)

    monkeypatch.setattr(hd, "_open", replace_then_open)
    with pytest.raises(RuntimeError, match="it was replaced while this task opened it"):
        y.compute(scheduler="sync")
    monkeypatch.undo()
    with pytest.raises(RuntimeError, match="is not the file this Dask array was made from"):
        y.compute(scheduler="sync")
    # Nothing was kept under the old identity: a new array reads the new file.
    assert hd.matvec(path, "A", np.ones(4)).compute(scheduler="sync").tolist() == [2.0] * 4


def test_a_worker_keeps_one_file_a_path(tmp_path):
    """Files replaced at a path were kept open (mapped, their disk space
    held) until 16 others had come: now the last one a path only."""
    path = tmp_path / "m.hry"
    for k in range(5):
        hr.save(path, {"A": sp.csc_array(np.eye(4, dtype=np.float64) * (k + 1))})
        assert hd.matvec(path, "A", np.ones(4)).compute(scheduler="sync").tolist() == [k + 1.0] * 4
    kept = [identity for (p, _), (identity, _) in hd._files.items() if p == str(path)]
    assert kept == [hd._identity(os.stat(path))]


def big_matrix(path):
    """1 M x 1 M, 100 M non-zeros (100 a column), float32: 1.2 GB."""
    n, per = 1_000_000, 100
    rows = (np.arange(per, dtype=np.int64) * (n // per))[None, :] + (np.arange(n, dtype=np.int64) % (n // per))[:, None]
    col_ptr = np.arange(n + 1, dtype=np.int64) * per
    values = np.ones(n * per, dtype=np.float32)
    values[:: 7] = 2.0
    hr.save(path, {"A": sp.csc_array((values, rows.reshape(-1), col_ptr), shape=(n, n))})


def test_100m_nonzeros_on_two_workers(tmp_path_factory, client):
    path = tmp_path_factory.mktemp("big") / "big.hry"
    big_matrix(path)
    a = hd.from_hurray(path, "A")
    # The graph holds paths and column ranges, never data.
    graph = dict(a.__dask_graph__())
    assert len(pickle.dumps(graph)) < 1_000_000
    assert len(a.chunks[1]) == -(-100_000_000 // (hd.BLOCK_BYTES // 12)) == 9  # 1.2 GB in blocks of 128 MiB
    with hr.open(path) as f:
        whole = f["A"].to_scipy()
    x = np.random.default_rng(3).standard_normal(whole.shape[1]).astype(np.float32)
    assert np.allclose(dense(client.compute(a @ x).result()), whole @ x, rtol=1e-4, atol=1e-3)
    assert np.array_equal(dense(client.compute(a.sum(axis=0)).result()), whole.sum(axis=0))
    block = dense(client.compute(a[:, 499_990:500_010]).result())
    assert np.array_equal(block, whole[:, 499_990:500_010].toarray())


def test_full_reductions_on_worker_processes(tmp_path, client):
    """A 0-d reduction is a 0-d ``sparse.COO`` whose value is its
    ``fill_value``; distributed's COO serializer dropped it, so on worker
    processes ``A.sum()``, ``A.max()``, ``A.mean()`` came back as 0."""
    path = tmp_path / "m.hry"
    whole = sp.random_array((60, 45), density=0.2, format="csc", dtype=np.float64, rng=11)
    hr.save(path, {"A": whole})
    a = hd.from_hurray(path, "A", chunk_cols=7)  # 7 blocks, on both workers
    expected = {
        "sum": whole.sum(),
        "max": whole.max(),
        "min": whole.min(),
        "mean": whole.mean(),
        "sum(axis=(0, 1))": whole.sum(),
    }
    got = {
        "sum": a.sum(),
        "max": a.max(),
        "min": a.min(),
        "mean": a.mean(),
        "sum(axis=(0, 1))": a.sum(axis=(0, 1)),
    }
    for what, reduction in got.items():
        result = client.compute(reduction).result()
        assert result.shape == ()
        assert float(result) == pytest.approx(expected[what], rel=1e-12), what
    assert whole.sum() > 50 and whole.min() == 0.0  # not trivially 0
    # compute() (the client's scheduler) gives the 0-d COO: float() or
    # todense() of it is the number (float(a.sum()) of the Dask array
    # asks the COO for .item(), which sparse lacks).
    total = a.sum().compute()
    assert float(total) == pytest.approx(whole.sum(), rel=1e-12)
    assert total.todense().shape == () and total.todense() == pytest.approx(whole.sum(), rel=1e-12)
    # A + 1 has fill value 1; its column maxima come back from a worker
    # as a COO of fill value 1 (was 0).
    maxima = client.compute((a + 1).max(axis=0)).result()
    assert maxima.fill_value == 1.0
    assert np.array_equal(dense(maxima), (whole.toarray() + 1).max(axis=0))


def test_a_replaced_file_gets_new_keys(tmp_path, client):
    """The keys name the file (device, inode, size, mtime), not only its
    path: a file replaced at the same path is a new array, and a client
    holding the old one's blocks (persist) does not serve them for it."""
    path = tmp_path / "m.hry"
    first = sp.random_array((30, 20), density=0.3, format="csc", dtype=np.float64, rng=1)
    second = sp.random_array((30, 20), density=0.3, format="csc", dtype=np.float64, rng=2)
    hr.save(path, {"A": first})
    a = hd.from_hurray(path, "A", chunk_cols=5)
    assert a.name == hd.from_hurray(path, "A", chunk_cols=5).name  # the same file: the same keys
    held = a.persist()
    assert np.allclose(dense(client.compute(held.sum(axis=0)).result()), first.sum(axis=0))
    unseen = hd.from_hurray(path, "A", chunk_cols=4)  # made, not computed, before the file is replaced
    product = hd.matvec(path, "A", np.ones(20), chunk_cols=4)
    hr.save(path, {"A": second})  # same shape, same size: only the file differs
    # Its tasks find another file at the path: an error, not the new data.
    for stale in (unseen.sum(axis=0), product):
        with pytest.raises(RuntimeError, match="is not the file this Dask array was made from"):
            client.compute(stale).result()
    b = hd.from_hurray(path, "A", chunk_cols=5)
    assert b.name != a.name
    assert not set(b.__dask_keys__()[0]) & set(a.__dask_keys__()[0])
    assert np.allclose(dense(client.compute(b.sum(axis=0)).result()), second.sum(axis=0))
    assert not np.allclose(first.sum(axis=0), second.sum(axis=0))
    del held
