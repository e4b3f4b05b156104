"""What every figure of ``plots`` and ``rate_plots`` draws the same way: one style, one colour per layout, the
legend outside the panels, its title and alternative text, the 95% interval of each point's mean as error bars (the
tables' own, ``stats.repetition_stats``), n in the legend.

    @styled                              the figure function runs in ``STYLE`` (sizes, fonts, grid)
    panels(cols, rows, width, height)    a figure of panels, constrained layout, room below for the legend
    layout_colour(layout, shade, of)     the layout's colour, the same in every figure (lighter shades: fewer devices)
    layout_colours(lines)                per (layout, device count) line: its layout's colour in its shade
    rw_colour(rw, shade, of)             the colour of an rw mode (read, write, ...) where rws are the series
    series_colours(n)                    n colours for series that are neither layouts nor rws (sources, runs)
    from_zero(axes)                      y from 0 (bandwidth, IOPS, rates), once the data is drawn
    numjobs_axis(axis, numjobs)          x: numjobs on a log scale, a tick at each measured count
    done(fig, title, legend_title)       title, one legend below the panels, closed in pyplot, described
    legend_overlaps(fig)                 every legend that lies over plotted data, in words ([] when none does)
    spread(rows, values)                 per sweep point of the rate rows: mean, ``{value}_lo``, ``_hi``, ``n``
    with_spread(points, table, values)   derived points with the 95% interval of their repetitions in ``table``
    bounds(mean, low, high)              the (below, above) lengths of an error bar, never negative
    interval_bars(mean, low, high)       ``bounds`` of an interval, 0 where there is none (one run)
    n_text(n)                            'n=3' or 'n=2-3'

A shown figure carries ``legend_overlaps(fig)`` in its PNG's metadata, under ``LEGEND_KEY``, beside its alt text:
the report's reader test fails on a figure whose list is not empty.
"""
from __future__ import annotations

import functools
import zlib

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.collections import Collection, PathCollection
from matplotlib.colors import to_rgb
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.path import Path
from matplotlib.transforms import Bbox

from ..analysis.baseline_and_tax import POINT, rates
from ..analysis.stats import repetition_stats
from ..arrays.layouts import DEVICE_LAYOUTS
from .alt_text import described

INTERVAL_BARS = "95% interval of the mean, as the tables give it"  # what every figure's error bars are
LEGEND_KEY = "legend_overlaps"  # a shown figure's image/png metadata: legend_overlaps(fig), [] when clear
PANEL_WIDTH, PANEL_HEIGHT, LEGEND_ROOM = 5.0, 3.0, 0.8  # inches: one panel, and the strip below for the legend
STYLE = {
    "figure.dpi": 100, "savefig.dpi": "figure", "figure.facecolor": "white", "savefig.facecolor": "white",
    "font.size": 10, "axes.titlesize": 10, "axes.labelsize": 10, "figure.titlesize": 12,
    "xtick.labelsize": 9, "ytick.labelsize": 9, "legend.fontsize": 9, "legend.title_fontsize": 9,
    "legend.frameon": False, "axes.grid": True, "axes.grid.axis": "y", "grid.color": "0.88", "grid.linewidth": 0.8,
    "axes.axisbelow": True, "axes.spines.top": False, "axes.spines.right": False, "lines.linewidth": 1.6,
    "lines.markersize": 5, "errorbar.capsize": 3,
}
LAYOUTS = [*DEVICE_LAYOUTS, "local", "nbd"]  # the order that gives each its colour: never reorder, only append
_LAYOUT_PALETTE = [sns.color_palette("colorblind", 10)[i] for i in (0, 1, 2, 3, 4, 5, 6, 9, 7)]  # no yellow
_OTHER_PALETTE = sns.color_palette("dark", 10)  # names that are not a known layout, by a hash of the name
RWS = {"read": "0.25", "write": "0.6", "randread": "#2c5d8a", "randwrite": "#b5651d", "rw": "#5b3f8c",
       "readwrite": "#5b3f8c", "randrw": "#2e7d4f", "trim": "#7a5230"}


