"""What ``flashscale --help`` costs, measured side by side in one run (``make bench``).

``python -m flashscale --help`` and each subcommand's ``--help``, each a process of its own as a user runs it,
alternating with ``python -c pass`` (the interpreter's own start, the floor of any command), ``ROUNDS`` rounds:
each one's wall time (best and median of its rounds), its ratio to ``python -c pass``'s best, and its peak memory
(the process's maximum resident set, wait4). Each process finds its bytecode cached, as an installed package's is:
PYTHONDONTWRITEBYTECODE, if set, is dropped for them and their bytecode kept in a temporary folder
(PYTHONPYCACHEPREFIX), written by one run of each before the rounds. Targets: every ``--help`` under 0.3 s at its
best on this machine, and at its median at most ``RATIO`` (10) x ``python -c pass``'s median (2 CPUs, shared: the
ratio says how much of it is the interpreter's own start at the load of the moment, so it holds as the load moves,
where a median in seconds does not: in a run at a load of 7 to 9, not kept, python -c pass itself took 0.011 s at its
best and 0.067 s at its median, and three --help medians were over 0.3 s at 4.4-5.5 x it).
A shell's completion request (``flashscale plan --format <TAB>``, as the script ``flashscale completion bash``
prints makes it: argcomplete imported only then) is measured beside them, held to the same targets. The figures are
kept in ``benchmarks/results/cli/<stamp>.json`` with ``flashscale --version`` (the commit measured).

Before the command's imports were made lazy (5551a3b), ``--help`` imported pandas and scipy.stats to print it. One
run after the other at a load of about 5 on this machine's 2 CPUs (others' work), before (a89fd71,
``20261202T0005Z-a89fd71.json``): ``--help`` best 4.64 s, median 6.15 s, 121 x python -c pass, peak 179 MiB, each
subcommand's best 4.1-5.5 s; after (``20261202T0006Z.json``): best 0.18 s, median 0.19 s, 4.8 x, peak 15 MiB, each
subcommand's best 0.14-0.20 s, its median 0.16-0.36 s (vm-guest's 0.355 s, a busy moment's: its best 0.144 s).
With ``flashscale completion`` and its hook in the command (issue 52), at a load of 7 to 9 (others' test suites;
``20261207T1242Z.json``): python -c pass best 0.051 s, median 0.090 s; every --help best 0.051-0.171 s, median
0.090-0.396 s, 1.0-4.4 x python -c pass at the median; the completion request best 0.075 s, median 0.207 s (2.3 x);
peak 15-16 MiB. Earlier the same day, at a load of about 4.6, not kept: every --help's best 0.045-0.050 s, 4.7-5.3 x
python -c pass's 0.010 s.

Each figure is measured here, now; the exit status says whether every target was met.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results" / "cli"
ROUNDS = 5
TARGET_S = 0.3
RATIO = 10  # the most a --help may take, at its best, in python -c pass's best
COMPLETION = {"_ARGCOMPLETE": "1", "COMP_LINE": "flashscale plan --format ", "COMP_POINT": "25",
              "_ARGCOMPLETE_STDOUT_FILENAME": os.devnull}  # what the bash script sets to ask what completes a line
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
       "PYTHONPATH": str(ROOT / "lib")}  # this checkout's flashscale, whatever is installed


def subcommands() -> list[str]:
    """The command's subcommands, asked of a process of its own: a child forked from a process that imported
    flashscale would count this one's memory in its peak (its pages before exec)."""
    said = subprocess.run([sys.executable, "-c", "from flashscale import cli; print(*cli.SUBCOMMANDS)"], env=ENV,
                          capture_output=True, text=True, check=True)
    return said.stdout.split()


def version() -> str:
    """``flashscale --version`` of the code measured, in a process of its own (as ``subcommands``)."""
    return subprocess.run([sys.executable, "-m", "flashscale", "--version"], env=ENV, capture_output=True, text=True,
                          check=True).stdout.strip()


def measured(argv: list[str]) -> tuple[float, int, int]:
    """``argv`` run to its end: wall seconds, peak resident bytes, exit status. An argv that starts with
    ``COMPLETION`` is a completion request: its variables set, the rest run."""
    env = {**ENV, **COMPLETION} if argv[0] == "COMPLETION" else ENV
    argv = argv[1:] if argv[0] == "COMPLETION" else argv
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    return time.perf_counter() - start, usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status)


def rounds(commands: dict[str, list[str]]) -> dict[str, dict]:
    """Every command once a round, in turn, ``ROUNDS`` rounds: each one's times, peak and exit statuses."""
    runs: dict[str, dict] = {name: {"wall_s": [], "peak_bytes": [], "status": []} for name in commands}
    for argv in commands.values():  # each one's bytecode written
        measured(argv)
    for _ in range(ROUNDS):
        for name, argv in commands.items():
            wall, peak, status = measured(argv)
            runs[name]["wall_s"].append(wall)
            runs[name]["peak_bytes"].append(peak)
            runs[name]["status"].append(status)
    return runs


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="flashscale-bench-cli-") as cache:
        ENV["PYTHONPYCACHEPREFIX"] = cache
        return measure()


def measure() -> int:
    python = [sys.executable, "-c", "pass"]
    commands = {"python -c pass": python, "flashscale --help": [sys.executable, "-m", "flashscale", "--help"]}
    commands.update({f"flashscale {name} --help": [sys.executable, "-m", "flashscale", name, "--help"]
                     for name in subcommands()})
    commands["flashscale plan --format <TAB>"] = ["COMPLETION", sys.executable, "-m", "flashscale"]
    runs = rounds(commands)
    floor = min(runs["python -c pass"]["wall_s"])
    floor_median = statistics.median(runs["python -c pass"]["wall_s"])
    ok = True
    for name, run in runs.items():
        best, median = min(run["wall_s"]), statistics.median(run["wall_s"])
        run.update(best_s=best, median_s=median, over_python=best / floor, median_over_python=median / floor_median,
                   peak_mib=max(run["peak_bytes"]) / 2**20)
        if name == "python -c pass":
            print(f"info {name}: best {best:.3f} s, median {median:.3f} s, peak {run['peak_mib']:.0f} MiB")
            continue
        met = best < TARGET_S and median / floor_median <= RATIO and set(run["status"]) == {0}
        ok = ok and met
        print(f"{'ok  ' if met else 'SLOW'} {name}: best {best:.3f} s (target {TARGET_S} s), median {median:.3f} s, "
              f"{best / floor:.1f} x python -c pass at the best, {median / floor_median:.1f} x at the median (target "
              f"{RATIO}), peak {run['peak_mib']:.0f} MiB"
              + ("" if set(run["status"]) == {0} else f", exit status {run['status']}"))
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%MZ")
    RESULTS.mkdir(parents=True, exist_ok=True)
    kept = {"version": version(), "rounds": ROUNDS, "target_s": TARGET_S, "ratio": RATIO, "commands": runs}
    (RESULTS / f"{stamp}.json").write_text(json.dumps(kept, indent=1))
    print(f"info every figure: {RESULTS / (stamp + '.json')}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
