"""Tables for people: every table a report publishes goes through ``show``, the one place that formats them.

The analysis keeps bytes/s, bytes, nanoseconds and fractions (units in the column names); ``show`` turns a frame
into a table a storage engineer reads at a glance:

- bandwidth in MB/s (GB/s from 10 GB/s on), sizes in KiB/MiB/GiB, times in µs/ms/s, fractions in %, counts with
  thousands separators, about three significant digits and never an e-notation;
- a value with its interval when the frame has ``<column>_lo`` and ``<column>_hi``: "802 MB/s (798–806)", and
  "379 MB/s (one run: no interval)" where the bounds are missing (fewer than two runs), never a zero-width one;
- words for headers (``HEADERS``; otherwise the name without its unit, underscores as spaces);
- no index column (a pivot's index becomes columns);
- the reference row marked: "jbod (reference)", in bold.

A column's kind comes from its name (``kind_of``: ``*_bw_bytes`` is a bandwidth, ``bs`` a size, ``tax`` a
fraction shown in %, ...); ``kinds`` names it where the name does not say; ``values`` for every column of a pivot
or a group that is not one of its keys (each under its own name; in a plain table, each the name does not place);
``row_kind`` a column that names each row's quantity. Each cell is formatted by ``measure.units``, the one
formatter of numbers, so a sentence reads as the table does.
"""
from __future__ import annotations

from typing import Iterable, Mapping

import pandas as pd

from ..measure.units import DASH, KINDS, ONE_RUN, bandwidth_scale as _bandwidth_scale, cell, missing as _missing


# Column name -> header, where the name is not already the word (a unit suffix is dropped by ``header``).
HEADERS = {
    "rw": "I/O", "bs": "block size", "numjobs": "jobs", "iodepth": "queue depth", "best_bw_bytes": "best",
    "baseline_bw_bytes": "baseline", "bw_bytes": "bandwidth", "best_numjobs": "jobs at best",
    "best_iodepth": "queue depth at best", "best_bs": "block size at best", "best_reps": "runs",
    "best_reps_reason": "runs stopped", "tax_test": "tax test", "baseline_reps": "baseline runs",
    "tax_verdict": "verdict", "tax_reps_needed": "runs a side to decide", "iops": "IOPS",
    "in_flight": "I/Os in flight", "littles_ratio": "Little's law ratio", "clat_mean_ns": "mean latency",
    "clat_p99_ns": "p99 latency", "p99_us": "p99 latency", "latency_us": "mean latency",
    "latency_rate": "rate from latency", "runtime_ms": "runtime", "knee_numjobs": "knee (jobs)",
    "plateau_bw_bytes": "plateau", "usl_sigma": "USL σ (contention)", "usl_kappa": "USL κ (coherency)",
    "n_to_n_bw_bytes": "N files (N-to-N)", "n_to_1_bw_bytes": "one shared file (N-to-1)",
    "expected_bytes": "expected size", "bytes_ok": "size as expected", "within_caps": "within the caps",
    "steady_round": "steady from round", "numa_node": "NUMA node", "jobs_per_host": "jobs per host",
    "slope_efficiency": "efficiency per added device", "device_counts": "device counts", "fit_note": "note",
    "fraction": "of the truth", "value_bytes": "application", "fio_bytes": "fio", "baseline_bs": "block size",
    "baseline_numjobs": "jobs", "baseline_iodepth": "queue depth", "baseline_layout": "layout",
    "bw_bytes_median": "median", "bw_bytes_std": "deviation", "bw_bytes_cv": "coefficient of variation",
    "cv": "coefficient of variation", "std": "deviation", "saturating_numjobs": "jobs to saturate",
    "saturating_iodepth": "queue depth to saturate", "one_job_bw_bytes": "one job", "one_job_fraction":
    "one job, of the best", "reached": "95% reached", "predicted_bw_bytes": "predicted", "measured_bw_bytes":
    "measured", "predicted_limit": "binding limit", "inside": "against the prediction",
}
SUFFIXES = {"_bw_bytes": "bandwidth", "_bps": "bandwidth", "_bytes": "size", "_ns": "ns", "_us": "us", "_ms": "ms",
            "_s": "s", "_iops": "iops", "_reps": "count", "_per_s": "rate"}
PERCENT = {"efficiency", "tax", "cv", "fraction", "difference", "design_tax", "spread"}
COUNTS = {"devices", "numjobs", "iodepth", "hosts", "files", "round", "reps", "n", "scale", "in_flight", "builds",
          "knee_numjobs", "best_numjobs", "best_iodepth", "tax_reps_needed", "steady_round", "jobs_per_host",
          "numa_node", "saturating_numjobs", "saturating_iodepth", "baseline_numjobs", "baseline_iodepth"}
