"""The shared corpora and their manifests, for the tests: where they are,
and what a valid file's manifest entry says compared with what the package
reads, element by element."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import hurray_reader as hr

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "fixtures"


def corpus(var: str) -> tuple[Path, dict[str, Any]]:
    """The folder named by the environment variable ``var`` and its
    ``manifest.json``. Unset: the test is skipped with a ``skipped:`` line
    on stderr. Set but missing or unreadable: the test fails."""
    value = os.environ.get(var)
    if value is None:
        print(f"skipped: {var} not set (set it to a corpus folder to run this test)", file=sys.stderr)
        pytest.skip(f"{var} not set")
    folder = Path(value)
    if not folder.is_absolute():
        folder = REPO / folder
    manifest = folder / "manifest.json"
    if not manifest.is_file():
        pytest.fail(f"{var} is set but {manifest} cannot be read")
    return folder, json.loads(manifest.read_text())


# Where this reader's error offset differs from the manifest's
# `offending_offset` by convention (the Rust tests' OFFSET_CONVENTIONS,
# crates/hurray-reader/tests/support/corpus.rs): the field's first byte rather
# than the byte that differs.
OFFSET_CONVENTIONS = {
    "invalid_file_magic.hry": 0,
    "invalid_trailer_magic.hry": 16584,
    "invalid_descriptor_magic.hry": 12336,
    "invalid_header_reserved_nonzero.hry": 36,
    "invalid_duplicate_tensor_names.hry": 16508,
    "invalid_truncated_file.hry": 9948,
    "invalid_buffer_past_eof.hry": 16536,
    "invalid_sorted_flag_on_unsorted_index.hry": 12342,
    "bug03e_descriptor_length_4100.hry": 16403,
}


def strict_verdict(path: Path) -> hr.FormatError | None:
    """Everything a strict reader checks: open, every tensor, every byte of
    data (``validate``). The first ``FormatError``, or ``None``."""
    try:
        with hr.open(path) as f:
            for name in f:
                f[name]
            f.validate()
    except hr.FormatError as e:
        return e
    return None


def located(e: hr.FormatError) -> list[str]:
    """The exception's attributes agree with its message, as the Rust
    tests' ``located`` requires of the Rust error."""
    text = str(e)
    problems = []
    if e.field is not None and e.field not in text:
        problems.append(f"field {e.field!r} not in the message")
    if e.offset is None or f"at offset {e.offset}" not in text:
        if not text.startswith("file size"):
            problems.append(f"offset {e.offset} not in the message")
    if e.rule is None or not text.endswith(f"({e.rule})"):
        problems.append(f"rule {e.rule!r} does not end the message")
    return problems


def cites_section(e: hr.FormatError, entry: dict[str, Any]) -> bool:
    """The error's rule cites a section the manifest names (or one of its
    ``also_breaks``)."""
    specs = [entry.get("spec")] + list(entry.get("also_breaks") or [])
    sections = []
    for spec in specs:
        if isinstance(spec, str):
            for part in spec.split("§")[1:]:
                s = re.split(r"[;,(:/›']", part)[0].strip()
                if s:
                    sections.append(s)
    return any(s in (e.rule or "") for s in sections)


def mentions(message: str, hint: str) -> bool:
    """Every number and word of a manifest hint (``"col_ptr[3] = 2 <
    col_ptr[2] = 3"``) appears in the message (the Rust tests' ``mentions``)."""

    def normalize(s: str) -> str:
        s = re.sub(r"[_\[\]'\",:()]", " ", s.lower())
        return " ".join(s.split())

    m, h = normalize(message), normalize(hint)
    if h in m:
        return True
    words = m.split(" ")
    return all(
        any(x == w or x.rstrip(".") == w for x in words) or w in m
        for w in h.split(" ")
        if w not in ("=", "<", "<=", ">", "and", "x")
    )


def _float(v: Any) -> float:
    return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}.get(v, v)


def _floats(nested: Any) -> Any:
    if isinstance(nested, list):
        return [_floats(x) for x in nested]
    return _float(nested)


