"""Predicted against measured, where the truth is not ours to set (``make bench-predict``; root, and the VM lab for
its two VM cases; not a test, not in ``make test``).

    python benchmarks/bench_predict.py [--cases seeds,loop,vm-layouts,vm-nullblk] [--work DIR] [--small]
    python benchmarks/bench_predict.py --rescore benchmarks/results      # every kept run's table, measuring nothing

Cases (issue 33's benchmark), each predicted before what it predicts was measured:

    seeds        seeds 000 and 003's published tables, from their own single device (000: one P3700; md RAID-0's
                 chunk, 128 KiB, from the paper; md RAID-0 held to what jbod, measured before it, carried on the
                 12 cards: ``calibration.reference_ceiling``) or published figures and ceilings (003: P4600s
                 behind 11 links)
    loop         uncapped loop devices (no cap: the CPU binds): btrfs on one device, then jbod and btrfs raid0 on 2
                 and on 4, each campaign stating its layouts before it builds them, the one before its calibration
                 (``campaign.run``'s baseline: btrfs on one device for raid0 on 2, the 2-device layouts for 4)
    vm-layouts   the VM lab uncapped (TCG: the CPU binds): jbod, md RAID-0, IMSM RAID-0 and an LVM stripe on 2 of 4
                 QEMU NVMe devices, then the three on 4, stated from one device and the 2-device campaign (scored:
                 the 4)
    vm-nullblk   the VM lab's null_blk devices (10 ms, 8 tags each): 4 KiB random reads at iodepth 1 to 64 on one
                 device, md RAID-0 with chunks of 4 KiB and 512 KiB on 2 (the calibration) and on 4 (scored),
                 predicted from the one device (its latency and tags measured from its own runs, as on a real
                 device: the model is never handed the emulator's) and the 2-device md alone (the routing case),
                 each md set's prediction stated in the guest before it is built

Each run keeps every case's measured and predicted tables (gzip'd CSV) with the machine's facts (CPU, kernel,
fio's version, the commit) in a new folder under ``--results`` (benchmarks/results/<UTC stamp>/), and its table
there (table.md), scored from what was kept (``bench_predict_store``: each prediction through ``scoring.against``,
the campaigns' "stated before" check; errors beside each point's own repeatability; intervals where stated).
``--rescore`` prints the table of a kept run, or of every run a folder keeps, with the headline the median over
all of them and each run's figure beside it: docs/validation.md's table is ``--rescore benchmarks/results``,
byte for byte (tests/test_bench_predict.py). The campaigns themselves stay in ``--work`` (a new folder by default,
printed). The calibrations are shown, never counted.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

import bench_predict_store
from bench_predict_store import Case

from flashscale.measure import campaign_folder
from flashscale.analysis.prediction import calibration, predict
from flashscale.arrays.emulated import ArraySpec
from flashscale.arrays.layouts import Options
from flashscale.campaigns import campaign
from flashscale.measure import results
from flashscale.measure.sweep import Sweep
from flashscale.system.commands import Runner
from flashscale.system.devices import System
from flashscale.system.monitor import busy_cores

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "data" / "reference"
RESULTS = ROOT / "benchmarks" / "results"
SMALL = "reduced (--small): jobs 1 and 2, 2 runs a point (the VM's layouts 3); null_blk at iodepth 1, 4, 8 and 16"
CASES = ("seeds", "loop", "vm-layouts", "vm-nullblk")
MiB = 2**20
SWEEP = dict(rw=("read", "write"), bs=(MiB,), numjobs=(1, 2, 4), iodepth=(1,), repetitions=3, runtime_s=3, ramp_s=1,
             size=64 * MiB)
NULLBLK = dict(spec=dict(devices=4, size_bytes=64 * MiB, latency_ns=10_000_000, queue_depth=8), bs=4096,
               depths=[1, 2, 4, 8, 16, 32, 64], chunks=[4096, 512 * 1024], counts=[2, 4], runtime_s=3,
               repetitions=2)
POINT = ["devices", "rw", "bs", "numjobs", "iodepth"]
QUIET_CORES = 0.3  # a campaign starts when the machine's other work keeps no more than this busy (5 s sampled)
QUIET_WAIT_S = 900


def quiet(why: str) -> str:
    """Wait, at most ``QUIET_WAIT_S``, for the machine to be quiet (``QUIET_CORES`` busy over 5 s): this 2-core
    machine is shared, and an uncapped device's rate is the CPUs'. What was waited and found, in words."""
    system, started = System(), time.monotonic()
    while True:
        before = system.cpu_times()
        time.sleep(5)
        busy = busy_cores(before, system.cpu_times())
        waited = time.monotonic() - started
        if busy <= QUIET_CORES or waited >= QUIET_WAIT_S:
            line = f"{why}: {busy:.2f} cores busy after {waited:.0f} s of waiting"
            print(line, flush=True)
            return line


def published(name: str, said: pd.DataFrame, measured: pd.DataFrame) -> Case:
    """A seed's case: its prediction, stated now (``predicted_at``), and its published table (no run times)."""
    return Case(name, True, measured, said.assign(predicted_at=results.now()))


