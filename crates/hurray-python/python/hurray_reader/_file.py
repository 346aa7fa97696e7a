"""``File`` and ``Tensor``: a Hurray file as a mapping of zero-copy views."""

from __future__ import annotations

import operator
import os
import stat
import warnings as _warnings
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _native

if TYPE_CHECKING:
    import scipy.sparse

__all__ = ["File", "FormatWarning", "Tensor", "open", "release_scratch"]


class FormatWarning(UserWarning):
    """Something the reader accepts but reports, as ``hurray-inspect
    --validate`` prints ``WARNING`` lines: an advisory statistic that
    disagrees with the data (``sparsity_ratio`` against ``nnz``), a GPU
    buffer declaring less than page alignment, and in permissive mode a
    statistics block strict mode would reject."""

# Element types whose stored bytes numpy reads as they are (little-endian).
_NUMPY_DTYPES = {
    "int8": "i1",
    "uint8": "u1",
    "int16": "<i2",
    "uint16": "<u2",
    "int32": "<i4",
    "uint32": "<u4",
    "int64": "<i8",
    "uint64": "<u8",
    "float16": "<f2",
    "float32": "<f4",
    "float64": "<f8",
    "complex64": "<c8",
    "complex128": "<c16",
}

# Buffers of indices into a shape: exposed as int64 (scipy keeps int64
# index arrays as they are, and copies uint64 ones).
_INDEX_ROLES = ("row_indices", "col_ptr", "col_indices", "row_ptr", "indices", "pos_", "crd_")

# The CSC buffer names and their names in the CSR of the transpose.
_TRANSPOSED_ROLES = {
    "row_indices": "col_indices",
    "col_ptr": "row_ptr",
    "col_indices": "row_indices",
    "row_ptr": "col_ptr",
}

_INT64_MAX = 2**63 - 1

#: The most threads a scan uses (more are taken as this many).
MAX_THREADS = 64


def _default_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _threads(value: object) -> int:
    """A ``threads=`` argument: an int of at least 1 (numpy integers
    included; not ``bool``)."""
    if isinstance(value, bool):
        raise TypeError("threads must be an int, not bool")
    try:
        threads = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"threads must be an int, not {type(value).__name__}") from None
    if threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    return threads


def release_scratch() -> int:
    """Give back the scratch memory the products keep for the next product.

    :meth:`Tensor.matvec` with a ``y`` over 16 MiB bins its contributions
    in scratch memory (up to 128 MiB a thread) and keeps up to 256 MiB of
    each kind (``float32`` bins, ``float64`` bins, the AVX-512 scatter's)
    for the life of the process, so that the next product does not
    fault its pages in again. Call this after the last product to return
    it to the OS; the next product allocates again.

    Returns
    -------
    int
        The bytes given back (0 if none were kept).
    """
    return _native.release_scratch()


