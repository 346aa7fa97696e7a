"""No file, however broken, crashes the interpreter: every truncation and a
sample of byte mutations of the fixtures go through ``open``, ``validate``,
``buffers``, ``to_scipy`` and ``numpy`` in this process. Each either works
or raises one of the documented exceptions."""

from __future__ import annotations

import os
import random

import pytest

import hurray_reader as hr

from corpus import FIXTURES

DOCUMENTED = (hr.FormatError, TypeError, ValueError, KeyError, IndexError, MemoryError, OverflowError)
FILES = ["csc_worked_example.hry", "sparse_formats.hry", "dtypes.hry", "empty.hry"]


def exercise(path, mmap=True):
    """Everything a user might do with a file; returns what raised."""
    raised = []
    try:
        f = hr.open(path, mmap=mmap)
    except DOCUMENTED as e:
        return [type(e)]
    with f:
        for name in list(f):
            try:
                t = f[name]
                repr(t)
                t.buffers()
                if t.layout in ("csc", "csr", "coo"):
                    t.to_scipy()
                    t.to_scipy(validate=False)  # built, never used: scipy's kernels trust it
                elif t.layout not in ("csf", "composite", "block_paged"):
                    t.numpy()
            except DOCUMENTED as e:
                raised.append(type(e))
        try:
            f.validate()
        except DOCUMENTED as e:
            raised.append(type(e))
    return raised


@pytest.mark.parametrize("name", FILES)
def test_every_truncation(tmp_path, name):
    data = (FIXTURES / name).read_bytes()
    path = tmp_path / name
    path.write_bytes(data)
    outcomes = set()
    for length in reversed(range(len(data))):
        os.truncate(path, length)
        outcomes.update(exercise(path, mmap=length % 2 == 0))
    # Every truncation loses the trailer: the file must be refused at open.
    assert outcomes == {hr.FormatError}


@pytest.mark.parametrize("name", FILES)
def test_byte_mutations(tmp_path, name):
    data = (FIXTURES / name).read_bytes()
    path = tmp_path / name
    rng = random.Random(name)
    # The bytes that matter most (header, descriptors, index, trailer) are
    # few: mutate within them more often than within zero padding.
    interesting = [i for i, b in enumerate(data) if b != 0] + list(range(64)) + list(range(len(data) - 40, len(data)))
    kinds = set()
    for _ in range(4000):
        mutated = bytearray(data)
        for _ in range(rng.choice((1, 1, 2, 3))):
            i = rng.choice(interesting) if rng.random() < 0.8 else rng.randrange(len(data))
            mutated[i] = rng.choice((0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256), mutated[i] ^ (1 << rng.randrange(8))))
        path.write_bytes(mutated)
        kinds.update(exercise(path, mmap=rng.random() < 0.5))
    assert hr.FormatError in kinds
