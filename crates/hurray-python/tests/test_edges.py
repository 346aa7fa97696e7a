"""What a first user tried that the package got wrong once: each is kept
here with the right behaviour."""

from __future__ import annotations

import errno
import os
import struct
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import hurray_reader as hr

from corpus import FIXTURES

WORKED = FIXTURES / "csc_worked_example.hry"


def test_a_fifo_or_a_device_is_refused_at_once(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # In a child process, so that a hang fails the test instead of the run.
    code = f"import hurray_reader as hr\ntry:\n    hr.open({str(fifo)!r})\nexcept OSError as e:\n    print(e.errno, e)"
    for mmap in (True, False):
        run = subprocess.run([sys.executable, "-c", code.replace(")\nexcept", f", mmap={mmap})\nexcept")],
                             capture_output=True, text=True, timeout=60)
        assert run.stdout.startswith(f"{errno.EINVAL} "), run.stdout + run.stderr
        assert "not a regular file (a FIFO, socket or device)" in run.stdout
    with pytest.raises(OSError, match="not a regular file") as caught:
        hr.open("/dev/null", mmap=False)
    assert (caught.value.errno, caught.value.filename) == (errno.EINVAL, "/dev/null")
    assert str(caught.value) == "[Errno 22] not a regular file (a FIFO, socket or device): '/dev/null'"


def test_os_errors_carry_errno_and_filename(tmp_path):
    missing = tmp_path / "no" / "such.hry"
    with pytest.raises(FileNotFoundError) as caught:
        hr.open(missing)
    assert (caught.value.errno, caught.value.filename) == (errno.ENOENT, str(missing))
    with pytest.raises(IsADirectoryError) as caught:
        hr.open(tmp_path)
    assert caught.value.errno == errno.EISDIR
    with pytest.raises(FileNotFoundError) as caught:
        hr.save(missing, {"x": np.arange(3)})
    assert caught.value.errno == errno.ENOENT


def test_save_keeps_permissions_and_follows_links(tmp_path):
    umask = os.umask(0o022)
    try:
        new = tmp_path / "new.hry"
        hr.save(new, {"x": np.arange(3)})
        assert new.stat().st_mode & 0o777 == 0o644
        os.chmod(new, 0o640)
        hr.save(new, {"y": np.arange(2)})
        assert new.stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(umask)
    target, link = tmp_path / "a.hry", tmp_path / "link.hry"
    hr.save(target, {"x": np.arange(3)})
    link.symlink_to(target.name)
    hr.save(link, {"y": np.arange(2)})
    assert link.is_symlink()
    with hr.open(target) as f:
        assert list(f) == ["y"]


def test_save_checks_the_arrays_not_scipys_flags(tmp_path):
    # Unsorted indices with a stale "canonical" flag: sorted on a copy.
    m = sp.csr_array((np.array([1.0, 2.0, 3.0]), np.array([2, 0, 1]), np.array([0, 3])), shape=(1, 3))
    m.has_canonical_format = True
    hr.save(tmp_path / "m.hry", {"m": m})
    with hr.open(tmp_path / "m.hry") as f:
        assert f["m"].col_indices.tolist() == [0, 1, 2]
        assert f["m"].to_scipy().toarray().tolist() == [[2.0, 3.0, 1.0]]
    bad = sp.csr_array((np.array([1.0]), np.array([-1]), np.array([0, 1])), shape=(1, 3))
    with pytest.raises(ValueError, match="tensor 'bad': an index of csr indices is outside 0..3"):
        hr.save(tmp_path / "bad.hry", {"bad": bad})
    assert not (tmp_path / "bad.hry").exists()
    # A 1-D sparse array is written as a 1-D COO.
    v = sp.csr_array(np.array([0, 1.0, 0, 2.0]))
    assert v.ndim == 1
    hr.save(tmp_path / "v.hry", {"v": v})
    with hr.open(tmp_path / "v.hry") as f:
        assert (f["v"].layout, f["v"].shape) == ("coo", (4,))
        assert f["v"].to_scipy().toarray().tolist() == [0, 1.0, 0, 2.0]
    with pytest.raises(TypeError, match="masked array"):
        hr.save(tmp_path / "x.hry", {"x": np.ma.masked_array([1, 2], mask=[0, 1])})
    with pytest.raises(TypeError, match="metadata must be a mapping"):
        hr.save(tmp_path / "x.hry", {}, metadata=[("a", 1)])


def test_names_that_are_not_utf8(tmp_path):
    with pytest.raises(ValueError, match="a tensor name must be UTF-8 text"):
        hr.save(tmp_path / "s.hry", {"\ud800": np.arange(2)})
    with pytest.raises(ValueError, match="a KV key must be UTF-8 text"):
        hr.save(tmp_path / "s.hry", {"x": np.arange(2)}, metadata={"\udfff": 1})
    with hr.open(WORKED) as f:
        assert "\ud800" not in f
        with pytest.raises(KeyError):
            f["\ud800"]


def test_threads_argument():
    assert hr.open(WORKED, threads=np.int64(2)).container["threads"] == 2
    assert hr.open(WORKED, threads=2**70).container["threads"] == 64
    with pytest.raises(TypeError, match="not bool"):
        hr.open(WORKED, threads=True)


def test_format_error_attributes_default_to_none():
    e = hr.FormatError("made by hand")
    assert (e.tensor, e.field, e.offset, e.rule) == (None, None, None, None)
    assert isinstance(e, ValueError)


def test_a_closed_file_has_no_length():
    f = hr.open(WORKED)
    f.close()
    with pytest.raises(ValueError, match="closed file"):
        len(f)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="no /proc")
