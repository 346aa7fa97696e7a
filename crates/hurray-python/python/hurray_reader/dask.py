"""A Hurray CSC (or CSR) matrix as a Dask array of column (row) blocks.

``pip install ./crates/hurray-python[dask]`` brings Dask and pydata
``sparse``. The task graph holds the file's path, the tensor's name and each
block's column range, never data (its keys name the file's device, inode,
size and modification time too, so a file replaced at the same path gets
new keys): each worker maps the file itself (once,
then from a per-process cache), so the graph's size grows with the number of
blocks only. A task that finds at the path another file than the
array's raises ``RuntimeError`` rather than read it (:meth:`_Source.mismatch`
says how it knows: on the array's machine, by device, inode, size and
modification time; on another, which may hold a copy of its own, by size
and modification time). A rewrite in place that keeps the size and
modification time is not seen.

Each chunk is a ``sparse.GCXS`` (pydata ``sparse``) over the mapped arrays:
Dask computes ``A @ x``, ``A.sum(axis=...)`` and slicing on it. scipy's sparse
arrays are not enough as chunks: Dask's ``@`` calls ``numpy.matmul`` on them,
and its reductions pass ``keepdims``, which scipy's ``sum`` does not take,
so both fail; slicing alone works.

On a distributed cluster, importing this module also corrects how
``distributed`` sends a ``sparse.COO`` between processes (see
:func:`_fix_sparse_serialization`): its serializer drops ``fill_value``,
where sparse keeps the result of a full reduction (``A.sum()``), so every
0-d reduction arrived as 0.
"""

from __future__ import annotations

import collections
import datetime
import functools
import math
import operator
import os
import socket
import sys
import threading
from typing import Any, NamedTuple

import numpy as np

from ._file import File, Tensor, _flag, _vector_argument
from ._file import open as _open

__all__ = ["from_hurray", "matvec"]

#: Bytes of stored data (values and indices) per block when ``chunk_cols``
#: is not given.
BLOCK_BYTES = 128 * 2**20

#: How many parts of ``y`` one task of :func:`matvec` adds (a tree of
#: them, level by level, where the blocks cut the columns).
ADD_FAN_IN = 8


def from_hurray(
    path: str | os.PathLike[str],
    name: str,
    chunk_cols: int | None = None,
    *,
    permissive: bool = False,
    validate: bool = True,
) -> Any:
    """The CSC tensor ``name`` of the file at ``path`` as a
    ``dask.array.Array`` of column blocks (a CSR tensor: of row blocks).

    Parameters
    ----------
    path : str or os.PathLike
        The file; every worker must see it at this path (a shared
        filesystem, or a copy on each machine that keeps the size and
        modification time: ``cp -p``, ``rsync -t``, ``scp -p``, ``tar``).
    name : str
        A CSC or CSR tensor of the file.
    chunk_cols : int, optional
        Columns (rows, for CSR) per block, an ``int`` or a numpy integer.
        By default blocks are cut by bytes: about ``BLOCK_BYTES`` (128 MiB)
        of values and indices each, from the tensor's ``col_ptr``.
    permissive : bool
        Open the file in the reader's permissive mode, here and on workers.
    validate : bool
        Each block's task scans that block's storage invariants before
        handing it over (``to_scipy(columns=...)``); ``False`` only for
        trusted files.

    Returns
    -------
    dask.array.Array
        Of the tensor's shape and value type, chunked as ``((nrows,),
        (block widths...))`` (CSR: ``((block heights...), (ncols,))``);
        its chunks are ``sparse.GCXS`` arrays compressed along the columns
        (rows).

    Raises
    ------
    TypeError
        The tensor is not CSC or CSR; ``permissive`` or ``validate`` is not
        ``True`` or ``False``.
    ModuleNotFoundError
        dask or sparse is not installed (the package's ``dask`` extra).
    KeyError, FormatError, OSError
        As :func:`hurray_reader.open` and ``File.__getitem__``.
    RuntimeError
        When computed: the file at ``path`` is no longer the one the
        array was made from (see the module's description).
    """
    da, tokenize = _dask()
    import sparse

    _fix_sparse_serialization()
    permissive, validate = _flag("permissive", permissive), _flag("validate", validate)
    path = os.path.abspath(os.fspath(path))
    # The file's identity goes into the keys: a file replaced at the same
    # path is another array, never one a long-lived client or cache holds.
    identity = _identity(os.stat(path))
    with _open(path, permissive=permissive) as f:
        t = f[name]
        if t.layout not in ("csc", "csr"):
            raise TypeError(f"tensor {name!r} is {t.layout}: from_hurray takes a CSC or CSR tensor")
        csc = t.layout == "csc"
        nrows, ncols = t.shape
        bounds = _cut(t, chunk_cols)
        # The value type the chunks have (float16 widens, packed types decode).
        dtype = t.to_scipy(validate=False, **{"columns" if csc else "rows": range(0, 0)}).dtype
        source = _Source.of(path, t, permissive, identity)
    key = "hurray-" + tokenize(path, identity, name, bounds, permissive, validate)
    axis = 1 if csc else 0
    graph = {
        ((key, 0, i) if csc else (key, i, 0)): (_block, source, start, stop, validate)
        for i, (start, stop) in enumerate(zip(bounds, bounds[1:]))
    }
    widths = tuple(stop - start for start, stop in zip(bounds, bounds[1:]))
    chunks = ((nrows,), widths) if csc else (widths, (ncols,))
    meta = sparse.GCXS.from_numpy(np.zeros((0, 0), dtype=dtype), compressed_axes=[axis])
    return da.Array(graph, key, chunks, meta=meta)


