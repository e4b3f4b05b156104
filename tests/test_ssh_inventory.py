"""Without root or network: Ansible inventories read without Ansible, the hosts test bed, what each host's check
answer refuses, the ssh command lines (every option pinned, host keys always checked), the names a host may have
(one strict rule, property-tested), the spec's rules over SSH, and the zip shipped to hosts: flashscale's own files,
whose host side runs under ``python3 -I -S`` (the standard library only), and only with the driver's SHA-256."""
from __future__ import annotations

import json
import secrets
import shlex
import shutil
import subprocess
import zipfile

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from flashscale.campaigns import cluster, inventory
from flashscale.campaigns.ssh_cluster import Plan, problems
from flashscale.errors import ConfigError, RefusedError, UnsupportedError
from flashscale.system.ssh import host_names
from flashscale.system import private
from flashscale.system.commands import Completed, RecordingRunner
from flashscale.system.ssh.shipped import Contacts, Zip, package, ship_name, undo_remote
from flashscale.system.ssh.client import Link, SshHost, SshOptions, control_path

INI = """
# the site's own inventory
head ansible_host=192.0.2.1

[storage]
node[01:03] ansible_user=admin
node04 ansible_host=192.0.2.14 ansible_port=2222 flashscale_mount_dir=/gpfs/scratch

[storage:vars]
ansible_user=root
flashscale_link_bps=12500000000

[racks:children]
storage
[racks:vars]
ansible_port=22
"""

YAML = """
all:
  vars: {ansible_user: ops}
  hosts:
    head: {ansible_host: 192.0.2.1}
  children:
    storage:
      vars: {ansible_port: 2200}
      hosts:
        s1: {ansible_host: 192.0.2.21}
        s2: {ansible_host: 192.0.2.22, ansible_port: 2201, ansible_user: root}
"""


def test_an_ini_inventory_is_read_as_ansible_reads_it(tmp_path):
    path = tmp_path / "hosts.ini"
    path.write_text(INI)
    hosts = inventory.read(path, "storage")
    assert [h.name for h in hosts] == ["node01", "node02", "node03", "node04"]
    assert hosts[0].address == "node01" and hosts[0].user == "admin"  # a host's own variable beats its group's
    assert hosts[3].address == "192.0.2.14" and hosts[3].port == 2222 and hosts[3].user == "root"
    assert hosts[1].port == 22 and hosts[1].groups == {"all", "racks", "storage"}
    assert hosts[3].remote() == {"name": "node04", "address": "192.0.2.14", "ssh_port": 2222, "user": "root",
                                 "mount_dir": "/gpfs/scratch", "link_bps": 12500000000}
    assert [h.name for h in inventory.read(path)] == ["head", "node01", "node02", "node03", "node04"]
    assert [h.name for h in inventory.read(path, "racks")] == ["node01", "node02", "node03", "node04"]


def test_a_yaml_inventory_is_read_with_its_groups_and_variables(tmp_path):
    path = tmp_path / "hosts.yml"
    path.write_text(YAML)
    s1, s2 = inventory.read(path, "storage")
    assert (s1.address, s1.port, s1.user) == ("192.0.2.21", 2200, "ops")  # a child group's variables beat all's
    assert (s2.address, s2.port, s2.user) == ("192.0.2.22", 2201, "root")
    assert [h.name for h in inventory.read(path)] == ["head", "s1", "s2"]


@pytest.mark.parametrize("text, said", [
    ("[storage]\nn1 ansible_host={{ lookup('env', 'X') }}\n", "needs Ansible to evaluate"),
    ("[storage]\nn[a:c]\n", "is not a name or a numeric range"),
    ("[storage:other]\nn1\n", "section kind 'other'"),
    ("[storage]\nn1 ansible_host\n", "is not a key=value variable"),
])
def test_what_only_ansible_could_read_is_refused_by_name(tmp_path, text, said):
    path = tmp_path / "hosts.ini"
    path.write_text(text)
    with pytest.raises(ConfigError, match=said):
        inventory.read(path, "storage")


def test_a_group_that_is_not_there_is_named_with_those_that_are(tmp_path):
    path = tmp_path / "hosts.ini"
    path.write_text(INI)
    with pytest.raises(ConfigError, match="HOST_GROUP='nvme' is not a group of .*: all, racks, storage, ungrouped"):
        inventory.read(path, "nvme")


