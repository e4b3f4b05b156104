"""A cluster campaign over real OpenSSH servers: each host a network namespace with its own sshd, host key and the
test's user key (``system.ssh_lab``), on the lab's own range 10.215.0.0/16, reached over its veth; each host's
device a loop device made by the project's own code (``EmulatedArray``), named by identity in a hosts test bed and
confirmed. flashscale runs on each host from the zip it ships there, under ``python3 -I -S``.

What a host keeps is checked where the host sees it: the mounts in its sshd's mount namespace (``/proc/<sshd>/``),
its processes (fio servers, samplers: their command lines), its manifests and the folder shipped to it."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from flashscale.arrays.emulated import ArraySpec, EmulatedArray
from flashscale.campaigns import cluster
from flashscale.errors import RefusedError
from flashscale.measure.sweep import Sweep
from flashscale.system.devices import System
from flashscale.system.ssh_lab import SshLab
from flashscale.system.teardown import manifest_dir

pytestmark = [pytest.mark.root, pytest.mark.skipif(os.geteuid() != 0, reason="namespaces, sshd and loops need root")]
SUBNET = "10.215.0.0/16"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """Two hosts with one uncapped loop device each, and the files a user writes: inventory, test bed."""
    folder = tmp_path_factory.mktemp("ssh")
    array = ArraySpec(devices=1, device_size=512 * 2**20, read_bps=0, write_bps=0, backing_root=str(folder))
    with SshLab(2, subnet=SUBNET) as made, EmulatedArray(array) as one, EmulatedArray(array) as two:
        bed = folder / "testbed.yaml"
        ids = {made.hosts[0].name: [d.id for d in one.devices], made.hosts[1].name: [d.id for d in two.devices]}
        bed.write_text(yaml.safe_dump({"name": "lab", "hosts": ids}))
        yield made, bed, ids, folder


def spec(lab, name: str, **how) -> cluster.ClusterSpec:
    made, bed, ids, folder = lab
    sweep = Sweep(rw=("write",), numjobs=(1,), repetitions=1, runtime_s=2, ramp_s=0, size=32 * 2**20,
                  precondition=False)
    given = {"inventory": str(made.inventory), "known_hosts": str(made.known_hosts),
             "ssh_identity": str(made.identity), "ssh_config": "none", "layouts": ("jbod",), "testbed": str(bed),
             "confirm": [i for v in ids.values() for i in v], "wipe": ["xfs"], "data_dir": str(folder), **how}
    return cluster.ClusterSpec(name, hosts=(2,), sweep=sweep, **given)


def left_on(host) -> dict:
    """What a host keeps of flashscale: mounts its sshd sees, processes of ours, manifests, shipped folders."""
    mounts = [line.split()[4] for line in Path(f"/proc/{host.sshd.pid}/mountinfo").read_text().splitlines()
              if "/flashscale-" in line.split()[4] and not line.split()[4].startswith("/run/netns/")]
    ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout.splitlines()
    ours = [line for line in ps if "fio --server=127.0.0.1" in line or "flashscale.pyz" in line]
    hosts = manifest_dir() / "hosts"
    return {"mounts": mounts, "processes": ours,
            "manifests": sorted(p.name for p in hosts.glob("*.json")) if hosts.is_dir() else [],
            "shipped": sorted(p.name for p in Path("/tmp").glob("flashscale-ship-*"))}


def nothing_left(made) -> None:
    for host in made.hosts:
        assert left_on(host) == {"mounts": [], "processes": [], "manifests": [], "shipped": []}, host.name
    drivers = [p.name for p in manifest_dir().glob("flashscale-ssh-*")]
    assert drivers == [], drivers


def test_a_campaign_over_an_inventory_builds_measures_and_tears_down_a_layout_on_each_host(lab):
    made = lab[0]
    result = cluster.run(spec(lab, "inventory"))
    rows = result.table.set_index("host")
    assert (rows["status"] == "ok").all(), rows[["status", "error"]]
    assert set(rows.index) == {"host0", "host1", cluster.ALL} and set(rows["layout"]) == {"jbod"}
    assert (rows.loc[["host0", "host1"], "bw_bytes"] > 0).all()
    raw = result.directory / "raw" / "jbod"
    for host in made.hosts:
        facts = json.loads((raw / f"machine-{host.name}.json").read_text())
        assert facts["fio"] == rows.loc[host.name, "fio_version"] and facts["devices"], facts
        assert facts["built"]["targets"][0].startswith("/tmp/flashscale-jbod-")
        series = list(raw.glob(f"hosts2/*/rep0/monitor-{host.name}.jsonl"))
        assert series and any(json.loads(line)["write_bw_bytes"] > 0 for line in series[0].read_text().splitlines())
    monitored = [json.loads(line) for line in (result.directory / "monitor.jsonl").read_text().splitlines()]
    assert {m["host"] for m in monitored} == {"host0", "host1"}
    nothing_left(made)


def test_the_guard_refuses_on_a_remote_host_as_it_does_locally_before_anything_is_built(lab):
    """host0's device carries a file system the plan may not wipe; host1's is not confirmed: both refused, named,
    and nothing is built on either (host0's xfs is still the one the test made)."""
    made, _, ids, _ = lab
    device = System().find(ids["host0"][0]).path
    subprocess.run(["mkfs.xfs", "-q", "-f", device], check=True)  # the test's own loop device
    uuid = subprocess.run(["blkid", "-p", "-s", "UUID", "-o", "value", device], capture_output=True, text=True).stdout
    with pytest.raises(RefusedError) as refused:
        cluster.run(spec(lab, "refused", confirm=ids["host0"], wipe=False))
    said = str(refused.value)
    assert f"host host0: the guard refuses jbod: refused to write to {device} ({ids['host0'][0]}): it carries a " \
           "xfs signature the plan did not say to wipe" in said
    assert f"host host1: the guard refuses jbod: the confirmation does not match the campaign's devices (not " \
           f"confirmed: {ids['host1'][0]})" in said
    assert subprocess.run(["blkid", "-p", "-s", "UUID", "-o", "value", device], capture_output=True,
                          text=True).stdout == uuid
    nothing_left(made)
