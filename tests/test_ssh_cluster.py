"""A cluster campaign over real OpenSSH servers: each host a network namespace with its own sshd, host key and the
test's user key (``system.ssh.lab_hosts``), on the lab's own range 10.215.0.0/16, reached over its veth; each host's
device a loop device made by the project's own code (``EmulatedArray``), named by identity in a hosts test bed and
confirmed. flashscale runs on each host from the zip it ships there, under ``python3 -I -S``.

What a host keeps is checked where the host sees it: the mounts in its sshd's mount namespace (``/proc/<sshd>/``),
its processes (fio servers, samplers: their command lines), the TCP ports listening in its network (none but sshd's:
fio's servers listen on unix sockets), its manifests, its fio servers' socket folders and the folders shipped to
it."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

import pandas as pd
import psutil
import pytest
import yaml

from flashscale.arrays.emulated import ArraySpec, EmulatedArray
from flashscale.campaigns import cluster
from flashscale.campaigns.ssh_cluster import Plan, RemoteCluster
from flashscale.errors import RefusedError
from flashscale.measure import campaign_folder
from flashscale.measure.sweep import Sweep
from flashscale.system.devices import System
from flashscale.system.lock import LOCK_FILE
from flashscale.system import netns
from flashscale.system.ssh.forwarded import END_S
from flashscale.system.machine import NETNS_DIR
from flashscale.system.private import SHIP
from flashscale.system.ssh.client import SshOptions
from flashscale.system.ssh.lab_hosts import SshLab
from flashscale.system.teardown import manifest_dir

pytestmark = [pytest.mark.root, pytest.mark.skipif(os.geteuid() != 0, reason="namespaces, sshd and loops need root")]
# The faults that take a campaign of their own driver each (about 25 s apiece): make test-ssh runs them
_skip_short = pytest.mark.skipif(not os.environ.get("FLASHSCALE_SSH_LONG"), reason="a long SSH fault test: make test-ssh")


def long(test):
    """A long SSH test: marked ssh_long (make test-ssh-long) and skipped unless FLASHSCALE_SSH_LONG is set."""
    return pytest.mark.ssh_long(_skip_short(test))
# The SSH lab's range (system.ssh.lab_hosts), its lower half (the 8-host test has the upper); another when a lab an
# interrupted run left behind holds it
SUBNETS = ["10.215.0.0/17", "10.217.0.0/17", "10.219.0.0/17"]

DEVICES: list = []  # the lab's loop devices, once made


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """Three hosts: host0 and host1 with one uncapped loop device each; host2 with no device and a PATH that finds
    another fio first (a script of the test's). The files a user writes: an inventory, a hosts test bed."""
    folder = tmp_path_factory.mktemp("ssh")
    odd = folder / "odd-bin"
    odd.mkdir()
    (odd / "fio").write_text("#!/bin/sh\necho fio-3.1\n")
    (odd / "fio").chmod(0o755)
    array = ArraySpec(devices=1, device_size=512 * 2**20, read_bps=0, write_bps=0, backing_root=str(folder))
    subnet = netns.first_free(SUBNETS, System())
    with SshLab(3, subnet=subnet, path={2: str(odd)}) as made, EmulatedArray(array) as one, \
            EmulatedArray(array) as two:
        DEVICES[:] = [*one.devices, *two.devices]
        bed = folder / "testbed.yaml"
        ids = {made.hosts[0].name: [d.id for d in one.devices], made.hosts[1].name: [d.id for d in two.devices]}
        bed.write_text(yaml.safe_dump({"name": "lab", "hosts": ids}))
        inventory = folder / "inventory.ini"
        inventory.write_text("[storage]\n" + "".join(f"{h.name} ansible_host={h.address}\n" for h in made.hosts[:2])
                             + f"[odd]\n{made.hosts[2].name} ansible_host={made.hosts[2].address} "
                             f"flashscale_mount_dir={folder}\n[storage:vars]\nansible_user=root\n")
        try:
            yield made, bed, ids, folder
        finally:  # detached with the lab: their numbers are anyone's after it (another test's, another run's)
            DEVICES.clear()


def spec(lab, name: str, **how) -> cluster.ClusterSpec:
    made, bed, ids, folder = lab
    given = {"hosts": (2,), "sweep": Sweep(rw=("write",), numjobs=(1,), repetitions=1, runtime_s=2, ramp_s=0,
                                           size=32 * 2**20, precondition=False),
             "inventory": str(folder / "inventory.ini"), "host_group": "storage", "known_hosts": str(made.known_hosts),
             "ssh_identity": str(made.identity), "ssh_config": "none", "layouts": ("jbod",), "testbed": str(bed),
             "confirm": [i for v in ids.values() for i in v], "wipe": ["xfs"], "data_dir": str(folder), **how}
    return cluster.ClusterSpec(name, **given)


def left_on(host) -> dict:
    """What a host keeps of flashscale: mounts (its sshd runs in this machine's mounts), processes of ours, manifests,
    shipped folders."""
    devices = {os.path.realpath(d.path) for d in DEVICES}  # the hosts' loop devices: mounts of anything else are
    mounts = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()
              if line.split(" - ")[1].split()[1] in devices]  # other tests' (the hosts share this machine's mounts)
    ps = subprocess.run(["ps", "-ww", "-eo", "pid,args"], capture_output=True, text=True).stdout.splitlines()
    hosts, ship = manifest_dir() / "hosts", manifest_dir() / SHIP
    ours = [line for line in ps if f"--server=sock:{hosts}/" in line or f"{ship}/flashscale-ship-" in line]
    return {"mounts": mounts, "processes": ours, "listening": listening(host),
            "manifests": sorted(p.name for p in hosts.glob("*.json") if OURS.match(p.name)) if hosts.is_dir() else [],
            "sockets": sorted(p.name for p in hosts.glob("flashscale-fio-*")) if hosts.is_dir() else [],
            "shipped": sorted(p.name for p in ship.glob("flashscale-ship-*")) if ship.is_dir() else []}


