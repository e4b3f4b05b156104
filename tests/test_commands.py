"""The one place commands run: exit status and stderr are always checked, and a failure says what failed."""
from __future__ import annotations

import sys

import pytest

from flashscale.errors import CommandError, UnsupportedError
from flashscale.system.commands import RecordingRunner, Runner

FAIL = "import sys; sys.stderr.write('no such device: /dev/nvme9n1\\n'); sys.exit(3)"


def test_a_failing_command_raises_command_error_with_its_status_and_stderr():
    with pytest.raises(CommandError) as caught:
        Runner().run([sys.executable, "-c", FAIL])
    assert caught.value.returncode == 3
    assert "no such device: /dev/nvme9n1" in caught.value.stderr
    assert "no such device" in str(caught.value)


def test_an_accepted_exit_status_returns_its_output():
    done = Runner().run([sys.executable, "-c", FAIL], ok_codes=(0, 3))
    assert done.returncode == 3 and "no such device" in done.stderr


def test_a_missing_program_is_unsupported_and_a_slow_one_is_stopped():
    with pytest.raises(UnsupportedError, match="not installed"):
        Runner().run(["flashscale-no-such-program"])
    with pytest.raises(CommandError, match="timed out after 0.5 s"):
        Runner().run([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5)


def test_the_recording_runner_records_exact_argv_and_runs_nothing():
    runner = RecordingRunner()
    runner.run(["mdadm", "--create", "/dev/md/x", "--level=0"])
    assert runner.history[-1] == ("mdadm", "--create", "/dev/md/x", "--level=0")
