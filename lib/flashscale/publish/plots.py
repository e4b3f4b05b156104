"""Figures for the reports. Each function takes tidy tables and returns a matplotlib Figure; nothing is shown
or saved here. Bandwidth is displayed in MB/s (1 MB = 10^6 bytes), latency in microseconds.

Figures are closed in pyplot before they are returned, so a notebook shows each once (as the cell's value),
with its alternative text (``alt_text.described``: what it shows, in words, for the published report).
Grouped by what they draw:

    throughput    throughput_vs_numjobs, throughput_vs_devices, by_block_size, repetitions, over_time
    efficiency    efficiency, efficiency_vs_threads, tax, tax_vs_threads
    latency       latency_vs_iops, metadata_rates
    side by side  comparison, shared_vs_own
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ..analysis.core import BASELINE_BS, MB, POINT, measured
from .alt_text import described
from ..measure.steady import steady_state


# Throughput: bandwidth against threads, devices, block size, time and repetitions


def _done(fig: plt.Figure, title: str) -> plt.Figure:
    fig.suptitle(title)
    fig.tight_layout()
    plt.close(fig)
    return described(fig)


def _spread(rows: pd.DataFrame) -> pd.DataFrame:
    """Per sweep point (POINT) of measured ``rows``: mean, min (``low``), max (``high``) and ``n`` repetitions."""
    grouped = rows.groupby(POINT, sort=True, observed=True)["bw_bytes"]
    return grouped.agg(mean="mean", low="min", high="max", n="size").reset_index()


def _panel_bs(points: pd.DataFrame, baseline: pd.DataFrame | None) -> dict[str, int]:
    """The block size each rw's panel shows: its baseline's (``baseline_bs``), else the 1 MiB of the baseline when
    measured, else the rw's largest."""
    given = {}
    if baseline is not None and "baseline_bs" in baseline.columns:
        given = {rw: int(bs) for rw, bs in zip(baseline["rw"], baseline["baseline_bs"]) if pd.notna(bs)}
    out = {}
    for rw, sizes in points.groupby("rw", sort=True)["bs"]:
        out[rw] = given.get(rw, BASELINE_BS if BASELINE_BS in set(sizes) else int(sizes.max()))
    return out


def numjobs_curves(table: pd.DataFrame, baseline: pd.DataFrame | None = None) -> pd.DataFrame:
    """What ``throughput_vs_numjobs`` draws: per (rw, layout, devices, numjobs) at the panel's block size
    (``_panel_bs``), the iodepth with the best mean, with ``mean``, ``low``, ``high`` (min and max over its
    repetitions) and ``n``."""
    points = _spread(measured(table))
    sizes = _panel_bs(points, baseline)
    at_bs = points[points["bs"] == points["rw"].map(sizes)]
    best = at_bs.sort_values(["mean", "iodepth"], ascending=[False, True], kind="mergesort")
    keys = ["rw", "layout", "devices", "numjobs"]
    return best.drop_duplicates(keys).sort_values(keys, kind="mergesort").reset_index(drop=True)


def _n_text(n: pd.Series) -> str:
    low, high = int(n.min()), int(n.max())
    return f"n={low}" if low == high else f"n={low}-{high}"


def throughput_vs_numjobs(table: pd.DataFrame, baseline: pd.DataFrame | None = None) -> plt.Figure:
    """Aggregate bandwidth against numjobs, one panel per rw at one block size (the baseline's), one line per
    (layout, device count): at each numjobs the iodepth with the best mean (``numjobs_curves``), the mean with bars
    from the smallest to the largest repetition, n in the legend. Nothing is averaged over bs or iodepth.

    With ``baseline`` (``core.baseline``: rw, baseline_bw_bytes, baseline_bs), a dotted line in each line's colour
    marks its own ideal: devices x baseline."""
    curves = numjobs_curves(table, baseline)
    panels = list(dict.fromkeys(curves["rw"]))
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 3.8), squeeze=False, sharey=True)
    colours = dict(zip(curves[["layout", "devices"]].drop_duplicates().itertuples(index=False, name=None),
                       sns.color_palette(n_colors=len(curves[["layout", "devices"]].drop_duplicates()))))
    for axis, rw in zip(axes.flat, panels):
        panel = curves[curves["rw"] == rw]
        for (layout, devices), line in panel.groupby(["layout", "devices"], sort=True):
            mean = line["mean"] / MB
            axis.errorbar(line["numjobs"], mean, yerr=[mean - line["low"] / MB, line["high"] / MB - mean],
                          marker="o", capsize=3, color=colours[(layout, devices)],
                          label=f"{layout} x{devices} ({_n_text(line['n'])})")
            _ideal_line(axis, baseline, rw, devices, colours[(layout, devices)])
        ticks = sorted(panel["numjobs"].unique())
        axis.set(xscale="log", title=f"{rw}, bs {int(panel['bs'].iloc[0])} B", xlabel="numjobs (fio jobs, all targets)",
                 ylabel="bandwidth, MB/s")
        axis.set_xticks(ticks, labels=[str(n) for n in ticks])
        axis.minorticks_off()
        axis.legend(title="layout x devices (reps)" + ("; dotted: N x baseline" if baseline is not None else ""),
                    fontsize="small")
    return _done(fig, "Throughput against threads (best iodepth; bars: min-max over repetitions)")


