"""The package against files nobody on this team wrote (the interop corpus),
the bug-class cases, and the repository's fixtures: every valid file agrees
with its manifest element by element, every invalid one raises
``FormatError`` naming the rule."""

from __future__ import annotations

import json

import pytest

import hurray_reader as hr

from corpus import FIXTURES, OFFSET_CONVENTIONS, cites_section, corpus, file_problems, located, mentions, strict_verdict


def _check_manifest(folder, manifest, counts=True):
    problems = []
    verdicts = {"accept": 0, "reject": 0}
    for entry in manifest["files"]:
        name = entry["file"]
        path = folder / name
        e = strict_verdict(path)
        expect = entry["expect"]
        if expect == "accept":
            if e is not None:
                problems.append(f"{name}: valid file rejected: {e}")
                continue
            problems += [f"{name}: {p}" for p in file_problems(path, entry)]
        else:
            if e is None:
                problems.append(f"{name}: invalid file accepted ({entry.get('rule')})")
                continue
            problems += [f"{name}: {p}: {e}" for p in located(e)]
            want = OFFSET_CONVENTIONS.get(name, entry.get("offending_offset"))
            if want is not None and e.offset != want:
                problems.append(f"{name}: error offset {e.offset}, manifest {want}: {e}")
            if "spec" in entry and not cites_section(e, entry):
                problems.append(f"{name}: the error cites {e.rule!r}, not {entry['spec']!r}")
            tensor = entry.get("offending_tensor")
            if isinstance(tensor, dict):
                tensor = tensor.get("name")
            if tensor is not None and e.tensor not in (tensor, None):
                problems.append(f"{name}: error about tensor {e.tensor!r}, manifest {tensor!r}")
            for hint in entry.get("error_should_name", []):
                if not mentions(str(e), hint):
                    problems.append(f"{name}: the message does not mention {hint!r}: {e}")
        verdicts[expect] += 1
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems)
    return verdicts


def test_interop_corpus_agrees_with_the_manifest():
    folder, manifest = corpus("HURRAY_INTEROP_DIR")
    verdicts = _check_manifest(folder, manifest)
    assert verdicts == {"accept": manifest["valid_count"], "reject": manifest["invalid_count"]}
    assert verdicts["accept"] + verdicts["reject"] == 95


def test_bug_cases_agree_with_the_manifest():
    folder, manifest = corpus("HURRAY_CASES_DIR")
    verdicts = _check_manifest(folder, manifest)
    assert verdicts == {"accept": manifest["accept_count"], "reject": manifest["reject_count"]}


def test_bug_case_lookups():
    """The cases' ``lookups``: cells of small CSC tensors and their values."""
    folder, manifest = corpus("HURRAY_CASES_DIR")
    checked = 0
    for entry in manifest["files"]:
        if entry["expect"] != "accept":
            continue
        with hr.open(folder / entry["file"]) as f:
            for info in entry["tensors"]:
                for lookup in info.get("lookups", []):
                    if "value" not in lookup:
                        continue
                    row, col = lookup["row"], lookup["col"]
                    a = f[info["name"]].to_scipy()
                    assert a[row, col] == lookup["value"], (entry["file"], lookup)
                    checked += 1
    assert checked > 0


def test_repository_fixtures_agree_with_their_manifest():
    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    verdicts = _check_manifest(FIXTURES, manifest)
    assert verdicts["accept"] == manifest["file_count"]


def test_repository_invalid_fixtures_are_rejected():
    manifest = json.loads((FIXTURES / "invalid" / "manifest.json").read_text())
    problems = []
    for entry in manifest["files"]:
        e = strict_verdict(FIXTURES / "invalid" / entry["file"])
        if e is None:
            problems.append(f"{entry['file']}: accepted ({entry['rule']})")
            continue
        problems += [f"{entry['file']}: {p}: {e}" for p in located(e)]
        field = entry.get("expect_field")
        if field is not None and field not in str(e):
            problems.append(f"{entry['file']}: field {e.field!r}, expected {field!r}: {e}")
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems)
    assert len(manifest["files"]) == manifest["file_count"]


@pytest.mark.parametrize("permissive", [False, True])
def test_every_interop_file_opens_without_a_crash_in_both_modes(permissive):
    """Permissive mode may accept more; it never crashes and never raises
    anything but the documented exceptions."""
    folder, manifest = corpus("HURRAY_INTEROP_DIR")
    for entry in manifest["files"]:
        try:
            with hr.open(folder / entry["file"], permissive=permissive) as f:
                for name in f:
                    t = f[name]
                    repr(t)
        except (hr.FormatError, TypeError, ValueError):
            pass
