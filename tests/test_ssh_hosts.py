"""Eight real sshds at once (``system.ssh.lab_hosts``, on the upper half of the lab's range, 10.215.128.0/17): the
parallel path, each host measured in a directory of ours inside the folder it names (plain directories: no loop
device is spent). About 50 s: make test-ssh runs it. Another upper half when a lab an interrupted run left behind
holds that one."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from flashscale.campaigns import cluster
from flashscale.measure.sweep import Sweep
from flashscale.system import netns
from flashscale.system.devices import System
from flashscale.system.private import SHIP
from flashscale.system.ssh.lab_hosts import SshLab
from flashscale.system.teardown import manifest_dir

pytestmark = [pytest.mark.root, pytest.mark.skipif(os.geteuid() != 0, reason="namespaces and sshd need root"),
              pytest.mark.skipif(not os.environ.get("FLASHSCALE_SSH_LONG"), reason="a long SSH test: make test-ssh"),
              pytest.mark.ssh_long]
HOSTS = 8


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ssh8")
    subnet = netns.first_free(["10.215.128.0/17", "10.217.128.0/17", "10.219.128.0/17"], System())
    with SshLab(HOSTS, subnet=subnet) as made:
        remote = []
        for host in made.hosts:
            (folder / host.name).mkdir()
            remote.append({"name": host.name, "address": host.address, "mount_dir": str(folder / host.name)})
        yield made, remote, folder


def test_eight_hosts_are_reached_checked_and_measured_at_once(lab):
    made, remote, folder = lab
    sweep = Sweep(rw=("write",), numjobs=(1,), repetitions=1, runtime_s=1, ramp_s=0, size=8 * 2**20,
                  precondition=False)
    spec = cluster.ClusterSpec.from_parameters(
        CAMPAIGN="eight", HOSTS=[HOSTS], REMOTE_HOSTS=remote, KNOWN_HOSTS=str(made.known_hosts),
        SSH_IDENTITY=str(made.identity), SSH_CONFIG="none", DATA_DIR=str(folder), RW=["write"], NUMJOBS=[1],
        REPETITIONS=1, RUNTIME_S=1, RAMP_S=0, FILE_SIZE=8 * 2**20, PRECONDITION=False)
    assert spec.sweep == sweep
    result = cluster.run(spec)
    rows = result.table.set_index("host")
    assert (rows["status"] == "ok").all(), rows[["status", "error"]]
    assert set(rows.index) == {h.name for h in made.hosts} | {cluster.ALL}
    assert rows.loc[cluster.ALL, "hosts"] == HOSTS and set(rows["layout"]) == {"mounted"}
    assert (rows["bw_bytes"] > 0).all()
    assert not [p for p in manifest_dir().glob("flashscale-ssh-*.json") if "eight" in p.read_text()]
    assert all(not any((folder / h.name).iterdir()) for h in made.hosts)  # our directories inside went
    assert not list((manifest_dir() / "hosts").glob("*.json")) and not list(Path("/tmp").glob("flashscale-ship-*"))
    assert not list((manifest_dir() / SHIP).glob("flashscale-ship-*"))
    assert not list((manifest_dir() / "hosts").glob("flashscale-fio-*"))  # each fio server's socket folder went
