"""Zero-copy, memory-mapped numpy and scipy views of Hurray tensor files.

>>> import hurray_reader as hr
>>> with hr.open("matrix.hry") as f:                      # doctest: +SKIP
...     A = f["A"].to_scipy()        # scipy.sparse.csc_array over the mapping

:func:`open` maps a file and parses its container (nothing proportional to
the data); a :class:`File` is a mapping from tensor name to :class:`Tensor`,
whose :meth:`~Tensor.buffers`, :meth:`~Tensor.numpy` and
:meth:`~Tensor.to_scipy` are read-only views of the mapped bytes. Strict by
default: :meth:`~Tensor.to_scipy` runs the storage-invariant scan first, and
every rule a file breaks is a :class:`FormatError`. :func:`save` writes
tensors. The reader is the Rust crate ``hurray-reader``; the spec is at
https://github.com/pgillet/hurray.
"""

from ._native import FormatError, __version__
from ._file import File, FormatWarning, Tensor, open, release_scratch
from ._save import save

__all__ = ["File", "FormatError", "FormatWarning", "Tensor", "open", "release_scratch", "save", "__version__"]