def matvec(
    path: str | os.PathLike[str],
    name: str,
    x: Any,
    chunk_cols: int | None = None,
    *,
    transpose: bool = False,
    permissive: bool = False,
) -> Any:
    """``A @ x`` for the CSC or CSR tensor ``name`` of the file at ``path``
    (``Aᵀ @ x`` with ``transpose``), as a ``dask.array.Array``: each block
    of :func:`from_hurray`'s cut multiplied on a worker by the package's
    Rust kernels (:meth:`hurray_reader.Tensor.matvec` with ``columns=`` or
    ``rows=``), not by ``sparse``'s.

    Where the blocks cut the columns of the matrix multiplied (``A`` of a
    CSC tensor, ``Aᵀ`` of a CSR one), each task gives its block's part of
    ``y``, every row of it, from its slice of ``x``, and Dask adds the
    parts (in a tree, ``ADD_FAN_IN`` parts a task). A row with elements in
    more than one block is summed block by block, then across: its last
    bits may differ from ``t.matvec(x)``'s, by more where terms cancel. Where they cut the rows
    (``A`` of a CSR tensor, ``Aᵀ`` of a CSC one), each task gives its rows
    of ``y``, from the whole of ``x``, with the bits of ``t.matvec(x)``.

    Each task maps the file on its worker (as :func:`from_hurray`'s do);
    a worker scans a block's storage invariants before its first product
    of it, and keeps the result with the open file. The graph holds the
    path, the name, the block bounds and ``x``'s keys, never matrix data.

    Parameters
    ----------
    path, name, chunk_cols, permissive
        As :func:`from_hurray` (``chunk_cols`` counts the file's outer
        slices: a CSC tensor's columns, a CSR one's rows).
    x : numpy.ndarray or dask.array.Array
        The vector, shape ``(ncols,)`` of the matrix multiplied (``A``, or
        ``Aᵀ``), the tensor's dtype (``float32`` or ``float64``); rechunked
        to the blocks.
    transpose : bool
        ``Aᵀ @ x`` instead.

    Returns
    -------
    dask.array.Array
        ``y``, shape ``(nrows,)`` of the matrix multiplied, the tensor's
        dtype: one chunk where the blocks cut the columns, the blocks'
        heights where they cut the rows.

    Raises
    ------
    TypeError
        As :meth:`hurray_reader.Tensor.matvec` (the layout, the element
        type, a quantized tensor; an ``x`` of another dtype);
        ``transpose`` or ``permissive`` not ``True`` or ``False``.
    ValueError
        ``x`` is not of shape ``(ncols,)``.
    ModuleNotFoundError, KeyError, FormatError, OSError
        As :func:`from_hurray`; a block's ``FormatError`` (a broken
        invariant) is raised when the result is computed.
    RuntimeError
        When computed, as :func:`from_hurray`'s.
    """
    da, tokenize = _dask()
    from dask.highlevelgraph import HighLevelGraph

    permissive, transpose = _flag("permissive", permissive), _flag("transpose", transpose)
    path = os.path.abspath(os.fspath(path))
    identity = _identity(os.stat(path))
    with _open(path, permissive=permissive) as f:
        t = f[name]
        dtype = t._product_dtype()
        view = t.T if transpose else t
        nrows, ncols = view.shape
        if nrows is None or ncols is None:
            raise ValueError(f"tensor {name!r} has a dynamic dimension: {view.shape}")
        bounds = _cut(t, chunk_cols)
        # The blocks cut the columns of the matrix multiplied: A of a CSC
        # tensor, Aᵀ of a CSR one.
        parts = view.layout == "csc"
        source = _Source.of(path, t, permissive, identity)
    x = da.asarray(_vector_argument(x, dtype))
    if x.dtype != dtype:
        raise TypeError(f"x is {x.dtype}, tensor {name!r} {dtype}: convert it, x.astype(np.{dtype})")
    if any(math.isnan(n) for n in x.shape):
        raise ValueError(f"x has unknown chunk sizes, shape {x.shape}: x.compute_chunk_sizes() first")
    if x.shape != (ncols,):
        raise ValueError(f"x has shape {x.shape}; the matrix is {nrows} x {ncols}: x needs ({ncols},)")
    blocks = list(zip(bounds, bounds[1:]))
    sizes = tuple(stop - start for start, stop in blocks)
    x = x.rechunk((sizes,) if parts else -1)
    key = "hurray-matvec-" + tokenize(path, identity, name, bounds, permissive, transpose, x.name)
    task = functools.partial(_product, source, transpose)
    if parts:
        # Each block's part of y, then the parts added in groups of
        # ADD_FAN_IN, level by level, down to one: (key, 0).
        layer: dict[Any, Any] = {(key + "-part", 0, i): (task, block, (x.name, i)) for i, block in enumerate(blocks)}
        level = [(key + "-part", 0, i) for i in range(len(blocks))]
        depth = 0
        while len(level) > 1 or level[0][0] != key:
            depth += 1
            groups = [level[i : i + ADD_FAN_IN] for i in range(0, len(level), ADD_FAN_IN)]
            nodes = [(key, 0) if len(groups) == 1 else (key + "-add", depth, i) for i in range(len(groups))]
            layer.update({node: (_add, group) for node, group in zip(nodes, groups)})
            level = nodes
        chunks: tuple[int, ...] = (nrows,)
    else:
        layer = {(key, i): (task, block, (x.name, 0)) for i, block in enumerate(blocks)}
        chunks = sizes
    graph = HighLevelGraph.from_collections(key, layer, dependencies=[x])
    return da.Array(graph, key, (chunks,), meta=np.empty((0,), dtype=dtype))


