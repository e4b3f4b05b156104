"""Regenerate the golden fio outputs in this folder with the real fio on this machine.

    .venv/bin/python tests/golden/make_golden.py [NAME ...]   # only the outputs named, or all of them

Runs small fio jobs against files in a fresh temporary directory (no devices are touched) and keeps fio's JSON
output exactly as fio wrote it, with the job file beside it.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from flashscale.measure.fio import FioJob, render

HERE = Path(__file__).parent
WANTED: set[str] = set()


def produce(name: str, jobfile_text: str, workdir: Path) -> None:
    if WANTED and name not in WANTED:
        return
    jobfile = HERE / f"{name}.fio"
    jobfile.write_text(jobfile_text)
    out = HERE / f"{name}.json"
    proc = subprocess.run(["fio", "--output-format=json", f"--output={out}", str(jobfile)],
                          capture_output=True, text=True, cwd=workdir)
    print(f"{name}: fio exit {proc.returncode}, {out.stat().st_size if out.exists() else 0} bytes")


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="flashscale-golden-"))
    try:
        a, b = work / "a", work / "b"
        a.mkdir(), b.mkdir()
        small = dict(runtime_s=1, size=16 * 2**20, direct=False, ioengine="psync")
        produce("read_2targets_3jobs", render(FioJob("read", 2**20, (str(a), str(b)), numjobs=3, **small)), work)
        produce("write_1target", render(FioJob("write", 128 * 2**10, (str(a),), numjobs=1, **small)), work)
        produce("randrw_mixed", render(FioJob("randrw", 4096, (str(a),), numjobs=2, **small)), work)
        # A directory that does not exist: fio drops the job and writes no JSON at all.
        produce("no_json", render(FioJob("write", 4096, (str(work / "missing" / "deeper"),), **small)), work)
        # A job that fails while running: fio prints its error line into the output file before the JSON,
        # and the JSON carries the job's error number.
        produce("error_in_json", "[global]\nrw=write\nbs=4096\nsize=1M\ndirect=1\nioengine=psync\n"
                                 "[bad]\nfilename=/proc/version\n", work)
        # fio's metadata engines (flashscale.metadata): 3 jobs over two directories, 200 files each; filestat and
        # filedelete lay their files out first (not timed).
        for engine in ("filecreate", "filestat", "filedelete"):
            produce(f"metadata_{engine}", render(FioJob(engine, 4096, (str(a), str(b)), numjobs=3, nrfiles=200,
                                                        direct=False)), work)
        # IOR's N-to-1 (flashscale.shared_file): 3 jobs, one file, 1 MiB each in 64 KiB transfers, once.
        produce("shared_file_write", render(FioJob("write", 64 * 2**10, (str(a), str(b)), numjobs=3, size=2**20,
                                                   time_based=False, shared_file=True, direct=False,
                                                   ioengine="psync")), work)
        # fio's own steady state (Sweep.ss): a limit met at once (fio stops the job early) and one never met
        for name, ss in (("steadystate_attained", "bw:100%"), ("steadystate_not_attained", "iops_slope:0%")):
            produce(name, render(FioJob("write", 64 * 2**10, (str(a),), runtime_s=4, size=16 * 2**20, direct=False,
                                        ioengine="psync", ss=ss, ss_dur_s=2)), work)
    finally:
        shutil.rmtree(work)  # the temporary directory this script created


if __name__ == "__main__":
    WANTED.update(sys.argv[1:])
    main()
