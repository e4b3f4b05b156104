"""Erase plans, exactly, on a fake machine: nvme-cli format and sanitize, discard fallbacks, verification, dry run.

Real erases of loop devices (discard, zero, wipe) and the refusals on them are in test_guard_loop.py.
"""
from __future__ import annotations

import json

import pytest

from flashscale.arrays import erase
from flashscale.system.commands import Completed, RecordingRunner
from flashscale.errors import ConfigError, FlashscaleError, RefusedError, UnsupportedError
from flashscale.arrays.guard import Guard

from test_devices import FakeMachine


@pytest.fixture
def machine(tmp_path) -> FakeMachine:
    m = FakeMachine(tmp_path / "machine")
    for index in (1, 2):
        m.disk(f"nvme0n{index}", nguid=f"0025385b71b01234e4d25c4a0000000{index}", nsid=str(index))
    m.disk("sda", **{"device/wwid": "naa.5002538e40a1b2c3"})
    (m.dev / "nvme0").write_text("")
    ctrl = m.sys / "class" / "nvme" / "nvme0"
    for index in (1, 2):
        (ctrl / f"nvme0n{index}").mkdir(parents=True)
    return m


def erase_these(machine, names, **kwargs):
    devices = [machine.identify(f"/dev/{n}") for n in names]
    guard = Guard(devices, [d.id for d in devices], wipe=kwargs.pop("wipe", False), system=machine)
    return erase.erase(devices, guard, machine.runner, **kwargs)


def sanitize_log(status) -> Completed:
    return Completed(("nvme", "sanitize-log"), 0, json.dumps({"nvme0": {"sprog": 65535, "sstat": status}}))


def test_nvme_format_names_the_namespace_and_asks_for_a_user_data_erase(machine):
    records = erase_these(machine, ["nvme0n2"], method="nvme-format")
    assert machine.runner.history == [("nvme", "format", "/dev/nvme0n2", "--namespace-id=2", "--ses=1", "--force")]
    assert records[0]["method"] == "nvme-format" and records[0]["verified"] == "blkid -p finds no signature"
    assert records[0]["id"] == "nguid:0025385b71b01234e4d25c4a00000002"


@pytest.mark.parametrize("status", [{"status": 1, "global_erased": 1}, 0x101])
def test_nvme_sanitize_runs_once_per_controller_and_waits_for_the_log(machine, status):
    ctrl = str(machine.dev / "nvme0")
    machine.runner.replies[("nvme", "sanitize-log")] = sanitize_log(status)
    records = erase_these(machine, ["nvme0n1", "nvme0n2"], method="nvme-sanitize", poll_s=0)
    assert machine.runner.history == [("nvme", "sanitize", ctrl, "--sanact=2"),
                                      ("nvme", "sanitize-log", ctrl, "--output-format=json")]
    assert [r["commands"] for r in records] == [[f"nvme sanitize {ctrl} --sanact=2"], []]


def test_nvme_sanitize_is_refused_when_the_controller_has_a_namespace_not_being_erased(machine):
    with pytest.raises(RefusedError, match="erases every namespace of .*nvme0, but nvme0n2 is not among"):
        erase_these(machine, ["nvme0n1"], method="nvme-sanitize")
    assert machine.runner.history == []


def test_a_failed_sanitize_is_an_error(machine):
    machine.runner.replies[("nvme", "sanitize-log")] = sanitize_log({"status": 3})
    with pytest.raises(FlashscaleError, match="did not complete \\(sanitize status 3\\)"):
        erase_these(machine, ["nvme0n1", "nvme0n2"], method="nvme-sanitize", poll_s=0)


def test_nvme_methods_stop_before_anything_runs_without_nvme(machine):
    with pytest.raises(UnsupportedError, match="/dev/sda is not an NVMe namespace"):
        erase_these(machine, ["sda"], method="nvme-format")
    machine.runner.installed = frozenset()
    with pytest.raises(UnsupportedError, match="nvme-cli is not installed"):
        erase_these(machine, ["nvme0n1"], method="nvme-format")
    assert machine.runner.history == []


def test_unsupported_discard_is_said_and_falls_back_only_when_the_plan_allows(machine):
    machine.runner.replies[("blkdiscard", "/dev/sda")] = 2
    with pytest.raises(UnsupportedError, match="does not support discard \\(blkdiscard exit 2\\)"):
        erase_these(machine, ["sda"])
    records = erase_these(machine, ["sda"], fallback="zero")
    assert machine.runner.history[-2:] == [("blkdiscard", "/dev/sda"), ("blkdiscard", "--zeroout", "/dev/sda")]
    assert records[0]["method"] == "zero" and "fell back to zero" in records[0]["note"]


def test_util_linux_2_38_reports_unsupported_discard_as_exit_1(machine):
    machine.runner.replies[("blkdiscard", "/dev/sda")] = Completed(
        ("blkdiscard",), 1, "", "blkdiscard: BLKDISCARD ioctl failed: Operation not supported")
    assert erase_these(machine, ["sda"], fallback="wipe")[0]["method"] == "wipe"


def test_a_signature_left_after_discard_fails_or_falls_back(machine):
    machine.discard_zeroes = False  # a device that does not read back zeros after a discard
    machine.sigs["sda"] = ["xfs"]
    with pytest.raises(FlashscaleError, match="/dev/sda still carries xfs after discard"):
        erase_these(machine, ["sda"], wipe=True)
    machine.runner.history.clear()
    records = erase_these(machine, ["sda"], wipe=True, fallback="wipe")
    assert machine.runner.history == [("blkdiscard", "/dev/sda"), ("wipefs", "--all", "/dev/sda")]
    assert records[0]["note"] == "discard left xfs; fell back to wipe"


def test_a_dry_run_checks_everything_and_runs_nothing(machine):
    records = erase_these(machine, ["nvme0n1", "sda"], method="zero", dry_run=True)
    assert machine.runner.history == []
    assert [r["commands"] for r in records] == [["blkdiscard --zeroout /dev/nvme0n1"],
                                                ["blkdiscard --zeroout /dev/sda"]]
    machine.hold("sda", "md0")
    with pytest.raises(RefusedError, match="held by md0"):
        erase_these(machine, ["nvme0n1", "sda"], dry_run=True)


def test_one_refused_device_means_none_is_erased(machine):
    machine.sigs["sda"] = ["ext4"]
    with pytest.raises(RefusedError, match="/dev/sda .*ext4 signature the plan did not say to wipe"):
        erase_these(machine, ["nvme0n1", "sda"])
    assert machine.runner.history == []


def test_unknown_methods_are_named():
    with pytest.raises(ConfigError, match="'shred' is not one of discard, zero, wipe"):
        erase.erase([], Guard([], "x", system=FakeMachine.__new__(FakeMachine)), RecordingRunner(), method="shred")
