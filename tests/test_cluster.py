"""The emulated cluster on real fio: 2 hosts (network namespaces) x 2 devices capped at 100 MB/s, each host's fio
server inside its own throttled cgroup. Truth: 200 MB/s per host, 400 MB/s for the cluster."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from flashscale import cluster
from flashscale.analysis import cluster as cluster_analysis
from flashscale.arrays.emulated import ArraySpec
from flashscale.measure.sweep import Sweep
from flashscale.system.devices import System
from flashscale.system.teardown import manifest_dir

pytestmark = pytest.mark.root
CAP = 100_000_000
ARRAY = ArraySpec(devices=2, device_size=2**30, read_bps=CAP, write_bps=CAP)


def _spec(tmp_path: Path, name: str, **how) -> cluster.ClusterSpec:
    """Two hosts; the arrays' backing files under ``tmp_path``, so what is left behind is this test's alone."""
    (tmp_path / "backing").mkdir()
    sweep = Sweep(rw=("write", "read"), numjobs=(2,), repetitions=1, runtime_s=3, ramp_s=1, size=64 * 2**20)
    array = ArraySpec(devices=2, device_size=2**30, read_bps=CAP, write_bps=CAP, backing_root=str(tmp_path / "backing"))
    return cluster.ClusterSpec(name, hosts=(2,), array=array, sweep=sweep, data_dir=str(tmp_path), **how)


def _job_targets(folder: Path) -> set[str]:
    return {line.split("=", 1)[1].strip() for job in folder.glob("**/job-host*.fio")
            for line in job.read_text().splitlines() if line.startswith("directory=")}


def _machine(folder: Path) -> dict:
    """What a run in ``folder`` could leave behind: namespaces, links, fio servers, loop devices, mounts, cgroups,
    manifests (only this test's own: others may run on the machine meanwhile)."""
    system = System()
    losetup = subprocess.run(["losetup", "-l", "-n", "-O", "BACK-FILE"], capture_output=True, text=True).stdout
    servers = subprocess.run(["pgrep", "-f", "fio --server=10.213"], capture_output=True, text=True).stdout
    return {"netns": set(system.netns_names()), "links": set(system.net_links()), "servers": set(servers.split()),
            "loops": {line for line in losetup.splitlines() if str(folder) in line},
            "mounts": {m.mountpoint for m in system.mounts()} & _job_targets(folder),
            "cgroups": {p.name for p in Path("/sys/fs/cgroup/blkio").glob(f"flashscale-{os.getpid()}-*")},
            "manifests": {p.name for p in manifest_dir().glob("*.json") if f'"pid": {os.getpid()}' in p.read_text()}}


@pytest.fixture(scope="module")
def capped_link(tmp_path_factory):
    """One campaign with each host's link capped at 50 MB/s, a quarter of its devices' 200 MB/s."""
    folder = tmp_path_factory.mktemp("cluster")
    before = _machine(folder)
    spec = _spec(folder, "capped", link_bps=50_000_000)
    result = cluster.run(spec)
    assert _job_targets(folder), "no job file names a target: the check of mounts left behind would see nothing"
    return spec, result, before, _machine(folder)


def test_each_host_and_the_cluster_recover_the_truth(capped_link):
    _, result, _, _ = capped_link
    rows = result.table[result.table["phase"] == "measure"]
    assert len(rows) == 6 and (rows["status"] == "ok").all(), rows[["host", "rw", "status", "reason"]]
    hosts = rows[rows["host"] != cluster.ALL]
    assert set(hosts["host"]) == {"host0", "host1"}
    assert hosts["bw_bytes"].tolist() == pytest.approx([2 * CAP] * 4, rel=0.05)
    everyone = rows[rows["host"] == cluster.ALL]
    assert everyone["bw_bytes"].tolist() == pytest.approx([4 * CAP] * 2, rel=0.05)
    assert everyone["truth_bw_bytes"].tolist() == [4 * CAP] * 2 and everyone["devices"].tolist() == [4, 4]
    assert not rows["above_truth"].any()


def test_a_link_cap_below_the_devices_makes_the_network_the_binding_ceiling(capped_link):
    spec, result, _, _ = capped_link
    table = cluster_analysis.ceilings(result.table, spec.array.read_bps, spec.array.write_bps, spec.link_bps)
    assert set(table["binding_limit"]) == {"network"}
    assert table["expected_ceiling_bw_bytes"].tolist() == [2 * 50e6] * 2
    assert all(s.startswith("the network binds: its ceiling is 100 MB/s") for s in table["binds"])
    # and what the emulation cannot hide: fio's client/server protocol carries commands, not the data
    hosts = result.table[(result.table["host"] != cluster.ALL) & (result.table["phase"] == "measure")]
    assert (hosts["link_bytes"] < hosts["io_bytes"] / 100).all()
    assert any("not the data" in note for note in result.notes)


def test_the_campaign_leaves_nothing_behind(capped_link):
    _, _, before, after = capped_link
    assert after == before


def _kill_host1_mid_run(stop: threading.Event, killed: list) -> None:
    """Once host1's server is recorded and the first measured point has started, SIGKILL its process group."""
    while not stop.is_set():
        for manifest in manifest_dir().glob("flashscale-cluster-*-servers.json"):
            entries = json.loads(manifest.read_text())["created"]
            server = next((e for e in entries if e.get("kind") == "process" and e.get("pid") == os.getpid()
                           and "-h1" in " ".join(e["argv"])), None)
            started = list(Path(killed[0]).glob("killed/raw/hosts2/*/rep0"))
            if server and started:
                time.sleep(1.5)
                if System().process_start(server["process"]) == server["start"]:  # still the one we started
                    os.killpg(server["process"], signal.SIGKILL)
                    killed.append(server["process"])
                return
        time.sleep(0.1)


def test_a_host_killed_mid_run_is_recorded_failed_and_the_other_kept(tmp_path):
    before = _machine(tmp_path)
    stop, killed = threading.Event(), [str(tmp_path)]
    killer = threading.Thread(target=_kill_host1_mid_run, args=(stop, killed))
    killer.start()
    try:
        result = cluster.run(_spec(tmp_path, "killed"))
    finally:
        stop.set()
        killer.join()
    assert len(killed) == 2, "host1's server was never killed"
    rows = result.table[result.table["phase"] == "measure"].set_index(["host", "rw"])
    assert rows.loc[("host0", "write"), "status"] == rows.loc[("host0", "read"), "status"] == "ok"
    assert rows.loc[("host0", "read"), "bw_bytes"] == pytest.approx(2 * CAP, rel=0.05)
    for rw in ("write", "read"):
        assert rows.loc[("host1", rw), "status"] == rows.loc[(cluster.ALL, rw), "status"] == "failed"
    assert "no result" in rows.loc[("host1", "write"), "reason"]
    assert "stopped answering" in rows.loc[("host1", "read"), "reason"]
    assert "1 of 2 hosts failed: host1" == rows.loc[(cluster.ALL, "read"), "reason"]
    assert any("host1 stopped answering" in note for note in result.notes)
    assert _machine(tmp_path) == before
