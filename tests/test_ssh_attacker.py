"""An SSH campaign read as an attacker would read it: one unprivileged account, on the driver or on a host.

The account is made for these tests (``useradd``, a random name, removed in a ``finally``). The hosts are the SSH
lab's (``system.ssh.lab_hosts``: network namespaces with an sshd each, sharing this machine's files, so a host's root-only
place is this machine's ``/run/flashscale`` too), on a range of their own. What each test shows:

- no fio server is reachable: on a host it listens on a unix socket in a folder of mode 0700 (no TCP port: ``ss``
  shows sshd alone listening in each host's network), and the driver's forward of it is a unix socket in a folder
  of mode 0700 too; the account can connect to neither, from this machine's network or from a host's;
- shipped code cannot be swapped: a folder planted where an older flashscale shipped (``/tmp``) is never used, the
  account cannot write where flashscale ships now, a folder that exists where a campaign would ship is refused and
  nothing in it runs, a zip changed during a campaign is refused by name before anything of it runs, and after a
  driver is killed ``flashscale reap`` runs only a zip it ships itself;
- a manifest the account could have written is refused by reap, and a folder it made first where a user's
  manifests would go is refused;
- a host whose fio or sshd cannot serve and forward a unix socket is refused at the preflight, with the reason;
- an inventory naming a host ``n$(touch X)``, ``n%h`` or 64 characters long is refused when it is read (the long
  one by its length), and X never exists.
"""
from __future__ import annotations

import json
import os
import pwd
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from flashscale.campaigns import cluster
from flashscale.campaigns.ssh_cluster import Plan, RemoteCluster
from flashscale.errors import ConfigError, RefusedError
from flashscale.system import netns
from flashscale.system.ssh import shipped
from flashscale.system.devices import System
from flashscale.system.ssh.forwarded import END_S
from flashscale.system.machine import NETNS_DIR
from flashscale.system.private import PACKAGE, SHIP
from flashscale.system.ssh.client import SshOptions
from flashscale.system.ssh.lab_hosts import SshLab
from flashscale.system.teardown import manifest_dir

from test_ssh_cluster import left_on, listeners, nothing_left

pytestmark = [pytest.mark.root, pytest.mark.skipif(os.geteuid() != 0, reason="users, namespaces and sshd need root")]
_skip_short = pytest.mark.skipif(not os.environ.get("FLASHSCALE_SSH_LONG"), reason="a long SSH test: make test-ssh")


def long(test):
    """A long SSH test: marked ssh_long (make test-ssh-long) and skipped unless FLASHSCALE_SSH_LONG is set."""
    return pytest.mark.ssh_long(_skip_short(test))
SUBNETS = ["10.221.0.0/17", "10.223.0.0/17", "10.225.0.0/17"]  # not the other SSH tests' nor the demo's
CONNECT = ("import socket, sys\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect(sys.argv[1])\n    print('connected')"
           "\nexcept OSError as exc:\n    print(type(exc).__name__)")
FIO = shutil.which("fio") or "/usr/bin/fio"
ENV = {"PATH": "/usr/bin:/bin"}  # the account's own: no XDG_RUNTIME_DIR, no TMPDIR
NO_SOCKET_FIO = f"""#!/bin/sh
case "$1" in --server=sock:*) echo "fio: this fio cannot listen on a unix socket" >&2; exit 1;; esac
exec {FIO} "$@"
"""


@pytest.fixture(scope="module")
def attacker():
    """An unprivileged account of the test's own, removed afterwards whatever happens."""
    name = f"fsatk{secrets.token_hex(4)}"
    subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True)
    print(f"made user {name} for the attacker tests")
    try:
        yield pwd.getpwnam(name)
    finally:
        subprocess.run(["userdel", name], check=True)
        assert subprocess.run(["id", name], capture_output=True).returncode != 0


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """Four hosts: host0 and host1 measured in a directory of the test's; host2's PATH finds a fio that cannot
    listen on a unix socket; host3's sshd forwards no unix socket."""
    folder = tmp_path_factory.mktemp("attacker")
    odd = folder / "no-socket-bin"
    odd.mkdir()
    (odd / "fio").write_text(NO_SOCKET_FIO)
    (odd / "fio").chmod(0o755)
    with SshLab(4, subnet=netns.first_free(SUBNETS, System()), path={2: str(odd)},
                sshd={3: "AllowStreamLocalForwarding no\n"}) as made:
        yield made, folder


