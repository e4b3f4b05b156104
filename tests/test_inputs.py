"""Inputs a new user gives by mistake: each is refused with the bad value named, never a traceback or nonsense.

The library raises AnalysisError / ConfigError (tested here on ``measured``, ``baseline``, ``summarize``); the CLI
turns them into exit status 1 and one line on stderr (tests/test_cli_analyze.py)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from flashscale.analysis.baseline_and_tax import baseline, measured, summarize
from flashscale.errors import AnalysisError, ConfigError

MIB = 1048576
KIB4 = 4096


def _point(layout, devices, rw, bs, numjobs, bws, start=1):
    return [dict(layout=layout, devices=devices, rw=rw, bs=bs, numjobs=numjobs, iodepth=1, rep=rep, warmup=False,
                 bw_bytes=float(bw)) for rep, bw in enumerate(bws, start=start)]


@pytest.fixture
def mixed() -> pd.DataFrame:
    """Sequential rows at 1 MiB only, random rows at 4 KiB only, as a real study sweeps them."""
    rows = _point("single", 1, "read", MIB, 1, [100, 110])  # baseline read: 105
    rows += _point("single", 1, "randread", KIB4, 1, [10, 12])  # baseline randread: 11
    rows += _point("single", 1, "randread", KIB4, 2, [8, 8])
    rows += _point("jbod", 4, "read", MIB, 4, [400, 440])  # 420 = 4 x 105: efficiency 1
    rows += _point("jbod", 4, "randread", KIB4, 4, [33, 33])  # 33 / (4 x 11) = 0.75
    rows += _point("raid0", 4, "randread", KIB4, 4, [22, 22])  # tax 1 - 22 / 33 = 1/3
    return pd.DataFrame(rows)


@pytest.mark.parametrize("value, word", [(np.inf, "inf"), (0.0, "0.0"), (-5.0, "-5.0"), ("fast", "'fast'"),
                                         (np.nan, "nan")])
def test_a_rate_that_is_not_a_positive_finite_number_is_refused_naming_the_row(mixed, value, word):
    frame = mixed.astype({"bw_bytes": object})
    frame.loc[3, "bw_bytes"] = value
    with pytest.raises(AnalysisError, match=rf"\({word} at row 3 \(layout='single', devices=1, rw='randread'"):
        measured(frame)


def test_zero_is_refused_because_it_measured_nothing(mixed):
    with pytest.raises(AnalysisError, match="moved no data measured nothing.*100% tax"):
        measured(mixed.assign(bw_bytes=mixed["bw_bytes"].where(mixed.index != 0, 0.0)))


def test_a_repeated_point_and_rep_is_refused_not_counted_as_another_repetition(mixed):
    copy = pd.concat([mixed, mixed.iloc[[4]]], ignore_index=True)
    with pytest.raises(AnalysisError, match=r"row 12 \(layout='single', devices=1, rw='randread', bs=4096, "
                                            r"numjobs=2, iodepth=1, rep=1\)"):
        measured(copy)


def test_rows_that_differ_in_variant_or_nrfiles_are_different_points(mixed):
    both = pd.concat([mixed.assign(variant="n-to-n"), mixed.assign(variant="n-to-1")], ignore_index=True)
    assert len(measured(both)) == 2 * len(mixed)
    with pytest.raises(AnalysisError, match="repeating a point and rep"):
        measured(pd.concat([mixed, mixed], ignore_index=True))


@pytest.mark.parametrize("cell", [None, np.nan, "", "maybe"])
def test_a_blank_or_unreadable_warmup_is_refused_naming_the_row(mixed, cell):
    frame = mixed.astype({"warmup": object})
    frame.loc[2, "warmup"] = cell
    with pytest.raises(AnalysisError, match=r"warmup is neither true nor false .* at row 2 \(layout='single'"):
        measured(frame)


def test_warmup_words_of_a_csv_are_read(mixed):
    words = ["no", "0", "False", "FALSE", "0.0", "yes", "1", "true"]
    frame = mixed.iloc[:8].assign(warmup=words)
    assert len(measured(frame)) == 5


@pytest.mark.parametrize("column, value", [("devices", 1.5), ("bs", None), ("numjobs", 0), ("iodepth", "deep")])
def test_a_count_that_is_not_a_whole_number_above_zero_is_refused(mixed, column, value):
    frame = mixed.astype({column: object})
    frame.loc[1, column] = value
    with pytest.raises(AnalysisError, match=rf"{column} is not a whole number above 0 \({value!r} at row 1\)"):
        measured(frame)


def test_baseline_bs_per_rw_lets_random_and_sequential_rows_have_their_own(mixed):
    base = baseline(mixed, {"read": MIB, "randread": KIB4}).set_index("rw")
    assert base.loc["read", "baseline_bw_bytes"] == 105 and base.loc["randread", "baseline_bw_bytes"] == 11
    own = baseline(mixed, {"read": MIB}).set_index("rw")  # randread not named: its own best block size
    assert own.loc["randread", "baseline_bs"] == KIB4 and own.loc["randread", "baseline_numjobs"] == 1
    summary = summarize(mixed, "jbod", {"read": MIB}).set_index(["layout", "rw"])
    assert summary.loc[("jbod", "randread"), "efficiency"] == pytest.approx(33 / 44)
    assert summary.loc[("jbod", "read"), "efficiency"] == pytest.approx(1.0)


@pytest.mark.parametrize("bad, error, word", [
    ({"randwrite": KIB4}, AnalysisError, "names rw 'randwrite' that the results do not have"),
    ({"read": 0}, ConfigError, "baseline_bs 0 for rw 'read'"),
    (1.5, ConfigError, "baseline_bs 1.5"),
    (True, ConfigError, "baseline_bs True"),
])
def test_a_bad_baseline_bs_is_named(mixed, bad, error, word):
    with pytest.raises(error, match=word):
        baseline(mixed, bad)


def test_tax_needs_no_baseline_and_the_missing_one_is_noted(mixed):
    summary = summarize(mixed, "jbod", MIB).set_index(["layout", "rw"])
    raid = summary.loc[("raid0", "randread")]
    assert raid["tax"] == pytest.approx(1 / 3) and np.isnan(raid["efficiency"])
    assert raid["efficiency_note"] == "no single-device (devices == 1) randread rows at bs 1048576"
    assert summary.loc[("jbod", "read"), "efficiency_note"] == ""
    with pytest.raises(AnalysisError, match=r"missing baseline: .* at bs 1048576 for rw 'randread'"):
        baseline(mixed, MIB)


def test_by_bs_measures_each_bs_against_the_single_device_at_that_bs():
    rows = _point("single", 1, "read", MIB, 1, [100]) + _point("single", 1, "read", KIB4, 1, [10])
    rows += _point("jbod", 2, "read", MIB, 2, [200]) + _point("jbod", 2, "read", KIB4, 2, [15])
    summary = summarize(pd.DataFrame(rows), "jbod", by="bs").set_index(["layout", "bs"])
    assert summary.loc[("jbod", KIB4), "efficiency"] == pytest.approx(15 / 20)  # not 15 / 200
    assert summary.loc[("jbod", KIB4), "baseline_bs"] == KIB4
    assert summary.loc[("jbod", MIB), "efficiency"] == pytest.approx(1.0)


def test_by_given_twice_is_refused(mixed):
    with pytest.raises(AnalysisError, match="'bs' given more than once"):
        summarize(mixed, "jbod", by=["bs", "bs"])


CELLS = st.one_of(st.none(), st.just(""), st.just(np.nan), st.just(np.inf), st.just(-np.inf), st.text(max_size=4),
                  st.integers(-3, 3), st.floats(allow_nan=True, allow_infinity=True), st.booleans())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(column=st.sampled_from(["layout", "devices", "rw", "bs", "numjobs", "iodepth", "rep", "warmup", "bw_bytes"]),
       row=st.integers(0, 11), cell=CELLS)
def test_any_bad_cell_gives_a_named_error_or_a_table_never_a_traceback(mixed, column, row, cell):
    frame = mixed.astype({column: object})
    frame.loc[row, column] = cell
    try:
        summary = summarize(frame, "jbod", {"read": MIB, "randread": KIB4})
    except AnalysisError as exc:
        assert "row" in str(exc) or "reference layout" in str(exc) or "baseline" in str(exc), str(exc)
    else:
        values = summary[["best_bw_bytes", "tax", "efficiency"]].to_numpy(float)
        assert not np.isinf(values).any() and (summary["best_bw_bytes"] > 0).all()
