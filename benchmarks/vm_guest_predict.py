"""Inside the VM lab, for ``make bench-predict`` (benchmarks/bench_predict.py boots the lab; not a test module).

    python benchmarks/vm_guest_predict.py PLAN.json

``{"mode": "layouts", ...}``: the campaigns of the plan, in order, on the lab's NVMe devices as a test bed (as
``flashscale vm-guest`` runs one): each after the first gets the one before as its ``baseline``, so its layouts on
more devices are stated with the smaller campaign's layouts as their calibration, before they are built.

``{"mode": "nullblk", ...}``: null_blk devices of a known latency and queue depth (``flashscale.system.nullblk``):
4 KiB random reads at each iodepth on one device (its curve), then md RAID-0 (native metadata, on the devices
themselves, no file system) at each chunk on 2 devices (the calibration) and on 4 (what is predicted), each
point ``repetitions`` times, a round of every point apart; the rows and the md arrays' facts to ``out``'s
results.json, fio's files under ``out/raw``. Every array and device is recorded in a teardown before it exists
and undone after, as the campaigns' are.
"""
from __future__ import annotations

import json
import os
import platform
import secrets
import sys
from dataclasses import asdict, replace
from pathlib import Path

from flashscale.arrays import volumes
from flashscale.arrays.emulated import ArraySpec
from flashscale.arrays.guard import Guard
from flashscale.arrays.build_steps import execute
from flashscale.arrays.testbed import TestBed
from flashscale.campaigns import campaign
from flashscale.measure import fio, fio_output
from flashscale.measure.sweep import Sweep
from flashscale.system.commands import Runner
from flashscale.system.devices import System
from flashscale.system.nullblk import NullBlk, NullBlkSpec
from flashscale.system.teardown import Teardown, manifest_dir
from flashscale.system.vmlab.vm import prepare_guest


def layouts(plan: dict, runner: Runner, system: System) -> dict:
    """The plan's campaigns, each the next one's baseline; their folders."""
    prepared = prepare_guest(runner, system)
    ids = TestBed.load(plan["testbed"]).ids
    folders, baseline = [], None
    for stage in plan["campaigns"]:
        spec = campaign.CampaignSpec(
            name=stage["name"], layouts=tuple(stage["layouts"]), data_dir=plan["data_dir"],
            array=ArraySpec(devices=len(ids), device_size=plan["device_size"], read_bps=0, write_bps=0),
            sweep=Sweep(**stage["sweep"]), use_devices=stage.get("use_devices"), testbed=plan["testbed"],
            confirm=tuple(ids), dry_run=False, precondition_passes=0)
        spec = replace(spec, emulation="auto")
        guest = {"facts": plan["facts"], "spec": asdict(spec),
                 "notes": [f"In the guest flashscale {'; '.join(prepared)}."]}
        result = campaign.run(spec, runner, progress=False, guest=guest, baseline=baseline)
        folders.append(str(result.directory))
        baseline = result.directory
    return {"folders": folders}


def _point(targets: tuple[str, ...], bs: int, iodepth: int, plan: dict, size: int, raw: Path, runner: Runner) -> dict:
    job = fio.FioJob(rw="randread", bs=bs, targets=targets, numjobs=1, iodepth=iodepth,
                     runtime_s=plan["runtime_s"], size=size)
    row = fio_output.parse(fio.run(job, raw, runner), source=job.point)
    return {k: row[k] for k in ("bw_bytes", "iops", "runtime_s", "clat_mean_ns", "lat_mean_ns")}


def _md(made: NullBlk, count: int, chunk: int, runner: Runner, system: System) -> tuple[Teardown, str]:
    """md RAID-0 over the first ``count`` null_blk devices, through the guard, recorded before it exists."""
    members = made.devices[:count]
    guard = Guard(made.devices, [d.id for d in made.devices], False, system)
    guard.claimed.update(os.path.realpath(d.path) for d in made.devices)  # flashscale made them
    guard.check(members)
    token = secrets.token_hex(4)
    teardown = Teardown(manifest_dir() / f"flashscale-bench-md-{token}.json", runner, system)
    steps, volume = volumes.md_raid0(members, token, chunk)
    execute(steps, guard=guard, runner=runner, teardown=teardown, system=system)
    return teardown, volume


def nullblk(plan: dict, runner: Runner, system: System) -> dict:
    """The null_blk curve, then md RAID-0 on 2 and 4 of them at each chunk (module docstring)."""
    out, bs, reps = Path(plan["out"]), plan["bs"], plan.get("repetitions", 1)
    spec = NullBlkSpec(**plan["spec"])
    prepare_guest(runner, system)
    rows = []
    with NullBlk(spec, runner, system) as made:
        sets = [("single", 1, 0, (made.devices[0].path,))]
        sets += [("md-raid0", count, chunk, None) for chunk in plan["chunks"] for count in plan["counts"]]
        for layout, count, chunk, targets in sets:
            teardown = None
            try:
                if targets is None:
                    teardown, volume = _md(made, count, chunk, runner, system)
                    targets = (volume,)
                size = count * spec.size_bytes // 2
                for rep in range(reps):
                    for depth in plan["depths"]:
                        raw = out / "raw" / f"{layout}-{count}-{chunk}" / f"qd{depth}" / f"rep{rep}"
                        rows.append({"layout": layout, "devices": count, "chunk_bytes": chunk or None,
                                     "rw": "randread", "bs": bs, "numjobs": 1, "iodepth": depth, "rep": rep,
                                     **_point(targets, bs, depth, plan, size, raw, runner)})
            finally:
                if teardown is not None:
                    teardown.close()
        facts = made.facts()
    return {"rows": rows, "devices": facts}


def main(argv: list[str]) -> int:
    plan = json.loads(Path(argv[1]).read_text())
    runner = Runner()
    system = System(runner=runner)
    answer = (layouts if plan["mode"] == "layouts" else nullblk)(plan, runner, system)
    answer.update(kernel=platform.release(), cpus=os.cpu_count())
    Path(plan["answer"]).write_text(json.dumps(answer, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