# ---- seeds 000 and 003 ---------------------------------------------------------------------------------------
def seeds(work: Path) -> list[Case]:
    """Seed 000's layouts from its own single card (md RAID-0 at its 128 KiB chunk, held to what jbod carried on
    the 12 cards: the study measured jbod first), and seed 003's BeeGFS from its drives' figures behind its 11
    links."""
    table = pd.read_csv(REFERENCE / "seed000_results.csv")
    system = pd.read_csv(REFERENCE / "seed000_system.csv").set_index("parameter")["value"].to_dict()
    base = predict.curve(table)
    limits = predict.Ceilings.from_mapping(system)
    carried = calibration.reference_ceiling(base, table[table["layout"] == "jbod"])
    said = pd.concat([predict.predict(base, layout, table[table["layout"] == layout][POINT], limits, chunk,
                                      reference=reference)
                      for layout, chunk, reference in (("jbod", None, None), ("md-raid0", 128 * 1024, carried))],
                     ignore_index=True)
    parts = [published("seed 000", said, table[table["layout"].isin(["jbod", "md-raid0"])].assign(rep=0))]
    system3 = pd.read_csv(REFERENCE / "seed003_system.csv").set_index("parameter")["value"].to_dict()
    drives = int(pd.read_csv(REFERENCE / "seed003_drives.csv").set_index("quantity")["value"]["drives"])
    figures = predict.figures({"read": system3["device_read_bw_bytes"], "write": system3["device_write_bw_bytes"]})
    table3 = pd.read_csv(REFERENCE / "seed003_results.csv").assign(bs=MiB, iodepth=1, devices=drives)
    said = predict.predict(figures, "beegfs", table3[POINT], predict.Ceilings.from_mapping(system3))
    parts.append(published("seed 003", said, table3.assign(rep=0, bw_bytes=table3["best_bw_bytes"])))
    return parts


# ---- uncapped loop devices -----------------------------------------------------------------------------------
def _loop_spec(name: str, work: Path, devices: int, layouts: tuple[str, ...], fs: str = "xfs"):
    return campaign.CampaignSpec(name=name, layouts=layouts, emulation="loop", data_dir=str(work),
                                 array=ArraySpec(devices=devices, device_size=2**30, read_bps=0, write_bps=0),
                                 options=Options(fs=fs), sweep=Sweep(**SWEEP))


def measure_loop(work: Path) -> None:
    """btrfs on one device, then the 2- and 4-device campaigns, each the next one's calibration."""
    quiet("loop-btrfs1")
    first = campaign.run(_loop_spec("loop-btrfs1", work, 1, ("single",), fs="btrfs"), progress=False)
    quiet("loop2")
    two = campaign.run(_loop_spec("loop2", work, 2, ("single", "jbod", "btrfs-raid0")), progress=False,
                       baseline=first.directory)
    quiet("loop4")
    campaign.run(_loop_spec("loop4", work, 4, ("single", "jbod", "btrfs-raid0")), progress=False,
                 baseline=two.directory)


def stated_case(folder: Path, case: str, counted: bool) -> Case:
    """What a campaign stated before building each layout (predictions.csv, with ``predicted_at``) and every run
    it measured (with ``started_at``)."""
    table = results.rebuild_table(folder)
    rows = table[(table["phase"] == "measure") & (table["workload"] == "fio")]
    return Case(case, counted, rows, campaign_folder.read_predictions(folder))


