"""null_blk devices without null_blk: the spec's refusals, the known curve, and devices made, checked and undone
through a fake configfs whose kernel obeys ``power`` (``FakeNullBlk``). The real devices, measured in the VM lab
against the curve, are test_vm_nullblk.py's."""
from __future__ import annotations

import errno
import json
import math
import os
import pathlib
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from flashscale.arrays.guard import Guard
from flashscale.errors import ConfigError, FlashscaleError, UnsupportedError
from flashscale.system import nullblk, reap, undo
from flashscale.system.commands import Completed
from flashscale.system.nullblk import NullBlk, NullBlkSpec

from test_devices import FakeMachine

MiB = 2**20
NULLB_MAJOR = 252
DEVICES = "Character devices:\n  1 mem\n\nBlock devices:\n  7 loop\n{major} nullb\n259 blkext\n"


# ---- the known curve (pure) -------------------------------------------------------------------------------------
def test_below_the_queue_depth_throughput_is_outstanding_requests_over_latency_then_flat():
    bw = [nullblk.expected_bw(4096, 1, qd, 10_000_000, 8) for qd in (1, 2, 4, 8, 16, 32)]
    assert bw == [409_600.0, 819_200.0, 1_638_400.0, 3_276_800.0, 3_276_800.0, 3_276_800.0]  # 4 KiB / 10 ms x qd
    assert nullblk.expected_bw(4096, 1, 1, 1_000_000, 8) == pytest.approx(4_096_000.0)


def test_jobs_and_depth_multiply_and_jobs_spread_over_devices_as_fio_spreads_them():
    assert nullblk.jobs_per_device(5, 2) == [3, 2] and nullblk.jobs_per_device(1, 3) == [1, 0, 0]
    assert nullblk.expected_bw(4096, 2, 2, 10_000_000, 8) == nullblk.expected_bw(4096, 1, 4, 10_000_000, 8)
    one = nullblk.expected_bw(4096, 1, 4, 10_000_000, 8)
    assert nullblk.expected_bw(4096, 2, 4, 10_000_000, 8, devices=2) == 2 * one  # a job on each device
    assert nullblk.expected_bw(4096, 1, 4, 10_000_000, 8, devices=2) == one  # the second device has no job


def test_the_cap_is_whole_requests_within_a_budget_reset_50_times_a_second():
    assert nullblk.tick_bytes(2) == 41_942  # (2**20 // 50) x 2
    assert nullblk.cap_bytes(2, 4096) == 50 * 10 * 4096 == 2_048_000  # ten 4 KiB requests a tick, not 2 x 2**20
    assert nullblk.cap_bytes(2, 512) == 50 * 81 * 512
    assert nullblk.expected_bw(4096, 1, 32, 10_000_000, 8, mbps=2) == pytest.approx(2_048_000.0)  # 3.28 MB/s uncapped
    assert nullblk.expected_bw(4096, 1, 2, 10_000_000, 8, mbps=2) == pytest.approx(819_200.0)  # below the cap: latency binds
    assert nullblk.cap_bytes(None, 4096) == math.inf
    with pytest.raises(ConfigError, match="bs=65536 is more than the 41942 bytes a tick of mbps=2 allows"):
        nullblk.expected_bw(65536, 1, 1, 10_000_000, 8, mbps=2)


@pytest.mark.parametrize("mbps", [1, 2, 3, 50, 10_000])
def test_a_capped_devices_requests_fit_one_ticks_budget_as_the_curve_counts_it(mbps):
    """The system's ``max_sectors`` and the analysis's budget are one kernel fact written twice: they must agree."""
    spec = NullBlkSpec(mbps=mbps)
    assert nullblk.TICKS_PER_S == nullblk.TICKS_PER_S
    assert spec.blocksize <= spec.max_sectors * 512 <= nullblk.tick_bytes(mbps)
    assert spec.max_sectors * 512 % spec.blocksize == 0 and spec.max_sectors <= nullblk.MAX_SECTORS
    assert NullBlkSpec().max_sectors == 0  # uncapped: the kernel's own limit


