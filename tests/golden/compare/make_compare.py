"""Regenerate the two campaigns of fio output that tests/test_compare_fio.py compares (see README.md beside it).

    .venv/bin/python tests/golden/compare/make_compare.py

Two campaigns, A and B, each of two points (sequential reads of 64 KiB and of 128 KiB blocks from one 16 MiB file),
three runs a point, every run held by fio's own rate limit (``rate=``): a known truth. In A both points run at
20 MiB/s; in B the 64 KiB point runs at 19 MiB/s (5% slower) and the 128 KiB point at 20 MiB/s, as in A. Each
run is 3 s on a file in a fresh temporary directory (no device is touched); fio's JSON is kept as fio wrote it, in
bench-fio's layout (``<campaign>/single/<bs>/run-<n>/read-1-1.json``), the job file beside the script
(``compare.fio``, its RATE and BS given by the environment).
"""
from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
JOB = HERE / "compare.fio"
RUNS = 3
RATES = {"A": {"64k": "20m", "128k": "20m"}, "B": {"64k": "19m", "128k": "20m"}}


def run(campaign: str, bs: str, rep: int, scratch: str) -> None:
    out = HERE / campaign / "single" / bs / f"run-{rep}" / "read-1-1.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "DIR": scratch, "BS": bs, "RATE": RATES[campaign][bs]}
    subprocess.run(["fio", "--output-format=json", f"--output={out}", str(JOB)], check=True, env=env)


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        for rep in range(1, RUNS + 1):  # interleaved, so that a slow moment of the machine falls on both
            for campaign in RATES:
                for bs in RATES[campaign]:
                    run(campaign, bs, rep, scratch)


if __name__ == "__main__":
    main()