def loop(work: Path) -> list[Case]:
    return [stated_case(work / "loop2", "loop, 2 devices", True), stated_case(work / "loop4", "loop, 4 devices",
                                                                               True)]


# ---- the VM lab ----------------------------------------------------------------------------------------------
def _boot(plan: dict, work: Path, share_name: str, devices: int, timeout_s: float) -> dict:
    """One boot of the lab running benchmarks/vm_guest_predict.py with ``plan``; its answer."""
    from flashscale.campaigns.vmlab import GUEST_ENV
    from flashscale.system.vmlab import vm
    share = work / f"flashscale-{share_name}"
    share.mkdir(exist_ok=True)
    with vm.Lab(vm.VmSpec(devices=devices, device_size=2**30, name=f"bench-{share_name}")) as lab:
        (share / "testbed.yaml").write_text(json.dumps({"name": "bench", "devices": lab.identities}))
        plan = {**plan, "testbed": str(share / "testbed.yaml"), "answer": str(share / "answer.json")}
        lab.choose_accelerator()
        plan["facts"] = lab.facts
        (share / "plan.json").write_text(json.dumps(plan))
        command = ["env", *GUEST_ENV, sys.executable, str(ROOT / "benchmarks" / "vm_guest_predict.py"),
                   str(share / "plan.json")]
        boot = lab.boot(command, share, rwdirs=[work], cwd=ROOT, timeout_s=timeout_s)
        if boot.returncode != 0 or not (share / "answer.json").exists():
            raise RuntimeError(f"the VM's {share_name} ended with {boot.returncode}:\n"
                               f"{boot.output.read_text(errors='replace')[-3000:]}")
        return {**json.loads((share / "answer.json").read_text()), "accelerator": lab.accelerator}


def measure_vm_layouts(work: Path) -> dict:
    """The 2-device campaign (with jbod: the host's ceiling, where the devices do not add up), then the 4-device."""
    layouts = ("single", "md-raid0", "md-imsm-raid0", "lvm-striped")
    sweep = {**SWEEP, "repetitions": 3, "cpu_latency_us": None}  # TCG: a polling guest CPU starves QEMU's own
    plan = {"mode": "layouts", "data_dir": str(work), "device_size": 2**30,
            "campaigns": [{"name": "vm2", "layouts": ("single", "jbod", *layouts[1:]), "sweep": sweep,
                           "use_devices": 2},
                          {"name": "vm4", "layouts": layouts, "sweep": sweep}]}
    return _boot(plan, work, "vm-layouts", 4, 5400)


def vm_layouts(work: Path) -> list[Case]:
    return [stated_case(work / "vm2", "VM uncapped, 2 devices (calibration)", False),
            stated_case(work / "vm4", "VM uncapped, 4 devices", True)]


def measure_vm_nullblk(work: Path) -> dict:
    out = work / "flashscale-vm-nullblk" / "out"
    answer = _boot({"mode": "nullblk", "out": str(out), **NULLBLK}, work, "vm-nullblk", 1, 3600)
    (work / "nullblk.json").write_text(json.dumps(answer))
    return answer


def vm_nullblk(work: Path) -> list[Case]:
    """md RAID-0 on 4 null_blk devices at each chunk, as the guest stated them before building each (from the single
    device, its tags measured, and md on 2 alone), and md on 2 against its own raw prediction (the calibration)."""
    answer = json.loads((work / "nullblk.json").read_text())
    rows = pd.DataFrame(answer["rows"]).assign(warmup=False)
    said = pd.DataFrame(answer["predictions"])
    parts = []
    for chunk, group in rows[rows["layout"] == "md-raid0"].groupby("chunk_bytes"):
        case = f"VM null_blk, md RAID-0 chunk {int(chunk) // 1024} KiB"
        for count, mine in group.groupby("devices"):
            stated = said[(said["chunk_bytes"] == chunk) & (said["devices"] == count)]
            small = count == group["devices"].min()
            parts.append(Case(f"{case} on {count} (calibration)" if small else case, not small, mine, stated))
    return parts


