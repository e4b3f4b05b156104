"""What a results table says of its own runs, in words: the precondition before them, the runs above the emulated
array's known truth (the applications' rates of bytes too: ``measure.workloads``), the runs too fast to measure, the
steady state of the precondition rounds. ``findings`` names
them too; ``measurement_sentences`` is what every measuring notebook states before its numbers.

Pure functions, a results table in (precondition and warm-up rows included), a list of sentences out.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import drift, outliers, repetitions
from .baseline_and_tax import POINT, above_truth, failed, flag, runs, truth_check
from .metadata import ENGINES
from ..measure import fio_output, truth
from ..measure.steady import steady_state
from ..measure.units import duration, number, percent, rate, size
from .significance import DEFAULT_MARGIN

PRECONDITION_PHASE = "precondition"
WORKLOAD_PHASE = "workload"


def bs_text(bs: int) -> str:
    """A block size in words: 1048576 -> '1 MiB', 4096 -> '4 KiB', 512 -> '512 B' (``measure.units.size``)."""
    return size(bs)


def _point_words(r) -> str:
    """A point named as an engineer would: the metadata op and its files, an application's metric and its point,
    or the layout, rw, block size, jobs."""
    if r.rw in ENGINES.values() and np.isfinite(getattr(r, "nrfiles", np.nan)):
        return f"{r.rw} of {int(r.nrfiles * r.numjobs):,} files"
    if getattr(r, "phase", None) == WORKLOAD_PHASE:
        return f"{r.layout} ({r.devices} device(s)) {r.metric} of {r.point}"
    return f"{r.layout} ({r.devices} device(s)) {r.rw} {bs_text(int(r.bs))} with {r.numjobs} job(s)"


def applications_above_truth(frame: pd.DataFrame) -> pd.DataFrame:
    """The applications' rows (phase ``workload``) flagged ``above_truth``, with ``truth_ratio`` as
    ``core.truth_check`` gives it; no rows when the table has none or no ``above_truth`` column."""
    return above_truth(_applications(frame))


def _applications(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of the applications that ran (phase ``workload``, not failed)."""
    if "phase" not in frame.columns:
        return frame.iloc[0:0]
    rows = frame[frame["phase"].astype("string").str.strip().eq(WORKLOAD_PHASE).fillna(False).astype(bool)]
    return rows[~failed(rows)]


def too_short_sentences(frame: pd.DataFrame) -> list[str]:
    """Each point with runs flagged ``too_short`` (a results table; the applications' rates too), and why it gives
    no rate (``core.rates`` leaves those runs out): too fast to measure at this size (under a second), or above its
    known truth by more than 2% where the throttle's first slice explains it (``measure.truth.why_too_short``: a
    capped run under 5 s). No sentence for a table without the flag."""
    parts = [rows for rows in (runs(frame), _applications(frame)) if "too_short" in rows.columns]
    short = pd.concat([rows[flag(rows, "too_short")] for rows in parts]) if parts else frame.iloc[0:0]
    if short.empty:
        return []
    keys = [c for c in (*POINT, "nrfiles", "metric", "point") if c in short.columns]
    out = []
    for _, group in short.groupby(keys, sort=True, observed=True, dropna=False):
        r = group.iloc[0]
        took = f"took {group['runtime_s'].mean():.2f} s" if "runtime_s" in group.columns else "ran too briefly"
        count = f" ({len(group)} runs)" if len(group) > 1 else ""
        why = _sliced(group)
        if why:
            out.append(f"{_point_words(r)} {took}{count}: {why}.")
            continue
        more = "files" if r.rw in ENGINES.values() else "data (a larger size or a longer runtime)"
        out.append(f"{_point_words(r)} {took}{count}: too fast to measure at this size; give it more {more}.")
    return out


def _sliced(group: pd.DataFrame) -> str | None:
    """Why the first run of ``group`` at least a second long gives no rate, where its truth is known: above it by
    more than 2%, as the throttle's first slice allows in a run this short (``truth.why_too_short``)."""
    if not {"truth_bw_bytes", "runtime_s"} <= set(group.columns):
        return None
    for r in group.itertuples():
        ratio = r.bw_bytes / r.truth_bw_bytes if np.isfinite(r.truth_bw_bytes) else np.nan
        why = truth.why_too_short(ratio, r.runtime_s, allowed=np.inf) if r.runtime_s >= truth.MIN_RUNTIME_S else None
        if why:
            return why
    return None


def held_caps(frame: pd.DataFrame) -> dict[str, float] | None:
    """The per-device cap each direction's runs were held to (``cap_bps``: the one asked, or lowered to what the
    machine carried), as ``{"read": ..., "write": ...}``; None where no run was capped (real devices, directories)."""
    caps = {d: held_cap(frame, d) for d in ("read", "write")}
    return caps if any(v is not None for v in caps.values()) else None


