"""A campaign's live progress: each fio run as it starts and ends, with the runs left and an ETA.

The recorder calls ``started(layout, point, run)`` before each fio run (a precondition, a round, a repetition) and
``finished(row)`` after it, a failed run's row included; a workload (a job file, an application) calls ``started``
before each of its runs and ``ended(WORKLOAD, what)`` after it; ``skipped()`` counts a run a resumed campaign measured
already, ``layout_done(layout)`` drops what an adaptive sweep or a steady precondition did not need. Each line goes

- to ``progress.log`` in the campaign directory, always;
- to the tqdm bar: its postfix names the run, its count and total follow the runs (the live bar in a notebook);
- to stdout, with the prefix ``MARK``, when the environment variable ``FLASHSCALE_PROGRESS`` is ``lines``:
  ``flashscale run`` (``execute``) sets it for the kernels it starts, echoes those lines to the terminal without
  the prefix, and ``publish.report.export_html`` leaves them out of the report.

A line::

    [12/48] jbod read-bs1048576-nj4-qd1 rep2: 799.6 MB/s (4.1 s) — 36 left, ETA 2 min 24 s

The total is ``planned(sweep)`` runs per layout, its precondition runs and its workloads' runs included; for an
adaptive sweep, a precision (``PRECISION``: each point up to ``MAX_REPETITIONS``) or a precondition in rounds it is
an upper bound, made exact when each layout is done. The ETA is the
runs left of each phase times that phase's mean wall time so far, or before one has finished, its known runtime
(``runtime_s`` + ``ramp_s`` of a time-based run); none until every phase left has one, except the workloads, whose
runs not yet timed are named beside the ETA. Under ``flashscale run`` it is the one ETA of the whole campaign:
``execute`` gives each notebook's kernel ``FLASHSCALE_LATER_S``, the estimated wall time of the notebooks after it
(``notebooks.estimate``), which the ETA adds (papermill's own bar, with an ETA of its own, is off).
"""
from __future__ import annotations

import math
import os
import time
from datetime import datetime
from pathlib import Path

from . import campaign_folder
from .precondition import PHASE as PRECONDITION
from .sweep import Sweep
from .units import rate, span

LOG_FILE = campaign_folder.PROGRESS_LOG
ENVIRONMENT = "FLASHSCALE_PROGRESS"  # "lines": each line also to stdout, prefixed with MARK
LATER = "FLASHSCALE_LATER_S"  # seconds the campaign's notebooks after this one are estimated to take (execute)
MARK = "flashscale-progress: "
MEASURE = "measure"
WORKLOAD = "workload"


def planned(sweep: Sweep, repeat: int = 1, workload_runs: int = 0) -> dict[str, int]:
    """The runs of one layout by phase: its precondition (``rounds_max`` when in rounds, an upper bound), its
    points' repetitions (every point of the grid for an adaptive sweep, and ``max_repetitions`` a point with a
    precision: upper bounds), ``repeat`` times over (a
    cluster runs every point once per host count), and its workloads' runs; all of it once per build (BUILDS)."""
    pre = 0 if not sweep.precondition or sweep.nrfiles else sweep.rounds_max if sweep.steady_rounds else 1
    most = len(sweep.points()) * (len(sweep.reps()) + len(sweep.more_reps()))  # a precision's MAX_REPETITIONS
    builds = sweep.builds
    return {PRECONDITION: pre * builds, MEASURE: most * repeat * builds, WORKLOAD: workload_runs * builds}


def later_seconds() -> float:
    """``FLASHSCALE_LATER_S`` as seconds (0 where it is unset or no finite number at or above zero)."""
    try:
        seconds = float(os.environ.get(LATER, "0"))
    except ValueError:
        return 0.0
    return seconds if math.isfinite(seconds) and seconds > 0 else 0.0


