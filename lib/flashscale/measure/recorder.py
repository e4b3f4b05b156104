"""One layout's sweep, measured: its precondition, then every point and repetition, each row kept as it finishes.

Each run's raw files (``job.fio``, ``fio.json``, ``env.json``) go to ``raw/<layout>/<point>/rep<k>/`` under the
campaign directory, and its row is appended to ``rows.jsonl`` at once, so an interrupted campaign keeps everything
it measured. A row on the emulated array carries its known truth (``truth.evidence``).

Workloads other than the sweep's own fio points (a user's job file, an application) are callables
``workload(recorder, layout, cgroup_procs)`` in ``workloads``: each runs after the sweep's points on every layout and
keeps its rows with ``recorder.keep``, so they land in the same table with the same raw files beside them (the
columns every row on a layout shares come from ``recorder.header``, whatever made the row). Each says how many runs
it makes on a layout (``runs()``) and names each in ``recorder.progress`` as it starts and ends.

A run that fails (fio reports an error, exits non-zero, leaves no usable JSON: a full file system, a device gone) is
kept as a failed row (``status`` failed, ``error`` fio's own message, NaN numbers); ``on_failure`` says whether the
sweep goes on (continue) or stops there (stop: FioError, every row before it kept). On a resumed campaign, the
runs in ``done`` (``resume.run_key``: layout, point, rep, and the host count where there is one) are not run again.

Where fio runs is the sweep's transport: here (``measure.fio``, started ahead, sampled, logged: one row a run), or a
cluster's hosts (``fio_client.OnHosts``: each host's row and the cluster's, last, whose rate the repetitions decide
on), whose host counts are the sweep's outermost axis (``OnHosts.counts``: runs under ``raw/<layout>/hosts<k>/``).
"""
from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Callable, Sequence
from pathlib import Path

from ..arrays.layouts import Layout
from ..errors import CommandError, FioError
from ..system.commands import Runner
from .. import faults
from ..system import idle, monitor
from ..system.devices import System
from . import adaptive, ahead, batch, campaign_folder, fio, fio_output, monitoring, precondition, rate_log, results
from .fio_client import carried
from .resume import run_key
from .progress import Progress
from .results import BRACKET_PHASE, bracket_name
from .reference import as_reference, reference_runs
from .sweep import Sweep
from . import truth

NAN = float("nan")


