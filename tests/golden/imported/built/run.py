"""Run every fio that ``build.py`` built through the corpus's matrix, and keep what each wrote (README.md beside this).

    python run.py BIN_DIR OUT_DIR [fio-X.Y ...]

BIN_DIR holds ``<tag>/fio`` (build.py's OUT_DIR); OUT_DIR (this folder) receives, per version, ``<tag>/``: the job
files (``<job>.fio``), each run's output xz-compressed (``<job>_<formats>.out.xz``: what fio wrote to ``--output``,
byte for byte: a client's hostnames are the sockets' paths in that run's temporary directory), fio's stderr where it wrote any (``<job>_<formats>.stderr``) and ``commands.txt`` (every command,
its working directory made anonymous, and its exit status). Every run happens in a fresh private temporary
directory (``tempfile.mkdtemp``), its fio servers on unix sockets there (mode 0700: no other local user reaches
them), each server stopped by its own pid when the run is done.

What runs (each job on fio's ``null`` engine, which completes every I/O as it is submitted, so fio's iodepth_level
says 1 whatever the iodepth; but ``randrw``, on a file with ``psync``, and ``depth``, on a file with ``libaio``):

    groups    four reporting groups (stonewall): randread 4k x2 jobs qd1, write 64k qd4, randwrite 16k x3 qd2,
              read 1m qd8, each job a fixed size (its I/Os counted exactly); no group_reporting
    grouped   one group_reporting group over two sections (2 jobs and 1), reads of 64k, time based (1 s)
    randrw    one job on a file, 70% reads of 4k
    depth     random 4k reads of a file, libaio, direct=1, iodepth=8 (I/Os in flight: iodepth_level)
    gtod      gtod_reduce=1 (no latency is timed), 2 jobs of random 4k reads
    unified   unified_rw_reporting=1: a randrw group, then a write group
    status    --status-interval=1 over a 3 s run: fio's reports as it runs, then the whole run
    client1   fio --client of one fio --server; client2: of two (each server runs the job file: 2 jobs each)

Formats: a version that writes several at once (fio 2.3 on, ``--output-format=normal,terse,json``) writes them of one
run into one file, so the test holds each format to the JSON of the same run; fio 2.1.8 to 2.2.x write one format
and ``--append-terse`` (the terse lines of the same run after it); before 2.1.8 one format a run, and before 2.0.10
there is no JSON at all (normal and terse, ``--minimal``). json+ (2.2.12 on) of ``groups`` and ``grouped``; terse
versions 2, 4 and 5 (where the fio knows them) of ``groups`` beside its JSON.
"""
from __future__ import annotations

import lzma
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

JOBS = {
    "groups": """[global]
ioengine=null

[randread]
rw=randread
bs=4k
size=1g
numjobs=2
iodepth=1

[write]
stonewall
rw=write
bs=64k
size=8g
iodepth=4

[randwrite]
stonewall
rw=randwrite
bs=16k
size=2g
numjobs=3
iodepth=2

[read]
stonewall
rw=read
bs=1m
size=64g
iodepth=8
""",
    "grouped": """[global]
ioengine=null
rw=read
bs=64k
size=1g
time_based=1
runtime=1
group_reporting=1

[first]
numjobs=2

[second]
numjobs=1
""",
    "randrw": """[global]
ioengine=psync
size=16m
bs=4k

[randrw]
rw=randrw
rwmixread=70
""",
    "gtod": """[global]
ioengine=null
gtod_reduce=1
rw=randread
bs=4k
size=1g
numjobs=2

[gtod]
""",
    "unified": """[global]
ioengine=null
unified_rw_reporting=1
bs=4k
size=1g

[mixed]
rw=randrw
rwmixread=50

[writes]
stonewall
rw=write
""",
    "depth": """[global]
ioengine=libaio
direct=1
rw=randread
bs=4k
size=16m
iodepth=8

[depth]
""",
    "status": """[global]
ioengine=null
rw=read
bs=4k
size=1g
time_based=1
runtime=3
rate_iops=50000

[status]
""",
    "client": """[global]
ioengine=null
rw=randread
bs=4k
size=1g
numjobs=2

[client]
""",
}