def held_cap(rows: pd.DataFrame, direction: str) -> float | None:
    """The per-device cap ``rows`` moving only ``direction`` were held to (``cap_bps``), None where none was."""
    if "cap_bps" not in rows.columns or "rw" not in rows.columns:
        return None
    moving = rows[rows["rw"].map(lambda rw: fio_output.DIRECTIONS.get(rw, ()) == (direction,))]
    cap = pd.to_numeric(moving["cap_bps"], errors="coerce").max()
    return float(cap) if pd.notna(cap) and cap > 0 else None


def adjusted_truth_sentences(frame: pd.DataFrame) -> list[str]:
    """Where a campaign held its runs to caps lower than it asked (``cap_asked_bps`` above ``cap_bps``: the test bed,
    measured with its caps lifted first, carried less than twice the truth asked; ``measure.harness``), a sentence per
    direction saying so, with the caps and what was carried. None where every cap was held as asked."""
    if not {"cap_bps", "cap_asked_bps", "rw"} <= set(frame.columns):
        return []
    held = pd.to_numeric(frame["cap_bps"], errors="coerce")
    asked = pd.to_numeric(frame["cap_asked_bps"], errors="coerce")
    lowered = frame[(asked > held * (1 + 1e-9)) & held.notna()]
    out = []
    for direction in ("read", "write"):
        rows = lowered[lowered["rw"].map(lambda rw: fio_output.DIRECTIONS.get(rw, ()) == (direction,))]
        if rows.empty:
            continue
        carried = pd.to_numeric(rows.get("harness_bw_bytes"), errors="coerce").max() if "harness_bw_bytes" in rows \
            else np.nan
        what = f"; with the caps lifted the test bed carried {rate(carried)} of them" if np.isfinite(carried) else ""
        out.append(f"The {direction}s' truth was adjusted: {len(rows)} run(s) were held to {rate(rows['cap_bps'].max())} "
                   f"a device, not the {rate(rows['cap_asked_bps'].max())} asked, because this machine could not carry "
                   f"twice the truth asked{what} (measure.harness, harness.json): their truth is devices x the cap "
                   f"held.")
    return out


def truth_sentences(frame: pd.DataFrame) -> list[str]:
    """The truth check in words: the caps lowered to what the machine carries (``adjusted_truth_sentences``), the
    runs above the emulated array's known cap (``core.truth_check``) and the applications' rates above it
    (``applications_above_truth``), named with bw / cap (a measurement error to investigate, not a result), or
    that every run with a known cap was within it. No sentence for a table without ``above_truth``, or whose runs
    had no known cap (uncapped)."""
    return adjusted_truth_sentences(frame) + _checked_sentences(frame)


def _checked_sentences(frame: pd.DataFrame) -> list[str]:
    found = [f for f in (truth_check(frame), applications_above_truth(frame)) if not f.empty]
    if not found:
        held = [rows for rows in (runs(frame), _applications(frame))
                if {"above_truth", "truth_bw_bytes"} <= set(rows.columns)]
        known = sum(int(pd.to_numeric(rows["truth_bw_bytes"], errors="coerce").notna().sum()) for rows in held)
        sliced = sum(int(_sliced_runs(rows)) for rows in held)
        short = (f" ({sliced} of them more than 2% above it by the throttle's first slice: too short to give a "
                 "rate, named below)") if sliced else ""
        return [f"Every run within its known cap: all {known} run(s) with a known truth (devices x cap) came out at "
                f"or below it, within the throttle's tolerance{short}."] if known else []
    above = pd.concat(found, ignore_index=True)
    named = "; ".join(f"{_point_words(r)} rep {getattr(r, 'rep', '?')}: {rate(r.bw_bytes)} against "
                      f"{rate(r.truth_bw_bytes)} ({percent(r.truth_ratio, 0)})" for r in above.itertuples())
    return [f"{len(above)} run(s) came out above the emulated array's known cap: {named} — a measurement error to "
            f"investigate, not a result."]


def _sliced_runs(rows: pd.DataFrame) -> int:
    """How many of ``rows`` are flagged ``too_short`` while more than 2% above their known truth: the throttle's
    first slice, in a run too short for it (``measure.truth``)."""
    if "too_short" not in rows.columns or "bw_bytes" not in rows.columns:
        return 0
    ratio = pd.to_numeric(rows["bw_bytes"], errors="coerce") / pd.to_numeric(rows["truth_bw_bytes"], errors="coerce")
    return int((flag(rows, "too_short") & (ratio > 1 + truth.MIN_TOLERANCE)).sum())


def steady_round_sentences(frame: pd.DataFrame) -> list[str]:
    """Per layout whose precondition ran in rounds (rows with a ``round``): the SNIA PTS verdict on their bandwidth
    (``measure.steady``), in words, and what it means for the points measured after it. None without rounds."""
    if "round" not in frame.columns:
        return []
    rounds = frame[frame["round"].notna()].sort_values("round")
    out = []
    for layout, group in rounds.groupby("layout", sort=True, observed=True):
        verdict = steady_state(group["bw_bytes"].to_numpy(dtype=float))
        mean = "" if np.isnan(verdict.window_mean) else f"; the window's mean {rate(verdict.window_mean)}"
        after = ("its points were measured in steady state" if verdict.steady else
                 "its points were measured before steady state: raise PRECONDITION_ROUNDS_MAX or read them as "
                 "a fresh device's")
        out.append(f"{layout}: {verdict.note}{mean}; {after}.")
    return out


