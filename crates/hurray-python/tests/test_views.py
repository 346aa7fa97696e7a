"""What the package promises of its arrays: zero copy, read-only, alive on
their own; and of its objects: mapping behaviour, errors, reprs."""

from __future__ import annotations

import gc
import json
import os
import shutil
import sys
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp

import hurray_reader as hr
from hurray_reader import _native

from corpus import FIXTURES, corpus

WORKED = FIXTURES / "csc_worked_example.hry"
WORKED_DENSE = np.array(
    [[1, 0, 0, 2, 0], [0, 0, 3, 0, 0], [0, 4, 0, 0, 5], [0, 0, 0, 0, 0]],
    dtype=np.float32,
)


def _owner(array: np.ndarray) -> object:
    """The object at the end of an array's base chain."""
    while isinstance(array, np.ndarray) and array.base is not None:
        array = array.base
    return array


@pytest.mark.parametrize("mmap", [True, False])
def test_csc_buffers_and_scipy_share_the_files_bytes(mmap):
    with hr.open(WORKED, mmap=mmap) as f:
        assert f.container["mapped"] is mmap
        t = f["A"]
        buffers = t.buffers()
        assert list(buffers) == ["values", "row_indices", "col_ptr"]
        assert buffers["values"].tolist() == [1.0, 4.0, 3.0, 2.0, 5.0]
        assert buffers["row_indices"].tolist() == [0, 2, 1, 0, 2]
        assert buffers["col_ptr"].tolist() == [0, 1, 2, 3, 4, 5]
        assert buffers["row_indices"].dtype == np.int64
        a = t.to_scipy()
        assert isinstance(a, sp.csc_array)
        assert a.shape == (4, 5) and a.nnz == 5 and a.dtype == np.float32
        assert np.array_equal(a.toarray(), WORKED_DENSE)
        for ours, theirs in [(t.values, a.data), (t.row_indices, a.indices), (t.col_ptr, a.indptr)]:
            assert np.shares_memory(ours, theirs)
            assert isinstance(_owner(theirs), _native.Bytes)
        # Every view points into the same exported bytes, at the buffer's
        # offset in the file (values at 4096, row_indices at 8192).
        storage = _owner(a.data)
        base = np.frombuffer(storage, dtype=np.uint8)
        assert a.data.ctypes.data - base.ctypes.data == 4096
        assert a.indices.ctypes.data - base.ctypes.data == 8192
        assert len(storage) == WORKED.stat().st_size


def test_arrays_are_read_only():
    with hr.open(FIXTURES / "sparse_formats.hry") as f:
        arrays = list(f["m.csc"].buffers().values())
        a = f["m.csc"].to_scipy()
        arrays += [a.data, a.indices, a.indptr, f["m.dense"].numpy(), f["m.dense_col_major"].numpy()]
        arrays += [f["m.coo"].to_scipy().coords[0]]
    with hr.open(FIXTURES / "dtypes.hry") as f:
        arrays += [f["bf16"].numpy(), f["bool"].numpy()]  # decoded copies too
    for array in arrays:
        assert not array.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            array[...] = 0
        with pytest.raises(ValueError, match="WRITEABLE"):
            array.flags.writeable = True


def test_arrays_keep_the_mapping_alive():
    f = hr.open(WORKED)
    t = f["A"]
    values, a, dense = t.values, t.to_scipy(), hr.open(FIXTURES / "sparse_formats.hry")["m.dense"].numpy()
    f.close()
    del f, t
    gc.collect()
    assert values.tolist() == [1.0, 4.0, 3.0, 2.0, 5.0]
    assert np.array_equal(a.toarray(), WORKED_DENSE)
    assert (a @ np.ones(5, np.float32)).tolist() == [3.0, 3.0, 9.0, 0.0]
    assert dense.shape == (5, 6)


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs Linux's /proc/self/maps")
def test_the_mapping_goes_with_the_last_reference(tmp_path):
    # No garbage collection: the File and its Tensors hold no reference
    # cycle, so reference counting alone lets the mapping go.
    path = tmp_path / "worked.hry"
    shutil.copyfile(WORKED, path)

    def mapped() -> bool:
        with open("/proc/self/maps") as maps:
            return str(path) in maps.read()

    gc.disable()
    try:
        f = hr.open(path)
        t = f["A"]
        assert t.T.matvec(np.ones(4, np.float32)).tolist() == WORKED_DENSE.sum(axis=0).tolist()
        assert f["A"].to_scipy().nnz == 5
        assert mapped()
        del f
        assert mapped()  # t still holds the file
        del t
        assert not mapped()
        a = hr.open(path)["A"].to_scipy()
        assert mapped()  # the array holds its bytes
        del a
        assert not mapped()
    finally:
        gc.enable()