def version_of(tag: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", tag))


def runs(tag: str) -> list[tuple[str, list[str]]]:
    """(job, formats) of every run this version makes."""
    v = version_of(tag)
    if v >= (2, 3):
        together = [["normal", "terse", "json"]]
    elif v >= (2, 1, 8):
        together = [["json", "append-terse"], ["normal", "append-terse"]]
    elif v >= (2, 0, 10):
        together = [["json"], ["normal"], ["terse"]]
    else:
        together = [["normal"], ["terse"]]
    made = [(job, formats) for job in ("groups", "grouped", "randrw", "depth", "gtod", "unified")
            for formats in together]
    if v >= (2, 2, 12):
        made += [("groups", ["json+"]), ("grouped", ["json+"])]
    terse = [2, 4] + ([5] if v >= (2, 99) else [])
    beside = [["terse", "json"]] if v >= (2, 3) else [["json", "append-terse"]] if v >= (2, 1, 8) else [["terse"]]
    made += [("groups", [*beside[0], f"v{n}"]) for n in terse if v >= (2, 0, 10)]
    if v >= (2, 1, 4):
        made += [("status", ["json"]), ("status", ["normal"])]
        made += [(job, [form]) for job in ("client1", "client2") for form in ("json", "normal")]
    return made


def options(formats: list[str], tag: str) -> list[str]:
    """fio's command-line options for ``formats``: output formats, ``append-terse``, ``v<N>`` (terse version N)."""
    plain = [f for f in formats if f != "append-terse" and not re.fullmatch(r"v\d", f)]
    out = ["--append-terse"] if "append-terse" in formats else []
    out += [f"--terse-version={f[1:]}" for f in formats if re.fullmatch(r"v\d", f)]
    if version_of(tag) < (2, 0, 10):  # no --output-format: normal unless --minimal
        return ["--minimal", *out] if plain == ["terse"] else out
    return [f"--output-format={','.join(plain)}", *out]


def start_servers(fio: Path, work: Path, count: int, log) -> tuple[list[subprocess.Popen], list[str]]:
    servers, sockets = [], []
    for n in range(1, count + 1):
        socket = work / f"server{n}.sock"
        server = subprocess.Popen([str(fio), f"--server=sock:{socket}"], cwd=work, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        servers.append(server)
        sockets.append(f"sock:{socket}")
        log.write(f"  started fio --server=sock:<work>/server{n}.sock, pid {server.pid}\n")
    for socket in sockets:
        for _ in range(100):
            if Path(socket[5:]).exists():
                break
            time.sleep(0.05)
    return servers, sockets


def stop(servers: list[subprocess.Popen], log) -> None:
    for server in servers:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.write(f"  stopped pid {server.pid}: exit status {server.returncode}\n")


def run_one(fio: Path, out: Path, job: str, formats: list[str], log) -> None:
    """One run of ``job`` in ``formats``, in a fresh private directory; its output kept when fio exited 0. A fio
    that aborts on this machine's disks (fio 2.2 and 2.3 assert in ``show_disk_util`` when terse and another
    format are both asked for) is run again with ``disk_util=0`` added to the job's [global], and that is logged.
    Whatever fio wrote is kept unless it was killed by a signal or wrote nothing: a failed job's output (fio exits
    1) is what people keep too, and ``commands.txt`` says its exit status."""
    name = f"{job}_{'+'.join(formats)}"
    jobfile = out / f"{'client' if job.startswith('client') else job}.fio"
    done, written = _run(fio, out, job, formats, jobfile, log)
    if done.returncode < 0:
        quiet = out / f"{jobfile.stem}-disk_util=0.fio"
        quiet.write_text(jobfile.read_text().replace("[global]\n", "[global]\ndisk_util=0\n", 1))
        log.write(f"  fio aborted (signal {-done.returncode}): run again with {quiet.name}\n")
        done, written = _run(fio, out, job, formats, quiet, log)
    if done.returncode >= 0 and written:  # a job fio reports failed (exit status 1) is output people keep too
        (out / f"{name}.out.xz").write_bytes(lzma.compress(written, preset=9 | lzma.PRESET_EXTREME))
    else:
        log.write("  no output kept\n")
    if done.stderr.strip():
        (out / f"{name}.stderr").write_text(done.stderr)


def _run(fio: Path, out: Path, job: str, formats: list[str], jobfile: Path, log) -> tuple:
    work = Path(tempfile.mkdtemp(prefix="fio-corpus."))
    try:
        argv = [str(fio), *options(formats, fio.parent.name), f"--output={work / 'out'}"]
        servers = []
        if job == "status":
            argv.append("--status-interval=1")
        if job.startswith("client"):
            servers, sockets = start_servers(fio, work, int(job[-1]), log)
            for socket in sockets:
                argv += [f"--client={socket}", str(jobfile)]
        else:
            argv.append(str(jobfile))
        shown = " ".join(argv).replace(str(work), "<work>").replace(str(out), ".").replace(str(fio), "fio")
        log.write(f"$ {shown}\n")
        try:
            done = subprocess.run(argv, cwd=work, capture_output=True, text=True, timeout=120)
        finally:
            stop(servers, log)
        log.write(f"  exit status {done.returncode}\n")
        written = (work / "out").read_bytes() if (work / "out").exists() else b""
        done.stderr = done.stderr.replace(str(work), "<work>")
        return done, written
    finally:
        shutil.rmtree(work)


def main(argv: list[str]) -> int:
    bins, corpus = Path(argv[0]), Path(argv[1])
    tags = argv[2:] or sorted((p.name for p in bins.iterdir() if (p / "fio").exists()), key=version_of)
    for tag in tags:
        fio = bins / tag / "fio"
        out = corpus / tag
        out.mkdir(parents=True, exist_ok=True)
        for job, text in JOBS.items():
            (out / f"{job}.fio").write_text(text)
        with open(out / "commands.txt", "w") as log:
            version = subprocess.run([str(fio), "--version"], capture_output=True, text=True).stdout.strip()
            log.write(f"# {version}, built by build.py from the tag {tag}; run by run.py on {os.uname().sysname} "
                      f"{os.uname().release}\n")
            for job, formats in runs(tag):
                run_one(fio, out, job, formats, log)
        print(tag, "done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
