"""Figures of rates beside bandwidth against threads: latency against IOPS, metadata rates, campaigns side by side,
one shared file against a file per job. Each draws the 95% interval of each point's mean as bars (the analysis's
own, ``stats.intervals_by``, as the tables give it; none for one run) and n in its legend; ``plots`` names them too. Bandwidth in MB/s (1 MB = 10^6 bytes), latency in microseconds. Drawn as
every figure is (``drawing``): one style, a layout's colour, rates from zero, the legend below the panels.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.container import BarContainer
import numpy as np
import pandas as pd

from ..analysis import baseline_and_tax
from ..analysis.baseline_and_tax import MB
from ..measure.units import size
from .drawing import (INTERVAL_BARS, bounds, done, done_from_zero, from_zero, interval_bars, layout_colours, n_text,
                      panels, rw_colour, series_colours, styled)


def _has(data: pd.DataFrame, *columns: str) -> bool:
    return set(columns) <= set(data.columns)


@styled
def latency_vs_iops(points: pd.DataFrame) -> plt.Figure:
    """Mean and 99th percentile completion latency against IOPS, one line per (rw, block size), along iodepth
    (``latency.by_point``); bars of the 95% interval of each mean both ways, n in the legend."""
    data = points.assign(curve=points["rw"] + " " + points["bs"].map(size)).sort_values("iops")
    fig, axes = panels(2)
    sizes = {rw: sorted(group["bs"].unique()) for rw, group in data.groupby("rw")}
    for axis, column, label in ((axes[0][0], "clat_mean_ns", "mean"), (axes[0][1], "clat_p99_ns", "99th percentile")):
        for curve, line in data.groupby("curve", sort=True):
            rw, bs = line["rw"].iloc[0], line["bs"].iloc[0]
            y = line[column] / 1e3
            yerr = interval_bars(y, line[f"{column}_lo"] / 1e3, line[f"{column}_hi"] / 1e3) \
                if _has(line, f"{column}_lo", f"{column}_hi") else None
            xerr = interval_bars(line["iops"], line["iops_lo"], line["iops_hi"]) if _has(line, "iops_lo") else None
            n = f" ({n_text(line['reps'])})" if "reps" in line.columns else ""
            axis.errorbar(line["iops"], y, xerr=xerr, yerr=yerr, marker="o", capsize=3, label=f"{curve}{n}",
                          color=rw_colour(rw, sizes[rw].index(bs), len(sizes[rw])))
        axis.set(xlabel="IOPS", ylabel=f"completion latency {label}, us", yscale="log")
        axis.set_xlim(left=0)  # IOPS from zero; latency on its log scale
    return done(fig, f"Latency against IOPS (queue depth rising along each line; bars: {INTERVAL_BARS})",
                "rw, block size (reps)")


@styled
def metadata_rates(points: pd.DataFrame) -> plt.Figure:
    """Files created, statted and removed per second against the number of files (seed 004, Figures 9-11): one
    panel per op, one line per (layout, numjobs) (``metadata.by_files`` rows); bars of the 95% interval of each mean
    rate (``rate_lo``, ``rate_hi``), n in the legend."""
    ops = [op for op in ("create", "stat", "remove") if op in set(points["op"])]
    data = points.assign(curve=points["layout"] + " nj" + points["numjobs"].astype(str))
    fig, axes = panels(len(ops), width=4.5)
    colours = layout_colours(points[["layout", "numjobs"]].itertuples(index=False, name=None))
    for axis, op in zip(axes.flat, ops):
        for curve, line in data[data["op"] == op].groupby("curve", sort=True):
            line = line.sort_values("files")
            yerr = interval_bars(line["rate"], line["rate_lo"], line["rate_hi"]) if _has(line, "rate_lo") else None
            n = f" ({n_text(line['reps'])})" if "reps" in line.columns else ""
            colour = colours[(line["layout"].iloc[0], line["numjobs"].iloc[0])]
            axis.errorbar(line["files"], line["rate"], yerr=yerr, marker="o", capsize=3, label=f"{curve}{n}",
                          color=colour)
        axis.set(xscale="log", title=f"{op}s", xlabel="files", ylabel=f"{op}s per second")
    from_zero(axes)
    return done(fig, f"Metadata rates against the number of files (bars: {INTERVAL_BARS})",
                "layout, numjobs (reps)")


def _grouped_bars(axis, means: pd.DataFrame, low: pd.DataFrame | None, high: pd.DataFrame | None,
                  n: pd.DataFrame | None) -> None:
    """One group per row of ``means``, one bar per column, error bars from ``low`` to ``high`` when given (none where
    they are NaN: one run), n in the legend."""
    width = 0.8 / max(1, means.shape[1])
    where = np.arange(len(means))
    colours = series_colours(means.shape[1])
    for i, column in enumerate(means.columns):
        height = means[column]
        spread = interval_bars(height, low[column], high[column]) if low is not None else None
        label = f"{column} ({n_text(n[column])})" if n is not None else str(column)
        axis.bar(where - 0.4 + width * (i + 0.5), height, width, yerr=spread, capsize=3, label=label,
                 color=colours[i])
    axis.set_xticks(where, labels=list(means.index), rotation=30 if len(means) > 3 else 0, ha="right")


@styled
def comparison(wide: pd.DataFrame, spread: pd.DataFrame | None = None) -> plt.Figure:
    """``compare.side_by_side`` as grouped bars: one group per (layout, devices, rw), one bar per source. With
    ``spread`` (``compare.best_spread`` of the same frame), bars of the 95% interval of each best point's mean and n
    in the legend."""
    fig, axes = panels(width=min(14, max(6, 0.6 * len(wide) * max(1, wide.shape[1]))))
    axis = axes[0][0]
    if wide.empty:
        axis.text(0.5, 0.5, "no campaigns to compare", ha="center", transform=axis.transAxes)
        return done(fig, "Campaigns side by side")
    keys = list(wide.index.names)
    names = [" ".join(map(str, k)) if isinstance(k, tuple) else str(k) for k in wide.index]
    shown = (wide / MB).set_axis(names)
    parts = None
    if spread is not None:
        pivot = {c: spread.pivot_table(index=keys, columns="source", values=c).reindex(index=wide.index,
                                                                                     columns=wide.columns)
                 for c in ("low", "high", "n")}
        parts = {c: (v / (MB if c != "n" else 1)).set_axis(names) for c, v in pivot.items()}
    _grouped_bars(axis, shown, *(parts[c] if parts else None for c in ("low", "high", "n")))
    return done_from_zero(fig, axis, "Campaigns side by side", "source" + (" (reps); bars: 95% interval" if parts else ""),
                          ylabel="best bandwidth, MB/s", xlabel="")


@styled
def shared_vs_own(points: pd.DataFrame) -> plt.Figure:
    """Bandwidth of each mode (N-to-N, N-to-1) per point (layout, rw, and numjobs, bs, iodepth where they vary) as
    bars with the 95% interval of each mean (``bw_lo``, ``bw_hi``), n in the legend; black ticks: the
    cap sum of the devices that mode's files reach (``shared_file.summary`` rows)."""
    where = points["layout"] + " " + points["rw"]
    for column, unit in (("numjobs", " nj"), ("bs", " bs "), ("iodepth", " qd")):  # those that vary
        said = points[column].map(size) if column == "bs" else points[column].astype(str)
        where = where + (unit + said if points[column].nunique() > 1 else "")
    data = points.assign(where=where, mb_s=points["bw_bytes"] / MB, cap_mb_s=points["ceiling_bytes"] / MB,
                         low=points["bw_lo"] / MB, high=points["bw_hi"] / MB)
    table = {c: data.pivot_table(index="where", columns="variant", values=c, sort=False, dropna=False)
             for c in ("mb_s", "cap_mb_s", "low", "high", "reps")}
    modes = sorted(table["mb_s"].columns, key=lambda mode: (mode != "n-to-n", mode))  # a file per job first
    table = {c: v.reindex(index=table["mb_s"].index, columns=modes) for c, v in table.items()}
    fig, axes = panels(width=min(14, max(6, 1.2 * len(table["mb_s"]))))
    axis = axes[0][0]
    _grouped_bars(axis, table["mb_s"], table["low"], table["high"], table["reps"])
    bars = [c for c in axis.containers if isinstance(c, BarContainer)]
    for container, mode in zip(bars, modes):
        for patch, cap in zip(container.patches, table["cap_mb_s"][mode]):
            if pd.notna(cap):
                axis.hlines(cap, patch.get_x(), patch.get_x() + patch.get_width(), color="black", linewidth=2)
    return done_from_zero(fig, axis, "One shared file against a file per job",
                          "files (reps; bars: 95% interval; black: the cap sum of the devices reached)", xlabel="",
                          ylabel="bandwidth, MB/s")


