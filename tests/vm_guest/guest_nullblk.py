"""Inside the VM lab: null_blk devices made by flashscale, accepted by the guard, measured by fio; the rows as JSON.

    python tests/vm_guest/guest_nullblk.py PLAN.json OUT_DIR

PLAN: ``{"bs": 4096, "runtime_s": 2, "repetitions": 2, "sets": [{"name": "curve", "spec": {NullBlkSpec's
fields}, "points": [{"numjobs": 1, "iodepth": 1}, ...]}, ...]}``. For each set in turn its devices are made
(``flashscale.system.nullblk``), the guard is asked to accept them and every point is measured with
``flashscale.measure.fio`` (randread on the devices themselves), ``repetitions`` times (1 if not given), each
round over all the points before the next; then they are undone, and what is left of them (configfs directories,
/dev nodes, the manifest) is noted before the next set. OUT_DIR (in an rwdir) gets ``results.json`` and, per point
and repetition, fio's job file and JSON output under ``raw/<set>/<point>/rep<n>/``. Run by
test_vm_nullblk.py, which compares the rows with ``flashscale.system.nullblk.expected_bw``; not a test module.
"""
from __future__ import annotations

import json
import os
import platform
import sys
from dataclasses import asdict
from pathlib import Path

from flashscale.arrays.guard import Guard
from flashscale.errors import RefusedError
from flashscale.measure import fio, fio_output
from flashscale.system.commands import Runner
from flashscale.system.devices import System
from flashscale.system.nullblk import NullBlk, NullBlkSpec


def measure(made: NullBlk, point: dict, plan: dict, raw: Path, runner: Runner, rep: int) -> dict:
    """One run of a point: random reads of ``bs`` on every device, ``numjobs`` jobs spread over them, ``iodepth``
    each."""
    job = fio.FioJob(rw="randread", bs=plan["bs"], targets=tuple(d.path for d in made.devices),
                     numjobs=point["numjobs"], iodepth=point["iodepth"], runtime_s=plan["runtime_s"],
                     size=made.spec.size_bytes)
    row = fio_output.parse(fio.run(job, raw / job.point / f"rep{rep}", runner), source=job.point)
    return {**point, "bs": plan["bs"], "point": job.point, "rep": rep,
            **{k: row[k] for k in ("bw_bytes", "iops", "io_bytes", "runtime_s", "clat_mean_ns", "clat_p50_ns")}}


def guard_verdict(made: NullBlk, system: System) -> str:
    """"accepted" when the guard would let flashscale write every device (confirmed by its identity), else why not."""
    try:
        Guard(made.devices, [d.id for d in made.devices], False, system).check(made.devices)
    except RefusedError as exc:
        return str(exc)
    elsewhere = [f"{d.id} is at {system.find(d.id).path}, not {d.path}" for d in made.devices
                 if system.find(d.id).path != d.path]
    return "; ".join(elsewhere) or "accepted"


def left_behind(made: NullBlk, manifest: Path) -> list[str]:
    """What is still there of a set's devices after its teardown: configfs directories, /dev nodes, the manifest."""
    left = [str(f) for f in made.folders if f.exists()]
    left += [d.path for d in made.devices if os.path.exists(d.path)]
    return left + ([str(manifest)] if manifest.exists() else [])


def run_set(entry: dict, plan: dict, out: Path, runner: Runner, system: System) -> dict:
    spec = NullBlkSpec(**entry["spec"])
    made = NullBlk(spec, runner, system)
    with made:
        manifest = made.teardown.manifest
        record = {"name": entry["name"], "spec": asdict(spec), "devices": made.facts(), "notes": made.notes,
                  "guard": guard_verdict(made, system), "rows": []}
        if record["guard"] == "accepted":
            raw = out / "raw" / entry["name"]
            record["rows"] = [measure(made, point, plan, raw, runner, rep)
                              for rep in range(plan.get("repetitions", 1)) for point in entry["points"]]
    return {**record, "left_behind": left_behind(made, manifest)}


def main(argv: list[str]) -> int:
    plan, out = json.loads(Path(argv[1]).read_text()), Path(argv[2])
    out.mkdir(parents=True, exist_ok=True)
    runner, system = Runner(), System()
    result = {"kernel": platform.release(), "cpus": os.cpu_count(),
              "sets": [run_set(entry, plan, out, runner, system) for entry in plan["sets"]]}
    (out / "results.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
