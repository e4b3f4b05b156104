"""Regenerate the fio 3.33 outputs in this folder with the real fio on this machine (see README.md beside it).

    .venv/bin/python tests/golden/imported/make_fio333.py [NAME ...]   # only the outputs named (benchfio: the tree)

Small jobs of one second on files in a fresh temporary directory (no device is touched); the output kept exactly as
fio wrote it, the job file beside it. The client/server output comes from two ``fio --server`` this script starts
on 127.0.0.1 (ports 18765 and 18766) and stops, by the pids it started, before it ends.
"""
from __future__ import annotations

import lzma
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
WANTED: set[str] = set()
PORTS = (18765, 18766)

# Two reporting groups (stonewall), 2 jobs each, no group_reporting: fio reports each job on its own.
GROUPS = """[global]
ioengine=psync
direct=0
size=8m
bs=4k
runtime=1
time_based=1
numjobs=2
directory={dir}

[randread-group]
rw=randread

[randwrite-group]
stonewall
rw=randwrite
"""
# group_reporting over two sections of different job counts, 64 KiB reads; fio's default percentile list.
GROUPED = """[global]
ioengine=psync
direct=0
size=8m
bs=64k
rw=read
runtime=1
time_based=1
group_reporting=1
directory={dir}

[first]
numjobs=2

[second]
numjobs=1
"""
# One job, read 4 KiB at random: written at once as terse v5 and json+ (the same run in both)
ONE = """[global]
ioengine=psync
direct=0
size=8m
bs=4k
rw=randread
runtime=1
time_based=1
directory={dir}

[one]
"""
# bench-fio's job (fio-plot): one section, no group_reporting, options in the job section; run by make_benchfio as
# bench-fio lays its output out: <layout>/<bs>/run-<n>/<rw>-<iodepth>-<numjobs>.json
BENCHFIO = """[FIOJOB]
rw=read
bs=1m
iodepth=1
numjobs={numjobs}
size=16m
runtime=1
time_based=1
direct=0
ioengine=psync
invalidate=1
filename={files}
"""
# Three jobs in one group, no group_reporting, each held to 2000 IOPS and given a different amount to read: they run
# about 0.5, 0.75 and 1 s, so the group's IOPS over the longest (fio's group_reporting) is 3/4 of their own IOPS
# summed; written as json and, in a second run, json+ (the buckets the percentiles merge from)
APART = ONE.replace("runtime=1\ntime_based=1\n", "rate_iops=2000\n").replace(
    "[one]\n", "[short]\nio_size=4m\n\n[middle]\nio_size=6m\n\n[long]\nio_size=8m\n")
# One job reported while it runs, every second (--status-interval=1): four whole JSON outputs in one file, each
# counted from the run's start, the last the whole run
INTERVALS = """[global]
ioengine=psync
direct=0
size=8m
bs=64k
rw=read
runtime=3
time_based=1
directory={dir}

[reported]
"""
# Reads and writes mixed 70/30 at random, 4 KiB: both sides in one job's normal output
RANDRW = """[global]
ioengine=psync
direct=0
size=8m
bs=4k
rw=randrw
rwmixread=70
runtime=1
time_based=1
directory={dir}

[mixed]
"""
# One device count after another, each run appended to one file (``fio ... >> all.json``): 30 runs of the null engine
APPENDED = "[global]\nioengine=null\nrw=read\nbs=1m\nsize=64g\ntime_based=1\nruntime=1\n\n[nvme]\n"
# A job that fails: fio cannot write /proc/version (error 1 in the JSON, no data moved)
FAILS = "[global]\nrw=write\nbs=4096\nsize=1M\nioengine=psync\n\n[fails]\nfilename=/proc/version\n"


def produce(name: str, jobfile_text: str, argv: list[str], workdir: Path, suffix: str = "json") -> None:
    if WANTED and name not in WANTED:
        return
    jobfile = HERE / f"{name}.fio"
    jobfile.write_text(jobfile_text)
    out = HERE / f"{name}.{suffix}"
    proc = subprocess.run(["fio", *argv, f"--output={out}", str(jobfile)], capture_output=True, text=True, cwd=workdir)
    print(f"{name}: fio exit {proc.returncode}, {out.stat().st_size if out.exists() else 0} bytes")