def test_a_hosts_test_bed_names_each_hosts_devices_once(tmp_path):
    bed = tmp_path / "bed.yaml"
    bed.write_text('name: two\nhosts:\n  n1: ["nguid:01", "nguid:02"]\n  n2: ["nguid:03"]\n')
    assert inventory.read_testbed(bed) == ("two", {"n1": ("nguid:01", "nguid:02"), "n2": ("nguid:03",)})
    bed.write_text('hosts:\n  n1: ["nguid:01"]\n  n2: ["nguid:01"]\n')
    with pytest.raises(ConfigError, match="nguid:01 named on more than one host"):
        inventory.read_testbed(bed)
    bed.write_text("hosts:\n  n1: [0123]\n")
    with pytest.raises(ConfigError, match="host n1: confirmation item 83 is a int"):
        inventory.read_testbed(bed)


def test_each_host_is_confirmed_its_own_devices_and_any_stray_confirmation():
    plan = Plan(testbed={"n1": ("a", "b"), "n2": ("c",)}, confirm=("a", "b", "c", "z"))
    assert plan.confirm_for("n1") == ("a", "b", "z") and plan.confirm_for("n2") == ("c", "z")


GOOD = {"fio": "fio-3.33", "euid": 0, "missing_programs": [], "missing_ids": {}, "missing_support": {},
        "refusals": {}}


@pytest.mark.parametrize("answer, how, said", [
    ({"fio": "fio-3.1"}, {}, "it runs fio-3.1, the driver fio-3.33: fio's client/server protocol needs the same fio"),
    ({"fio": None}, {}, "fio is not installed"),
    ({"missing_programs": ["mdadm"]}, {}, "it lacks mdadm, which the campaign runs there"),
    ({"euid": 1000}, {}, "logs in as uid 1000, not root, and building a layout needs root"),
    ({"missing_ids": {"nguid:01": "no block device has identity 'nguid:01'"}}, {}, "it has no device nguid:01"),
    ({"missing_support": {"md-raid0": "the kernel has no md"}}, {}, "it cannot build md-raid0: the kernel has no md"),
    ({"refusals": {"jbod": "refused to write to /dev/sdb"}}, {}, "the guard refuses jbod: refused to write"),
    ({}, {"offset_s": 3.5}, "its clock is +3.50 s off this machine's, more than CLOCK_TOLERANCE_S=1"),
    ({}, {"python": (3, 9, 2)}, "its python3 is 3.9.2; flashscale needs 3.10 or newer"),
])
def test_a_host_falling_short_is_refused_with_the_reason(answer, how, said):
    given = {"root": True, "python": (3, 11, 2), "offset_s": 0.0, "uncertainty_s": 0.01, **how}
    assert problems("n1", GOOD, Plan(fio_version="fio-3.33"), **{**given, "offset_s": 0.0, "python": (3, 11)}) == []
    found = problems("n1", {**GOOD, **answer}, Plan(fio_version="fio-3.33"), **given)
    assert len(found) == 1 and said in found[0], found


def test_a_clock_within_the_round_trips_uncertainty_is_not_refused():
    assert problems("n1", GOOD, Plan(fio_version="fio-3.33", clock_tolerance_s=1.0), root=True, python=(3, 11),
                    offset_s=1.2, uncertainty_s=0.3) == []


PINNED = ["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-o", "GlobalKnownHostsFile=/dev/null",
          "-o", "KnownHostsCommand=none", "-o", "VerifyHostKeyDNS=no", "-o", "CheckHostIP=no", "-o", "UpdateHostKeys=no",
          "-o", "CanonicalizeHostname=no", "-o", "ForwardAgent=no", "-o", "ForwardX11=no", "-o", "Tunnel=no",
          "-o", "PermitLocalCommand=no", "-o", "RemoteCommand=none", "-o", "RequestTTY=no",
          "-o", "StreamLocalBindMask=0177", "-o", "LogLevel=ERROR"]


def test_every_ssh_command_is_the_exact_argv_every_option_pinned_and_quoted_once(tmp_path):
    known = tmp_path / "known %h hosts"
    known.write_text("")
    runner = RecordingRunner()
    host = SshHost("n1", "192.0.2.11", 2222, "root")
    link = Link(host, SshOptions(str(known)), runner, tmp_path)
    link.run(["mkdir", "-m", "700", "/tmp/a b"])
    control = control_path(tmp_path, host)
    assert control.parent == tmp_path and control.name.startswith("c-") and len(control.name) == 18
    assert list(runner.history[-1]) == [
        "ssh", "-F", "none", *PINNED, "-o", f'UserKnownHostsFile="{str(known).replace("%", "%%")}"',
        "-o", "HostKeyAlias=[192.0.2.11]:2222", "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5",
        "-o", "ServerAliveCountMax=3", "-o", "ControlMaster=no", "-o", f'ControlPath="{control}"',
        "-p", "2222", "-l", "root", "192.0.2.11", "--", "mkdir -m 700 '/tmp/a b'"]


