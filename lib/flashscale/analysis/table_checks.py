"""The input checks of the analysis: what ``core.measured`` refuses, naming the row, before any number is computed.

A results table written by hand or by an older version can hold a blank rw, a fractional device count, a rate of
zero or a point measured twice under one ``rep``; each would give a wrong number silently (an infinite efficiency,
two repetitions that are one). ``checked(rows)`` refuses them with the bad value and its row named; the CLI turns
the ``AnalysisError`` into one line on stderr.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import AnalysisError

POINT = ["layout", "devices", "rw", "bs", "numjobs", "iodepth"]
REQUIRED = [*POINT, "bw_bytes"]
WARMUP_TEXT = {"true": True, "1": True, "1.0": True, "yes": True, "false": False, "0": False, "0.0": False, "no": False}
# What else names a point beside POINT, when a table has it (metadata runs, shared-file modes, study stages, hosts,
# precondition rows): two rows that differ only here are different points, not repetitions of one.
POINT_EXTRAS = ["nrfiles", "variant", "stage", "host", "phase"]
COUNTS = ["devices", "bs", "numjobs", "iodepth"]
SHOWN_COLUMNS = 20  # of a table's columns, those a refusal names


def check_columns(frame: pd.DataFrame) -> None:
    """Refuse a table without the columns the analysis needs (``REQUIRED``), naming those missing and (the first
    ``SHOWN_COLUMNS``) those it has; every analysis calls it before it reads a column."""
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        has = [str(c) for c in frame.columns[:SHOWN_COLUMNS]]
        more = f" and {len(frame.columns) - SHOWN_COLUMNS} more" if len(frame.columns) > SHOWN_COLUMNS else ""
        raise AnalysisError(f"results lack column(s) needed for the analysis: {', '.join(map(repr, missing))} "
                            f"(the table has {', '.join(map(repr, has)) or 'no columns'}{more})")


def _where(frame: pd.DataFrame, label) -> str:
    """A row named for a message: its index label, its point and its rep."""
    row = frame.loc[label]
    keys = [*POINT, *(["rep"] if "rep" in frame.columns else [])]
    return f"row {label} (" + ", ".join(f"{k}={_plain(row[k])!r}" for k in keys) + ")"


def _plain(value):
    """A cell as Python writes it in a message (numpy's 1, not np.int64(1))."""
    return value.item() if isinstance(value, np.generic) else value


def warmup_mask(frame: pd.DataFrame) -> pd.Series:
    """True where a row is a warm-up run. Accepts bools, 0/1 and the words true/false/yes/no (CSV); a blank or any
    other cell is refused: counting it as measured could let a warm-up set the best point, dropping it could lose a
    repetition, and only the table's author knows which it was."""
    column = frame["warmup"]
    if pd.api.types.is_bool_dtype(column) and not column.isna().any():
        return column.astype(bool)
    text = column.astype("string").str.strip().str.lower()
    mask = text.map(WARMUP_TEXT, na_action="ignore")
    bad = mask.isna()
    if bad.any():
        label = bad[bad].index[0]
        raise AnalysisError(
            f"results have {int(bad.sum())} row(s) whose warmup is neither true nor false "
            f"({_plain(column.loc[label])!r} at {_where(frame, label)}): write true or false in every row"
        )
    return mask.astype(bool)


def _checked_counts(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with devices, bs, numjobs and iodepth as int64; a blank, fractional or non-positive count is refused."""
    out = rows.copy()
    for name in COUNTS:
        values = pd.to_numeric(rows[name], errors="coerce").astype("float64")
        bad = ~(np.isfinite(values) & (values > 0) & (values == np.floor(values)))
        if bad.any():
            label = bad[bad].index[0]
            raise AnalysisError(
                f"results have {int(bad.sum())} row(s) whose {name} is not a whole number above 0 "
                f"({_plain(rows.loc[label, name])!r} at row {label})"
            )
        out[name] = values.astype("int64")
    return out


def _check_names(rows: pd.DataFrame) -> None:
    """Refuse a layout or rw that is blank or not text: it names nothing a point could be grouped by."""
    for name in ("layout", "rw"):
        bad = ~rows[name].map(lambda v: isinstance(v, str) and bool(v.strip())).astype(bool)
        if bad.any():
            label = bad[bad].index[0]
            raise AnalysisError(f"results have {int(bad.sum())} row(s) whose {name} is blank or not a name "
                                f"({_plain(rows.loc[label, name])!r} at row {label})")


def _checked_rates(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with bw_bytes as float64; a blank, non-numeric, infinite, zero or negative rate is refused."""
    bw = pd.to_numeric(rows["bw_bytes"], errors="coerce").astype("float64")
    bad = ~(np.isfinite(bw) & (bw > 0))
    if bad.any():
        label = bad[bad].index[0]
        raise AnalysisError(
            f"results have {int(bad.sum())} row(s) with a missing or negative bw_bytes, or a zero, infinite or "
            f"non-numeric one ({_plain(rows.loc[label, 'bw_bytes'])!r} at {_where(rows, label)}); a run that moved no data measured nothing, "
            f"and a zero or infinite rate would give an infinite efficiency or a 100% tax"
        )
    return rows.assign(bw_bytes=bw)


def _check_unique(rows: pd.DataFrame) -> None:
    """Refuse two measured rows of one point with the same rep: they would count as two repetitions."""
    if "rep" not in rows.columns:
        return
    keys = [*POINT, *[c for c in POINT_EXTRAS if c in rows.columns], "rep"]
    twice = rows.duplicated(keys, keep="first")
    if twice.any():
        label = twice[twice].index[0]
        raise AnalysisError(
            f"results have {int(twice.sum())} measured row(s) repeating a point and rep already seen "
            f"({_where(rows, label)}): a repeated row is not another repetition; remove the copies"
        )


def checked(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` (measured rows) checked: a blank layout or rw, a count (devices, bs, numjobs, iodepth) that is not a
    whole number above 0, a ``bw_bytes`` that is not a finite rate above 0, and two rows of one point (``POINT`` and
    those of ``POINT_EXTRAS`` present) and ``rep`` are refused, naming the row. Counts come back int64 and
    ``bw_bytes`` float64, the index reset."""
    _check_names(rows)
    rows = _checked_rates(_checked_counts(rows))
    _check_unique(rows)
    return rows.reset_index(drop=True)
