"""What ``make bench-predict`` keeps, and its table scored again from what was kept (benchmarks/bench_predict.py's
store; not a test module).

    run = bench_predict_store.new_run(RESULTS, facts)   # benchmarks/results/<UTC stamp>/, machine.json
    bench_predict_store.keep(run, case)                  # <slug>.measured.csv.gz, <slug>.predicted.csv.gz, cases.json
    text = bench_predict_store.rescore([run, ...])       # the published table, from the stored tables alone

Each case is kept as two gzip'd CSV tables: every measured repetition (as the campaign or the guest recorded it,
with ``started_at``) and every prediction (with ``predicted_at``, where it was stated). Scoring reads only them:
each layout's prediction goes through ``scoring.against``, the campaigns' own "stated before" check, and a
prediction stated after its layout's first run counts as none (its points are shown, with no error). Published
tables (the seeds) carry no run times: nothing to check, and the table says so. The table's headline is the median
over every kept run of each run's median absolute error, with each run's figure beside it, never the best run.
Each point's error is shown beside its own repeatability (the spread of its repetitions: the same point measured
again), and a miss within it is said to be within the machine's noise. Where the predictions carry an interval
(``predicted_lo_bw_bytes`` / ``predicted_hi_bw_bytes``, NaN: that end open), whether the measured interval meets it
(``interval_meets``) and its width (``predicted_width``, hi / lo) are scored too; where they do not, "not stated".
"""
from __future__ import annotations

import gzip
import json
import math
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from flashscale.analysis import baseline_and_tax
from flashscale.analysis.prediction import predict, scoring
from flashscale.errors import AnalysisError
from flashscale.measure.units import percent, rate

MISS = 0.05
KEYS = predict.KEYS
CASES_FILE, MACHINE_FILE, TABLE_FILE = "cases.json", "machine.json", "table.md"
GZIP = {"method": "gzip", "mtime": 0}  # the same bytes for the same table
BEGIN = ("<!-- bench-predict table: python benchmarks/bench_predict.py --rescore benchmarks/results --publish "
         "docs/validation.md -->\n")
END = "<!-- end of the bench-predict table -->"
STATED = {"before": "stated before", "no times": "published: no run times to check",
          "after": "stated after its first run: none"}


@dataclass(frozen=True)
class Case:
    """One case of a run: its name, whether it counts (a calibration is shown, not counted), every measured
    repetition and every prediction."""
    name: str
    counted: bool
    measured: pd.DataFrame
    predicted: pd.DataFrame


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def new_run(results: Path, facts: dict) -> Path:
    """A new folder for a run under ``results``, named by the UTC time (a suffix where one of that minute exists),
    with the machine's ``facts`` in machine.json."""
    stamp = f"{datetime.now(timezone.utc):%Y%m%dT%H%MZ}"
    results.mkdir(parents=True, exist_ok=True)
    for n in range(100):
        run = results / (stamp if n == 0 else f"{stamp}-{n}")
        try:
            run.mkdir()
        except FileExistsError:
            continue
        (run / MACHINE_FILE).write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n")
        (run / CASES_FILE).write_text("[]\n")
        return run
    raise RuntimeError(f"no new run folder under {results} for {stamp}")


def keep(run: Path, case: Case) -> None:
    """Store ``case``'s two tables in ``run`` and name it in cases.json (in the order kept)."""
    name = slug(case.name)
    case.measured.to_csv(run / f"{name}.measured.csv.gz", index=False, compression=GZIP)
    case.predicted.to_csv(run / f"{name}.predicted.csv.gz", index=False, compression=GZIP)
    cases = json.loads((run / CASES_FILE).read_text())
    cases = [c for c in cases if c["slug"] != name] + [{"case": case.name, "counted": case.counted, "slug": name}]
    (run / CASES_FILE).write_text(json.dumps(cases, indent=1) + "\n")


def cases(run: Path) -> list[Case]:
    """The cases ``run`` kept, read back."""
    out = []
    for c in json.loads((run / CASES_FILE).read_text()):
        name = str(c["slug"])
        if slug(name) != name:
            raise ValueError(f"{run / CASES_FILE}: case file name {name!r} is not a plain name")
        predicted = _read(run / f"{name}.predicted.csv.gz")
        if "predicted_close" in predicted.columns:
            close = predicted["predicted_close"].astype("string").fillna("").astype(str)
            predicted = predicted.assign(predicted_close=close)
        out.append(Case(str(c["case"]), bool(c["counted"]), _read(run / f"{name}.measured.csv.gz"), predicted))
    return out


def _read(path: Path) -> pd.DataFrame:
    with gzip.open(path, "rt") as f:
        text = f.read(1)
    return pd.read_csv(path, compression="gzip") if text else pd.DataFrame()


