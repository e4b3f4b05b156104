"""The harness's own cost, measured side by side in one run (``make bench``; needs root for the emulated array).

    1. The same fio job run by hand (fio on a job file, as a user would) and through flashscale (``fio.run``), on the
       same capped target, alternating: flashscale's bandwidth / the hand run's. Target: at least 0.99.
    2. A small campaign's wall time against the sum of its fio runs' own time (runtime + ramp of every run,
       precondition and the harness's probes included): the harness's overhead between runs (building layouts,
       erasing, parsing). Target: 1.10 at most (aim 1.05). Split in two, printed: the wall time against the fio
       processes' own wall time (what flashscale adds), and the fio processes' wall time against their run time
       (fio's start and exit, which a hand run pays too), with its seconds a process. ``ROUNDS`` rounds side by
       side, each a campaign whose runs each start their fio when their turn comes (START_AHEAD off) and one as
       campaigns run by default, each run's fio started in the ramp of the run before and held at a gate until it
       ends (measure.ahead); every run printed, the medians first; the target is the default campaigns' median, and
       flashscale's own share (wall / the fio processes' wall, measurable where no fio waits at a gate) is the
       other's. Measured (strace of one run, the clock named): 0.09 s from exec to forking the job (0.055 s of it
       fio's calibration of the CPU clock, made at every start), 0.10 s fio's fixed wait for its jobs to start,
       0.05 s for the job to end and be reaped at 10 ms polls; no file is laid out (the precondition writes them
       once a layout; every point reuses them). Started ahead, a run begins about 0.05 s after its gate opens.
       Every campaign's figures are kept in ``benchmarks/results/harness/<stamp>.json``.
    3. fio's start and exit alone: the same 6 reads of 1 s on one capped device as a process each, two to a process
       (a point's repetitions) and all six in one (consecutive points, measure.batch), side by side, ``ROUNDS``
       times: each way's fio wall / its run time. Printed. A stonewalled group pays fio's start again: its run loop
       forks the group's jobs and polls every 100 ms for them to be set up (backend.c, ``run_threads``:
       ``do_usleep(100000)`` until each is TD_INITIALIZED), then reaps them at 10 ms polls.
    4. Parse and analyse 10,000 runs' raw fio JSON against only reading the same files: what flashscale's parsing
       and analysis add to the I/O of getting the files in. Printed, with the time per run.

Each figure is a ratio of two things measured here, now, on this machine; the exit status says whether every
target was met.
"""
from __future__ import annotations

import json
import sys

import numpy as np
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from flashscale.campaigns import campaign
from flashscale.analysis import baseline_and_tax as analysis
from flashscale.arrays import layouts
from flashscale.arrays.emulated import ArraySpec, EmulatedArray
from flashscale.measure import ahead, batch, fio, fio_output, results
from flashscale.system.commands import Runner
from flashscale.system.devices import System
from flashscale.system.teardown import Teardown, manifest_dir

CAP = 200_000_000
ROUNDS = 3  # side by side: a campaign of each kind a round
OWN_SHARE = 1.05  # flashscale's own share of a campaign's wall: between its fio processes (aim of the 1.10 in all)
RESULTS = Path(__file__).resolve().parent / "results" / "harness"
GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "golden" / "read_2targets_3jobs.json"


def hand_and_harness(rounds: int = 3, runtime_s: int = 3) -> tuple[float, list[tuple[float, float]]]:
    """Alternate a hand run and a flashscale run of one read job on one capped xfs device; their bandwidths."""
    runner, system = Runner(), System()
    pairs = []
    with tempfile.TemporaryDirectory(prefix="flashscale-bench-") as scratch, \
            EmulatedArray(ArraySpec(devices=1, device_size=2**30, read_bps=CAP, write_bps=CAP), runner, system) as array:
        teardown = Teardown(manifest_dir() / f"{array.workdir.name}-bench.json", runner, system)
        try:
            layout = layouts.build("single", array.devices, runner, teardown, confirm=[d.id for d in array.devices],
                                   claimed=[d.path for d in array.devices])
            job = fio.FioJob("read", 2**20, layout.targets, numjobs=2, runtime_s=runtime_s, ramp_s=1,
                             size=64 * 2**20)
            fio.run(fio.FioJob("write", 2**20, layout.targets, numjobs=2, size=64 * 2**20, time_based=False,
                               runtime_s=1), Path(scratch) / "fill", runner)  # the read files, written in full
            by_hand = Path(scratch) / "hand.fio"
            by_hand.write_text(fio.render(job))  # what a user would have written: the same job file
            for k in range(rounds):
                hand = runner.run(["fio", "--output-format=json", str(by_hand)], cgroup_procs=array.cgroup_procs)
                ours = fio.run(job, Path(scratch) / f"ours{k}", runner, cgroup_procs=array.cgroup_procs)
                pairs.append((fio_output.parse(json.loads(hand.stdout))["bw_bytes"], fio_output.parse(ours)["bw_bytes"]))
        finally:
            teardown.close()
    ratio = sum(o for _, o in pairs) / sum(h for h, _ in pairs)
    return ratio, pairs


