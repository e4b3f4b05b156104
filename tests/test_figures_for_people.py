"""Figures a reader can read at a glance: every figure of ``plots`` and ``rate_plots``, drawn on realistic data,
has its legend below the panels and over none of its data (``drawing.legend_overlaps``, which is shown to catch a
legend put on the data), bandwidth from zero, each layout in its own colour in every figure, and says in its PNG's
metadata whether its legend is clear (``drawing.LEGEND_KEY``, what the report's reader test reads)."""
from __future__ import annotations

import inspect
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from IPython.core.formatters import DisplayFormatter
from matplotlib.figure import Figure

from flashscale.analysis import compare, baseline_and_tax, latency, layout_tax, shared_file, stats
from flashscale.analysis.prediction import predict
from flashscale.publish import drawing, plots, rate_plots

matplotlib.use("Agg")
MIB, MB, CAP = 1048576, 1e6, 200e6
RNG = np.random.default_rng(23)


def _run(layout, devices, rw, numjobs, rep, bw, bs=MIB, iodepth=1, **more):
    return dict(layout=layout, devices=devices, rw=rw, bs=bs, numjobs=numjobs, iodepth=iodepth, rep=rep,
                warmup=False, bw_bytes=bw, point=f"{rw}-bs{bs}-nj{numjobs}-qd{iodepth}", **more)


def quickstart() -> pd.DataFrame:
    """The quickstart on the emulated array, as issue 23 saw it: 4 devices capped at 200 MB/s, single, jbod and
    btrfs-raid0, 1-8 jobs, 3 repetitions; jbod needs a job per device, btrfs-raid0 reads at 800 MB/s from one job
    and writes 430-720 MB/s at one job, reaching 800 MB/s only at 4-8."""
    btrfs_write = {1: [430, 620, 720], 2: [480, 560, 790], 4: [520, 640, 780], 8: [700, 790, 800]}
    rows = []
    for rw in ("write", "read"):
        for numjobs in (1, 2, 4, 8):
            for rep in (1, 2, 3):
                noise = 1 + RNG.normal(0, 0.002)
                rows.append(_run("single", 1, rw, numjobs, rep, CAP * noise))
                rows.append(_run("jbod", 4, rw, numjobs, rep, min(numjobs, 4) * CAP * noise))
                btrfs = btrfs_write[numjobs][rep - 1] * MB if rw == "write" else 4 * CAP * noise
                rows.append(_run("btrfs-raid0", 4, rw, numjobs, rep, btrfs))
    return pd.DataFrame(rows)


def scaling() -> pd.DataFrame:
    """02_scaling: jbod over 1, 2 and 4 devices, a job per device to saturate them."""
    return pd.DataFrame([_run("jbod", devices, rw, numjobs, rep, min(numjobs, devices) * CAP * (1 + RNG.normal(0, .01)))
                         for devices in (1, 2, 4) for rw in ("read", "write") for numjobs in (1, 2, 4, 8)
                         for rep in (1, 2, 3)])


def block_sizes() -> pd.DataFrame:
    """01_baseline: one device from 4 KiB (latency bound) to 1 MiB (at its cap)."""
    rows = [_run("single", 1, rw, 1, rep, min(CAP, bs / 40e-6) * (1 + RNG.normal(0, .01)), bs=bs)
            for rw in ("read", "write") for bs in (4096, 16384, 65536, 262144, MIB) for rep in (1, 2, 3)]
    frame = pd.DataFrame(rows)
    return frame.assign(iops=frame["bw_bytes"] / frame["bs"])


def _cluster() -> pd.DataFrame:
    """10_cluster: jbod (local) and nbd on 1, 2 and 4 hosts, two devices each; nbd held to its link."""
    rows = [dict(layout=layout, host=host, hosts=hosts, jobs_per_host=jobs, rw="write", rep=rep, phase="measure",
                 warmup=False, status="ok", devices=2,
                 bw_bytes=per_host * min(jobs, 2) * (hosts if host == "all" else 1) * (1 + RNG.normal(0, .02)))
            for layout, per_host in (("jbod", CAP), ("nbd", 50e6)) for hosts in (1, 2, 4) for jobs in (1, 2, 4)
            for host in ("host0", "all") for rep in (1, 2, 3)]
    return pd.DataFrame(rows)


def _rounds() -> pd.DataFrame:
    drift = [900, 700, 560, 520, 505, 500, 498]
    return pd.DataFrame({"layout": ["jbod"] * 7 + ["single"] * 5, "round": [*range(1, 8), *range(1, 6)],
                         "bw_bytes": [b * MB for b in drift] + [200 * MB * (1 + RNG.normal(0, .01)) for _ in range(5)]})


