"""pgbench against a throwaway PostgreSQL cluster made on the layout under test (``system.postgres``).

The cluster's data directory, socket and server are flashscale's own (on the layout's first target; jbod's other
file systems stay idle, which the monitoring shows); the server runs inside the layout's throttled cgroup. For each
scale (an axis) the database is initialised (``pgbench -i -s``), then each number of clients (an axis) runs the
default TPC-B-like script for ``duration_s`` with one thread per client up to the CPUs, ``-P 1`` and
``--aggregate-interval`` logs. The server is stopped and its directory removed on success, error and Ctrl-C.

Metrics from pgbench's summary: ``tps`` (without the initial connection time), ``latency_mean`` and
``latency_stddev`` (ns). The latency over time (``intervals``: per interval, transactions, tps, mean / min / max
latency in ns) is kept beside the raw output as ``intervals.csv``; pgbench writes no line for its last, unfinished
interval, so the series ends up to an interval before the run did.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import pandas as pd

from ...arrays.layouts import Layout
from ...errors import FlashscaleError
from ...system import postgres
from ..sweep import positive_ints
from . import common

WORKLOAD = "pgbench"
DATABASE = "postgres"
SUMMARY = {"tps": re.compile(r"^tps = ([\d.]+) \(without initial connection time\)", re.M),
           "latency_mean": re.compile(r"^latency average = ([\d.]+) ms", re.M),
           "latency_stddev": re.compile(r"^latency stddev = ([\d.]+) ms", re.M)}
UNITS = {"tps": ("tps", 1.0), "latency_mean": ("ns", 1e6), "latency_stddev": ("ns", 1e6)}
INTERVAL_COLUMNS = ("interval_start", "transactions", "sum_latency_us", "sum_latency2_us", "min_latency_us",
                    "max_latency_us")


def summary(output: str) -> dict[str, tuple[float, str]]:
    """tps and latency mean / stddev from pgbench's summary: metric -> (value, unit); latencies in ns."""
    found = {}
    for metric, pattern in SUMMARY.items():
        match = pattern.search(output)
        if match is None:
            raise FlashscaleError(f"pgbench printed no {metric!r} in its summary: {output[-800:]!r}")
        unit, scale = UNITS[metric]
        found[metric] = (float(match.group(1)) * scale, unit)
    return found


def intervals(texts: Sequence[str], interval_s: int) -> pd.DataFrame:
    """pgbench's ``--aggregate-interval`` logs (one per thread) as one series: per interval start (s since the
    first), transactions, tps, and latency mean / min / max in ns."""
    rows = [line.split()[:6] for text in texts for line in text.splitlines() if line.strip()]
    frame = pd.DataFrame([[float(v) for v in r] for r in rows], columns=list(INTERVAL_COLUMNS))
    if frame.empty:
        return pd.DataFrame(columns=["t_s", "transactions", "tps", "latency_mean_ns", "latency_min_ns",
                                     "latency_max_ns"])
    grouped = frame.groupby("interval_start").agg(transactions=("transactions", "sum"),
                                                  total=("sum_latency_us", "sum"), low=("min_latency_us", "min"),
                                                  high=("max_latency_us", "max")).reset_index()
    return pd.DataFrame({"t_s": grouped["interval_start"] - grouped["interval_start"].min(),
                         "transactions": grouped["transactions"], "tps": grouped["transactions"] / interval_s,
                         "latency_mean_ns": grouped["total"] / grouped["transactions"] * 1e3,
                         "latency_min_ns": grouped["low"] * 1e3, "latency_max_ns": grouped["high"] * 1e3})


@dataclass(frozen=True)
class Pgbench:
    scales: tuple[int, ...] = (1,)
    clients: tuple[int, ...] = (1, 4)
    duration_s: int = 5
    interval_s: int = 1
    repetitions: int = 1

    def __post_init__(self) -> None:
        for name in ("scales", "clients"):
            object.__setattr__(self, name, positive_ints(name, getattr(self, name), prefix=f"{WORKLOAD} "))
        for name in ("duration_s", "interval_s", "repetitions"):
            positive_ints(name, (getattr(self, name),), prefix=f"{WORKLOAD} ")

    def runs(self) -> int:
        """pgbench runs per layout."""
        return len(self.scales) * len(self.clients) * self.repetitions

    def __call__(self, recorder, layout: Layout, cgroup_procs: Sequence[Path]) -> None:
        with common.teardown(recorder, f"{layout.name}-pgbench") as down:
            cluster = postgres.create(Path(layout.targets[0]), down, recorder.runner, cgroup_procs=cgroup_procs)
            try:
                version = cluster.version(recorder.runner)
                for scale in self.scales:
                    init = ["pgbench", "-i", "-q", "-s", str(scale), *cluster.client_args(), DATABASE]
                    recorder.runner.run(init)
                    for clients in self.clients:
                        for rep in range(self.repetitions):
                            self._run(recorder, layout, cgroup_procs, cluster, scale, clients, rep, [init], version)
            finally:  # a fast shutdown however this ends; the teardown then removes the cluster's directory
                cluster.stop(recorder.runner)

    def _run(self, recorder, layout, cgroup_procs, cluster, scale: int, clients: int, rep: int, init: list,
             version: str) -> None:
        point, started = f"s{scale}-c{clients}", common.now()
        raw = common.raw_dir(layout, WORKLOAD, point, rep)
        with common.monitored(recorder, layout, raw, WORKLOAD, point, rep) as folder:
            argv = ["pgbench", "-c", str(clients), "-j", str(min(clients, os.cpu_count() or 1)), "-T",
                    str(self.duration_s), "-P", "1", "-l", f"--aggregate-interval={self.interval_s}",
                    f"--log-prefix={folder / 'pgbench_log'}", *cluster.client_args(), DATABASE]
            common.keep_commands(folder, [*init, argv])
            done = recorder.runner.run(argv, timeout=self.duration_s + 600)
        (folder / "pgbench.out").write_text(done.stdout)
        (folder / "pgbench.err").write_text(done.stderr)
        series = intervals([p.read_text() for p in sorted(folder.glob("pgbench_log.*"))], self.interval_s)
        series.to_csv(folder / "intervals.csv", index=False)
        common.environment(folder, postgres=version, scale=scale, clients=clients, duration_s=self.duration_s,
                           settings=postgres.SETTINGS)
        for metric, (value, unit) in summary(done.stdout).items():
            recorder.keep(layout, common.metric_row(
                recorder, layout, cgroup_procs, workload=WORKLOAD, metric=metric, value=value, unit=unit, raw=raw,
                point=point, rep=rep, numjobs=clients, bs=8192, runtime_s=float(self.duration_s), started=started,
                scale=scale, **({"lat_mean_ns": value} if metric == "latency_mean" else {})), cgroup_procs)
