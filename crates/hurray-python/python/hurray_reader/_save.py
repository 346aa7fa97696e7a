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
    specs = [_spec(name, value) for name, value in tensors.items()]
    kv = [(_key(k), _kv_value(v)) for k, v in (metadata or {}).items()]
    _native.save(os.fspath(path), specs, kv)


def _key(key: object) -> str:
    if not isinstance(key, str):
        raise TypeError(f"KV keys are str, not {type(key).__name__}")
    return key


def _kv_value(v: Any) -> Any:
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


def _indices(array: np.ndarray) -> memoryview:
    """Indices as ``uint64`` bytes (no copy for non-negative int64/uint64)."""
    array = np.ascontiguousarray(array)
    if array.dtype not in (np.dtype(np.int64), np.dtype(np.uint64)):
        array = array.astype(np.uint64)
    return _bytes(array.view(np.uint64))


def _spec(name: Any, value: Any) -> dict[str, Any]:
    if not isinstance(name, str):
        raise TypeError(f"tensor names are str, not {type(name).__name__}")
    import scipy.sparse as sp

    if sp.issparse(value):
        return _sparse_spec(name, value)
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
    if fmt not in ("csc", "csr", "coo"):
        value, fmt = value.tocsr(), "csr"
    et = _element_type(name, value.dtype)
    if not value.has_canonical_format:
        value = value.copy()
        value.sum_duplicates()
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