def _over_time() -> pd.DataFrame:
    return pd.DataFrame([dict(layout="jbod", devices=4, rw="write", bs=MIB, numjobs=nj, iodepth=1, rep=rep,
                              time_s=t, bw_bytes=min(nj, 4) * CAP * (1 + RNG.normal(0, .03)))
                         for nj in (1, 4) for rep in (1, 2, 3) for t in np.arange(0.5, 10, 0.5)])


def _monitor() -> pd.DataFrame:
    return pd.DataFrame([dict(layout=layout, workload=workload, point="p", rep=0, device=f"loop{d}", t_s=t,
                              raw_dir=f"{layout}-{workload}", util=0.5, read_bw_bytes=0.0, queue_depth=1.0,
                              write_bw_bytes=CAP * (0.95 if layout == "jbod" or d == 0 else 0.02), cpu_busiest=0.4)
                         for layout in ("jbod", "single") for workload in ("bonnie++", "transfer")
                         for d in range(4) for t in range(1, 11)])


def _latency() -> pd.DataFrame:
    rows = [_run("single", 1, rw, 1, rep, iops * bs, bs=bs, iodepth=qd, iops=iops,
                 clat_mean_ns=qd / iops * 1e9, clat_p99_ns=3 * qd / iops * 1e9, lat_mean_ns=qd / iops * 1e9)
            for rw in ("randread", "randwrite") for bs in (4096, 65536) for qd in (1, 4, 16, 64) for rep in (1, 2, 3)
            for iops in [min(CAP / bs, qd * 20000) * (1 + RNG.normal(0, .02))]]
    return latency.by_point(pd.DataFrame(rows).drop(columns="point"))


def _metadata() -> pd.DataFrame:
    return pd.DataFrame([dict(layout=layout, devices=devices, op=op, numjobs=nj, files=files, rate=rate, reps=3,
                              rate_lo=rate * 0.97, rate_hi=rate * 1.03)
                         for layout, devices in (("single", 1), ("jbod", 4)) for op in ("create", "stat", "remove")
                         for nj in (1, 4) for files in (1000, 10000, 100000)
                         for rate in [20000 * nj * devices ** 0.5 / (1 + files / 1e5)]])


def _comparison() -> tuple[pd.DataFrame, pd.DataFrame]:
    frame = pd.concat([quickstart().assign(source="laptop"), quickstart().assign(source="server", bw_bytes=lambda t:
                                                                                  t["bw_bytes"] * 1.7)])
    return compare.side_by_side(frame), compare.best_spread(frame)


def _shared() -> pd.DataFrame:
    base = dict(devices=4, bs=MIB, iodepth=1, expected_bytes=1, bytes_ok=True, targets=4, fraction=0.9,
                within_caps=True, runtime_s=3.0)
    rows = [dict(base, layout=layout, rw=rw, numjobs=nj, variant=variant, rep=rep, targets_used=used,
                 reach_devices=used, ceiling_bytes=used * CAP, bw_bytes=used * CAP * (0.97 + RNG.normal(0, .01)))
            for layout in ("jbod", "btrfs-raid0") for rw in ("read", "write") for nj in (1, 4)
            for variant, used in (("n-to-n", min(nj, 4)), ("n-to-1", 1 if layout == "jbod" else 4))
            for rep in (1, 2, 3)]
    return shared_file.summary(pd.DataFrame(rows))


