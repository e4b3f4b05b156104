"""Two campaigns compared (``analysis.campaign_diff``), shown: the text ``flashscale compare`` prints and its figure.

    text(changed, alone, differs, ...)   what differs first, then the changes (largest first), the sentence; each
                                         line at most ``width`` characters
    changes_table(changed)               the changes as the report's table shows them: one row a point and metric
    sentences(changed, alone, said)      the verdicts in words: the count, then each one beyond the margin
    changes_figure(changed, margin)      each change with its interval, the margin's band shaded, by verdict
    save(fig, path)                      the figure written as .png or .svg
"""
from __future__ import annotations

import math
import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from .drawing import done, panels, series_colours, styled
from ..analysis.campaign_diff import COLUMNS
from ..analysis.table_checks import POINT
from ..errors import ConfigError
from ..measure.units import ONE_RUN, cell, percent, rate, size

KINDS = {"bandwidth": "bandwidth", "iops": "iops", "p99 latency": "ns"}
SHORT = {ONE_RUN: "one run"}


def point_label(row: dict, same: tuple[str, ...] = ()) -> str:
    """A point in few characters: "md-raid0 x4 read 1 MiB j4 q1", any other key after it ("hosts=2"); the keys
    of ``same`` are left out (``same_keys``: said once for every point)."""
    shown = {"layout": "{}", "devices": "x{}", "rw": "{}", "bs": "{}", "numjobs": "j{}", "iodepth": "q{}"}
    words = [shown[k].format(_bs(row[k]) if k == "bs" else row[k]) for k in POINT if k in row and k not in same]
    words += [f"{k}={row[k]}" for k in row if k not in (*POINT, *COLUMNS, "side", *same)]
    return " ".join(words) or "the one point"


def _bs(value) -> str:
    try:
        return size(float(value))
    except ValueError:
        return str(value)


def _value(value: float, metric: str) -> str:
    return rate(value) if metric == "bandwidth" else cell(value, KINDS[metric])


def _change(row: dict) -> str:
    """"-5.0% [-5.3, -4.8]": the change and its interval, in %."""
    if not math.isfinite(float(row["change_lo"])):
        return percent(row["change"], signed=True)
    return f"{percent(row['change'], signed=True)} [{100 * row['change_lo']:+.1f}, {100 * row['change_hi']:+.1f}]"


def _verdict(row: dict) -> str:
    verdict = SHORT.get(row["verdict"], row["verdict"])
    runs = row.get("runs_to_decide")
    if verdict == "inconclusive" and runs is not None and not pd.isna(runs):
        return f"{verdict} (~{int(runs)} runs)"
    if verdict == "inconclusive" and row.get("held") is False:
        return f"{verdict} (family)"
    return verdict


def _fit(cells: list[str], widths: list[int]) -> str:
    return "  ".join(c[:w].ljust(w) for c, w in zip(cells, widths)).rstrip()


def same_keys(frame: pd.DataFrame) -> tuple[str, ...]:
    """The keys that hold one value in every row of ``frame`` (said once, not on each line)."""
    if frame.empty:
        return ()
    return tuple(k for k in frame.columns if k not in (*COLUMNS, "side") and frame[k].nunique() <= 1)


HEAD = ["point", "metric", "A", "B", "change [95%]", "verdict"]


def _shown(changed: pd.DataFrame) -> list[list[str]]:
    """Each change as the text of ``HEAD``'s columns, the keys every point shares left out of its label."""
    same = same_keys(changed)
    return [[point_label(r, same), r["metric"], _value(r["a"], r["metric"]), _value(r["b"], r["metric"]),
             _change(r), _verdict(r)] for r in changed.to_dict("records")]


def changes_table(changed: pd.DataFrame) -> pd.DataFrame:
    """The changes, largest first, as text in ``HEAD``'s columns (the report's table; the terminal's is ``text``)."""
    return pd.DataFrame(_shown(changed), columns=HEAD)


def sentences(changed: pd.DataFrame, alone: pd.DataFrame, said: str) -> list[str]:
    """The verdicts in words: ``said`` (``campaign_diff.sentence``), then each slower and faster one, largest first
    ("64 KiB bandwidth: slower beyond the 2% margin, -5.0% [-5.3, -4.8]"), then whether every point is shared."""
    lines = [said]
    for row, cells in zip(changed.to_dict("records"), _shown(changed)):
        if row["verdict"] in ("slower", "faster"):
            lines.append(f"{cells[0]} {row['metric']}: {row['said']}, {cells[4]}.")
    if not len(changed):
        return lines
    if not lines[1:]:
        lines.append("No verdict is slower or faster: every change is within the margin or not yet decided.")
    if alone.empty:
        lines.append("Every point was measured by both campaigns.")
    return lines