def expected(values: Any, dtype: np.dtype[Any]) -> np.ndarray:
    """A manifest list (nested for a dense view) as an array of ``dtype``;
    complex elements are ``[re, im]`` pairs."""
    if dtype.kind == "c":
        pairs = np.array(_floats(values), dtype=np.float64)
        return (pairs[..., 0] + 1j * pairs[..., 1]).astype(dtype)
    if dtype.kind == "f":
        return np.array(_floats(values), dtype=np.float64).astype(dtype)
    return np.array(values, dtype=dtype)


def same(ours: np.ndarray, want: np.ndarray, signed_zero: bool = True) -> bool:
    """Element-by-element equality as the manifests define it: exact, any
    NaN equal to any NaN, the sign of zero compared (unless
    ``signed_zero`` is false: scipy's ``toarray`` adds stored values to
    +0.0, which loses a stored -0.0's sign)."""
    if ours.size == 0 and want.size == 0:
        return True  # the manifest's [[], [], []] has lost the shape's later dimensions
    if ours.shape != want.shape:
        return False
    if ours.dtype.kind == "c":
        return same(ours.real, want.real, signed_zero) and same(ours.imag, want.imag, signed_zero)
    if ours.dtype.kind == "f":
        a, b = ours.astype(np.float64), want.astype(np.float64)
        both_nan = np.isnan(a) & np.isnan(b)
        equal = (a == b) & ((np.signbit(a) == np.signbit(b)) | (not signed_zero))
        return bool(np.all(both_nan | equal))
    return bool(np.array_equal(ours, want))


def _buffer_problems(t: hr.Tensor, info: dict[str, Any], b: dict[str, Any]) -> list[str]:
    role = b["role"]
    ours = {x["role"]: x for x in t._info["buffers"]}.get(role)
    if ours is None:
        return [f"{t.name}: no buffer {role}"]
    problems = []
    if (ours["offset"], ours["byte_size"]) != (b.get("file_offset", ours["offset"]), b.get("byte_size", ours["byte_size"])):
        problems.append(
            f"{t.name}.{role}: at {ours['offset']}, {ours['byte_size']} bytes; manifest {b.get('file_offset')}, {b.get('byte_size')}"
        )
    contents = b.get("contents")
    if contents is None:
        return problems
    array = t.buffers()[role].reshape(-1)
    kind = contents["as"]
    if "raw_bytes" in contents:
        got, want = array.view(np.uint8), np.array(contents["raw_bytes"], dtype=np.uint8)
    elif kind in ("float16", "bfloat16"):
        got, want = array.view(np.uint16), np.array(contents["bits"], dtype=np.uint16)
    elif array.dtype == np.uint8 and kind not in ("uint8",):
        # A type numpy lacks, without raw bytes in the manifest: compare the
        # decoded values of the logical view instead (_view_problems).
        return problems
    elif kind == "uint64":
        got, want = array.view(np.uint64), np.array(contents["values"], dtype=np.uint64)
    else:
        got, want = array, expected(contents["values"], array.dtype)
    if not same(got, want):
        problems.append(f"{t.name}.{role}: {got[:8]} != manifest {want[:8]}")
    return problems


def _view_problems(t: hr.Tensor, info: dict[str, Any]) -> list[str]:
    layout = info["layout"]
    if layout == "composite":
        # Both calls send the user to the members (to_scipy() once said
        # "read buffers()", which are empty for a head).
        for call in (t.numpy, t.to_scipy):
            with pytest.raises(TypeError, match="read its members"):
                call()
        return []
    if layout == "block_paged":
        return []
    if any(n is not None and n >= 2**63 for n in info["shape"]):
        # numpy's dimensions are int64: the package must say so, not crash.
        with pytest.raises(ValueError, match="does not fit"):
            t.to_scipy() if layout in ("csc", "csr", "coo", "csf") else t.numpy()
        return []
    quantized = info.get("quantization") is not None
    sparse = layout in ("csc", "csr", "coo", "csf")
    dense = t.to_scipy(dequantize=False).toarray() if sparse else t.numpy(dequantize=False)
    problems = []
    if "dense" in info and not same(dense, expected(info["dense"], dense.dtype), signed_zero=not sparse):
        problems.append(f"{t.name}: logical view differs from the manifest's dense")
    if quantized and "dequantized_dense" in info:
        real = t.to_scipy().toarray() if sparse else t.numpy()
        if not same(real, expected(info["dequantized_dense"], real.dtype), signed_zero=not sparse):
            problems.append(f"{t.name}: dequantized view differs from the manifest's")
    return problems