def test_an_unmappable_file_names_its_errno_and_filename():
    """A /proc file cannot be mapped (ENODEV): the OSError had errno and
    filename None (the reader's error keeps the message, with "(os error
    19)" in it, and the kind, which has no usual errno)."""
    with pytest.raises(OSError, match="cannot map") as caught:
        hr.open("/proc/self/status")
    assert (caught.value.errno, caught.value.filename) == (errno.ENODEV, "/proc/self/status")


@pytest.mark.skipif(not os.path.exists("/proc/version"), reason="no /proc")
def test_mmap_false_reads_a_file_that_reports_size_zero_to_its_end():
    """/proc/version reports size 0 but has content: mmap=False read it
    as empty ("file size 0"); now it reads it, and its first bytes are not
    a Hurray file's."""
    with open("/proc/version", "rb") as raw:
        content = raw.read()
    assert os.stat("/proc/version").st_size == 0 and len(content) > 0
    with pytest.raises(hr.FormatError) as caught:
        hr.open("/proc/version", mmap=False)
    assert len(content) >= 104  # header + trailer: the magic is what fails
    assert (caught.value.field, caught.value.offset) == ("magic", 0)
    assert "expected HRRYFILE" in str(caught.value)


def test_mmap_false_rejects_a_large_non_hurray_file_on_its_magic(tmp_path):
    """mmap=False read the whole file before its magic was checked: a 2 GB
    file that is not a Hurray file took seconds and 2 GB of memory to
    reject. Now its first 104 bytes decide, as for the mapped file, with
    the same error (the Rust tests of aligned.rs show with a reader that
    counts that no more is read)."""
    path = tmp_path / "zeros.hry"
    with open(path, "wb") as f:
        f.truncate(1 << 30)  # 1 GiB of zeros, sparse: no disk used
    caught = {}
    for mmap in (True, False):
        with pytest.raises(hr.FormatError) as e:
            hr.open(path, mmap=mmap)
        caught[mmap] = e.value
    read, mapped = caught[False], caught[True]
    assert (read.field, read.offset, read.rule, read.tensor) == ("magic", 0, "file-format.md § File Header", None)
    assert str(read) == str(mapped)
    assert str(read).startswith('magic at offset 0: expected HRRYFILE, found "' + "\\x00" * 8 + '"')


def test_mmap_false_opens_every_fixture_as_the_mapping_does():
    fixtures = sorted(FIXTURES.glob("*.hry"))
    assert len(fixtures) >= 4
    for path in fixtures:
        with hr.open(path) as mapped, hr.open(path, mmap=False) as read:
            assert (mapped.container["mapped"], read.container["mapped"]) == (True, False)
            same = lambda f: ({k: v for k, v in f.container.items() if k != "mapped"}, f.metadata, list(f))
            assert same(read) == same(mapped), path.name
            for name in mapped:
                assert repr(read[name]) == repr(mapped[name]), (path.name, name)


def test_validate_returns_and_issues_the_readers_warnings(tmp_path):
    """The interop file's statistics say sparsity_ratio 0.75 (nnz 5 of 4 x
    5); changed to 0.5, the reader accepts the file and warns (advisory),
    as hurray-inspect --validate prints WARNING: validate() dropped it."""
    from corpus import corpus

    folder, _ = corpus("HURRAY_INTEROP_DIR")
    data = bytearray((folder / "csc_statistics_nnz_sparsity.hry").read_bytes())
    assert data.count(struct.pack("<d", 0.75)) == 1
    at = data.find(struct.pack("<d", 0.75))
    clean = tmp_path / "clean.hry"
    clean.write_bytes(data)
    data[at : at + 8] = struct.pack("<d", 0.5)
    warned = tmp_path / "warned.hry"
    warned.write_bytes(data)
    with hr.open(clean) as f:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert f.validate() == []
        assert f["csc_with_stats"].warnings() == []
    line = "statistics sparsity_ratio is 0.5, but nnz gives 0.75 (advisory only, metadata.md § Statistics Section)"
    with hr.open(warned) as f:
        with pytest.warns(hr.FormatWarning) as issued:
            assert f.validate() == [f"tensor 'csc_with_stats': {line}"]
        assert [str(w.message) for w in issued] == [f"tensor 'csc_with_stats': {line}"]
        t = f["csc_with_stats"]
        assert t.warnings() == [line]
        with pytest.warns(hr.FormatWarning, match="sparsity_ratio is 0.5"):
            assert t.validate() == [line]
        assert t.statistics["sparsity_ratio"] == 0.5
    assert issubclass(hr.FormatWarning, UserWarning)