def as_attacker(user, code: str, *args: str, netns_name: str | None = None) -> str:
    """What ``code`` (Python, the standard library only) prints run as ``user``, in a host's network or this one."""
    if netns_name:
        argv = ["nsenter", f"--net={NETNS_DIR / netns_name}", f"--setuid={user.pw_uid}", f"--setgid={user.pw_gid}",
                "--", "/usr/bin/python3", "-I", "-S", "-c", code, *args]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd="/", env=ENV)
    else:
        done = subprocess.run(["/usr/bin/python3", "-I", "-S", "-c", code, *args], user=user.pw_uid,
                              group=user.pw_gid, extra_groups=[], capture_output=True, text=True, timeout=60, cwd="/",
                              env=ENV)
    return done.stdout.strip() or done.stderr.strip()


def evil_zip(path: Path, marker: Path) -> None:
    """A zip that, if anything ever ran it, would leave ``marker``."""
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("__main__.py", f"open({str(marker)!r}, 'w').write('ran')\n")


def remote(lab, tmp_path, *indices: int) -> RemoteCluster:
    made, folder = lab
    hosts = [cluster.RemoteHost(made.hosts[i].name, made.hosts[i].address, mount_dir=str(folder)) for i in indices]
    fio = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    return RemoteCluster(hosts, SshOptions(str(made.known_hosts), str(made.identity)), Plan(fio_version=fio), tmp_path)


def test_no_other_user_reaches_a_fio_server_on_a_host_or_on_the_driver(lab, attacker, tmp_path):
    made = lab[0]
    with remote(lab, tmp_path, 0, 1) as cluster_, cluster_.layout("mounted") as (served, dead):
        assert not dead
        for host, share in zip(made.hosts[:2], served):
            there = next(h.server.remote for h in cluster_.hosts if h.name == share.name)
            for where in (None, host.netns):  # from this machine's network and from the host's
                for sock in (there, share.socket):
                    assert as_attacker(attacker, CONNECT, sock, netns_name=where) == "PermissionError", (sock, where)
            assert as_attacker(attacker, CONNECT, there) != "connected"
            assert all('"sshd"' in line for line in listeners(host.netns)), listeners(host.netns)
        ours = {str(h.link.master.pid) for h in cluster_.hosts} | {str(h.server.session.pid) for h in cluster_.hosts}
        assert not [line for line in listeners(None) if any(f"pid={pid}," in line for pid in ours)]
        listed = as_attacker(attacker, "import os; print(os.listdir('/run/flashscale'))")
        assert listed.endswith("PermissionError: [Errno 13] Permission denied: '/run/flashscale'"), listed
    nothing_left(made)


def test_a_ship_folder_planted_before_the_campaign_is_refused_and_nothing_in_it_runs(lab, attacker, tmp_path):
    made = lab[0]
    marker = Path("/tmp") / f"flashscale-test-ran-{secrets.token_hex(4)}"
    old = as_attacker(attacker, "import os, sys, tempfile; d = tempfile.mkdtemp(prefix='flashscale-ship-'); "
                                "os.chmod(d, 0o777); print(d)")  # where an older flashscale shipped to
    evil_zip(Path(old) / PACKAGE, marker)
    made_here = as_attacker(attacker, "import os; os.makedirs('/run/flashscale/ship/flashscale-ship-x')")
    assert "PermissionError" in made_here
    token = secrets.token_hex(4)
    planted = manifest_dir() / SHIP / shipped.ship_name(token, made.hosts[0].name)
    planted.mkdir(mode=0o700, parents=True)
    evil_zip(planted / PACKAGE, marker)
    try:
        campaign = remote(lab, tmp_path, 0, 1)
        campaign.token = token
        with pytest.raises(RefusedError, match=re.escape(f"{planted} exists already: it is not the fresh folder "
                                                         "flashscale makes; nothing was shipped into it or run from it")):
            campaign.__enter__()
        assert sorted(p.name for p in planted.iterdir()) == [PACKAGE]  # left as it was found
        with remote(lab, tmp_path / "again", 0, 1) as fine, fine.layout("mounted") as (served, dead):
            assert not dead and len(served) == 2
    finally:
        shutil.rmtree(planted)
        shutil.rmtree(old)
    assert not marker.exists()
    nothing_left(made)