@styled
def predicted_vs_measured(scored: pd.DataFrame) -> plt.Figure:
    """What each layout was predicted to deliver before it was built, against what it measured (``predict.score``),
    one panel per rw, one group of points per layout along its jobs: bars, the prediction with its interval
    (``predicted_lo`` to ``_hi``); dots, the measured mean with its repetitions' interval, n in the legend. A
    cluster's points (a ``host`` column, ``analysis.prediction.scoring.against``) go along the hosts too, each named with its
    host count: pass the rows of one host, or the cluster's (``host`` all)."""
    cluster = "host" in scored.columns
    order = ["layout", "hosts", "devices", "numjobs"] if cluster else ["layout", "devices", "numjobs"]
    rws = sorted(scored["rw"].astype(str).unique())
    widest = max((scored["rw"] == rw).sum() for rw in rws) if rws else 1
    fig, axes = panels(max(1, len(rws)), width=min(12, max(4.5, 0.55 * widest)))
    for axis, rw in zip(axes[0], rws):
        rows = scored[scored["rw"] == rw].sort_values(order).reset_index(drop=True)
        colours = series_colours(rows["layout"].nunique())
        for colour, (layout, part) in zip(colours, rows.groupby("layout", sort=True)):
            where = part.index.to_numpy()
            predicted = part["predicted_bw_bytes"] / MB
            axis.bar(where, predicted, 0.7, color=colour, alpha=0.4, label=f"{layout} predicted",
                     yerr=bounds(predicted, part["predicted_lo"] / MB, part["predicted_hi"] / MB), capsize=3)
            measured = part["measured_bw_bytes"] / MB
            axis.errorbar(where, measured, yerr=bounds(measured, part["measured_bw_bytes_lo"] / MB,
                                                       part["measured_bw_bytes_hi"] / MB),
                          fmt="o", color=colour, capsize=3,
                          label=f"{layout} measured ({n_text(part['measured_reps'])})")
        labels = [" ".join([str(r.layout), *([baseline_and_tax.count_of(r.hosts, "host") + ","] if cluster else []),
                            baseline_and_tax.count_of(r.numjobs, "job")]) for r in rows.itertuples()]
        axis.set_xticks(np.arange(len(rows)), labels=labels, rotation=30, ha="right")
        axis.set(title=rw, xlabel="", ylabel="bandwidth, MB/s")
    from_zero(axes)
    return done(fig, "Predicted before measuring, and measured",
                "layout (bars: predicted, its interval; dots: measured, its interval)")
