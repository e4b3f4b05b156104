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

from ..analysis import cluster
from ..analysis.core import BASELINE_BS, MB, POINT, measured, rates
from ..analysis.monitor import load as device_loads
from .alt_text import described
from .drawing import bounds, done as _done, n_text as _n_text, with_spread
from ..measure.steady import steady_state


# Throughput: bandwidth against threads, devices, block size, time and repetitions


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
    points = _spread(rates(table))
    sizes = _panel_bs(points, baseline)
    at_bs = points[points["bs"] == points["rw"].map(sizes)]
    best = at_bs.sort_values(["mean", "iodepth"], ascending=[False, True], kind="mergesort")
    keys = ["rw", "layout", "devices", "numjobs"]
    return best.drop_duplicates(keys).sort_values(keys, kind="mergesort").reset_index(drop=True)


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
    spread = _spread(rates(table)).rename(columns={"bs": "best_bs", "numjobs": "best_numjobs",
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


def cluster_throughput(table: pd.DataFrame, all_hosts: str = "all") -> plt.Figure:
    """A cluster campaign's aggregate rows (``host`` = ``all``): bandwidth against jobs per host, one line per layout
    (where the hosts' data lives) and host count, one panel per rw; bars from the smallest to the largest
    repetition, n in the legend."""
    rows = cluster.measured_ok(table)
    rows = rows[rows["host"] == all_hosts]
    rws = sorted(rows["rw"].unique())
    several = rows["layout"].nunique() > 1
    fig, axes = plt.subplots(1, len(rws), figsize=(5 * len(rws) + 2, 3.5), squeeze=False)
    for axis, rw in zip(axes[0], rws):
        for (layout, hosts), group in rows[rows["rw"] == rw].groupby(["layout", "hosts"]):
            spread = group.groupby("jobs_per_host")["bw_bytes"].agg(["mean", "min", "max", "size"]).reset_index()
            axis.errorbar(spread["jobs_per_host"], spread["mean"] / MB, marker="o", capsize=3,
                          yerr=bounds(spread["mean"] / MB, spread["min"] / MB, spread["max"] / MB),
                          label=f"{f'{layout}, ' if several else ''}{hosts} host(s) ({_n_text(spread['size'])})")
        axis.set(title=rw, xlabel="jobs per host", ylabel="aggregate bandwidth, MB/s")
        axis.set_xticks(sorted(rows["jobs_per_host"].unique()))
        axis.set_ylim(bottom=0)
    axes[0][-1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small")  # beside, over no line
    return _done(fig, "Cluster throughput against jobs per host (bars: min-max over repetitions)")


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


def by_block_size(curve: pd.DataFrame, table: pd.DataFrame | None = None) -> plt.Figure:
    """Best bandwidth and IOPS against block size, one line per rw (``core.best_by_bs``: one point per bs, with its
    ``iops``). With ``table`` (the results ``curve`` came from), bars from the smallest to the largest repetition
    of each point and n in the legend."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.5))
    data = with_spread(curve, table, ("bw_bytes", "iops")) if table is not None else curve
    for rw, group in data.groupby("rw", sort=True):
        group = group.sort_values("bs")
        label = f"{rw} ({_n_text(group['n'])})" if table is not None else rw
        for axis, value, scale in ((left, "bw_bytes", MB), (right, "iops", 1.0)):
            mean = group[value] / scale
            spread = bounds(mean, group[f"{value}_min"] / scale, group[f"{value}_max"] / scale) \
                if table is not None else None
            axis.errorbar(group["bs"], mean, yerr=spread, marker="o", capsize=3, label=label)
    for axis, label in ((left, "bandwidth, MB/s"), (right, "IOPS")):
        axis.set(xscale="log", xlabel="block size, bytes", ylabel=label)
        axis.legend(title="rw (reps)" if table is not None else "rw", fontsize="small")
    right.set_yscale("log")
    title = "bars: min-max over repetitions" if table is not None else "no repetitions given"
    return _done(fig, f"One device: bandwidth and IOPS against block size ({title})")


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


def efficiency_vs_threads(points: pd.DataFrame, table: pd.DataFrame | None = None) -> plt.Figure:
    """Efficiency against numjobs (``core.point_efficiency``), one line per device count, one panel per rw: at each
    numjobs the point (bs, iodepth) with the best efficiency. With ``table`` (the results ``points`` came from), bars
    from the smallest to the largest repetition of each point over devices x baseline, n in the legend."""
    data = with_spread(points, table) if table is not None else points
    best = data.sort_values("efficiency", ascending=False, kind="mergesort").drop_duplicates(
        ["rw", "devices", "numjobs"]).sort_values(["rw", "devices", "numjobs"], kind="mergesort")
    panels = sorted(best["rw"].unique())
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 3.5), squeeze=False)
    for axis, rw in zip(axes.flat, panels):
        for devices, line in best[best["rw"] == rw].groupby("devices", sort=True):
            ideal = line["devices"] * line["baseline_bw_bytes"]
            spread = bounds(line["efficiency"], line["bw_bytes_min"] / ideal, line["bw_bytes_max"] / ideal) \
                if table is not None else None
            n = f" ({_n_text(line['n'])})" if table is not None else ""
            axis.errorbar(line["numjobs"], line["efficiency"], yerr=spread, marker="o", capsize=3,
                          label=f"{devices}{n}")
        axis.axhline(1.0, color="black", linestyle=":", linewidth=1)
        axis.set(xscale="log", title=rw, xlabel="numjobs", ylabel="efficiency (1 = N x baseline)")
        axis.legend(title="devices" + (" (reps)" if table is not None else ""), fontsize="small")
    title = "bars: min-max over repetitions" if table is not None else "no repetitions given"
    return _done(fig, f"Efficiency per point against threads ({title})")


def tax(summary: pd.DataFrame, reference: str) -> plt.Figure:
    """Tax against the reference layout, in percent, per layout and rw (the reference itself is left out). Error
    bars: ``tax_lo`` to ``tax_hi`` when ``summary`` has them (``stats.summary_intervals``); the band: the margin of
    practical equivalence (``tax_margin``), and the axis never narrower than twice it, so that noise does not fill
    the height."""
    fig, axis = plt.subplots(figsize=(6, 3.5))
    data = summary[(summary["layout"] != reference) & summary["tax"].notna()]
    if data.empty:
        axis.text(0.5, 0.5, f"no layout shares devices with {reference}", ha="center", transform=axis.transAxes)
    else:
        _bars(axis, _labelled(data), "label", "tax", 100)
    axis.axhline(0, color="black", linewidth=0.8)
    band = _margin_band(axis, summary)
    axis.set(xlabel="layout (devices)", ylabel="tax, %",
             title=f"Tax against {reference} (same devices)" + (f"; grey: {band}" if band else ""))
    plt.close(fig)
    return described(fig)


def _margin_band(axis: plt.Axes, table: pd.DataFrame) -> str | None:
    """The margin of practical equivalence (``tax_margin``, when the table has it) as a grey band around 0, in
    percent, and the y axis at least twice as tall as the band on each side; the band's label, None without one."""
    if "tax_margin" not in table.columns or table["tax_margin"].dropna().empty:
        return None
    margin = 100 * float(table["tax_margin"].dropna().iloc[0])
    label = f"within ±{margin:g}%: equivalent"
    axis.axhspan(-margin, margin, color="0.88", zorder=0, label=label)
    low, high = axis.get_ylim()
    axis.set_ylim(min(low, -2 * margin), max(high, 2 * margin))
    return label


def tax_vs_threads(taxes: pd.DataFrame, reference: str) -> plt.Figure:
    """Tax against ``reference`` at each thread count (``layout_tax.tax_by_threads``), one line per layout, one panel
    per rw; bars: the tax test's interval (``tax_lo`` to ``tax_hi``) where the table has it, n (``reps``) in the
    legend."""
    data = taxes[(taxes["layout"] != reference) & taxes["tax"].notna()]
    panels = sorted(data["rw"].unique()) or ["(no layout beside the reference)"]
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 3.5), squeeze=False)
    tested = {"tax_lo", "tax_hi"} <= set(data.columns)
    for axis, rw in zip(axes.flat, panels):
        for layout, line in data[data["rw"] == rw].groupby("layout", sort=True):
            line = line.sort_values("numjobs")
            spread = bounds(line["tax"] * 100, line["tax_lo"] * 100, line["tax_hi"] * 100) if tested else None
            n = f" ({_n_text(line['reps'])})" if "reps" in line.columns else ""
            axis.errorbar(line["numjobs"], line["tax"] * 100, yerr=spread, marker="o", capsize=3, label=f"{layout}{n}")
        axis.axhline(0, color="black", linewidth=0.8)
        _margin_band(axis, taxes)
        axis.set(xscale="log", title=rw, xlabel="numjobs", ylabel=f"tax against {reference}, %")
        if axis.has_data():
            axis.legend(title="layout (reps)" if "reps" in data.columns else "layout", fontsize="small")
    return _done(fig, "Tax across thread counts (" + ("bars: the tax test's interval" if tested else
                                                      "no interval given") + ")")



# What every device was doing (the monitoring table, ``measure.monitoring``)


def device_load(monitor: pd.DataFrame, caps: dict | None = None) -> plt.Figure:
    """Each device's load over time (``analysis.monitor.load``: utilisation, or bandwidth over its cap when known;
    1.0 is saturated), one line per device, and the busiest CPU dotted; a row of panels per layout, a column per
    workload (its runs one after another on one clock of 1 s samples)."""
    data = monitor.assign(load=device_loads(monitor, caps))
    layouts, workloads = sorted(data["layout"].dropna().unique()), sorted(data["workload"].dropna().unique())
    fig, axes = plt.subplots(max(1, len(layouts)), max(1, len(workloads)), squeeze=False, sharey=True,
                             figsize=(3.6 * max(1, len(workloads)), 2.6 * max(1, len(layouts))))
    for (row, layout), (col, workload) in ((r, c) for r in enumerate(layouts) for c in enumerate(workloads)):
        axis, mine = axes[row][col], data[(data["layout"] == layout) & (data["workload"] == workload)]
        mine = mine.assign(sample=mine.groupby(["raw_dir", "t_s"], sort=False).ngroup())
        devices = mine[mine["device"].notna()]
        if not devices.empty:
            sns.lineplot(data=devices, x="sample", y="load", hue="device", ax=axis, errorbar=None, palette="tab10")
        cpu = mine.groupby("sample")["cpu_busiest"].first()
        axis.plot(cpu.index, cpu.to_numpy(), color="black", linestyle=":", linewidth=1, label="busiest CPU")
        axis.axhline(1.0, color="grey", linewidth=0.5)
        axis.set(title=f"{layout}: {workload}", xlabel="sample (1 s each)", ylabel="load (1.0: saturated)",
                 ylim=(0, 1.3))
        axis.legend(fontsize="x-small")
    return _done(fig, "What every device was doing: load per device and the busiest CPU")
