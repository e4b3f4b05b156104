"""pgbench on a throwaway PostgreSQL cluster on every layout of the emulated array: its numbers land in the table,
and no server, data directory, socket or manifest is left after success, an error, or Ctrl-C."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import interruptible

from flashscale.campaigns import campaign
from flashscale.measure.workloads.pgbench import Pgbench
from flashscale.system.teardown import manifest_dir


def params(tmp_path: Path, layouts) -> dict:
    return dict(CAMPAIGN="pg", DATA_DIR=str(tmp_path / "data"), BACKING_DIR=str(tmp_path), DEVICES=2,
                DEVICE_SIZE=2**30, LAYOUTS=layouts, RW=["write"], BS=[2**20], NUMJOBS=[1], IODEPTH=[1],
                REPETITIONS=1, RUNTIME_S=1, RAMP_S=0, FILE_SIZE=16 * 2**20, PRECONDITION=False)


def our_servers(tmp_path: Path) -> list[str]:
    """Command lines of PostgreSQL servers whose data directory is under this test's layouts."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (FileNotFoundError, PermissionError, ProcessLookupError, NotADirectoryError):
            continue
        if "postgres -D" in cmdline and "flashscale-pg-" in cmdline:
            found.append(cmdline)
    return found


def clusters_left() -> list[str]:
    return [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()
            if "flashscale-" in line.split()[1] and any(Path(line.split()[1]).glob("flashscale-pg-*"))]


def servers_on(targets: set[str]) -> list[str]:
    """Command lines of PostgreSQL servers whose data directory is on one of ``targets`` (a campaign's layouts)."""
    return [line for line in our_servers(None) if any(f" {target}/" in line for target in targets)]


@pytest.mark.root
@pytest.mark.notebook
@pytest.mark.long
def test_pgbench_on_every_layout_then_nothing_left(applications):
    """09_applications's campaign (conftest.APPLICATIONS: scale 1, 1 and 2 clients of 2 s)."""
    result, _, _ = applications
    rows = result.table[result.table["workload"] == "pgbench"]
    tps = rows[rows["metric"] == "tps"]
    assert sorted(zip(tps["layout"], tps["numjobs"])) == sorted(
        (layout, n) for layout in ("single", "jbod", "btrfs-raid0") for n in (1, 2))
    assert (tps["value"] > 0).all() and (tps["scale"] == 1).all()
    latency = rows[rows["metric"] == "latency_mean"]
    assert (latency["value"] > 0).all() and (latency["unit"] == "ns").all()
    raw = result.directory / tps.iloc[0]["raw_dir"]
    assert (raw / "intervals.csv").is_file() and "pgbench -c" in (raw / "commands.txt").read_text()
    targets = {target for raw_dir in rows["raw_dir"].unique()
               for target in json.loads((result.directory / raw_dir / "env.json").read_text())["targets"]}
    assert len(targets) == 4  # single's, jbod's two and btrfs-raid0's file systems
    assert servers_on(targets) == []


@pytest.mark.root
def test_an_error_inside_pgbench_still_removes_the_cluster(tmp_path):
    class Failing(Pgbench):
        def _run(self, *args, **kwargs):
            raise RuntimeError("pgbench failed")

    with pytest.raises(RuntimeError, match="pgbench failed"):
        campaign.run(campaign.CampaignSpec.from_parameters(**params(tmp_path, ["single"])), progress=False,
                     workloads=[Failing(clients=(1,), duration_s=1)])
    assert our_servers(tmp_path) == [] and clusters_left() == []


SCRIPT = """
import sys
from flashscale.campaigns import campaign
from flashscale.measure.workloads.pgbench import Pgbench
spec = campaign.CampaignSpec.from_parameters(**{params})
campaign.run(spec, progress=False, workloads=[Pgbench(clients=(1,), duration_s=60)])
"""


@pytest.mark.root
@pytest.mark.parametrize("sig", [signal.SIGINT])
def test_ctrl_c_during_pgbench_stops_the_server_and_removes_the_cluster(tmp_path, sig):
    script = SCRIPT.format(params=repr(params(tmp_path, ["single"])))
    proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True, preexec_fn=interruptible)
    deadline = time.monotonic() + 60
    while not our_servers(tmp_path) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert our_servers(tmp_path), "the PostgreSQL server never started"
    time.sleep(3)  # pgbench is running now
    os.kill(proc.pid, sig)
    assert proc.wait(timeout=60) != 0
    assert our_servers(tmp_path) == [] and clusters_left() == []
    manifests = [json.loads(p.read_text()) for p in manifest_dir().glob("*.json")]
    assert not [m for m in manifests if m.get("pid") == proc.pid]
