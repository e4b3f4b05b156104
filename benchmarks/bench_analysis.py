"""Benchmarks: how fast flashscale parses fio output and analyses large tables, and how much memory it takes.

    make bench

Not tests: numbers are printed against the targets below and the exit status says whether every target was met.
Targets (2 cores): parse 5,000 fio results in under 5 s; summarize a 1,000,000-row table in under 10 s and under
1 GiB of extra Python memory.
"""
from __future__ import annotations

import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

from flashscale.analysis import baseline_and_tax as analysis
from flashscale.measure import fio_output

GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "golden" / "read_2targets_3jobs.json"


def timed(label: str, func, target_s: float, target_bytes: float | None = None) -> bool:
    """Time ``func`` alone, then (tracing slows it) measure its peak memory in a second run."""
    start = time.perf_counter()
    func()
    elapsed = time.perf_counter() - start
    tracemalloc.start()
    func()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    ok = elapsed <= target_s and (target_bytes is None or peak <= target_bytes)
    memory = f", peak {peak / 2**20:.0f} MiB" + (f" (target {target_bytes / 2**20:.0f} MiB)" if target_bytes else "")
    print(f"{'ok  ' if ok else 'SLOW'} {label}: {elapsed:.2f} s (target {target_s} s){memory}")
    return ok


def parse_many(count: int = 5000) -> None:
    text = GOLDEN.read_text()
    for _ in range(count):
        data = fio_output.load_output(text)
        fio_output.validate(data)
        fio_output.parse(data)


def big_table(rows: int = 1_000_000, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    layouts = np.array(["single", "jbod", "btrfs-raid0", "md-raid0"])
    layout = layouts[rng.integers(0, 4, rows)]
    return pd.DataFrame({
        "layout": layout, "devices": np.where(layout == "single", 1, 12),
        "rw": np.array(["read", "write"])[rng.integers(0, 2, rows)],
        "bs": np.array([4096, 131072, 1048576, 4194304])[rng.integers(0, 4, rows)],
        "numjobs": np.array([1, 2, 4, 8, 16, 32, 64])[rng.integers(0, 7, rows)],
        "iodepth": np.array([1, 4, 16, 32])[rng.integers(0, 4, rows)],
        "warmup": rng.random(rows) < 0.1, "bw_bytes": rng.uniform(1e8, 3e9, rows),
    })


def main() -> int:
    table = big_table()
    results = [
        timed("parse 5,000 fio results", parse_many, 5.0),
        timed("summarize 1,000,000 rows", lambda: analysis.summarize(table, reference="jbod", by=("bs",)), 10.0,
              2**30),
    ]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
