"""Background processes: started through the runner (``Runner.spawn``), recorded before they run, and signalled only
while their pid is still the process recorded (pid and start time). A pid another process took since, or a record
without a start time, is never signalled. Stopping a real process by its record is in test_netns.py."""
from __future__ import annotations

import json
import os
import time

import pytest

from flashscale.errors import UnsupportedError
from flashscale.system import lock, processes, undo
from flashscale.system.commands import NO_PID, Completed, RecordingRunner, Runner
from flashscale.system.devices import System
from flashscale.system.teardown import Teardown

from test_devices import FakeMachine


def test_a_recorded_process_is_ours_only_while_its_pid_has_the_recorded_start_time(tmp_path):
    machine = FakeMachine(tmp_path)
    machine.process(4242, start=1000)
    machine.process(4243, start=1000, state="Z")  # ended, not yet collected
    assert processes.still_ours(4242, 1000, machine)
    assert not processes.still_ours(4242, 999, machine)  # the process recorded ended; another took its pid
    assert not processes.still_ours(4242, None, machine)  # no start time recorded: proves nothing
    assert not processes.still_ours(4243, 1000, machine) and not processes.still_ours(4244, 1000, machine)
    # whether a run may still be in progress (a lock's holder, a manifest's writer) is asked the same way
    assert processes.may_still_run(4242, 1000, machine) and not processes.may_still_run(4242, 999, machine)
    assert processes.may_still_run(4242, None, machine) and not processes.may_still_run(4244, None, machine)
    assert not lock.alive(lock.Holder(4242, 999, ""), machine) and lock.alive(lock.Holder(4242, None, ""), machine)


def test_a_process_recorded_without_its_start_time_is_never_signalled_and_named_while_its_pid_runs(tmp_path):
    system = System()
    teardown = Teardown(tmp_path / "manifest.json", Runner(), system)
    sleeper = processes.start(["sleep", "60"], teardown, tmp_path / "sleep.log")
    try:
        record = {"process": sleeper.pid, "argv": ["fio", "--server"]}  # a record that lacks "start"
        with pytest.raises(UnsupportedError, match=f"process {sleeper.pid} \\(fio --server\\) was recorded without"):
            undo.undo("process", record, teardown.runner, system)
        processes.stop(sleeper.pid, None, system)
        assert sleeper.running()
    finally:
        teardown.close()
    assert not sleeper.running()
    undo.undo("process", record, teardown.runner, system)  # its pid is gone: nothing left to name


def test_a_child_stopped_by_its_record_is_collected_not_left_a_zombie(tmp_path):
    """The teardown's undo alone stops it (an emulated cluster's servers): a zombie would still count in its cgroup,
    which could then not be removed."""
    teardown = Teardown(tmp_path / "manifest.json", Runner(), System())
    sleeper = processes.start(["sleep", "60"], teardown, tmp_path / "sleep.log")
    teardown.close()
    with pytest.raises(ChildProcessError):  # its exit was collected: no zombie to wait for
        os.waitpid(sleeper.pid, os.WNOHANG)
    assert sleeper.popen.poll() is not None


def test_a_stop_returns_once_nothing_of_the_group_still_runs(tmp_path):
    """A leader that ends at once while another of its group ends a moment later, as qemu-nbd's threads outlive its
    main thread: nothing of it may still hold a device or a cgroup when the stop returns."""
    system = System()
    teardown = Teardown(tmp_path / "manifest.json", Runner(), system)
    leader = processes.start(["sh", "-c", "(trap '' TERM; sleep 1) & echo $!; exec sleep 60"], teardown,
                             tmp_path / "group.log")
    deadline = time.monotonic() + 10
    while not leader.output().strip() and time.monotonic() < deadline:
        time.sleep(0.05)
    member = int(leader.output())
    teardown.close()
    assert system.process_start(member) is None and leader.popen.poll() is not None


def test_a_process_is_started_through_the_teardown_s_runner(tmp_path):
    """With a recording runner nothing runs: its plan is the program's argv, recorded in the manifest as well."""
    runner = RecordingRunner(replies={("fio",): Completed(("fio",), 0, "fio: server listening\n")})
    teardown = Teardown(tmp_path / "manifest.json", runner, System(runner=runner))
    server = processes.start(["fio", "--server=10.213.0.2,8765"], teardown, tmp_path / "server.log")
    assert runner.history == [("fio", "--server=10.213.0.2,8765")]
    [entry] = json.loads((tmp_path / "manifest.json").read_text())["created"]
    assert (entry["kind"], entry["process"], entry["start"]) == ("process", NO_PID, None)
    assert entry["argv"] == ["fio", "--server=10.213.0.2,8765"]
    assert server.output() == "fio: server listening\n" and not server.running()
    teardown.close()
    assert not (tmp_path / "manifest.json").exists()


def test_a_program_that_is_not_installed_is_named_and_nothing_is_recorded(tmp_path):
    runner = RecordingRunner(installed=frozenset({"fio"}))
    teardown = Teardown(tmp_path / "manifest.json", runner, System(runner=runner))
    with pytest.raises(UnsupportedError, match="'qemu-nbd' is not installed"):
        processes.start(["qemu-nbd", "/dev/loop7"], teardown, tmp_path / "nbd.log")
    assert runner.history == [] and teardown.entries == []
