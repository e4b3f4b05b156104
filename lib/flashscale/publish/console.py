"""Tables for a terminal: ``analyze``'s table, made to fit a width and read at a glance.

- one unit per column, said once in its header and scaled for the column (``units.column_scale``: kB/s to TB/s,
  IOPS to MIOPS, ns to s): "best MB/s", then "807 (779–836)", every interval in the value's unit;
- a note that would repeat in many cells is said once under the table: a value of one run, with no interval, is
  marked ``*`` (or, where every value is, shown alone with one line saying so); a missing value is "—" with a
  numbered mark, ``—[1]``, and its reason under the table, each reason once;
- columns in the order asked; where the table is wider than ``width``, the columns of ``drop`` are left out, first
  first, until it fits, and the notes say which (``wrap`` folds every line of words to the width).

    table(frame, columns, ...)  the lines of the table and of its notes
    wrap(text, width)           a sentence folded to the width, its later lines indented
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Iterable, Mapping

import pandas as pd

from ..errors import ConfigError
from ..measure.units import MISSING, ONE_RUN, cell, column_scale, in_scale, interval_in, missing, size
from .tables import header as table_header, kind_of

ONE_RUN_MARK = "*"
# Short words for the columns a terminal shows (the unit follows, from the column's scale); else ``tables.header``.
HEADERS = {"rw": "I/O", "bs": "bs", "best_bs": "bs", "best_numjobs": "jobs", "best_iodepth": "QD",
           "best_bw_bytes": "best", "baseline_bw_bytes": "baseline", "best_iops": "best", "baseline_iops": "baseline",
           "reference_bw_bytes": "reference", "reference_iops": "reference", "tax_verdict": "verdict",
           "best_reps": "runs", "best_reps_reason": "runs stopped", "load_flag": "load flag",
           "latency_tax": "latency tax", "latency_reps": "latency runs", "ideal_bw_bytes": "ideal",
           "layout_efficiency": "layout efficiency", "design_tax": "design tax", "baseline_bs": "baseline bs",
           "inside": "agreement", "predicted_limit": "limit", "numjobs": "jobs", "iodepth": "QD",
           "predicted_bw_bytes": "predicted", "measured_bw_bytes": "measured"}
# Kinds the name does not give (``tables.kind_of`` gives the rest).
KINDS = {"best_iops": "iops", "baseline_iops": "iops", "reference_iops": "iops", "ideal_iops": "iops",
         "latency_tax": "percent", "latency_reps": "count", "best_load": "count", "baseline_reps": "count",
         "reference_reps": "count"}


@dataclass
class Notes:
    """What the table says once, under it: the reasons of its missing values, numbered, and lines of its own."""
    reasons: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    def mark(self, reason: str) -> str:
        """The mark of ``reason`` ("[1]"), the same for the same reason wherever it is missing."""
        if reason not in self.reasons:
            self.reasons.append(reason)
        return f"[{self.reasons.index(reason) + 1}]"

    def said(self) -> list[str]:
        return [*self.lines, *(f"[{n}] {reason}" for n, reason in enumerate(self.reasons, start=1))]


def kind(name: str, kinds: Mapping[str, str] | None = None) -> str:
    """What the column ``name`` holds: ``kinds``' word for it, else ``KINDS``', else its name's (``tables.kind_of``)."""
    return (kinds or {}).get(name) or KINDS.get(name) or kind_of(name)


def _header(name: str, scale) -> str:
    words = HEADERS.get(name) or table_header(name)
    if name.startswith("clat_p"):  # clat_p99_ns: "p99 clat", the latency fio measured said with it
        words = f"{name[5:-3].replace('p999', 'p99.9')} clat"
    elif name.startswith("reference_clat_p"):
        words = f"reference {name[15:-3].replace('p999', 'p99.9')} clat"
    return f"{words} {scale[0]}" if scale else words


def _has_bounds(frame: pd.DataFrame, name: str) -> bool:
    return f"{name}_lo" in frame.columns and f"{name}_hi" in frame.columns


def _one_run(frame: pd.DataFrame, name: str) -> pd.Series:
    """The rows whose value of ``name`` has no interval for want of runs: bounds missing where the value is not, on
    a row of fewer than two runs (``best_reps``, where the summary has it)."""
    unbounded = frame[name].notna() & (frame[f"{name}_lo"].isna() | frame[f"{name}_hi"].isna())
    return unbounded & (frame["best_reps"] < 2) if "best_reps" in frame.columns else unbounded


