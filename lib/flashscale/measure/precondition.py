"""Preconditioning: before a layout's first point, every byte its points may read has been written.

Why: a time-based write point writes only the start of each job's file (8 jobs x 3 s at 200 MB/s is 75 MB of
eight 128 MiB files). fio allocates the rest of each file as unwritten extents, and xfs answers reads of those with
zeros without touching the device: on one device capped at 200 MB/s, reading such files measured 212.7 MB/s, and
230.9 MB/s in the quickstart; written in full first, 202.7 MB/s.

The precondition job opens the files the sweep's points will open: the same job sections (so fio's same file
names, ``<section>.<job>.<file>``) at the sweep's largest numjobs, whose files include those of every smaller
numjobs, each ``size`` bytes; a shared-file sweep's one file in full (``size`` x jobs, each job its region); a
block device's first ``size`` bytes, once. It writes them once: sequential, full-size (not time-based), direct as
the sweep is, with ``end_fsync=1`` so the writes a file system buffers anyway (btrfs) reach the devices before the
first point. It takes none of the sweep's ``extra`` options (logs, pinning): it prepares, it measures nothing.

Every data sweep is preconditioned, write-only ones too, so a write point overwrites the same written files
whether or not the sweep also reads. A metadata sweep (filecreate, ...) makes its own files: it needs none.

In rounds (``Sweep.steady_rounds``, SNIA PTS): the precondition job runs again and again, each run a round whose
bandwidth is kept as a row (``round`` 1, 2, ...), until ``steady.steady_state`` finds the last five rounds steady
or ``Sweep.rounds_max`` rounds have run; each round's row says whether the rounds up to it were steady, and every
point of the layout carries the final verdict. On the emulated array the rounds run inside the throttled cgroup, so
each is a measurement of the capped devices; a single precondition runs outside it, as fast as it can.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Callable, Iterator, Mapping, Sequence

from .fio import FioJob, is_device
from .steady import SteadyState, steady_state
from .sweep import Sweep

PHASE = "precondition"
BS = 2**20  # sequential writes of 1 MiB, or of the largest power of two that divides the file size
OPTIONS = (("end_fsync", "1"),)


def job(sweep: Sweep, targets: Sequence[str]) -> FioJob | None:
    """The job that writes in full every file ``sweep``'s points open on ``targets``; None for a metadata sweep."""
    if sweep.nrfiles:
        return None
    targets = tuple(targets)
    devices_only = all(is_device(t) for t in targets) and not sweep.shared_file
    # every job of a point reads a block device's first ``size`` bytes: one job per device writes them
    numjobs = len(targets) if devices_only else max(sweep.numjobs)
    point = {"rw": "write", "bs": math.gcd(sweep.size, BS), "numjobs": numjobs, "iodepth": 1}
    return replace(sweep.job(point, targets), time_based=False, extra=OPTIONS, ss=None, ss_dur_s=None)


def point(precondition: FioJob) -> str:
    """The row's ``point`` of a precondition run: never the same as a measured point's."""
    return f"{PHASE}-{precondition.point}"


def rounds(run_round: Callable[[int], Mapping], rounds_max: int) -> Iterator[tuple[Mapping, SteadyState]]:
    """Run rounds 1, 2, ... with ``run_round(number)`` (a row with ``bw_bytes``); after each, yield its row and the
    verdict on the rounds so far. Stops after the first steady verdict, or after ``rounds_max`` rounds."""
    values = []
    for number in range(1, rounds_max + 1):
        row = run_round(number)
        values.append(row["bw_bytes"])
        verdict = steady_state(values)
        yield row, verdict
        if verdict.steady:
            return


def verdict_columns(verdict: SteadyState | None) -> dict:
    """The row's ``steady`` and ``steady_round``: None for both when no rounds were asked."""
    if verdict is None:
        return {"steady": None, "steady_round": None}
    return {"steady": verdict.steady, "steady_round": verdict.round if verdict.steady else None}
