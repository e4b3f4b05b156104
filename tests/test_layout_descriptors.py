"""Every layout's descriptor (``flashscale.layouts``) walked through what each layer does with it: checked when it
loads, its dry run and build recorded on a fake machine (the exact commands, undone exactly), built on real loop
devices where this kernel can (the md and LVM layouts in the VM lab: marked ``vm``), predicted from one device's
curve, and checked against a campaign's parameters."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from flashscale import layouts as descriptors
from flashscale.analysis import baseline_and_tax
from flashscale.analysis.prediction import predict
from flashscale.arrays import layouts
from flashscale.arrays.layouts import Options
from flashscale.campaigns import rules
from flashscale.errors import ConfigError
from flashscale.layouts import Descriptor
from flashscale.system.vmlab import vm
from flashscale.system.commands import Runner
from flashscale.system.devices import System
from flashscale.system.teardown import Teardown

from conftest import ROOT_PROBLEM, mounts_under
from test_devices import FakeMachine

MiB = 2**20
ROOT = Path(__file__).resolve().parents[1]
TOKEN = "cafe0002"
BUILT = [descriptors.known(name) for name in descriptors.BUILT]
ON_THIS_KERNEL = [d for d in BUILT if d.needs is None]  # md and device-mapper only in the VM lab
IN_THE_LAB = [d for d in BUILT if d.needs is not None]


def test_every_layout_flashscale_builds_or_measures_is_described_once_and_analysis_knows_the_rest():
    assert descriptors.BUILT == ("single", "jbod", "btrfs-raid0", "btrfs-raid10", "md-raid0", "md-imsm-raid0",
                                 "lvm-striped")
    assert descriptors.MEASURABLE == (*descriptors.BUILT, "mounted")
    assert list(layouts.DEVICE_LAYOUTS) == list(descriptors.BUILT)
    not_built = {name: d.not_built_why for name, d in descriptors.DESCRIPTORS.items() if not d.buildable}
    assert sorted(not_built) == ["md-raid1", "md-raid10", "mounted"] and all(
        "resync" in why for name, why in not_built.items() if name != "mounted")
    for d in BUILT:
        assert d.build in layouts.PLANS and (d.needs is None or d.needs in descriptors.FEATURES)
    assert descriptors.describe("nbd").routing == descriptors.STRIPE  # a name it does not know: a plain stripe
    with pytest.raises(ConfigError, match="layout='raid5' is not one of single, jbod"):
        descriptors.known("raid5")


@pytest.mark.parametrize("change, named", [
    ({"build": "zfs"}, "build='zfs'"), ({"routing": "mirror"}, "routing='mirror'"), ({"needs": "zfs"}, "needs='zfs'"),
    ({"min_devices": 0}, "min_devices=0"), ({"min_devices": 2}, "min_devices_why=''"),
    ({"write_share": 0}, "write_share=0"), ({"fixed_stripe_bytes": 3000}, "fixed_stripe_bytes=3000"),
    ({"build": None}, "build=None")])
def test_a_descriptor_that_does_not_hold_together_is_refused_when_it_is_made(change, named):
    with pytest.raises(ConfigError, match=f"layout 'made-up': {named}"):
        Descriptor(**{"name": "made-up", "description": "x", "build": "each", **change})


def test_the_tools_defaults_and_the_kernels_needs_are_stated_once():
    chunk = {name: d.tool_default_chunk_bytes for name, d in descriptors.DESCRIPTORS.items()}
    assert chunk["md-raid0"] == 512 * 1024 and chunk["lvm-striped"] == 64 * 1024  # mdadm >= 3.1, lvcreate
    assert descriptors.known("btrfs-raid0").stripe_unit(1 * MiB) == 64 * 1024  # btrfs's own, whatever was asked
    assert descriptors.known("md-raid0").stripe_unit(1 * MiB) == MiB  # flashscale gives mdadm the chunk
    assert vm.GUEST_MODULES == ("md_mod", "raid0", "dm_mod")
    assert [tool for tool, _ in vm.HOST_TOOLS if tool in ("mdadm", "lvm")] == ["mdadm", "lvm"]


@pytest.fixture
def machine(tmp_path, monkeypatch) -> FakeMachine:
    monkeypatch.setattr(layouts.secrets, "token_hex", lambda n: TOKEN)
    m = FakeMachine(tmp_path / "machine", md=True, dm=True)
    for index in range(2):
        m.disk(f"nvme{index}n1", eui=f"0025385b71b0001{index}", nsid="1")
    return m


@pytest.mark.parametrize("descriptor", BUILT, ids=lambda d: d.name)
def test_each_layout_s_dry_run_is_the_build_it_records_and_teardown_undoes_it(descriptor, machine, tmp_path):
    devices = [machine.identify(f"/dev/nvme{i}n1") for i in range(2)]
    used = devices[:descriptor.devices_used(2)]
    shown = layouts.dry_run(descriptor.name, devices, Options(), confirm=[d.id for d in devices], system=machine,
                            runner=machine.runner)
    assert "would stop here" not in shown and machine.runner.history == []  # read only
    teardown = Teardown(tmp_path / "manifest.json", machine.runner, machine)
    built = layouts.build(descriptor.name, devices, machine.runner, teardown, confirm=[d.id for d in devices],
                          system=machine)
    ran = [" ".join(argv) for argv in machine.runner.history]
    plan = layouts.plan(descriptor.name, devices, root=Path(built.targets[0]).parent, token=TOKEN)
    assert ran == [*(f"blkdiscard {d.path}" for d in used), *(" ".join(s.argv) for s in plan if s.argv[0] != "mkdir")]
    assert shown.splitlines()[:len(used)] == ran[:len(used)]  # the dry run's erase is the build's
    assert built.devices == len(used) and built.description == descriptor.description
    assert len(built.targets) == (len(used) if descriptor.per_device else 1)
    teardown.close()
    assert not (tmp_path / "manifest.json").exists() and not any(Path(t).exists() for t in built.targets)


@pytest.mark.root
@pytest.mark.parametrize("descriptor", ON_THIS_KERNEL, ids=lambda d: d.name)
def test_each_layout_this_kernel_can_build_is_built_on_loop_devices_and_torn_down(descriptor, tmp_path):
    from test_guard_loop import Loops
    loops = Loops(tmp_path)
    try:
        devices = [loops.make(size=512 * MiB, fill=False) for _ in range(2)]
        teardown = Teardown(tmp_path / "manifest.json", Runner(), System())
        built = layouts.build(descriptor.name, devices, Runner(), teardown, confirm=[d.id for d in devices])
        fs = descriptor.file_system_of(Options().fs)
        mounted = {line.split()[1]: line.split()[2] for line in Path("/proc/mounts").read_text().splitlines()}
        assert [mounted.get(t) for t in built.targets] == [fs] * len(built.targets)
        assert built.devices == descriptor.devices_used(2) and built.backend == "loop"
        root = str(Path(built.targets[0]).parent)
        teardown.close()
        assert mounts_under(root) == [] and not Path(root).exists()
    finally:
        loops.close()


@pytest.mark.skipif(ROOT_PROBLEM is not None or Path("/proc/mdstat").exists(),
                    reason="shown where this kernel has no md (and loop devices can be made)")
@pytest.mark.parametrize("descriptor", IN_THE_LAB, ids=lambda d: d.name)
def test_the_layouts_this_kernel_cannot_build_say_what_it_lacks(descriptor):
    problem = layouts.missing(descriptor.name, System(), Runner())
    assert problem and descriptors.FEATURES[descriptor.needs].marker[-1] in problem


def _curve() -> pd.DataFrame:
    """One device that delivers 300 MB/s with one request in flight and 500 MB/s from two on, each way."""
    rows = [dict(rw=rw, bs=MiB, iodepth=1, numjobs=nj, bw_bytes=v, bw_bytes_lo=v, bw_bytes_hi=v, reps=3,
                 cpu_s_per_byte=float("nan")) for rw in ("read", "write")
            for nj, v in {1: 300e6, 2: 500e6, 4: 500e6, 8: 500e6}.items()]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("descriptor", list(descriptors.DESCRIPTORS.values()), ids=lambda d: d.name)
def test_each_layout_is_predicted_from_its_descriptor(descriptor):
    """At 8 jobs of 1 MiB every device of 4 saturates (own jobs: 2 each; a stripe of 128 KiB or btrfs's 64 KiB: a
    piece of every request on every member), so each layout delivers devices x 500 MB/s x its design share."""
    devices = descriptor.devices_used(4)
    points = [dict(devices=devices, rw=rw, bs=MiB, numjobs=8, iodepth=1) for rw in ("read", "write")]
    out = predict.predict(_curve(), descriptor.name, points, chunk_bytes=128 * 1024).set_index("rw")
    assert out["routing"].eq("own jobs" if descriptor.per_device else "every member").all()
    assert out.loc["read", "predicted_bw_bytes"] == pytest.approx(devices * 500e6)
    assert out.loc["write", "predicted_bw_bytes"] == pytest.approx(devices * 500e6 * descriptor.write_share)
    assert baseline_and_tax.design_share(descriptor.name, "write") == descriptor.write_share


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(descriptors.BUILT), devices=st.integers(1, 4))
def test_a_campaign_is_checked_against_each_layout_s_devices(name, devices):
    said = rules.rule_problems({"LAYOUTS": [name], "DEVICES": devices}, ["LAYOUTS", "DEVICES"])
    need = descriptors.known(name).min_devices
    assert bool(said) == (devices < need)
    if said:
        assert f"{name} needs at least {need} ({descriptors.known(name).min_devices_why})" in said[0]


GUEST = "tests/vm_guest/guest_layouts.py"


@pytest.mark.vm
@pytest.mark.root
def test_the_layouts_this_kernel_cannot_build_are_built_in_the_vm_lab(guest_suites):
    """The first boot of the guest's suites (conftest.guest_suites) builds every layout that needs md or
    device-mapper through ``arrays.layouts.build`` on the lab's NVMe devices, checks what the kernel made and tears
    it down (tests/vm_guest/guest_layouts.py)."""
    output = guest_suites["output"]
    assert guest_suites["first"].returncode == 0, output[-4000:]
    built = guest_suites["cases"][GUEST]
    assert sorted(name for name, _ in built) == sorted(f"test_the_layout_is_built_from_its_descriptor_and_undone"
                                                       f"[{d.name}]" for d in IN_THE_LAB), built
    assert {status for _, status in built} == {"passed"}, (built, output[-4000:])
    assert os.environ.get("FLASHSCALE_VM_DEVICES") is None  # the identities went to the guest only