def test_validate_names_the_tensors_it_could_not_check():
    """A permissive open accepts an unknown layout tag and cannot check
    that tensor's data: validate() said nothing of it (an empty list, as
    for a clean file), where hurray-inspect --validate prints SKIPPED. A
    composite head owns no data: nothing to say."""
    from corpus import corpus

    folder, _ = corpus("HURRAY_INTEROP_DIR")
    with hr.open(folder / "invalid_layout_tag_unassigned_0x0c.hry", permissive=True) as f:
        with pytest.warns(hr.FormatWarning, match="data not checked") as issued:
            found = f.validate()
        assert found == [
            "tensor 'tensor_b': data not checked: its layout tag is not recognised (accepted in permissive "
            "mode); its data must not be interpreted (memory-layout.md § Layout Taxonomy)"
        ]
        assert [str(w.message) for w in issued] == found
        # The tensor's own validate() says it too (it returned []).
        with pytest.warns(hr.FormatWarning, match="data not checked"):
            assert f["tensor_b"].validate() == [found[0].split(": ", 1)[1]]
        # Nor is there a scipy form (the message pointed to numpy(), which refuses too).
        with pytest.raises(TypeError) as caught:
            f["tensor_b"].to_scipy()
        assert str(caught.value) == "tensor 'tensor_b' (unknown) has no scipy form: " + found[0].split(": ", 2)[2]
    # The same for a known layout of an unknown type (it said "use numpy()").
    with hr.open(folder / "invalid_type_tag_reserved_0x47.hry", permissive=True) as f:
        with pytest.raises(TypeError, match=r"\(row_major\) has no scipy form: its type tag is not recognised"):
            f["tensor_b"].to_scipy()
    with hr.open(folder / "composite_overlay.hry") as f:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert f["fixed"].layout == "composite" and f.validate() == []


def test_flags_take_true_or_false_only(monkeypatch):
    # permissive="no" once opened permissively, validate=None skipped the
    # scan: a flag that switches a check off is not read by truthiness.
    for bad in ("no", None, 0, [True]):
        with pytest.raises(TypeError, match="permissive must be True or False"):
            hr.open(WORKED, permissive=bad)
        with pytest.raises(TypeError, match="mmap must be True or False"):
            hr.open(WORKED, mmap=bad)
    with hr.open(WORKED, permissive=np.bool_(False)) as f:
        assert f.container["strict"] is True
        t = f["A"]
        for name in ("validate", "dequantize", "copy"):
            with pytest.raises(TypeError, match=f"{name} must be True or False, not NoneType"):
                t.to_scipy(**{name: None})
        assert t.to_scipy(validate=np.True_).nnz == 5


def test_dask_without_dask_says_what_to_install(monkeypatch):
    import hurray_reader.dask as hd

    monkeypatch.setitem(sys.modules, "dask.array", None)
    with pytest.raises(ModuleNotFoundError, match=r'the package with its "dask" extra'):
        hd.from_hurray(WORKED, "A", chunk_cols=2)


def test_a_forked_child_checks_on_threads_of_its_own(tmp_path):
    # The scans' threads (a pool, started on first use) do not survive
    # `fork`: a child that used its parent's pool would wait forever for
    # them. It starts its own. In a child process, so that a hang fails
    # the test instead of the run.
    path = tmp_path / "big.hry"
    m = sp.random(2048, 2048, density=0.25, format="csc", dtype=np.float32, rng=np.random.default_rng(3))
    hr.save(path, {"A": m})
    code = (
        "import os, signal\n"
        "import hurray_reader as hr\n"
        f"path = {str(path)!r}\n"
        "assert hr.open(path, threads=2).validate() == []\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    signal.alarm(30)  # a hung child ends, failing the test\n"
        "    problems = hr.open(path, threads=2).validate()\n"
        "    os._exit(0 if problems == [] else 3)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "print('child', os.waitstatus_to_exitcode(status))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["child", "0"]


def test_pickling_says_what_to_send_instead():
    """pickle.dumps of a Tensor said "cannot pickle 'hurray_reader._native.File'"."""
    import copy
    import pickle

    with hr.open(WORKED) as f:
        with pytest.raises(TypeError, match="a File is a file open in this process and cannot be pickled"):
            pickle.dumps(f)
        # A Tensor copies: another view of the same file.
        for copied in (copy.copy(f["A"].T), copy.deepcopy(f["A"].T)):
            assert copied.shape == (5, 4) and copied.values.tolist() == [1.0, 4.0, 3.0, 2.0, 5.0]
        for t in (f["A"], f["A"].T):
            with pytest.raises(TypeError, match="tensor 'A' is a view of a file open in this process"):
                pickle.dumps(t)
        assert pickle.loads(pickle.dumps(f["A"].values)).tolist() == [1.0, 4.0, 3.0, 2.0, 5.0]
