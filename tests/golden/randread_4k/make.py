"""Regenerate the 4 KiB random-read goldens in this folder with the real fio on this machine (tests/test_metrics.py).

    .venv/bin/python tests/golden/randread_4k/make.py

Two layouts on plain files in a fresh temporary directory (no device is touched): ``single`` (one directory) and
``jbod`` (two), each 4 KiB random reads by 2 jobs, 3 runs of 1 s; fio's JSON kept as it wrote it,
``<layout>/rep<n>.json``, with the job file ``<layout>.fio`` beside it. ``analyze --metric iops`` must give fio's own
IOPS and ``--metric p99`` fio's own 99th completion-latency percentile from them.
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from flashscale.measure.fio import FioJob, render

HERE = Path(__file__).parent
LAYOUTS = {"single": ("a",), "jbod": ("a", "b")}
REPS = 3


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="flashscale-golden-"))
    try:
        for layout, names in LAYOUTS.items():
            targets = []
            for name in names:
                (work / name).mkdir(exist_ok=True)
                targets.append(str(work / name))
            job = HERE / f"{layout}.fio"
            job.write_text(render(FioJob("randread", 4096, tuple(targets), numjobs=2, runtime_s=1, size=8 * 2**20,
                                         direct=False, ioengine="psync")))
            (HERE / layout).mkdir(exist_ok=True)
            for rep in range(REPS):
                out = HERE / layout / f"rep{rep}.json"
                proc = subprocess.run(["fio", "--output-format=json", f"--output={out}", str(job)],
                                      capture_output=True, text=True, cwd=work, check=False)
                print(f"{layout} rep {rep}: fio exit {proc.returncode}, {out.stat().st_size} bytes")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