def cpu_model() -> str:
    return next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                 if line.startswith("model name")), platform.processor())


def machine() -> str:
    model = cpu_model()
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    return (f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.node()}: {model}, {os.cpu_count()} CPUs, "
            f"Linux {platform.release()}, load average {load}")


def facts(cases: list[str], reduced: str) -> dict:
    """The machine's facts kept beside a run's tables: CPU, kernel, fio's version, the commit (and whether the
    checkout had changes), the cases, the load at the start."""
    runner = Runner()
    commit = runner.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"]).stdout.strip()
    changed = runner.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"]).stdout.strip()
    return {"cpu": cpu_model(), "cpus": os.cpu_count(), "kernel": platform.release(),
            "python": platform.python_version(), "fio": runner.run(["fio", "--version"]).stdout.strip(),
            "commit": commit + ("+changes" if changed else ""), "cases": cases, "started": results.now(),
            "load_average": list(os.getloadavg()), "reduced": reduced}


MEASURE = {"loop": measure_loop, "vm-layouts": measure_vm_layouts, "vm-nullblk": measure_vm_nullblk}
CASE = {"seeds": seeds, "loop": loop, "vm-layouts": vm_layouts, "vm-nullblk": vm_nullblk}


def run(cases: list[str], work: Path, store: Path, reduced: str = "") -> Path:
    """Measure ``cases`` (campaigns in ``work``), keep each one's tables in a new run folder under ``store``, and
    write its table there, scored from what was kept; the run's folder."""
    kept = bench_predict_store.new_run(store, facts(cases, reduced))
    for case in cases:
        started = time.monotonic()
        if case in MEASURE:
            if case.startswith("vm"):
                quiet(case)
            MEASURE[case](work)
        for each in CASE[case](work):
            bench_predict_store.keep(kept, each)
        print(f"{case}: {time.monotonic() - started:.0f} s", flush=True)
    (kept / bench_predict_store.TABLE_FILE).write_text(bench_predict_store.rescore([kept]))
    return kept


def main(argv: list[str]) -> int:
    global QUIET_WAIT_S
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, of {', '.join(CASES)}")
    parser.add_argument("--work", type=Path, default=None, help="where the campaigns are kept (default: a new folder)")
    parser.add_argument("--results", type=Path, default=RESULTS, help="where each run's tables are kept")
    parser.add_argument("--rescore", type=Path, default=None, metavar="RESULTS",
                        help="print the table of a kept run, or of every run a folder keeps; measure nothing")
    parser.add_argument("--publish", type=Path, default=None, metavar="PAGE",
                        help="with --rescore: write the table between PAGE's markers (docs/validation.md)")
    parser.add_argument("--small", action="store_true", help="fewer points (the sweep's jobs 1 and 2, 2 runs each)")
    parser.add_argument("--quiet-wait-s", type=float, default=QUIET_WAIT_S,
                        help="how long each campaign waits at most for the machine to be quiet")
    args = parser.parse_args(argv)
    if args.rescore is not None:
        table = bench_predict_store.rescore(bench_predict_store.runs_under(args.rescore))
        if args.publish is not None:
            bench_predict_store.publish(args.publish, table)
        print(table, end="")
        return 0
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = sorted(set(cases) - set(CASES))
    if unknown:
        parser.error(f"unknown case(s) {unknown}; choose from {', '.join(CASES)}")
    reduced = "; ".join(filter(None, [SMALL if args.small else "", f"waited at most {args.quiet_wait_s:.0f} s for "
                                      "a quiet machine" if args.quiet_wait_s != QUIET_WAIT_S else ""]))
    QUIET_WAIT_S = args.quiet_wait_s
    if args.small:
        SWEEP.update(numjobs=(1, 2), repetitions=2)
        NULLBLK.update(depths=[1, 4, 8, 16], repetitions=2)
    work = args.work or Path(tempfile.mkdtemp(prefix="flashscale-bench-predict-", dir="/var/tmp"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"bench-predict: {machine()}; campaigns in {work}", flush=True)
    kept = run(cases, work, args.results, reduced)
    print((kept / bench_predict_store.TABLE_FILE).read_text(), end="")
    print(f"\nkept in {kept}; {machine()} (at the end)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
