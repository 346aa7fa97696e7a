"""The verdicts of products.py (issue #34): what counts as met, bounded
or not met; and the other peer scripts run. Run by test.sh beside the
package's tests."""

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))

import products  # noqa: E402


def medians(**ms):
    """A shape's medians (seconds): every routine 1.0 unless given."""
    names = products.OURS + products.PEERS + products.BOUNDS
    return {"median_s": {n: ms.get(n, 1.0) for n in names}}


def test_met_when_the_fastest_peer_takes_the_factor_of_ours():
    r = medians(ax1=1.0, scipy_ax=1.3, mkl_ax1=1.25)
    v = products.verdicts(r)["ax1"]
    assert (round(v["ratio"], 2), v["verdict"]) == (1.25, "met")


def test_a_xs_bound_is_the_faster_of_the_stores_and_the_gather():
    # Peer 1.1 against ours 1.0: not met at 1.2. The stores (1.2) leave
    # the peer 0.92x: below 1.2, but slower than ours, so they bound
    # nothing; the gather (0.95, the faster) leaves 1.16x.
    r = medians(ax1=1.0, scipy_ax=1.1, mkl_ax1=1.1, bound_ax1=1.2, bound_gather1=0.95)
    v = products.verdicts(r)["ax1"]
    assert (v["bound"], round(v["peer_over_bound"], 2), v["verdict"]) == ("bound_gather1", 1.16, "bounded")
    lean = products.verdicts(dict(r, median_s=dict(r["median_s"], bound_dot1=0.5)), lean=True)["ax1"]
    assert (lean["bound"], lean["verdict"]) == ("bound_dot1", "not met")


def test_a_bound_slower_than_ours_bounds_nothing():
    # More than 5% slower than ours: no bound; up to 5%, the rounds' noise.
    r = medians(atx1=1.0, scipy_atx=1.05, mkl_atx1=1.05, bound_atx1=1.06)
    v = products.verdicts(r)["atx1"]
    assert (round(v["peer_over_bound"], 2), v["verdict"]) == (0.99, "not met")
    r["median_s"]["bound_atx1"] = 1.04
    assert products.verdicts(r)["atx1"]["verdict"] == "bounded"


def test_a_bound_slower_than_the_peer_bounds_nothing():
    # MKL's Aᵀ·x on the Intel host of run AE: faster than the bound, which
    # therefore does not bound the machine. Up to 5% slower, the noise.
    r = medians(atx1=1.0, scipy_atx=0.9, mkl_atx1=0.8, bound_atx1=0.9)
    v = products.verdicts(r)["atx1"]
    assert (round(v["ratio"], 2), round(v["peer_over_bound"], 2), v["verdict"]) == (0.8, 0.89, "not met")
    r["median_s"]["bound_atx1"] = 0.84
    assert products.verdicts(r)["atx1"]["verdict"] == "bounded"


def test_runs_without_the_gather_bound_are_judged_by_the_stores():
    r = medians(ax2=1.0, mkl_ax2=1.0, bound_ax2=0.95)
    del r["median_s"]["bound_gather2"]
    v = products.verdicts(r)["ax2"]
    assert (v["bound"], v["verdict"]) == ("bound_ax2", "bounded")


def test_the_stores_bound_when_they_are_the_faster():
    r = medians(ax1=1.0, scipy_ax=1.1, mkl_ax1=1.1, bound_ax1=0.95, bound_gather1=0.99)
    v = products.verdicts(r)["ax1"]
    assert (v["bound"], v["verdict"]) == ("bound_ax1", "bounded")


def test_a_bound_exactly_five_percent_slower_still_bounds():
    r = medians(atx2=1.0, mkl_atx2=1.0, bound_atx2=1.05)
    assert products.verdicts(r)["atx2"]["verdict"] == "bounded"
    r["median_s"]["bound_atx2"] = 1.051
    assert products.verdicts(r)["atx2"]["verdict"] == "not met"


def test_the_fastest_rounds_are_judged_alike():
    r = medians(atx1=1.0, scipy_atx=1.2, mkl_atx1=1.3)
    r["min_s"] = dict(r["median_s"], atx1=1.2, bound_atx1=1.15)
    assert products.verdicts(r)["atx1"]["verdict"] == "met"
    assert products.verdicts(r, "min_s")["atx1"]["verdict"] == "bounded"


def test_no_bound_at_all_is_a_clear_error():
    import pytest

    r = medians()
    del r["median_s"]["bound_atx1"]
    with pytest.raises(SystemExit, match="no bound of atx1"):
        products.verdicts(r)


def test_matvec_script_times_a_file(monkeypatch, capsys):
    """benches/peers/matvec.py runs (on the worked example, one round):
    its header and one row, the ratios scipy's time over ours."""
    import matvec

    fixture = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "csc_worked_example.hry"
    monkeypatch.setattr(sys, "argv", ["matvec.py", str(fixture), "--rounds", "1"])
    matvec.main()
    header, row = capsys.readouterr().out.splitlines()
    assert header.split()[:4] == ["file", "ours", "A·x", "1t/2t"]
    cells = row.replace("/", " ").split()
    assert cells[0] == "csc_worked_example.hry" and len(cells) == 11
    assert all(float(c) >= 0 for c in cells[1:])  # tiny times may print as 0.0


def test_dask_matvec_script_times_a_file(monkeypatch, capsys):
    """benches/peers/dask_matvec.py runs (on the worked example in two
    blocks, one round, the threaded scheduler): its header and one row."""
    pytest.importorskip("dask.array", reason="the dask extra is not installed")
    pytest.importorskip("sparse")
    import dask_matvec

    fixture = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "csc_worked_example.hry"
    monkeypatch.setattr(sys, "argv", ["dask_matvec.py", str(fixture), "--rounds", "1", "--chunk-cols", "3"])
    dask_matvec.main()
    header, row = capsys.readouterr().out.splitlines()
    assert header.split()[:3] == ["file", "blocks", "ours"]
    cells = row.split()
    assert cells[:2] == ["csc_worked_example.hry", "2"] and len(cells) == 8
    assert all(float(c) >= 0 for c in cells[2:])
