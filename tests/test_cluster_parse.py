"""fio's client/server output read per host, on golden JSON from a real two-host run (fio 3.33, two network
namespaces, two capped devices each): every host has a row or a reason, never a silent gap."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from flashscale.errors import ConfigError, RefusedError
from flashscale.measure import fio_client, fio_output

GOLDEN = Path(__file__).parent / "golden"
HOSTS = [fio_client.Endpoint("host0", "10.213.1.2"), fio_client.Endpoint("host1", "10.213.2.2")]


@pytest.fixture
def data() -> dict:
    return fio_output.load_output((GOLDEN / "cluster_client_2hosts.json").read_text())


def test_each_host_is_read_from_its_own_client_stats_entry(data):
    found = fio_client.by_host(data, HOSTS)
    rows = {name: fio_output.parse(result) for name, result in found.items()}
    assert set(rows) == {"host0", "host1"}
    for row in rows.values():  # two devices capped at 100 MB/s each per host
        assert row["read_bw_bytes"] == pytest.approx(200e6, rel=0.05)
    aggregate = fio_client.aggregate([{**row, "devices": 2} for row in rows.values()])
    assert aggregate["bw_bytes"] == pytest.approx(400e6, rel=0.05)
    assert aggregate["devices"] == 4
    # with group_reporting and two job sections fio 3.33 adds no "All clients" entry; when it does, it carries one
    # host's address and must not be read as that host
    assert len(data["client_stats"]) == 2
    everyone = {**copy.deepcopy(data["client_stats"][0]), "jobname": "All clients", "hostname": "10.213.1.2"}
    again = fio_client.by_host({**data, "client_stats": [*data["client_stats"], everyone]}, HOSTS)
    assert len(again["host0"]["jobs"]) == 1


def test_a_host_missing_from_the_output_is_a_failure_with_its_reason(data):
    gone = copy.deepcopy(data)
    gone["client_stats"] = [e for e in gone["client_stats"] if e["hostname"] != "10.213.2.2"]
    found = fio_client.by_host(gone, HOSTS, "fio exited with status 1")
    assert isinstance(found["host0"], dict)
    assert found["host1"] == "fio returned no result for this host (fio exited with status 1)"


def test_each_client_gets_its_own_job_file(tmp_path):
    files = {e: tmp_path / f"job-{e.name}.fio" for e in HOSTS}
    argv = fio_client.client_argv(files, tmp_path / "fio.json")
    assert argv[:3] == ["env", "--ignore-signal=PIPE", "fio"]  # a host whose connection closes drops alone
    assert argv[5:] == ["--client=10.213.1.2,8765", str(files[HOSTS[0]]),
                        "--client=10.213.2.2,8765", str(files[HOSTS[1]])]


def test_a_remote_host_is_measured_only_inside_a_mount_point():
    from flashscale.campaigns.cluster import RemoteHost
    host = RemoteHost.from_mapping({"name": "n1", "address": "node1", "mount_dir": "/gpfs/scratch"})
    assert host.mount_dir == "/gpfs/scratch"
    for asked in ({"device": "/dev/nvme0n1"}, {"erase": "discard"}, {"layout": "md-raid0"}):
        with pytest.raises(RefusedError, match="cannot run the guard there"):
            RemoteHost.from_mapping({"name": "n1", "address": "node1", "mount_dir": "/x", **asked})


def test_the_emulated_storage_and_a_real_host_s_local_directory_are_checked_before_anything_runs():
    from flashscale.campaigns.cluster import ClusterSpec, RemoteHost
    assert ClusterSpec.from_parameters(CAMPAIGN="c", STORAGE="nbd").storage == ("nbd",)
    assert ClusterSpec("c", storage=["local", "nbd"]).storage == ("local", "nbd")
    for storage in (["nfs"], [], ["nbd", "nbd"]):
        with pytest.raises(ConfigError, match=r"storage=\["):
            ClusterSpec("c", storage=storage)
    one = RemoteHost.from_mapping({"name": "n1", "address": "node1", "mount_dir": "/beegfs", "local_dir": "/scratch",
                                   "link_bps": 12.5e9})
    two = RemoteHost.from_mapping({"name": "n2", "address": "node2", "mount_dir": "/beegfs"})
    with pytest.raises(ConfigError, match="local_dir for every remote host or for none"):
        ClusterSpec("c", hosts=(2,), remote=(one, two))
    with pytest.raises(ConfigError, match="is for the emulated hosts"):
        ClusterSpec("c", hosts=(1,), remote=(one,), storage=("nbd",))
    from flashscale.measure.sweep import Sweep
    with pytest.raises(ConfigError, match="storage nbd serves whole devices"):
        ClusterSpec("c", storage=("local", "nbd"), sweep=Sweep(rw=("filecreate",), nrfiles=(10,)))
    with pytest.raises(ConfigError, match="link_bps=0"):
        RemoteHost.from_mapping({"name": "n1", "address": "node1", "mount_dir": "/beegfs", "link_bps": 0})