def tensor_problems(f: hr.File, info: dict[str, Any]) -> list[str]:
    """Everything the manifest says of one tensor that the package shows,
    compared."""
    t = f[info["name"]]
    problems = []
    facts = {
        "element_type": t.element_type,
        "layout": t.layout,
        "shape": list(t.shape),
        "nnz": t.nnz,
    }
    for key, ours in facts.items():
        want = info.get(key, info.get("layout_fields", {}).get(key)) if key == "nnz" else info.get(key)
        if ours != want:
            problems.append(f"{t.name}.{key}: {ours!r} != manifest {want!r}")
    if info.get("composite_members") is not None and t.members != info["composite_members"]:
        problems.append(f"{t.name}.members: {t.members} != {info['composite_members']}")
    stats = info.get("statistics")
    if stats is not None:
        ours = t.statistics or {}
        for key, value in ours.items():
            if _float(stats[key]) != value and not (value != value):
                problems.append(f"{t.name}.statistics.{key}: {value} != manifest {stats[key]}")
    if info.get("quantization") is not None:
        if (t.quantization or {}).get("scheme") != info["quantization"]["scheme"]:
            problems.append(f"{t.name}.quantization: {t.quantization} vs {info['quantization']}")
    for b in info["buffers"]:
        problems += _buffer_problems(t, info, b)
    return problems + _view_problems(t, info)


def file_problems(path: Path, entry: dict[str, Any]) -> list[str]:
    """A valid file, whole: container, KV metadata, file order, tensors."""
    problems = []
    with hr.open(path) as f:
        container = entry.get("container", {})
        if "container_version" in container and list(f.container["container_version"]) != container["container_version"]:
            problems.append(f"container_version {f.container['container_version']}")
        if "tensor_order_in_file" in entry and list(f) != entry["tensor_order_in_file"]:
            problems.append(f"order {list(f)} != manifest {entry['tensor_order_in_file']}")
        metadata = f.metadata
        kv = container.get("kv_entries", [])
        if list(metadata) != [e["key"] for e in kv]:
            problems.append(f"KV keys {list(metadata)}")
        for e in kv:
            problems += [f"KV {e['key']}: {p}" for p in _kv_problems(metadata.get(e["key"]), e)]
        for info in entry.get("tensors", []):
            problems += tensor_problems(f, info)
    return problems


def _kv_problems(ours: Any, e: dict[str, Any]) -> list[str]:
    kind, value = e["type"], e["value"]
    if kind == "bytes":
        return [] if ours == bytes(value) else [f"{ours!r} != {value}"]
    if kind == "array":
        element = e.get("element_type")
        if element == "bytes":
            want = [bytes(v) for v in value]
        elif element == "float64":
            want = [_float(v) for v in value]
        else:
            want = value
        return [] if _same_scalars(ours, want) else [f"{ours!r} != {want!r}"]
    want = _float(value) if kind == "float64" else value
    return [] if _same_scalars([ours], [want]) and type(ours) is _PY_TYPES[kind] else [f"{ours!r} != {want!r}"]


_PY_TYPES = {"string": str, "int64": int, "uint64": int, "float64": float, "bool": bool}


def _same_scalars(a: Any, b: Any) -> bool:
    if not isinstance(a, list) or len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(y, float):
            if not isinstance(x, float) or not (x == y and np.signbit(x) == np.signbit(y) or (x != x and y != y)):
                return False
        elif x != y or type(x) is not type(y):
            return False
    return True
