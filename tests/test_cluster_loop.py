"""A cluster campaign runs through every campaign's loop (issue 51): ``campaign.run_at`` and ``measure.recorder``,
its fio run on the hosts by ``measure.fio_client.OnHosts``, ``HOSTS`` one more axis of the sweep. So it has what
every campaign has: PRECISION (each point's runs until the cluster's rate is precise), RESUME after ``kill -9`` (the
runs it finished kept once, the run cut short run again), the folder's lock, BUILDS.

Without root: two real fio servers of this test's on 127.0.0.1 (two ports), each a host serving fio itself
(``REMOTE_HOSTS`` without ``KNOWN_HOSTS``), measured inside a folder of this test's. With root: the emulated
cluster (network namespaces, capped arrays) with PRECISION and with BUILDS=2."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from flashscale.arrays.emulated import ArraySpec
from flashscale.campaigns import cluster
from flashscale.errors import ConfigError
from flashscale.measure import campaign_folder
from flashscale.measure.sweep import Sweep
from flashscale.system.lock import LOCK_FILE

DRIVER = """
import json, sys
from flashscale.campaigns import cluster
cluster.run(cluster.ClusterSpec.from_parameters(**json.loads(sys.argv[1])), progress=False)
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def servers(tmp_path):
    """Two fio servers of this test's on 127.0.0.1, each with a folder to measure in: ``REMOTE_HOSTS``."""
    hosts, started = [], []
    for index in range(2):
        port, folder = _free_port(), tmp_path / f"disk{index}"
        folder.mkdir()
        started.append(subprocess.Popen(["fio", f"--server=127.0.0.1,{port}"], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL))
        hosts.append({"name": f"host{index}", "address": "127.0.0.1", "port": port, "mount_dir": str(folder)})
    time.sleep(0.5)
    try:
        yield hosts
    finally:
        for server in started:  # ours, by pid
            server.kill()
            server.wait()


def _parameters(tmp_path: Path, hosts: list[dict], name: str, **how) -> dict:
    return {"CAMPAIGN": name, "HOSTS": [1, 2], "REMOTE_HOSTS": hosts, "RW": ["write"], "BS": [2**20],
            "NUMJOBS": [1], "IODEPTH": [1], "REPETITIONS": 2, "RUNTIME_S": 1, "RAMP_S": 0, "FILE_SIZE": 8 * 2**20,
            "PRECONDITION": False, "DATA_DIR": str(tmp_path / "data"), **how}


def _runs(table: pd.DataFrame) -> pd.DataFrame:
    """Each measured run's rows by host count, point, rep and host: every one exactly once."""
    measured = table[table["phase"] == "measure"]
    counted = measured.groupby(["hosts", "point", "rep", "host"]).size()
    assert (counted == 1).all(), counted[counted != 1]
    return measured


def test_a_cluster_with_a_precision_runs_each_point_until_the_cluster_s_rate_is_precise(tmp_path, servers):
    spec = cluster.ClusterSpec.from_parameters(**_parameters(tmp_path, servers, "precise", PRECISION=0.02,
                                                             MAX_REPETITIONS=3))
    result = cluster.run(spec, progress=False)
    measured = _runs(result.table)
    assert (measured["status"] == "ok").all(), measured[["host", "error"]]
    everyone = measured[measured["host"] == cluster.ALL]
    for hosts, runs in everyone.groupby("hosts"):
        assert 2 <= len(runs) <= 3, runs[["rep", "reps_reason"]]  # the least two, at most MAX_REPETITIONS
        reasons = runs.sort_values("rep")["reps_reason"].tolist()
        assert reasons[-1] in ("precise", "max") and set(reasons[:-1]) <= {"more"}, reasons
        # each host's row of a run says what the cluster's said: the run stopped or went on as one
        per_host = measured[(measured["hosts"] == hosts) & (measured["host"] != cluster.ALL)]
        assert set(per_host["host"]) == {f"host{i}" for i in range(hosts)}
        assert (per_host.groupby("rep")["reps_reason"].nunique() == 1).all()
        assert set(per_host["reps_reason"]) == set(reasons)
    assert sorted(p.name for p in (result.directory / "raw" / "mounted").iterdir()) == ["hosts1", "hosts2"]
    assert not (result.directory / LOCK_FILE).exists()  # held while it measured, given up after