def test_tensors_are_equal_by_file_and_name():
    f, g = hr.open(WORKED), hr.open(WORKED)
    assert f["A"] == f["A"] and hash(f["A"]) == hash(f["A"]) and len({f["A"], f["A"]}) == 1
    assert f["A"].T == f["A"].T and f["A"].T != f["A"] and f["A"].T.T == f["A"]
    assert f["A"] != g["A"]  # another open file
    assert f == f and f.items() == f.items() and f != g
    assert f["A"] != "A"


def test_a_scan_is_made_once_per_file_and_tensor():
    class Counting:
        """The native file, counting its scans."""

        def __init__(self, native):
            self.native, self.checks = native, 0

        def check(self, name):
            self.checks += 1
            return self.native.check(name)

        def __getattr__(self, attr):
            return getattr(self.native, attr)

    f = hr.open(WORKED)
    f._native = counting = Counting(f._native)
    f["A"].to_scipy()
    f["A"].to_scipy()
    f["A"].T.to_scipy()
    assert counting.checks == 1
    f["A"].validate()  # always scans again
    assert counting.checks == 2
    g = hr.open(WORKED)
    g.validate()
    g._native = counting = Counting(g._native)
    g["A"].to_scipy()  # the file's check read it
    assert counting.checks == 0


def test_a_closed_file_refuses_new_work():
    f = hr.open(WORKED)
    t = f["A"]
    f.close()
    assert f.closed
    assert repr(f) == f"<hurray_reader.File {str(WORKED)!r} (closed)>"
    for call in (lambda: f["A"], lambda: list(f), lambda: f.metadata, t.buffers, t.to_scipy):
        with pytest.raises(ValueError, match="closed file"):
            call()


def test_mapping_behaviour_and_file_order():
    with hr.open(FIXTURES / "sparse_formats.hry") as f:
        names = ["m.csc", "m.csr", "m.coo", "m.coo_unsorted", "m.dense", "m.dense_col_major", "m.csc_int32", "csf"]
        assert list(f) == names and list(f.keys()) == names and len(f) == 8
        assert "m.csc" in f and "nope" not in f and 3 not in f
        assert [t.name for t in f.values()] == names
        assert [(n, t.layout) for n, t in f.items()][:3] == [("m.csc", "csc"), ("m.csr", "csr"), ("m.coo", "coo")]
        with pytest.raises(KeyError, match="nope"):
            f["nope"]
        with pytest.raises(TypeError, match="tensor names are str"):
            f[0]
        assert f.metadata == {
            "producer": "hurray-writer make_fixtures",
            "matrix.nnz": 12,
            "matrix.offset": -3,
            "matrix.scale": 0.25,
            "matrix.symmetric": False,
            "matrix.tag": b"\x00\x01\xfe\xff",
            "matrix.names": ["csc", "csr", "coo"],
        }
        assert f.container["container_version"] == (1, 0)
        assert f.container["data_buffer_alignment"] == 4096