SIZES = {"bs", "best_bs", "baseline_bs", "size", "file_size"}
STATISTICS = ("_lo", "_hi", "_min", "_max", "_mean", "_median", "_std", "_spread")


def kind_of(name: str) -> str:
    """What the column ``name`` holds, from the name alone ('number' when it does not say)."""
    name = str(name)
    if name.endswith("_cv") or name.startswith("cv_") or "_cv_" in name:
        return "percent"
    if name == "bw_bytes" or (name.startswith("bw_bytes_") and not name.endswith("_n")):
        return "bandwidth"
    if name.startswith(("tax_", "efficiency_")) and name.endswith(STATISTICS):
        return "percent"
    if name in SIZES:
        return "size"
    if name in COUNTS:
        return "count"
    if name == "iops" or name.endswith("_iops"):
        return "iops"
    if (name in PERCENT or name.startswith(("fraction", "efficiency", "tax_lo", "tax_hi"))
            or name.endswith(("_efficiency", "_fraction", "_tax", "_share", "_cv"))):
        return "percent"
    if name.endswith("_ratio") or name == "ratio":
        return "ratio"
    for suffix, kind in SUFFIXES.items():
        if name.endswith(suffix):
            return kind
    return "number"


def header(name) -> str:
    """Words for the column ``name``: ``HEADERS``, or the name without its unit, underscores as spaces."""
    if isinstance(name, tuple):
        return " ".join(header(part) for part in name if str(part))
    name = str(name)
    if name in HEADERS:
        return HEADERS[name]
    for suffix in SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)].replace("_", " ") + (" bandwidth" if SUFFIXES[suffix] == "bandwidth" else "")
    return name.replace("_", " ")


def _bare(text: str, unit: str) -> str:
    """``text`` without its trailing unit (the bounds of an interval share the value's unit)."""
    return text[: -len(unit)].rstrip() if unit and text.endswith(unit) else text


def _interval(value, lo, hi, kind: str, scale) -> str:
    """A value with its interval: "802 MB/s (798–806)"; "379 MB/s (one run: no interval)" where a value has no
    bounds (fewer than two runs), the value alone where its interval is exact (lo = hi = value)."""
    shown = cell(value, kind, scale)
    if _missing(value):
        return shown
    if _missing(lo) or _missing(hi):
        return f"{shown} ({ONE_RUN})"
    if float(lo) == float(hi) == float(value):
        return shown
    unit = {"bandwidth": scale[0], "percent": "%"}.get(kind, "")
    low, high = _bare(cell(lo, kind, scale), unit), _bare(cell(hi, kind, scale), unit)
    between = DASH if float(lo) >= 0 and float(hi) >= 0 else " to "
    return f"{shown} ({low}{between}{high}{unit if unit == '%' else ''})"