class Progress:
    """The runs of a campaign on ``layouts`` layouts of ``sweep``, counted as they start and end (see the module).
    With no sweep (a recorder made alone), the total is unknown and lines say ``?``."""

    def __init__(self, sweep: Sweep | None = None, layouts: int = 0, directory: Path | None = None,
                 bar: object = None, lines: bool | None = None, repeat: int = 1, workload_runs: int = 0) -> None:
        self.per_layout = (planned(sweep, repeat, workload_runs) if sweep is not None
                           else {PRECONDITION: 0, MEASURE: 0, WORKLOAD: 0})
        self.left = {phase: n * layouts for phase, n in self.per_layout.items()}
        self.nominal = {MEASURE: sweep.runtime_s + sweep.ramp_s} if sweep is not None and sweep.time_based else {}
        self.walls: dict[str, list[float]] = {phase: [] for phase in self.per_layout}
        self.layout_runs = dict.fromkeys(self.per_layout, 0)  # of the layout being measured
        self.done = 0
        self.log = campaign_folder.progress_log(directory) if directory is not None else None
        self.bar = bar
        self.lines = os.environ.get(ENVIRONMENT) == "lines" if lines is None else lines
        self.later_s = later_seconds()
        self._current: tuple[str, float] | None = None
        if bar is not None and sweep is not None:
            bar.total = self.total
        if self.log is not None:
            self._say(f"{datetime.now().isoformat(timespec='seconds')}: {self.total} run(s) on {layouts} "
                      "layout(s)")

    @property
    def total(self) -> int:
        return self.done + sum(self.left.values())

    def started(self, layout: str, point: str, run: str) -> None:
        """A fio run begins: ``run`` is ``rep<k>`` or ``round<n>``."""
        label = f"{layout} {point} {run}"
        self._current = (label, time.monotonic())
        if self.bar is not None:
            self.bar.set_postfix_str(label)
        self._say(f"[{self.done + 1}/{self._total_text()}] {label} …")

    def finished(self, row: dict) -> None:
        """The fio run begun last has ended with ``row`` (its bandwidth, or its status failed and error)."""
        if row.get("status", "ok") == "ok":
            what = rate(float(row.get('bw_bytes', math.nan)))
        else:
            what = f"failed ({' '.join(str(row.get('error', '')).split())[:80]})"
        self.ended(PRECONDITION if row.get("phase") == PRECONDITION else MEASURE, what,
                   f"{row.get('layout')} {row.get('point')} rep{row.get('rep')}")

    def ended(self, phase: str, what: str, label: str = "?") -> None:
        """The run begun last, of ``phase``, has ended; ``what`` says how (``label`` names it if none began)."""
        label, began = self._current or (label, time.monotonic())
        self._current = None
        wall = time.monotonic() - began
        self.walls[phase].append(wall)
        self._count(phase)
        self._say(f"[{self.done}/{self._total_text()}] {label}: {what} ({wall:.1f} s) — {self._left_text()}")

    def skipped(self) -> None:
        """A run a resumed campaign measured already: counted, not run again."""
        self._count(MEASURE)

    def layout_done(self, layout: str) -> None:
        """The layout's runs are over: what its planned upper bounds did not use is no longer left."""
        for phase, n in self.per_layout.items():
            self.left[phase] = max(0, self.left[phase] - max(0, n - self.layout_runs[phase]))
        self.layout_runs = dict.fromkeys(self.per_layout, 0)
        if self.bar is not None and self.per_layout[MEASURE]:
            self.bar.total = self.total
            self.bar.refresh()
        self._say(f"[{self.done}/{self._total_text()}] {layout} done — {self._left_text()}")

    def eta(self) -> float | None:
        """Seconds left: each phase's runs left times its mean wall time (or known runtime); None if unknown. The
        workloads' runs count only once one has been timed (``_untimed``)."""
        seconds = 0.0
        for phase, n in self.left.items():
            if not n or phase in self._untimed():
                continue
            walls = self.walls[phase]
            each = sum(walls) / len(walls) if walls else self.nominal.get(phase)
            if each is None:
                return None
            seconds += n * each
        return seconds

    def _count(self, phase: str) -> None:
        self.done += 1
        self.layout_runs[phase] += 1
        if self.left[phase]:
            self.left[phase] -= 1
        if self.bar is not None:
            self.bar.update(1)

    def _total_text(self) -> str:
        return str(self.total) if sum(self.per_layout.values()) else "?"

    def _untimed(self) -> list[str]:
        return [WORKLOAD] if self.left[WORKLOAD] and not self.walls[WORKLOAD] else []

    def _left_text(self) -> str:
        if not sum(self.per_layout.values()):
            return "runs left unknown"
        eta = self.eta()
        left = sum(self.left.values())
        untimed = f" and {self.left[WORKLOAD]} workload run(s) not yet timed" if self._untimed() else ""
        if eta is not None and self.later_s:
            return f"{left} left, ETA {span(eta + self.later_s)} with the notebooks after this one{untimed}"
        return f"{left} left" + ("" if not left else f", ETA {span(eta)}{untimed}" if eta is not None
                                 else ", ETA unknown")

    def _say(self, line: str) -> None:
        if self.log is not None:
            with self.log.open("a") as log:
                log.write(line + "\n")
        if self.lines:
            print(MARK + line, flush=True)
