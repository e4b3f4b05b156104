"""What a figure shows, in words: the alternative text of every figure a report publishes.

``described(fig)`` is the last step of every function in ``plots``: it gives the figure a ``_repr_mimebundle_``
that IPython calls when the notebook shows the figure, and which adds ``{"image/png": {"alt": <description>}}`` to
the output's metadata (IPython's own PNG formatter still draws the image). ``report.export_html`` writes that
metadata as the ``<img>``'s ``alt``. The description is read off the figure when it is shown: its title, each
panel's title, what is plotted against what (with the scales and the range of the values) and the legend's entries.
Checks run on the figure when it is shown put their findings beside ``alt`` (``drawing`` adds its legend check).
"""
from __future__ import annotations

from typing import Callable

from matplotlib.figure import Figure


def _scaled(label: str, scale: str) -> str:
    return f"{label} ({scale} scale)" if scale != "linear" else label


def _plotted(panels: list) -> list[str]:
    """``bandwidth, MB/s (from 198 to 813) against numjobs (log scale)``: what the panels plot against what, with
    the range of the values over the panels that share their axes."""
    ranges: dict[tuple, list[float]] = {}
    for axis in panels:
        key = (axis.get_ylabel() or "y", axis.get_yscale(), axis.get_xlabel() or "x", axis.get_xscale())
        ranges.setdefault(key, []).extend(value for value in axis.dataLim.intervaly if abs(value) < float("inf"))
    said = []
    for (ylabel, yscale, xlabel, xscale), values in ranges.items():
        span = f"from {min(values):,.3g} to {max(values):,.3g}" if values else ""
        y = _scaled(ylabel, yscale)
        said.append(f"{y}{f' ({span})' if span else ''} against {_scaled(xlabel, xscale)}")
    return said


def _legend_entries(fig: Figure) -> list[str]:
    legends = [*fig.legends, *(axis.get_legend() for axis in fig.axes)]
    entries = [text.get_text() for legend in legends if legend is not None for text in legend.get_texts()]
    return [entry for entry in dict.fromkeys(entries) if entry]


def describe(fig: Figure) -> str:
    """One paragraph saying what ``fig`` shows: title, panels, axes with their ranges, and the legend's entries."""
    panels = [axis for axis in fig.axes if axis.get_visible() and axis.has_data()]
    suptitle = fig._suptitle.get_text() if fig._suptitle is not None else ""  # get_suptitle: matplotlib 3.8+
    title = suptitle or next((axis.get_title() for axis in panels if axis.get_title()), "")
    words = [f"Figure: {title}." if title else "Figure."]
    if len(panels) > 1:
        words.append(f"{len(panels)} panels: " + "; ".join(axis.get_title() or f"panel {i + 1}"
                                                          for i, axis in enumerate(panels)) + ".")
    pairs = _plotted(panels)
    if pairs:
        words.append(("Each shows " if len(panels) > 1 and len(pairs) == 1 else "Shows ") + "; ".join(pairs) + ".")
    entries = _legend_entries(fig)
    if entries:
        words.append("Legend: " + ", ".join(entries) + ".")
    return " ".join(words)


class _AltText:
    """A figure's ``_repr_mimebundle_``: no data of its own, only the PNG's alt text in the output's metadata, and
    what each check found (name -> its result on the figure)."""

    def __init__(self, fig: Figure, text: str | None, checks: dict[str, Callable[[Figure], object]]):
        self.fig, self.text, self.checks = fig, text, checks

    def __call__(self, include=None, exclude=None) -> tuple[dict, dict]:
        found = {name: check(self.fig) for name, check in self.checks.items()}
        return {}, {"image/png": {"alt": self.text or describe(self.fig), **found}}


def described(fig: Figure, text: str | None = None, checks: dict[str, Callable[[Figure], object]] | None = None
              ) -> Figure:
    """``fig``, shown with ``text`` (default: ``describe(fig)`` when it is shown) as its alternative text, and the
    result of each of ``checks`` on it (``drawing.legend_overlaps``) under its name beside it."""
    fig._repr_mimebundle_ = _AltText(fig, text, checks or {})
    return fig
