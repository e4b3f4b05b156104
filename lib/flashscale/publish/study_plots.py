"""Figures of the study notebooks (as ``plots``: tidy tables in, a matplotlib Figure out, closed in pyplot so a
notebook shows it once). Bandwidth in MB/s, latency in microseconds."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from ..analysis.core import MB, measured


def _done(fig: plt.Figure, title: str) -> plt.Figure:
    fig.suptitle(title)
    fig.tight_layout()
    plt.close(fig)
    return fig


def by_block_size(curve: pd.DataFrame) -> plt.Figure:
    """Best bandwidth and IOPS against block size, one line per rw (``scaling.scaling_curve(..., "bs")`` plus
    an ``iops`` column, or point means)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.5))
    data = curve.assign(bw_mb_s=curve["bw_bytes"] / MB)
    sns.lineplot(data=data, x="bs", y="bw_mb_s", hue="rw", marker="o", ax=left, errorbar=None)
    sns.lineplot(data=data, x="bs", y="iops", hue="rw", marker="o", ax=right, errorbar=None)
    for axis, label in ((left, "bandwidth, MB/s"), (right, "IOPS")):
        axis.set(xscale="log", xlabel="block size, bytes", ylabel=label)
    right.set_yscale("log")
    return _done(fig, "One device: bandwidth and IOPS against block size")


def efficiency_vs_threads(points: pd.DataFrame) -> plt.Figure:
    """Efficiency of every point against numjobs, one line per device count, one panel per rw."""
    fig, axes = plt.subplots(1, points["rw"].nunique(), figsize=(5 * points["rw"].nunique(), 3.5), squeeze=False)
    for axis, (rw, group) in zip(axes.flat, points.groupby("rw", sort=True)):
        sns.lineplot(data=group, x="numjobs", y="efficiency", hue="devices", marker="o", ax=axis, errorbar=None,
                     palette="viridis")
        axis.axhline(1.0, color="black", linestyle=":", linewidth=1)
        axis.set(xscale="log", title=rw, xlabel="numjobs", ylabel="efficiency (1 = N x baseline)")
    return _done(fig, "Efficiency per point against threads")


def throughput_vs_devices(best: pd.DataFrame) -> plt.Figure:
    """Best aggregate bandwidth against devices per rw; dotted: devices x baseline (the ideal)."""
    fig, axis = plt.subplots(figsize=(6, 3.5))
    for rw, group in best.groupby("rw", sort=True):
        group = group.sort_values("devices")
        line, = axis.plot(group["devices"], group["best_bw_bytes"] / MB, marker="o", label=rw)
        axis.plot(group["devices"], group["devices"] * group["baseline_bw_bytes"] / MB, linestyle=":",
                  color=line.get_color())
    axis.set(xlabel="devices", ylabel="bandwidth, MB/s", xticks=sorted(best["devices"].unique()))
    axis.legend(title="rw (dotted: N x baseline)")
    return _done(fig, "Throughput against devices")


def tax_vs_threads(taxes: pd.DataFrame, reference: str) -> plt.Figure:
    """Tax against ``reference`` at each thread count, one line per layout, one panel per rw."""
    data = taxes[taxes["layout"] != reference].assign(tax_pct=lambda t: t["tax"] * 100)
    fig, axes = plt.subplots(1, max(1, data["rw"].nunique()), figsize=(5 * max(1, data["rw"].nunique()), 3.5),
                             squeeze=False)
    for axis, (rw, group) in zip(axes.flat, data.groupby("rw", sort=True)):
        sns.lineplot(data=group, x="numjobs", y="tax_pct", hue="layout", marker="o", ax=axis, errorbar=None)
        axis.axhline(0, color="black", linewidth=0.8)
        axis.set(xscale="log", title=rw, xlabel="numjobs", ylabel=f"tax against {reference}, %")
    return _done(fig, "Tax across thread counts")


def latency_vs_iops(points: pd.DataFrame) -> plt.Figure:
    """Mean and 99th percentile completion latency against IOPS, one line per (rw, block size), along iodepth."""
    data = points.assign(curve=points["rw"] + " " + points["bs"].astype(str) + " B",
                         mean_us=points["clat_mean_ns"] / 1e3, p99_us=points["clat_p99_ns"] / 1e3)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.5))
    for axis, column, label in ((left, "mean_us", "mean"), (right, "p99_us", "99th percentile")):
        sns.lineplot(data=data.sort_values("iops"), x="iops", y=column, hue="curve", marker="o", ax=axis,
                     sort=False, errorbar=None)
        axis.set(xlabel="IOPS", ylabel=f"completion latency {label}, us", yscale="log")
    return _done(fig, "Latency against IOPS (queue depth rising along each line)")


