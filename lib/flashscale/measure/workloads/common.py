"""What every application workload shares: its raw directory, monitored; its teardown; its processes; its rows."""
from __future__ import annotations

import json
import math
import shlex
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

from ...arrays.layouts import Layout
from ...errors import CommandError
from ...system import processes, undo
from ...system.devices import System
from ...system.teardown import Teardown, manifest_dir
from .. import campaign_folder, monitoring, results
from ..truth import THROTTLE_SLICE_S, judged, tolerance as fio_tolerance

PHASE = "workload"  # not a point of the sweep: ``analysis.baseline_and_tax`` never reads these rows
NAN = float("nan")


def raw_dir(layout: Layout, workload: str, point: str, rep: int) -> Path:
    return campaign_folder.raw_dir(layout.name, f"{workload}-{point}", f"rep{rep}")


def now() -> str:
    """A row's ``started_at``: ``results.now``, to the microsecond."""
    return results.now()


@contextmanager
def monitored(recorder, layout: Layout, raw: Path, workload: str, point: str, rep: int) -> Iterator[Path]:
    """The run's raw folder (made now), with every device under the layout and the CPUs sampled meanwhile; the run
    named in the campaign's progress as it starts and ends."""
    folder = recorder.directory / raw
    folder.mkdir(parents=True, exist_ok=False)
    recorder.progress.started(layout.name, f"{workload} {point}", f"rep{rep}")
    with monitoring.sampling(recorder.directory, raw, layout.targets, system=System(runner=recorder.runner),
                             layout=layout.name, point=point, rep=rep, workload=workload):
        yield folder
    recorder.progress.ended(PHASE, "done")


@contextmanager
def teardown(recorder, name: str) -> Iterator[Teardown]:
    """A manifest of this workload's own making (processes, a database cluster), undone however the block ends."""
    manifest = manifest_dir() / f"{recorder.directory.name}-{recorder.run_id}-{name}.json"
    down = Teardown(manifest, recorder.runner, System(runner=recorder.runner))
    try:
        yield down
    finally:
        down.close()


def keep_commands(folder: Path, commands: Sequence[Sequence[str]]) -> None:
    """The exact command lines, one per line, as a shell would quote them."""
    with open(folder / "commands.txt", "a") as fh:
        fh.writelines(shlex.join([str(a) for a in argv]) + "\n" for argv in commands)


def run_together(commands: Sequence[Sequence[str]], down: Teardown, folder: Path, name: str, *,
                 cgroup_procs: Sequence[Path] = (), timeout_s: float = 3600) -> tuple[list[str], float]:
    """Start every command at once (each recorded in ``down`` before it runs), wait for all; their outputs
    (``<name><i>.log``) and the wall time from the first start to the last exit. A non-zero exit is a CommandError."""
    keep_commands(folder, commands)
    started = time.monotonic()
    running: list[processes.Process] = []
    try:
        running += [processes.start(argv, down, folder / f"{name}{i}.log", cgroup_procs=cgroup_procs)
                    for i, argv in enumerate(commands)]
        deadline = started + timeout_s
        for proc in running:
            code = proc.popen.wait(timeout=max(1.0, deadline - time.monotonic()))
            if code != 0:
                raise CommandError(proc.argv, code, proc.output()[-2000:])
    except BaseException:  # an error, a timeout, Ctrl-C: the others are stopped now, not left running
        for proc in running:
            proc.stop()
        raise
    return [proc.output() for proc in running], time.monotonic() - started


def truth(recorder, layout: Layout, cgroup_procs: Sequence[Path], directions: Sequence[str]) -> float:
    """The known truth of a rate of bytes that moves each byte in every one of ``directions`` (read, write): the
    layout's devices x the smallest of their caps (reads and writes are capped apart and can overlap, so a copy or
    a rewrite is held by its slower direction, never by their sum); NaN when the run was not capped."""
    caps = recorder.truth_caps(cgroup_procs)
    return layout.devices * min(caps[d] for d in directions) if directions and all(
        caps.get(d, 0) > 0 for d in directions) else NAN


def evidence(truth_bw_bytes: float, value: float, seconds: float) -> dict:
    """A rate of bytes held to its truth as fio's rows are (``measure.truth.judged``): ``above_truth`` when above it
    by more than ``tolerance`` for a run of ``seconds``; ``too_short`` under ``truth.MIN_RUNTIME_S``, or when it is
    more than 2% above its truth and the throttle's slices explain it (no rate: ``truth.why_too_short``)."""
    return {"truth_bw_bytes": truth_bw_bytes, **judged(value / truth_bw_bytes, seconds, tolerance(seconds))}


def tolerance(seconds: float) -> float:
    """How far (a fraction) an application's rate over ``seconds`` may be above its truth: fio's tolerance
    (``truth.tolerance``, the throttle's slice) and one slice more. fio's runs are timed after a ramp; an
    application is timed from an idle throttle, which lets a slice's budget through at once (a transfer's first second
    wrote 220 MB/s on a device capped at 200, its next ones 200)."""
    return fio_tolerance(seconds) + THROTTLE_SLICE_S / seconds if seconds > 0 else math.inf


def metric_row(recorder, layout: Layout, cgroup_procs: Sequence[Path], *, workload: str, metric: str, value: float,
               unit: str, raw: Path, point: str, rep: int, numjobs: int, bs: int, runtime_s: float, started: str,
               missing_reason: str | None = None, directions: Sequence[str] = (), **extra) -> dict:
    """One metric of an application as a row of the campaign's table: the columns of every row on the layout
    (``recorder.header``; no ``cap_bps``: a metric is no rw of fio's), ``value`` in ``unit`` (also ``bw_bytes``
    when a bandwidth, ``iops`` when a rate of operations); ``rw`` is the metric's name. A rate of bytes names the
    ``directions`` it moves each byte in and carries its truth (``truth``, ``evidence``) over ``runtime_s``, the
    time it was measured over."""
    rate = unit in ("ops/s", "files/s", "tps")
    held = evidence(truth(recorder, layout, cgroup_procs, directions), value, runtime_s) \
        if unit == "bytes/s" and directions else {}
    return {**recorder.header(layout, phase=PHASE, workload=workload),
            "rw": metric, "bs": int(bs), "numjobs": int(numjobs), "iodepth": 1, "rep": rep,
            "bw_bytes": value if unit == "bytes/s" else NAN, "iops": value if rate else NAN,
            "runtime_s": runtime_s, "point": f"{workload}-{point}", "raw_dir": str(raw), "started_at": started,
            "status": "ok", "metric": metric, "value": value, "unit": unit, "missing_reason": missing_reason,
            **held, **extra}


def environment(folder: Path, **facts) -> None:
    """What the application was (versions, settings) beside its raw output; the row's env.json is the recorder's."""
    (folder / "workload.json").write_text(json.dumps(facts, indent=1, default=str))


def scratch(parent: Path, name: str, down: Teardown) -> Path:
    """A fresh directory of ours in ``parent``, removed with everything in it (``system.undo.make_scratch``)."""
    return undo.make_scratch(parent, name, down)