def make_appended(workdir: Path, runs: int = 30) -> None:
    """``runs`` runs of one job, each fio's JSON on stdout appended to one file, kept xz-compressed (the import
    reads it so): fio333_appended30.json.xz."""
    name = f"fio333_appended{runs}"
    if WANTED and name not in WANTED:
        return
    jobfile = HERE / f"{name}.fio"
    jobfile.write_text(APPENDED)
    appended = b""
    for _ in range(runs):
        proc = subprocess.run(["fio", "--output-format=json", str(jobfile)], capture_output=True, cwd=workdir)
        appended += proc.stdout
    (HERE / f"{name}.json.xz").write_bytes(lzma.compress(appended))
    print(f"{name}: {runs} runs, {len(appended)} bytes")


def make_benchfio(workdir: Path) -> None:
    """Two layouts (``single``: one file; ``jbod``: fio's I/O spread over two files, one per folder), read at
    1 MiB by 1 and 2 jobs, two runs each: 8 files under benchfio/."""
    if WANTED and "benchfio" not in WANTED:
        return
    for layout, count in (("single", 1), ("jbod", 2)):
        files = []
        for index in range(count):
            (workdir / layout / str(index)).mkdir(parents=True)
            files.append(str(workdir / layout / str(index) / "f"))
        for run in (1, 2):
            out = HERE / "benchfio" / layout / "1m" / f"run-{run}"
            out.mkdir(parents=True, exist_ok=True)
            for numjobs in (1, 2):
                job = workdir / "job.fio"
                job.write_text(BENCHFIO.format(numjobs=numjobs, files=":".join(files)))
                target = out / f"read-1-{numjobs}.json"
                proc = subprocess.run(["fio", "--output-format=json", f"--output={target}", str(job)],
                                      capture_output=True, text=True, cwd=workdir)
                print(f"{target.relative_to(HERE)}: fio exit {proc.returncode}")


def servers(workdir: Path) -> list[subprocess.Popen]:
    started = [subprocess.Popen(["fio", f"--server=ip:127.0.0.1,{port}"], cwd=workdir, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL) for port in PORTS]
    time.sleep(1)
    return started


def produce_client_server(name: str, jobfile_text: str, workdir: Path, form: str = "json") -> None:
    """Both servers run the same job file: one row per host, and fio's own "All clients" sum."""
    if WANTED and name not in WANTED:
        return
    jobfile = HERE / f"{name}.fio"
    jobfile.write_text(jobfile_text)
    started = servers(workdir)
    try:
        suffix = "json" if form == "json" else "txt"
        argv = ["fio", f"--output-format={form}", f"--output={HERE / f'{name}.{suffix}'}"]
        for port in PORTS:
            argv += [f"--client=127.0.0.1,{port}", str(jobfile)]
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=workdir, timeout=120)
        print(f"{name}: fio exit {proc.returncode}")
    finally:
        for server in started:  # the servers this function started, by their own pids
            server.terminate()
            server.wait(timeout=30)


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="flashscale-imported-golden-"))
    try:
        folder = work / "files"
        folder.mkdir()
        produce("fio333_groups", GROUPS.format(dir=folder), ["--output-format=json"], work)
        produce("fio333_grouped_jsonplus", GROUPED.format(dir=folder), ["--output-format=json+"], work)
        produce("fio333_one_terse5_jsonplus", ONE.format(dir=folder),
                ["--output-format=terse,json+", "--terse-version=5"], work, suffix="txt")
        for version in (2, 3, 4):
            produce(f"fio333_groups_terse{version}", GROUPS.format(dir=folder),
                    ["--output-format=terse", f"--terse-version={version}"], work, suffix="txt")
        produce("fio333_fails", FAILS, ["--output-format=json"], work)
        produce("fio333_apart", APART.format(dir=folder), ["--output-format=json"], work)
        produce("fio333_apart_jsonplus", APART.format(dir=folder), ["--output-format=json+"], work)
        for name, job in (("groups", GROUPS), ("grouped", GROUPED), ("randrw", RANDRW)):
            produce(f"fio333_{name}_normal_json", job.format(dir=folder), ["--output-format=normal,json"], work,
                    suffix="txt")
        produce("fio333_status_interval", INTERVALS.format(dir=folder), ["--output-format=json",
                                                                        "--status-interval=1"], work)
        make_benchfio(work)
        make_appended(work)
        produce_client_server("fio333_client_2servers", ONE.format(dir=folder).replace("[one]", "[one]\nnumjobs=2"),
                              work)
        produce_client_server("fio333_client_2servers_normal",
                              ONE.format(dir=folder).replace("[one]", "[one]\nnumjobs=2"), work, form="normal")
    finally:
        shutil.rmtree(work)  # the temporary directory this script created


if __name__ == "__main__":
    WANTED.update(sys.argv[1:])
    main()
