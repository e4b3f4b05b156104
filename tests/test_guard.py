"""The guard's rules on a fake machine: confirmation as strings, the campaign's list, identity, signatures.

The same refusals on real loop devices, with their contents checksummed, are in test_guard_loop.py.
"""
from __future__ import annotations

import pytest

from flashscale.system.devices import Device
from flashscale.errors import ConfigError, RefusedError
from flashscale.arrays.guard import Guard, confirmation

from test_devices import FakeMachine


@pytest.fixture
def machine(tmp_path) -> FakeMachine:
    m = FakeMachine(tmp_path / "machine")
    m.disk("nvme0n1", eui="0025385b71b00001")
    m.disk("nvme1n1", eui="0025385b71b00002")
    m.disk("nvme2n1", eui="0025385b71b00003")
    return m


def devs(machine, *names):
    return [machine.identify(f"/dev/{n}") for n in names]


@pytest.mark.parametrize("value,expected", [
    ("eui:1", ("eui:1",)),
    ("eui:1, eui:2,", ("eui:1", "eui:2")),
    (["eui:1", "eui:2", "eui:1"], ("eui:1", "eui:2")),
    (("0123",), ("0123",)),
])
def test_a_confirmation_is_a_string_or_a_list_of_strings(value, expected):
    assert confirmation(value) == expected


@pytest.mark.parametrize("value", [123, 0o123, 1.5, True, None, b"eui:1", {"eui:1": 1}, ["eui:1", 123]])
def test_anything_but_strings_is_refused_with_the_papermill_hint(value):
    with pytest.raises(ConfigError, match=r"not a string.*papermill's -p turns 0123 into the number 123.*-r NAME"):
        confirmation(value)


@pytest.mark.parametrize("value", ["", " , ", []])
def test_an_empty_confirmation_names_nothing(value):
    with pytest.raises(ConfigError, match="names no identity"):
        confirmation(value)


def test_a_confirmed_free_device_passes(machine):
    campaign = devs(machine, "nvme0n1", "nvme1n1")
    Guard(campaign, "eui:0025385b71b00001,eui:0025385b71b00002", system=machine).check(campaign)


def test_a_confirmation_mismatch_refuses_every_device_and_names_the_ids(machine):
    campaign = devs(machine, "nvme0n1", "nvme1n1")
    guard = Guard(campaign, ["eui:0025385b71b00001", "eui:0025385b71b0ffff"], system=machine)
    with pytest.raises(RefusedError) as caught:
        guard.check(campaign)
    message = str(caught.value)
    assert "/dev/nvme0n1 (eui:0025385b71b00001)" in message and "/dev/nvme1n1 (eui:0025385b71b00002)" in message
    assert "not confirmed: eui:0025385b71b00002" in message
    assert "confirmed but not in the campaign's list: eui:0025385b71b0ffff" in message


def test_a_device_outside_the_campaigns_list_is_refused(machine):
    campaign = devs(machine, "nvme0n1")
    with pytest.raises(RefusedError, match=r"/dev/nvme2n1: it is not in the campaign's list"):
        Guard(campaign, "eui:0025385b71b00001", system=machine).check(["/dev/nvme2n1"])


def test_a_path_that_now_holds_another_device_is_refused(machine):
    campaign = [Device("/dev/nvme0n1", "eui:0025385b71b00002")]  # the names swapped since the test bed was read
    with pytest.raises(RefusedError, match="no longer the named device: 'eui:0025385b71b00001' sits there now"):
        Guard(campaign, "eui:0025385b71b00002", system=machine).check(campaign)


def test_a_regular_file_or_a_missing_path_is_refused(machine, tmp_path):
    fake = tmp_path / "nvme0n1"
    fake.write_bytes(b"data")
    campaign = [Device(str(fake), "eui:0025385b71b00001"), Device(str(tmp_path / "nvme7n1"), "eui:7")]
    with pytest.raises(RefusedError) as caught:
        Guard(campaign, "eui:0025385b71b00001,eui:7", system=machine).check(campaign)
    assert f"{fake} (eui:0025385b71b00001): it is not a block device" in str(caught.value)
    assert "nvme7n1 (eui:7): it is no such path" in str(caught.value)
    assert fake.read_bytes() == b"data"


def test_a_signature_is_refused_unless_the_plan_says_to_wipe_it(machine):
    campaign = devs(machine, "nvme0n1")
    machine.sigs["nvme0n1"] = ["xfs"]
    ident = campaign[0].id
    with pytest.raises(RefusedError, match="it carries a xfs signature the plan did not say to wipe"):
        Guard(campaign, ident, system=machine).check(campaign)
    with pytest.raises(RefusedError, match="xfs signature"):
        Guard(campaign, ident, wipe=["ext4"], system=machine).check(campaign)
    Guard(campaign, ident, wipe=["xfs"], system=machine).check(campaign)
    Guard(campaign, ident, wipe=True, system=machine).check(campaign)
    with pytest.raises(ConfigError, match="wipe='xfs'"):
        Guard(campaign, ident, wipe="xfs", system=machine)


def test_run_checks_then_runs_and_then_expects_the_plans_own_signature(machine):
    campaign = devs(machine, "nvme0n1")
    guard = Guard(campaign, campaign[0].id, system=machine)
    guard.run(machine.runner, ["pvcreate", "/dev/nvme0n1"], ["/dev/nvme0n1"])
    machine.sigs["nvme0n1"] = ["LVM2_member"]  # the plan's own label: the next step may write on
    guard.run(machine.runner, ["vgcreate", "vg", "/dev/nvme0n1"], ["/dev/nvme0n1"])
    assert machine.runner.history == [("pvcreate", "/dev/nvme0n1"), ("vgcreate", "vg", "/dev/nvme0n1")]


def test_a_claimed_device_may_carry_only_flashscales_own_signatures(machine):
    campaign = devs(machine, "nvme0n1")
    guard = Guard(campaign, campaign[0].id, system=machine)
    guard.claimed.add("/dev/nvme0n1")
    machine.sigs["nvme0n1"] = ["xfs", "linux_raid_member"]
    guard.check(campaign)
    machine.sigs["nvme0n1"] = ["xfs", "swap"]  # something flashscale never writes: not ours, whoever put it there
    with pytest.raises(RefusedError, match="it carries a swap signature the plan did not say to wipe"):
        guard.check(campaign)


def test_a_refused_step_runs_nothing(machine):
    campaign = devs(machine, "nvme0n1", "nvme1n1")
    machine.hold("nvme1n1", "dm-3")
    guard = Guard(campaign, [d.id for d in campaign], system=machine)
    with pytest.raises(RefusedError, match=r"/dev/nvme1n1 \(eui:0025385b71b00002\): it is held by dm-3"):
        guard.run(machine.runner, ["blkdiscard", "/dev/nvme0n1"], ["/dev/nvme0n1", "/dev/nvme1n1"])
    assert machine.runner.history == []


def test_a_device_named_with_another_identity_than_the_campaign_lists_is_refused(machine):
    campaign = devs(machine, "nvme0n1")
    guard = Guard(campaign, campaign[0].id, system=machine)
    impostor = Device(campaign[0].path, "eui:0025385b71b0ffff")
    with pytest.raises(RefusedError, match=r"it was named as 'eui:0025385b71b0ffff' but the campaign lists "
                                           r"'eui:0025385b71b00001' at this path"):
        guard.check([impostor])
    assert machine.runner.history == []