def _changes_lines(changed: pd.DataFrame, width: int) -> list[str]:
    shown, head = _shown(changed), HEAD
    widths = [max(len(c[i]) for c in [head, *shown]) for i in range(len(head))]
    over = sum(widths) + 2 * (len(widths) - 1) - width
    if over > 0:  # the point's label gives way first
        widths[0] = max(12, widths[0] - over)
    return [_fit(head, widths), *(_fit(c, widths) for c in shown)]


def text(changed: pd.DataFrame, alone: pd.DataFrame, differs: pd.DataFrame, margin_note: str, said: str,
         failed: pd.DataFrame, sides, width: int = 100, most_differences: int = 20) -> str:
    """What ``flashscale compare`` prints as a table (module doc): at most ``most_differences`` lines of what
    differs and of the points in one only."""
    lines = [f"A: {sides[0].label}"[:width], f"B: {sides[1].label}"[:width], ""]
    if differs.empty:
        lines.append("What differs: nothing, in what both campaigns recorded.")
    else:
        lines.append(f"What differs ({len(differs)}; A -> B):")
        name = min(36, max(len(w) for w in differs["what"]))
        for r in differs.head(most_differences).itertuples():
            lines.append(f"  {r.what[:name].ljust(name)}  {r.a[:28]} -> {r.b[:28]}"[:width])
        if len(differs) > most_differences:
            lines.append(f"  and {len(differs) - most_differences} more (--format json lists them all)")
    same = same_keys(changed)
    first = changed.iloc[0].to_dict() if len(changed) else {}
    lines += ["", f"B against A, {margin_note}; largest changes first."[:width]]
    lines += [f"Every point: {point_label({k: first[k] for k in same})}."[:width]] if same else []
    lines += _changes_lines(changed, width) if not changed.empty else ["  (no shared point)"]
    if not alone.empty:
        lines += ["", "Points in one only:"]
        lines += [f"  only in {r['side']}: {point_label(r)}"[:width]
                  for r in alone.head(most_differences).to_dict("records")]
        if len(alone) > most_differences:
            lines.append(f"  and {len(alone) - most_differences} more (--format json lists them all)")
    lines += ["", *textwrap.wrap(said, width)]
    if len(failed):
        lines.append(f"Gate failed: {len(failed)} verdict(s) as --fail-on names them.")
    return "\n".join(lines)


@styled
def changes_figure(changed: pd.DataFrame, margin: float) -> plt.Figure:
    """Each change (B / A - 1, %) as a point with its 95% interval, one row per point and metric, coloured by
    verdict; the margin's band shaded around 0."""
    height = max(2.5, 0.28 * len(changed) + 1)
    fig, axes = panels(width=8, height=height)
    axis = axes[0][0]
    if changed.empty:
        axis.text(0.5, 0.5, "no shared point", ha="center", transform=axis.transAxes)
        return done(fig, "B against A")
    order = changed.iloc[::-1].reset_index(drop=True)
    colours = dict(zip(["slower", "faster", "equivalent", "inconclusive", ONE_RUN], series_colours(5)))
    axis.axvspan(-100 * margin, 100 * margin / (1 - margin), color="0.9", label=f"margin {100 * margin:g}%")
    for verdict, rows in order.groupby("verdict", sort=False):
        low = (rows["change"] - rows["change_lo"]).fillna(0) * 100
        high = (rows["change_hi"] - rows["change"]).fillna(0) * 100
        axis.errorbar(rows["change"] * 100, rows.index, xerr=[low, high], fmt="o", color=colours.get(verdict),
                      label=verdict, capsize=2)
    axis.set_yticks(range(len(order)), [f"{point_label(r)} {r['metric']}" for r in order.to_dict("records")],
                    fontsize=7)
    axis.axvline(0, color="0.4", linewidth=0.8)
    axis.set_xlabel("change of B from A, % (95% interval); latency: + is slower")
    return done(fig, "B against A", "verdict")


def save(fig: plt.Figure, path: str | Path) -> None:
    """``fig`` written to ``path`` (.png or .svg); ConfigError naming another suffix."""
    path = Path(path)
    if path.suffix not in (".png", ".svg"):
        raise ConfigError(f"--figure {str(path)!r}: expected a .png or .svg file")
    fig.savefig(path)
