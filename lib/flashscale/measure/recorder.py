"""One layout's sweep, measured: its precondition, then every point and repetition, each row kept as it finishes.

Each run's raw files (``job.fio``, ``fio.json``, ``env.json``) go to ``raw/<layout>/<point>/rep<k>/`` under the
campaign directory, and its row is appended to ``rows.jsonl`` at once, so an interrupted campaign keeps everything
it measured. A row on the emulated array carries its known truth (``results.evidence``).

Workloads other than the sweep's own fio points (a user's job file, an application) are callables
``workload(recorder, layout, cgroup_procs)`` in ``workloads``: each runs after the sweep's points on every layout and
keeps its rows with ``recorder.keep``, so they land in the same table with the same raw files beside them.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path

from ..arrays.layouts import Layout
from ..system.commands import Runner
from . import fio, precondition, results
from .sweep import Sweep


@dataclass
class Recorder:
    """Runs one layout's sweep and appends each run's row to the campaign directory as soon as it finishes.

    ``caps`` is the emulated array's per-device cap per rw (``read``, ``write``, ...): a row carries it, and its
    agreement with the known truth, only when fio ran inside the throttled cgroup. ``bar`` counts the runs."""

    campaign: str
    host: str
    sweep_spec: Sweep
    directory: Path
    runner: Runner
    run_id: str
    caps: dict
    bar: object
    environment: dict
    workloads: Sequence[Callable[["Recorder", Layout, list[Path]], None]] = ()

    verdict = None  # the steady-state verdict of the layout being measured, when it ran in rounds

    def sweep(self, layout: Layout, cgroup_procs: list[Path]) -> None:
        """The layout's precondition (when the sweep asks for it; in rounds until steady when it asks for that),
        then every point and repetition, each row carrying the layout's steady-state verdict."""
        first = precondition.job(self.sweep_spec, layout.targets) if self.sweep_spec.precondition else None
        self.verdict = None
        if first is not None and self.sweep_spec.steady_rounds:
            self.verdict = self._rounds(layout, first, cgroup_procs)
        elif first is not None:  # outside the throttled cgroup: it prepares the files, it measures nothing
            self._record(layout, first, Path("raw") / layout.name / precondition.PHASE, [],
                         phase=precondition.PHASE, point=precondition.point(first))
        for point in self.sweep_spec.points():
            job = self.sweep_spec.job(point, layout.targets)
            for rep, warmup in self.sweep_spec.reps():
                self._record(layout, job, Path("raw") / layout.name / job.point / f"rep{rep}", cgroup_procs,
                             rep=rep, warmup=warmup)
                self.bar.update(1)
        for workload in self.workloads:
            workload(self, layout, cgroup_procs)

    def _rounds(self, layout: Layout, job: fio.FioJob, cgroup_procs: list[Path]):
        """The precondition in rounds (inside the throttled cgroup: each round measures the devices) until steady
        or ``rounds_max``; each round's row is kept with the verdict on the rounds so far. Returns the last."""
        raw = Path("raw") / layout.name / precondition.PHASE
        verdict = None
        for row, verdict in precondition.rounds(
                lambda n: self._measure(layout, job, raw / f"round{n}", cgroup_procs, phase=precondition.PHASE,
                                        point=precondition.point(job), round_number=n), self.sweep_spec.rounds_max):
            self.keep(layout, {**row, **precondition.verdict_columns(verdict)}, cgroup_procs)
        return verdict

    def _record(self, layout: Layout, job: fio.FioJob, raw_dir: Path, cgroup_procs: list[Path],
                **how) -> None:
        """Run ``job`` once and append its row, with the layout's steady-state verdict, to the campaign."""
        row = self._measure(layout, job, raw_dir, cgroup_procs, **how)
        self.keep(layout, {**row, **precondition.verdict_columns(self.verdict)}, cgroup_procs)

    def _measure(self, layout: Layout, job: fio.FioJob, raw_dir: Path, cgroup_procs: list[Path], *,
                 rep: int = 0, warmup: bool = False, phase: str = "measure", point: str | None = None,
                 round_number: int | None = None) -> dict:
        """Run ``job`` once; its row, with its agreement with the known truth."""
        self.bar.set_postfix_str(f"{layout.name} {point or job.point} {f'round{round_number}' if round_number else f'rep{rep}'}")
        started = datetime.now(timezone.utc).isoformat(timespec="seconds")
        data = fio.run(job, self.directory / raw_dir, self.runner, cgroup_procs=cgroup_procs)
        axes = {"rw": job.rw, "bs": job.bs, "numjobs": job.numjobs, "iodepth": job.iodepth,
                **({"nrfiles": job.nrfiles} if job.nrfiles else {})}
        caps = {"read": self.caps["read"], "write": self.caps["write"]} if cgroup_procs else {}
        row = {"campaign": self.campaign, "host": self.host, "layout": layout.name,
               "devices": layout.devices, **axes, "rep": rep, "warmup": warmup, **fio.parse(data),
               "run_id": self.run_id, "point": point or job.point, "backend": layout.backend,
               "cap_bps": self.caps.get(job.rw, float("nan")) if cgroup_procs else float("nan"),
               "raw_dir": str(raw_dir), "started_at": started, "phase": phase, "round": round_number}
        return {**row, **results.evidence(row, caps)}

    def keep(self, layout: Layout, row: dict, cgroup_procs: list[Path]) -> None:
        """Write the row beside its raw files (env.json) and append it to the campaign's rows."""
        raw_dir = Path(row["raw_dir"])
        (self.directory / raw_dir / "env.json").write_text(json.dumps(
            {**self.environment, "targets": list(layout.targets), "layout": layout.description,
             "cgroup": [str(p) for p in cgroup_procs], "row": row}, indent=1, default=str))
        results.append_rows(self.directory, [row])
