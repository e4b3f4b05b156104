"""The one place commands run: exit status and stderr are always checked, and a failure says what failed."""
from __future__ import annotations

import sys

import pytest

from flashscale.errors import CommandError, UnsupportedError
from flashscale.system.commands import NO_PID, Completed, RecordingRunner, Runner

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


def test_a_background_command_starts_at_once_its_output_to_a_log_file(tmp_path):
    runner = Runner()
    argv = (sys.executable, "-c", "import sys; print('serving', flush=True); sys.stdin.read()")
    server = runner.spawn(argv, tmp_path / "server.log")
    try:
        assert server.poll() is None and runner.history == [argv]
    finally:
        server.stdin.close()  # end of its input: it ends
    assert server.wait(timeout=30) == 0
    assert (tmp_path / "server.log").read_text() == "serving\n"


def test_a_background_command_behind_a_gate_runs_only_when_told(tmp_path):
    gate = ("sh", "-c", 'read -r go && exec "$@"', "gate")
    held = Runner().spawn(["echo", "running"], tmp_path / "held.log", gate=gate)
    assert held.poll() is None and (tmp_path / "held.log").read_text() == ""
    held.stdin.write(b"go\n")
    held.stdin.close()
    assert held.wait(timeout=30) == 0 and (tmp_path / "held.log").read_text() == "running\n"


def test_a_background_command_that_is_not_installed_is_named_and_nothing_starts(tmp_path):
    runner = Runner()
    with pytest.raises(UnsupportedError, match="'flashscale-no-such-program' is not installed"):
        runner.spawn(["flashscale-no-such-program", "--serve"], tmp_path / "x.log", gate=("sh", "-c", "exit 1"))
    assert runner.history == [] and not (tmp_path / "x.log").exists()


def test_the_recording_runner_records_a_background_command_and_starts_nothing(tmp_path):
    runner = RecordingRunner(replies={("qemu-nbd",): Completed(("qemu-nbd",), 1, "", "address in use\n")})
    ended = runner.spawn(["qemu-nbd", "--port=10809", "/dev/loop7"], tmp_path / "nbd.log")
    assert runner.history == [("qemu-nbd", "--port=10809", "/dev/loop7")]
    assert ended.poll() == ended.wait() == 1 and ended.pid == NO_PID
    assert (tmp_path / "nbd.log").read_text() == "address in use\n"
    with pytest.raises(UnsupportedError, match="'fio' is not installed"):
        RecordingRunner(installed=frozenset()).spawn(["fio", "--server"], tmp_path / "fio.log")


def test_a_group_is_stopped_and_reaped_even_where_an_interrupted_wait_left_popen_s_lock_held(tmp_path):
    """CPython's Popen._wait with a timeout takes its _waitpid_lock and only then enters the try that releases it:
    a KeyboardInterrupt between the two (SIGINT during commands.wait) leaves it held, and Popen's poll and wait then
    never reap the child. A campaign interrupted so hung in stop_group's wait on a zombie fio (found running the root
    tests two at a time); stop_group reaps with waitpid itself now. The lock is held here as that interrupt leaves it."""
    import threading

    from flashscale.system.commands import stop_group

    proc = Runner().spawn([sys.executable, "-c", "import time; time.sleep(60)"], tmp_path / "log")
    assert proc._waitpid_lock.acquire(blocking=False)  # what the interrupted wait left
    stopper = threading.Thread(target=stop_group, args=(proc,), kwargs={"grace_s": 1.0}, daemon=True)
    stopper.start()
    stopper.join(timeout=30)
    assert not stopper.is_alive(), "stop_group hung on the lock the interrupted wait left"
    assert proc.returncode in (-15, -9)
