"""Figures show the spread and n of what they measure: their matplotlib artists checked against the data."""
from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.container import BarContainer, ErrorbarContainer

from flashscale.analysis import core, stats
from flashscale.publish import plots

matplotlib.use("Agg")
MIB = 1048576
MB = 1e6


def _rows(layout, devices, numjobs, bws, bs=MIB, iodepth=1, scale=1.0):
    return [dict(layout=layout, devices=devices, rw="read", bs=bs, numjobs=numjobs, iodepth=iodepth, rep=rep,
                 warmup=False, bw_bytes=bw * MB * scale) for rep, bw in enumerate(bws, start=1)]


@pytest.fixture
def table() -> pd.DataFrame:
    rows = _rows("single", 1, 1, [100, 110]) + _rows("single", 1, 2, [120, 124])  # baseline 122 (nj 2)
    rows += _rows("jbod", 2, 2, [200, 220]) + _rows("jbod", 2, 4, [230, 250, 240])
    rows += _rows("jbod", 4, 4, [400, 420]) + _rows("jbod", 4, 8, [460, 480])
    rows += _rows("jbod", 4, 8, [900, 900], iodepth=8)  # the better iodepth at nj 8: it, not an average, is drawn
    rows += _rows("jbod", 4, 8, [5, 5], bs=4096)  # another bs: never averaged in
    return pd.DataFrame(rows)


def _bars_of(container: ErrorbarContainer) -> list[tuple[float, float, float]]:
    """(x, low, high) of each error bar of an errorbar container."""
    segments = container.lines[2][0].get_segments()
    return [(seg[0][0], min(seg[0][1], seg[1][1]), max(seg[0][1], seg[1][1])) for seg in segments]


def _container(axis, label: str) -> ErrorbarContainer:
    found = [c for c in axis.containers if isinstance(c, ErrorbarContainer) and c.get_label() == label]
    assert len(found) == 1, [c.get_label() for c in axis.containers]
    return found[0]


def test_throughput_vs_numjobs_draws_each_device_count_with_its_spread_and_own_ideal(table):
    base = core.baseline(table)
    axis = plots.throughput_vs_numjobs(table, base).axes[0]
    two = _container(axis, "jbod x2 (n=2-3)")
    assert list(two.lines[0].get_xdata()) == [2, 4]
    assert list(two.lines[0].get_ydata()) == pytest.approx([210, 240])  # means of [200, 220] and [230, 250, 240]
    assert _bars_of(two) == [(2, pytest.approx(200), pytest.approx(220)), (4, pytest.approx(230), pytest.approx(250))]
    four = _container(axis, "jbod x4 (n=2)")
    assert list(four.lines[0].get_ydata()) == pytest.approx([410, 900])  # qd 8 wins at nj 8; 4 KiB left out
    ideals = sorted(line.get_ydata()[0] for line in axis.get_lines() if line.get_linestyle() == ":")
    assert ideals == pytest.approx([122, 2 * 122, 4 * 122])  # each device count its own N x baseline
    assert axis.get_title() == f"read, bs {MIB} B"


def test_numjobs_curves_take_the_best_iodepth_at_the_baseline_bs(table):
    curves = plots.numjobs_curves(table).set_index(["layout", "devices", "numjobs"])
    assert curves.loc[("jbod", 4, 8), "iodepth"] == 8 and curves.loc[("jbod", 4, 8), "n"] == 2
    assert set(curves["bs"]) == {MIB}


def test_throughput_vs_devices_bars_span_the_repetitions_of_each_best_point(table):
    best = core.best_by_devices(table, core.baseline(table))
    axis = plots.throughput_vs_devices(best, table).axes[0]
    bars = _container(axis, "read (n=2-3)")  # best points: nj 2 (2 reps), nj 4 (3), nj 8 at qd 8 (2)
    assert _bars_of(bars) == [(1, pytest.approx(120), pytest.approx(124)), (2, pytest.approx(230),
                                                                            pytest.approx(250)),
                              (4, pytest.approx(900), pytest.approx(900))]


@pytest.mark.parametrize("figure, value, scale", [("efficiency", "efficiency", 1.0), ("tax", "tax", 100.0)])
def test_efficiency_and_tax_bars_carry_the_interval_of_the_summary(table, figure, value, scale):
    more = pd.DataFrame(_rows("raid0", 2, 4, [200, 230, 215]))
    summary = stats.summary_intervals(pd.concat([table, more], ignore_index=True), "jbod")
    fig = plots.efficiency(summary) if figure == "efficiency" else plots.tax(summary, "jbod")
    axis = fig.axes[0]
    bars = [c for c in axis.containers if isinstance(c, BarContainer)]
    assert len(bars) == 1 and bars[0].errorbar is not None
    shown = summary if figure == "efficiency" else summary[(summary["layout"] != "jbod") & summary["tax"].notna()]
    segments = bars[0].errorbar.lines[2][0].get_segments()
    lows = [min(s[0][1], s[1][1]) for s in segments]
    highs = [max(s[0][1], s[1][1]) for s in segments]
    heights = shown[value] * scale
    assert lows == pytest.approx(list(np.minimum(shown[f"{value}_lo"] * scale, heights)), nan_ok=True)
    assert highs == pytest.approx(list(np.maximum(shown[f"{value}_hi"] * scale, heights)), nan_ok=True)
    assert "(n=" in axis.get_legend().get_texts()[0].get_text()
    assert "bars: interval" in axis.get_legend().get_title().get_text()


def test_a_summary_without_intervals_says_so(table):
    axis = plots.efficiency(core.summarize(table, "jbod")).axes[0]
    assert "no interval given" in axis.get_legend().get_title().get_text()
