"""What a campaign costs, known before it starts: device time and wall time from its own parameters.

*Device time* is what the devices are busy with fio: every measured run, warm-up and precondition, each run its
``ramp_s`` + ``runtime_s`` (a time-based run lasts that long whatever the device does), the precondition's bytes
at the rate the devices write, the harness's probe (``measure.harness``: one uncapped run a direction, where the
caps are held to a truth). *Wall time* adds what is not fio's: each run's start and exit and flashscale's work
between runs (``RUN_OVERHEAD_S``), each layout's erase, build and teardown (``BUILD_S``), and each notebook's kernel,
analysis and report (``NOTEBOOK_S``). These three are measured, not assumed (the figures beside them); a test bed's
devices write at a rate nobody knows before they are measured, so its precondition is counted at
``ASSUMED_WRITE_BPS`` a device and says so.

With a precision target (``Sweep.precision``: repetitions stop when a point is precise enough, up to
``Sweep.max_repetitions``) the runs of a point are not known in advance: the cost is a range, from every point
stopping at its first ``repetitions`` runs to every point running ``max_repetitions``.

    of_layouts(sweep, layouts, ...)   a ``Cost``: device and wall seconds (least, most) and the runs, by part
    total(costs)                      the sum of several (a campaign's notebooks)
    fits(cost, budget_s)              None, or what the campaign would have to drop to fit in ``budget_s``
    reachable(cost, budget_s)         with a precision target: the runs a point can have and the precision they reach
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from scipy import stats as sps

from ..measure.harness import PROBE_RUNTIME_S
from ..measure.sweep import Sweep
from ..measure.units import span

# Measured on this project's 2-core machine (quickstart, 3 layouts on 4 emulated devices, 72 runs; commit message).
RUN_OVERHEAD_S = 0.6  # fio's start and exit (0.32 s, make bench) and flashscale's own work between two runs
# (measured before START_AHEAD, measure.ahead: a run's fio started ahead pays most of its start in the ramp of the run
# before; make bench's campaign took 2.4 s less for its 16 runs started ahead, 0.15 s a run, so the wall estimate of
# a campaign that ramps errs long by about that a run; the quickstart not yet re-measured)
BUILD_S = 4.0  # a layout's erase, mkfs, mount and teardown on loop devices (a real drive's discard may take longer)
NOTEBOOK_S = 25.0  # a notebook's kernel start, the campaign's set-up, its analysis, plots and HTML report
ASSUMED_WRITE_BPS = 1e9  # a test bed device's sequential write before it is measured: said with the estimate
PARTS = ("measure", "warmup", "precondition", "probe", "builds", "overhead")  # the device parts, then the wall's


@dataclass(frozen=True)
class Cost:
    """Seconds as (least, most): ``device_s`` (fio busy on the devices) and ``wall_s`` (what the clock shows);
    ``runs`` (fio runs); ``parts`` (seconds of each of ``PARTS``, (least, most)); ``notes`` (what is assumed)."""

    device_s: tuple[float, float]
    wall_s: tuple[float, float]
    runs: tuple[int, int]
    parts: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    precision: float | None = None  # the sweep's precision target, where its repetitions stop by it
    per_point: tuple[int, int] = (0, 0)  # measured runs of a point, (least, most)

    def words(self) -> str:
        """"device 7 min 12 s, wall 9 min 30 s (72 runs)"; a range where the repetitions stop by precision."""
        def shown(pair, unit=span):
            return unit(pair[0]) if pair[0] == pair[1] else f"{unit(pair[0])} to {unit(pair[1])}"
        return (f"device {shown(self.device_s)}, wall {shown(self.wall_s)} "
                f"({shown(self.runs, lambda n: f'{n:,}')} runs)")

    def json(self) -> dict:
        """``device_s`` and ``wall_s`` (the most: what a budget must hold), their least, the runs and the parts."""
        return {"device_s": self.device_s[1], "wall_s": self.wall_s[1], "device_s_least": self.device_s[0],
                "wall_s_least": self.wall_s[0], "runs": self.runs[1], "runs_least": self.runs[0],
                "parts_s": {k: v[1] for k, v in self.parts.items()}, "notes": list(self.notes)}


def repetitions(sweep: Sweep) -> tuple[int, int]:
    """The measured runs of one point, (least, most), as the sweep runs them (``Sweep.least_reps``,
    ``most_reps``): ``repetitions`` both, or with a precision target from the least two to ``max_repetitions``."""
    return (sweep.least_reps(), sweep.most_reps())


def _precondition_s(sweep: Sweep, write_bps: float) -> tuple[float, float, int, int]:
    """Seconds (least, most) and runs (least, most) of one layout's precondition: its files' bytes (the largest
    numjobs' files, ``size`` each) at ``write_bps``; in rounds, from the five a steady window needs to
    ``rounds_max``."""
    if not sweep.precondition or sweep.nrfiles:
        return (0.0, 0.0, 0, 0)
    once = max(sweep.numjobs) * sweep.size / write_bps
    rounds = (5, sweep.rounds_max) if sweep.steady_rounds else (1, 1)
    return (once * rounds[0], once * rounds[1], rounds[0], rounds[1])


def of_layouts(sweep: Sweep, layouts: int, write_bps: float | None = None, probe: bool = False,
               notebooks: int = 1, builds: int | None = None, shared: int = 0) -> Cost:
    """The cost of ``sweep`` on ``layouts`` layouts (each built once: ``builds`` to say otherwise) whose devices
    write at ``write_bps`` together (None: ``ASSUMED_WRITE_BPS``, said in ``notes``), with the harness's ``probe``
    (an emulated array's truth) and ``notebooks`` notebooks' own time. ``shared`` of the layouts are a tax
    reference, whose points run to the most with a precision (``measure.recorder``): their least is that."""
    notes = []
    if write_bps is None or not write_bps > 0:
        write_bps = ASSUMED_WRITE_BPS
        notes.append(f"the precondition counted at {ASSUMED_WRITE_BPS / 1e9:g} GB/s a device (not yet measured)")
    points = len(sweep.points())  # an adaptive sweep's whole grid: an upper bound, as its progress counts it
    per_run = sweep.ramp_s + sweep.runtime_s  # a time-based run's length; a run to a size or a file count, at most
    least, most = repetitions(sweep)
    shared = min(max(int(shared), 0), layouts) if sweep.precision is not None else 0
    runs_least = points * ((layouts - shared) * least + shared * most)  # measured runs, every point at its least
    warm = points * layouts if sweep.warmup else 0
    pre = _precondition_s(sweep, write_bps)
    probes = 2 if probe else 0
    runs = (runs_least + warm + pre[2] * layouts + probes,
            points * layouts * most + warm + pre[3] * layouts + probes)
    parts = {"measure": (runs_least * per_run, points * layouts * most * per_run),
             "warmup": (warm * per_run,) * 2, "precondition": (pre[0] * layouts, pre[1] * layouts),
             "probe": (probes * PROBE_RUNTIME_S,) * 2}
    device = tuple(sum(p[i] for p in parts.values()) for i in (0, 1))
    parts["builds"] = ((layouts if builds is None else builds) * BUILD_S,) * 2
    parts["overhead"] = (runs[0] * RUN_OVERHEAD_S + notebooks * NOTEBOOK_S,
                         runs[1] * RUN_OVERHEAD_S + notebooks * NOTEBOOK_S)
    wall = tuple(device[i] + parts["builds"][i] + parts["overhead"][i] for i in (0, 1))
    return Cost(device, wall, runs, parts, tuple(notes), sweep.precision, (least, most))


def total(costs) -> Cost:
    """The sum of ``costs`` (a campaign's notebooks), their notes once each."""
    costs = list(costs)
    pick = lambda name: tuple(sum(getattr(c, name)[i] for c in costs) for i in (0, 1))  # noqa: E731
    parts = {p: tuple(sum(c.parts.get(p, (0, 0))[i] for c in costs) for i in (0, 1)) for p in PARTS}
    notes = tuple(dict.fromkeys(n for c in costs for n in c.notes))
    targets = {(c.precision, c.per_point) for c in costs if c.precision is not None}
    precision, per_point = targets.pop() if len(targets) == 1 else (None, (0, 0))
    return Cost(pick("device_s"), pick("wall_s"), pick("runs"), parts, notes, precision, per_point)


def reachable(cost: Cost, budget_s: float) -> tuple[int, float] | None:
    """With a precision target whose least fits ``budget_s`` and whose most does not: the runs a point can have
    (spread evenly) and the precision they reach where the runs scatter as much as needs ``max_repetitions`` for the
    target (the half-width goes as t(n - 1) / sqrt(n)); None otherwise."""
    (least, most), (lo, hi) = cost.per_point, cost.wall_s
    if cost.precision is None or most <= least or not lo <= budget_s < hi:
        return None
    runs = least + int((budget_s - lo) / ((hi - lo) / (most - least)))
    if runs < 2:
        return None
    width = lambda n: float(sps.t.ppf(0.975, n - 1)) / math.sqrt(n)  # noqa: E731
    return runs, cost.precision * width(runs) / width(most)


def fits(cost: Cost, budget_s: float, named: dict[str, Cost] | None = None) -> str | None:
    """None where the most ``cost`` may take (its wall time) fits in ``budget_s``; else what it would have to drop,
    in words: how far over, and of ``named`` (each notebook's cost), the fewest, largest first, whose dropping
    makes it fit; with a precision target, whether its least fits (a looser precision or fewer repetitions)."""
    if cost.wall_s[1] <= budget_s:
        return None
    said = [f"it may take {span(cost.wall_s[1])} of wall time, {span(cost.wall_s[1] - budget_s)} over the budget "
            f"of {span(budget_s)}"]
    if cost.wall_s[0] <= budget_s < cost.wall_s[1]:
        said.append(f"at the least ({span(cost.wall_s[0])}) it fits: lower MAX_REPETITIONS or loosen PRECISION")
    reach = reachable(cost, budget_s)
    if reach is not None:
        said.append(f"in that time a point can have {reach[0]} runs, a precision of about {reach[1]:.3g} "
                    f"(PRECISION={reach[1]:.3g}, MAX_REPETITIONS={reach[0]}) where its runs scatter as the most would")
    over, dropped = cost.wall_s[1] - budget_s, []
    for name, part in sorted((named or {}).items(), key=lambda kv: -kv[1].wall_s[1]):
        if over <= 0:
            break
        dropped.append(f"{name} ({span(part.wall_s[1])})")
        over -= part.wall_s[1]
    if dropped and over <= 0 and len(dropped) < len(named or {}):
        said.append("drop " + ", ".join(dropped))
    measure = cost.parts.get("measure", (0, 0))[1]
    if measure > 0:
        share = max(0.0, 1 - (cost.wall_s[1] - budget_s) / measure)
        said.append(f"or keep about {math.floor(100 * share)}% of the measured runs (fewer points, layouts or "
                    "REPETITIONS, or a shorter RUNTIME_S)")
    return "; ".join(said)
