"""Regenerate fio's output as users keep it, in this folder, with the real fio on this machine (README.md beside it).

    .venv/bin/python tests/golden/as_found/make.py

Each job runs for one second on small plain files in a fresh temporary directory (no device is touched), its files
named by a ``filename`` or ``directory`` list, as a study spreading one job over several devices names them; the
output kept as fio (and the shell around it) wrote it, under the names people give it. The job file of each output
is beside it (``<name>.fio``). One file is a hand-edited copy, said here and in README.md:
``fio335_spread4.output`` is ``spread4_jsonplus.output`` with its ``fio version`` changed to fio-3.35, whose JSON
has the fields fio 3.33's has (stat.c between the tags changes only the steady-state arrays' length).
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent

JOB = """[global]
ioengine=psync
direct=0
size=1m
bs={bs}
rw={rw}
runtime=1
time_based=1
{more}
"""
# name: (rw, bs, the options after them, fio's --output-format, the file's name)
RUNS = {
    "spread4_jsonplus": ("randread", "4k", "filename=dev0:dev1:dev2:dev3\n\n[spread]\nnumjobs=2", "json+",
                         "spread4_jsonplus.output"),
    "spread2_grouped": ("write", "64k", "group_reporting=1\nfilename=dev0:dev1\n\n[grouped]\nnumjobs=2",
                        "json,normal", "spread2_grouped.log"),
    "spread3_randrw": ("randrw", "4k", "rwmixread=70\nfilename=dev0:dev1:dev2\n\n[mixed]\nnumjobs=2", "normal,json",
                       "spread3_randrw.txt"),
    "escaped_colon": ("read", "16k", "filename=odd\\:name:plain\n\n[escaped]", "json", "escaped_colon.json"),
    "directories": ("randwrite", "4k", "directory=dir0:dir1\nnrfiles=2\n\n[dirs]\nnumjobs=2", "json",
                    "directories.out"),
    "per_job_targets": ("read", "4k", "\n[one]\nfilename=dev0\n\n[two]\nfilename=dev1", "json", "per_job_targets"),
    "tiny_reads": ("randread", "128", "filename=dev0\n\n[tiny]", "json", "tiny_reads.log"),
    # group_reporting over two job sections, each its own targets: fio echoes only the last's (a map gives the count)
    "sections_grouped": ("randread", "4k", "group_reporting=1\n\n[a]\nfilename=dev0:dev1\nnumjobs=2\n\n[b]\n"
                         "filename=dev2", "json", "sections_grouped.json"),
    # reports every second of a run of two stonewalled groups: the second group begins after the first report
    "status_stonewalled": ("randrw", "4k", "filename=dev0:dev1\n\n[mixed]\nnumjobs=2\n\n[writes]\nstonewall\n"
                           "rw=randwrite", "json --status-interval=1", "status_stonewalled.json"),
}
SCALING = (1, 2, 3)  # scaling_appended: one run a device count, appended to one file without a suffix
BANNER = "=== bench.sh 1.4: host lab7, starting fio ===\n"


def run(job: Path, form: str, workdir: Path, output: Path | None = None) -> str:
    argv = ["fio", *f"--output-format={form}".split(), *([f"--output={output}"] if output else []), str(job)]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=workdir, timeout=120)
    print(f"{job.name}: fio exit {proc.returncode}", file=sys.stderr)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    return proc.stdout + proc.stderr


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="flashscale-as-found-"))
    try:
        for folder in ("dir0", "dir1"):
            (work / folder).mkdir()
        for name, (rw, bs, more, form, kept) in RUNS.items():
            job = HERE / f"{name}.fio"
            job.write_text(JOB.format(rw=rw, bs=bs, more=more))
            run(job, form, work, HERE / kept)
        plus = (HERE / "spread4_jsonplus.output").read_text()
        (HERE / "fio335_spread4.output").write_text(plus.replace('"fio-3.33"', '"fio-3.35"', 1))
        appended = []
        for count in SCALING:
            job = HERE / f"scaling_{count}.fio"
            targets = ":".join(f"dev{i}" for i in range(count))
            job.write_text(JOB.format(rw="read", bs="128k", more=f"filename={targets}\n\n[scaling]"))
            appended.append(run(job, "json", work))  # fio ... >> scaling_appended
        (HERE / "scaling_appended").write_text("".join(appended))
        job = HERE / "wrapped_run.fio"
        job.write_text(JOB.format(rw="randread", bs="8k", more="filename=dev0:dev1\n\n[wrapped]\nnumjobs=3"))
        # bench.sh: echo its banner; fio --output-format=json wrapped.fio 2>&1; echo done; a shell prompt after
        (HERE / "wrapped_run.txt").write_text(BANNER + run(job, "json", work) + "done in 1 s\n$ \n")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