def test_tensor_attributes():
    with hr.open(FIXTURES / "sparse_formats.hry") as f:
        t = f["m.csc"]
        assert (t.name, str(t.dtype), t.element_type, t.layout) == ("m.csc", "float64", "float64", "csc")
        assert (t.shape, t.ndim, t.nnz) == ((5, 6), 2, 12)
        assert t.quantization is None and t.statistics is None and t.members == []
        assert f["m.dense"].nnz is None
        assert f["csf"].shape == (2, 3, 4) and f["csf"].ndim == 3
        assert repr(t) == "<hurray_reader.Tensor 'm.csc': float64 csc [5, 6], nnz 12>"
        assert "<td>m.csc</td><td>float64</td><td>csc</td><td>[5, 6]</td><td>12</td>" in f._repr_html_()
        assert "<th>nnz</th><td>12</td>" in t._repr_html_()
    with hr.open(FIXTURES / "dtypes.hry") as f:
        assert f["bf16"].dtype == "bfloat16" and f["int4"].dtype == "int4"
        assert f["bool"].dtype == np.dtype(bool) and f["c64"].dtype == np.complex64
        assert f["scalar"].shape == () and f["scalar"].numpy().shape == ()
    assert repr(hr.open(WORKED)) == f"<hurray_reader.File {str(WORKED)!r}: 1 tensor, 16467 bytes, mapped>"


def test_transpose_is_the_csr_of_the_same_buffers():
    with hr.open(WORKED) as f:
        t = f["A"]
        tt = t.T
        assert (tt.layout, tt.shape, tt.nnz) == ("csr", (5, 4), 5)
        assert repr(tt) == "<hurray_reader.Tensor 'A': float32 csr [5, 4], nnz 5 (transposed view)>"
        assert list(tt.buffers()) == ["values", "col_indices", "row_ptr"]
        assert np.shares_memory(tt.row_ptr, t.col_ptr) and np.shares_memory(tt.col_indices, t.row_indices)
        at = tt.to_scipy()
        assert isinstance(at, sp.csr_array) and np.array_equal(at.toarray(), WORKED_DENSE.T)
        assert np.shares_memory(at.indptr, t.col_ptr)
        assert tt.T.layout == "csc" and tt.T.shape == (4, 5)
    with hr.open(FIXTURES / "sparse_formats.hry") as f:
        csr = f["m.csr"]
        assert np.array_equal(csr.T.to_scipy().toarray(), csr.to_scipy().toarray().T)
        with pytest.raises(TypeError, match="CSC and CSR"):
            f["m.coo"].T


def test_every_layout_of_one_matrix_reads_the_same():
    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    entry = next(e for e in manifest["files"] if e["file"] == "sparse_formats.hry")
    dense_of = {t["name"]: np.array(t["dense"]) for t in entry["tensors"] if "dense" in t}
    want = dense_of["m.dense"]
    assert want.shape == (5, 6) and np.count_nonzero(want) == 12
    with hr.open(FIXTURES / "sparse_formats.hry") as f:
        for name in ("m.csc", "m.csr", "m.coo", "m.coo_unsorted"):
            assert np.array_equal(f[name].to_scipy().toarray(), want), name
        for name in ("m.dense", "m.dense_col_major"):
            dense = f[name].numpy()
            assert np.array_equal(dense, want), name
            assert np.shares_memory(dense, f[name].buffers()["data"])  # no copy
        assert f["m.dense_col_major"].numpy().flags.f_contiguous
        int32 = f["m.csc_int32"].to_scipy().toarray()
        assert int32.dtype == np.int32 and np.array_equal(int32, dense_of["m.csc_int32"])
        assert np.array_equal(int32 != 0, want != 0)
        coo = f["m.coo"].to_scipy()
        assert isinstance(coo, sp.coo_array)
        assert np.shares_memory(coo.coords[0], f["m.coo"].indices)
        csf = f["csf"].to_scipy()  # layouts/csf.md § Example, as COO: a copy of the coordinates
        assert isinstance(csf, sp.coo_array) and csf.shape == (2, 3, 4) and csf.nnz == 4
        assert [tuple(int(c[k]) for c in csf.coords) for k in range(4)] == [(0, 0, 1), (0, 2, 3), (1, 1, 0), (1, 1, 2)]
        assert csf.data.tolist() == [1.0, 2.0, 3.0, 4.0]
        with pytest.raises(TypeError, match="sparse"):
            f["m.csc"].numpy()
        with pytest.raises(TypeError, match="use numpy"):
            f["m.dense"].to_scipy()
        # copy=True: writable arrays of their own, so scipy may change them.
        own = f["m.csc"].to_scipy(copy=True)
        assert own.data.flags.writeable and not np.shares_memory(own.data, f["m.csc"].values)
        own.data[own.data == 1.5] = 0.0
        own.eliminate_zeros()
        assert own.nnz == 11


