"""A Hurray CSC (or CSR) matrix as a Dask array of column (row) blocks.

``pip install ./crates/hurray-python[dask]`` brings Dask and pydata
``sparse``. The task graph holds the file's path, the tensor's name and each
block's column range, never data (its keys name the file's device, inode,
size and modification time too, so a file replaced at the same path gets
new keys): each worker maps the file itself (once,
then from a per-process cache), so the graph's size grows with the number of
blocks only.

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

import functools
import operator
import os
import sys
from typing import Any

import numpy as np

from ._file import File, _flag
from ._file import open as _open

__all__ = ["from_hurray"]

#: Bytes of stored data (values and indices) per block when ``chunk_cols``
#: is not given.
BLOCK_BYTES = 128 * 2**20


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
        filesystem, or the same file on each machine).
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
    """
    try:
        import dask.array as da
        import sparse
        from dask.base import tokenize
    except ModuleNotFoundError as e:
        raise ModuleNotFoundError(
            f"hurray_reader.dask needs dask and sparse ({e}): install the package with its "
            '"dask" extra (from a checkout: pip install "./crates/hurray-python[dask]")',
            name=e.name,
        ) from e

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
        pointers = t.col_ptr if csc else t.row_ptr
        outer = ncols if csc else nrows
        bounds = _bounds(pointers, outer, chunk_cols, t.values.itemsize)
        # The value type the chunks have (float16 widens, packed types decode).
        dtype = t.to_scipy(validate=False, **{"columns" if csc else "rows": range(0, 0)}).dtype
    key = "hurray-" + tokenize(path, identity, name, bounds, permissive, validate)
    axis = 1 if csc else 0
    graph = {
        ((key, 0, i) if csc else (key, i, 0)): (_block, path, name, start, stop, permissive, validate)
        for i, (start, stop) in enumerate(zip(bounds, bounds[1:]))
    }
    widths = tuple(stop - start for start, stop in zip(bounds, bounds[1:]))
    chunks = ((nrows,), widths) if csc else (widths, (ncols,))
    meta = sparse.GCXS.from_numpy(np.zeros((0, 0), dtype=dtype), compressed_axes=[axis])
    return da.Array(graph, key, chunks, meta=meta)


def _bounds(pointers: np.ndarray, outer: int, chunk: int | None, value_bytes: int) -> list[int]:
    """Block boundaries ``[0, ..., outer]``: every ``chunk`` slices, or cut
    where the stored elements reach multiples of ``BLOCK_BYTES``."""
    if chunk is not None:
        try:
            width = None if isinstance(chunk, bool) else operator.index(chunk)  # numpy integers too
        except TypeError:
            width = None
        if width is None or width < 1:
            raise ValueError(f"chunk_cols must be a positive int, not {chunk!r}")
        return list(range(0, outer, width)) + [outer]
    nnz = int(pointers[-1]) if len(pointers) else 0
    per_block = max(1, BLOCK_BYTES // (value_bytes + 8))
    targets = np.arange(per_block, nnz, per_block, dtype=np.int64)
    cuts = np.searchsorted(pointers, targets, side="left")
    bounds = sorted({0, outer, *(int(c) for c in cuts if 0 < c < outer)})
    return bounds if outer else [0, 0]


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    """Device, inode, size and modification time (ns): what tells a file
    from the one it replaced at the same path."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _file(path: str, permissive: bool, identity: tuple[int, int, int, int]) -> File:
    """One open file per path in each worker process (``identity``: see
    :func:`_identity`, so a replaced file is opened anew)."""
    return _open(path, permissive=permissive, threads=1)


def _block(path: str, name: str, start: int, stop: int, permissive: bool, validate: bool) -> Any:
    """One chunk, on a worker: the block's scipy form over the worker's own
    mapping, as a ``sparse.GCXS`` (no copy but the rebased pointers)."""
    import sparse

    _fix_sparse_serialization()
    st = os.stat(path)
    t = _file(path, permissive, _identity(st))[name]
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