def runs_under(path: Path) -> list[Path]:
    """``path`` itself where it is a run, else every finished run folder in it (its table written: a run still
    measuring, or stopped before its end, is not kept), oldest first."""
    if (path / CASES_FILE).exists():
        return [path]
    return sorted(p for p in path.iterdir() if (p / CASES_FILE).exists() and (p / TABLE_FILE).exists())


# ---- scoring -------------------------------------------------------------------------------------------------
def score(case: Case) -> pd.DataFrame:
    """Each layout's prediction held to its measured runs through ``scoring.against`` (a prediction stated after
    its layout's first run: refused, its points kept with no prediction, ``stated`` "after"); each point's own
    repeatability (``noise``) and, where the predictions carry one, the interval scored."""
    parts = []
    timed = "predicted_at" in case.predicted.columns and "started_at" in case.measured.columns
    for layout in sorted(set(case.predicted["layout"].astype(str)) if not case.predicted.empty else ()):
        said = case.predicted[case.predicted["layout"].astype(str) == layout]
        rows = case.measured[case.measured["layout"].astype(str) == layout]
        if baseline_and_tax.rates(rows).empty:
            continue
        try:
            out = scoring.against(said, rows).assign(stated="before" if timed else "no times", refused="")
        except AnalysisError as refused:
            out = predict.score(said, rows).assign(stated="after", refused=str(refused))
            out[["predicted_bw_bytes", "error"]] = np.nan
        parts.append(out)
    if not parts:
        return pd.DataFrame(columns=[*KEYS, "error", "stated", "noise", "case", "counted"])
    out = pd.concat(parts, ignore_index=True)
    out = out.merge(noise(case.measured), on=KEYS, how="left")
    return intervals(out).assign(case=case.name, counted=case.counted)


def noise(measured: pd.DataFrame) -> pd.DataFrame:
    """Per point, its own repeatability: (largest - smallest) / mean of its repetitions, the same point measured
    again on this machine; NaN with one run."""
    rows = baseline_and_tax.rates(measured)
    spread = rows.groupby(KEYS, sort=True)["bw_bytes"].agg(["max", "min", "mean", "count"]).reset_index()
    value = ((spread["max"] - spread["min"]) / spread["mean"]).where(spread["count"] >= 2)
    types = {k: "int64" for k in ("devices", "bs", "numjobs", "iodepth")}
    return spread[KEYS].assign(noise=value).astype(types).astype({"layout": str, "rw": str})


def intervals(scored: pd.DataFrame) -> pd.DataFrame:
    """``interval_meets`` and ``predicted_width`` as the scoring gave them (``predict.score``, from
    ``predicted_lo_bw_bytes`` / ``predicted_hi_bw_bytes`` through ``prediction.bounds``); NA where the predictions
    carried no interval (stored before the model stated one)."""
    if {"interval_meets", "predicted_width"} <= set(scored.columns):
        return scored
    return scored.assign(interval_meets=pd.Series(pd.NA, index=scored.index, dtype="boolean"),
                         predicted_width=np.nan)