def test_decoded_types_are_copies_with_the_logical_values():
    with hr.open(FIXTURES / "dtypes.hry") as f:
        assert f["bool"].numpy().tolist() == [True, False, True, True, False]
        assert f["uint4"].numpy().tolist() == [5, 12, 3]
        assert f["uint2"].numpy().tolist() == [3, 1, 2]
        assert f["int4"].numpy().tolist() == [[-8, 7], [1, -1]]
        assert f["float6"].numpy().tolist() == [1.0, 1.5, -2.0, 3.0, 0.5]
        bf16 = f["bf16"].numpy()
        assert bf16.dtype == np.float32 and bf16.reshape(-1)[:2].tolist() == [1.0, -2.5]
        assert bf16.reshape(-1)[3] == -np.inf
        assert f["bool"].buffers()["data"].tolist() == [13]  # raw packed bytes
        f16 = f["f16"].numpy()
        assert f16.dtype == np.float16 and np.shares_memory(f16, f["f16"].buffers()["data"])
        assert f16.view(np.uint16).tolist() == [15360, 32768, 31743, 31744]
        assert f["i64"].numpy().flags.f_contiguous


def test_format_error_carries_the_rust_errors_location():
    with hr.open(FIXTURES / "invalid" / "csc_indices_unsorted.hry") as f:
        t = f["t"]
        with pytest.raises(hr.FormatError) as caught:
            t.to_scipy()
        e = caught.value
        assert isinstance(e, ValueError)
        assert (e.tensor, e.field, e.offset, e.rule) == (
            "t",
            "row_indices[1]",
            8200,
            "layouts/csc.md § Storage Invariants (3)",
        )
        assert str(e).startswith("tensor 't': row_indices[1] at offset 8200: ")
        # validate=False hands scipy the unchecked arrays (trusted files only).
        assert t.to_scipy(validate=False).nnz == t.nnz
        with pytest.raises(hr.FormatError):
            f.validate()
    with pytest.raises(hr.FormatError) as caught:
        hr.open(FIXTURES / "invalid" / "header_magic.hry")
    assert (caught.value.tensor, caught.value.field, caught.value.offset) == (None, "magic", 0)
    assert caught.value.rule == "file-format.md § File Header"


def test_os_errors_and_arguments():
    with pytest.raises(FileNotFoundError) as caught:
        hr.open("/no/such.hry")
    # The path and the errno once each.
    assert str(caught.value) == "[Errno 2] cannot open: No such file or directory: '/no/such.hry'"
    with pytest.raises(IsADirectoryError):
        hr.open(FIXTURES)
    with pytest.raises(ValueError, match="at least 1"):
        hr.open(WORKED, threads=0)
    with pytest.raises(TypeError, match="threads must be an int"):
        hr.open(WORKED, threads=2.0)
    assert hr.open(WORKED, threads=3).container["threads"] == 3
    assert hr.open(WORKED).container["threads"] >= 1


def test_permissive_mode_is_the_librarys():
    with hr.open(WORKED, permissive=True) as f:
        assert f.container["strict"] is False
        assert np.array_equal(f["A"].to_scipy().toarray(), WORKED_DENSE)


def test_interop_dense_layouts_view_or_decode():
    folder, _ = corpus("HURRAY_INTEROP_DIR")
    with hr.open(folder / "dense_col_major.hry") as f:
        for name in f:
            t = f[name]
            if t.dtype in (np.float32, np.float64):
                assert np.shares_memory(t.numpy(), t.buffers()["data"]), name
    with hr.open(folder / "hilbert_f32_4x4.hry") as f:
        (t,) = f.values()
        dense = t.numpy()
        assert dense.shape == (4, 4) and not np.shares_memory(dense, t.buffers()["data"])