def test_a_campaigns_ssh_config_is_read_but_changes_no_pinned_option_and_the_users_own_never(tmp_path):
    """``-F`` always: ``none`` (the user's ~/.ssh/config and /etc/ssh/ssh_config never read), or SSH_CONFIG, whose
    values come after the pinned ``-o`` options (ssh keeps the first value it reads). ``ssh -G`` prints what ssh
    would use: the file's StrictHostKeyChecking, KnownHostsCommand and HostKeyAlias lose; its User and Port lose to
    the inventory's; its ProxyJump, which it alone sets, is kept."""
    known, config = tmp_path / "known_hosts", tmp_path / "ssh_config"
    known.write_text("")
    config.write_text("Host *\n  StrictHostKeyChecking no\n  KnownHostsCommand /bin/evil %H\n  HostKeyAlias other\n"
                      "  UserKnownHostsFile /tmp/theirs\n  User mallory\n  Port 2200\n  ProxyJump jump.example.org\n")
    host = SshHost("n1", "192.0.2.11", 22, "root")
    for chosen in (None, str(config)):
        argv = ["ssh", "-G", *SshOptions(str(known), config=chosen).argv(host, None), "-p", "22", "-l", "root",
                host.address]
        said = dict(line.split(" ", 1) for line in subprocess.run(argv, capture_output=True, text=True,
                                                                  check=True).stdout.splitlines() if " " in line)
        assert argv[2:4] == ["-F", chosen or "none"]
        assert said["stricthostkeychecking"] == "true" and said["hostkeyalias"] == "192.0.2.11"
        assert said["userknownhostsfile"] == str(known) and said["globalknownhostsfile"] == "/dev/null"
        assert "knownhostscommand" not in said and said["verifyhostkeydns"] == "false"
        assert said["user"] == "root" and said["port"] == "22" and said["batchmode"] == "yes"
        assert said.get("proxyjump") == ("jump.example.org" if chosen else None)


