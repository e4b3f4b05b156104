"""Figures show the spread and n of what they measure: their matplotlib artists checked against the data."""
from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.container import BarContainer, ErrorbarContainer
from scipy import stats as sps

from flashscale.analysis import baseline_and_tax, stats
from flashscale.publish import plots, rate_plots

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


def interval(runs: list[float], scale: float = 1.0) -> tuple[float, float]:
    """The 95% interval of the runs' mean the tables give (the log scale's, ``analysis.stats``): mean x exp(-/+ t(0.975,
    n - 1) x cv / sqrt(n)), worked here from its formula, divided by ``scale``."""
    runs = np.asarray(runs, dtype=float)
    half = sps.t.ppf(0.975, runs.size - 1) * runs.std(ddof=1) / runs.mean() / np.sqrt(runs.size)
    return runs.mean() * np.exp(-half) / scale, runs.mean() * np.exp(half) / scale


def t_interval(runs: list[float], scale: float = 1.0) -> tuple:
    low, high = interval(runs, scale)
    return pytest.approx(low), pytest.approx(high)


def test_the_formula_is_the_analysis_s_interval():
    """``interval`` is ``stats.interval_t``, the tables' own: the figures below are held to the formula."""
    for runs in ([120, 124], [230, 250, 240], [100, 120, 110], [1.0, 3.0, 2.0, 2.5]):
        assert stats.interval_t(np.array(runs, float)) == pytest.approx(interval(runs), rel=1e-9)


def test_throughput_vs_numjobs_draws_each_device_count_with_its_spread_and_own_ideal(table):
    base = baseline_and_tax.baseline(table)
    axis = plots.throughput_vs_numjobs(table, base).axes[0]
    two = _container(axis, "jbod x2 (n=2-3)")
    assert list(two.lines[0].get_xdata()) == [2, 4]
    assert list(two.lines[0].get_ydata()) == pytest.approx([210, 240])  # means of [200, 220] and [230, 250, 240]
    assert _bars_of(two) == [(2, *t_interval([200, 220])), (4, *t_interval([230, 250, 240]))]  # as the tables say
    four = _container(axis, "jbod x4 (n=2)")
    assert list(four.lines[0].get_ydata()) == pytest.approx([410, 900])  # qd 8 wins at nj 8; 4 KiB left out
    ideals = sorted(line.get_ydata()[0] for line in axis.get_lines() if line.get_linestyle() == ":")
    assert ideals == pytest.approx([122, 2 * 122, 4 * 122])  # each device count its own N x baseline
    assert axis.get_title() == "read, bs 1 MiB"  # as the tables say a size


def test_numjobs_curves_take_the_best_iodepth_at_the_baseline_bs(table):
    curves = plots.numjobs_curves(table).set_index(["layout", "devices", "numjobs"])
    assert curves.loc[("jbod", 4, 8), "iodepth"] == 8 and curves.loc[("jbod", 4, 8), "n"] == 2
    assert set(curves["bs"]) == {MIB}


def test_throughput_vs_devices_bars_span_the_repetitions_of_each_best_point(table):
    best = baseline_and_tax.best_by_devices(table, baseline_and_tax.baseline(table))
    axis = plots.throughput_vs_devices(best, table).axes[0]
    bars = _container(axis, "read (n=2-3)")  # best points: nj 2 (2 reps), nj 4 (3), nj 8 at qd 8 (2)
    assert _bars_of(bars) == [(1, *t_interval([120, 124])), (2, *t_interval([230, 250, 240])),
                              (4, pytest.approx(900), pytest.approx(900))]  # two runs of 900: no spread


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
    assert "(n=" in _legend(fig).get_texts()[0].get_text()
    assert "bars: interval" in _legend(fig).get_title().get_text()


def _legend(fig):
    """A figure's one legend: below its panels, never one per panel (``drawing.done``)."""
    assert [axis.get_legend() for axis in fig.axes] == [None] * len(fig.axes) and len(fig.legends) == 1
    return fig.legends[0]


def test_a_summary_without_intervals_says_so(table):
    assert "no interval given" in _legend(plots.efficiency(baseline_and_tax.summarize(table, "jbod"))).get_title().get_text()


def _errorbar_lines(axis) -> dict[str, ErrorbarContainer]:
    return {c.get_label(): c for c in axis.containers if isinstance(c, ErrorbarContainer)}


def test_by_block_size_bars_are_the_95_interval_of_bandwidth_and_iops(table):
    frame = table.assign(iops=table["bw_bytes"] / table["bs"])
    best = baseline_and_tax.best_by_bs(frame[frame["layout"] == "single"])
    left, right = plots.by_block_size(best, frame).axes
    bars = _container(left, "read (n=2)")  # the best single point: nj 2, [120, 124]
    assert _bars_of(bars) == [(MIB, *t_interval([120, 124]))]
    iops = _container(right, "read (n=2)")
    assert _bars_of(iops) == [(MIB, *t_interval([120 * MB / MIB, 124 * MB / MIB]))]
    assert "95% interval" in plots.by_block_size(best, frame)._suptitle.get_text()
    assert "no repetitions given" in plots.by_block_size(best)._suptitle.get_text()