def _figures() -> dict:
    """Each figure function of ``plots`` and ``rate_plots``, called as its notebook calls it, on realistic data."""
    table, scaled = quickstart(), scaling()
    base, scaled_base = baseline_and_tax.baseline(table, MIB), baseline_and_tax.baseline(scaled, MIB)
    summary = stats.summary_intervals(table, reference="jbod", baseline_bs=MIB, margin=0.02)
    sizes = block_sizes()
    return {
        "throughput_vs_numjobs": lambda: plots.throughput_vs_numjobs(table, base),
        "throughput_vs_devices": lambda: plots.throughput_vs_devices(baseline_and_tax.best_by_devices(scaled, scaled_base),
                                                                     scaled),
        "cluster_throughput": lambda: plots.cluster_throughput(_cluster(), "all"),
        "efficiency": lambda: plots.efficiency(summary),
        "tax": lambda: plots.tax(summary, "jbod"),
        "efficiency_vs_threads": lambda: plots.efficiency_vs_threads(baseline_and_tax.point_efficiency(scaled, scaled_base),
                                                                     scaled),
        "tax_vs_threads": lambda: plots.tax_vs_threads(layout_tax.tax_by_threads(table, "jbod"), "jbod"),
        "by_block_size": lambda: plots.by_block_size(baseline_and_tax.best_by_bs(sizes), sizes),
        "steady_rounds": lambda: plots.steady_rounds(_rounds()),
        "repetitions": lambda: plots.repetitions(table),
        "over_time": lambda: plots.over_time(_over_time()),
        "device_load": lambda: plots.device_load(_monitor(), caps={"write": CAP}),
        "latency_vs_iops": lambda: rate_plots.latency_vs_iops(_latency()),
        "metadata_rates": lambda: rate_plots.metadata_rates(_metadata()),
        "comparison": lambda: rate_plots.comparison(*_comparison()),
        "shared_vs_own": lambda: rate_plots.shared_vs_own(_shared()),
        "predicted_vs_measured": lambda: rate_plots.predicted_vs_measured(
            predict.score(predict.predict_results(table), table)),
    }


FIGURES = _figures()


GOLDEN = Path(__file__).parent / "golden" / "quickstart_results.csv"  # a real quickstart on the emulated array


def test_the_quickstarts_figures_on_a_real_run_keep_their_legends_off_the_data():
    raw = pd.read_csv(GOLDEN)
    table = baseline_and_tax.measured(raw)
    summary = stats.summary_intervals(raw, reference="jbod", baseline_bs=MIB, margin=0.02)
    for fig in (plots.throughput_vs_numjobs(table, baseline_and_tax.baseline(table, MIB)), plots.efficiency(summary),
                plots.tax(summary, "jbod")):
        assert drawing.legend_overlaps(fig) == [] and len(fig.legends) == 1
        assert all(axis.get_ylim()[0] == 0 for axis in fig.axes) or fig.axes[0].get_ylabel() == "tax, %"


def test_every_figure_function_is_drawn_here():
    functions = {name for module in (plots, rate_plots) for name, f in inspect.getmembers(module, inspect.isfunction)
                 if f.__module__ == module.__name__ and not name.startswith("_")
                 and inspect.signature(f).return_annotation in (Figure, "plt.Figure")}
    assert functions == set(FIGURES)


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_figure_has_one_legend_below_its_panels_over_none_of_its_data(name):
    fig = FIGURES[name]()
    assert drawing.legend_overlaps(fig) == []
    assert [axis.get_legend() for axis in fig.axes] == [None] * len(fig.axes)
    assert len(fig.legends) == 1 and fig.legends[0].get_texts()
    assert fig.get_layout_engine() is not None and type(fig.get_layout_engine()).__name__ == "ConstrainedLayoutEngine"
    legend = fig.legends[0].get_window_extent()
    assert all(legend.y1 <= axis.get_window_extent().y0 for axis in fig.axes)  # below every panel


@pytest.mark.parametrize("name", ["throughput_vs_numjobs", "throughput_vs_devices", "cluster_throughput",
                                  "efficiency", "efficiency_vs_threads", "by_block_size", "steady_rounds",
                                  "repetitions", "over_time", "metadata_rates", "comparison", "shared_vs_own",
                                  "predicted_vs_measured"])
def test_bandwidth_rates_and_efficiency_are_read_against_zero(name):
    fig = FIGURES[name]()
    for axis in fig.axes:
        assert axis.get_yscale() == "linear" and axis.get_ylim()[0] == 0, (axis.get_title(), axis.get_ylim())


def test_latency_stays_on_its_log_scale_against_iops_from_zero():
    for axis in FIGURES["latency_vs_iops"]().axes:
        assert axis.get_yscale() == "log" and axis.get_xlim()[0] == 0


def test_the_tax_is_in_percent_with_its_band_and_never_stretched_to_fill():
    axis = FIGURES["tax"]().axes[0]
    assert axis.get_ylabel() == "tax, %"
    assert [p.get_label() for p in axis.patches if p.get_label().startswith("within")] == ["within ±2%: equivalent"]
    low, high = axis.get_ylim()
    assert low <= -4 and high >= 4


def _colours_of(fig: Figure) -> dict[str, tuple]:
    """Each line's layout (its label's first word) -> its colour, over every panel."""
    return {c.get_label().split(" ")[0]: matplotlib.colors.to_rgb(c.lines[0].get_color())
            for axis in fig.axes for c in axis.containers}