@pytest.mark.parametrize("call, word", [
    (lambda: nullblk.expected_bw(0, 1, 1, 10, 8), "bs=0"),
    (lambda: nullblk.expected_bw(4096, 1, 1, 10, 8, mbps=0), "mbps=0"),
    (lambda: nullblk.expected_bw(4096, 1, 1.5, 10, 8), "iodepth=1.5"),
    (lambda: nullblk.knee_iodepth(4096, 1, 10, True), "queue_depth=True"),
    (lambda: nullblk.jobs_per_device(1, 0), "devices=0")])
def test_a_bad_parameter_is_refused_naming_it(call, word):
    with pytest.raises(ConfigError, match=word):
        call()


def test_the_knee_is_where_the_queue_fills_or_the_cap_binds():
    assert nullblk.knee_iodepth(4096, 1, 10_000_000, 8) == 8
    assert nullblk.knee_iodepth(4096, 2, 10_000_000, 8) == 4
    assert nullblk.knee_iodepth(4096, 3, 10_000_000, 8, devices=2) == 8  # the device with one job is the last to fill
    assert nullblk.knee_iodepth(4096, 1, 10_000_000, 8, mbps=2) == 5  # 500 requests a second x 10 ms in flight
    assert nullblk.knee_iodepth(4096, 1, 9_000_000, 8, mbps=2) == 5  # 4.5 in flight: the fifth request reaches it


@given(bs=st.sampled_from([512, 4096, 131072]), numjobs=st.integers(1, 8), devices=st.integers(1, 4),
       latency_ns=st.integers(1_000, 20_000_000), queue_depth=st.integers(1, 64),
       mbps=st.one_of(st.none(), st.integers(7, 5000)))  # from 7 a tick's budget holds a 128 KiB request
def test_the_curve_stops_growing_exactly_at_its_knee(bs, numjobs, devices, latency_ns, queue_depth, mbps):
    params = dict(bs=bs, numjobs=numjobs, latency_ns=latency_ns, queue_depth=queue_depth, mbps=mbps, devices=devices)
    knee = nullblk.knee_iodepth(**params)
    ceiling = nullblk.expected_bw(iodepth=10**6, **params)
    assert nullblk.expected_bw(iodepth=knee, **params) == pytest.approx(ceiling, rel=1e-12)
    assert knee == 1 or nullblk.expected_bw(iodepth=knee - 1, **params) < ceiling * (1 - 1e-12)


# ---- the spec -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("change, word", [
    ({"devices": 0}, "devices=0"), ({"size_bytes": 64 * MiB + 512}, "size_bytes=67109376"),
    ({"latency_ns": -1}, "latency_ns=-1"), ({"queue_depth": True}, "queue_depth=True"),
    ({"queue_depth": 20_000}, "queue_depth=20000"), ({"mbps": 0}, "mbps=0"), ({"blocksize": 1000}, "blocksize=1000")])
def test_bad_specs_are_refused_naming_the_value(change, word):
    with pytest.raises(ConfigError, match=word):
        NullBlkSpec(**change)


def test_the_spec_asks_for_timer_completions_one_queue_and_no_cap_as_zero():
    attributes = dict(NullBlkSpec(size_bytes=128 * MiB, latency_ns=2_000_000, queue_depth=16).attributes())
    assert attributes == {"memory_backed": "1", "irqmode": "2", "completion_nsec": "2000000", "submit_queues": "1",
                          "hw_queue_depth": "16", "mbps": "0", "max_sectors": "0", "size": "128", "blocksize": "4096"}
    capped = dict(NullBlkSpec(mbps=3).attributes())
    assert (capped["mbps"], capped["max_sectors"]) == ("3", "120")  # 62913 bytes a tick: 15 blocks of 4 KiB


def test_an_attribute_is_read_back(tmp_path):
    """``write_attribute`` on files the kernel owns: one it cannot open for writing, one whose value it shortens."""
    with pytest.raises(UnsupportedError, match=r"refused '1' in .*missing/power"):
        undo.write_attribute(tmp_path / "missing" / "power", "1")
    comm = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/comm")  # the kernel keeps 15 characters of a name
    before = comm.read_text().strip()
    try:
        with pytest.raises(UnsupportedError, match="'flashscale-a-long-name'.*kept 'flashscale-a-lo'"):
            undo.write_attribute(comm, "flashscale-a-long-name")
    finally:
        comm.write_text(before)


