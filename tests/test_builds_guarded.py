"""BUILDS=2 on a test bed: a layout's second build goes through the same guard as its first. The test bed's devices
on a fake machine (``test_devices.FakeMachine``, whose kernel obeys the commands a RecordingRunner records), the
place's own loop of builds (``Place.run``), a sweep that measures nothing: a device whose identity is not the one
confirmed is refused, naming it, before any destructive step on it, whether it changed before the first build or
between the first and the second (a drive swapped, a namespace renumbered while the first build was measured)."""
from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from flashscale.arrays.emulated import ArraySpec
from flashscale.campaigns import testbed
from flashscale.errors import RefusedError
from flashscale.measure.sweep import Sweep

from test_devices import ERASING, FakeMachine

DESTRUCTIVE = {"blkdiscard", "wipefs", "mkfs.xfs", "mkfs.ext4", "mkfs.btrfs", "mdadm", "dd", "fio", "nvme", "mount"}
IDS = ["eui:0025385b71b00000", "eui:0025385b71b00001"]
INTRUDER = "eui:00253800deadbeef"


@dataclass
class Sweeping:
    """What ``Place.run`` asks of a recorder, measuring nothing: each build's layout noted; ``between`` runs once
    the given build has been swept (the machine changed while it was measured)."""

    sweep_spec: Sweep
    between: dict = field(default_factory=dict)
    campaign: str = "guarded"
    run_id: str = "r1"
    build: int = 0
    swept: list = field(default_factory=list)

    def building(self, name: str) -> None:
        pass

    def sweep(self, layout, cgroup_procs, phase: str = "measure") -> None:
        self.swept.append((layout.name, self.build, layout.targets))
        if self.build in self.between:
            self.between.pop(self.build)()


class Signing(FakeMachine):
    """The fake machine, with signatures that appear on a device after it was erased (``sign``), until it is
    erased again."""

    late: dict = {}
    since: int = 0

    def sign(self, name: str, kind: str) -> None:
        self.late, self.since = {name: [kind]}, len(self.runner.history)

    def signatures(self, path: str) -> list[str]:
        erased = any(argv[0] in ERASING and path in argv for argv in self.runner.history[self.since:])
        return super().signatures(path) + ([] if erased else list(self.late.get(self.name_of(path), [])))


def writes_to(history, path: str) -> list[tuple]:
    return [argv for argv in history if argv[0] in DESTRUCTIVE and path in argv]


@pytest.fixture
def bed(tmp_path, monkeypatch):
    machine = Signing(tmp_path / "machine")
    for index, ident in enumerate(IDS):
        machine.disk(f"nvme{index}n1", eui=ident.split(":")[1], nsid="1")
    paths = [f"/dev/nvme{index}n1" for index in range(len(IDS))]  # the fake machine's names, as /dev's
    machine.find = lambda ident: next(d for d in map(machine.identify, paths) if d.id == ident)
    (tmp_path / "bed.yaml").write_text("devices:\n" + "".join(f"  - {i}\n" for i in IDS))
    (tmp_path / "manifests").mkdir()
    monkeypatch.setattr(testbed, "manifest_dir", lambda: tmp_path / "manifests")  # the builds': this test's own
    place = testbed.OnTestBed(machine.runner, ArraySpec(devices=2), bed=testbed.Bed(
        str(tmp_path / "bed.yaml"), confirm=tuple(IDS), dry_run=False, campaign="guarded"))
    place.system = machine  # the place reads the fake machine, as its runner runs on it
    return machine, place


def swap(machine: FakeMachine) -> None:
    """Another drive now answers at /dev/nvme1n1: its identity is not the one the user confirmed."""
    (machine.node("nvme1n1") / "eui").write_text(INTRUDER.split(":")[1] + "\n")


def test_both_builds_go_through_the_guard_and_are_each_undone(bed, tmp_path):
    machine, place = bed
    recorder = Sweeping(Sweep(rw=["write"], bs=(1048576,), numjobs=(1,), builds=2, precondition=False))
    place.check(["jbod"])
    place.run(["jbod"], recorder)
    assert [(name, build) for name, build, _ in recorder.swept] == [("jbod", 0), ("jbod", 1)]
    for path in ("/dev/nvme0n1", "/dev/nvme1n1"):  # erased and made again on each build
        assert [argv[0] for argv in writes_to(machine.runner.history, path)].count("blkdiscard") == 2
    assert list((tmp_path / "manifests").glob("*.json")) == []  # each build's manifest undone


@pytest.mark.parametrize("changed_before", [0, 1])
def test_a_device_not_the_confirmed_one_is_refused_on_either_build_before_anything_touches_it(bed, changed_before):
    """Changed before the first build (``check`` has passed: the guard of the build itself refuses) or between
    the first and the second: the same refusal, naming the path, the identity now there and the one confirmed;
    the other device is not erased either on that build; the first build, where it ran, was undone."""
    machine, place = bed
    recorder = Sweeping(Sweep(rw=["write"], bs=(1048576,), numjobs=(1,), builds=2, precondition=False))
    place.check(["jbod"])  # both devices confirmed and free at the start
    if changed_before == 0:
        swap(machine)
    else:
        recorder.between[0] = lambda: swap(machine)
    before = {}

    def sweep_then_note(layout, procs, phase="measure", sweep=recorder.sweep):
        sweep(layout, procs, phase)
        before.setdefault("history", len(machine.runner.history))
    recorder.sweep = sweep_then_note
    with pytest.raises(RefusedError) as refused:
        place.run(["jbod"], recorder)
    message = str(refused.value)
    assert "/dev/nvme1n1 (" + IDS[1] + ")" in message
    assert f"no longer the named device: {INTRUDER!r} sits there now, not {IDS[1]!r}" in message
    assert [build for _, build, _ in recorder.swept] == list(range(changed_before))
    history = machine.runner.history
    after = history[before["history"]:] if changed_before else history  # from the refused build's start
    teardown = [argv for argv in after if argv[0] == "umount"]
    assert len(teardown) == (2 if changed_before else 0)  # the first build's two mounts undone, nothing more
    for path in ("/dev/nvme0n1", "/dev/nvme1n1"):
        assert writes_to(after, path) == [], (path, after)
    if changed_before:  # the first build did erase and build on both: the guard let the confirmed devices through
        assert all(writes_to(history, path) for path in ("/dev/nvme0n1", "/dev/nvme1n1"))


@pytest.mark.parametrize("left, refused", [("xfs", False), ("zfs_member", True)])
def test_between_builds_only_the_campaigns_own_signatures_are_expected(bed, left, refused):
    """The first build erased the devices (claimed): its own kind of signature (xfs, left by a teardown that did
    not wipe) is expected on the second; another's (a ZFS pool made on it between the builds) is refused by name,
    as on a device never erased, and nothing of the second build runs."""
    machine, place = bed
    recorder = Sweeping(Sweep(rw=["write"], bs=(1048576,), numjobs=(1,), builds=2, precondition=False))
    recorder.between[0] = lambda: machine.sign("nvme1n1", left)
    place.check(["jbod"])
    if not refused:
        place.run(["jbod"], recorder)
        assert [build for _, build, _ in recorder.swept] == [0, 1]
        return
    with pytest.raises(RefusedError, match=r"/dev/nvme1n1 \(" + IDS[1] + r"\): it carries a zfs_member signature "
                       "the plan did not say to wipe"):
        place.run(["jbod"], recorder)
    assert [build for _, build, _ in recorder.swept] == [0]
    blkdiscards = [argv for argv in machine.runner.history if argv[0] == "blkdiscard"]
    assert len(blkdiscards) == 2  # the first build's two erases only