def test_efficiency_vs_threads_bars_are_the_95_interval_over_the_ideal(table):
    base = baseline_and_tax.baseline(table)  # 122 MB/s
    points = baseline_and_tax.point_efficiency(table, base)
    fig = plots.efficiency_vs_threads(points, table)
    axis = fig.axes[0]
    two = _container(axis, "2 (n=2-3)")
    assert _bars_of(two) == [(2, *t_interval([200, 220], 244)), (4, *t_interval([230, 250, 240], 244))]
    assert "95% interval" in fig._suptitle.get_text()
    four = _container(axis, "4 (n=2)")  # at nj 8 the qd 8 point, the best efficiency, with its own spread
    assert list(four.lines[0].get_ydata()) == pytest.approx([410 / 488, 900 / 488])


def test_tax_vs_threads_bars_are_the_tax_tests_interval():
    from flashscale.analysis import layout_tax

    rows = _rows("jbod", 2, 1, [200, 202, 198]) + _rows("jbod", 2, 2, [400, 404, 396])
    rows += _rows("raid0", 2, 1, [180, 190, 185]) + _rows("raid0", 2, 2, [300, 330, 315])
    taxes = layout_tax.tax_by_threads(pd.DataFrame(rows), "jbod")
    axis = plots.tax_vs_threads(taxes, "jbod").axes[0]
    raid0 = taxes[taxes["layout"] == "raid0"].sort_values("numjobs")
    bars = _container(axis, "raid0 (n=3)")
    assert [b[1] for b in _bars_of(bars)] == pytest.approx(list(raid0["tax_lo"] * 100))
    assert [b[2] for b in _bars_of(bars)] == pytest.approx(list(raid0["tax_hi"] * 100))
    assert (raid0["tax_lo"] < raid0["tax"]).all() and (raid0["tax"] < raid0["tax_hi"]).all()


@pytest.mark.parametrize("margin", [0.02, 0.05])
def test_the_tax_figures_show_the_margin_as_a_band_and_never_stretch_noise_to_fill_them(table, margin):
    """A 0.3% tax (tight) drawn on an axis that reaches at least twice the margin each way, the band +/- margin."""
    tiny = pd.DataFrame(_rows("raid0", 4, 8, [897.3, 897.3], iodepth=8))
    summary = stats.summary_intervals(pd.concat([table, tiny], ignore_index=True), "jbod", margin=margin)
    for fig in (plots.tax(summary, "jbod"),
                plots.tax_vs_threads(summary.assign(numjobs=summary["best_numjobs"], reps=summary["best_reps"]),
                                     "jbod")):
        axis = fig.axes[0]
        spans = [p for p in axis.patches if p.get_label().startswith("within")]
        assert len(spans) == 1, axis.patches
        ys = spans[0].get_transform().transform(spans[0].get_path().vertices)[:, 1]
        low, high = axis.transData.inverted().transform([[0, ys.min()], [0, ys.max()]])[:, 1]
        assert (low, high) == (pytest.approx(-100 * margin), pytest.approx(100 * margin))
        assert axis.get_ylim()[0] <= -200 * margin and axis.get_ylim()[1] >= 200 * margin
        assert spans[0].get_label() == f"within ±{100 * margin:g}%: equivalent"
        assert spans[0].get_label() in [t.get_text() for t in _legend(fig).get_texts()]  # the reader is told
        assert axis.get_ylabel().endswith("%")


def test_latency_vs_iops_bars_are_the_95_interval_both_ways():
    from flashscale.analysis import latency

    rows = pd.DataFrame([dict(layout="single", devices=1, rw="randread", bs=4096, numjobs=1, iodepth=qd, rep=rep,
                              iops=iops, bw_bytes=iops * 4096.0, clat_mean_ns=lat, clat_p99_ns=lat * 3,
                              lat_mean_ns=lat)
                         for qd, rep, iops, lat in [(1, 1, 1000, 900), (1, 2, 1100, 1000), (4, 1, 3000, 1300),
                                                    (4, 2, 3300, 1200), (4, 3, 3150, 1250)]])
    points = latency.by_point(rows)
    left, right = rate_plots.latency_vs_iops(points).axes
    line = _container(left, "randread 4 KiB (n=2-3)")
    assert line.has_xerr and line.has_yerr
    horizontal, vertical = line.lines[2]  # the x bars (IOPS), then the y bars (latency)
    xs = sorted(tuple(sorted(seg[:, 0])) for seg in horizontal.get_segments())
    assert xs == [t_interval([1000, 1100]), t_interval([3000, 3300, 3150])]
    ys = sorted(tuple(sorted(seg[:, 1])) for seg in vertical.get_segments())
    assert ys == [t_interval([900, 1000], 1e3), t_interval([1300, 1200, 1250], 1e3)]
    p99 = _container(right, "randread 4 KiB (n=2-3)").lines[2][1]
    assert sorted(max(seg[:, 1]) for seg in p99.get_segments()) == pytest.approx(
        sorted([interval([2700, 3000], 1e3)[1], interval([3900, 3600, 3750], 1e3)[1]]))
    assert "95% interval" in left.figure._suptitle.get_text()