def styled(figure_function):
    """``figure_function`` run in ``STYLE``: every figure of ``plots`` and ``rate_plots`` is drawn in it."""
    @functools.wraps(figure_function)
    def in_style(*args, **kwargs):
        with mpl.rc_context(STYLE):
            return figure_function(*args, **kwargs)
    return in_style


def panels(cols: int = 1, rows: int = 1, *, width: float = PANEL_WIDTH, height: float = PANEL_HEIGHT,
           **subplots) -> tuple[plt.Figure, np.ndarray]:
    """A figure of ``rows`` x ``cols`` panels of ``width`` x ``height`` inches each (the axes: a 2-D array), in
    constrained layout with ``LEGEND_ROOM`` more for the legend ``done`` puts below them."""
    cols, rows = max(1, cols), max(1, rows)
    return plt.subplots(rows, cols, figsize=(width * cols, height * rows + LEGEND_ROOM), squeeze=False,
                        layout="constrained", **subplots)


def _shaded(colour, shade: int, of: int):
    """``colour`` itself as the last of ``of`` shades, lighter (mixed with white) for the earlier ones."""
    if of <= 1:
        return to_rgb(colour)
    white = (of - 1 - shade) / (of - 1) * 0.55
    return tuple(c + (1 - c) * white for c in to_rgb(colour))


def layout_colour(layout: str, shade: int = 0, of: int = 1):
    """The colour of ``layout`` in every figure ('jbod x2' is jbod's); of several lines of one layout (device
    counts), line ``shade`` of ``of``, lighter for the first."""
    name = str(layout).split(" ")[0]
    if name in LAYOUTS:
        colour = _LAYOUT_PALETTE[LAYOUTS.index(name) % len(_LAYOUT_PALETTE)]
    else:
        colour = _OTHER_PALETTE[zlib.crc32(name.encode()) % len(_OTHER_PALETTE)]
    return _shaded(colour, shade, of)


def layout_colours(lines) -> dict:
    """Per (layout, count) of ``lines`` (device or host counts, numjobs): the layout's colour, lighter for the
    smaller counts of the same layout."""
    pairs = sorted(set(map(tuple, lines)))
    counts = {layout: [c for name, c in pairs if name == layout] for layout, _ in pairs}
    return {(layout, c): layout_colour(layout, counts[layout].index(c), len(counts[layout])) for layout, c in pairs}


def rw_colour(rw: str, shade: int = 0, of: int = 1):
    """The colour of an rw mode where the rws are a figure's series (bars per rw, lines per rw)."""
    colour = RWS.get(str(rw), _OTHER_PALETTE[zlib.crc32(str(rw).encode()) % len(_OTHER_PALETTE)])
    return _shaded(colour, shade, of)


def series_colours(n: int) -> list:
    """Colours for ``n`` ordered series that are neither layouts nor rws (repetitions, devices, sources, modes)."""
    return sns.color_palette("crest", max(1, n))


def numjobs_axis(axis, numjobs) -> None:
    """``axis``'s x: numjobs on a log scale, a tick at each measured count, labelled as a plain number."""
    ticks = sorted(set(int(n) for n in numjobs))
    axis.set_xscale("log")
    axis.set_xticks(ticks, labels=[str(n) for n in ticks])
    axis.minorticks_off()


def from_zero(axes) -> None:
    """Each of ``axes`` (a panel or an array of them) with its y axis from 0, drawn after its data: bandwidth,
    IOPS and rates are read against zero, never against the lowest point."""
    for axis in np.ravel(axes):
        axis.set_ylim(bottom=0)


def _legend_entries(fig: plt.Figure) -> tuple[list, list, str | None]:
    """The handles and labels of every panel (seaborn's own legends taken down), each label once, the data's
    before the bands', and the first legend title found."""
    handles, labels, title = [], [], None
    for axis in fig.axes:
        legend = axis.get_legend()
        if legend is not None:
            found = list(zip(legend.legend_handles, [t.get_text() for t in legend.get_texts()]))
            title = title or legend.get_title().get_text() or None
            legend.remove()
        else:
            found = list(zip(*axis.get_legend_handles_labels()))
        for handle, label in found:
            if label and not label.startswith("_") and label not in labels:
                handles.append(handle)
                labels.append(label)
    order = sorted(range(len(handles)), key=lambda i: isinstance(handles[i], Patch))  # bands last
    return [handles[i] for i in order], [labels[i] for i in order], title