# ---- a fake configfs whose kernel obeys power ---------------------------------------------------------------------
class FakeNullBlk:
    """null_blk as configfs shows it: ``power`` 1 makes the disk (named as its directory, or ``nullb<index>`` as
    kernels before 6.1's did), 0 removes it, and rmdir takes the attribute files. ``refuse`` names an attribute the
    kernel refuses; ``shrink`` makes every disk that many bytes smaller than asked."""

    def __init__(self, machine: FakeMachine, write, old_names: bool = False):
        self.machine, self.real_write, self.old_names = machine, write, old_names
        self.refuse: str | None = None
        self.shrink = 0
        self.indexes = 0

    def write(self, path: Path, value: str) -> None:
        if path.name == self.refuse:
            raise UnsupportedError(f"the kernel refused {value!r} in {path}: Invalid argument")
        self.real_write(path, value)
        if path.name == "power":
            (self.power_on if value == "1" else self.power_off)(path.parent)

    def disk_name(self, folder: Path) -> str:
        return f"nullb{(folder / 'index').read_text().strip()}" if self.old_names else folder.name

    def power_on(self, folder: Path) -> None:
        index, self.indexes = self.indexes, self.indexes + 1
        (folder / "index").write_text(f"{index}\n")
        sectors = (int((folder / "size").read_text()) * MiB - self.shrink) // 512
        self.machine.disk(self.disk_name(folder), dev=f"{NULLB_MAJOR}:{index}", size=sectors,
                          **{"queue/logical_block_size": (folder / "blocksize").read_text().strip()})

    def power_off(self, folder: Path) -> None:
        name = self.disk_name(folder)
        for link in (self.machine.sys / "class" / "block" / name, self.machine.sys / "block" / name):
            link.unlink()
        for item in sorted((self.machine.sys / "devices" / "virtual" / "block" / name).rglob("*"), reverse=True):
            item.rmdir() if item.is_dir() else item.unlink()
        (self.machine.sys / "devices" / "virtual" / "block" / name).rmdir()

    def rmdir(self, folder: Path) -> None:
        for item in folder.iterdir():
            item.unlink()
        folder.rmdir()


def fake_machine(root: Path, loaded: bool = True, uid: int = 0) -> FakeMachine:
    machine = FakeMachine(root)
    machine.dev = Path("/dev")  # FakeMachine answers for /dev/<name> from its sysfs
    (machine.proc / "devices").write_text(DEVICES.format(major=NULLB_MAJOR))
    (machine.proc / "self" / "status").write_text(f"Name:\tpython\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n")
    (nullblk.configfs(machine) / "nullb").mkdir(parents=True)
    if loaded:
        (machine.sys / "module" / "null_blk").mkdir(parents=True)
        machine.add_mount("configfs", str(nullblk.configfs(machine)), "configfs")
    return machine


@pytest.fixture
def kernel(tmp_path, monkeypatch) -> FakeNullBlk:
    fake = FakeNullBlk(fake_machine(tmp_path / "machine"), undo.write_attribute)
    monkeypatch.setattr(undo, "write_attribute", fake.write)
    monkeypatch.setattr(undo, "remove_configfs_item", fake.rmdir)
    return fake


def made(kernel: FakeNullBlk, tmp_path: Path, **spec) -> NullBlk:
    return NullBlk(NullBlkSpec(**spec), kernel.machine.runner, kernel.machine, manifests=tmp_path)