class TimedRunner(Runner):
    """A runner that adds up the wall time of the fio processes it runs (``fio_s``) and counts its runs of a job file (``runs``)."""

    fio_s = 0.0
    runs = 0

    def run(self, argv, *args, **kwargs):
        began = time.perf_counter()
        try:
            return super().run(argv, *args, **kwargs)
        finally:
            if argv and argv[0] == "fio":
                self.fio_s += time.perf_counter() - began
                self.runs += str(argv[-1]).endswith(".fio")  # a run of a job file, not fio --version


def probes_run_s(folder: Path) -> float:
    """The run time of the harness's own probes (``measure.harness``: each direction uncapped, before the caps are
    held) that a campaign in ``folder`` ran: fio's run time too, though no row carries it."""
    return sum(fio_output.parse(json.loads(p.read_text()))["runtime_s"]
               for p in folder.glob("**/raw/harness/*/fio.json"))


def wall_against_fio(start_ahead: bool = True) -> tuple[float, float, float, float, int, int]:
    """A small campaign on the emulated array: (wall s, fio's own run time s, wall / fio's run time, the wall s of
    the fio processes that ran when their turn came, how many did, how many were started ahead). fio's run time:
    every row's runtime, the measured rows' ramp, and the harness probes' runtime. ``start_ahead``: START_AHEAD
    (measure.ahead)."""
    runner = TimedRunner()
    with tempfile.TemporaryDirectory(prefix="flashscale-bench-") as scratch:
        spec = campaign.CampaignSpec.from_parameters(
            CAMPAIGN="bench", DATA_DIR=scratch, DEVICES=2, DEVICE_SIZE=2**30, LAYOUTS=["single", "jbod"],
            RW=["write", "read"], NUMJOBS=[1, 2], REPETITIONS=2, RUNTIME_S=3, RAMP_S=1, FILE_SIZE=64 * 2**20,
            START_AHEAD=start_ahead)
        start = time.perf_counter()
        result = campaign.run(spec, runner=runner, progress=False)
        wall = time.perf_counter() - start
        table = result.table
        measured = table["phase"] == "measure"
        fio_s = float(table["runtime_s"].sum() + measured.sum() * spec.sweep.ramp_s + probes_run_s(Path(scratch)))
    started = sum(f"--exec_prerun={ahead.PRERUN}" in argv for argv in runner.history)
    return wall, fio_s, wall / fio_s, runner.fio_s, runner.runs, started


def fio_start_share(runs: int = 6, runtime_s: int = 1) -> dict[str, float]:
    """fio's own start and exit, measured on one capped device: the same ``runs`` reads of ``runtime_s`` as a fio
    process each, in twos (a point's two repetitions, BATCH_REPS) and all in one (consecutive points, measure.batch),
    side by side: each way's fio wall / its run time."""
    runner, system = Runner(), System()
    shares = {}
    one = ArraySpec(devices=1, device_size=2**30, read_bps=CAP, write_bps=CAP)
    with tempfile.TemporaryDirectory(prefix="flashscale-bench-") as scratch, \
            EmulatedArray(one, runner, system) as array:
        jobs = [fio.FioJob("read", 2**20, (array.devices[0].path,), numjobs=1 + k % 2, runtime_s=runtime_s,
                           ramp_s=0, size=256 * 2**20) for k in range(runs)]
        for name, size in (("a process a run", 1), ("a point's 2 runs a process", 2), ("all in one", runs)):
            start, ran = time.perf_counter(), 0.0
            for k in range(0, runs, size):
                outs = [Path(scratch) / name / f"run{k + j}" for j in range(size)]
                done = ([fio.run(jobs[k], outs[0], runner, cgroup_procs=array.cgroup_procs)] if size == 1 else
                        batch.run(jobs[k:k + size], outs, Path(scratch) / name / f"batch{k}", runner,
                                  cgroup_procs=array.cgroup_procs))
                ran += sum(fio_output.parse(d)["runtime_s"] for d in done)
            shares[name] = (time.perf_counter() - start) / ran
    return shares