def test_scans_release_the_gil(tmp_path):
    """A second Python thread runs while a thread scans. With the switch
    interval at one second, a thread that kept the GIL through its scans
    would keep it through all 16 of them: the other thread would stop for
    their whole length. Released, the other thread only waits for the OS."""
    n_cols, per_col = 250_000, 64
    rows = np.tile(np.arange(per_col, dtype=np.int64) * 3, n_cols)
    col_ptr = np.arange(n_cols + 1, dtype=np.int64) * per_col
    a = sp.csc_array((np.ones(rows.size, np.float32), rows, col_ptr), shape=(per_col * 3, n_cols))
    path = tmp_path / "big.hry"
    hr.save(path, {"A": a})
    with hr.open(path, threads=1) as f:
        t = f["A"]
        gaps, done = [], threading.Event()

        def run():
            for _ in range(16):
                t.validate()
            done.set()

        interval = sys.getswitchinterval()
        sys.setswitchinterval(1.0)
        try:
            worker = threading.Thread(target=run)
            started = last = time.perf_counter()
            worker.start()
            while not done.is_set():
                time.sleep(0)  # lets the worker take the GIL back after a scan
                now = time.perf_counter()
                gaps.append(now - last)
                last = now
            worker.join()
            end = time.perf_counter()
            gaps.append(end - last)
            total = end - started
        finally:
            sys.setswitchinterval(interval)
    assert total > 0.03, total  # long enough to see
    assert max(gaps) < 0.4 * total, (max(gaps), total)


def test_column_blocks_over_the_mapping():
    with hr.open(FIXTURES / "sparse_formats.hry") as f:
        t = f["m.csc"]
        whole = t.to_scipy()
        for j0 in range(7):
            for j1 in range(j0, 7):
                b = t.to_scipy(columns=range(j0, j1))
                assert isinstance(b, sp.csc_array) and b.shape == (5, j1 - j0)
                assert np.array_equal(b.toarray(), whole[:, j0:j1].toarray())
                if b.nnz:
                    assert np.shares_memory(b.data, t.values) and np.shares_memory(b.indices, t.row_indices)
                assert b.indptr[0] == 0 and not b.indptr.flags.writeable
        assert np.array_equal(t.to_scipy(columns=slice(2, None)).toarray(), whole[:, 2:].toarray())
        csr = f["m.csr"]
        assert np.array_equal(csr.to_scipy(rows=range(1, 4)).toarray(), csr.to_scipy().toarray()[1:4])
        # The transpose of a CSC is a CSR: its rows are the file's columns.
        assert np.array_equal(t.T.to_scipy(rows=range(1, 3)).toarray(), whole.toarray().T[1:3])
        with pytest.raises(TypeError, match="columns= is for CSC"):
            csr.to_scipy(columns=range(0, 1))
        with pytest.raises(TypeError, match="rows= is for CSR"):
            t.to_scipy(rows=range(0, 1))
        with pytest.raises(IndexError, match="outside 0..6"):
            t.to_scipy(columns=range(3, 7))
        with pytest.raises(ValueError, match="reversed"):
            t.to_scipy(columns=range(4, 2))
        with pytest.raises(ValueError, match="a block is consecutive columns: range.0, 6, 2. has a step"):
            t.to_scipy(columns=range(0, 6, 2))
        with pytest.raises(ValueError, match="a block is consecutive rows: slice.0, 4, 2. has a step"):
            csr.to_scipy(rows=slice(0, 4, 2))
        with pytest.raises(ValueError, match="has a step"):
            t.to_scipy(columns=slice(None, None, -1))
        # Negative bounds count from the end, as in a slice; numpy ints work.
        for block, expected in [
            (slice(-3, None), whole[:, 3:]),
            (slice(-4, -1), whole[:, 2:5]),
            (range(-2, 6), whole[:, 4:]),
            (slice(np.int64(1), np.int32(-1)), whole[:, 1:5]),
            (range(np.int64(2), 4), whole[:, 2:4]),
        ]:
            got = t.to_scipy(columns=block)
            assert got.shape == expected.shape and np.array_equal(got.toarray(), expected.toarray()), block
        assert np.array_equal(csr.to_scipy(rows=slice(-2, None)).toarray(), csr.to_scipy().toarray()[-2:])
        with pytest.raises(IndexError, match="outside 0..6"):
            t.to_scipy(columns=slice(-7, None))
        with pytest.raises(ValueError, match="reversed"):
            t.to_scipy(columns=range(-1, -3))
        with pytest.raises(TypeError, match="not float"):
            t.to_scipy(columns=slice(1.0, 3))
        # Both given: the message says so (it blamed the layout).
        for tensor in (t, csr):
            with pytest.raises(TypeError, match="columns= or rows=, not both"):
                tensor.to_scipy(columns=range(0, 1), rows=range(0, 1))