def done(fig: plt.Figure, title: str, legend_title: str | None = None) -> plt.Figure:
    """``fig`` titled, with one legend of every panel's entries below the panels (never over their data),
    closed in pyplot and described: its alt text and ``legend_overlaps`` go into the shown PNG's metadata."""
    fig.suptitle(title)
    handles, labels, found = _legend_entries(fig)
    if handles:
        columns = max(1, min(len(labels), int(fig.get_figwidth() // 2.4)))
        fig.legend(handles, labels, loc="outside lower center", ncols=columns, title=legend_title or found)
    plt.close(fig)
    return described(fig, checks={LEGEND_KEY: legend_overlaps})


def done_from_zero(fig: plt.Figure, axis, title: str, legend_title: str | None = None, **labels) -> plt.Figure:
    """The end of a one-panel figure of rates: ``axis`` labelled (``labels``: matplotlib's ``xlabel``, ``ylabel``,
    ...), its y axis from 0 (``from_zero``), and ``fig`` finished by ``done``."""
    axis.set(**labels)
    from_zero(axis)
    return done(fig, title, legend_title)


# The legend check: a legend's box against what the panels draw, in display coordinates after drawing


def _crossing(starts: np.ndarray, ends: np.ndarray, box: Bbox) -> np.ndarray:
    """Which segments (``starts`` to ``ends``, display coordinates) pass through ``box`` (Liang-Barsky)."""
    delta = ends - starts
    low, high = np.zeros(len(starts)), np.ones(len(starts))
    inside = np.isfinite(starts).all(axis=1) & np.isfinite(ends).all(axis=1)
    for p, q in ((-delta[:, 0], starts[:, 0] - box.x0), (delta[:, 0], box.x1 - starts[:, 0]),
                 (-delta[:, 1], starts[:, 1] - box.y0), (delta[:, 1], box.y1 - starts[:, 1])):
        with np.errstate(divide="ignore", invalid="ignore"):
            t = q / p
        inside &= ~((p == 0) & (q < 0))
        low = np.where(p < 0, np.maximum(low, t), low)
        high = np.where(p > 0, np.minimum(high, t), high)
    return inside & (low <= high)


def _points_in(points: np.ndarray, box: Bbox) -> bool:
    points = points[np.isfinite(points).all(axis=1)]
    return bool(((points[:, 0] >= box.x0) & (points[:, 0] <= box.x1) &
                 (points[:, 1] >= box.y0) & (points[:, 1] <= box.y1)).any())


def _path_over(vertices: np.ndarray, box: Bbox, filled: bool) -> bool:
    """A path's outline (display coordinates) through ``box``, or, filled, ``box``'s centre inside it."""
    if len(vertices) == 0:
        return False
    if _points_in(vertices, box) or (len(vertices) > 1 and _crossing(vertices[:-1], vertices[1:], box).any()):
        return True
    return filled and len(vertices) > 2 and Path(vertices).contains_point(
        ((box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2))


def _over(artist, box: Bbox) -> bool:
    """Whether what ``artist`` (a line, patch or collection of a panel) draws lies in ``box``."""
    if isinstance(artist, Line2D):
        xy = artist.get_transform().transform(artist.get_xydata())
        joined = artist.get_linestyle() not in ("None", "", " ") and len(xy) > 1
        return _points_in(xy, box) or (joined and bool(_crossing(xy[:-1], xy[1:], box).any()))
    if isinstance(artist, PathCollection):  # scatter: markers at the offsets
        offsets = artist.get_offset_transform().transform(artist.get_offsets())
        return len(offsets) > 0 and _points_in(offsets, box)
    if isinstance(artist, Collection):  # error bars, hlines, fill_between
        filled = len(artist.get_facecolor()) > 0 and float(np.max(np.asarray(artist.get_facecolor())[:, 3])) > 0
        transform = artist.get_transform()
        return any(_path_over(transform.transform(path.vertices), box, filled) for path in artist.get_paths())
    extent = artist.get_window_extent()  # patches: bars, bands
    return bool(np.isfinite(extent.get_points()).all()) and extent.overlaps(box)


def _named(artist, owners: dict) -> str:
    """'Line2D 'jbod x4 (n=3)'': the artist's kind and its label, or the label of the container (error bars, bars)
    it is part of."""
    label = artist.get_label() or ""
    label = label if not label.startswith("_") else owners.get(id(artist), "")
    kind = type(artist).__name__
    return f"{kind} {label!r}" if label and not label.startswith("_") else kind


def legend_overlaps(fig: plt.Figure) -> list[str]:
    """Every legend of ``fig`` (the figure's and the panels') that lies over plotted data, in words: where its
    box, after drawing, meets a line's points or segments, a bar, a band or a collection (error bars, filled
    areas, scatter) inside a panel. [] when every legend is clear."""
    fig.draw_without_rendering()
    found = []
    legends = [*fig.legends, *(axis.get_legend() for axis in fig.axes if axis.get_legend() is not None)]
    for legend in legends:
        box = legend.get_window_extent()
        name = legend.get_title().get_text() or ", ".join(t.get_text() for t in legend.get_texts()[:2])
        for number, axis in enumerate(fig.axes, start=1):
            meet = Bbox.intersection(box, axis.bbox)  # what a panel draws is clipped to it
            if meet is None:
                continue
            owners = {id(child): c.get_label() for c in axis.containers for child in c.get_children()}
            for artist in (*axis.lines, *axis.patches, *axis.collections):
                if artist.get_visible() and _over(artist, meet):
                    found.append(f"legend {name!r} over {_named(artist, owners)} in panel {number} "
                                 f"({axis.get_title() or 'untitled'})")
    return list(dict.fromkeys(found))


# The spread of repetitions


def spread(rows: pd.DataFrame, values=("bw_bytes",)) -> pd.DataFrame:
    """Per sweep point (POINT) of ``rows`` (rate rows, ``core.rates``): for each of ``values`` its mean (named as
    the value) and the 95% interval of the mean, ``{value}_lo`` and ``{value}_hi`` (``stats.repetition_stats``: the
    tables' own; NaN for one run); ``n`` repetitions."""
    found = [repetition_stats(rows, value)[[*POINT, "reps", value, f"{value}_lo", f"{value}_hi"]]
             for value in values if value in rows.columns]
    out = functools.reduce(lambda a, b: a.merge(b, on=[*POINT, "reps"], validate="one_to_one"), found)
    return out.rename(columns={"reps": "n"})


def with_spread(points: pd.DataFrame, table: pd.DataFrame, values=("bw_bytes",)) -> pd.DataFrame:
    """``points`` (one row per sweep point: POINT columns) with ``{value}_lo``, ``{value}_hi`` (the 95% interval of
    its mean) and ``n`` from the repetitions of each point in ``table`` (a results table; runs too short to time are
    no rate: ``core.rates``)."""
    found = spread(rates(table), values).drop(columns=[v for v in values if v in points.columns])
    keep = [c for c in points.columns if c not in found.columns or c in POINT]
    return points[keep].merge(found, on=POINT, how="left", validate="one_to_one")


def interval_bars(mean, low, high) -> list:
    """``bounds`` of an interval from ``low`` to ``high`` around ``mean``, none (0 both ways) where it is NaN: a
    point of one run has no interval."""
    below, above = bounds(mean, low, high)
    return [np.nan_to_num(below, nan=0.0), np.nan_to_num(above, nan=0.0)]


def bounds(mean, low, high) -> list:
    """The lengths below and above ``mean`` of an error bar from ``low`` to ``high`` (numbers or columns), clipped
    at 0 so a bar never points the wrong way."""
    return [np.clip(np.asarray(mean, float) - np.asarray(low, float), 0, None),
            np.clip(np.asarray(high, float) - np.asarray(mean, float), 0, None)]


def n_text(n: pd.Series) -> str:
    n = pd.Series(n).dropna()
    if n.empty:
        return "n=?"
    low, high = int(n.min()), int(n.max())
    return f"n={low}" if low == high else f"n={low}-{high}"