# ---- the table -----------------------------------------------------------------------------------------------
def scored_runs(runs: list[Path]) -> pd.DataFrame:
    """Every kept case of every run in ``runs``, scored, each point with its ``run`` (the folder's name)."""
    parts = [score(case).assign(run=run.name) for run in runs for case in cases(run)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def run_figure(scored: pd.DataFrame) -> float:
    """A run's figure: the median absolute error over its counted points stated before (or published)."""
    errors = scored.loc[scored["counted"].astype(bool), "error"].abs().dropna()
    return float(errors.median()) if len(errors) else math.nan


def _meets(group: pd.DataFrame) -> str:
    said = group["interval_meets"].dropna()
    if said.empty:
        return "not stated"
    width = group["predicted_width"].dropna()
    widest = "open" if (len(width) and not np.isfinite(width.max())) else f"{width.max():.2f}x"
    return f"{int(said.sum())} of {len(said)} (widest {widest})"


def _machine(run: Path) -> str:
    facts = json.loads((run / MACHINE_FILE).read_text())
    words = [f"{facts.get('cpu', '?')}, {facts.get('cpus', '?')} CPUs", f"Linux {facts.get('kernel', '?')}",
             str(facts.get("fio", "fio ?")), f"commit {str(facts.get('commit', '?'))[:10]}"]
    return "; ".join(words + ([str(facts["reduced"])] if facts.get("reduced") else []))


def runs_table(runs: list[Path], scored: pd.DataFrame) -> list[str]:
    lines = ["| run | machine | cases | counted points | median abs error | worst | interval meets | stated after: "
             "none |", "|---|---|---|---|---|---|---|---|"]
    for run in runs:
        mine = scored[scored["run"] == run.name]
        counted = mine[mine["counted"].astype(bool)]
        names = ", ".join(dict.fromkeys(c.name for c in cases(run)))
        lines.append(f"| {run.name} | {_machine(run)} | {names} | {len(counted)} | {percent(run_figure(mine))} | "
                     f"{percent(counted['error'].abs().max())} | {_meets(counted)} | "
                     f"{int(mine['stated'].eq('after').sum())} |")
    return lines


def case_table(scored: pd.DataFrame, runs: list[Path]) -> list[str]:
    lines = ["| case | layout | N | rw | points | median abs error (each run) | worst | own repeatability (median) "
             "| interval meets | misses beyond 5%: within its noise / beyond / one run |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    order = [r.name for r in runs]
    for (case, layout, devices, rw), group in scored.groupby(["case", "layout", "devices", "rw"], sort=False):
        each = [percent(g["error"].abs().median()) for _, g in sorted(group.groupby("run"),
                                                                       key=lambda kv: order.index(kv[0]))]
        misses = group[group["error"].abs() > MISS]
        within = int((misses["error"].abs() <= misses["noise"]).sum())
        once = int(misses["noise"].isna().sum())
        mark = "" if group["counted"].astype(bool).all() else " (not counted)"
        lines.append(f"| {case}{mark} | {layout} | {devices} | {rw} | {len(group)} | {' / '.join(each)} | "
                     f"{percent(group['error'].abs().max())} | {percent(group['noise'].median())} | "
                     f"{_meets(group)} | {within} / {len(misses) - within - once} / {once} |")
    return lines


def miss_lines(scored: pd.DataFrame) -> list[str]:
    out = []
    counted = scored[scored["counted"].astype(bool)]
    for r in counted[counted["error"].abs() > MISS].itertuples(index=False):
        if math.isnan(r.noise):
            said = "one run: its own noise not measured"
        elif abs(r.error) <= r.noise:
            said = f"within the machine's noise (the same point measured again: {percent(r.noise)})"
        else:
            said = f"beyond the machine's noise ({percent(r.noise)})"
        unknown = getattr(r, "predicted_unknown", None)
        wide = f"; the interval wide from: {unknown}" if isinstance(unknown, str) and unknown else ""
        out.append(f"- {r.run}, {r.case}: {r.layout} {r.rw} on {r.devices}, {r.numjobs} jobs, iodepth {r.iodepth}: "
                   f"measured {rate(r.measured_bw_bytes)}, predicted {rate(r.predicted_bw_bytes)}, "
                   f"{percent(r.error, signed=True)}; {said}; held to the "
                   f"{predict.limit_words(r.predicted_limit, r.predicted_close)}{wide}")
    for r in scored[scored["stated"] == "after"].drop_duplicates(["run", "case", "layout"]).itertuples(index=False):
        out.append(f"- {r.run}, {r.case}: {r.layout}: no prediction: {r.refused}")
    return out


def rescore(runs: list[Path]) -> str:
    """The published table of ``runs``, from their stored tables alone (the same bytes every time)."""
    scored = scored_runs(runs)
    if scored.empty:
        return "No kept run has a scored case.\n"
    figures = [run_figure(scored[scored["run"] == run.name]) for run in runs]
    kept = [f for f in figures if not math.isnan(f)]
    headline = (f"Median absolute error over the {len(kept)} kept run(s): **{percent(float(np.median(kept)))}** "
                f"(each run: {', '.join(percent(f) for f in figures)}; the median of the runs, never the best)."
                if kept else "No run has a counted point.")
    stated = sorted(set(scored["stated"]))
    lines = [headline, "", *runs_table(runs, scored), "", "Per case, layout and rw, over every kept run (errors "
             "beside each point's own repeatability, the spread of its repetitions):", "", *case_table(scored, runs),
             "", "Predictions: " + "; ".join(f"{int(scored['stated'].eq(s).sum())} point(s) {STATED[s]}"
                                             for s in stated) + ".", "", "Misses beyond 5% (counted cases):",
             *(miss_lines(scored) or ["- none"])]
    return "\n".join(lines) + "\n"


def published(text: str) -> str | None:
    """The table between the markers of a page (docs/validation.md); None where it has none."""
    start = text.find(BEGIN)
    end = text.find(END, start + len(BEGIN)) if start >= 0 else -1
    return text[start + len(BEGIN):end] if end >= 0 else None


def publish(page: Path, table: str) -> None:
    """Write ``table`` between the page's markers, the rest of the page as it was."""
    text = page.read_text()
    old = published(text)
    if old is None:
        raise ValueError(f"{page} has no bench-predict table's markers ({BEGIN.strip()} ... {END})")
    start = text.find(BEGIN) + len(BEGIN)
    page.write_text(text[:start] + table + text[start + len(old):])