def _flag(name: str, value: object) -> bool:
    """``value`` if it is a ``bool`` (or a numpy bool); else ``TypeError``:
    a flag that switches a check off is never read from a string or
    ``None`` by its truthiness (``permissive="no"`` would be true)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{name} must be True or False, not {type(value).__name__}")


def open(  # noqa: A001 (the name the package promises)
    path: str | os.PathLike[str],
    *,
    permissive: bool = False,
    mmap: bool = True,
    threads: int | None = None,
) -> File:
    """Open a Hurray file: parse its header, trailer, footer index and KV
    metadata, and nothing else.

    Parameters
    ----------
    path : str or os.PathLike
        The ``.hry`` file.
    permissive : bool
        Accept what the spec allows a lenient reader to accept: unknown
        element-type, layout and quantization tags (such a tensor is listed
        but its data is not interpreted), extra bytes after a descriptor,
        the index or the KV section, gaps and non-zero padding between
        regions. Bounds and overflow checks stay on. The default (strict)
        rejects all of these with ``FormatError``.
    mmap : bool
        ``True`` (default) maps the file: opening costs the same for any file
        size and arrays point into the mapping. ``False`` reads the whole file
        into memory first, for files that may change while open or that live
        on storage where mapping is a poor idea (see *The mapping hazard*);
        a file that does not start with the file magic is rejected after its
        first 104 bytes, with the ``FormatError`` the mapped file gives.
    threads : int, optional
        Threads for the storage-invariant scans (``to_scipy``, ``validate``);
        by default the CPUs this process may run on. At most 64 are used;
        small arrays get fewer.

    Returns
    -------
    File
        A context manager and a read-only mapping from tensor name to
        :class:`Tensor`, in file order.

    Raises
    ------
    FormatError
        The container breaks a rule of the spec (the message, and the
        attributes ``tensor``, ``field``, ``offset`` and ``rule``, say which).
    OSError
        The file cannot be opened, mapped or read (``FileNotFoundError``,
        ``IsADirectoryError``, ...; ``errno`` and ``filename`` set), or is
        not a regular file (a FIFO, a socket, a device: refused at once,
        never waited on).

    Notes
    -----
    *The mapping hazard.* A mapped file is read as it is *now*: if another
    process truncates it while it is mapped, touching a page past the new
    end kills this process with ``SIGBUS``, and if it rewrites it, arrays
    change under your feet. Map only files nothing else modifies while you
    read them (write new files beside old ones and rename, as
    :func:`hurray_reader.save` does); otherwise pass ``mmap=False``.
    """
    permissive, mmap = _flag("permissive", permissive), _flag("mmap", mmap)
    threads = _default_threads() if threads is None else _threads(threads)
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None  # the native open says why, with the same errno
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        # Opening a FIFO blocks until a writer comes; a device can be endless.
        import errno

        raise OSError(errno.EINVAL, "not a regular file (a FIFO, socket or device)", path)
    native = _native.open_file(path, permissive, mmap, min(threads, MAX_THREADS))
    return File(native, path)


class File(Mapping[str, "Tensor"]):
    """An open Hurray file: a read-only mapping from tensor name to
    :class:`Tensor`, in file order (by descriptor offset).

    Made by :func:`hurray_reader.open`. Close it (or use ``with``) to let the
    mapping go: arrays already made keep their part of it alive on their
    own, so they stay readable after :meth:`close`.
    """

    def __init__(self, native: _native.File, path: str) -> None:
        self._native: _native.File | None = native
        self._path = path
        self._names: list[str] = native.names()
        # What the tensors share, kept here rather than the Tensor objects:
        # a Tensor holds its File, and a File that held its Tensors would
        # make a reference cycle, its mapping let go only at the next
        # garbage collection rather than with its last reference.
        self._infos: dict[str, dict[str, Any]] = {}
        self._checked: set[str] = set()  # tensors whose data scanned clean

    def _live(self) -> _native.File:
        if self._native is None:
            raise ValueError(f"I/O operation on closed file {self._path!r}")
        return self._native

    # Mapping
    def __getitem__(self, name: str) -> Tensor:
        if not isinstance(name, str):
            raise TypeError(f"tensor names are str, not {type(name).__name__}")
        native = self._live()
        if not _encodable(name):
            raise KeyError(name)  # names are UTF-8: no lone surrogate names one
        info = self._infos.get(name)
        if info is None:
            info = self._infos[name] = native.tensor_info(name)
        return Tensor(self, info)

    def __iter__(self) -> Iterator[str]:
        self._live()
        return iter(self._names)

    def __len__(self) -> int:
        self._live()
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        native = self._live()
        return isinstance(name, str) and _encodable(name) and name in native

    # Whole file
    @property
    def path(self) -> str:
        """The path the file was opened from."""
        return self._path

    @property
    def metadata(self) -> dict[str, Any]:
        """The KV metadata section, in file order: ``str``, ``int`` (int64 and
        uint64), ``float``, ``bool``, ``bytes``, or a ``list`` of one of
        those. A new dict each time."""
        return self._live().metadata()

    @property
    def container(self) -> dict[str, Any]:
        """Container facts: ``container_version`` (major, minor),
        ``file_flags``, ``data_buffer_alignment`` (bytes), ``size`` (bytes),
        ``mapped``, ``strict``, ``threads``."""
        return self._live().container()

    def validate(self) -> list[str]:
        """Check the whole file, as ``hurray-inspect --validate`` does: every
        tensor's descriptor and data (storage invariants, quantization
        parameters, packing bits) and, in strict mode, the padding between
        regions. Runs without the GIL, on the file's threads.

        Returns
        -------
        list of str
            The warnings the check reports for a file it accepts (see
            :class:`FormatWarning`), one line each, naming the tensor:
            ``"tensor 'A': statistics sparsity_ratio is 0.5, but nnz gives
            0.75 (...)"``; and a line for each tensor whose data could not
            be checked (``"tensor 'B': data not checked: its layout tag is
            not recognised ..."``: an unknown tag in permissive mode, a
            private layout), as ``hurray-inspect --validate`` marks it
            SKIPPED. Empty for a clean file. Each is also issued with
            :func:`warnings.warn` as a :class:`FormatWarning`.

        Raises
        ------
        FormatError
            The first rule broken.
        """
        native = self._live()
        native.validate()
        # Every tensor whose data the check read is clean: no later scan.
        self._checked.update(n for n in self._names if self[n]._info["not_viewable"] is None)
        found = [f"tensor {name!r}: {w}" for name in self._names for w in native.warnings(name)]
        found += [f"tensor {name!r}: {w}" for name in self._names for w in self[name]._unchecked()]
        for w in found:
            _warnings.warn(w, FormatWarning, stacklevel=2)
        return found

    def close(self) -> None:
        """Release this object's hold on the file. Arrays made from it keep
        the bytes they read alive; tensors from it stop working."""
        self._native = None
        self._infos.clear()
        self._checked.clear()

    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self._native is None

    def __enter__(self) -> File:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        if self._native is None:
            return f"<hurray_reader.File {self._path!r} (closed)>"
        c = self.container
        how = "mapped" if c["mapped"] else "in memory"
        s = "" if len(self) == 1 else "s"
        return f"<hurray_reader.File {self._path!r}: {len(self)} tensor{s}, {c['size']} bytes, {how}>"

    def __reduce__(self) -> Any:
        raise TypeError(
            "a File is a file open in this process and cannot be pickled or copied: send its path "
            "(hurray_reader.dask maps the file in each worker)"
        )

    def _repr_html_(self) -> str:
        import html

        if self._native is None:
            return f"<p>{html.escape(repr(self))}</p>"
        rows = []
        for name in self._names[:_HTML_ROWS]:
            try:
                t = self[name]
                cells = (name, t._type_text(), t.layout, _shape_text(t.shape), "" if t.nnz is None else str(t.nnz))
            except Exception as e:  # a broken descriptor: show the error, not the table's end
                cells = (name, "", "", "", f"error: {e}")
            rows.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
        more = len(self._names) - _HTML_ROWS
        if more > 0:
            rows.append(f"<tr><td colspan=5>… {more} more</td></tr>")
        head = "".join(f"<th>{h}</th>" for h in ("name", "dtype", "layout", "shape", "nnz"))
        return (
            f"<p>{html.escape(repr(self))}</p><table><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>"
        )


_HTML_ROWS = 50


def _encodable(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shape_text(shape: tuple[int | None, ...]) -> str:
    return "[" + ", ".join("?" if n is None else str(n) for n in shape) + "]"


class Tensor:
    """One tensor of an open :class:`File`: its descriptor, and zero-copy
    numpy and scipy views of its data.

    Attributes describe the descriptor; nothing reads the data until
    :meth:`buffers`, :meth:`numpy` or :meth:`to_scipy` is called.
    """

    __slots__ = ("_file", "_info", "_transposed")

    def __init__(self, file: File, info: dict[str, Any], transposed: bool = False) -> None:
        self._file = file
        self._info = info
        self._transposed = transposed

    # Descriptor
    @property
    def name(self) -> str:
        """The tensor's name in the footer index."""
        return self._info["name"]

    @property
    def element_type(self) -> str:
        """The spec's element type name: ``float32``, ``bfloat16``, ``int4``, ...
        (``unknown`` for a tag only permissive mode accepts)."""
        return self._info["element_type"] or "unknown"

    @property
    def dtype(self) -> np.dtype[Any] | str:
        """The element type as a ``numpy.dtype`` where numpy has it (``bool``
        included, though the file packs it 8 to a byte), else the spec's name
        as a ``str`` (``bfloat16``, ``float8_e4m3``, ``int4``, ...). For a
        quantized tensor, the stored type; see :attr:`quantization`."""
        et = self.element_type
        if et in _NUMPY_DTYPES:
            return np.dtype(et)
        if et == "bool":
            return np.dtype(bool)
        return et

    @property
    def layout(self) -> str:
        """The layout's spec name: ``csc``, ``csr``, ``coo``, ``csf``,
        ``row_major``, ``col_major``, ``strided``, ``tiled``, ``morton``,
        ``hilbert``, ``block_paged``, ``composite``."""
        layout = self._info["layout"]
        if self._transposed:
            return {"csc": "csr", "csr": "csc"}[layout]
        return layout

    @property
    def shape(self) -> tuple[int | None, ...]:
        """The shape; ``None`` for a dynamic dimension."""
        shape = tuple(self._info["shape"])
        return shape[::-1] if self._transposed else shape

    @property
    def ndim(self) -> int:
        """Number of dimensions (the rank)."""
        return len(self._info["shape"])

    @property
    def nnz(self) -> int | None:
        """Stored elements of a sparse tensor (CSC, CSR, COO, CSF); ``None``
        for other layouts."""
        return self._info["nnz"]

    @property
    def quantization(self) -> dict[str, Any] | None:
        """The quantization section: ``scheme`` (``per_tensor_affine``,
        ``per_channel_affine``, ``per_block_affine``, ``nf4``, ``mxfp``) and
        its fields; ``None`` when the tensor is not quantized."""
        q = self._info["quantization"]
        return None if q is None else dict(q)

    @property
    def statistics(self) -> dict[str, Any] | None:
        """The statistics section's fields whose ``computed_mask`` bit is set
        (``nnz``, ``sparsity_ratio``, ``value_min``, ..., ``has_inf``); ``None``
        without a statistics section. Advisory: written by the producer."""
        s = self._info["statistics"]
        return None if s is None else dict(s)

    @property
    def members(self) -> list[str]:
        """The names of a composite head's member tensors, in order (each a
        key of the file: ``f[name]``); empty otherwise."""
        return list(self._info["members"])

    @property
    def T(self) -> Tensor:
        """The transpose of a CSC tensor as CSR (or of a CSR as CSC), over
        the same buffers: no copy. ``t.T.to_scipy()`` is
        ``t.to_scipy().T``."""
        if self._info["layout"] not in ("csc", "csr"):
            raise TypeError(f"tensor {self.name!r}: .T is for CSC and CSR tensors, not {self.layout}")
        return Tensor(self._file, self._info, not self._transposed)

    # Data
    def _native(self) -> _native.File:
        return self._file._live()

    def _array(self, buffer: dict[str, Any], part: tuple[int, int] | None = None) -> np.ndarray:
        """The buffer as an array over the file's bytes, or its elements
        ``part`` (start, stop). A part is made from the bytes directly, not
        sliced from the whole: scipy copies an array that is a small view
        of a larger one (``_prune_array``)."""
        storage = self._native().storage
        role, et, count = buffer["role"], buffer["element_type"], buffer["count"]
        if et == "uint64" and role.startswith(_INDEX_ROLES):
            dtype = np.dtype("<i8")
        elif et in _NUMPY_DTYPES:
            dtype = np.dtype(_NUMPY_DTYPES[et])
        else:
            dtype, count = np.dtype("u1"), buffer["byte_size"]
        offset = buffer["offset"]
        if part is not None:
            start, stop = part
            if not 0 <= start <= stop <= count:
                raise ValueError(f"tensor {self.name!r}: elements {start}..{stop} are not within 0..{count}")
            offset, count = offset + start * dtype.itemsize, stop - start
        if count == 0:
            return _read_only(np.empty(0, dtype))
        return np.frombuffer(storage, dtype=dtype, count=count, offset=offset)

    def buffers(self) -> dict[str, np.ndarray]:
        """The tensor's buffers by their spec role: ``values``,
        ``row_indices``, ``col_ptr`` (CSC), ``col_indices``, ``row_ptr``
        (CSR), ``indices`` (COO, shape ``(nnz, ndim)``), ``pos_L``/``crd_L``
        (CSF), ``data`` (dense), ``scales``, ``zero_points``, ``page_pool``,
        ``block_table``, ``seq_ptr``.

        Every array is a read-only view of the file's bytes that keeps them
        alive (no copy). Index buffers (``uint64`` in the file) are
        ``int64`` views; nothing here scans them, so in a file that breaks
        the rules an index of ``2**63`` or more reads as negative (the
        scan of :meth:`to_scipy` or :meth:`validate` rejects such a file).
        Element types numpy lacks (packed ``bool``, sub-byte integers,
        float8/6/4, bfloat16, float128) are given as their raw ``uint8``
        bytes; :meth:`numpy` and :meth:`to_scipy` decode them.
        """
        out = {}
        for b in self._info["buffers"]:
            array = self._array(b)
            role = b["role"]
            if role == "indices" and self._info["layout"] == "coo":
                array = array.reshape(-1, max(self.ndim, 1))
            if self._transposed:
                role = _TRANSPOSED_ROLES.get(role, role)
            out[role] = array
        return out

    def _buffer(self, role: str) -> np.ndarray:
        buffers = self.buffers()
        if role not in buffers:
            raise AttributeError(f"tensor {self.name!r} ({self.layout}) has no {role} buffer")
        return buffers[role]

    @property
    def values(self) -> np.ndarray:
        """The ``values`` buffer of a sparse tensor (see :meth:`buffers`)."""
        return self._buffer("values")

    @property
    def row_indices(self) -> np.ndarray:
        """CSC: the row of each stored value, ``int64``, length ``nnz``."""
        return self._buffer("row_indices")

    @property
    def col_ptr(self) -> np.ndarray:
        """CSC: where each column's values start, ``int64``, length ``ncols + 1``."""
        return self._buffer("col_ptr")

    @property
    def col_indices(self) -> np.ndarray:
        """CSR: the column of each stored value, ``int64``, length ``nnz``."""
        return self._buffer("col_indices")

    @property
    def row_ptr(self) -> np.ndarray:
        """CSR: where each row's values start, ``int64``, length ``nrows + 1``."""
        return self._buffer("row_ptr")

    @property
    def indices(self) -> np.ndarray:
        """COO: the coordinates of each stored value, ``int64``, shape ``(nnz, ndim)``."""
        return self._buffer("indices")

    @property
    def _checked(self) -> bool:
        """Whether this tensor's data has scanned clean (by any of the
        file's :class:`Tensor` objects for it, ``.T`` included)."""
        return self.name in self._file._checked

    def _check(self, validate: bool) -> None:
        if validate and not self._checked:
            self._native().check(self.name)
            self._file._checked.add(self.name)

    def validate(self) -> list[str]:
        """Run every check that reads this tensor's data (the storage
        invariant scan, quantization parameters, packing bits), without the
        GIL, on the file's threads.

        Returns
        -------
        list of str
            This tensor's warnings (:meth:`warnings`), and ``"data not
            checked: ..."`` for a tensor whose data cannot be checked (an
            unknown tag in permissive mode, a private layout), each also
            issued as a :class:`FormatWarning`.

        Raises
        ------
        FormatError
            The first violation, naming its position and byte offset.
        """
        self._file._checked.discard(self.name)
        self._check(True)
        found = self.warnings() + self._unchecked()
        for w in found:
            _warnings.warn(f"tensor {self.name!r}: {w}", FormatWarning, stacklevel=2)
        return found

    def _unchecked(self) -> list[str]:
        """``["data not checked: <why>"]`` for a tensor whose data the
        checks cannot read (``hurray-inspect --validate`` says SKIPPED); a
        composite head owns none, and gets ``[]`` as a checked tensor."""
        why = self._info["not_viewable"]
        return [f"data not checked: {why}"] if why is not None and self._info["layout"] != "composite" else []

    def warnings(self) -> list[str]:
        """What the reader accepts in this tensor but reports (see
        :class:`FormatWarning`), one line each; empty when there is
        nothing. Reads the descriptor only."""
        return self._native().warnings(self.name)

    def numpy(self, *, dequantize: bool = True) -> np.ndarray:
        """A dense tensor as a numpy array of its :attr:`shape`.

        Row-major, column-major and strided tensors of a type numpy has are
        read-only views of the mapping (no copy; a strided tensor's strides
        may be negative or zero). Tiled, Morton and Hilbert tensors, element
        types numpy lacks (decoded: packed ``bool`` to ``bool``, 2- and 4-bit
        integers to ``int8``/``uint8``, float8/6/4 and bfloat16 to
        ``float32``), and quantized tensors (their real values: ``float32``,
        ``float64`` for MXFP) are decoded into a new read-only array: a copy.
        ``dequantize=False`` gives a quantized tensor's stored codes.

        Raises
        ------
        TypeError
            A sparse tensor (use :meth:`to_scipy`), a composite head, a type
            numpy cannot hold (``float128``), an unknown tag.
        FormatError
            The descriptor breaks a rule (or a quantization parameter, when
            dequantizing).
        """
        dequantize = _flag("dequantize", dequantize)
        info = self._info
        if info["layout"] in ("csc", "csr", "coo", "csf"):
            raise TypeError(f"tensor {self.name!r} is sparse ({info['layout']}): use to_scipy() (then .toarray())")
        if info["not_viewable"] is not None:
            raise TypeError(f"tensor {self.name!r}: {info['not_viewable']}")
        shape = self.shape
        if None in shape:
            raise ValueError(f"tensor {self.name!r} has a dynamic dimension: {_shape_text(shape)}")
        if any(n > _INT64_MAX for n in shape):
            raise ValueError(f"tensor {self.name!r}: shape {_shape_text(shape)} does not fit numpy's int64 dimensions")
        quantized = info["quantization"] is not None and dequantize
        dense = info["dense"]
        et = self.element_type
        if dense is not None and not quantized and et in _NUMPY_DTYPES:
            dtype = np.dtype(_NUMPY_DTYPES[et])
            strides = tuple(s * dtype.itemsize for s in dense["strides"])
            if 0 in shape:
                return _read_only(np.empty(shape, dtype))
            return np.ndarray(shape, dtype, buffer=self._native().storage, offset=dense["offset"], strides=strides)
        data, dtype = self._native().decode_dense(self.name, quantized)
        return np.frombuffer(data, dtype=dtype).reshape(shape)

    def to_scipy(
        self,
        *,
        validate: bool = True,
        dequantize: bool = True,
        columns: range | slice | None = None,
        rows: range | slice | None = None,
        copy: bool = False,
    ) -> scipy.sparse.sparray:
        """A sparse tensor as a scipy sparse array over the mapping.

        CSC gives ``scipy.sparse.csc_array``, CSR ``csr_array``, COO
        ``coo_array`` (n-dimensional where scipy supports it). Index arrays
        are the file's (``int64`` views, no copy; scipy keeps them). Values
        are the file's too when scipy supports their type; ``float16`` is
        widened to ``float32``, types numpy lacks are decoded and quantized
        values dequantized (see :meth:`numpy`): copies of the values only.
        A CSF tensor gives the ``coo_array`` of its stored elements (its
        coordinates decoded from the tree: a copy).

        Every array is read-only: what scipy computes *from* the matrix
        works (products, sums, slicing, conversions, solvers), what changes
        it in place does not (``eliminate_zeros``, ``sort_indices`` on an
        unchecked matrix, ``A *= 2``, ``A[i, j] = v``, ``setdiag``,
        ``resize``): take ``copy=True``, or ``A.copy()``.

        Parameters
        ----------
        validate : bool
            Run the storage-invariant scan first (default; once per open
            file and tensor, ``.T`` included), without the GIL and on the
            file's threads, so that scipy gets arrays it can trust, marked
            canonical. ``False`` skips it: only for files you trust.
            scipy's kernels do not check indices: on a corrupt file they
            read and write out of bounds, which can kill the interpreter
            (segmentation fault, "double free") or silently give wrong
            results.
        dequantize : bool
            A quantized tensor's real values (default) or its stored codes.
        columns : range or slice, optional
            CSC only: the block of these consecutive columns,
            ``A[:, j0:j1]``, as a ``csc_array`` of shape ``(nrows, j1 - j0)``
            over the same mapping (its values and indices are the file's;
            its ``indptr`` is a new array of ``j1 - j0 + 1`` entries, since
            scipy wants it to start at 0). With ``validate``, only the block
            is scanned; values that are decoded are decoded for the block
            alone. A negative bound counts from the end, as in a slice
            (``slice(-3, None)``: the last three columns; a range is read
            as the slice of its start and stop); bounds are not clamped,
            and a step is refused.
        rows : range or slice, optional
            CSR only (``t.T`` of a CSC too): the block of these rows. Only
            one of ``columns`` and ``rows`` may be given.
        copy : bool
            Writable copies of every array instead of views of the file.

        Raises
        ------
        FormatError
            The scan found a broken invariant (the message names column,
            position and byte offset).
        TypeError
            A dense tensor, a composite head, an unknown tag;
            ``columns=`` of a CSR or ``rows=`` of a CSC tensor, both
            ``columns=`` and ``rows=``, a bound that is not an int.
        ValueError
            A dimension at or beyond ``2**63`` (scipy's indices are int64); a
            block with a step, or reversed.
        IndexError
            A block past the last column (row), or a negative bound below
            ``-ncols`` (``-nrows``).
        """
        validate, dequantize = _flag("validate", validate), _flag("dequantize", dequantize)
        matrix = self._scipy(validate, dequantize, columns, rows)
        return matrix.copy() if _flag("copy", copy) else matrix

    def _scipy(self, validate: bool, dequantize: bool, columns: Any, rows: Any) -> Any:
        import scipy.sparse as sp

        info = self._info
        layout = info["layout"]
        if layout not in ("csc", "csr", "coo", "csf"):
            hints = {"composite": ": read its members", "block_paged": ": read buffers()"}
            why = info["not_viewable"]
            hint = f": {why}" if why is not None and layout != "composite" else hints.get(layout, ": use numpy()")
            raise TypeError(f"tensor {self.name!r} ({layout}) has no scipy form{hint}")
        if info["not_viewable"] is not None:
            raise TypeError(f"tensor {self.name!r}: {info['not_viewable']}")
        shape = tuple(info["shape"])
        if any(n is None or n > _INT64_MAX for n in shape):
            raise ValueError(f"tensor {self.name!r}: shape {_shape_text(shape)} does not fit scipy's int64 indices")
        block = self._outer_block(columns, rows)
        if block is None:
            self._check(validate)
        elif validate and not self._checked:
            self._native().check_block(self.name, *block)
        buffers = {b["role"]: b for b in info["buffers"]}
        if layout in ("coo", "csf"):
            if block is not None:
                raise TypeError(f"tensor {self.name!r} ({layout}): blocks are for CSC and CSR tensors")
            values = self._scipy_values(buffers["values"], dequantize)
            if layout == "csf":
                # The tree's coordinates, decoded (the scan runs with them).
                coordinates = self._native().csf_coordinates(self.name)
                indices = np.frombuffer(coordinates, dtype=np.int64).reshape(-1, max(len(shape), 1))
            else:
                indices = self._array(buffers["indices"]).reshape(-1, max(len(shape), 1))
            coords = tuple(indices[:, k] for k in range(len(shape)))
            if len(shape) != 2 and not _scipy_nd_coo():
                raise TypeError(f"tensor {self.name!r}: this scipy has no {len(shape)}-dimensional coo_array")
            return sp.coo_array((values, coords), shape=shape)
        index, pointer = ("row_indices", "col_ptr") if layout == "csc" else ("col_indices", "row_ptr")
        pointers = self._array(buffers[pointer])
        part = None
        if block is not None:
            start, stop = block
            window = pointers[start : stop + 1]
            if stop > start:
                part = (int(window[0]), int(window[-1]))
                pointers = _read_only(window - part[0])
            else:  # no slice: no element, whatever the pointer says
                part, pointers = (0, 0), _read_only(np.zeros(1, np.int64))
        indices = self._array(buffers[index], part)
        values = self._scipy_values(buffers["values"], dequantize, part, block)
        if self._transposed:
            layout, shape = {"csc": "csr", "csr": "csc"}[layout], shape[::-1]
        if block is not None:
            width = block[1] - block[0]
            shape = (shape[0], width) if layout == "csc" else (width, shape[1])
        make = sp.csc_array if layout == "csc" else sp.csr_array
        matrix = make((values, indices, pointers), shape=shape)
        if validate:
            # The scan proved it: sorted, no duplicates. scipy then never
            # tries to sort the read-only arrays in place.
            matrix.has_sorted_indices = True
            matrix.has_canonical_format = True
        return matrix

    def _outer_block(self, columns: Any, rows: Any) -> tuple[int, int] | None:
        """``(start, stop)`` of the file's outer slices (a CSC tensor's
        columns, a CSR one's rows) that ``columns=`` (of a CSC view) or
        ``rows=`` (of a CSR view: ``t.T`` of a CSC too) name; ``None`` for
        neither. ``TypeError`` for both, or for the other layout's."""
        if columns is not None and rows is not None:
            raise TypeError(f"tensor {self.name!r}: give columns= or rows=, not both (one of them may be given)")
        if columns is None and rows is None:
            return None
        what, given = ("columns", columns) if columns is not None else ("rows", rows)
        wanted = "csc" if what == "columns" else "csr"
        if self.layout != wanted:
            raise TypeError(f"tensor {self.name!r} ({self.layout}): {what}= is for {wanted.upper()} tensors")
        shape = self._info["shape"]
        outer = shape[1] if self._info["layout"] == "csc" else shape[0]
        return _block(given, outer, what)

    def _scipy_values(
        self,
        buffer: dict[str, Any],
        dequantize: bool,
        part: tuple[int, int] | None = None,
        block: tuple[int, int] | None = None,
    ) -> np.ndarray:
        """The values for scipy: the file's, or ``part`` of them (positions
        ``start, stop``, the values of the outer slices ``block``). Types
        decoded or dequantized are decoded for ``block`` alone."""
        et = buffer["element_type"]
        quantized = self._info["quantization"] is not None and dequantize
        if not quantized and et in _NUMPY_DTYPES:
            values = self._array(buffer, part)
            if et == "float16":  # scipy.sparse has no float16
                values = _read_only(values.astype(np.float32))
            return values
        data, dtype = self._native().decode_values(self.name, quantized, block)
        return np.frombuffer(data, dtype=dtype)

    # Products
    def matvec(
        self,
        x: Any,
        *,
        threads: int = 1,
        columns: range | slice | None = None,
        rows: range | slice | None = None,
    ) -> np.ndarray:
        """``A @ x`` for a CSC or CSR matrix of ``float32`` or ``float64``
        (``t.T.matvec(x)`` is ``Aᵀ @ x``), computed by the package's Rust
        kernels over the file's buffers, without the GIL; with ``columns=``
        or ``rows=``, the product of that block alone, as
        :meth:`to_scipy` cuts it (``A[:, j0:j1] @ x[j0:j1]``,
        ``A[i0:i1, :] @ x``).

        Each product is summed in the matrix's dtype and in storage order,
        as scipy's ``A @ x`` sums it: on one thread ``y`` has the bits of
        ``t.to_scipy() @ x`` (``x`` of the same dtype). On more threads,
        ``A @ x`` of a CSC matrix whose ``y`` takes up to 16 MiB cuts the
        columns between the threads, and a row with elements on both sides
        of a cut is summed in parts, then added: the rounding differs, by
        more than the last bit where terms cancel (``float32``: ``1 + 1e8 -
        1e8`` in three columns cut after the first gives 1, one thread 0).
        A row of a CSR matrix (or a column of a CSC one, through ``t.T``)
        longer than 4096 elements may be cut too (``CscView::mul_vec_parallel`` and
        ``CsrView::mul_vec_parallel`` in the Rust docs say where). The same
        ``threads`` gives the same bits on every call.

        The first product of a tensor scans its storage invariants, in
        strict and permissive mode alike (the kernels rely on them), on the
        file's threads; the file keeps the result, so later products of that
        tensor skip the scan (the scans of :meth:`to_scipy` and
        :meth:`validate` are their own). With the GIL held, ``x`` is
        copied (``ncols`` elements, into memory the file keeps for the next
        product); the product then runs without the GIL on that copy, so
        that another thread may change ``x`` meanwhile, and ``y`` is a
        new array. The matrix is read in place. A ``y`` over 16 MiB may
        take scratch that the process keeps for the next product: see
        :func:`release_scratch`.

        Parameters
        ----------
        x : array_like
            The vector, shape ``(ncols,)``. An array (an ndarray, a
            ``memoryview``, an ``array.array``: anything but a list or a
            tuple) must have the matrix's dtype (convert it yourself,
            ``x.astype(t.dtype)``, so that no precision is lost unseen); a
            list or tuple of numbers is converted to it. Not a masked
            array.
        threads : int
            Threads for the product (default 1): the calling thread and the
            package's pool, started on first use; at most 64 and no more
            than the CPUs, and one for fewer than 65 536 stored elements.
            Not the file's ``threads`` of :func:`open`, which only scans
            use: their results do not depend on it, a product's may.
        columns : range or slice, optional
            CSC only (``t.T`` of a CSR too): the block ``A[:, j0:j1]``, read
            as :meth:`to_scipy` reads it; ``x`` then has shape ``(j1 - j0,)``
            (``x[j0:j1]`` of the whole vector) and ``y`` all ``nrows``
            entries: the block's part of ``A @ x``. Unless a product on the
            whole tensor has scanned it, the block's first product scans
            its invariants, and only the block's; the file keeps the
            result for the block's next products (4096 blocks at most).
            What a task of :func:`hurray_reader.dask.matvec` does on a
            worker.
        rows : range or slice, optional
            CSR only (``t.T`` of a CSC too): the block ``A[i0:i1, :]``;
            ``x`` has shape ``(ncols,)`` and ``y`` is ``y[i0:i1]`` of the
            whole product, with its bits. Only one of ``columns`` and
            ``rows`` may be given.

        Returns
        -------
        numpy.ndarray
            ``y``, shape ``(nrows,)`` (a row block: ``(i1 - i0,)``), the
            matrix's dtype; a new, writable array.

        Raises
        ------
        TypeError
            A layout other than CSC and CSR, another element type, a
            quantized tensor (its stored codes are not its values: take
            ``t.to_scipy() @ x``); an ``x`` that is an array of another
            dtype, a masked array, a scalar or ``None``, or a list or tuple
            of other than numbers; ``columns=`` and ``rows=`` refused as
            :meth:`to_scipy` refuses them.
        ValueError
            ``x`` is not of shape ``(ncols,)`` (of the block's width); a
            block with a step, or reversed.
        IndexError
            A block outside the matrix.
        FormatError
            The scan found a broken invariant.
        """
        dtype = self._product_dtype()
        x = np.asarray(_vector_argument(x, dtype))
        if x.dtype != dtype:
            raise TypeError(f"x is {x.dtype}, tensor {self.name!r} {dtype}: convert it, np.asarray(x, np.{dtype})")
        nrows, ncols = self.shape
        if nrows is None or ncols is None:
            raise ValueError(f"tensor {self.name!r} has a dynamic dimension: {_shape_text(self.shape)}")
        block = self._outer_block(columns, rows)
        shown = _shape_text(self.shape)
        if block is not None:
            if columns is not None:
                ncols = block[1] - block[0]
                shown = f"{shown}, its columns {block[0]}..{block[1]}"
            else:
                nrows = block[1] - block[0]
        if x.shape != (ncols,):
            raise ValueError(f"x has shape {x.shape}; tensor {self.name!r} is {shown}: x needs ({ncols},)")
        x = np.require(x, dtype, "CA")  # the dtype, C-contiguous and aligned, as the copy in Rust takes it
        threads = min(_threads(threads), MAX_THREADS)
        return self._native().matvec(self.name, self._transposed, x, nrows, threads, block)

    def _product_dtype(self) -> np.dtype[Any]:
        """The dtype of :meth:`matvec`'s vectors; ``TypeError`` for a
        tensor it does not multiply."""
        layout, element_type = self.layout, self.element_type
        if self._info["quantization"] is not None:
            raise TypeError(f"tensor {self.name!r} is quantized: matvec would multiply its codes; take to_scipy() @ x")
        if layout not in ("csc", "csr") or element_type not in ("float32", "float64"):
            raise TypeError(
                f"tensor {self.name!r}: matvec is for CSC and CSR tensors of float32 or float64, "
                f"not {layout} of {element_type}"
            )
        return np.dtype(element_type)

    # Display
    def _type_text(self) -> str:
        q = self._info["quantization"]
        return self.element_type if q is None else f"{self.element_type} · {q['scheme']}"

    def __repr__(self) -> str:
        nnz = "" if self.nnz is None else f", nnz {self.nnz}"
        t = " (transposed view)" if self._transposed else ""
        return f"<hurray_reader.Tensor {self.name!r}: {self._type_text()} {self.layout} {_shape_text(self.shape)}{nnz}{t}>"

    def __eq__(self, other: object) -> bool:
        """The same tensor of the same open :class:`File` (``f[name] ==
        f[name]``; ``t.T != t``)."""
        if not isinstance(other, Tensor):
            return NotImplemented
        same = (self.name, self._transposed) == (other.name, other._transposed)
        return self._file is other._file and same

    def __hash__(self) -> int:
        return hash((id(self._file), self.name, self._transposed))

    def __copy__(self) -> Tensor:
        return Tensor(self._file, self._info, self._transposed)

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        return self.__copy__()  # a view of the same file: nothing of its own to copy

    def __reduce__(self) -> Any:
        raise TypeError(
            f"tensor {self.name!r} is a view of a file open in this process and cannot be pickled: send the "
            "file's path and the tensor's name (hurray_reader.dask maps the file in each worker), or an array "
            "made from it (numpy(), to_scipy(copy=True))"
        )

    def _repr_html_(self) -> str:
        import html

        rows = [
            ("name", self.name),
            ("dtype", self._type_text()),
            ("layout", self.layout),
            ("shape", _shape_text(self.shape)),
        ]
        if self.nnz is not None:
            rows.append(("nnz", str(self.nnz)))
        for b in self._info["buffers"]:
            rows.append((f"buffer {b['role']}", f"{b['element_type']} × {b['count']} at offset {b['offset']}"))
        body = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in rows)
        return f"<table>{body}</table>"


