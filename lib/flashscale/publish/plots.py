"""Figures for the reports. Each function takes tidy tables and returns a matplotlib Figure; nothing is shown
or saved here. Bandwidth is displayed in MB/s (1 MB = 10^6 bytes).

Figures are closed in pyplot before they are returned, so a notebook shows each once (as the cell's value).
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from ..analysis.core import MB, measured


def throughput_vs_numjobs(table: pd.DataFrame, baseline: pd.DataFrame | None = None) -> plt.Figure:
    """Aggregate bandwidth against numjobs, one panel per rw, one line per layout (mean and range over reps).

    With ``baseline`` (rw, baseline_bw_bytes), a dotted line per layout marks devices x baseline: the ideal.
    """
    rows = measured(table)
    data = rows.assign(bw_mb_s=rows["bw_bytes"] / MB)
    order = list(dict.fromkeys(data["layout"]))
    palette = dict(zip(order, sns.color_palette(n_colors=len(order))))
    grid = sns.relplot(data=data, x="numjobs", y="bw_mb_s", hue="layout", style="layout", col="rw", kind="line",
                       hue_order=order, style_order=order, palette=palette,
                       markers=True, dashes=False, errorbar=("pi", 100), height=3.5, aspect=1.2,
                       facet_kws={"sharey": True})
    grid.set(xscale="log", xlabel="numjobs (fio jobs over all targets)", ylabel="bandwidth, MB/s")
    for axis in grid.axes.flat:
        axis.set_xticks(sorted(data["numjobs"].unique()), labels=[str(n) for n in sorted(data["numjobs"].unique())])
        axis.minorticks_off()
    if baseline is not None:
        _ideal_lines(grid, data, baseline, palette)
    grid.figure.suptitle("Throughput against threads", y=1.03)
    plt.close(grid.figure)
    return grid.figure


def _ideal_lines(grid, data: pd.DataFrame, baseline: pd.DataFrame, palette: dict) -> None:
    for rw, axis in grid.axes_dict.items():
        base = baseline.loc[baseline["rw"] == rw, "baseline_bw_bytes"]
        if base.empty:
            continue
        for layout, devices in data[data["rw"] == rw].groupby("layout")["devices"].first().items():
            axis.axhline(devices * base.iloc[0] / MB, color=palette.get(layout, "grey"), linestyle=":", linewidth=1)


def efficiency(summary: pd.DataFrame) -> plt.Figure:
    """Scaling efficiency (best / (devices x baseline)) per layout and rw; 1.0 is perfect scaling."""
    fig, axis = plt.subplots(figsize=(6, 3.5))
    data = summary.assign(label=summary["layout"] + " (" + summary["devices"].astype(str) + ")")
    sns.barplot(data=data, x="label", y="efficiency", hue="rw", ax=axis)
    axis.axhline(1.0, color="black", linestyle=":", linewidth=1)
    axis.set(xlabel="layout (devices)", ylabel="efficiency", title="Scaling efficiency against N x baseline")
    plt.close(fig)
    return fig


def tax(summary: pd.DataFrame, reference: str) -> plt.Figure:
    """Tax against the reference layout, in percent, per layout and rw (the reference itself is left out)."""
    fig, axis = plt.subplots(figsize=(6, 3.5))
    data = summary[(summary["layout"] != reference) & summary["tax"].notna()]
    data = data.assign(tax_pct=data["tax"] * 100)
    if data.empty:
        axis.text(0.5, 0.5, f"no layout shares devices with {reference}", ha="center", transform=axis.transAxes)
    else:
        sns.barplot(data=data, x="layout", y="tax_pct", hue="rw", ax=axis)
    axis.axhline(0, color="black", linewidth=0.8)
    axis.set(xlabel="layout", ylabel="tax, %", title=f"Tax against {reference} (same devices)")
    plt.close(fig)
    return fig
