"""Exact command plans for md (native and IMSM), LVM and the file systems, executed on a fake machine.

This kernel has no md and no device-mapper: on it these layouts stop before touching anything, which is shown here
with a fake machine and on real loop devices in test_layouts_loop.py.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from flashscale.arrays import layouts
from flashscale.errors import CommandError, ConfigError, RefusedError, UnsupportedError
from flashscale.arrays.layouts import Options
from flashscale.system.commands import Completed
from flashscale.system.devices import Device
from flashscale.system.teardown import Teardown

from test_devices import FakeMachine

TOKEN = "cafe0001"


@pytest.fixture
def machine(tmp_path, monkeypatch) -> FakeMachine:
    monkeypatch.setattr(layouts.secrets, "token_hex", lambda n: TOKEN)
    m = FakeMachine(tmp_path / "machine", md=True, dm=True)
    for index in range(4):
        m.disk(f"nvme{index}n1", eui=f"0025385b71b0000{index}", nsid="1")
    return m


def four(machine):
    return [machine.identify(f"/dev/nvme{i}n1") for i in range(4)]


def argv(steps):
    return [s.argv for s in steps]


DEVS = tuple(f"/dev/nvme{i}n1" for i in range(4))
ROOT = Path("/mnt/fs")


def test_md_raid0_native_metadata_plan(machine):
    steps = layouts.plan("md-raid0", four(machine), root=ROOT, token=TOKEN)
    assert argv(steps) == [
        ("mdadm", "--create", "/dev/md/flashscale-cafe0001", "--run", "--metadata=1.2", "--level=0", "--chunk=128K",
         "--raid-devices=4", *DEVS),
        ("mkfs.xfs", "-q", "-K", "-d", "su=128k,sw=4", "/dev/md/flashscale-cafe0001"),
        ("mkdir", "/mnt/fs/md-raid0"),
        ("mount", "-t", "xfs", "-o", "noatime,nodiratime", "/dev/md/flashscale-cafe0001", "/mnt/fs/md-raid0"),
    ]
    assert steps[0].writes == DEVS and steps[0].creates == "md"
    assert steps[0].details["members"][3] == {"path": "/dev/nvme3n1", "id": "eui:0025385b71b00003"}


def test_md_imsm_container_then_volume_plan(machine):
    steps = layouts.plan("md-imsm-raid0", four(machine), root=ROOT, token=TOKEN,
                         options=Options(chunk_bytes=2**20, mount_options="noatime,nodiratime,nobarrier"))
    assert argv(steps) == [
        ("mdadm", "--create", "/dev/md/fscafe0001-imsm", "--run", "--metadata=imsm", "--raid-devices=4", *DEVS),
        ("mdadm", "--create", "/dev/md/fscafe0001", "--run", "--level=0", "--chunk=1024K",
         "--raid-devices=4", "/dev/md/fscafe0001-imsm"),
        ("mkfs.xfs", "-q", "-K", "-d", "su=1024k,sw=4", "/dev/md/fscafe0001"),
        ("mkdir", "/mnt/fs/md-imsm-raid0"),
        ("mount", "-t", "xfs", "-o", "noatime,nodiratime,nobarrier", "/dev/md/fscafe0001", "/mnt/fs/md-imsm-raid0"),
    ]
    assert [(s.creates, s.details["path"]) for s in steps[:2]] == [("md", "/dev/md/fscafe0001-imsm"),
                                                                   ("md", "/dev/md/fscafe0001")]


def test_the_imsm_names_build_draws_fit_mdadm_for_any_token(tmp_path):
    """mdadm refuses an IMSM volume name over 16 characters (it refused ``flashscale-<token>``, 19, in the VM lab):
    the token is drawn fresh here, not fixed, and both names stay flashscale's (``fs<token>``) within 16."""
    machine = FakeMachine(tmp_path / "machine", md=True)
    devices = [machine.identify(machine.disk(f"nvme{i}n1", eui=f"0025385b71b0000{i}")) for i in range(2)]
    teardown = Teardown(tmp_path / "manifest.json", machine.runner, machine)
    layouts.build("md-imsm-raid0", devices, machine.runner, teardown, confirm=[d.id for d in devices],
                  system=machine)
    container, volume = [argv[2] for argv in machine.runner.history if argv[:2] == ("mdadm", "--create")]
    assert re.fullmatch(r"/dev/md/fs[0-9a-f]{8}-imsm", container) and container == f"{volume}-imsm"
    assert len(Path(volume).name) == 10 and len(Path(container).name) == 15  # both within 16
    teardown.close()


