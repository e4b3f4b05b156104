"""Without root or network: Ansible inventories read without Ansible, the hosts test bed, what each host's check
answer refuses, the ssh command lines (host keys always checked), the spec's rules over SSH, and the zip shipped to
hosts: flashscale's own files, whose host side runs under ``python3 -I -S`` (the standard library only)."""
from __future__ import annotations

import json
import shutil
import subprocess
import zipfile

import pytest

from flashscale.campaigns import cluster, inventory
from flashscale.campaigns.remote import Plan, problems
from flashscale.errors import ConfigError
from flashscale.system.commands import RecordingRunner
from flashscale.system.ssh import Link, SshHost, SshOptions, package

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


def test_every_ssh_command_checks_the_host_key_in_batch_mode_and_quotes_once(tmp_path):
    known = tmp_path / "known_hosts"
    known.write_text("")
    runner = RecordingRunner()
    link = Link(SshHost("n1", "192.0.2.11", 2222, "root"), SshOptions(str(known)), runner, tmp_path)
    link.run(["mkdir", "-m", "700", "/tmp/a b"])
    argv = runner.history[-1]
    opts = {argv[i + 1] for i, a in enumerate(argv) if a == "-o"}
    assert {"BatchMode=yes", "StrictHostKeyChecking=yes", f"UserKnownHostsFile={known}",
            "GlobalKnownHostsFile=/dev/null", f"ControlPath={tmp_path / 'n1.sock'}"} <= opts
    assert not any("StrictHostKeyChecking=no" in a or "accept-new" in a for a in argv)
    assert argv[-7:] == ("-p", "2222", "-l", "root", "192.0.2.11", "--", "mkdir -m 700 '/tmp/a b'")


def test_a_missing_known_hosts_file_is_refused_by_name(tmp_path):
    with pytest.raises(ConfigError, match="KNOWN_HOSTS=.*: no such file"):
        SshOptions(str(tmp_path / "nowhere"))


@pytest.mark.parametrize("given, said", [
    ({"INVENTORY": "x.ini"}, "INVENTORY need hosts reached over SSH: give KNOWN_HOSTS"),
    ({"KNOWN_HOSTS": "K", "REMOTE_HOSTS": [{"name": "n1", "address": "a", "mount_dir": "/m", "port": 9000}]},
     "over SSH the fio server's port is chosen on each host"),
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
    assert "__main__.py" in names and "flashscale/arrays/remote.py" in names
    assert all(n == "__main__.py" or (n.startswith("flashscale/") and n.endswith(".py")) for n in names)
    python = shutil.which("python3", path="/usr/bin:/bin") or "python3"
    done = subprocess.run([python, "-I", "-S", str(zipped), "check", json.dumps({"programs": ["fio"]})],
                          capture_output=True, text=True, timeout=60)
    answer = json.loads(done.stdout.splitlines()[-1])
    assert answer["ok"] and answer["python"] and "missing_programs" in answer, done.stderr
    done = subprocess.run([python, "-I", "-S", str(zipped), "nonsense", "{}"], capture_output=True, text=True)
    assert json.loads(done.stdout)["kind"] == "ConfigError"
