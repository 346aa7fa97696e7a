"""README's Python example runs as written and prints what its comment says."""

from __future__ import annotations

import contextlib
import io
import os
import re

from corpus import REPO


def test_readme_python_example():
    readme = (REPO / "README.md").read_text()
    section = readme.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 2  # this one, and the Dask one below
    code = blocks[0]
    assert len([line for line in code.splitlines() if line.strip()]) <= 5
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
    assert out.getvalue() == "(4, 5) 5 [3. 3. 9. 0.]\n"
    # The printed line is the one the comment promises.
    assert "# (4, 5) 5 [3. 3. 9. 0.]" in code


def test_readme_dask_example():
    """The Dask lines run too, on Dask's default (threaded) scheduler."""
    import pytest

    pytest.importorskip("dask.array", reason="the dask extra is not installed")
    pytest.importorskip("sparse")
    readme = (REPO / "README.md").read_text()
    section = readme.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    code = re.findall(r"```python\n(.*?)```", section, re.S)[1]
    assert "from_hurray" in code and "hd.matvec" in code
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
    assert out.getvalue() == "[3. 3. 9. 0.]\n" * 2