def test_an_imsm_name_mdadm_would_refuse_is_refused_before_any_command_runs(machine, tmp_path, monkeypatch):
    monkeypatch.setattr(layouts.secrets, "token_hex", lambda n: "cafe0001cafe0001")
    teardown = Teardown(tmp_path / "manifest.json", machine.runner, machine)
    devices = four(machine)
    with pytest.raises(ConfigError, match=r"IMSM volume name 'fscafe0001cafe0001' is 18 characters; mdadm takes "
                                          r"at most 16"):
        layouts.build("md-imsm-raid0", devices, machine.runner, teardown, confirm=[d.id for d in devices],
                      system=machine)
    assert machine.runner.history == [] and [e.kind for e in teardown.entries] == ["dir"]  # its own temporary dir
    teardown.close()
    with pytest.raises(ConfigError, match=r"IMSM container name 'fs0{26}-imsm' is 33 characters; .* at most 32"):
        layouts.plan("md-imsm-raid0", devices, root=ROOT, token="0" * 26)  # the container's limit: mdadm's 32
    with pytest.raises(ConfigError, match=r"md array name 'flashscale-0{22}' is 33 characters; .* at most 32"):
        layouts.plan("md-raid0", devices, root=ROOT, token="0" * 22)


def test_build_md_imsm_tears_down_the_volume_then_its_container(machine, tmp_path):
    teardown = Teardown(tmp_path / "manifest.json", machine.runner, machine)
    devices = four(machine)
    layout = layouts.build("md-imsm-raid0", devices, machine.runner, teardown, confirm=[d.id for d in devices],
                           system=machine)
    assert [(e.kind, e.details.get("path")) for e in teardown.entries][1:3] == [
        ("md", "/dev/md/fscafe0001-imsm"), ("md", "/dev/md/fscafe0001")]
    built = len(machine.runner.history)
    teardown.close()
    assert machine.runner.history[built:] == [("umount", layout.targets[0]),
                                              ("mdadm", "--stop", "/dev/md/fscafe0001"),
                                              ("mdadm", "--stop", "/dev/md/fscafe0001-imsm"),
                                              *[("mdadm", "--zero-superblock", d) for d in DEVS]]
    assert machine.mdstat() == "Personalities : [raid0]\n" and not (tmp_path / "manifest.json").exists()


def test_a_volume_that_fails_to_be_made_leaves_its_container_recorded_and_stopped(machine, tmp_path):
    """The VM lab's failure: mdadm made the container, refused the volume, and the container stayed (inactive)."""
    machine.runner.replies[("mdadm", "--create", "/dev/md/fscafe0001")] = Completed(
        ("mdadm",), 1, "", "mdadm: imsm volume name must be 16 characters or less\n")
    teardown = Teardown(tmp_path / "manifest.json", machine.runner, machine)
    devices = four(machine)
    with pytest.raises(CommandError, match="imsm volume name"):
        layouts.build("md-imsm-raid0", devices, machine.runner, teardown, confirm=[d.id for d in devices],
                      system=machine)
    assert [(e.kind, e.details.get("path")) for e in teardown.entries] == [
        ("dir", teardown.entries[0].details["path"]), ("md", "/dev/md/fscafe0001-imsm"), ("md", "/dev/md/fscafe0001")]
    refused = machine.runner.history.pop()  # the fake kernel takes every create in its history as made: not this one
    assert refused[:3] == ("mdadm", "--create", "/dev/md/fscafe0001")  # (in the VM, mdadm 4.2 left no node for it)
    failed = len(machine.runner.history)
    teardown.close()
    assert machine.runner.history[failed:] == [("mdadm", "--stop", "/dev/md/fscafe0001-imsm"),
                                               *[("mdadm", "--zero-superblock", d) for d in DEVS]]
    assert machine.mdstat() == "Personalities : [raid0]\n" and not (tmp_path / "manifest.json").exists()


def test_lvm_striped_plan_with_ext4_stride_and_stripe_width(machine):
    steps = layouts.plan("lvm-striped", four(machine), root=ROOT, token=TOKEN, options=Options(fs="ext4"))
    assert argv(steps) == [
        ("pvcreate", *DEVS),
        ("vgcreate", "flashscale-cafe0001", *DEVS),
        ("lvcreate", "--yes", "--type", "striped", "--stripes=4", "--stripesize=128k", "--extents=100%FREE",
         "--name=data", "flashscale-cafe0001"),
        ("mkfs.ext4", "-q", "-b", "4096", "-E",
         "nodiscard,lazy_itable_init=0,lazy_journal_init=0,stride=32,stripe_width=128",
         "/dev/flashscale-cafe0001/data"),
        ("mkdir", "/mnt/fs/lvm-striped"),
        ("mount", "-t", "ext4", "-o", "noatime,nodiratime", "/dev/flashscale-cafe0001/data", "/mnt/fs/lvm-striped"),
    ]