def test_metadata_rates_bars_are_the_95_interval():
    from flashscale.analysis import metadata

    runs = {1000: [450, 560, 490], 4000: [510, 530, 520]}
    rows = pd.DataFrame([dict(layout="single", devices=1, op="create", numjobs=1, nrfiles=f, files=f, rate=r,
                              too_short=False, latency_rate=r, clat_mean_ns=1e3, clat_p99_ns=2e3, runtime_ms=1e3,
                              resolution=1e-3, complete=True) for f, rates in runs.items() for r in rates])
    fig = rate_plots.metadata_rates(metadata.by_files(rows))
    bars = _container(fig.axes[0], "single nj1 (n=3)")
    assert _bars_of(bars) == [(1000, *t_interval(runs[1000])), (4000, *t_interval(runs[4000]))]
    assert "95% interval" in fig._suptitle.get_text()


def test_comparison_bars_are_the_95_interval_of_each_sources_best_point(table):
    from flashscale.analysis import compare

    frame = pd.concat([table.assign(source="a"), table.assign(source="b", bw_bytes=table["bw_bytes"] * 2)],
                      ignore_index=True)
    wide = compare.side_by_side(frame)
    spread = compare.best_spread(frame)
    axis = rate_plots.comparison(wide, spread).axes[0]
    bars = [c for c in axis.containers if isinstance(c, BarContainer)]
    assert [b.get_label() for b in bars] == ["a (n=2-3)", "b (n=2-3)"]
    segments = bars[1].errorbar.lines[2][0].get_segments()
    # source b, rows jbod 2, jbod 4, single 1: best points nj 4 [230, 250, 240], nj 8 qd 8 [900], nj 2 [120, 124]
    assert [(min(s[0][1], s[1][1]), max(s[0][1], s[1][1])) for s in segments] == [
        t_interval([460, 500, 480]), (pytest.approx(1800), pytest.approx(1800)), t_interval([240, 248])]


def test_shared_vs_own_bars_are_the_95_interval_with_the_caps():
    from flashscale.analysis import shared_file

    base = dict(layout="jbod", devices=2, rw="write", bs=MIB, numjobs=2, iodepth=1, expected_bytes=1, bytes_ok=True,
                targets=2, targets_used=2, reach_devices=2, ceiling_bytes=200 * MB, fraction=0.9, within_caps=True,
                runtime_s=1.0)
    rows = pd.DataFrame([dict(base, variant=v, bw_bytes=bw * MB) for v, bw in
                         [("n-to-n", 190), ("n-to-n", 196), ("n-to-1", 100), ("n-to-1", 120), ("n-to-1", 110)]])
    axis = rate_plots.shared_vs_own(shared_file.summary(rows)).axes[0]
    bars = [c for c in axis.containers if isinstance(c, BarContainer)]
    assert [b.get_label() for b in bars] == ["n-to-n (n=2)", "n-to-1 (n=3)"]
    spans = [sorted(bars[i].errorbar.lines[2][0].get_segments()[0][:, 1]) for i in (0, 1)]
    assert spans == [list(t_interval([190, 196])), list(t_interval([100, 120, 110]))]


def test_a_source_whose_runs_were_all_too_short_is_left_out_of_the_comparison(table):
    from flashscale.analysis import compare

    fast = table.assign(source="fast", too_short=True)
    frame = pd.concat([table.assign(source="a", too_short=False), fast], ignore_index=True)
    assert list(compare.side_by_side(frame).columns) == ["a"]
    assert set(compare.best_spread(frame)["source"]) == {"a"}


def test_the_cluster_figure_bars_are_the_95_interval_of_its_best_point():
    runs = {(1, 1): [200, 204], (2, 1): [390, 400, 410], (2, 2): [700, 760, 730]}
    rows = [dict(layout="jbod", host="all", hosts=hosts, jobs_per_host=jobs, rw="read", bs=MIB, iodepth=1,
                 phase="measure", warmup=False, status="ok", devices=2 * hosts, bw_bytes=bw * MB)
            for (hosts, jobs), bws in runs.items() for bw in bws]
    rows += [dict(rows[-1], bs=4096, bw_bytes=bw * MB) for bw in (10, 11)]  # another bs at 2 x 2: the best is drawn
    fig = plots.cluster_throughput(pd.DataFrame(rows), "all")
    two = _container(fig.axes[0], "2 host(s) (n=3)")
    assert _bars_of(two) == [(1, *t_interval(runs[(2, 1)])), (2, *t_interval(runs[(2, 2)]))]
    assert "95% interval" in fig._suptitle.get_text() and "min-max" not in fig._suptitle.get_text()
