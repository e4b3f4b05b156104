"""The SSD you can reason about, in the VM lab: null_blk devices of a known latency, queue depth and cap, made by
flashscale inside the guest (``vm_guest/guest_nullblk.py``), accepted by the guard and measured with fio, against
the curve ``flashscale.system.nullblk`` predicts: min(cap, min(jobs x iodepth, queue depth) x bs / latency) per
device. One boot: about a minute under TCG (a minute and a half with both of the host's cores busy)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from flashscale.analysis.plateau import knee
from flashscale.system import nullblk
from flashscale.system.vmlab import vm

pytestmark = [pytest.mark.vm, pytest.mark.root]

MiB = 2**20
ROOT = Path(__file__).resolve().parents[1]
GUEST = ROOT / "tests" / "vm_guest" / "guest_nullblk.py"
BS = 4096
LATENCY_NS = 10_000_000  # 10 ms: TCG adds 0.2-0.6 ms to every request, so 1 ms would read 23-39% low (README)
QUEUE_DEPTH = 8
IODEPTHS = (1, 2, 4, 8, 16, 32)
CAP_MBPS = 2  # the capped set's cap: ten 4 KiB requests a tick, 2.048 MB/s; binds at 5 in flight (10 ms each)
# measured / expected: what a request costs the emulated machine only lowers a rate; 61 rows over 7 runs, one with
# both host cores busy, lay within 0.933-1.005 (README), and a slower day's clean runs 0.88-0.98. The bounds leave
# room for a busier machine and are narrow enough that a curve 20% off in latency, with twice the queue depth or
# 1.5 x the cap falls outside them (asserted below on the same measurements): 0.82 x 1.25 is above 1.02, so no
# measured curve lies within both the true band and that of a latency 1.25 x or 0.8 x the true one
LOW, HIGH = 0.82, 1.02
BOOT_TIMEOUT_S = 900  # a minute or two under TCG; a request null_blk never completes must not hang the suite

SPEC = {"size_bytes": 64 * MiB, "latency_ns": LATENCY_NS, "queue_depth": QUEUE_DEPTH}
# Each point twice, a round of all the points apart, and the better run taken: what the emulated machine costs a
# run only lowers its rate. The capped set's 2 x 2 point spread 0.74-0.88 of the curve between two runs of one boot
REPETITIONS = 2
PLAN = {"bs": BS, "runtime_s": 2, "repetitions": REPETITIONS, "sets": [
    {"name": "curve", "spec": {**SPEC, "devices": 1},
     "points": [{"numjobs": 1, "iodepth": d} for d in IODEPTHS] + [{"numjobs": 2, "iodepth": 2}]},
    {"name": "capped", "spec": {**SPEC, "devices": 2, "mbps": CAP_MBPS},
     "points": [{"numjobs": 2, "iodepth": 2}, {"numjobs": 2, "iodepth": 16}]}]}


def agreement(rows: list[dict], spec: dict, **wrong) -> list[dict]:
    """Each measured row beside the curve's value for it; ``wrong`` replaces a parameter the curve is given."""
    params = {"latency_ns": spec["latency_ns"], "queue_depth": spec["queue_depth"], "mbps": spec["mbps"],
              "devices": spec["devices"], **wrong}
    table = []
    for row in rows:
        expected = nullblk.expected_bw(row["bs"], row["numjobs"], row["iodepth"], **params)
        table.append({"numjobs": row["numjobs"], "iodepth": row["iodepth"], "expected_bw": expected,
                      "bw_bytes": row["bw_bytes"], "ratio": row["bw_bytes"] / expected})
    return table


def best_runs(rows: list[dict]) -> list[dict]:
    """Per point (numjobs, iodepth), in the plan's order, its run of the highest rate."""
    best: dict[tuple, dict] = {}
    for row in rows:
        key = (row["numjobs"], row["iodepth"])
        if key not in best or row["bw_bytes"] > best[key]["bw_bytes"]:
            best[key] = row
    return list(best.values())


def outside(table: list[dict]) -> list[dict]:
    return [row for row in table if not LOW <= row["ratio"] <= HIGH]