def precondition(frame: pd.DataFrame) -> pd.DataFrame:
    """Per layout whose precondition ran (rows of ``phase`` precondition): ``io_bytes`` written and ``runtime_s``
    taken (fio's, summed over rounds) and ``rounds``; no rows when none ran."""
    phase = frame["phase"] if "phase" in frame.columns else pd.Series(pd.NA, index=frame.index, dtype="string")
    rows = frame[phase.astype("string").str.strip().eq(PRECONDITION_PHASE).fillna(False).astype(bool)]
    rows = rows.assign(io_bytes=pd.to_numeric(rows.get("io_bytes", np.nan), errors="coerce"),
                       runtime_s=pd.to_numeric(rows.get("runtime_s", np.nan), errors="coerce"))
    grouped = rows.groupby("layout", sort=False, observed=True)
    out = grouped.agg(io_bytes=("io_bytes", "sum"), runtime_s=("runtime_s", "sum"), rounds=("runtime_s", "size"))
    return out.reset_index()


def precondition_sentences(frame: pd.DataFrame) -> list[str]:
    """Per layout, what its precondition wrote before the first point and how long it took (``precondition``);
    one sentence saying so when none ran."""
    done = precondition(frame)
    if done.empty:
        return ["No precondition ran before the points."]
    return [f"{r.layout}: the precondition wrote {size(r.io_bytes)}"
            f"{f' in {r.rounds} rounds' if r.rounds > 1 else ''} in {duration(r.runtime_s)} before the first point: "
            f"every byte the points may read." for r in done.itertuples()]


def stall_sentences(frame: pd.DataFrame) -> list[str]:
    """Each measured run whose rate log shows a stall (``outliers.stalled``), with its evidence: "jbod (2
    device(s)) write 1 MiB with 1 job(s), rep 2: stalled 3 s of its 9 under half its median second (its slowest
    second 12% of it, 4 s in); kept and counted"."""
    out = []
    for r in outliers.stalled(frame).itertuples():
        out.append(f"{_point_words(r)}, rep {r.rep}: stalled {number(r.stall_s)} s of its {number(r.rate_seconds)} "
                   f"under half its median second (its slowest second {percent(r.rate_low, 0)} of it, "
                   f"{number(r.rate_low_at_s)} s in); kept and counted.")
    return out


def outlier_sentences(frame: pd.DataFrame, margin: float = DEFAULT_MARGIN) -> list[str]:
    """Each measured run unlike the others of its point (``outliers.flagged``: outside their 99% prediction
    interval and beyond ``margin``): "... rep 3 at 280 MB/s, -30.0% from the other 4 runs (400 MB/s): unlike them
    (outside their 99% prediction interval); kept and counted"."""
    out = []
    for r in outliers.flagged(frame, margin).itertuples():
        out.append(f"{_point_words(r)}, rep {r.rep} at {rate(r.bw_bytes)}, {percent(r.off, signed=True)} from the "
                   f"other {r.runs - 1} runs ({rate(r.others_bw_bytes)}): unlike them (outside their "
                   f"{percent(1 - outliers.LEVEL, 0)} prediction interval, a rule that flags a run like them "
                   f"{percent(outliers.LEVEL, 0)} of the time); kept and counted.")
    return out


def measurement_sentences(frame: pd.DataFrame, margin: float = DEFAULT_MARGIN) -> list[str]:
    """What a measuring notebook states of its runs: the truth check, the runs too short to give a rate, the
    steady state of the precondition rounds, the runs that stalled or are unlike the others of their point (at
    the report's ``margin``), how many runs (and builds) each point took and why they stopped, and where the tax
    reference was measured again after the layouts (BRACKET) whether it drifted beyond ``margin``
    (``truth_sentences``, ``too_short_sentences``, ``steady_round_sentences``, ``stall_sentences``,
    ``outlier_sentences``, ``repetitions.sentences``, ``drift_sentences``)."""
    return (truth_sentences(frame) + too_short_sentences(frame) + steady_round_sentences(frame)
            + stall_sentences(frame) + outlier_sentences(frame, margin) + repetitions.sentences(frame)
            + drift_sentences(frame, margin))


def drift_sentences(frame: pd.DataFrame, margin: float = DEFAULT_MARGIN) -> list[str]:
    """``drift.sentences`` of each layout the table's bracket measured again (the tax reference: BRACKET)."""
    measured_again = drift.bracket_rates(frame)
    if measured_again.empty:
        return []
    return [line for layout in sorted(set(measured_again["layout"].astype(str)))
            for line in drift.sentences(frame, layout, margin)]
