"""Figures for the reports. Each function takes tidy tables and returns a matplotlib Figure; nothing is shown
or saved here. Bandwidth is displayed in MB/s (1 MB = 10^6 bytes), latency in microseconds.

Every figure is drawn alike (``drawing``): one style, each layout in its own colour, bandwidth from zero, the
legend below the panels, never over their data. Figures are closed in pyplot before they are returned, so a
notebook shows each once (as the cell's value), with its alternative text (``alt_text.described``: what it shows,
in words, for the published report) and ``drawing.legend_overlaps`` beside it. Grouped by what they draw:

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

from ..analysis import cluster_numbers, stand_in
from ..analysis.baseline_and_tax import BASELINE_BS, MB, POINT, measured, rates
from ..analysis.monitor import load as device_loads
from ..analysis.stats import repetition_stats
from .drawing import (INTERVAL_BARS, bounds, done as _done, done_from_zero, from_zero, interval_bars as _interval_bars,
                      layout_colour, layout_colours, n_text as _n_text, numjobs_axis, panels, rw_colour, series_colours,
                      styled, with_spread)
from ..measure.steady import steady_state
from ..measure.units import size



# Throughput: bandwidth against threads, devices, block size, time and repetitions


def _spread(rows: pd.DataFrame) -> pd.DataFrame:
    """Per sweep point (POINT) of measured ``rows``: mean, the 95% interval of the mean (``low``, ``high``:
    ``stats.repetition_stats``, the tables' own; NaN for one run) and ``n`` repetitions."""
    found = repetition_stats(rows)
    return found[[*POINT, "bw_bytes", "bw_bytes_lo", "bw_bytes_hi", "reps"]].rename(
        columns={"bw_bytes": "mean", "bw_bytes_lo": "low", "bw_bytes_hi": "high", "reps": "n"})


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
    (``_panel_bs``), the iodepth with the best mean, with ``mean``, ``low``, ``high`` (the 95% interval of the mean
    over its repetitions) and ``n``."""
    points = _spread(rates(table))
    sizes = _panel_bs(points, baseline)
    at_bs = points[points["bs"] == points["rw"].map(sizes)]
    best = at_bs.sort_values(["mean", "iodepth"], ascending=[False, True], kind="mergesort")
    keys = ["rw", "layout", "devices", "numjobs"]
    return best.drop_duplicates(keys).sort_values(keys, kind="mergesort").reset_index(drop=True)


@styled
def throughput_vs_numjobs(table: pd.DataFrame, baseline: pd.DataFrame | None = None) -> plt.Figure:
    """Aggregate bandwidth against numjobs, one panel per rw at one block size (the baseline's), one line per
    (layout, device count): at each numjobs the iodepth with the best mean (``numjobs_curves``), the mean with bars
    of its 95% interval (the tables' own; none for one run), n in the legend. Nothing is averaged over bs or iodepth.

    With ``baseline`` (``core.baseline``: rw, baseline_bw_bytes, baseline_bs), a dotted line in each line's colour
    marks its own ideal: devices x baseline."""
    curves = numjobs_curves(table, baseline)
    rws = list(dict.fromkeys(curves["rw"]))
    fig, axes = panels(len(rws), sharey=True)
    colours = layout_colours(curves[["layout", "devices"]].itertuples(index=False, name=None))
    for axis, rw in zip(axes.flat, rws):
        panel = curves[curves["rw"] == rw]
        for (layout, devices), line in panel.groupby(["layout", "devices"], sort=True):
            mean = line["mean"] / MB
            axis.errorbar(line["numjobs"], mean, yerr=_interval_bars(mean, line["low"] / MB, line["high"] / MB),
                          marker="o", capsize=3, color=colours[(layout, devices)],
                          label=f"{layout} x{devices} ({_n_text(line['n'])})")
            _ideal_line(axis, baseline, rw, devices, colours[(layout, devices)])
        numjobs_axis(axis, panel["numjobs"])
        axis.set(title=f"{rw}, bs {size(panel['bs'].iloc[0])}", xlabel="numjobs (fio jobs, all targets)",
                 ylabel="bandwidth, MB/s")
    from_zero(axes)
    return _done(fig, f"Throughput against threads (best iodepth; bars: {INTERVAL_BARS})",
                 "layout x devices (reps)" + ("; dotted: N x baseline" if baseline is not None else ""))


def _ideal_line(axis, baseline: pd.DataFrame | None, rw: str, devices: int, colour) -> None:
    if baseline is None:
        return
    base = baseline.loc[baseline["rw"] == rw, "baseline_bw_bytes"].dropna()
    if not base.empty:
        axis.axhline(devices * base.iloc[0] / MB, color=colour, linestyle=":", linewidth=1)


def _best_spread(best: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """``best`` (layout, devices, rw, best_bs, best_numjobs, best_iodepth) with ``low``, ``high`` and ``n``: the 95%
    interval of the mean of each row's best point's repetitions in ``table``."""
    spread = _spread(rates(table)).rename(columns={"bs": "best_bs", "numjobs": "best_numjobs",
                                                      "iodepth": "best_iodepth"}).drop(columns=["mean"])
    keys = ["layout", "devices", "rw", "best_bs", "best_numjobs", "best_iodepth"]
    return best.merge(spread, on=keys, how="left", validate="many_to_one")


@styled
def throughput_vs_devices(best: pd.DataFrame, table: pd.DataFrame | None = None) -> plt.Figure:
    """Best aggregate bandwidth against devices per rw (``core.best_by_devices``); dotted: devices x baseline (the
    ideal). With ``table`` (the results ``best`` came from), bars of the 95% interval of each best point's mean
    (the tables' own) and n in the legend."""
    fig, axes = panels(width=6)
    axis = axes[0][0]
    data = _best_spread(best, table) if table is not None else best
    for rw, group in data.groupby("rw", sort=True):
        group = group.sort_values("devices")
        mean = group["best_bw_bytes"] / MB
        spread = _interval_bars(mean, group["low"] / MB, group["high"] / MB) if table is not None else None
        label = f"{rw} ({_n_text(group['n'])})" if table is not None else rw
        axis.errorbar(group["devices"], mean, yerr=spread, marker="o", capsize=3, label=label, color=rw_colour(rw))
        axis.plot(group["devices"], group["devices"] * group["baseline_bw_bytes"] / MB, linestyle=":",
                  color=rw_colour(rw))
    axis.set(xlabel="devices", ylabel="bandwidth, MB/s", xticks=sorted(best["devices"].unique()))
    from_zero(axis)
    title = f"bars: {INTERVAL_BARS}" if table is not None else "no repetitions given"
    return _done(fig, f"Throughput against devices ({title})", "rw (dotted: N x baseline)")


@styled
def cluster_throughput(table: pd.DataFrame, all_hosts: str = "all") -> plt.Figure:
    """A cluster campaign's aggregate rows (``host`` = ``all``): bandwidth against jobs per host, one line per layout
    (where the hosts' data lives) and host count, one panel per rw, at each the best point
    (``cluster_numbers.curve``); bars of its 95% interval (the tables' own; none for one run), n in the legend."""
    points = cluster_numbers.curve(table, all_hosts)
    rws = sorted(points["rw"].unique())
    several = points["layout"].nunique() > 1
    fig, axes = panels(len(rws))
    colours = layout_colours(points[["layout", "hosts"]].itertuples(index=False, name=None))
    for axis, rw in zip(axes[0], rws):
        for (layout, hosts), line in points[points["rw"] == rw].groupby(["layout", "hosts"]):
            mean = line["bw_bytes"] / MB
            axis.errorbar(line["jobs_per_host"], mean, marker="o", capsize=3, color=colours[(layout, hosts)],
                          yerr=_interval_bars(mean, line["bw_bytes_lo"] / MB, line["bw_bytes_hi"] / MB),
                          label=f"{f'{layout}, ' if several else ''}{hosts} host(s) ({_n_text(line['reps'])})")
        axis.set(title=rw, xlabel="jobs per host", ylabel="aggregate bandwidth, MB/s")
        axis.set_xticks(sorted(points["jobs_per_host"].unique()))
    from_zero(axes)
    return _done(fig, f"Cluster throughput against jobs per host (best point; bars: {INTERVAL_BARS})",
                 ("layout, " if several else "") + "hosts (reps)")


def _bars(axis, data: pd.DataFrame, x: str, value: str, scale: float = 1.0) -> str:
    """Bars of ``value`` per ``x``, one colour per rw; error bars ``{value}_lo`` to ``{value}_hi`` where the table has
    them (``stats.summary_intervals``), n (``best_reps``) in the legend; the legend's title."""
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
        axis.bar(where, height, width, yerr=spread, capsize=3, label=f"{rw}{n}", color=rw_colour(rw))
    axis.set_xticks(np.arange(len(labels)), labels=labels, rotation=20 if len(labels) > 4 else 0)
    interval = "bars: interval" if f"{value}_lo" in data.columns else "no interval given"
    return f"rw{' (reps)' if 'best_reps' in data.columns else ''}; {interval}"


def _labelled(summary: pd.DataFrame) -> pd.DataFrame:
    """``summary`` with ``label``: 'layout (devices)', and the block size for a ``by=("bs",)`` summary."""
    label = summary["layout"] + " (" + summary["devices"].astype(str) + ")"
    if "bs" in summary.columns:
        label = label + " " + summary["bs"].astype(str) + " B"
    return summary.assign(label=label)


@styled
def by_block_size(curve: pd.DataFrame, table: pd.DataFrame | None = None) -> plt.Figure:
    """Best bandwidth and IOPS against block size, one line per rw (``core.best_by_bs``: one point per bs, with its
    ``iops``). With ``table`` (the results ``curve`` came from), bars of the 95% interval of each point's mean (the
    tables' own, ``drawing.with_spread``; none for one run) and n in the legend."""
    fig, axes = panels(2)
    left, right = axes[0]
    data = with_spread(curve, table, ("bw_bytes", "iops")) if table is not None else curve
    for rw, group in data.groupby("rw", sort=True):
        group = group.sort_values("bs")
        label = f"{rw} ({_n_text(group['n'])})" if table is not None else rw
        for axis, value, scale in ((left, "bw_bytes", MB), (right, "iops", 1.0)):
            mean = group[value] / scale
            spread = _interval_bars(mean, group[f"{value}_lo"] / scale, group[f"{value}_hi"] / scale) \
                if table is not None else None
            axis.errorbar(group["bs"], mean, yerr=spread, marker="o", capsize=3, label=label, color=rw_colour(rw))
    for axis, label in ((left, "bandwidth, MB/s"), (right, "IOPS")):
        axis.set(xscale="log", xlabel="block size, bytes", ylabel=label)
    from_zero(axes)
    title = f"bars: {INTERVAL_BARS}" if table is not None else "no repetitions given"
    return _done(fig, f"One device: bandwidth and IOPS against block size ({title})",
                 "rw (reps)" if table is not None else "rw")


@styled
def steady_rounds(frame: pd.DataFrame) -> plt.Figure:
    """Each precondition round's bandwidth (rows with a ``round``), one line per layout; over the window the SNIA
    verdict was judged on (the first steady one, else the last five rounds), its mean +/- 10% (the 20% band the
    range must stay in) and the least-squares line whose excursion must stay within 10%."""
    rounds = frame[frame["round"].notna()].sort_values("round")
    fig, axes = panels(width=7)
    axis = axes[0][0]
    for layout, group in rounds.groupby("layout", sort=True, observed=True):
        x, y = group["round"].to_numpy(dtype=float), group["bw_bytes"].to_numpy(dtype=float) / MB
        verdict = steady_state(y)
        line, = axis.plot(x, y, marker="o", color=layout_colour(layout),
                          label=f"{layout}: {'steady' if verdict.steady else 'not steady'}")
        end = verdict.round or len(y)
        wx, wy = x[max(end - 5, 0):end], y[max(end - 5, 0):end]
        axis.fill_between(wx, wy.mean() * 0.9, wy.mean() * 1.1, color=line.get_color(), alpha=0.15)
        if len(wx) > 1:
            axis.plot(wx, np.polyval(np.polyfit(wx, wy, 1), wx), linestyle="--", color=line.get_color())
    return done_from_zero(fig, axis, "Precondition rounds: the 20% band and the fitted line over the window",
                          "layout: SNIA verdict (shaded: mean +/- 10%; dashed: fitted line)",
                          xlabel="precondition round", ylabel="bandwidth, MB/s")


@styled
def repetitions(frame: pd.DataFrame) -> plt.Figure:
    """Every measured repetition's bandwidth per point, with the mean: run-to-run variation made visible."""
    data = measured(frame).assign(bw_mb_s=lambda t: t["bw_bytes"] / MB)
    fig, axes = panels(width=7)
    axis = axes[0][0]
    layouts = sorted(data["layout"].unique())
    sns.stripplot(data=data, x="point", y="bw_mb_s", hue="layout", hue_order=layouts, ax=axis, size=7, jitter=0.1,
                  palette={layout: layout_colour(layout) for layout in layouts})
    sns.pointplot(data=data, x="point", y="bw_mb_s", ax=axis, color="black", markers="_", linestyles="none",
                  errorbar=None)
    axis.set(xlabel="point", ylabel="bandwidth, MB/s")
    axis.tick_params(axis="x", labelrotation=20)
    from_zero(axis)
    return _done(fig, "Run-to-run variation", "layout (black: the mean)")


@styled
def over_time(series: pd.DataFrame) -> plt.Figure:
    """Aggregate bandwidth over time within each run, one line per repetition, one panel per point."""
    data = series.assign(bw_mb_s=series["bw_bytes"] / MB, point=series["rw"] + " nj" + series["numjobs"].astype(str))
    points = sorted(data["point"].unique()) or ["(no logs)"]
    fig, axes = panels(len(points))
    reps = sorted(data["rep"].unique())
    for axis, point in zip(axes.flat, points):
        sns.lineplot(data=data[data["point"] == point], x="time_s", y="bw_mb_s", hue="rep", marker=".", ax=axis,
                     errorbar=None, palette=dict(zip(reps, series_colours(len(reps)))))
        axis.set(title=point, xlabel="time within the run, s", ylabel="bandwidth, MB/s")
    from_zero(axes)
    return _done(fig, "Throughput over time within each run", "repetition")


# Efficiency and tax


@styled
def efficiency(summary: pd.DataFrame) -> plt.Figure:
    """Scaling efficiency (best / (devices x baseline)) per layout and rw; 1.0 is perfect scaling. Error bars:
    ``efficiency_lo`` to ``efficiency_hi`` when ``summary`` has them (``stats.summary_intervals``)."""
    fig, axes = panels(width=6)
    axis = axes[0][0]
    legend = _bars(axis, _labelled(summary), "label", "efficiency")
    axis.axhline(1.0, color="black", linestyle=":", linewidth=1)
    return done_from_zero(fig, axis, "Scaling efficiency against N x baseline", legend, xlabel="layout (devices)",
                          ylabel="efficiency")


@styled
def efficiency_vs_threads(points: pd.DataFrame, table: pd.DataFrame | None = None) -> plt.Figure:
    """Efficiency against numjobs (``core.point_efficiency``), one line per device count, one panel per rw: at each
    numjobs the point (bs, iodepth) with the best efficiency. With ``table`` (the results ``points`` came from), bars
    of the 95% interval of each point's mean (the tables' own) over devices x baseline, n in the legend."""
    data = with_spread(points, table) if table is not None else points
    best = data.sort_values("efficiency", ascending=False, kind="mergesort").drop_duplicates(
        ["rw", "devices", "numjobs"]).sort_values(["rw", "devices", "numjobs"], kind="mergesort")
    rws = sorted(best["rw"].unique())
    fig, axes = panels(len(rws))
    layout = best["layout"].iloc[0] if "layout" in best.columns and len(best) else ""
    colours = layout_colours((layout, devices) for devices in best["devices"].unique())
    for axis, rw in zip(axes.flat, rws):
        for devices, line in best[best["rw"] == rw].groupby("devices", sort=True):
            ideal = line["devices"] * line["baseline_bw_bytes"]
            spread = _interval_bars(line["efficiency"], line["bw_bytes_lo"] / ideal,
                                    line["bw_bytes_hi"] / ideal) if table is not None else None
            n = f" ({_n_text(line['n'])})" if table is not None else ""
            axis.errorbar(line["numjobs"], line["efficiency"], yerr=spread, marker="o", capsize=3,
                          color=colours[(layout, devices)], label=f"{devices}{n}")
        axis.axhline(1.0, color="black", linestyle=":", linewidth=1)
        numjobs_axis(axis, best.loc[best["rw"] == rw, "numjobs"])
        axis.set(title=rw, xlabel="numjobs", ylabel="efficiency (1 = N x baseline)")
    from_zero(axes)
    title = f"bars: {INTERVAL_BARS}" if table is not None else "no repetitions given"
    return _done(fig, f"Efficiency per point against threads ({title})",
                 "devices" + (" (reps)" if table is not None else "") + "; dotted: N x baseline")


@styled
def tax(summary: pd.DataFrame, reference: str) -> plt.Figure:
    """Tax against the reference layout, in percent, per layout and rw (the reference itself is left out). Error
    bars: ``tax_lo`` to ``tax_hi`` when ``summary`` has them (``stats.summary_intervals``); the band: the margin of
    practical equivalence (``tax_margin``), and the axis never narrower than twice it, so that noise does not fill
    the height."""
    reference = stand_in.measured_against(summary, reference)
    fig, axes = panels(width=6)
    axis, legend = axes[0][0], None
    data = summary[(summary["layout"] != reference) & summary["tax"].notna()]
    if data.empty:
        axis.text(0.5, 0.5, f"no layout shares devices with {reference}", ha="center", transform=axis.transAxes)
    else:
        legend = _bars(axis, _labelled(data), "label", "tax", 100)
    axis.axhline(0, color="black", linewidth=0.8)
    _margin_band(axis, summary)
    axis.set(xlabel="layout (devices)", ylabel="tax, %")
    return _done(fig, f"Tax against {reference} (same devices)", legend)


def _margin_band(axis: plt.Axes, table: pd.DataFrame) -> str | None:
    """The margin of practical equivalence (``tax_margin``, when the table has it) as a grey band around 0, in
    percent, named in the legend, and the y axis at least twice as tall as the band on each side; the band's label,
    None without one."""
    if "tax_margin" not in table.columns or table["tax_margin"].dropna().empty:
        return None
    margin = 100 * float(table["tax_margin"].dropna().iloc[0])
    label = f"within ±{margin:g}%: equivalent"
    axis.axhspan(-margin, margin, color="0.88", zorder=0, label=label)
    low, high = axis.get_ylim()
    axis.set_ylim(min(low, -2 * margin), max(high, 2 * margin))
    return label


@styled
def tax_vs_threads(taxes: pd.DataFrame, reference: str) -> plt.Figure:
    """Tax against ``reference`` at each thread count (``layout_tax.tax_by_threads``), one line per layout, one panel
    per rw; bars: the tax test's interval (``tax_lo`` to ``tax_hi``) where the table has it, n (``reps``) in the
    legend."""
    reference = stand_in.measured_against(taxes, reference)
    data = taxes[(taxes["layout"] != reference) & taxes["tax"].notna()]
    rws = sorted(data["rw"].unique()) or ["(no layout beside the reference)"]
    fig, axes = panels(len(rws))
    tested = {"tax_lo", "tax_hi"} <= set(data.columns)
    for axis, rw in zip(axes.flat, rws):
        for layout, line in data[data["rw"] == rw].groupby("layout", sort=True):
            line = line.sort_values("numjobs")
            spread = bounds(line["tax"] * 100, line["tax_lo"] * 100, line["tax_hi"] * 100) if tested else None
            n = f" ({_n_text(line['reps'])})" if "reps" in line.columns else ""
            axis.errorbar(line["numjobs"], line["tax"] * 100, yerr=spread, marker="o", capsize=3,
                          color=layout_colour(layout), label=f"{layout}{n}")
        axis.axhline(0, color="black", linewidth=0.8)
        _margin_band(axis, taxes)
        numjobs_axis(axis, data.loc[data["rw"] == rw, "numjobs"])
        axis.set(title=rw, xlabel="numjobs", ylabel=f"tax against {reference}, %")
    return _done(fig, "Tax across thread counts (" + ("bars: the tax test's interval" if tested else
                                                      "no interval given") + ")",
                 "layout (reps)" if "reps" in data.columns else "layout")



# What every device was doing (the monitoring table, ``measure.monitoring``)


@styled
def device_load(monitor: pd.DataFrame, caps: dict | None = None) -> plt.Figure:
    """Each device's load over time (``analysis.monitor.load``: utilisation, or bandwidth over its cap when known;
    1.0 is saturated), one line per device, and the busiest CPU dotted; a row of panels per layout, a column per
    workload (its runs one after another on one clock of 1 s samples)."""
    data = monitor.assign(load=device_loads(monitor, caps))
    layouts, workloads = sorted(data["layout"].dropna().unique()), sorted(data["workload"].dropna().unique())
    fig, axes = panels(len(workloads), len(layouts), width=3.6, height=2.6, sharey=True)
    names = sorted(data["device"].dropna().unique())
    palette = dict(zip(names, series_colours(len(names))))
    for (row, layout), (col, workload) in ((r, c) for r in enumerate(layouts) for c in enumerate(workloads)):
        axis, mine = axes[row][col], data[(data["layout"] == layout) & (data["workload"] == workload)]
        mine = mine.assign(sample=mine.groupby(["raw_dir", "t_s"], sort=False).ngroup())
        devices = mine[mine["device"].notna()]
        if not devices.empty:
            sns.lineplot(data=devices, x="sample", y="load", hue="device", ax=axis, errorbar=None, palette=palette)
        cpu = mine.groupby("sample")["cpu_busiest"].first()
        axis.plot(cpu.index, cpu.to_numpy(), color="black", linestyle=":", linewidth=1, label="busiest CPU")
        axis.axhline(1.0, color="grey", linewidth=0.5)
        axis.set(title=f"{layout}: {workload}", xlabel="sample (1 s each)", ylabel="load (1.0: saturated)",
                 ylim=(0, 1.3))
    return _done(fig, "What every device was doing: load per device and the busiest CPU", "device")