def _ideal_line(axis, baseline: pd.DataFrame | None, rw: str, devices: int, colour) -> None:
    if baseline is None:
        return
    base = baseline.loc[baseline["rw"] == rw, "baseline_bw_bytes"].dropna()
    if not base.empty:
        axis.axhline(devices * base.iloc[0] / MB, color=colour, linestyle=":", linewidth=1)


def _best_spread(best: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """``best`` (layout, devices, rw, best_bs, best_numjobs, best_iodepth) with ``low``, ``high`` and ``n``: the
    smallest and largest repetition of each row's best point in ``table``."""
    spread = _spread(measured(table)).rename(columns={"bs": "best_bs", "numjobs": "best_numjobs",
                                                      "iodepth": "best_iodepth"}).drop(columns=["mean"])
    keys = ["layout", "devices", "rw", "best_bs", "best_numjobs", "best_iodepth"]
    return best.merge(spread, on=keys, how="left", validate="many_to_one")


def throughput_vs_devices(best: pd.DataFrame, table: pd.DataFrame | None = None) -> plt.Figure:
    """Best aggregate bandwidth against devices per rw (``core.best_by_devices``); dotted: devices x baseline (the
    ideal). With ``table`` (the results ``best`` came from), bars from the smallest to the largest repetition of
    each best point and n in the legend."""
    fig, axis = plt.subplots(figsize=(6, 3.5))
    data = _best_spread(best, table) if table is not None else best
    for rw, group in data.groupby("rw", sort=True):
        group = group.sort_values("devices")
        mean = group["best_bw_bytes"] / MB
        spread = [mean - group["low"] / MB, group["high"] / MB - mean] if table is not None else None
        label = f"{rw} ({_n_text(group['n'])})" if table is not None else rw
        bars = axis.errorbar(group["devices"], mean, yerr=spread, marker="o", capsize=3, label=label)
        axis.plot(group["devices"], group["devices"] * group["baseline_bw_bytes"] / MB, linestyle=":",
                  color=bars.lines[0].get_color())
    axis.set(xlabel="devices", ylabel="bandwidth, MB/s", xticks=sorted(best["devices"].unique()))
    axis.legend(title="rw (dotted: N x baseline)")
    title = "bars: min-max over repetitions" if table is not None else "no repetitions given"
    return _done(fig, f"Throughput against devices ({title})")


def _bars(axis, data: pd.DataFrame, x: str, value: str, scale: float = 1.0) -> None:
    """Bars of ``value`` per ``x``, one colour per rw; error bars ``{value}_lo`` to ``{value}_hi`` where the table has
    them (``stats.summary_intervals``), n (``best_reps``) in the legend."""
    labels = list(dict.fromkeys(data[x]))
    rws = sorted(data["rw"].unique())
    width = 0.8 / max(1, len(rws))
    for i, rw in enumerate(rws):
        rows = data[data["rw"] == rw].set_index(x).reindex(labels)
        where = np.arange(len(labels)) - 0.4 + width * (i + 0.5)
        height = rows[value] * scale
        spread = None
        if {f"{value}_lo", f"{value}_hi"} <= set(rows.columns):
            spread = [(height - rows[f"{value}_lo"] * scale).clip(lower=0),
                      (rows[f"{value}_hi"] * scale - height).clip(lower=0)]
        n = f" ({_n_text(rows['best_reps'].dropna())})" if "best_reps" in rows and rows["best_reps"].notna().any() else ""
        axis.bar(where, height, width, yerr=spread, capsize=3, label=f"{rw}{n}")
    axis.set_xticks(np.arange(len(labels)), labels=labels, rotation=20 if len(labels) > 4 else 0)
    interval = "bars: interval" if f"{value}_lo" in data.columns else "no interval given"
    axis.legend(title=f"rw{' (reps)' if 'best_reps' in data.columns else ''}; {interval}", fontsize="small")


def _labelled(summary: pd.DataFrame) -> pd.DataFrame:
    """``summary`` with ``label``: 'layout (devices)', and the block size for a ``by=("bs",)`` summary."""
    label = summary["layout"] + " (" + summary["devices"].astype(str) + ")"
    if "bs" in summary.columns:
        label = label + " " + summary["bs"].astype(str) + " B"
    return summary.assign(label=label)


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


def steady_rounds(frame: pd.DataFrame) -> plt.Figure:
    """Each precondition round's bandwidth (rows with a ``round``), one line per layout; over the window the SNIA
    verdict was judged on (the first steady one, else the last five rounds), its mean +/- 10% (the 20% band the
    range must stay in) and the least-squares line whose excursion must stay within 10%."""
    rounds = frame[frame["round"].notna()].sort_values("round")
    fig, axis = plt.subplots(figsize=(7, 3.5))
    for layout, group in rounds.groupby("layout", sort=True, observed=True):
        x, y = group["round"].to_numpy(dtype=float), group["bw_bytes"].to_numpy(dtype=float) / MB
        verdict = steady_state(y)
        line, = axis.plot(x, y, marker="o", label=f"{layout}: {'steady' if verdict.steady else 'not steady'}")
        end = verdict.round or len(y)
        wx, wy = x[max(end - 5, 0):end], y[max(end - 5, 0):end]
        axis.fill_between(wx, wy.mean() * 0.9, wy.mean() * 1.1, color=line.get_color(), alpha=0.15)
        if len(wx) > 1:
            axis.plot(wx, np.polyval(np.polyfit(wx, wy, 1), wx), linestyle="--", color=line.get_color())
    axis.set(xlabel="precondition round", ylabel="bandwidth, MB/s")
    axis.legend()
    return _done(fig, "Precondition rounds: the 20% band and the fitted line over the window")


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


# Efficiency and tax


def efficiency(summary: pd.DataFrame) -> plt.Figure:
    """Scaling efficiency (best / (devices x baseline)) per layout and rw; 1.0 is perfect scaling. Error bars:
    ``efficiency_lo`` to ``efficiency_hi`` when ``summary`` has them (``stats.summary_intervals``)."""
    fig, axis = plt.subplots(figsize=(6, 3.5))
    _bars(axis, _labelled(summary), "label", "efficiency")
    axis.axhline(1.0, color="black", linestyle=":", linewidth=1)
    axis.set(xlabel="layout (devices)", ylabel="efficiency", title="Scaling efficiency against N x baseline")
    plt.close(fig)
    return described(fig)


def efficiency_vs_threads(points: pd.DataFrame) -> plt.Figure:
    """Efficiency of every point against numjobs, one line per device count, one panel per rw."""
    fig, axes = plt.subplots(1, points["rw"].nunique(), figsize=(5 * points["rw"].nunique(), 3.5), squeeze=False)
    for axis, (rw, group) in zip(axes.flat, points.groupby("rw", sort=True)):
        sns.lineplot(data=group, x="numjobs", y="efficiency", hue="devices", marker="o", ax=axis, errorbar=None,
                     palette="viridis")
        axis.axhline(1.0, color="black", linestyle=":", linewidth=1)
        axis.set(xscale="log", title=rw, xlabel="numjobs", ylabel="efficiency (1 = N x baseline)")
    return _done(fig, "Efficiency per point against threads")


def tax(summary: pd.DataFrame, reference: str) -> plt.Figure:
    """Tax against the reference layout, in percent, per layout and rw (the reference itself is left out). Error
    bars: ``tax_lo`` to ``tax_hi`` when ``summary`` has them (``stats.summary_intervals``)."""
    fig, axis = plt.subplots(figsize=(6, 3.5))
    data = summary[(summary["layout"] != reference) & summary["tax"].notna()]
    if data.empty:
        axis.text(0.5, 0.5, f"no layout shares devices with {reference}", ha="center", transform=axis.transAxes)
    else:
        _bars(axis, _labelled(data), "label", "tax", 100)
    axis.axhline(0, color="black", linewidth=0.8)
    axis.set(xlabel="layout (devices)", ylabel="tax, %", title=f"Tax against {reference} (same devices)")
    plt.close(fig)
    return described(fig)


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


# Latency and metadata rates


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


# Side by side: campaigns, and one shared file against a file per job


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
