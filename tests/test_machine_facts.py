"""The CPU frequency governor and each device's firmware, read through ``System`` on a fake sysfs tree
(``test_devices.FakeMachine``), recorded in campaign.json's environment (``provenance.machine``) and listed by
``flashscale compare`` among what differs, before the kernel's software and the spec."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from flashscale.cli import main
from flashscale.measure import campaign_folder
from flashscale.system import provenance
from flashscale.system.devices import Device
from flashscale.system.machine import ATTRIBUTE_BYTES
from test_devices import FakeMachine


@pytest.fixture
def machine(tmp_path) -> FakeMachine:
    return FakeMachine(tmp_path / "machine")


def cpus(machine: FakeMachine, governors: list[str | None]) -> None:
    """CPUs 0..n-1 under the fake sysfs, each with its governor (None: no cpufreq folder, as in a VM)."""
    for number, governor in enumerate(governors):
        folder = machine.sys / "devices" / "system" / "cpu" / f"cpu{number}"
        folder.mkdir(parents=True)
        if governor is not None:
            (folder / "cpufreq").mkdir()
            (folder / "cpufreq" / "scaling_governor").write_text(f"{governor}\n")


def test_a_machine_without_cpufreq_records_the_governor_as_unknown_saying_why(machine):
    assert machine.governor().startswith("unknown: ") and "lists no CPU" in machine.governor()
    cpus(machine, [None, None])
    said = machine.governor()
    assert said.startswith("unknown: no CPU has cpufreq/scaling_governor") and "VM" in said


def test_one_governor_is_said_once_and_several_with_their_cpus(machine):
    cpus(machine, ["performance"] * 4)
    assert machine.governor() == "performance"
    (machine.sys / "devices" / "system" / "cpu" / "cpu2" / "cpufreq" / "scaling_governor").write_text("powersave\n")
    (machine.sys / "devices" / "system" / "cpu" / "cpufreq").mkdir()  # not a CPU: no number
    assert machine.governor() == "performance (cpu 0-1,3); powersave (cpu 2)"


def test_cpus_are_ordered_by_number_not_by_name(machine):
    cpus(machine, ["performance"] * 10 + ["schedutil", "schedutil"])
    assert machine.governor() == "performance (cpu 0-9); schedutil (cpu 10-11)"


def test_a_governor_file_of_any_size_is_read_bounded(machine):
    cpus(machine, ["x"])
    (machine.sys / "devices" / "system" / "cpu" / "cpu0" / "cpufreq" / "scaling_governor").write_bytes(
        b"p" * (64 * ATTRIBUTE_BYTES) + b"\xff\n")
    assert machine.governor() == "p" * 64


def test_each_device_says_its_firmware_or_why_not(machine):
    machine.disk("nvme0n1", eui="0025385b71b01234", **{"device/firmware_rev": "3B2QGXA7"})
    machine.disk("sda", **{"device/wwid": "naa.1", "device/rev": "0108"})
    machine.disk("vda", **{"device/vendor": "0x1af4"})  # virtio: a device that states no firmware
    machine.disk("loop0")
    machine.partition("nvme0n1", 1)
    assert machine.firmware("nvme0n1") == "3B2QGXA7" and machine.firmware("nvme0n1p1") == "3B2QGXA7"
    assert machine.firmware("sda") == "0108"
    assert machine.firmware("vda").startswith("unknown: vda's device states none")
    assert machine.firmware("loop0").startswith("none: loop0 is made by the kernel")
    assert machine.describe("nvme0n1").firmware == "3B2QGXA7" and machine.describe("vda").firmware is None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=3 * ATTRIBUTE_BYTES))
def test_any_bytes_as_a_firmware_revision_are_recorded_as_short_text(tmp_path_factory, data):
    machine = FakeMachine(tmp_path_factory.mktemp("fw") / "machine")
    machine.disk("nvme0n1", **{"device/firmware_rev": "x"})
    (machine.sys / "devices" / "virtual" / "block" / "nvme0n1" / "device" / "firmware_rev").write_bytes(data)
    said = machine.firmware("nvme0n1")
    assert isinstance(said, str) and 0 < len(said) <= 120 and "\n" not in said


def test_campaign_json_records_the_governor_and_each_named_device_s_firmware(machine):
    cpus(machine, ["performance", "performance"])
    machine.disk("nvme0n1", eui="0025385b71b01234", **{"device/firmware_rev": "3B2QGXA7"})
    machine.disk("nvme1n1", eui="0025385b71b05678", **{"device/firmware_rev": "3B4QFXO7"})
    named = [Device(str(machine.dev / n), f"eui:{n}") for n in ("nvme0n1", "nvme1n1")]
    assert provenance.machine(named, machine) == {
        "governor": "performance", "firmware": {"nvme0n1": "3B2QGXA7", "nvme1n1": "3B4QFXO7"}}
    assert provenance.machine((), machine)["firmware"] == {}  # the emulated array names no device


def folder(path, governor: str, firmware: dict):
    """A finished test bed campaign: campaign.json with the machine's facts, results.parquet of one point."""
    rng = np.random.default_rng(0)
    rows = [{"layout": "md-raid0", "devices": 2, "rw": "read", "bs": 1048576, "numjobs": 4, "iodepth": 1,
             "rep": rep, "bw_bytes": 8e8 * rng.lognormal(0, 0.005), "phase": "measure", "status": "ok"}
            for rep in range(3)]
    path.mkdir(parents=True)
    pd.DataFrame(rows).to_parquet(path / campaign_folder.TABLE_FILE, index=False)
    campaign_folder.write_campaign(path, "20261207T100000Z", {"name": path.name},
                                   {"hostname": "h1", "kernel": "6.1.0", "fio": "fio-3.33", "backend": "testbed",
                                    "governor": governor, "firmware": firmware,
                                    "software": {"commit": path.name}})
    return path


def test_compare_lists_governor_and_firmware_among_what_differs_before_the_software(tmp_path, capsys):
    a = folder(tmp_path / "a", "performance", {"nvme0n1": "3B2QGXA7", "nvme1n1": "3B2QGXA7"})
    b = folder(tmp_path / "b", "powersave", {"nvme0n1": "3B4QFXO7", "nvme1n1": "3B2QGXA7"})
    assert main(["compare", str(a), str(b), "--format", "json"]) == 0
    differs = json.loads(capsys.readouterr().out)["environment"]
    assert [d["what"] for d in differs] == ["environment.governor", "environment.firmware.nvme0n1",
                                            "environment.software.commit"]
    assert differs[0] == {"what": "environment.governor", "a": "performance", "b": "powersave"}
    assert (differs[1]["a"], differs[1]["b"]) == ("3B2QGXA7", "3B4QFXO7")
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "environment.governor" in out and "performance -> powersave" in out and "3B2QGXA7 -> 3B4QFXO7" in out