def listening(host) -> list[int]:
    """The TCP ports listening in the host's network namespace, its sshd's (22) aside: a fio server left there."""
    said = subprocess.run(["nsenter", f"--net={NETNS_DIR / host.netns}", "--", "cat", "/proc/net/tcp",
                           "/proc/net/tcp6"], capture_output=True, text=True).stdout.splitlines()
    ports = {int(f[1].rsplit(":", 1)[1], 16) for f in map(str.split, said) if len(f) > 3 and f[3] == "0A"}
    return sorted(ports - {22})


# A host's manifests as this flashscale names them (an older one's, another engineer's run on this machine at the
# same time, name the host instead of the 12 hex digits of its hash)
OURS = re.compile(r"flashscale-[0-9a-f]{8}-[0-9a-f]{12}-")


def foreign_tokens() -> set[str]:
    """The tokens of SSH campaigns an older flashscale runs on this machine at the same time (another engineer's):
    their ``remote`` entries say how to reach the host (an address); this one's never do."""
    tokens = set()
    for path in manifest_dir().glob("flashscale-ssh-*-*.json"):
        try:
            created = json.loads(path.read_text()).get("created", [])
        except (OSError, ValueError):
            continue
        if any("address" in e for e in created if e.get("kind") == "remote"):
            tokens.add(path.name.split("-")[2])
    return tokens


def nothing_left(made) -> None:
    for host in made.hosts:
        assert left_on(host) == {"mounts": [], "processes": [], "listening": [], "manifests": [], "sockets": [],
                                 "shipped": []}, host.name
    foreign = foreign_tokens()
    drivers = [p.name for p in manifest_dir().glob("flashscale-ssh-*")
               if p.name.split("-")[2].removesuffix(".json") not in foreign]
    assert drivers == [], drivers


def test_a_campaign_over_an_inventory_builds_measures_and_tears_down_a_layout_on_each_host(lab):
    made = lab[0]
    result = cluster.run(spec(lab, "inventory"))
    rows = result.table.set_index("host")
    assert (rows["status"] == "ok").all(), rows[["status", "error"]]
    assert set(rows.index) == {"host0", "host1", cluster.ALL} and set(rows["layout"]) == {"jbod"}
    assert (rows.loc[["host0", "host1"], "bw_bytes"] > 0).all()
    raw = result.directory / "raw" / "jbod"
    for host in made.hosts[:2]:
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


