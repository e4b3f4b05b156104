"""Inside the VM lab, for ``make bench-predict`` (benchmarks/bench_predict.py boots the lab; not a test module).

    python benchmarks/vm_guest_predict.py PLAN.json

``{"mode": "layouts", ...}``: the campaigns of the plan, in order, on the lab's NVMe devices as a test bed (as
``flashscale vm-guest`` runs one): each after the first gets the one before as its ``baseline``, so its layouts on
more devices are stated with the smaller campaign's layouts as their calibration, before they are built.

``{"mode": "nullblk", ...}``: null_blk devices of a known latency and queue depth (``flashscale.system.nullblk``):
4 KiB random reads at each iodepth on one device (its curve; its latency and tags measured from it, as on a real
device: the model is never handed the emulator's), then md RAID-0 (native metadata, on the devices themselves, no
file system) at each chunk on 2 devices (the calibration) and on 4 (what is predicted), each point
``repetitions`` times, a round of every point apart, each md set's prediction stated (``predicted_at``) before it
is built; the rows (each with ``started_at``), the predictions and the md arrays' facts to the answer, fio's files
under ``out/raw``. Every array and device is recorded in a teardown before it exists
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

import pandas as pd

from flashscale.analysis import saturation
from flashscale.analysis.prediction import calibration, predict
from flashscale.arrays import volumes
from flashscale.arrays.emulated import ArraySpec
from flashscale.arrays.guard import Guard
from flashscale.arrays.build_steps import execute
from flashscale.arrays.testbed import TestBed
from flashscale.campaigns import campaign
from flashscale.layouts import describe
from flashscale.measure import fio, fio_output, results
from flashscale.measure.sweep import Sweep
from flashscale.system.commands import Runner
from flashscale.system.devices import System
from flashscale.system.nullblk import NullBlk, NullBlkSpec
from flashscale.system.teardown import Teardown, manifest_dir
from flashscale.system.vmlab.vm import prepare_guest

SATURATED = 0.9  # a device's tags: the least iodepth whose rate reaches this share of the most any reached


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
    steps, volume = volumes.md_array(members, token, chunk, describe("md-raid0").profile)
    execute(steps, guard=guard, runner=runner, teardown=teardown, system=system)
    return teardown, volume


def measured_device(rows: list[dict]) -> dict:
    """What one measures of a device one did not build: its latency (fio's mean completion latency at iodepth 1,
    the median of the runs) and its tags (the least iodepth whose runs reach ``SATURATED`` of the best, as
    ``analysis.saturation`` finds a layout's saturating point: the queue depth it saturates at; the largest
    measured where none did, a lower bound, said)."""
    frame = pd.DataFrame(rows)
    depths = sorted(frame["iodepth"].unique())
    reps = [frame.loc[frame["iodepth"] == d, "bw_bytes"].to_numpy(dtype=float) for d in depths]
    by_depth = pd.Series([r.mean() for r in reps], index=depths)
    top = float(by_depth.max())
    tags = int(depths[saturation.saturating_index(reps, SATURATED)[0]])
    latency = float(frame.loc[frame["iodepth"] == frame["iodepth"].min(), "clat_mean_ns"].median())
    how = (f"latency {latency / 1e6:.2f} ms (fio's completion latency at iodepth {int(frame['iodepth'].min())}), "
           f"{tags} tags (the least iodepth at {SATURATED:.0%} of the most rate, {top / 1e6:.2f} MB/s)")
    if tags == int(by_depth.index.max()) and len(by_depth) > 1 and by_depth.iloc[-2] < SATURATED * top:
        how += ": still rising at the deepest iodepth measured, so the tags are at least that many"
    return {"latency_ns": latency, "tags": tags, "how": how}


def _stated(said: pd.DataFrame, chunk: int, how: str) -> list[dict]:
    """A prediction's records as stated now (``predicted_at``), before what it predicts is measured."""
    notes = ["; ".join(filter(None, [str(n) if isinstance(n, str) else "", f"measured: {how}"]))
             for n in said["predicted_note"]]
    return said.assign(chunk_bytes=chunk, predicted_note=notes, predicted_at=results.now()).to_dict("records")


def nullblk(plan: dict, runner: Runner, system: System) -> dict:
    """The null_blk curve, then md RAID-0 on 2 and 4 of them at each chunk (module docstring): each md set
    predicted before it is built, from the single device as measured (its tags measured, never the emulator's)
    and, on more than the fewest, the same chunk's md on fewer as the calibration."""
    out, bs, reps = Path(plan["out"]), plan["bs"], plan.get("repetitions", 1)
    spec = NullBlkSpec(**plan["spec"])
    prepare_guest(runner, system)
    rows, predictions, device = [], [], None
    with NullBlk(spec, runner, system) as made:
        sets = [("single", 1, 0, (made.devices[0].path,))]
        sets += [("md-raid0", count, chunk, None) for chunk in plan["chunks"] for count in sorted(plan["counts"])]
        for layout, count, chunk, targets in sets:
            if layout != "single":
                predictions += _predict(rows, device, count, chunk, plan)
            teardown = None
            try:
                if targets is None:
                    teardown, volume = _md(made, count, chunk, runner, system)
                    targets = (volume,)
                size = count * spec.size_bytes // 2
                for rep in range(reps):
                    for depth in plan["depths"]:
                        raw = out / "raw" / f"{layout}-{count}-{chunk}" / f"qd{depth}" / f"rep{rep}"
                        at = results.now()
                        rows.append({"layout": layout, "devices": count, "chunk_bytes": chunk or None,
                                     "rw": "randread", "bs": bs, "numjobs": 1, "iodepth": depth, "rep": rep,
                                     "started_at": at, **_point(targets, bs, depth, plan, size, raw, runner)})
            finally:
                if teardown is not None:
                    teardown.close()
            if layout == "single":
                device = measured_device(rows)
        facts = made.facts()
    return {"rows": rows, "predictions": predictions, "measured_device": device, "devices": facts}


def _predict(rows: list[dict], device: dict, count: int, chunk: int, plan: dict) -> list[dict]:
    """md RAID-0 on ``count`` at ``chunk``, from the single device's rows and its measured tags; calibrated by the
    same chunk on the most fewer devices measured, where there is one."""
    frame = pd.DataFrame(rows).assign(warmup=False)
    base = predict.curve(frame[frame["layout"] == "single"])
    points = [{"devices": count, "rw": "randread", "bs": plan["bs"], "numjobs": 1, "iodepth": d}
              for d in plan["depths"]]
    fewer = frame[(frame["layout"] == "md-raid0") & (frame["chunk_bytes"] == chunk) & (frame["devices"] < count)]
    cost = None
    if not fewer.empty:
        fewer = fewer[fewer["devices"] == fewer["devices"].max()]
        n = int(fewer["devices"].max())
        raw = predict.predict(base, "md-raid0", fewer[predict.KEYS[1:]].drop_duplicates(), chunk_bytes=chunk,
                              tags=device["tags"])
        cost = calibration.calibrate(raw, fewer, "md-raid0", n, f"md-raid0 on {n} null_blk devices, chunk {chunk}")
    said = predict.predict(base, "md-raid0", points, chunk_bytes=chunk, layer=cost, tags=device["tags"])
    return _stated(said, chunk, device["how"])


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
