"""What a dead run left running in its own cgroup is stopped before the next run reaps its manifests, and nothing
else is: a process of ours outside that cgroup keeps running (real cgroup, real processes)."""
from __future__ import annotations

import pytest

from flashscale.system import lock, processes
from flashscale.system.commands import Runner
from flashscale.system.devices import System
from flashscale.system.teardown import Teardown, manifest_dir
from flashscale.system.throttle import Throttle

pytestmark = pytest.mark.root


def test_only_the_processes_in_the_dead_run_s_own_cgroup_are_stopped(tmp_path):
    system = System()
    teardown = Teardown(manifest_dir() / f"flashscale-leftovers-{tmp_path.name}.json", Runner(), system)
    try:
        throttle = Throttle.create(system, teardown)
        inside = processes.start(["sleep", "600"], teardown, tmp_path / "inside.log",
                                 cgroup_procs=[throttle.procs_file])
        outside = processes.start(["sleep", "600"], teardown, tmp_path / "outside.log")
        assert lock._members(throttle.path) == {inside.pid}
        lock._stop_leftovers([teardown.manifest], wait_s=2)
        assert not inside.running() and outside.running()
        assert lock._members(throttle.path) == set()
        lock._stop_leftovers([teardown.manifest], wait_s=2)  # nothing left to stop: returns at once
        assert outside.running()
    finally:
        teardown.close()
    assert not outside.running()