def test_a_cluster_killed_mid_campaign_resumes_and_measures_nothing_twice(tmp_path, servers):
    """Killed (SIGKILL, ``FLASHSCALE_FAULT``) after the third run's env.json was written and before its rows were:
    the folder is still locked by the dead run; RESUME keeps the two runs in rows.jsonl, takes the third's rows from
    its env.json and measures only the fourth."""
    given = _parameters(tmp_path, servers, "killed")
    env = {**os.environ, "FLASHSCALE_FAULT": "row-env-written@3",
           "PYTHONPATH": os.pathsep.join([str(Path(cluster.__file__).parents[2]), os.environ.get("PYTHONPATH", "")])}
    killed = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(given)], env=env, capture_output=True,
                            text=True, timeout=300)
    assert killed.returncode == -9, killed.stderr[-2000:]
    folder = tmp_path / "data" / "killed"
    assert (folder / LOCK_FILE).exists()  # the dead run held the folder
    before, _ = campaign_folder.read_rows(folder)
    assert len(before) == 2 + 2  # host0's run and the cluster's row, twice (1 host)
    with pytest.raises(ConfigError, match="RESUME=1"):
        cluster.ClusterSpec.from_parameters(**given, RESUME=1)
    result = cluster.run(cluster.ClusterSpec.from_parameters(**given, RESUME=True), progress=False)
    assert result.directory == folder
    measured = _runs(result.table)
    assert len(measured) == 2 * 2 + 2 * 3 and (measured["status"] == "ok").all()
    said = " ".join(result.notes)
    assert "1 run(s) had finished but their row was not written" in said and "hosts2" in said
    assert "Resumed the interrupted campaign" in said and "3 finished run(s) kept" in said
    started = measured.groupby("raw_dir")["started_at"].first().sort_values()  # the one run measured after
    assert started.index[-1] == "raw/mounted/hosts2/write-bs1048576-nj1-qd1/rep1"
    assert started.iloc[-1] > max(r["started_at"] for r in before)
    assert not (folder / LOCK_FILE).exists()
    assert [p.name for p in folder.parent.iterdir()] == ["killed"]  # resumed in its own folder, no fresh one


def test_hosts_serving_fio_refuse_builds_naming_why(tmp_path, servers):
    with pytest.raises(ConfigError, match="BUILDS=2: hosts serving fio themselves build nothing"):
        cluster.ClusterSpec.from_parameters(**_parameters(tmp_path, servers, "builds", BUILDS=2))
    assert not (tmp_path / "data" / "builds").exists()  # refused before anything was made


CAP = 100_000_000


def _emulated(tmp_path: Path, name: str, **sweep) -> cluster.ClusterSpec:
    (tmp_path / "backing").mkdir(exist_ok=True)
    array = ArraySpec(devices=2, device_size=2**30, read_bps=CAP, write_bps=CAP, backing_root=str(tmp_path / "backing"),
                      cap_fit="lower")
    return cluster.ClusterSpec(name, hosts=(1, 2), array=array, data_dir=str(tmp_path), sweep=Sweep(
        rw=("read",), numjobs=(2,), runtime_s=3, ramp_s=1, size=64 * 2**20, **sweep))


@pytest.mark.root
def test_an_emulated_cluster_with_a_precision_is_held_to_its_truth_and_reports(tmp_path):
    result = cluster.run(_emulated(tmp_path, "precise", precision=0.02, max_repetitions=4), progress=False)
    measured = _runs(result.table)
    everyone = measured[measured["host"] == cluster.ALL]
    assert (measured["status"] == "ok").all() and not measured["above_truth"].any()
    for _, runs in everyone.groupby("hosts"):
        assert 2 <= len(runs) <= 4 and runs.sort_values("rep")["reps_reason"].iloc[-1] in ("precise", "max")
    assert everyone["bw_bytes"].tolist() == pytest.approx(everyone["truth_bw_bytes"].tolist(), rel=0.05)
    stated = result.predictions
    assert set(zip(stated["layout"], stated["hosts"])) == {("jbod", 2)}  # after one host alone, before two


@pytest.mark.root
def test_an_emulated_cluster_is_built_twice_with_builds_2_each_build_swept_on_every_host_count(tmp_path):
    result = cluster.run(_emulated(tmp_path, "builds", repetitions=1, builds=2), progress=False)
    measured = _runs(result.table)
    assert (measured["status"] == "ok").all()
    assert sorted(set(zip(measured["build"], measured["hosts"]))) == [(0, 1), (0, 2), (1, 1), (1, 2)]
    assert sorted(p.name for p in (result.directory / "servers").iterdir()) == ["local", "local-build1"]
    everyone = measured[measured["host"] == cluster.ALL]
    assert everyone["bw_bytes"].tolist() == pytest.approx(everyone["truth_bw_bytes"].tolist(), rel=0.05)