def _dask() -> tuple[Any, Any]:
    """``dask.array`` and ``dask.base.tokenize``, with ``sparse`` checked
    too (the ``dask`` extra): a ``ModuleNotFoundError`` saying how to
    install them."""
    try:
        import dask.array as da
        import sparse  # noqa: F401 (the extra's other half, for from_hurray's chunks)
        from dask.base import tokenize
    except ModuleNotFoundError as e:
        raise ModuleNotFoundError(
            f"hurray_reader.dask needs dask and sparse ({e}): install the package with its "
            '"dask" extra (from a checkout: pip install "./crates/hurray-python[dask]")',
            name=e.name,
        ) from e
    return da, tokenize


def _product(source: _Source, transpose: bool, block: tuple[int, int], x: np.ndarray) -> Any:
    """One block's product, on a worker (see :func:`matvec`): its part of
    ``y``, or its rows of ``y``."""
    t = source.tensor()
    view = t.T if transpose else t
    start, stop = block
    if view.layout == "csc":
        return view.matvec(x, columns=range(start, stop))
    return view.matvec(x, rows=range(start, stop))


def _add(parts: list[np.ndarray]) -> np.ndarray:
    """``((parts[0] + parts[1]) + parts[2]) + ..`` into a new array (the
    parts may be read-only, as a worker can receive them)."""
    total = parts[0] + parts[1] if len(parts) > 1 else parts[0].copy()
    for part in parts[2:]:
        np.add(total, part, out=total)
    return total


def _cut(t: Tensor, chunk: int | None) -> list[int]:
    """The block boundaries of CSC or CSR tensor ``t`` (:func:`_bounds`)
    over its outer slices: a CSC tensor's columns, a CSR one's rows."""
    csc = t.layout == "csc"
    outer = t.shape[1] if csc else t.shape[0]
    return _bounds(t.col_ptr if csc else t.row_ptr, outer, chunk, (t.nnz or 0, t.values.itemsize))