def _cells(frame: pd.DataFrame, name: str, scale, one_run_mark: str, what: str) -> list[str]:
    """The column ``name``, of kind ``what``, as text in ``scale``'s unit (sizes, counts and words as they read)."""
    if pd.api.types.is_object_dtype(frame[name]) or pd.api.types.is_string_dtype(frame[name]) or what == "text":
        return [MISSING if missing(v) else ("—" + one_run_mark if v == ONE_RUN else str(v)) for v in frame[name]]
    if scale is None:
        return [size(v) if what == "size" else cell(v, "count" if what == "count" else what) for v in frame[name]]
    if not _has_bounds(frame, name):
        return [in_scale(v, scale) for v in frame[name]]
    marks = _one_run(frame, name).map({True: one_run_mark, False: ""})
    return [interval_in(v, lo, hi, scale) + mark for v, lo, hi, mark in
            zip(frame[name], frame[f"{name}_lo"], frame[f"{name}_hi"], marks)]


def _one_run_mark(frame: pd.DataFrame, columns: Iterable[str], notes: Notes) -> str:
    """The mark a value of one run carries: ``*`` where some rows are of one run (a line under the table says what
    it means); none where none is, or where every row is (then that line says so instead)."""
    bounded = [c for c in columns if _has_bounds(frame, c)]
    rows = pd.Series(False, index=frame.index)
    for name in bounded:
        rows |= _one_run(frame, name)
    if "tax_verdict" in columns:
        rows |= frame["tax_verdict"].eq(ONE_RUN)
    if not rows.any():
        return ""
    if "best_reps" in frame.columns and (frame["best_reps"] < 2).all():
        notes.lines.append(f"no interval: every value above is of one run ({ONE_RUN})")
        return ""
    notes.lines.append(f"{ONE_RUN_MARK} {ONE_RUN}")
    return ONE_RUN_MARK


def _with_reasons(text: dict[str, list[str]], why: Mapping[str, pd.Series], notes: Notes) -> dict[str, list[str]]:
    """``text`` with each missing value ("—" or "unknown") of a column with reasons marked with its reason's number
    (``notes.mark``): "—[1]"."""
    out = {name: list(cells) for name, cells in text.items()}
    for name, said in why.items():
        if name not in out:
            continue
        for i, reason in enumerate(said):
            if reason and out[name][i] in (MISSING, "unknown"):
                out[name][i] = f"{out[name][i]}{notes.mark(reason)}"
    return out


def _render(text: dict[str, list[str]], headers: dict[str, str]) -> list[str]:
    frame = pd.DataFrame({headers[name]: cells for name, cells in text.items()})
    return [line.rstrip() for line in frame.to_string(index=False).splitlines()]


def _fitted(text: dict[str, list[str]], headers: dict[str, str], width: int | None, drop: Iterable[str],
            why: Mapping[str, pd.Series]) -> tuple[dict[str, list[str]], list[str]]:
    """``text`` without the columns of ``drop``, first first, as long as it (reasons marked) is wider than
    ``width``; and the headers left out."""
    kept, left_out = dict(text), []
    for name in drop:
        if width is None or max(map(len, _render(_with_reasons(kept, why, Notes()), headers)), default=0) <= width:
            break
        if name in kept and len(kept) > 1:
            del kept[name]
            left_out.append(headers[name])
    return kept, left_out


def table(frame: pd.DataFrame, columns: Iterable[str], *, width: int | None = None, drop: Iterable[str] = (),
          reasons: Mapping[str, pd.Series] | None = None, kinds: Mapping[str, str] | None = None) -> list[str]:
    """The lines of ``frame``'s ``columns`` as a terminal shows them (module doc) and its notes under it; ``drop``:
    the columns left out, first first, while the table is wider than ``width`` (None: never); ``reasons``: per
    column, why each of its missing values is missing ("" where none is); ``kinds``: the kind of a column its name
    does not say (``tables.kind_of``). ConfigError naming a column ``frame`` has not."""
    frame = frame.reset_index(drop=True)
    columns = list(columns)
    unknown = [c for c in columns if c not in frame.columns]
    if unknown:
        raise ConfigError(f"no column {unknown} in the table: it has "
                          f"{', '.join(str(c) for c in frame.columns if not str(c).endswith(('_lo', '_hi')))}")
    notes, why = Notes(), {name: list(said) for name, said in (reasons or {}).items()}
    mark = _one_run_mark(frame, columns, notes)
    what = {c: kind(c, kinds) for c in columns}
    scales = {c: column_scale(list(frame[c]), what[c]) if pd.api.types.is_numeric_dtype(frame[c]) else None
              for c in columns}
    headers = {c: _header(c, scales[c]) for c in columns}
    kept, left_out = _fitted({c: _cells(frame, c, scales[c], mark, what[c]) for c in columns}, headers, width, drop,
                             why)
    lines = _render(_with_reasons(kept, why, notes), headers)
    if left_out:
        notes.lines.append(f"not shown, to fit {width} columns: {', '.join(left_out)} (--columns or --wide)")
    return lines + [wrapped for note in notes.said() for wrapped in wrap(note, width)]


def wrap(text: str, width: int | None) -> list[str]:
    """``text`` folded to ``width`` (None: one line), each later line indented by two spaces."""
    if width is None:
        return [text]
    return textwrap.wrap(text, width=width, subsequent_indent="  ", break_on_hyphens=False) or [""]
