"""What a file made to hurt ``flashscale import`` costs it, measured side by side in one run (``make bench``).

    1. A 1 GiB gzip (1 MiB of compressed zeros) beside a good fio output: the whole import, as a user runs it (a
       process of its own), is refused by name at the 256 MiB limit with the good file imported (exit status 3),
       its peak memory (the process's maximum resident set, wait4) under 512 MiB. Printed against the same import of
       the good file alone.
    2. Text crafted against the normal-output patterns, 144 KB a file (a header's date of spaces, a percentile line
       of digits, a description of ``, bs=`` repeated, a header of ``: (groupid=`` repeated), each read or refused
       within a second; and each at 288 KB against 144 KB: the time doubles (linear), it does not quadruple (the
       least of 7 reads each: the machine is shared).
       The percentile line took 131.4 s at 144 KB with the patterns before (measured once, 5c824cb's parent).
    3. A 254-character file name crafted against a --pattern of four fields ('-' repeated): read in one pass, under a
       millisecond (the regular expression before tried every split: 3.1 s a file).

Each figure is measured here, now; the exit status says whether every target was met.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

from flashscale.measure.fio_import import bounds, file_names, reader
from flashscale.measure.fio_import.file_names import Naming

ROOT = Path(__file__).resolve().parents[1]
GOOD = ROOT / "tests" / "golden" / "write_1target.json"
FLASHSCALE = Path(sys.executable).parent / "flashscale"
MiB = 2**20
PEAK_TARGET = 512 * MiB
CRAFTED = {
    "a header's date of spaces": lambda n: "x: (groupid=0, jobs=1): err= 0: pid=1: " + " " * n + "x\n",
    "a percentile line of digits": lambda n: (
        "x: (groupid=0, jobs=1): err= 0: pid=1: Thu Dec  6 09:18:04 2012\n  read : io=4KB, bw=4KB/s, iops=1 , "
        "runt= 1000msec\n    clat percentiles (usec):\n     |" + "1" * n + "\n"),
    "a description of ', bs=' repeated": lambda n: "a: (g=0): rw=read, bs=" + ", bs=" * (n // 5) + "\n",
    "a header of ': (groupid=' repeated": lambda n: "x: (groupid=0, jobs=1): err= 0 (" +
                                                   ": (groupid=0, jobs=1): err= 0 (" * (n // 30) + "\n",
}


def gzip_of_zeros(path: Path, size: int) -> None:
    """A gzip file of ``size`` zero bytes, written as a stream (the zeros are never all in memory)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    with open(path, "wb") as out:
        for _ in range(size // MiB):
            out.write(compressor.compress(bytes(MiB)))
        out.write(compressor.flush())


def measured_import(paths: list[Path], to: Path) -> tuple[int, float, int, str]:
    """``flashscale import PATHS --to TO`` in a process of its own: exit status, seconds, peak RSS (bytes), stdout."""
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        child = subprocess.Popen([str(FLASHSCALE), "import", *map(str, paths), "--to", str(to), "--layout", "single",
                                  "--devices", "1"], stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        return child.returncode, time.perf_counter() - start, usage.ru_maxrss * 1024, out.read()


def the_bomb(work: Path) -> bool:
    bomb = work / "bomb.json.gz"
    gzip_of_zeros(bomb, 1024 * MiB)
    status, seconds, peak, said = measured_import([bomb, GOOD], work / "with-bomb")
    plain_status, plain_seconds, plain_peak, _ = measured_import([GOOD], work / "alone")
    refused = f"{bomb.name}: a gzip file that expands to more than 256 MiB" in said
    ok = status == 3 and refused and "1 imported" in said and peak < PEAK_TARGET and plain_status == 0
    print(f"{'ok  ' if ok else 'FAIL'} 1 GiB gzip ({bomb.stat().st_size / MiB:.1f} MiB on disk) beside a good file: "
          f"exit status {status}, refused by name: {refused}, {seconds:.1f} s, peak {peak / MiB:.0f} MiB (target "
          f"{PEAK_TARGET / MiB:.0f} MiB); the good file alone: {plain_seconds:.1f} s, peak {plain_peak / MiB:.0f} MiB")
    return ok


def read_time(path: Path, text: str, repeats: int = 7) -> tuple[float, str]:
    """The least of ``repeats`` reads of ``text`` (others share this machine: the least is the read's own cost)."""
    path.write_text(text)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        outcome = reader.read_file(path, Naming(given={"layout": "single", "devices": 1}), "bench")
        times.append(time.perf_counter() - start)
    return min(times), "refused" if outcome.reason else f"{len(outcome.rows)} rows"


def crafted_text(work: Path) -> bool:
    ok = True
    for name, make in CRAFTED.items():
        small, what = read_time(work / "crafted.txt", make(144 * 1024))
        large, _ = read_time(work / "crafted.txt", make(288 * 1024))
        good = small < 1.0 and large < 3 * max(small, 0.005)
        ok = ok and good and reader.UNEXPECTED not in what
        print(f"{'ok  ' if good else 'SLOW'} 144 KB of {name}: {what} in {small * 1000:.1f} ms (target 1 s); 288 KB: "
              f"{large * 1000:.1f} ms ({large / max(small, 1e-9):.1f} x: linear is 2)")
    return ok


def crafted_name() -> bool:
    pattern = file_names.compile_pattern("{layout}/{bs}/{rw}-{iodepth}-{numjobs}-{rep}.json")
    start = time.perf_counter()
    for _ in range(100):
        pattern.search("x/y/" + "-" * 250 + ".jsox")
    each = (time.perf_counter() - start) / 100
    ok = each < 1e-3
    print(f"{'ok  ' if ok else 'SLOW'} a 254-character file name crafted against a 4-field --pattern: "
          f"{each * 1e6:.0f} us (target 1 ms)")
    return ok


def main() -> int:
    print(f"fio_import.bounds.MAX_BYTES = {bounds.MAX_BYTES / MiB:.0f} MiB")
    with tempfile.TemporaryDirectory(prefix="flashscale-bench-import-") as scratch:
        results = [the_bomb(Path(scratch)), crafted_text(Path(scratch)), crafted_name()]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