def test_a_layout_has_one_colour_in_every_figure():
    numjobs = _colours_of(FIGURES["throughput_vs_numjobs"]())
    threads = _colours_of(FIGURES["tax_vs_threads"]())
    assert numjobs["btrfs-raid0"] == threads["btrfs-raid0"] == drawing.layout_colour("btrfs-raid0")
    assert numjobs["jbod"] == drawing.layout_colour("jbod") != numjobs["single"] == drawing.layout_colour("single")
    assert drawing.layout_colour("jbod x2") == drawing.layout_colour("jbod")  # 02_scaling's labels
    shades = drawing.layout_colours([("jbod", 1), ("jbod", 2), ("jbod", 4)])
    assert shades[("jbod", 4)] == drawing.layout_colour("jbod") and len(set(shades.values())) == 3


def test_every_figure_is_drawn_in_the_one_style():
    for name, draw in FIGURES.items():
        fig = draw()
        assert fig.get_dpi() == drawing.STYLE["figure.dpi"], name
        assert fig._suptitle.get_fontsize() == drawing.STYLE["figure.titlesize"], name
        assert all(axis.yaxis.get_gridlines()[0].get_visible() for axis in fig.axes), name


# The checker catches a legend on the data


def test_the_checker_finds_a_legend_put_on_the_lines():
    fig = FIGURES["throughput_vs_numjobs"]()
    axis = fig.axes[1]  # write: btrfs-raid0 climbs through the middle of the panel
    axis.legend(*axis.get_legend_handles_labels(), loc="center")
    found = drawing.legend_overlaps(fig)
    assert found and all(f.startswith("legend ") and "panel 2 (write" in f for f in found)
    assert any("'btrfs-raid0 x4 (n=3)'" in f for f in found)  # the line under it, named


def test_the_checker_sees_a_segment_between_points_and_a_bar():
    fig = Figure(figsize=(4, 3))
    axis = fig.add_subplot()
    axis.plot([0, 10], [0, 10], marker="o", label="diagonal")  # no point in the middle, only the segment
    axis.legend(loc="center")
    assert drawing.legend_overlaps(fig) == ["legend 'diagonal' over Line2D 'diagonal' in panel 1 (untitled)"]
    fig = Figure(figsize=(4, 3))
    axis = fig.add_subplot()
    axis.bar([0, 1], [10, 10], label="bars")
    axis.legend(loc="upper right")
    assert drawing.legend_overlaps(fig) == ["legend 'bars' over Rectangle 'bars' in panel 1 (untitled)"]


def test_the_checker_sees_error_bars_and_filled_areas():
    fig = Figure(figsize=(4, 3))
    axis = fig.add_subplot()
    axis.errorbar([0, 10], [5, 5], yerr=[[5, 5], [5, 5]], linestyle="none", label="bars")
    axis.fill_between([4, 6], [4, 4], [6, 6], label="area")
    axis.legend(loc="center")  # over the area only: the error bars are at the sides
    found = drawing.legend_overlaps(fig)
    assert len(found) == 1 and "PolyCollection 'area'" in found[0]
    fig = Figure(figsize=(4, 3))
    axis = fig.add_subplot()
    axis.errorbar([5], [5], yerr=[[5], [5]], linestyle="none", marker="none", label="one bar")
    axis.set_xlim(0, 10)
    axis.legend(loc="center")
    assert any("LineCollection" in f for f in drawing.legend_overlaps(fig))


def test_a_legend_beside_the_data_is_clear():
    fig = Figure(figsize=(5, 3), layout="constrained")
    axis = fig.add_subplot()
    axis.plot([0, 10], [0, 10], label="diagonal")
    axis.legend(loc="upper left")  # above the line's left end: clear of it
    assert drawing.legend_overlaps(fig) == []


# What the report's reader reads


def test_a_shown_figure_says_in_its_png_metadata_whether_its_legend_is_clear():
    formatter = DisplayFormatter()
    formatter.formatters["image/png"].for_type(Figure, lambda fig: "PNG BYTES")  # what the inline backend does
    _, metadata = formatter.format(FIGURES["throughput_vs_numjobs"]())
    assert metadata["image/png"][drawing.LEGEND_KEY] == [] and metadata["image/png"]["alt"].startswith("Figure:")
    fig = FIGURES["efficiency"]()
    fig.axes[0].legend(*fig.axes[0].get_legend_handles_labels(), loc="center")
    _, metadata = formatter.format(fig)
    assert metadata["image/png"][drawing.LEGEND_KEY] and "Rectangle" in metadata["image/png"][drawing.LEGEND_KEY][0]