def test_a_host_whose_key_is_not_the_known_one_is_refused_before_anything_runs(lab, tmp_path):
    made, _, ids, _ = lab
    other = tmp_path / "other"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    lines = made.known_hosts.read_text().splitlines()
    lines[1] = f"{made.hosts[1].address} {' '.join(other.with_suffix('.pub').read_text().split()[:2])}"
    known = tmp_path / "known_hosts"
    known.write_text("\n".join(lines) + "\n")
    with pytest.raises(RefusedError) as refused:
        cluster.run(spec(lab, "host-key", known_hosts=str(known)))
    assert f"host host1 ({made.hosts[1].address}): its host key is not the one {known} holds" in str(refused.value)
    assert "host host0" not in str(refused.value)
    nothing_left(made)


def test_a_host_whose_fio_is_another_version_is_refused_before_anything_runs(lab):
    made = lab[0]
    with pytest.raises(RefusedError) as refused:
        cluster.run(spec(lab, "other-fio", host_group="odd", hosts=(1,), layouts=(), testbed=None, confirm=None))
    driver = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    assert f"host host2: it runs fio-3.1, the driver {driver}" in str(refused.value)
    nothing_left(made)


def _kill_tree(pid: int) -> None:
    """SIGKILL ``pid`` (an sshd this test started, or the fio server its campaign did) and every process under it, as a
    host that dies takes them. Each is stopped (SIGSTOP) first and the tree read again until no process in it is
    new: a stopped process forks no more, so none forked while the tree is read escapes. (Read once and killed, a
    fio server's child for the next run's connection, forked between the two, lived on as an orphan and served that
    run.)"""
    stopped: set[int] = set()
    while new := _under(pid) - stopped:
        for member in new:
            _signal(member, signal.SIGSTOP)
        _until_stopped(new)
        stopped |= new
    for member in stopped:
        _signal(member, signal.SIGKILL)


def _under(pid: int) -> set[int]:
    """``pid`` and every process under it, now."""
    try:
        return {pid, *(child.pid for child in psutil.Process(pid).children(recursive=True))}
    except psutil.NoSuchProcess:
        return set()


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _until_stopped(pids: set[int], within_s: float = 10.0) -> None:
    """Wait until each of ``pids`` is stopped, a zombie or gone: until then it may still fork."""
    deadline = time.monotonic() + within_s
    for pid in pids:
        while time.monotonic() < deadline:
            try:
                if psutil.Process(pid).status() in (psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP,
                                                    psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD):
                    break
            except psutil.NoSuchProcess:
                break
            time.sleep(0.01)
        else:
            raise AssertionError(f"process {pid} did not stop within {within_s:g} s")


def _first_row(folder: Path, stop: threading.Event) -> bool:
    while not stop.is_set():
        if any(folder.glob("*/rows.jsonl")) and any(p.read_text().strip() for p in folder.glob("*/rows.jsonl")):
            return True
        time.sleep(0.1)
    return False


# The driver takes Ctrl-C as a user's foreground command does, whatever it inherited: a shell starts a command of
# `cmd &` with SIGINT ignored, and Python then installs no handler of its own (a CI run so started saw the driver
# sail through its SIGINT and end 0).
DRIVER = """
import json, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
from flashscale.campaigns import cluster
from flashscale.campaigns.ssh_cluster import Plan, RemoteCluster
spec = cluster.ClusterSpec.from_parameters(**json.loads(sys.argv[1]))
cluster.run(spec)
"""


def reap_argv(lab, *manifests) -> list[str]:
    """``flashscale reap`` of ``manifests`` given the campaign's hosts and SSH parameters: how it reaches them."""
    made, _, _, lab_folder = lab
    given = {"INVENTORY": str(lab_folder / "inventory.ini"), "HOST_GROUP": "storage",
             "KNOWN_HOSTS": str(made.known_hosts), "SSH_IDENTITY": str(made.identity), "SSH_CONFIG": "none"}
    return [sys.executable, "-m", "flashscale.cli", "reap", *[a for k, v in given.items() for a in ("-p", f"{k}={v}")],
            *map(str, manifests)]