def test_a_blocks_scan_reads_its_columns_alone():
    """Column 0 of this file holds rows [3, 1]: blocks without it are clean."""
    with hr.open(FIXTURES / "invalid" / "csc_indices_unsorted.hry") as f:
        t = f["t"]
        ncols = t.shape[1]
        clean = t.to_scipy(columns=range(1, ncols))
        assert clean.shape[1] == ncols - 1 and clean.has_canonical_format
        with pytest.raises(hr.FormatError) as caught:
            t.to_scipy(columns=range(0, 2))
        assert (caught.value.field, caught.value.offset) == ("row_indices[1]", 8200)


def test_blocks_of_decoded_values_decode_the_block_alone(tmp_path):
    """Packed bool and quantized values: a block's values are the whole
    decode's slice, and the decoded copy holds the block's values only
    (it decoded the whole buffer, then sliced)."""
    bool_matrix = sp.random_array((40, 30), density=0.3, format="csc", dtype=np.float64, rng=4) > 0.5
    hr.save(tmp_path / "b.hry", {"A": sp.csc_array(bool_matrix), "R": sp.csr_array(bool_matrix)})
    cases = [(tmp_path / "b.hry", "A"), (tmp_path / "b.hry", "R")]
    folder, _ = corpus("HURRAY_INTEROP_DIR")
    cases += [(folder / "csc_dtype_bool.hry", "m"), (folder / "csc_quant_per_tensor_int8.hry", "q_csc")]
    for path, name in cases:
        with hr.open(path) as f:
            t = f[name]
            assert t.element_type == "bool" or t.quantization is not None
            whole = t.to_scipy()
            codes = t.to_scipy(dequantize=False)
            outer = whole.shape[1] if t.layout == "csc" else whole.shape[0]
            ptr = whole.indptr
            for j0 in range(outer + 1):
                for j1 in range(j0, outer + 1):
                    block = {"columns" if t.layout == "csc" else "rows": range(j0, j1)}
                    for dequantize, full in ((True, whole), (False, codes)):
                        b = t.to_scipy(dequantize=dequantize, **block)
                        assert b.dtype == full.dtype
                        assert np.array_equal(b.data, full.data[ptr[j0] : ptr[j1]])
                        assert not b.data.flags.writeable
                        decoded = dequantize and t.quantization is not None or t.element_type == "bool"
                        if decoded:  # a copy of the block's values alone
                            assert len(_owner(b.data)) == b.nnz * b.data.itemsize
                        elif b.nnz:  # int8 codes: the file's
                            assert np.shares_memory(b.data, t.values)
                        sliced = full[:, j0:j1] if t.layout == "csc" else full[j0:j1]
                        assert np.array_equal(b.toarray(), sliced.toarray())
    # The transpose's row blocks are the file's column blocks.
    with hr.open(tmp_path / "b.hry") as f:
        t = f["A"]
        assert np.array_equal(t.T.to_scipy(rows=range(3, 9)).toarray(), bool_matrix.T[3:9].toarray())
