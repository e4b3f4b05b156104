"""Eight real sshds at once (``system.ssh_lab``, on the upper half of the lab's range, 10.215.128.0/17): the
parallel path, each host measured in a directory of ours inside the folder it names (plain directories: no loop
device is spent); and the fio server of a host, which has no authentication, reachable by the driver through its
SSH connection only: not from another host on the same network, nor from this machine at the host's address."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from flashscale.campaigns import cluster
from flashscale.campaigns.remote import Plan, RemoteCluster
from flashscale.measure.sweep import Sweep
from flashscale.system.machine import NETNS_DIR
from flashscale.system.ssh import SshOptions
from flashscale.system.ssh_lab import SshLab
from flashscale.system.teardown import manifest_dir

pytestmark = [pytest.mark.root, pytest.mark.skipif(os.geteuid() != 0, reason="namespaces and sshd need root")]
HOSTS = 8
CONNECT = "import socket,sys; s=socket.socket(); s.settimeout(3); print(s.connect_ex((sys.argv[1], int(sys.argv[2]))))"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ssh8")
    with SshLab(HOSTS, subnet="10.215.128.0/17") as made:
        remote = []
        for host in made.hosts:
            (folder / host.name).mkdir()
            remote.append({"name": host.name, "address": host.address, "mount_dir": str(folder / host.name)})
        yield made, remote, folder


def _connects(netns: str | None, address: str, port: int) -> bool:
    """Whether a TCP connection to ``address:port`` from namespace ``netns`` (None: this one) is accepted."""
    where = ["nsenter", f"--net={NETNS_DIR / netns}", "--"] if netns else []
    said = subprocess.run([*where, sys.executable, "-c", CONNECT, address, str(port)], capture_output=True,
                          text=True, timeout=30)
    return said.stdout.strip() == "0"


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


def test_a_hosts_fio_server_is_reached_through_its_ssh_connection_only(lab, tmp_path):
    made, remote, folder = lab
    hosts = [cluster.RemoteHost.from_mapping(entry) for entry in remote[:2]]
    options = SshOptions(str(made.known_hosts), str(made.identity), "none")
    with RemoteCluster(hosts, options, Plan(fio_version=_fio()), tmp_path) as remote_cluster:
        with remote_cluster.layout("mounted") as (served, dead):
            assert not dead
            local, port = remote_cluster.hosts[0].forwarded if remote_cluster.hosts[0].name == "host0" else \
                remote_cluster.hosts[1].forwarded
            host0, host1 = made.hosts[0], made.hosts[1]
            assert _connects(host0.netns, "127.0.0.1", port)  # it listens: on the host's own loopback
            assert _connects(None, "127.0.0.1", local)  # the driver reaches it through the forward
            assert not _connects(host1.netns, host0.address, port)  # another host on the same network: refused
            assert not _connects(None, host0.address, port)  # this machine, at the host's address: refused
    assert not _connects(None, "127.0.0.1", local)  # the forward went with the layout


def _fio() -> str:
    return subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