@dataclass
class Recorder:
    """Runs one layout's sweep and appends each run's row to the campaign directory as soon as it finishes.

    ``caps`` is the emulated array's per-device cap per rw (``read``, ``write``, ...): a row carries it, and its
    agreement with the known truth, only when fio ran inside the throttled cgroup. ``layout_caps`` gives a layout
    its own, by name, where its devices are not all at the array's cap (``CAP_SCALE``: ``ArraySpec.layout_caps``,
    the cap per device of which its truth is its devices x). ``progress`` is told each run's
    start and end (``measure.progress``: the log, the lines, ``bar``, the tqdm bar workloads name their runs on)."""

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
    on_failure: str = "continue"
    done_rows: dict = field(default_factory=dict)  # resumed runs' rows, for an adaptive sweep or a precision
    done: frozenset = frozenset()  # the runs a resumed campaign measured already (``resume.run_key``)
    progress: Progress | None = None  # None: one that only moves ``bar``
    layout_caps: dict = field(default_factory=dict)  # layout name -> its caps per rw, where they are not ``caps``
    before_build: Callable[[str], None] | None = None  # told each layout's name before it is built (its prediction)
    asked: dict | None = None  # the caps the campaign asked for, where ``hold`` lowered them to fit the harness
    asked_layout_caps: dict = field(default_factory=dict)
    harness: dict = field(default_factory=dict)  # direction -> what the test bed carried uncapped (measure.harness)
    # with a sweep's precision: why a point stops after the rates of its runs so far and the reference's runs at the
    # point, None where no tax is asked ("precise", "decided", "max" or "more"; analysis.repetitions.decision, given
    # by the campaign); None: each point runs its least, then up to its most
    stopping: Callable[[list[float], list[float] | None], str] | None = None
    tax_reference: str | None = None  # the layout a tax is decided against as points run (reference.reference_of)
    rates: dict = field(default_factory=dict)  # (layout, point, build) -> its measured rates, as measured
    build: int = 0  # which build of the layout is being swept (BUILDS: Sweep.builds), from 0; rows carry it
    devices: dict = field(default_factory=dict)  # layout name -> its devices, as swept (the tax reference's)

    def __post_init__(self) -> None:
        if self.progress is None:
            self.progress = Progress(bar=self.bar)
        self.line = ahead.Line(self.runner, enabled=self.sweep_spec.start_ahead)  # each run's fio started ahead

    precondition_dir = precondition.PHASE  # raw/<layout>/<this>
    verdict = None  # the steady-state verdict of the layout being measured, when it ran in rounds
    phase = "measure"  # the phase of the sweep's rows: measure, or the reference's bracket (BRACKET_PHASE)
    measuring: str | None = None  # the name of the layout being measured (its caps are ``caps_of`` it)
    transport = None  # where the layout's fio runs: None here, else a cluster's hosts (``fio_client.OnHosts``)
    count: int | None = None  # the hosts the runs are on now (a cluster's: under ``hosts<count>/``), None here

    def building(self, name: str) -> None:
        """Layout ``name`` is about to be built: ``before_build`` hears it (the campaign states its prediction)."""
        if self.before_build is not None:
            self.before_build(name)

    def sweep(self, layout: Layout, cgroup_procs: list[Path], phase: str = "measure", transport=None) -> None:
        """The layout's precondition (when the sweep asks for it; in rounds until steady when it asks for that),
        then every point and repetition, each row carrying the layout's steady-state verdict and ``phase``: measure,
        or ``BRACKET_PHASE`` for the tax reference swept once more after the layouts (``Sweep.bracket``: its rows
        are of the bracket's build, ``Sweep.bracket_build``, and no workload runs). ``transport``: where fio runs
        (the module's docstring), None here; the precondition runs on every host, then each host count is swept."""
        self.phase, self.transport = phase, transport
        counts = transport.counts if transport is not None else (None,)
        self.count = transport.at(max(counts), state=False) if transport else None  # the precondition: every host
        first = precondition.job(self.sweep_spec, layout.targets) if self.sweep_spec.precondition else None
        # a resumed layout is preconditioned anew, beside the interrupted run's precondition
        self.precondition_dir = campaign_folder.fresh_name(self.directory / campaign_folder.raw_dir(layout.name),
                                                           precondition.PHASE)
        self.verdict, self.measuring = None, layout.name
        self.devices[layout.name] = layout.devices
        if self.done and not self.done_rows:  # what an adaptive sweep or a precision decides on, resumed
            self.done_rows = {run_key(r["layout"], r["point"], r["rep"], r.get("hosts")): r
                              for r in campaign_folder.read_rows(self.directory)[0]}  # a cluster's: its all row
            for (name, point, *_), r in sorted(self.done_rows.items(), key=lambda item: str(item[0])):
                if r.get("status") == "ok" and not r.get("warmup") and r.get("phase", "measure") == "measure":
                    key = (name, point, int(r.get("build") or 0))  # the reference's runs, resumed
                    self.rates.setdefault(key, []).append(float(r["bw_bytes"]))
                    self.devices.setdefault(name, int(r["devices"]))
        if first is not None and self.sweep_spec.steady_rounds:
            self.verdict = self._rounds(layout, first, cgroup_procs)
        elif first is not None:  # outside the throttled cgroup: it prepares the files, it measures nothing
            self._record(layout, first, campaign_folder.raw_dir(layout.name, self.precondition_dir), [],
                         phase=precondition.PHASE, point=precondition.point(first))
        points = list(self.sweep_spec.points())
        try:
            for count in counts:  # each told to the transport first (its predictions stated)
                self.count = transport.at(count) if transport else None
                if self.sweep_spec.adaptive:
                    self._explore(layout, cgroup_procs)
                for point, following in zip([] if self.sweep_spec.adaptive else points, [*points[1:], None]):
                    self._point(layout, point, cgroup_procs, following=following)
        finally:
            self.line.close()  # a run started ahead and not reached (an error, an interrupt) does nothing
        if phase == BRACKET_PHASE:
            campaign_folder.mark_layout_done(self.directory, bracket_name(layout.name))
            self.progress.layout_done(bracket_name(layout.name))
            return
        for workload in self.workloads:
            workload(self, layout, cgroup_procs)
        if self.build == self.sweep_spec.builds - 1:  # the layout's last build: the layout is done
            campaign_folder.mark_layout_done(self.directory, layout.name)
            self.progress.layout_done(layout.name)

    def _raw(self, layout: str, point: str, rep: int | None = None) -> Path:
        """A run's folder (``rep``), or its point's: ``raw/<layout>/[hosts<k>/]<point>/rep<k>``."""
        hosts = [f"hosts{self.count}"] if self.count is not None else []
        return campaign_folder.raw_dir(layout, *hosts, point, *([f"rep{rep}"] if rep is not None else []))

    def _point(self, layout: Layout, point: dict, cgroup_procs: list[Path], adaptive: str | None = None,
               following: dict | None = None) -> list[float]:
        """Every repetition of one point (those a resumed campaign measured already are not run again); with a
        precision, then one more at a time until ``stopping`` says precise or max. The bandwidth of each measured
        repetition, for an adaptive sweep to decide on. Each row says why the point's runs stopped
        (``reps_reason``: ``fixed``, or after each run ``more``, ``precise``, ``max``). The run known to come next
        (the point's next repetition, or ``following``'s first where the point's runs are fixed) is started ahead."""
        job = self.sweep_spec.job(point, layout.targets)
        measured: list[float] = []
        reps = self.sweep_spec.reps(self.build)
        more = iter(self.sweep_spec.more_reps(self.build))
        reason = "fixed" if self.sweep_spec.precision is None else "more"
        if self._batches(layout, job, reps):
            rows = self._batched(layout, job, reps, cgroup_procs, adaptive)
            return [float(r["bw_bytes"]) for r in rows if r is not None and not r["warmup"] and r["status"] == "ok"]
        while reps:
            rep, warmup = reps.pop(0)
            then = self._next(layout, job, reps, following)
            row = self._rep(layout, job, rep, warmup, cgroup_procs, adaptive,
                            lambda value: self._reason(measured, value, warmup, layout, job.point), then)
            if row is not None and not warmup and row.get("status", "ok") == "ok":
                measured.append(float(row["bw_bytes"]))
                self.rates[(layout.name, job.point, self.build)] = list(measured)
            if row is not None and not warmup:
                reason = row.get("reps_reason", reason)
            if not reps and reason == "more":
                reps = [(rep, False) for rep in itertools.islice(more, 1)]
        return measured

    def _next(self, layout: Layout, job: fio.FioJob, reps: list, following: dict | None):
        """The run after this one, as (job, its folder), where it is known and not measured before a resume."""
        if self.sweep_spec.batch_reps or self.transport is not None:  # one fio process; a cluster's client
            return None
        if reps:
            nxt, rep = job, reps[0][0]
        elif following is not None and self.sweep_spec.precision is None:
            nxt = self.sweep_spec.job(following, layout.targets)
            rep = self.sweep_spec.reps(self.build)[0][0]
        else:
            return None
        raw = self._raw(layout.name, nxt.point, rep)
        return None if run_key(layout.name, nxt.point, rep, self.count) in self.done else (nxt, self.directory / raw)

    def _reason(self, measured: list[float], value: float | None, warmup: bool, layout: Layout, point: str) -> str:
        """Why the point stops after this run (of rate ``value``; None: it failed), given those before it and the
        tax reference's runs at the point (``reference.reference_runs``)."""
        if self.sweep_spec.precision is None or warmup:
            return "fixed"
        values = measured + ([value] if value is not None else [])
        runs = len(measured) + 1
        if self.stopping is not None and self.tax_reference == layout.name:  # every layout's test shares its runs
            return as_reference(values, self.sweep_spec.most_reps())
        if self.stopping is None or runs < self.sweep_spec.least_reps():
            return "more" if runs < self.sweep_spec.most_reps() else "max"
        against = reference_runs(self.rates, self.tax_reference, layout.name, layout.devices, point,
                                 self.devices.get(self.tax_reference))
        said = self.stopping(values, against)
        return "max" if said == "more" and runs >= self.sweep_spec.most_reps() else said

    def _batches(self, layout: Layout, job: fio.FioJob, reps: list[tuple[int, bool]]) -> bool:
        """Whether the point's runs go into one fio process (``measure.batch``): the sweep asks for it
        (``batch_reps``), nothing decides between them (no precision), none was measured before a resume."""
        return (self.sweep_spec.batch_reps and self.sweep_spec.precision is None and len(reps) > 1
                and not any(run_key(layout.name, job.point, rep, self.count) in self.done for rep, _ in reps))

    def _batched(self, layout: Layout, job: fio.FioJob, reps: list[tuple[int, bool]], cgroup_procs: list[Path],
                 adaptive: str | None) -> list[dict | None]:
        """Every run of one point in one fio process, separated by stonewall (``measure.batch``): each its own row
        and raw files. The devices are sampled, and the CPUs counted, over the batch as a whole (its first rep's
        label, the point's folder); a failure fails every run of the batch."""
        job = rate_log.logged(job)
        raws = [self._raw(layout.name, job.point, rep) for rep, _ in reps]
        point_dir = self._raw(layout.name, job.point)
        self.progress.started(layout.name, job.point, f"rep{reps[0][0]}-{reps[-1][0]}")
        started, system = results.now(), System(runner=self.runner)
        try:
            with monitoring.sampling(self.directory, point_dir, layout.targets, system=system, layout=layout.name,
                                     point=job.point, rep=reps[0][0]):
                with idle.held(self.sweep_spec.cpu_latency_us) as latency_us:
                    before = system.cpu_times()
                    documents = batch.run([job] * len(reps), [self.directory / r for r in raws],
                                          self.directory / point_dir, self.runner, cgroup_procs=cgroup_procs)
                    busy = monitor.busy_cores(before, system.cpu_times())
        except (FioError, CommandError) as exc:
            for (rep, warmup), raw in zip(reps, raws):
                failed = {**self._failed(layout, job, raw, exc, rep=rep, warmup=warmup, adaptive=adaptive,
                                         phase=self.phase),
                          "reps_reason": "fixed"}
                self.keep(layout, failed, cgroup_procs)
                self.progress.finished(failed)
            if self.on_failure == "stop":
                raise FioError(f"{exc} (ON_FAILURE is stop: the sweep stopped at {point_dir}; every row before it "
                               "is kept)") from None
            return [None] * len(reps)
        rows = []
        for (rep, warmup), raw, data in zip(reps, raws, documents):
            row = {**self._row(layout, job, raw, cgroup_procs, data, busy, latency_us, started, rep=rep,
                               warmup=warmup, adaptive=adaptive, phase=self.phase), "status": "ok",
                   "reps_reason": "fixed"}
            row = {**row, **precondition.verdict_columns(self.verdict)}
            self.keep(layout, row, cgroup_procs)
            self.progress.finished(row)
            rows.append(row)
        return rows

    def _rep(self, layout: Layout, job: fio.FioJob, rep: int, warmup: bool, cgroup_procs: list[Path],
             adaptive: str | None, reason, then=None) -> dict | None:
        """One repetition: measured and kept with its ``reps_reason``, or the resumed campaign's row."""
        key = run_key(layout.name, job.point, rep, self.count)
        if key in self.done:
            self.progress.skipped()
            return self.done_rows.get(key)
        return self._record(layout, job, self._raw(layout.name, job.point, rep), cgroup_procs,
                            rep=rep, warmup=warmup, adaptive=adaptive, reason=reason, then=then, phase=self.phase)

    def _explore(self, layout: Layout, cgroup_procs: list[Path]) -> None:
        """An adaptive sweep: along ``sweep.adaptive``, for each combination of the other axes, only the points
        ``measure.adaptive.explore`` chooses; what it found and skipped goes to ``raw/<layout>/adaptive.json``."""
        axis, found = self.sweep_spec.adaptive, []
        for base, grid in self.sweep_spec.lines():
            def measure(value: int, base: dict = base) -> list[float]:
                bandwidths = self._point(layout, {**base, axis: value}, cgroup_procs, adaptive=f"{axis}={value}")
                if not bandwidths:
                    raise FioError(f"no repetition of {layout.name} {base} {axis}={value} finished: an adaptive "
                                   "sweep has nothing to decide on (see the failed rows)")
                return bandwidths
            exploration = adaptive.explore(grid, measure)
            found.append({**base, "axis": axis, **exploration.summary()})
        out = self.directory / campaign_folder.raw_dir(layout.name, "adaptive.json")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(found, indent=1, default=str))

    def _rounds(self, layout: Layout, job: fio.FioJob, cgroup_procs: list[Path]):
        """The precondition in rounds (inside the throttled cgroup: each round measures the devices) until steady
        or ``rounds_max``; each round's row is kept with the verdict on the rounds so far. Returns the last."""
        raw = campaign_folder.raw_dir(layout.name, self.precondition_dir)
        verdict = None
        for row, verdict in precondition.rounds(
                lambda n: self._measure(layout, job, raw / f"round{n}", cgroup_procs, phase=precondition.PHASE,
                                        point=precondition.point(job), round_number=n)[-1],
                self.sweep_spec.rounds_max):
            row = {**row, **precondition.verdict_columns(verdict)}
            self.keep(layout, row, cgroup_procs)
            self.progress.finished(row)
        return verdict

    def _record(self, layout: Layout, job: fio.FioJob, raw_dir: Path, cgroup_procs: list[Path],
                reason: Callable[[float | None], str] | None = None, then=None, **how) -> dict | None:
        """Run ``job`` once and append its rows (one, or a cluster's hosts' and its own, last: the run's), with the
        layout's steady-state verdict and (a sweep's point) why its runs stop or go on (``reason`` of the run's
        rate, None if it failed: ``reps_reason``), to the campaign; a run that fails is kept as a failed row, and
        stops the sweep when ``on_failure`` is stop. The run's row, None if it failed."""
        most = self.sweep_spec.most_reps()
        why = (lambda rate: {"reps_reason": reason(rate), "reps_most": most}) if reason else (lambda rate: {})
        try:
            rows = [{"status": "ok", **row} for row in self._measure(layout, job, raw_dir, cgroup_procs, then=then,
                                                                     **how)]  # a host's row says its own
            faults.reached("fio-exited")
        except (FioError, CommandError) as exc:
            rows = [self._failed(layout, job, raw_dir, exc, **how)]
        ok = rows[-1]["status"] == "ok"
        said = {**why(float(rows[-1]["bw_bytes"]) if ok else None),
                **(precondition.verdict_columns(self.verdict) if ok else {})}
        rows = [{**row, **said} for row in rows]
        self._keep(layout, rows, cgroup_procs)
        self.progress.finished(rows[-1])
        if not ok and self.on_failure == "stop":
            raise FioError(f"{rows[-1]['error']} (ON_FAILURE is stop: the sweep stopped at {raw_dir}; every row "
                           "before it is kept)")
        return rows[-1] if ok else None

    def header(self, layout: Layout, *, rw: str | None = None, cgroup_procs: Sequence[Path] = (),
               warmup: bool = False, phase: str = "measure", round_number: int | None = None,
               workload: str | None = None) -> dict:
        """The columns every row on ``layout`` shares, whatever made it (a sweep's run, a failed run, a user's job
        file, an application's metric), from this one place: the campaign, host, layout, its devices and backend,
        the run id; the row's warm-up flag, phase, round and ``workload`` (absent from fio's own rows, which
        ``results.DEFAULTS`` reads as fio); ``cap_bps``, the cap of ``rw`` when it ran inside the throttled cgroup
        (``cgroup_procs``), NaN otherwise (a failed run; an application's metric, which is no rw of fio's)."""
        return {"campaign": self.campaign, "host": self.host, "layout": layout.name, "devices": layout.devices,
                "run_id": self.run_id, "backend": layout.backend,
                "cap_bps": self.caps_of(layout.name).get(rw, NAN) if cgroup_procs else NAN,
                "cap_asked_bps": self.asked_of(layout.name).get(rw, NAN) if cgroup_procs else NAN,
                "harness_bw_bytes": carried(self.harness, rw) if cgroup_procs else NAN, "warmup": warmup,
                "build": self.build,
                "phase": phase,
                "round": round_number, **({"workload": workload} if workload is not None else {}),
                **({"accelerator": self.environment["accelerator"]} if "accelerator" in self.environment else {})}

    def hold(self, caps: dict, layout_caps: dict, harness: dict) -> None:
        """Hold the runs to ``caps`` (and ``layout_caps``) from now on, the caps asked kept as ``asked``: what the
        harness carried uncapped (``harness``, per direction, ``measure.harness``) let only these be a truth."""
        self.asked, self.asked_layout_caps = self.caps, self.layout_caps
        self.caps, self.layout_caps, self.harness = caps, layout_caps, dict(harness)

    def asked_of(self, layout: str | None) -> dict:
        """The caps per rw the campaign asked for ``layout``: ``caps_of`` unless ``hold`` lowered them."""
        if self.asked is None:
            return self.caps_of(layout)
        return self.asked_layout_caps.get(layout, self.asked)

    def caps_of(self, layout: str | None) -> dict:
        """The caps per rw of ``layout``'s runs: its own (``layout_caps``), else the array's."""
        return self.layout_caps.get(layout, self.caps)

    def truth_caps(self, cgroup_procs: Sequence[Path], layout: Layout | None = None) -> dict:
        """The caps of the known truth (``truth.evidence``) of a run on ``layout`` (default: the layout being
        measured) in ``cgroup_procs``: read and write, or none when it ran outside the throttled cgroup."""
        caps = self.caps_of(layout.name if layout else self.measuring)
        return {d: caps[d] for d in ("read", "write") if d in caps} if cgroup_procs else {}

    @staticmethod
    def _axes(job: fio.FioJob) -> dict:
        return {"rw": job.rw, "bs": job.bs, "numjobs": job.numjobs, "iodepth": job.iodepth,
                **({"nrfiles": job.nrfiles} if job.nrfiles else {})}

    def _failed(self, layout: Layout, job: fio.FioJob, raw_dir: Path, exc: Exception, *, rep: int = 0,
                warmup: bool = False, phase: str = "measure", point: str | None = None,
                adaptive: str | None = None) -> dict:
        """The row of a run that failed: its point, ``status`` failed, ``error`` the message, NaN numbers."""
        row = {**self.header(layout, warmup=warmup, phase=phase), **self._axes(job), "rep": rep,
               "point": point or job.point, "raw_dir": str(raw_dir),
               "started_at": results.now(), **results.failed(exc),
               "adaptive": adaptive}
        return {**row, **truth.evidence(row, {})}

    def _measure(self, layout: Layout, job: fio.FioJob, raw_dir: Path, cgroup_procs: list[Path], *,
                 rep: int = 0, warmup: bool = False, phase: str = "measure", point: str | None = None,
                 round_number: int | None = None, adaptive: str | None = None, then=None) -> list[dict]:
        """Run ``job`` once where the sweep's transport runs fio (``then``: the run after it, started ahead here:
        ``measure.ahead``); its rows, each with its agreement with the known truth."""
        label = f"round{round_number}" if round_number else f"rep{rep}"
        if self.transport is not None:
            self.progress.started(layout.name, point or job.point, f"{label} on {self.count} host(s)")
            return self.transport.run(job, raw_dir, {  # each host's own columns over the header's
                **self.header(layout, warmup=warmup, phase=phase, round_number=round_number), "rep": rep,
                "point": point or job.point, "raw_dir": str(raw_dir), "adaptive": adaptive})
        self.progress.started(layout.name, point or job.point, label)
        job, then = rate_log.logged(job), (rate_log.logged(then[0]), then[1]) if then else None
        started = results.now()
        system = System(runner=self.runner)
        with monitoring.sampling(self.directory, raw_dir, layout.targets, system=system,
                                 layout=layout.name, point=point or job.point, rep=rep):
            with idle.held(self.sweep_spec.cpu_latency_us) as latency_us:
                before = system.cpu_times()  # the whole machine's CPUs: the loop workers copy the data, not fio
                data = self.line.run(job, self.directory / raw_dir, cgroup_procs=cgroup_procs, then=then)
                busy = monitor.busy_cores(before, system.cpu_times())
        return [self._row(layout, job, raw_dir, cgroup_procs, data, busy, latency_us, started, rep=rep,
                          warmup=warmup, phase=phase, point=point, round_number=round_number, adaptive=adaptive)]

    def _row(self, layout: Layout, job: fio.FioJob, raw_dir: Path, cgroup_procs: list[Path], data: dict,
             busy: float, latency_us, started: str, *, rep: int = 0, warmup: bool = False, phase: str = "measure",
             point: str | None = None, round_number: int | None = None, adaptive: str | None = None) -> dict:
        """The row of one run of ``job`` whose fio output is ``data``, with its agreement with the known truth."""
        row = {**self.header(layout, rw=job.rw, cgroup_procs=cgroup_procs, warmup=warmup, phase=phase,
                             round_number=round_number),
               **self._axes(job), "rep": rep, **fio_output.parse(data), "cpu_busy_cores": busy,
               "cpu_latency_us": latency_us, "point": point or job.point,
               "raw_dir": str(raw_dir), "started_at": started, "adaptive": adaptive,
               **rate_log.evidence(self.directory / raw_dir, rate_log.interval_ms(job))}
        return {**row, **truth.evidence(row, self.truth_caps(cgroup_procs, layout))}

    def keep(self, layout: Layout, row: dict, cgroup_procs: list[Path]) -> None:
        """Write the row beside its raw files (env.json) and append it to the campaign's rows."""
        self._keep(layout, [row], cgroup_procs)

    def _keep(self, layout: Layout, rows: list[dict], cgroup_procs: list[Path]) -> None:
        """One run's rows (a cluster's: each host's and its own, last) beside its raw files (env.json: ``row``, the
        run's, and every row of it) and appended to the campaign's rows."""
        campaign_folder.write_run_environment(self.directory, Path(rows[-1]["raw_dir"]), {
            **self.environment, "targets": list(layout.targets), "layout": layout.description,
            "cgroup": [str(p) for p in cgroup_procs], "row": rows[-1], **({"rows": rows} if len(rows) > 1 else {})})
        faults.reached("row-env-written")
        campaign_folder.append_rows(self.directory, rows)