def parameters(lab, folder: Path, name: str, **how) -> dict:
    """The campaign's parameters, as a notebook or ``flashscale run`` gives them, for a driver of its own."""
    made, bed, ids, lab_folder = lab
    return {"CAMPAIGN": name, "HOSTS": [2], "RW": ["write"], "NUMJOBS": [1], "REPETITIONS": 1, "RUNTIME_S": 2,
            "RAMP_S": 0, "FILE_SIZE": 32 * 2**20, "PRECONDITION": False,
            "INVENTORY": str(lab_folder / "inventory.ini"), "HOST_GROUP": "storage",
            "KNOWN_HOSTS": str(made.known_hosts), "SSH_IDENTITY": str(made.identity), "SSH_CONFIG": "none",
            "LAYOUTS": ["jbod"], "TESTBED": str(bed), "CONFIRM": [i for v in ids.values() for i in v],
            "WIPE": ["xfs"], "DATA_DIR": str(folder), **how}


@long
def test_a_host_whose_sshd_dies_mid_campaign_fails_its_rows_keeps_the_others_and_is_reaped_later(lab, tmp_path,
                                                                                               revive):
    """host1's sshd (and every process under it) killed after the first point: its later rows fail with the reason,
    host0's are kept; the driver ends, naming what host1 keeps; once host1 answers again, reap undoes it there."""
    made = lab[0]
    dying = made.hosts[1]
    before = {p.name for p in manifest_dir().glob("flashscale-ssh-*.json")}

    def kill() -> int:
        _kill_tree(dying.sshd.pid)
        dying.sshd.popen.wait(timeout=10)
        return dying.sshd.pid

    rows = _host1_dies(lab, tmp_path, "sshd-dies", kill)
    assert "1 of 2 hosts failed: host1" == rows.loc[(cluster.ALL, 2), "error"]
    notes = " ".join(json.loads((tmp_path / "sshd-dies" / "notes.json").read_text()))
    assert "Host host1: what the campaign made there could not all be undone" in notes and "flashscale reap" in notes
    left = left_on(dying)
    assert left["processes"] and left["mounts"] and left["manifests"], left  # its fio server, its layout, recorded
    manifests = [m for m in manifest_dir().glob("flashscale-ssh-*.json") if m.name not in before]
    assert len(manifests) == 1 and "host1" in manifests[0].name
    made.start(dying)  # the host comes back
    reaped = subprocess.run(reap_argv(lab, manifests[0]), capture_output=True, text=True, timeout=300)
    assert reaped.returncode == 0 and "reaped" in reaped.stdout, reaped.stdout + reaped.stderr
    nothing_left(made)


def _host1_dies(lab, folder: Path, name: str, kill: Callable[[], int | None]) -> pd.DataFrame:
    """A campaign of 1 and 2 jobs on host0 and host1 whose ``kill`` (what it killed, or None) runs once the first
    point's rows are written; its rows by host and jobs, host0's both ok, host1's and the cluster's second failed."""
    stop, killed = threading.Event(), []

    def after_first_row() -> None:
        if _first_row(folder, stop):
            killed.append(kill())

    killer = threading.Thread(target=after_first_row)
    killer.start()
    try:
        driver = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(parameters(lab, folder, name,
                                                                                     NUMJOBS=[1, 2]))],
                                capture_output=True, text=True, timeout=300)
    finally:
        stop.set()
        killer.join()
    assert killed and killed[0] is not None and driver.returncode == 0, driver.stderr[-2000:]
    rows = pd.read_parquet(folder / name / "results.parquet").set_index(["host", "jobs_per_host"])
    assert rows.loc[("host0", 1), "status"] == rows.loc[("host0", 2), "status"] == "ok"
    assert rows.loc[("host1", 2), "status"] == "failed" and rows.loc[(cluster.ALL, 2), "status"] == "failed"
    return rows


def _fio_server_of(host) -> int | None:
    """The pid of the fio server flashscale started on ``host``: the one in its network namespace whose parent is
    not a fio server (a server forks a process of the same name for each run it serves)."""
    ps = subprocess.run(["ps", "-ww", "-eo", "pid,ppid,args"], capture_output=True, text=True).stdout.splitlines()
    servers = {int(line.split()[0]): int(line.split()[1]) for line in ps
               if f"fio --server=sock:{manifest_dir() / 'hosts'}/" in line}
    for pid, parent in sorted(servers.items()):
        try:
            if parent not in servers and \
                    os.stat(f"/proc/{pid}/ns/net").st_ino == os.stat(NETNS_DIR / host.netns).st_ino:
                return pid
        except OSError:
            continue
    return None


