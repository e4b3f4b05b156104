"""Sweeps are declared as explicit axes and expanded here, in one place."""
from __future__ import annotations

import itertools
from dataclasses import dataclass

from ..errors import ConfigError
from ..system.idle import check_latency
from .fio import METADATA_OPS, RW_MODES, FioJob, check_steady_state

AXES = ("rw", "bs", "numjobs", "iodepth")
METADATA_AXIS = "nrfiles"  # a metadata sweep's fifth axis: fio's files per job
ADAPTIVE_AXES = ("numjobs", "iodepth")  # the axes an adaptive sweep can explore
LEAST_REPETITIONS = 2  # with a precision: the runs every point takes first (an interval needs two)
MAX_REPETITIONS = 10  # with a precision: the most runs a point takes (MAX_REPETITIONS)
# Why a point's runs stopped (each row's ``reps_reason``): ``fixed``, the sweep's ``repetitions``; ``precise``, its
# interval was within ``precision``; ``max``, ``max_repetitions`` ran first; ``decided``, a sequential tax test
# reached its verdict (``analysis.significance.sequential_tax``); ``reference``, the tax reference's point, its runs
# shared by every layout's sequential test: run to ``max_repetitions`` in a campaign (``measure.recorder``), or as far
# as its layouts' looks needed where it runs between theirs (``analysis.repetitions.shared_point``). ``more``: a run
# after which the point went on.
REPS_REASONS = ("fixed", "precise", "max", "decided", "reference", "more")


def positive_ints(name: str, values, prefix: str = "") -> tuple[int, ...]:
    """``values`` as a tuple of positive whole numbers (``True`` is not one): the one check of a swept axis or a
    count, for a sweep's axes and for those of a job file (``jobrun``), an application (``workloads``) or an
    adaptive grid, each with its own ``prefix`` (``"bonnie++ "``). A ConfigError names ``prefix`` and ``name`` and
    what is wrong: not a list, an empty one, or the first value that is not a positive whole number."""
    where = f"{prefix}{name}"
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise ConfigError(f"{where}={values!r} must be a list")
    values = tuple(values)
    if not values:
        raise ConfigError(f"{where} must list at least one value")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ConfigError(f"{where} value {value!r} must be a positive whole number")
    return values