def test_devices_are_made_as_specified_named_ours_and_the_guard_accepts_them(kernel, tmp_path):
    with made(kernel, tmp_path, devices=2, latency_ns=1_000_000, queue_depth=4, mbps=100) as nb:
        names = nb.names
        assert [d.path for d in nb.devices] == [f"/dev/{n}" for n in names]
        assert [d.id for d in nb.devices] == [f"nullb:{n}" for n in names]
        assert all(undo.NULLB_NAME.fullmatch(n) for n in names) and names[0][:-1] == names[1][:-1]
        facts = nb.facts()
        assert [(f["index"], f["completion_nsec"], f["hw_queue_depth"], f["mbps"], f["irqmode"]) for f in facts] == \
            [("0", "1000000", "4", "100", "2"), ("1", "1000000", "4", "100", "2")]
        Guard(nb.devices, [d.id for d in nb.devices], False, kernel.machine).check(nb.devices)  # raises if refused
        assert kernel.machine.find(nb.devices[1].id) == nb.devices[1]
        assert kernel.machine.runner.history == []  # loaded and mounted already: no command ran
    assert [f.name for f in (nullblk.configfs(kernel.machine) / "nullb").iterdir()] == []
    assert not (kernel.machine.sys / "block" / names[0]).exists() and list(tmp_path.glob("*.json")) == []


def test_udev_has_probed_every_device_before_it_is_handed_over(kernel, tmp_path):
    """Where there is a udev, it is waited for once all the devices are on: its probes read them, and on a capped
    device they would spend the budget a measurement is given."""
    kernel.machine.runner.installed = kernel.machine.runner.installed | {"udevadm"}
    with made(kernel, tmp_path, devices=2, mbps=2) as nb:
        assert len(nb.devices) == 2
        assert kernel.machine.runner.history == [("udevadm", "settle", "--timeout=30")]


def test_each_device_is_in_the_manifest_before_its_directory_exists(kernel, tmp_path, monkeypatch):
    seen, mkdir = [], pathlib.Path.mkdir

    def spy(path, *args, **kwargs):
        if path.parent.name == "nullb":
            manifest = json.loads(next(tmp_path.glob("flashscale-nullb-*.json")).read_text())["created"]
            seen.append((path.name, [e.get("name") for e in manifest if e["kind"] == "nullb"]))
        return mkdir(path, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "mkdir", spy)
    with made(kernel, tmp_path, devices=2) as nb:
        names = nb.names
    assert seen == [(names[0], [names[0]]), (names[1], names)]


def test_older_kernels_nullb_index_names_are_found_by_identity(tmp_path, monkeypatch):
    fake = FakeNullBlk(fake_machine(tmp_path / "machine"), undo.write_attribute, old_names=True)
    monkeypatch.setattr(undo, "write_attribute", fake.write)
    monkeypatch.setattr(undo, "remove_configfs_item", fake.rmdir)
    with made(fake, tmp_path, devices=2) as nb:
        expected = [(f"/dev/nullb{i}", f"nullb:{name}") for i, name in enumerate(nb.names)]
        assert [(d.path, d.id) for d in nb.devices] == expected


@pytest.mark.parametrize("fault, words", [
    ({"refuse": "hw_queue_depth"}, r"refused '8' in .*/hw_queue_depth"),
    ({"shrink": MiB}, r"has size_bytes 66060288, not 67108864")])
def test_a_device_the_kernel_did_not_make_as_asked_is_refused_and_everything_undone(kernel, tmp_path, fault, words):
    for attr, value in fault.items():
        setattr(kernel, attr, value)
    with pytest.raises(UnsupportedError, match=words):
        with made(kernel, tmp_path, devices=2):
            pass
    assert list((nullblk.configfs(kernel.machine) / "nullb").iterdir()) == []
    assert list((kernel.machine.sys / "block").iterdir()) == [] and list(tmp_path.glob("*.json")) == []


def test_null_blk_is_loaded_and_configfs_mounted_where_they_are_not_and_the_mount_undone(tmp_path, monkeypatch):
    fake = FakeNullBlk(fake_machine(tmp_path / "machine", loaded=False), undo.write_attribute)
    monkeypatch.setattr(undo, "write_attribute", fake.write)
    monkeypatch.setattr(undo, "remove_configfs_item", fake.rmdir)
    config = str(nullblk.configfs(fake.machine))
    with made(fake, tmp_path) as nb:
        assert fake.machine.mounted(config).fstype == "configfs"
        assert nb.notes == ["loaded null_blk with nr_devices=0", f"mounted configfs at {config}"]
    assert fake.machine.runner.history == [("modprobe", "null_blk", "nr_devices=0"),
                                           ("mount", "-t", "configfs", "configfs", config), ("umount", config)]