def _block(block: range | slice, count: int, what: str) -> tuple[int, int]:
    """``(start, stop)`` of a block of consecutive slices (``what``:
    "columns" or "rows", for the messages) out of ``count``.

    A bound below 0 counts from the end, as in a slice (``-3`` is
    ``count - 3``; a ``range`` is read as the slice of its start and stop);
    ``None`` in a slice is the start or the end. Bounds are not clamped: one
    outside ``0..count`` after that is an ``IndexError``; a step other than
    1 or a reversed block is a ``ValueError``."""
    if isinstance(block, slice):
        if block.step is not None and _index(block.step, "a block's step") != 1:
            raise ValueError(f"a block is consecutive {what}: {block} has a step (take the block, then step through it)")
        start = 0 if block.start is None else _index(block.start, "a block's start")
        stop = count if block.stop is None else _index(block.stop, "a block's stop")
    elif isinstance(block, range):
        if block.step != 1:
            raise ValueError(f"a block is consecutive {what}: {block} has a step (take the block, then step through it)")
        start, stop = block.start, block.stop
    else:
        raise TypeError(f"a block is a range or a slice, not {type(block).__name__}")
    first = start + count if start < 0 else start
    end = stop + count if stop < 0 else stop
    if first < 0 or end > count:
        raise IndexError(f"block {start}..{stop} is outside 0..{count}")
    if end < first:
        raise ValueError(f"block {start}..{stop} is reversed ({first}..{end} of 0..{count})")
    return int(first), int(end)