def repetitions(frame: pd.DataFrame) -> plt.Figure:
    """Every measured repetition's bandwidth per point, with the mean: run-to-run variation made visible."""
    data = measured(frame).assign(bw_mb_s=lambda t: t["bw_bytes"] / MB)
    fig, axis = plt.subplots(figsize=(7, 3.5))
    sns.stripplot(data=data, x="point", y="bw_mb_s", hue="layout", ax=axis, size=7, jitter=0.1)
    sns.pointplot(data=data, x="point", y="bw_mb_s", ax=axis, color="black", markers="_", linestyles="none",
                  errorbar=None)
    axis.set(xlabel="point", ylabel="bandwidth, MB/s")
    axis.tick_params(axis="x", labelrotation=20)
    return _done(fig, "Run-to-run variation")


def over_time(series: pd.DataFrame) -> plt.Figure:
    """Aggregate bandwidth over time within each run, one line per repetition, one panel per point."""
    data = series.assign(bw_mb_s=series["bw_bytes"] / MB, point=series["rw"] + " nj" + series["numjobs"].astype(str))
    points = sorted(data["point"].unique()) or ["(no logs)"]
    fig, axes = plt.subplots(1, len(points), figsize=(5 * len(points), 3.5), squeeze=False)
    for axis, point in zip(axes.flat, points):
        sns.lineplot(data=data[data["point"] == point], x="time_s", y="bw_mb_s", hue="rep", marker=".", ax=axis,
                     errorbar=None, palette="tab10")
        axis.set(title=point, xlabel="time within the run, s", ylabel="bandwidth, MB/s", ylim=(0, None))
    return _done(fig, "Throughput over time within each run")


def comparison(wide: pd.DataFrame) -> plt.Figure:
    """``compare.side_by_side`` as grouped bars: one group per (layout, devices, rw), one bar per source."""
    fig, axis = plt.subplots(figsize=(max(6, 0.6 * len(wide) * max(1, wide.shape[1])), 3.5))
    if wide.empty:
        axis.text(0.5, 0.5, "no campaigns to compare", ha="center", transform=axis.transAxes)
    else:
        shown = wide / MB
        shown.index = [" ".join(map(str, k)) if isinstance(k, tuple) else str(k) for k in shown.index]
        shown.plot.bar(ax=axis, rot=30)
        axis.set(ylabel="best bandwidth, MB/s", xlabel="")
    return _done(fig, "Campaigns side by side")


def metadata_rates(points: pd.DataFrame) -> plt.Figure:
    """Files created, statted and removed per second against the number of files (seed 004, Figures 9-11): one
    panel per op, one line per (layout, numjobs) (``metadata.by_files`` rows)."""
    ops = [op for op in ("create", "stat", "remove") if op in set(points["op"])]
    data = points.assign(curve=points["layout"] + " nj" + points["numjobs"].astype(str))
    fig, axes = plt.subplots(1, max(1, len(ops)), figsize=(4.5 * max(1, len(ops)), 3.5), squeeze=False)
    for axis, op in zip(axes.flat, ops):
        sns.lineplot(data=data[data["op"] == op], x="files", y="rate", hue="curve", marker="o", ax=axis,
                     errorbar=None)
        axis.set(xscale="log", title=f"{op}s", xlabel="files", ylabel=f"{op}s per second", ylim=(0, None))
    return _done(fig, "Metadata rates against the number of files")


def shared_vs_own(points: pd.DataFrame) -> plt.Figure:
    """Bandwidth of each mode (N-to-N, N-to-1) per point (layout, rw, and numjobs, bs, iodepth where they vary) as
    bars; black ticks: the cap sum of the devices that mode's files reach (``shared_file.summary`` rows)."""
    where = points["layout"] + " " + points["rw"]
    for column, unit in (("numjobs", " nj"), ("bs", " bs"), ("iodepth", " qd")):  # those that vary
        where = where + (unit + points[column].astype(str) if points[column].nunique() > 1 else "")
    data = points.assign(where=where, mb_s=points["bw_bytes"] / MB, cap_mb_s=points["ceiling_bytes"] / MB)
    bars = data.pivot_table(index="where", columns="variant", values="mb_s", sort=False)
    bars = bars[sorted(bars.columns, key=lambda mode: (mode != "n-to-n", mode))]  # a file per job first
    caps = data.pivot_table(index="where", columns="variant", values="cap_mb_s", sort=False, dropna=False)
    fig, axis = plt.subplots(figsize=(min(14, max(6, 1.2 * len(bars))), 3.5))
    bars.plot.bar(ax=axis, rot=20 if len(bars) > 4 else 0)
    for container, mode in zip(axis.containers, bars.columns):
        for patch, cap in zip(container.patches, caps.reindex(index=bars.index)[mode]):
            if pd.notna(cap):
                axis.hlines(cap, patch.get_x(), patch.get_x() + patch.get_width(), color="black", linewidth=2)
    axis.set(xlabel="", ylabel="bandwidth, MB/s")
    axis.legend(title="files (black: cap sum\nof the devices reached)", loc="upper left", bbox_to_anchor=(1, 1))
    return _done(fig, "One shared file against a file per job")