def _flat(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with its named index as columns (a pivot's, a group's; an unnamed one is row numbers, dropped)
    and one level of column names."""
    named = any(name is not None for name in frame.index.names)
    frame = frame.reset_index() if named else frame.reset_index(drop=True)
    if isinstance(frame.columns, pd.MultiIndex):
        frame.columns = [" ".join(str(part) for part in col if str(part)) for col in frame.columns]
    return frame


def _pivot_kinds(frame: pd.DataFrame) -> dict[str, str]:
    """A pivot's columns (``("ratio", "read")`` becomes "ratio read") keep the kind of their first level's name."""
    if not isinstance(frame.columns, pd.MultiIndex):
        return {}
    return {" ".join(str(part) for part in col if str(part)): kind_of(col[0]) for col in frame.columns
            if kind_of(col[0]) != "number"}


def formatted(frame: pd.DataFrame, columns: Iterable[str] | None = None, *, reference: str | None = None,
              key: str = "layout", kinds: Mapping[str, str] | None = None, values: str | None = None,
              row_kind: str | None = None) -> pd.DataFrame:
    """The frame as text, column by column as ``show`` publishes it (headers in words, intervals merged).
    ``row_kind``: a column naming each row's quantity (``bw_bytes``, ``iops``, ...), the kind of that row's
    values in every column the column's own name does not place."""
    if isinstance(frame, pd.Series):
        frame = frame.to_frame()
    keys = {str(name) for name in frame.index.names if name is not None}
    kinds = {**_pivot_kinds(frame), **(kinds or {})}
    frame = _flat(frame)
    if values is not None:  # the values of a pivot or a group: every column that is not one of its keys
        kinds.update({str(c): values for c in frame.columns if str(c) not in keys and str(c) not in kinds
                      and pd.api.types.is_numeric_dtype(frame[c]) and (keys or kind_of(c) == "number")})
    for name in kinds.values():
        if name not in KINDS:
            raise ValueError(f"kind {name!r} is not one of {KINDS}")
    names = [str(c) for c in (columns if columns is not None else frame.columns)]
    missing = [c for c in names if c not in map(str, frame.columns)]
    if missing:
        raise KeyError(f"no column {missing} in the table (it has {[str(c) for c in frame.columns]})")
    frame.columns = [str(c) for c in frame.columns]
    if columns is None:  # bounds shown with their value are not columns of their own
        names = [c for c in names if not (c.endswith(("_lo", "_hi")) and c[:-3] in names)]
    shown = {}
    for name in names:
        kind = kinds.get(name) or kind_of(name)
        column = frame[name]
        if not pd.api.types.is_numeric_dtype(column) and all(isinstance(v, str) or _missing(v) for v in column):
            kind = "text"
        scale = _bandwidth_scale(column) if kind == "bandwidth" else ("MB/s", 1e6)
        lo, hi = f"{name}_lo", f"{name}_hi"
        if lo in frame.columns and hi in frame.columns and kind != "text":
            scale = _bandwidth_scale(list(column) + list(frame[lo]) + list(frame[hi])) if kind == "bandwidth" else scale
            text = [_interval(v, l, h, kind, scale) for v, l, h in zip(column, frame[lo], frame[hi])]
        elif row_kind is not None and kind == "number" and name != row_kind:
            text = [cell(v, kind_of(str(what)), _bandwidth_scale(column)) for v, what in zip(column, frame[row_kind])]
        else:
            text = [cell(v, kind, scale) for v in column]
        if name == key and reference is not None:
            text = [f"{t} (reference)" if t == str(reference) else t for t in text]
        shown[name if values is not None and name not in keys and kinds.get(name) == values else header(name)] = text
    return pd.DataFrame(shown, index=range(len(frame)))


def show(frame: pd.DataFrame, columns: Iterable[str] | None = None, *, reference: str | None = None,
         key: str = "layout", kinds: Mapping[str, str] | None = None, values: str | None = None,
         row_kind: str | None = None, caption: str | None = None):
    """The table a report publishes: ``formatted`` as a pandas Styler without its index, numbers right-aligned,
    the ``reference`` row (``key`` equal to it) in bold. ``columns``: which to show, in order (each one's
    ``_lo``/``_hi`` come with it)."""
    text = formatted(frame, columns, reference=reference, key=key, kinds=kinds, values=values, row_kind=row_kind)
    marked = f"{reference} (reference)"
    styler = text.style.hide(axis="index")
    styler = styler.set_table_styles([
        {"selector": "th", "props": "text-align: left; padding: 0.2em 0.8em; font-weight: 600"},
        {"selector": "td", "props": "padding: 0.2em 0.8em"},
    ])
    numeric = [c for c in text.columns if len(text) and text[c].astype(str).str.match(r"^[-<>]?[\d,.]+").mean() > 0.5]
    # a report's stylesheet right-aligns every cell: each column (its header too) is set by what it holds
    styler = styler.set_table_styles(
        {c: [{"selector": "", "props": "text-align: right; white-space: nowrap" if c in numeric
              else "text-align: left"}] for c in text.columns}, overwrite=False)
    if reference is not None and header(key) in text.columns:
        styler = styler.apply(lambda row: ["font-weight: bold" if row[header(key)] == marked else ""] * len(row),
                              axis=1)
    return styler.set_caption(caption) if caption else styler


UNIT_KINDS = {"bytes/s": "bandwidth", "bytes": "size", "ns": "ns", "us": "us", "ms": "ms", "s": "s"}


def with_units(frame: pd.DataFrame, value: str = "value", unit: str = "unit") -> pd.DataFrame:
    """Rows that each carry their own unit (an application's metrics: bytes/s, ns, files/s, tps) with ``value`` as
    its text in that unit, ready to pivot (``aggfunc="first"``) and ``show``: "412 MB/s", "1.20 ms", "3,410 files/s"."""
    def text(number, named) -> str:
        kind = UNIT_KINDS.get(str(named))
        if kind is not None or _missing(number):
            return cell(number, kind or "number")
        return f"{cell(number, 'number')} {named}"

    return frame.assign(**{value: [text(v, u) for v, u in zip(frame[value], frame[unit])]})