def test_a_zip_changed_during_a_campaign_is_refused_by_name_and_nothing_of_it_runs(lab, tmp_path):
    made = lab[0]
    marker = Path("/tmp") / f"flashscale-test-ran-{secrets.token_hex(4)}"
    with remote(lab, tmp_path, 0, 1) as cluster_:
        host0 = next(h for h in cluster_.hosts if h.name == made.hosts[0].name)
        evil_zip(Path(host0.agent.folder) / PACKAGE, marker)
        with pytest.raises(RefusedError) as refused:
            with cluster_.layout("mounted"):
                pass
        assert f"{host0.agent.folder}/{PACKAGE} has SHA-256" in str(refused.value)
        assert "it was changed since; nothing was run from it" in str(refused.value)
    assert not marker.exists()
    nothing_left(made)


DRIVER = """
import subprocess, sys, time
from pathlib import Path
from flashscale.campaigns import cluster
from flashscale.campaigns.ssh_cluster import Plan, RemoteCluster
from flashscale.system.ssh.client import SshOptions
known, identity, folder, *hosts = sys.argv[1:]
fio = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
specs = [cluster.RemoteHost(n, a, mount_dir=folder) for n, a in zip(hosts[::2], hosts[1::2])]
with RemoteCluster(specs, SshOptions(known, identity), Plan(fio_version=fio), Path(folder)) as remote:
    with remote.layout("mounted"):
        print("measuring", flush=True)
        time.sleep(600)
"""


@long
def test_a_zip_planted_between_a_killed_campaign_and_reap_is_never_run(lab, attacker, tmp_path):
    """The driver killed with -9 mid-layout: each host's fio server stops with its ssh session; each shipped zip is
    then replaced, and the account plants a folder where an older flashscale shipped; reap, given the campaign's
    hosts, ships a zip of its own, undoes everything and runs nothing planted."""
    made, folder = lab
    marker = Path("/tmp") / f"flashscale-test-ran-{secrets.token_hex(4)}"
    before = {p.name for p in manifest_dir().glob("flashscale-ssh-*.json")}
    hosts = [a for h in made.hosts[:2] for a in (h.name, h.address)]
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(made.known_hosts), str(made.identity), str(folder),
                               *hosts], stdout=subprocess.PIPE, text=True)
    try:
        assert driver.stdout.readline().strip() == "measuring"
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait()
        driver.stdout.close()
    killed = time.monotonic()
    while time.monotonic() - killed < 3 * END_S and any("--server=" in p for p in left_on(made.hosts[0])["processes"]):
        time.sleep(0.2)
    assert not any("--server=" in p for p in left_on(made.hosts[0])["processes"])
    shipped_to = sorted((manifest_dir() / SHIP).glob("flashscale-ship-*"))
    assert len(shipped_to) == 2
    for where in shipped_to:
        evil_zip(where / PACKAGE, marker)
    old = as_attacker(attacker, "import os, tempfile; d = tempfile.mkdtemp(prefix='flashscale-ship-'); print(d)")
    evil_zip(Path(old) / PACKAGE, marker)
    ours = [str(p) for p in manifest_dir().glob("flashscale-ssh-*.json") if p.name not in before]
    given = {"REMOTE_HOSTS": json.dumps([{"name": h.name, "address": h.address} for h in made.hosts[:2]]),
             "KNOWN_HOSTS": str(made.known_hosts), "SSH_IDENTITY": str(made.identity)}
    try:
        reaped = subprocess.run([sys.executable, "-m", "flashscale.cli", "reap", *ours,
                                 *[a for k, v in given.items() for a in ("-p", f"{k}={v}")]],
                                capture_output=True, text=True, timeout=300)
        assert reaped.returncode == 0, reaped.stdout + reaped.stderr
    finally:
        shutil.rmtree(old)
    assert not marker.exists()
    nothing_left(made)


