"""``save``: scipy sparse arrays and numpy arrays to a Hurray file."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from . import _native

__all__ = ["save"]

# numpy dtype kind + size -> the spec's element type name.
_ELEMENT_TYPES = {
    ("b", 1): "bool",
    ("i", 1): "int8",
    ("u", 1): "uint8",
    ("i", 2): "int16",
    ("u", 2): "uint16",
    ("i", 4): "int32",
    ("u", 4): "uint32",
    ("i", 8): "int64",
    ("u", 8): "uint64",
    ("f", 2): "float16",
    ("f", 4): "float32",
    ("f", 8): "float64",
    ("c", 8): "complex64",
    ("c", 16): "complex128",
}


def save(
    path: str | os.PathLike[str],
    tensors: Mapping[str, Any],
    metadata: Mapping[str, Any] | None = None,
) -> None:
    """Write tensors (and KV metadata) to a Hurray file, atomically.

    Parameters
    ----------
    path : str or os.PathLike
        The file to write; replaced if it exists.
    tensors : mapping of str to array
        In the order to write them. scipy sparse arrays and matrices in CSC,
        CSR or COO form (any index dtype; other sparse formats are written as
        CSR) become CSC, CSR and COO tensors (COO of any dimension scipy
        has); duplicates are summed and indices sorted on a copy (the
        caller's array is not changed). numpy arrays (anything
        ``numpy.asarray`` takes) of ``bool``, ``int8``–``int64``,
        ``uint8``–``uint64``, ``float16``/``32``/``64`` or
        ``complex64``/``128`` become row-major tensors, or column-major
        ones when Fortran-ordered (so neither is copied).
    metadata : mapping of str to value, optional
        KV metadata: ``str``, ``int`` (``int64``; ``uint64`` past
        ``2**63 - 1``), ``float``, ``bool``, ``bytes``, or a list of one of
        those (numpy scalars and 1-D arrays are taken as those).

    Raises
    ------
    TypeError
        A value of a type Hurray cannot store.
    ValueError, OSError
        The data or the path cannot be written.

    Notes
    -----
    The file is written beside ``path`` under a temporary name, read back
    and validated whole (as ``hurray-inspect --validate``), synced, and only
    then renamed to ``path``: on any error nothing is left behind and an
    existing file at ``path`` is untouched.
    """
    if not isinstance(tensors, Mapping):
        raise TypeError(f"tensors must be a mapping of name to array, not {type(tensors).__name__}")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise TypeError(f"metadata must be a mapping of key to value, not {type(metadata).__name__}")
    specs = [_spec(name, value) for name, value in tensors.items()]
    kv = [(_key(k), _kv_value(v)) for k, v in (metadata or {}).items()]
    _native.save(os.fspath(path), specs, kv)


def _key(key: object) -> str:
    if not isinstance(key, str):
        raise TypeError(f"KV keys are str, not {type(key).__name__}")
    return _utf8(key, "a KV key")


def _utf8(text: str, what: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{what} must be UTF-8 text, and {text!r} holds a lone surrogate") from None
    return text


def _kv_value(v: Any) -> Any:
    if isinstance(v, str):
        return _utf8(v, "a KV string")
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        if v.ndim != 1:
            raise TypeError("a KV array value must be one-dimensional")
        return v.tolist()
    if isinstance(v, (bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, (list, tuple)):
        return [_kv_value(x) for x in v]
    return v


def _element_type(name: str, dtype: np.dtype[Any]) -> str:
    et = _ELEMENT_TYPES.get((dtype.kind, dtype.itemsize))
    if et is None:
        raise TypeError(f"tensor {name!r}: Hurray has no element type for numpy dtype {dtype}")
    return et


def _bytes(array: np.ndarray) -> memoryview:
    """The array's elements in memory order as a flat, little-endian byte
    view (``bool`` packed 8 to a byte, first element in the lowest bit)."""
    if array.dtype.kind == "b":
        return memoryview(np.packbits(array.reshape(-1, order="A"), bitorder="little"))
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("<"))
    flat = array.reshape(-1, order="A")
    return memoryview(flat.view(np.uint8))


def _canonical(name: str, value: Any) -> bool:
    """Whether a sparse array is in the form Hurray stores (indices sorted
    within each column or row, no duplicates; COO coordinates in row-major
    order), checked on the arrays rather than taken from scipy's flag, which
    can be stale. Negative or out-of-shape indices are a ValueError."""
    if value.format == "coo":
        coords = [np.asarray(c) for c in value.coords]
        for axis, (c, n) in enumerate(zip(coords, value.shape)):
            if c.size and (c.min() < 0 or c.max() >= n):
                raise ValueError(f"tensor {name!r}: a coordinate of axis {axis} is outside 0..{n}")
        if not coords or coords[0].size < 2:
            return True
        # Row-major order, strictly: compare each entry with the one before.
        after = np.zeros(coords[0].size - 1, dtype=bool)
        equal = np.ones(coords[0].size - 1, dtype=bool)
        for c in coords:
            diff = np.diff(c.astype(np.int64))
            after |= equal & (diff > 0)
            equal &= diff == 0
        return bool(after.all())
    indices, indptr = np.asarray(value.indices), np.asarray(value.indptr)
    bound = value.shape[0] if value.format == "csc" else value.shape[1]
    if indices.size and (indices.min() < 0 or indices.max() >= bound):
        raise ValueError(f"tensor {name!r}: an index of {value.format} indices is outside 0..{bound}")
    if indptr.size and (indptr[0] != 0 or np.any(np.diff(indptr) < 0) or indptr[-1] > indices.size):
        raise ValueError(f"tensor {name!r}: the {value.format} indptr is not a valid pointer array")
    if indptr[-1] != indices.size or value.data.size != indices.size:
        return False  # room after the last stored element: prune it
    if indices.size < 2:
        return True
    rising = np.diff(indices.astype(np.int64)) > 0
    starts = indptr[1:-1]  # positions where a new column (row) begins
    starts = starts[(starts > 0) & (starts < indices.size)]
    rising[starts - 1] = True
    return bool(rising.all())


def _indices(array: np.ndarray) -> memoryview:
    """Indices as ``uint64`` bytes (no copy for non-negative int64/uint64)."""
    array = np.ascontiguousarray(array)
    if array.dtype not in (np.dtype(np.int64), np.dtype(np.uint64)):
        array = array.astype(np.uint64)
    return _bytes(array.view(np.uint64))


def _spec(name: Any, value: Any) -> dict[str, Any]:
    if not isinstance(name, str):
        raise TypeError(f"tensor names are str, not {type(name).__name__}")
    _utf8(name, "a tensor name")
    import scipy.sparse as sp

    if sp.issparse(value):
        return _sparse_spec(name, value)
    if isinstance(value, np.ma.MaskedArray):
        raise TypeError(f"tensor {name!r}: a masked array has no Hurray form: pass .filled(...) or .data")
    array = np.asarray(value)
    et = _element_type(name, array.dtype)
    shape = list(array.shape)  # before ascontiguousarray, which makes a 0-d array 1-d
    if array.ndim >= 2 and array.flags.f_contiguous and not array.flags.c_contiguous:
        layout = "col_major"
    else:
        layout = "row_major"
        array = np.ascontiguousarray(array)
    return {
        "name": name,
        "layout": layout,
        "element_type": et,
        "shape": shape,
        "nnz": 0,
        "is_sorted": False,
        "buffers": [_bytes(array)],
    }


def _sparse_spec(name: str, value: Any) -> dict[str, Any]:
    fmt = value.format
    if value.ndim != 2:
        value, fmt = value.tocoo(), "coo"  # CSC and CSR are matrices
    elif fmt not in ("csc", "csr", "coo"):
        value, fmt = value.tocsr(), "csr"
    et = _element_type(name, value.dtype)
    if not _canonical(name, value):
        value = value.copy()
        value.sum_duplicates()
        if fmt != "coo":
            value.prune()  # no room after the last stored element
    data = np.ascontiguousarray(value.data)
    spec = {
        "name": name,
        "layout": fmt,
        "element_type": et,
        "shape": list(value.shape),
        "nnz": int(data.shape[0]),
        "is_sorted": fmt == "coo",
    }
    if fmt == "coo":
        coords = np.stack([np.asarray(c, dtype=np.uint64) for c in value.coords], axis=1)
        spec["buffers"] = [_bytes(data), _indices(coords)]
    else:
        spec["buffers"] = [_bytes(data), _indices(value.indices), _indices(value.indptr)]
    return spec