def _vector_argument(x: Any, dtype: np.dtype[Any]) -> Any:
    """``x`` as the products take it, before its dtype and shape are
    checked: a list or tuple of numbers converted to ``dtype``, anything
    else as given. ``TypeError`` for ``None``, a scalar, a masked array, a
    list or tuple of other than numbers."""
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError("x is a masked array: fill it first (x.filled(0))")
    if x is None or np.ndim(x) == 0:
        what = "None" if x is None else f"a scalar ({type(x).__name__})"
        raise TypeError(f"x is {what}: matvec takes a vector, shape (ncols,)")
    if not isinstance(x, (list, tuple)):
        return x
    numbers = np.asarray(x)
    if numbers.dtype.kind not in "biuf":
        raise TypeError(f"x holds {numbers.dtype} values, not numbers")
    return numbers.astype(dtype)


def _index(value: Any, what: str) -> int:
    """``value`` as an ``int`` (numpy integers included; not ``bool``)."""
    if isinstance(value, bool):
        raise TypeError(f"{what} is an int, not bool")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{what} is an int, not {type(value).__name__}") from None


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def _scipy_nd_coo() -> bool:
    import scipy.sparse as sp

    try:
        sp.coo_array((np.zeros(0), (np.zeros(0, np.int64),) * 3), shape=(1, 1, 1))
    except (TypeError, ValueError):
        return False
    return True