def test_a_manifest_another_user_could_write_is_refused_by_reap(attacker, tmp_path):
    """reap by root of a folder the account made, of a manifest file the account owns in a folder of root's, and
    a user whose manifests' folder the account (here: root, another user to them) made first: each refused, named,
    and nothing a manifest names is touched."""
    marker = tmp_path / "X"
    victim = tmp_path / "flashscale-victim"
    victim.mkdir()
    entries = [{"kind": "dir", "path": str(victim)},
               {"kind": "remote", "name": "n1", "ship": "flashscale-ship-00000000-000000000000", "manifests": [],
                "ssh": {"known_hosts": "/dev/null", "config": str(tmp_path / "cfg")}}]
    (tmp_path / "cfg").write_text(f"ProxyCommand touch {marker}\n")
    theirs = Path(as_attacker(attacker, "import tempfile; print(tempfile.mkdtemp(prefix='planted-'))"))
    try:
        as_attacker(attacker, f"open({str(theirs / 'm.json')!r}, 'w').write({json.dumps(json.dumps({'created': entries}))})")
        said = subprocess.run([sys.executable, "-m", "flashscale.cli", "reap", "--manifest-dir", str(theirs)],
                              capture_output=True, text=True, timeout=60)
        assert said.returncode != 0 and f"{theirs} is owned by uid {attacker.pw_uid}" in said.stderr + said.stdout
        mine = tmp_path / "manifests"
        mine.mkdir(mode=0o700)
        shutil.copy(theirs / "m.json", mine / "m.json")
        os.chown(mine / "m.json", attacker.pw_uid, attacker.pw_gid)
        (mine / "m.json").chmod(0o600)
        said = subprocess.run([sys.executable, "-m", "flashscale.cli", "reap", str(mine / "m.json")],
                              capture_output=True, text=True, timeout=60)
        assert said.returncode != 0 and f"m.json is owned by uid {attacker.pw_uid}, mode 600" in said.stderr
        first = Path("/tmp") / f"flashscale-{attacker.pw_uid}"  # where the account's own would go, made by another
        first.mkdir()
        first.chmod(0o777)
        try:
            refused = as_attacker(attacker, "import sys; exec(sys.argv[1])", _program_install_call())
            assert f"{first} is owned by uid 0, mode 777, not a folder of uid {attacker.pw_uid}" in refused
        finally:
            first.rmdir()
    finally:
        shutil.rmtree(theirs)
    assert victim.exists() and not marker.exists()


def _program_install_call() -> str:
    """``private``'s program asked where the user's runtime folder is (its install, refused before any write)."""
    from flashscale.system import private
    return private.program().replace("sys.exit(main(sys.argv[1:]))", "print(runtime_dir())")


def test_a_host_whose_fio_or_sshd_cannot_serve_a_unix_socket_is_refused_at_the_preflight(lab, tmp_path):
    made = lab[0]
    with pytest.raises(RefusedError) as refused:
        with remote(lab, tmp_path, 2, 3):
            pass
    said = str(refused.value)
    assert "the campaign refuses before anything runs" in said
    host2, host3 = said.split(" | ") if said.index("host host2") < said.index("host host3") else \
        reversed(said.split(" | "))
    assert "its fio server cannot be reached through a unix socket forwarded by ssh" in host2
    assert "this fio cannot listen on a unix socket" in host2
    assert "its fio server cannot be reached through a unix socket forwarded by ssh" in host3
    assert all(not listeners(h.netns) or all('"sshd"' in line for line in listeners(h.netns)) for h in made.hosts)
    nothing_left(made)


@pytest.mark.parametrize("name, said", [
    ("n$(touch X)", "is not a DNS label"), ("n%h", "'n%h' is not a DNS label"),
    ("n" * 64, "is 64 characters long, more than 63"),
])
def test_an_inventory_name_that_is_not_a_dns_name_is_refused_before_any_connection(lab, tmp_path, monkeypatch, name,
                                                                                  said):
    made = lab[0]
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(json.dumps({"all": {"hosts": {name: {"ansible_host": made.hosts[0].address},
                                                       "ok": {"ansible_host": made.hosts[1].address}}}}))
    sshd_log = [(h.folder / "sshd.log").read_text() for h in made.hosts]
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=said) as refused:
        cluster.ClusterSpec("names", hosts=(1,), inventory=str(inventory), known_hosts=str(made.known_hosts),
                            ssh_identity=str(made.identity), data_dir=str(tmp_path))
    assert "Unreachable" not in str(refused.value) and "a DNS name (letters, digits" in str(refused.value)
    assert [(h.folder / "sshd.log").read_text() for h in made.hosts] == sshd_log  # nothing connected
    assert not (tmp_path / "X").exists() and not Path("X").exists()