@long
def test_a_host_whose_fio_server_dies_mid_campaign_fails_its_rows_and_keeps_the_others(lab, tmp_path, revive):
    """host1's fio server (the process flashscale started in host1's namespace, and the one it forked for the run in
    flight) killed after the first point, its sshd alive: host1's later rows fail with the reason, host0's are kept,
    and the teardown at the end leaves nothing on either host."""
    made = lab[0]

    def kill() -> int | None:
        pid = _fio_server_of(made.hosts[1])
        if pid is not None:
            _kill_tree(pid)  # the server and the process it forked for the run in flight
        return pid

    rows = _host1_dies(lab, tmp_path, "fio-dies", kill)
    assert rows.loc[("host1", 2), "error"], rows.loc[("host1", 2)]
    nothing_left(made)


@pytest.fixture
def revive(lab):
    """Whatever the test does to host1's sshd, it runs again afterwards, and what an SSH campaign of this test left
    is reaped (a test that fails midway still leaves nothing)."""
    made = lab[0]
    before = {p.name for p in manifest_dir().glob("flashscale-ssh-*.json")}
    yield
    if not made.hosts[1].sshd.running():
        made.start(made.hosts[1])
    left = [str(p) for p in manifest_dir().glob("flashscale-ssh-*.json") if p.name not in before]
    if left:
        reaped = subprocess.run(reap_argv(lab, *left), capture_output=True, text=True, timeout=300)
        assert reaped.returncode == 0, reaped.stdout + reaped.stderr


def _driver_at_first_row(lab, folder: Path, name: str, stderr) -> subprocess.Popen:
    """A driver of a campaign of 1, 2 and 4 jobs, running, once its first point's rows are written; killed if it
    ended before."""
    driver = subprocess.Popen([sys.executable, "-c", DRIVER,
                               json.dumps(parameters(lab, folder, name, NUMJOBS=[1, 2, 4]))],
                              stdout=subprocess.DEVNULL, stderr=stderr, text=True)
    try:
        assert _first_row(folder, threading.Event()) and driver.poll() is None
    except BaseException:
        driver.kill()
        driver.wait()
        raise
    return driver


@long
def test_kill_9_of_the_driver_then_reap_leaves_nothing_on_any_host(lab, tmp_path, revive):
    made = lab[0]
    before = {p.name for p in manifest_dir().glob("*.json")}
    driver = _driver_at_first_row(lab, tmp_path, "killed", stderr=subprocess.DEVNULL)
    driver.kill()
    driver.wait()
    killed = time.monotonic()
    for host in made.hosts[:2]:  # its fio server ends with the driver's ssh session; its sampler runs on
        while time.monotonic() - killed < 3 * END_S and \
                (any("--server=" in p for p in left_on(host)["processes"]) or left_on(host)["sockets"]):
            time.sleep(0.2)
        left = left_on(host)
        assert not any("--server=" in p for p in left["processes"]) and left["sockets"] == [], left
        assert left["processes"] and left["manifests"], host.name
    stopped_s = time.monotonic() - killed
    ours = [str(p) for p in manifest_dir().glob("flashscale-ssh-*.json") if p.name not in before]
    assert len(ours) == 3, ours  # each host's, and the sockets' folder
    reaped = subprocess.run(reap_argv(lab, *ours), capture_output=True, text=True, timeout=300)
    assert reaped.returncode == 0, reaped.stdout + reaped.stderr
    deadline = time.monotonic() + 30  # the fio client of the run in progress ends by itself, its job's time
    while time.monotonic() < deadline and \
            str(tmp_path) in subprocess.run(["ps", "-ww", "-eo", "args"], capture_output=True, text=True).stdout:
        time.sleep(0.5)
    assert str(tmp_path) not in subprocess.run(["ps", "-ww", "-eo", "args"], capture_output=True, text=True).stdout
    nothing_left(made)
    print(f"the fio servers stopped {stopped_s:.1f} s after the driver was killed")


