"""Run a command with this machine's CPUs held to a share of their speed: ``make test-half-cpu``.

    python scripts/half_cpu.py [--share 0.5] -- COMMAND...

A cgroup of ours (cgroup v1's ``cpu`` controller: ``cpu.cfs_quota_us``; v2: ``cpu.max``) lets the command and every
process it starts run for ``share`` x the CPUs' time in each 100 ms period, then holds them: with 2 CPUs and a share
of 0.5, one CPU's worth of time spread over both, as on a machine of half the speed. The cgroup is recorded in a
manifest before it is made (``flashscale reap`` undoes it if this is killed) and removed afterwards; the command's
exit status is this script's.

On cgroup v2 a process that moves itself to a cgroup elsewhere in the tree (the emulated array's block throttle)
leaves this one and runs at full speed: the share then holds everything but fio's own runs. On v1 (this machine's)
the cpu and blkio hierarchies are apart, and fio stays held.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import uuid
from pathlib import Path

from flashscale.system.commands import Runner
from flashscale.system.devices import System
from flashscale.system.teardown import Teardown, manifest_dir

PERIOD_US = 100_000


def _cpu_hierarchy(system: System) -> tuple[str, Path]:
    for mount in system.mounts():
        if mount.fstype == "cgroup" and "cpu" in mount.options.split(","):
            return "v1", Path(mount.mountpoint)
    for mount in system.mounts():
        if mount.fstype == "cgroup2" and "cpu" in system.cgroup_controllers(mount.mountpoint):
            return "v2", Path(mount.mountpoint)
    raise SystemExit("no cgroup v1 cpu hierarchy and no cgroup v2 with the cpu controller: cannot hold the CPUs")


def _limit(kind: str, folder: Path, quota_us: int) -> None:
    if kind == "v1":
        (folder / "cpu.cfs_period_us").write_text(str(PERIOD_US))
        (folder / "cpu.cfs_quota_us").write_text(str(quota_us))
        held = int((folder / "cpu.cfs_quota_us").read_text())
    else:
        (folder / "cpu.max").write_text(f"{quota_us} {PERIOD_US}")
        held = int((folder / "cpu.max").read_text().split()[0])
    if held != quota_us:
        raise SystemExit(f"wrote a quota of {quota_us} us to {folder} but the kernel kept {held}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--share", type=float, default=0.5, help="the share of the CPUs' time, in (0, 1]")
    parser.add_argument("command", nargs="+")
    args = parser.parse_args(argv)
    if not 0 < args.share <= 1:
        parser.error(f"--share={args.share} must be in (0, 1]")
    system, runner = System(), Runner()
    kind, root = _cpu_hierarchy(system)
    folder = root / f"flashscale-halfcpu-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    teardown = Teardown(manifest_dir() / f"{folder.name}.json", runner, system)
    teardown.record("cgroup", path=str(folder))
    folder.mkdir()
    try:
        quota = round(args.share * (os.cpu_count() or 1) * PERIOD_US)
        _limit(kind, folder, quota)
        print(f"half_cpu: {args.share:g} of {os.cpu_count()} CPU(s) ({quota} us every {PERIOD_US} us) in {folder}",
              flush=True)
        procs = str(folder / "cgroup.procs")
        child = subprocess.Popen(args.command, preexec_fn=lambda: Path(procs).write_text(str(os.getpid())))
        return child.wait()
    finally:
        teardown.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