def test_a_kernel_without_null_blk_or_root_is_refused_before_anything_is_made(tmp_path):
    machine = fake_machine(tmp_path / "machine", loaded=False)
    missing = "modprobe: FATAL: Module null_blk not found"
    machine.runner.replies[("modprobe",)] = Completed(("modprobe",), 1, "", missing)
    with pytest.raises(UnsupportedError, match="this kernel has no null_blk.*Module null_blk not found"):
        with NullBlk(NullBlkSpec(), machine.runner, machine, manifests=tmp_path):
            pass
    assert machine.runner.history == [("modprobe", "null_blk", "nr_devices=0")]
    user = fake_machine(tmp_path / "user", uid=1000)
    with pytest.raises(UnsupportedError, match="needs root"):
        with NullBlk(NullBlkSpec(), user.runner, user, manifests=tmp_path):
            pass
    assert user.runner.history == [] and list(tmp_path.glob("*.json")) == []


# ---- the undo, for a teardown and for reap ------------------------------------------------------------------------
def test_reap_powers_off_and_removes_a_dead_runs_devices_but_never_one_not_named_ours(kernel, tmp_path):
    nb = made(kernel, tmp_path, devices=1).__enter__()
    folder, manifest = nb.folders[0], nb.teardown.manifest
    foreign, elsewhere = folder.parent / "someones0", tmp_path / "elsewhere" / "fs0123abcd0"
    for other in (foreign, elsewhere):
        other.mkdir(parents=True)
        (other / "power").write_text("1\n")
    data = json.loads(manifest.read_text())
    data["created"] += [{"kind": "nullb", "path": str(foreign), "name": "someones0"},
                        {"kind": "nullb", "path": str(foreign), "name": folder.name},
                        {"kind": "nullb", "path": str(elsewhere), "name": elsewhere.name}]  # not in configfs
    manifest.write_text(json.dumps(data))
    nb.teardown = None  # the run dies: only its manifest is left
    [outcome] = reap.reap([manifest], runner=kernel.machine.runner, system=kernel.machine)
    assert outcome.state == "reaped", outcome
    assert not folder.exists() and not (kernel.machine.sys / "block" / folder.name).exists()
    assert all((other / "power").read_text() == "1\n" for other in (foreign, elsewhere))
    assert undo.present("nullb", {"path": str(foreign), "name": "someones0"}, kernel.machine) is None


def test_a_device_that_will_not_power_off_is_left_named_in_the_manifest(kernel, tmp_path):
    nb = made(kernel, tmp_path, devices=1).__enter__()
    kernel.refuse = "power"
    with pytest.raises(FlashscaleError, match=rf"nullb .*{nb.names[0]}.*refused '0'"):
        nb.close()
    left = json.loads(next(tmp_path.glob("flashscale-nullb-*.json")).read_text())["created"]
    assert [e["name"] for e in left if e["kind"] == "nullb"] == nb.names
    kernel.refuse = None
    undo.undo("nullb", left[0], kernel.machine.runner, kernel.machine)
    assert not nb.folders[0].exists()


def test_the_errno_of_a_refused_directory_is_named(kernel, tmp_path, monkeypatch):
    def taken(path, *args, **kwargs):
        raise OSError(errno.EEXIST, "File exists")

    monkeypatch.setattr(pathlib.Path, "mkdir", taken)
    with pytest.raises(UnsupportedError, match="refused a device named fs[0-9a-f]{8}0 in .*nullb: File exists"):
        with made(kernel, tmp_path):
            pass


def test_a_directory_already_there_is_not_ours_and_is_left_alone(kernel, tmp_path, monkeypatch):
    monkeypatch.setattr(nullblk.secrets, "token_hex", lambda n: "0badcafe")
    taken = nullblk.configfs(kernel.machine) / "nullb" / "fs0badcafe0"
    taken.mkdir()
    (taken / "power").write_text("1\n")
    with pytest.raises(UnsupportedError, match="fs0badcafe0 exists already"):
        with made(kernel, tmp_path):
            pass
    assert (taken / "power").read_text() == "1\n" and list(tmp_path.glob("*.json")) == []