@long
def test_kill_9_of_the_driver_then_resume_measures_the_rest_once_and_leaves_nothing_on_any_host(lab, tmp_path, revive):
    """The driver killed (SIGKILL) once its first point's rows are written; the same campaign with RESUME=True finds
    the dead run's lock, undoes what it left here and on every host (reached as the campaign reaches them), keeps
    the rows it wrote and measures only the rest: every run once, nothing left anywhere after."""
    made = lab[0]
    driver = _driver_at_first_row(lab, tmp_path, "resumed", stderr=subprocess.DEVNULL)
    driver.kill()
    driver.wait()
    folder = tmp_path / "resumed"
    kept, _ = campaign_folder.read_rows(folder)
    assert kept and (folder / LOCK_FILE).exists()
    given = parameters(lab, tmp_path, "resumed", NUMJOBS=[1, 2, 4], RESUME=True)
    result = cluster.run(cluster.ClusterSpec.from_parameters(**given))
    assert result.directory == folder
    rows = result.table[result.table["phase"] == "measure"]
    assert (rows.groupby(["hosts", "point", "rep", "host"]).size() == 1).all()  # nothing measured twice
    assert (rows["status"] == "ok").all(), rows[["host", "jobs_per_host", "error"]]
    assert sorted(set(rows["jobs_per_host"])) == [1, 2, 4] and set(rows["host"]) == {"host0", "host1", cluster.ALL}
    started = dict(zip(zip(rows["raw_dir"], rows["host"]), rows["started_at"]))
    assert all(started[(r["raw_dir"], r["host"])] == r["started_at"] for r in kept)  # the dead run's rows, as written
    said = " ".join(result.notes)
    assert "undid what the interrupted run" in said and "Resumed the interrupted campaign" in said
    # the dead run's lock was taken over; this process keeps it while the lab's own manifests (its pid's) live
    held = json.loads((folder / LOCK_FILE).read_text()) if (folder / LOCK_FILE).exists() else {"pid": os.getpid()}
    assert held["pid"] == os.getpid()
    nothing_left(made)


@long
def test_ctrl_c_of_the_driver_undoes_everything_on_every_host_before_it_stops(lab, tmp_path, revive):
    made = lab[0]
    before = {p.name for p in manifest_dir().glob("flashscale-ssh-*.json")}
    driver = _driver_at_first_row(lab, tmp_path, "interrupted", stderr=subprocess.PIPE)
    try:
        driver.send_signal(signal.SIGINT)
        _, said = driver.communicate(timeout=120)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
    rows = "".join(p.read_text()[-3000:] for p in tmp_path.glob("*/rows.jsonl"))  # if it ended first: why
    assert driver.returncode != 0 and "KeyboardInterrupt" in said, (driver.returncode, said[-2000:], rows)
    assert not [p for p in manifest_dir().glob("flashscale-ssh-*.json") if p.name not in before]
    nothing_left(made)

def listeners(netns: str | None) -> list[str]:
    """``ss -ltnpH`` in namespace ``netns`` (None: this one): each TCP socket listening, with its process."""
    where = ["nsenter", f"--net={NETNS_DIR / netns}", "--"] if netns else []
    return subprocess.run([*where, "ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout.splitlines()


def test_a_hosts_fio_server_listens_on_a_root_only_unix_socket_forwarded_to_one_of_ours(lab, tmp_path):
    """fio's server has no authentication: on each host it listens on a unix socket in a folder of mode 0700 (no TCP
    port: ``ss`` shows sshd alone listening in the host's network), and the driver reaches it through a unix socket
    its ssh forwards, in a folder of mode 0700 of ours; both go with the layout."""
    made, _, _, folder = lab
    hosts = [cluster.RemoteHost(h.name, h.address, mount_dir=str(folder)) for h in made.hosts[:2]]
    options = SshOptions(str(made.known_hosts), str(made.identity), "none")
    fio = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    with RemoteCluster(hosts, options, Plan(fio_version=fio), tmp_path) as remote:
        with remote.layout("mounted") as (served, dead):
            assert not dead and len(served) == 2
            for host, share in zip(made.hosts[:2], served):
                assert all('"sshd"' in line for line in listeners(host.netns)), listeners(host.netns)
                there = Path(next(h.server.remote for h in remote.hosts if h.name == share.name))
                assert there.is_socket() and oct(there.parent.stat().st_mode & 0o777) == "0o700"
                here = Path(share.socket)
                assert here.is_socket() and oct(here.parent.stat().st_mode & 0o777) == "0o700"
                assert here.parent.stat().st_uid == there.parent.stat().st_uid == 0
            masters = {str(h.link.master.pid) for h in remote.hosts}
            assert not [line for line in listeners(None) if any(f"pid={pid}," in line for pid in masters)]
    assert not Path(served[0].socket).exists() and not there.exists()
    nothing_left(made)