def _bounds(pointers: np.ndarray, outer: int, chunk: int | None, elements: tuple[int, int]) -> list[int]:
    """Block boundaries ``[0, ..., outer]``: every ``chunk`` slices, or cut
    where the stored elements reach multiples of ``BLOCK_BYTES``.
    ``elements``: the descriptor's ``nnz`` (checked against the buffers'
    sizes when the file was opened, unlike the pointers, which nothing has
    scanned yet: the targets are bounded by the file) and the bytes of a
    value."""
    if chunk is not None:
        try:
            width = None if isinstance(chunk, bool) else operator.index(chunk)  # numpy integers too
        except TypeError:
            width = None
        if width is None or width < 1:
            raise ValueError(f"chunk_cols must be a positive int, not {chunk!r}")
        return list(range(0, outer, width)) + [outer] if outer else [0, 0]
    nnz, value_bytes = elements
    per_block = max(1, BLOCK_BYTES // (value_bytes + 8))
    targets = np.arange(per_block, nnz, per_block, dtype=np.int64)
    cuts = np.searchsorted(pointers, targets, side="left")
    bounds = sorted({0, outer, *(int(c) for c in cuts if 0 < c < outer)})
    return bounds if outer else [0, 0]


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    """Device, inode, size and modification time (ns): what tells a file
    from the one it replaced at the same path."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


class _Source(NamedTuple):
    """What a task needs to find an array's tensor on its worker, and to
    know it for the one the array was made from: the file's path, the
    machine the array was made on, the file's identity there (device,
    inode, size, modification time in ns), and the tensor's name, layout,
    element type and shape."""

    path: str
    permissive: bool
    host: str
    identity: tuple[int, int, int, int]
    name: str
    layout: str
    element_type: str
    shape: tuple[int | None, ...]

    @classmethod
    def of(cls, path: str, t: Tensor, permissive: bool, identity: tuple[int, int, int, int]) -> _Source:
        return cls(path, permissive, socket.gethostname(), identity, t.name, t.layout, t.element_type, tuple(t.shape))

    def tensor(self) -> Tensor:
        """The tensor, from this process's open file (:func:`_file`).

        ``RuntimeError`` where the file at the path is not the array's
        (:meth:`mismatch`), or has no tensor of the name, or one of
        another layout, element type or shape."""
        found = _identity(os.stat(self.path))
        why = self.mismatch(found)
        if why is not None:
            raise self._stale(why + "; make the array again")
        f = _file(self.path, self.permissive, found)
        if f is None:
            raise self._stale("it was replaced while this task opened it; make the array again")
        if self.name not in f:
            raise self._stale(f"no tensor {self.name!r} there")
        t = f[self.name]
        there, made = (t.layout, t.element_type, list(t.shape)), (self.layout, self.element_type, list(self.shape))
        if there != made:
            raise self._stale(f"tensor {self.name!r} there is {_signature(*there)}; the array's was {_signature(*made)}")
        return t

    def mismatch(self, found: tuple[int, int, int, int]) -> str | None:
        """Why a file of identity ``found`` (:func:`_identity`) is not the
        array's, or ``None``. On the machine the array was made on (the
        same host name), any other device, inode, size or modification
        time: another file, or the file rewritten. On another machine,
        which may hold a copy of its own (another inode), another size,
        or another modification time: to the nanosecond, or to the second
        where the copy's is a whole second (``tar`` and ``scp -p`` keep
        whole seconds; ``cp -p`` and ``rsync -t`` the nanoseconds)."""
        (device, inode, size, mtime), (was_device, was_inode, was_size, was_mtime) = found, self.identity
        if size != was_size:
            return f"its size is {size} bytes, the array's file's was {was_size}"
        seconds = mtime % 10**9 == 0 and mtime // 10**9 == was_mtime // 10**9
        if mtime != was_mtime and not seconds:
            return f"it was modified at {_time(mtime)}, the array's file at {_time(was_mtime)}"
        if socket.gethostname() == self.host and (device, inode, mtime) != (was_device, was_inode, was_mtime):
            return (
                f"on {self.host!r}, where the array was made, it is another file (device {device}, inode "
                f"{inode}, modified at {_time(mtime)}; the array's: device {was_device}, inode {was_inode}, "
                f"modified at {_time(was_mtime)})"
            )
        return None

    def _stale(self, why: str) -> RuntimeError:
        return RuntimeError(f"{self.path} is not the file this Dask array was made from: {why}")


def _time(ns: int) -> str:
    """A modification time in ns as local ISO time, to the nanosecond."""
    return datetime.datetime.fromtimestamp(ns // 10**9).isoformat() + f".{ns % 10**9:09d}"


def _signature(layout: str, element_type: str, shape: list[int | None]) -> str:
    return f"{layout} of {element_type}, shape {shape}"


#: The files :func:`_file` keeps open in this process, the most recently
#: used last: ``(path, permissive)`` to ``(identity, File)``.
_files: collections.OrderedDict[tuple[str, bool], tuple[tuple[int, int, int, int], File]] = collections.OrderedDict()
_files_lock = threading.Lock()

#: How many paths :func:`_file` keeps open.
FILES_KEPT = 16


def _file(path: str, permissive: bool, identity: tuple[int, int, int, int]) -> File | None:
    """The file of ``identity`` (:func:`_identity`) at ``path``, open in
    this process: kept from an earlier call, or opened, and kept in place
    of any other file of that path (let go: its mapping ends with the last
    array made from it), so that a worker does not hold many replaced
    files' space; ``FILES_KEPT`` paths at most. ``None`` when the file at
    the path, once opened, has another identity (replaced meanwhile)."""
    key = (path, permissive)
    with _files_lock:
        kept = _files.get(key)
        if kept is not None and kept[0] == identity:
            _files.move_to_end(key)
            return kept[1]
    f = _open(path, permissive=permissive, threads=1)
    # What was opened is what was checked, unless the path changed hands
    # between the caller's stat and the open (and back, within that, is
    # not seen).
    if _identity(os.stat(path)) != identity:
        f.close()
        return None
    with _files_lock:
        _files[key] = (identity, f)
        _files.move_to_end(key)
        while len(_files) > FILES_KEPT:
            _files.popitem(last=False)
    return f


def _block(source: _Source, start: int, stop: int, validate: bool) -> Any:
    """One chunk, on a worker: the block's scipy form over the worker's own
    mapping, as a ``sparse.GCXS`` (no copy but the rebased pointers)."""
    import sparse

    _fix_sparse_serialization()
    t = source.tensor()
    if t.layout == "csc":
        m = t.to_scipy(validate=validate, columns=range(start, stop))
        axis = 1
    else:
        m = t.to_scipy(validate=validate, rows=range(start, stop))
        axis = 0
    return sparse.GCXS((m.data, m.indices, m.indptr), shape=m.shape, compressed_axes=[axis])


_serialization_fixed = False


def _fix_sparse_serialization() -> None:
    """Send a ``sparse.COO`` whose ``fill_value`` is not zero by pickle,
    in this process, once ``distributed`` is imported.

    ``distributed.protocol.sparse`` sends a COO as its coordinates, data
    and shape, and rebuilds it with the default ``fill_value``, zero. A
    full reduction of a sparse array (``A.sum()``, ``A.max()``,
    ``A.mean()``) is a 0-d COO with no stored element, its value in
    ``fill_value``: from a worker process it arrived as 0 (and ``A + 1``,
    whose fill value is 1, arrived as ``A``). For such a COO the serializer
    registered here declines (``NotImplementedError``), and distributed
    falls back to pickle, which keeps every attribute and needs nothing of
    the receiving process; a COO whose fill value is zero keeps
    distributed's own serializer.

    Runs where it matters: on import, in :func:`from_hurray` (the client)
    and in every block's task (each worker computing blocks). distributed's
    own registration is imported first: it is lazy, and would otherwise
    run later over this one.
    """
    global _serialization_fixed
    if _serialization_fixed or "distributed" not in sys.modules:
        return
    try:
        import sparse
        from distributed.protocol import sparse as theirs
        from distributed.protocol.serialize import dask_serialize
    except ImportError:
        return
    serialize_theirs = theirs.serialize_sparse

    def serialize_coo(x: Any) -> Any:
        if not _zero_fill(x):
            raise NotImplementedError("a COO with a non-zero fill_value goes by pickle")
        return serialize_theirs(x)

    dask_serialize.register(sparse.COO)(serialize_coo)
    _serialization_fixed = True


def _zero_fill(x: Any) -> bool:
    """True when ``x.fill_value`` is the zero distributed rebuilds a COO
    with (bit for bit: ``-0.0`` is not it)."""
    try:
        dtype = np.dtype(x.dtype)
        return np.asarray(x.fill_value, dtype=dtype).tobytes() == np.zeros((), dtype=dtype).tobytes()
    except (TypeError, ValueError):
        return False


_fix_sparse_serialization()