def parse_and_analyse(count: int = 10_000) -> tuple[float, float, float]:
    """Seconds to read ``count`` raw fio.json files, to parse and analyse them, and the ratio."""
    text = GOLDEN.read_text()
    with tempfile.TemporaryDirectory(prefix="flashscale-bench-") as scratch:
        paths = []
        for k in range(count):
            path = Path(scratch) / f"run{k}.json"
            path.write_text(text)
            paths.append(path)
        start = time.perf_counter()
        for path in paths:
            path.read_text()
        read_s = time.perf_counter() - start
        start = time.perf_counter()
        rows = []
        for k, path in enumerate(paths):
            parsed = fio_output.parse(fio_output.load_output(path.read_text(), str(path)))
            rows.append({"campaign": "bench", "layout": ["single", "jbod"][k % 2], "devices": 1 + k % 2, "rw": "read",
                         "bs": 2**20, "numjobs": 1 + (k // 2) % 8, "iodepth": 1, "rep": k // 16, **parsed})
        analysis.summarize(results.to_frame(rows), reference="jbod")
        total_s = time.perf_counter() - start
    return read_s, total_s, total_s / read_s


def campaigns_side_by_side() -> bool:
    """``ROUNDS`` rounds, each a campaign whose runs start their fio when their turn comes (START_AHEAD off), then
    one as campaigns run by default (each run's fio started ahead, measure.ahead), so the machine's load falls on
    both alike; every run printed, the medians first, and kept (``RESULTS``). The targets: the default campaigns'
    median at most 1.10, and flashscale's own share of the others' (wall / the fio processes' wall: what fio's
    start and exit cannot explain) at most ``OWN_SHARE``."""
    found = {False: [], True: []}
    for _ in range(ROUNDS):
        for start_ahead in (False, True):
            found[start_ahead].append(wall_against_fio(start_ahead))
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%MZ")
    RESULTS.mkdir(parents=True, exist_ok=True)
    keys = ("wall_s", "fio_run_s", "wall_over_fio", "fio_processes_s", "fio_processes", "started_ahead")
    (RESULTS / f"{stamp}.json").write_text(json.dumps({"rounds": ROUNDS, "campaigns": {
        ("started ahead" if k else "each when its turn comes"): [dict(zip(keys, r)) for r in runs]
        for k, runs in found.items()}}, indent=1))
    met = True
    for start_ahead, runs in found.items():
        median = float(np.median([r[2] for r in runs]))
        how = "each run's fio started ahead (default)" if start_ahead else "each run's fio started when its turn comes"
        met = met and (median <= 1.10 if start_ahead else True)
        print(f"{'ok  ' if median <= 1.10 else ('MISS' if start_ahead else 'info')} campaign wall vs fio time, {how}: "
              f"median {median:.3f} of {ROUNDS} side by side (target <= 1.10, aim 1.05)")
        if not start_ahead:
            own = float(np.median([r[0] / r[3] for r in runs]))
            met = met and own <= OWN_SHARE
            print(f"{'ok  ' if own <= OWN_SHARE else 'MISS'} flashscale's own share, {how}: "
                  f"median {own:.3f} (target <= {OWN_SHARE})")
        for wall, fio_s, overhead, processes_s, runs_n, started in runs:
            split = (f"flashscale between fio runs (layouts, erase, parsing, rows) {wall / processes_s:.3f} (wall / "
                     f"the fio processes' wall {processes_s:.1f} s); fio beyond its run time (start, exit) "
                     f"{processes_s / fio_s:.3f}, {(processes_s - fio_s) / runs_n:.2f} s a process over {runs_n}"
                     if not started else f"{started} fio processes started ahead, {runs_n} when their turn came")
            print(f"info   {wall:.1f} s / {fio_s:.1f} s = {overhead:.3f}: {split}")
    print(f"info every campaign's figures: {RESULTS / (stamp + '.json')}")
    return met


def main() -> int:
    ok = True
    ratio, pairs = hand_and_harness()
    met = ratio >= 0.99
    ok &= met
    shown = ", ".join(f"{h / 1e6:.1f}/{o / 1e6:.1f}" for h, o in pairs)
    print(f"{'ok  ' if met else 'MISS'} harness vs hand run: bandwidth ratio {ratio:.3f} (target >= 0.99; "
          f"hand/ours MB/s: {shown})")
    ok &= campaigns_side_by_side()
    for k in range(ROUNDS):
        shares = fio_start_share()
        print("info fio's start and exit, 6 runs of 1 s on one capped device (run " + str(k + 1) + "): fio wall / run "
              "time " + ", ".join(f"{name} {share:.3f}" for name, share in shares.items()))
    read_s, total_s, parse_ratio = parse_and_analyse()
    print(f"info parse and analyse 10,000 runs: {total_s:.2f} s ({total_s / 10_000 * 1e3:.2f} ms a run), "
          f"{parse_ratio:.1f} x the {read_s:.2f} s of only reading the files")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