def test_single_jbod_and_btrfs_plans(machine):
    devices = four(machine)
    assert argv(layouts.plan("single", devices, root=ROOT, options=Options(stripe_single=True)))[0] == \
        ("mkfs.xfs", "-q", "-K", "-d", "su=128k,sw=1", "/dev/nvme0n1")
    jbod = argv(layouts.plan("jbod", devices, root=ROOT, options=Options(fs="ext4")))
    assert len(jbod) == 12 and jbod[5] == ("mount", "-t", "ext4", "-o", "noatime,nodiratime", "/dev/nvme1n1",
                                           "/mnt/fs/jbod1")
    single = argv(layouts.plan("single", devices, root=ROOT, options=Options(fs="btrfs", stripe_single=True)))
    assert single[0] == ("mkfs.btrfs", "-q", "-K", "/dev/nvme0n1")  # btrfs has no su/sw to give
    assert single[2] == ("mount", "-t", "btrfs", "-o", "noatime,nodiratime", "/dev/nvme0n1", "/mnt/fs/single0")
    with pytest.raises(ConfigError, match="fs='zfs' is not one of xfs, ext4, btrfs"):
        Options(fs="zfs")
    btrfs = argv(layouts.plan("btrfs-raid10", devices, root=ROOT))
    assert btrfs[0] == ("mkfs.btrfs", "-q", "-K", "-d", "raid10", "-m", "raid10", *DEVS)
    assert btrfs[2] == ("mount", "-t", "btrfs", "-o", "noatime,nodiratime,device=/dev/nvme0n1,device=/dev/nvme1n1,"
                        "device=/dev/nvme2n1,device=/dev/nvme3n1", "/dev/nvme0n1", "/mnt/fs/btrfs-raid10")


def test_btrfs_is_mounted_with_every_member_and_torn_down_without_btrfs_control(machine, tmp_path):
    """Without udev nothing runs ``btrfs device scan``: the mount names every member itself (``device=``). Without
    /dev/btrfs-control (none in the VM lab's guest) nothing can be forgotten: the teardown only unmounts."""
    teardown = Teardown(tmp_path / "manifest.json", machine.runner, machine)
    devices = four(machine)[:2]
    layout = layouts.build("btrfs-raid0", devices, machine.runner, teardown, confirm=[d.id for d in devices],
                           system=machine)
    mount = machine.runner.history[-1]
    assert mount == ("mount", "-t", "btrfs", "-o", "noatime,nodiratime,device=/dev/nvme0n1,device=/dev/nvme1n1",
                     "/dev/nvme0n1", layout.targets[0])
    assert not (machine.dev / "btrfs-control").exists()
    built = len(machine.runner.history)
    teardown.close()
    assert machine.runner.history[built:] == [("umount", layout.targets[0])]
    assert not (tmp_path / "manifest.json").exists()


def test_a_btrfs_member_whose_path_has_a_comma_is_refused_by_name():
    with pytest.raises(ConfigError, match=r"btrfs member '/dev/disk/by-id/a,b' has a comma"):
        layouts.plan("btrfs-raid0", [Device("/dev/disk/by-id/a,b", "x"), Device("/dev/sdc", "y")], root=ROOT)


def test_build_md_raid0_runs_exactly_erase_plus_plan_and_tears_down_exactly(machine, tmp_path):
    teardown = Teardown(tmp_path / "manifest.json", machine.runner, machine)
    devices = four(machine)
    layout = layouts.build("md-raid0", devices, machine.runner, teardown, confirm=[d.id for d in devices],
                           system=machine)
    mountpoint = layout.targets[0]
    assert machine.runner.history == [
        *[("blkdiscard", d) for d in DEVS],
        ("mdadm", "--create", "/dev/md/flashscale-cafe0001", "--run", "--metadata=1.2", "--level=0", "--chunk=128K",
         "--raid-devices=4", *DEVS),
        ("mkfs.xfs", "-q", "-K", "-d", "su=128k,sw=4", "/dev/md/flashscale-cafe0001"),
        ("mount", "-t", "xfs", "-o", "noatime,nodiratime", "/dev/md/flashscale-cafe0001", mountpoint),
    ]
    assert layout.commands[-1] == f"mount -t xfs -o noatime,nodiratime /dev/md/flashscale-cafe0001 {mountpoint}"
    assert [e.kind for e in teardown.entries] == ["dir", "md", "mountpoint", "mount"]
    built = len(machine.runner.history)  # the fake kernel remembers what the history made
    teardown.close()
    assert machine.runner.history[built:] == [("umount", mountpoint),
                                              ("mdadm", "--stop", "/dev/md/flashscale-cafe0001"),
                                              *[("mdadm", "--zero-superblock", d) for d in DEVS]]
    assert not Path(mountpoint).exists() and not (tmp_path / "manifest.json").exists()