@given(st.lists(st.from_regex(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?", fullmatch=True), min_size=1,
                max_size=4))
def test_every_dns_name_is_a_host_name(labels):
    name = ".".join(labels)
    if len(name) <= host_names.NAME_MAX:
        assert host_names.host_name(name) == name


@settings(max_examples=300)
@given(st.text(min_size=1, max_size=80))
def test_a_host_name_is_a_dns_name_or_an_address_and_nothing_a_shell_or_ssh_reads(text):
    """Whatever passes is letters, digits, hyphens and dots (or an IP address: colons too), labels of 63 at most;
    whatever else is refused with the value named."""
    try:
        kept = host_names.host_name(text)
    except ConfigError as exc:
        assert repr(text) in str(exc)
        return
    assert set(kept) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:") and kept == text
    assert not kept.startswith("-") and all(len(label) <= 63 for label in kept.split("."))


@pytest.mark.parametrize("name, said", [
    ("n$(touch X)", r"'n\$\(touch X\)' is not a DNS label"), ("n%h", "'n%h' is not a DNS label"),
    ("n" * 64, "its label 'nnnnnnnnnnnnnnnnnnnn'... is 64 characters long, more than 63"),
    ("-oProxyCommand=x", "not a DNS label"), ("fe80::1%eth0", "not a DNS label"), ("a..b", "an empty label"),
])
def test_an_inventory_name_no_dns_name_is_refused_when_read_naming_it_and_the_rule(tmp_path, name, said):
    """Refused by inventory.read, before any connection; the command in the name never runs (X never exists)."""
    path = tmp_path / "hosts.ini"
    path.write_text(f"[storage]\n{shlex.quote(name)} ansible_host=192.0.2.1\n")
    with pytest.raises(ConfigError, match=said) as refused:
        inventory.read(path, "storage")
    assert "a DNS name (letters, digits and hyphens" in str(refused.value) and not (tmp_path / "X").exists()
    path.with_suffix(".yml").write_text(yaml.safe_dump({"all": {"hosts": {name: {"ansible_host": "192.0.2.1"}}}}))
    with pytest.raises(ConfigError, match=said):
        inventory.read(path.with_suffix(".yml"))
    path.write_text(f"[storage]\nn1 ansible_host={shlex.quote(name)} ansible_user=root\n")
    with pytest.raises(ConfigError, match="host n1: address"):
        inventory.read(path, "storage")
    with pytest.raises(ConfigError, match="REMOTE_HOSTS|DNS"):
        cluster.ClusterSpec.from_parameters(CAMPAIGN="c", HOSTS=[1], REMOTE_HOSTS=[{"name": name, "address": "a"}])


def test_a_login_name_is_checked_as_one():
    assert host_names.login("root") == "root"
    for bad in ("-oProxyCommand=x", "a b", "r$(id)", "", "x" * 33):
        with pytest.raises(ConfigError, match="is not a login name"):
            host_names.login(bad)


def test_a_missing_known_hosts_file_is_refused_by_name(tmp_path):
    with pytest.raises(ConfigError, match="KNOWN_HOSTS=.*: no such file"):
        SshOptions(str(tmp_path / "nowhere"))


@pytest.mark.parametrize("given, said", [
    ({"INVENTORY": "x.ini"}, "INVENTORY need hosts reached over SSH: give KNOWN_HOSTS"),
    ({"KNOWN_HOSTS": "K", "REMOTE_HOSTS": [{"name": "n1", "address": "a", "mount_dir": "/m", "port": 9000}]},
     "over SSH each host's fio server listens on a unix socket"),
    ({"KNOWN_HOSTS": "K", "REMOTE_HOSTS": [{"name": "n1", "address": "a"}], "LAYOUTS": ["mounted"]},
     "mounted cannot be built on a host's devices"),
    ({"KNOWN_HOSTS": "K", "REMOTE_HOSTS": [{"name": "n1", "address": "a"}], "LAYOUTS": ["jbod"]},
     "give TESTBED"),
    ({"KNOWN_HOSTS": "K", "REMOTE_HOSTS": [{"name": "n1", "address": "a"}]}, "nothing to measure on the hosts"),
    ({"REMOTE_HOSTS": [{"name": "n1", "address": "a"}]}, "without SSH .* is measured in its mount_dir"),
])
def test_an_ssh_campaign_that_cannot_run_is_refused_when_its_spec_is_made(tmp_path, given, said):
    given = {k: str(tmp_path / v) if k in ("KNOWN_HOSTS", "INVENTORY") else v for k, v in given.items()}
    with pytest.raises(ConfigError, match=said):
        cluster.ClusterSpec.from_parameters(CAMPAIGN="c", HOSTS=[1], **given)


def test_the_shipped_zip_holds_flashscale_alone_and_its_host_side_needs_only_the_standard_library(tmp_path):
    zipped = tmp_path / "flashscale.pyz"
    zipped.write_bytes(package())
    names = zipfile.ZipFile(zipped).namelist()
    assert "__main__.py" in names and "flashscale/arrays/host_side.py" in names
    assert all(n == "__main__.py" or (n.startswith("flashscale/") and n.endswith(".py")) for n in names)
    python = shutil.which("python3", path="/usr/bin:/bin") or "python3"
    done = subprocess.run([python, "-I", "-S", str(zipped), "check", json.dumps({"programs": ["fio"]})],
                          capture_output=True, text=True, timeout=60)
    answer = json.loads(done.stdout.splitlines()[-1])
    assert answer["ok"] and answer["python"] and "missing_programs" in answer, done.stderr
    done = subprocess.run([python, "-I", "-S", str(zipped), "nonsense", "{}"], capture_output=True, text=True)
    assert json.loads(done.stdout)["kind"] == "ConfigError"


def test_the_zip_runs_on_a_host_only_from_a_fresh_folder_of_its_own_and_with_the_drivers_sha256(tmp_path):
    """``private``'s program, as ssh gives it to a host: install refuses a folder that exists; boot runs the zip
    only while its SHA-256 is the driver's, and a zip changed since is refused by name, nothing in it run."""
    python = shutil.which("python3", path="/usr/bin:/bin") or "python3"
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    env = {"PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": str(runtime)}  # where a user's goes; root's is /run/flashscale

    def program(*args: str, stdin=None) -> dict:
        done = subprocess.run([python, "-I", "-S", "-c", private.program(), *args], stdin=stdin, env=env,
                              capture_output=True, text=True, timeout=60)
        return json.loads(done.stdout.splitlines()[-1])

    zipped = Zip.write(tmp_path)
    name = ship_name(secrets.token_hex(4), "n1")
    with open(zipped.path, "rb") as fh:
        folder = program("install", name, zipped.sha256, stdin=fh)["folder"]
    try:
        assert folder.endswith(f"/ship/{name}")
        with open(zipped.path, "rb") as fh:
            again = program("install", name, zipped.sha256, stdin=fh)
        assert again["kind"] == "RefusedError" and f"{folder} exists already" in again["error"]
        assert program("boot", folder, zipped.sha256, "check", json.dumps({"programs": ["fio"]}))["ok"]
        marker = tmp_path / "ran"
        with zipfile.ZipFile(f"{folder}/{private.PACKAGE}", "w") as evil:  # the zip changed in place
            evil.writestr("__main__.py", f"open({str(marker)!r}, 'w').write('ran')\n")
        refused = program("boot", folder, zipped.sha256, "check", "{}")
        assert refused["kind"] == "RefusedError" and f"{folder}/{private.PACKAGE} has SHA-256" in refused["error"]
        assert "nothing was run from it" in refused["error"] and not marker.exists()
        elsewhere = program("boot", str(tmp_path / name), zipped.sha256, "check", "{}")
        assert "is not a folder flashscale ships to" in elsewhere["error"] and not marker.exists()
    finally:
        shutil.rmtree(folder)


def test_a_private_place_is_used_only_while_it_is_the_users_alone(tmp_path):
    mine = private.folder(tmp_path / "mine")
    assert oct(mine.stat().st_mode & 0o777) == "0o700"
    (tmp_path / "open").mkdir(mode=0o755)
    (tmp_path / "open").chmod(0o755)
    with pytest.raises(RefusedError, match="open is owned by uid .*, mode 755, not a folder of uid"):
        private.folder(tmp_path / "open")
    (tmp_path / "link").symlink_to(mine)
    with pytest.raises(RefusedError, match="link is a symlink"):
        private.owned(tmp_path / "link")
    (mine / "m.json").write_text("{}")
    (mine / "m.json").chmod(0o644)
    with pytest.raises(RefusedError, match="mode 644, not a file of uid .* with mode 600"):
        private.owned(mine / "m.json", 0o600)


def test_a_numeric_range_is_bounded(tmp_path):
    """An inventory is someone else's file: ``n[1:100000000]`` is refused before a list of that many is made."""
    path = tmp_path / "hosts.ini"
    path.write_text("[storage]\nn[1:100000000]\n")
    with pytest.raises(ConfigError, match=r"'n\[1:100000000\]' names 100000000 hosts, more than 4096"):
        inventory.read(path, "storage")
    path.write_text("[storage]\nn[1:100][1:100]\n")
    with pytest.raises(ConfigError, match="names 10000 hosts, more than 4096"):
        inventory.read(path, "storage")


class Host(RecordingRunner):
    """A host that answers the shipped program's install and boot as ``private`` does."""

    def run(self, argv, *, ok_codes=(0,), cgroup_procs=(), timeout=None, stdin=None):
        super().run(argv, ok_codes=ok_codes, timeout=timeout, stdin=stdin)
        words = shlex.split(argv[-1])
        if words[5] == "install":
            assert stdin is not None and words[6].startswith("flashscale-ship-")
            said = {"ok": True, "folder": f"/run/flashscale/ship/{words[6]}"}
        else:
            said = {"ok": True, "problems": []}
        return Completed(tuple(argv), 0, json.dumps(said) + "\n")


def test_reap_reaches_a_host_as_the_campaign_says_and_runs_only_a_zip_of_its_own(tmp_path):
    known = tmp_path / "known_hosts"
    known.write_text("")
    runner = Host()
    link = Link(SshHost("n1", "192.0.2.11", 22, "admin"), SshOptions(str(known)), runner, None)
    contacts = Contacts({"n1": link}, Zip.write(tmp_path))
    ship = ship_name("0123abcd", "n1")
    entry = {"name": "n1", "ship": ship, "manifests": ["flashscale-0123abcd-x-jbod.json"],
             "address": "203.0.113.9", "ssh": {"config": "/evil"}}  # what an older or forged entry says: unused
    assert undo_remote(entry, contacts) == []
    install, reaped = [shlex.split(argv[-1]) for argv in runner.history]
    assert all(argv[-4:-2] == ("admin", "192.0.2.11") and "ControlPath=none" in argv for argv in runner.history)
    own = install[6]
    assert install[:6] == ["python3", "-I", "-S", "-c", private.program(), "install"] and own.startswith(f"{ship}-r")
    assert install[7] == contacts.zipped.sha256 and private.SHIP_NAME.fullmatch(own)
    assert reaped[5:9] == ["boot", f"/run/flashscale/ship/{own}", contacts.zipped.sha256, "reap"]
    assert json.loads(reaped[9]) == {"manifests": entry["manifests"], "ships": [ship, own]}
    with pytest.raises(UnsupportedError, match="'n2' is not a host of the campaign given"):
        undo_remote({**entry, "name": "n2"}, contacts)
    with pytest.raises(UnsupportedError, match="is not one flashscale ships to"):
        undo_remote({**entry, "ship": "/tmp/flashscale-ship-0-n1"}, contacts)