def shown(tables: dict[str, list[dict]]) -> str:
    lines = ["set     numjobs iodepth  expected MB/s  measured MB/s  ratio"]
    lines += [f"{name:<7} {r['numjobs']:>7} {r['iodepth']:>7} {r['expected_bw'] / 1e6:>14.3f} "
              f"{r['bw_bytes'] / 1e6:>14.3f}  {r['ratio']:.3f}" for name, table in tables.items() for r in table]
    return "\n".join(lines)


def test_null_blk_devices_deliver_the_curve_their_latency_queue_depth_and_cap_predict(tmp_path):
    share = tmp_path / "flashscale-share"
    share.mkdir()
    (share / "plan.json").write_text(json.dumps(PLAN))
    command = ["env", "PYTHONDONTWRITEBYTECODE=1", sys.executable, str(GUEST), str(share / "plan.json"),
               str(share / "out")]
    with vm.Lab(vm.VmSpec(devices=1, device_size=64 * MiB, name="vm-nullblk")) as lab:
        boot = lab.boot(command, share, rwdirs=[tmp_path], cwd=ROOT, timeout_s=BOOT_TIMEOUT_S)
        output = boot.output.read_text()
    assert boot.returncode == 0, output[-4000:]
    result = json.loads((share / "out" / "results.json").read_text())
    assert result["kernel"] == vm.kernel_image().name.removeprefix("vmlinuz-")
    sets = {entry["name"]: entry for entry in result["sets"]}
    planned = {entry["name"]: entry for entry in PLAN["sets"]}
    for entry in sets.values():
        names = [d["name"] for d in entry["devices"]]
        assert len(names) == entry["spec"]["devices"] and entry["guard"] == "accepted", entry["guard"]
        assert [(d["id"], d["path"]) for d in entry["devices"]] == [(f"nullb:{n}", f"/dev/{n}") for n in names]
        assert {(d["completion_nsec"], d["hw_queue_depth"], d["irqmode"]) for d in entry["devices"]} == \
            {(str(LATENCY_NS), str(QUEUE_DEPTH), "2")}
        assert entry["left_behind"] == [], "the teardown left these in the guest"
        assert len(list((share / "out" / "raw" / entry["name"]).glob("*/rep*/fio.json"))) == len(entry["rows"])
        assert len(entry["rows"]) == REPETITIONS * len(planned[entry["name"]]["points"])
        entry["rows"] = best_runs(entry["rows"])
    tables = {name: agreement(entry["rows"], entry["spec"]) for name, entry in sets.items()}
    print(f"\n{shown(tables)}")
    assert [len(t) for t in tables.values()] == [len(s["points"]) for s in PLAN["sets"]]
    assert [row for t in tables.values() for row in outside(t)] == [], \
        f"outside {LOW}-{HIGH} of the curve:\n{shown(tables)}"

    # the same measurements against a wrong curve: the tolerance tells it apart
    rows, spec = sets["curve"]["rows"], sets["curve"]["spec"]
    for wrong in ({"latency_ns": LATENCY_NS * 5 // 4}, {"latency_ns": LATENCY_NS * 4 // 5},
                  {"queue_depth": 2 * QUEUE_DEPTH}):
        assert outside(agreement(rows, spec, **wrong)), f"a curve with {wrong} would have passed"
    assert outside(agreement(sets["capped"]["rows"], sets["capped"]["spec"], mbps=CAP_MBPS * 3 // 2))

    # the knee the analysis finds in the measured curve is where the device's queue fills. Under TCG a full queue
    # refills a little late, each completion costing the emulated machine its share: at exactly its queue depth the
    # device once read 93% of the plateau deeper queues reach (2.83 against 3.04 MB/s, a clean CI run), so the
    # knee is taken at 90% of the plateau; half the queue depth stays near half of it, twice it adds little
    single = [r for r in rows if r["numjobs"] == 1]
    depths, rates = [r["iodepth"] for r in single], [r["bw_bytes"] for r in single]
    assert knee(depths, rates, fraction=0.9) == nullblk.knee_iodepth(BS, 1, LATENCY_NS, QUEUE_DEPTH) == QUEUE_DEPTH
    by_depth = dict(zip(depths, rates))
    assert by_depth[QUEUE_DEPTH // 2] < 0.6 * max(rates) and by_depth[2 * QUEUE_DEPTH] < 1.15 * by_depth[QUEUE_DEPTH]