def test_build_lvm_tears_down_lv_vg_and_pvs_in_reverse(machine, tmp_path):
    teardown = Teardown(tmp_path / "manifest.json", machine.runner, machine)
    devices = four(machine)[:2]
    layouts.build("lvm-striped", devices, machine.runner, teardown, confirm=[d.id for d in devices], system=machine)
    built = len(machine.runner.history)
    teardown.close()
    assert machine.runner.history[built + 1:] == [("lvremove", "--yes", "flashscale-cafe0001/data"),
                                          ("vgremove", "--yes", "flashscale-cafe0001"),
                                          ("pvremove", "--yes", "/dev/nvme0n1", "/dev/nvme1n1")]


@pytest.mark.parametrize("name,need,what", [("md-raid0", "md", r"/proc/mdstat is missing"),
                                            ("md-imsm-raid0", "md", r"no md driver"),
                                            ("lvm-striped", "dm", r"/dev/mapper/control is missing")])
def test_without_md_or_device_mapper_the_layout_stops_before_touching_anything(tmp_path, name, need, what):
    machine = FakeMachine(tmp_path / "machine", md=need != "md", dm=need != "dm")
    machine.disk("nvme0n1", eui="0025385b71b00000")
    devices = [machine.identify("/dev/nvme0n1")]
    teardown = Teardown(tmp_path / "manifest.json", machine.runner, machine)
    with pytest.raises(UnsupportedError, match=f"layout '{name}'.*{what}.*nothing was touched"):
        layouts.build(name, devices, machine.runner, teardown, confirm=devices[0].id, system=machine)
    assert machine.runner.history == [] and teardown.entries == []


def test_without_mdadm_installed_the_layout_says_so(machine, tmp_path):
    machine.runner.installed = frozenset()
    devices = four(machine)
    with pytest.raises(UnsupportedError, match="mdadm is not installed"):
        layouts.build("md-raid0", devices, machine.runner, Teardown(tmp_path / "m.json", machine.runner, machine),
                      confirm=[d.id for d in devices], system=machine)
    assert machine.runner.history == []


def test_build_refuses_without_a_confirmation(machine, tmp_path):
    with pytest.raises(RefusedError, match="no confirmation given"):
        layouts.build("jbod", four(machine), machine.runner, Teardown(tmp_path / "m.json", machine.runner, machine), system=machine)
    assert machine.runner.history == []


def test_dry_run_prints_erase_and_plan_and_with_a_confirmation_checks_the_guard(tmp_path):
    machine = FakeMachine(tmp_path / "machine")
    machine.disk("nvme0n1", eui="0025385b71b00000")
    devices = [machine.identify("/dev/nvme0n1")]
    lines = layouts.dry_run("single", devices, Options(fs="ext4")).splitlines()
    assert lines[0] == "blkdiscard /dev/nvme0n1" and lines[1].startswith("mkfs.ext4 -q -b 4096 -E nodiscard")
    lines = layouts.dry_run("md-raid0", devices, confirm=devices[0].id, system=machine, runner=machine.runner)
    assert lines.startswith("# build would stop here: md RAID cannot run here: the kernel has no md driver")
    machine.sigs["nvme0n1"] = ["xfs"]
    with pytest.raises(RefusedError, match="xfs signature"):
        layouts.dry_run("single", devices, confirm=devices[0].id, system=machine)
    assert machine.runner.history == []


@pytest.mark.parametrize("kwargs,match", [({"fs": "zfs"}, "fs='zfs'"), ({"chunk_bytes": 3000}, "chunk_bytes=3000"),
                                          ({"erase": "shred"}, "'shred'"), ({"mount_options": "a b"}, "mount_options"),
                                          ({"chunk_bytes": True}, "chunk_bytes=True")])
def test_bad_options_are_named(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        Options(**kwargs)


def test_every_step_of_a_plan_is_checked_before_it_is_recorded_or_run(machine, tmp_path):
    from flashscale.arrays.guard import Guard
    from flashscale.arrays.build_steps import Step, execute

    campaign = four(machine)[:1]
    guard = Guard(campaign, campaign[0].id, system=machine)
    teardown = Teardown(tmp_path / "manifest.json", machine.runner, machine)
    steps = [Step(("mkfs.xfs", "-q", "/dev/nvme0n1"), writes=("/dev/nvme0n1",)),
             Step(("mdadm", "--create", "/dev/md/x", "/dev/nvme1n1"), writes=("/dev/nvme1n1",), creates="md",
                  details={"path": "/dev/md/x", "members": []})]
    with pytest.raises(RefusedError, match=r"/dev/nvme1n1: it is not in the campaign's list"):
        execute(steps, guard=guard, runner=machine.runner, teardown=teardown, system=machine)
    assert machine.runner.history == [("mkfs.xfs", "-q", "/dev/nvme0n1")]  # the listed device's step ran, not md
    assert teardown.entries == []