@dataclass(frozen=True)
class Sweep:
    """rw x bs x numjobs x iodepth, each point run ``repetitions`` times after one warm-up (if ``warmup``).

    With ``precision`` (e.g. 0.02), a point is not run a fixed number of times: it runs ``LEAST_REPETITIONS`` times,
    then once more at a time until the half-width of its 95% interval (on the log scale: a rate is positive) is
    within ``precision`` of its mean, or ``max_repetitions`` have run (``analysis.repetitions.stop_reason`` decides;
    the recorder is told how by its campaign). ``repetitions`` is then not used.

    With ``precondition`` (the default), a layout's data sweep starts by writing in full every file its points
    open (``measure.precondition``), so no read meets bytes never written; the per-point warm-up is then rarely
    needed, and off by default.
    A metadata sweep (every rw one of ``fio_output.METADATA_OPS``) also has ``nrfiles``, files per job, as an axis; its
    ``bs`` is the size of each file. ``time_based`` and ``shared_file`` go to every job as ``fio.FioJob`` says.

    Steady state, two ways. ``ss`` (with ``ss_dur_s``, ``ss_ramp_s``) is fio's own: each measured run stops once
    fio's criterion holds (``fio.SS_CRITERIA``). ``steady_rounds`` is the SNIA PTS way: the precondition repeats in
    rounds until ``measure.steady`` finds the last five steady, or ``rounds_max`` rounds have run."""

    rw: tuple[str, ...] = ("write", "read")
    bs: tuple[int, ...] = (2**20,)
    numjobs: tuple[int, ...] = (1, 2, 4, 8)
    iodepth: tuple[int, ...] = (1,)
    repetitions: int = 3
    precision: float | None = None  # the 95% interval's half-width / mean each point repeats to reach; None: fixed
    max_repetitions: int = MAX_REPETITIONS  # with ``precision``: the most runs of a point
    batch_reps: bool = False  # a point's runs in one fio process, stonewalled (measure.batch); not with a precision
    start_ahead: bool = True  # each run's fio started in the ramp of the run before, held until it ends (measure.ahead)
    warmup: bool = False
    runtime_s: int = 5  # 5 s or more: the throttle's first slice is under 2% of a capped run (measure.truth)
    ramp_s: int = 1
    size: int = 128 * 2**20
    ioengine: str = "libaio"
    direct: bool = True
    extra: tuple[tuple[str, str], ...] = ()  # further fio options for every job, as FioJob.extra
    nrfiles: tuple[int, ...] = ()  # files per job: the fifth axis of a metadata sweep, empty otherwise
    time_based: bool = True
    shared_file: bool = False
    precondition: bool = True
    ss: str | None = None  # fio's steady-state criterion for every measured run, e.g. "iops_slope:0.3%"
    ss_dur_s: int | None = None
    ss_ramp_s: int = 0
    steady_rounds: bool = False  # repeat the precondition in rounds until SNIA steady (measure.precondition)
    rounds_max: int = 25
    adaptive: str | None = None  # "numjobs" or "iodepth": that axis explored until it saturates (measure.adaptive)
    cpu_latency_us: int | None = 0  # every run holds the CPUs to this idle latency (system.idle); None: as they are
    builds: int = 1  # each layout built this many times (a new mkfs, a new array), each swept: builds as replicates
    bracket: bool = False  # the tax reference built and swept once more after the layouts (its drift: rows "bracket")

    def __post_init__(self) -> None:
        rw = (self.rw,) if isinstance(self.rw, str) else tuple(self.rw)
        bad = [m for m in rw if m not in RW_MODES and m not in METADATA_OPS]
        if bad or not rw:
            raise ConfigError(f"rw={list(rw)!r}: {bad or 'empty'} not in {', '.join((*RW_MODES, *METADATA_OPS))}")
        object.__setattr__(self, "rw", rw)
        for axis in ("bs", "numjobs", "iodepth"):
            object.__setattr__(self, axis, positive_ints(axis, getattr(self, axis)))
        metadata = [m in METADATA_OPS for m in rw]
        if any(metadata) and not all(metadata):
            raise ConfigError(f"rw={list(rw)!r} mixes metadata engines with data rw modes: sweep them apart")
        if any(metadata) or tuple(self.nrfiles):
            object.__setattr__(self, "nrfiles", positive_ints("nrfiles", self.nrfiles))
            if not any(metadata):
                raise ConfigError(f"nrfiles={list(self.nrfiles)!r} applies to the metadata engines "
                                  f"({', '.join(METADATA_OPS)}) only, not to rw={list(rw)!r}")
        for flag in ("time_based", "shared_file", "precondition", "warmup", "steady_rounds", "batch_reps",
                     "start_ahead", "bracket"):
            if not isinstance(getattr(self, flag), bool):
                raise ConfigError(f"{flag}={getattr(self, flag)!r} must be True or False")
        if self.shared_file and any(metadata):
            raise ConfigError(f"rw={list(rw)!r}: metadata engines cannot share one file (shared_file=True)")
        if isinstance(self.repetitions, bool) or not isinstance(self.repetitions, int) or self.repetitions < 1:
            raise ConfigError(f"repetitions={self.repetitions!r} must be a whole number >= 1")
        if isinstance(self.builds, bool) or not isinstance(self.builds, int) or self.builds < 1:
            raise ConfigError(f"builds={self.builds!r} must be a whole number >= 1 (each layout built that many times)")
        check_steady_state(self.ss, self.ss_dur_s, self.ss_ramp_s)
        self._check_rounds()
        self._check_precision()
        check_latency(self.cpu_latency_us)
        if self.adaptive not in (None, *ADAPTIVE_AXES):
            raise ConfigError(f"adaptive={self.adaptive!r} must be None or one of {', '.join(ADAPTIVE_AXES)}")

    def _check_rounds(self) -> None:
        if isinstance(self.rounds_max, bool) or not isinstance(self.rounds_max, int) or self.rounds_max < 5:
            raise ConfigError(f"rounds_max={self.rounds_max!r} must be a whole number >= 5 (a steady-state "
                              "window is five rounds)")
        if self.steady_rounds and not self.precondition:
            raise ConfigError("steady_rounds=True repeats the precondition: it needs precondition=True")

    def _check_precision(self) -> None:
        most = self.max_repetitions
        if isinstance(most, bool) or not isinstance(most, int) or most < LEAST_REPETITIONS:
            raise ConfigError(f"max_repetitions={most!r} must be a whole number >= {LEAST_REPETITIONS} (an "
                              "interval needs two runs)")
        if self.precision is None:
            return
        if isinstance(self.precision, bool) or not isinstance(self.precision, (int, float)) \
                or not 0.0 < self.precision < 1.0:
            raise ConfigError(f"precision={self.precision!r} must be a number strictly between 0 and 1 (the 95% "
                              "interval's half-width relative to the mean, e.g. 0.02), or None for a fixed count")
        if self.adaptive:
            raise ConfigError(f"precision={self.precision!r} and adaptive={self.adaptive!r}: an adaptive sweep "
                              "decides on a fixed count of runs a point; choose one")

    @property
    def axes(self) -> tuple[str, ...]:
        return (*AXES, METADATA_AXIS) if self.nrfiles else AXES

    def points(self) -> list[dict]:
        """Every combination of the axes, in declared order (rw outermost)."""
        values = [getattr(self, axis) for axis in self.axes]
        return [dict(zip(self.axes, combo)) for combo in itertools.product(*values)]

    def lines(self) -> list[tuple[dict, tuple[int, ...]]]:
        """For an adaptive sweep: each combination of the other axes, with the grid of the explored axis."""
        others = [axis for axis in self.axes if axis != self.adaptive]
        combos = itertools.product(*(getattr(self, axis) for axis in others))
        return [(dict(zip(others, combo)), tuple(getattr(self, self.adaptive))) for combo in combos]

    def least_reps(self) -> int:
        """The measured runs every point takes: ``repetitions``, or ``LEAST_REPETITIONS`` with a precision."""
        return self.repetitions if self.precision is None else LEAST_REPETITIONS

    def most_reps(self) -> int:
        """The most measured runs a point can take: ``repetitions``, or ``max_repetitions`` with a precision."""
        return self.repetitions if self.precision is None else self.max_repetitions

    def reps(self, build: int = 0) -> list[tuple[int, bool]]:
        """(rep index, is warm-up) for each run of one point that always runs (``least_reps`` measured), on the
        layout's ``build`` (from 0): each build's indexes follow the previous build's most, so a point's (rep) is
        one run whatever build it ran on."""
        start = build * (int(self.warmup) + self.most_reps())
        first = [(start, True)] if self.warmup else []
        offset = start + (1 if self.warmup else 0)
        return first + [(offset + i, False) for i in range(self.least_reps())]

    def more_reps(self, build: int = 0) -> list[int]:
        """The rep indexes a point may run after ``reps``, one at a time while it is not precise (none: fixed)."""
        after = build * (int(self.warmup) + self.most_reps()) + len(self.reps())
        return list(range(after, after + self.most_reps() - self.least_reps()))

    def runs(self) -> int:
        """The runs of the whole sweep (every build): with a precision, the least (every point precise at its first
        runs)."""
        return len(self.points()) * len(self.reps()) * self.builds

    def bracket_build(self) -> int:
        """The build index of the reference's bracket (``bracket``): one past its last build, so that its runs' rep
        indexes (``reps``) follow every build's and a point's (rep) stays one run."""
        return self.builds

    def job(self, point: dict, targets: tuple[str, ...]) -> FioJob:
        return FioJob(point["rw"], point["bs"], targets, numjobs=point["numjobs"], iodepth=point["iodepth"],
                      runtime_s=self.runtime_s, ramp_s=self.ramp_s, size=self.size, ioengine=self.ioengine,
                      direct=self.direct, extra=tuple(self.extra), nrfiles=point.get(METADATA_AXIS, 0),
                      time_based=self.time_based, shared_file=self.shared_file, ss=self.ss,
                      ss_dur_s=self.ss_dur_s, ss_ramp_s=self.ss_ramp_s)

