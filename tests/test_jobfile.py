"""A user's job file: read with fio's rules, rewritten to the layout (only targets, logs and swept options change),
grouped by stonewall / new_group; every escaping option refused before anything runs."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import sha256
from flashscale.cli import main as cli_main
from flashscale.errors import ConfigError
from flashscale.measure import jobrun
from flashscale.measure.jobfile import MARK, JobFile, JobFileError
from flashscale.system.commands import Runner

CORPUS = Path(__file__).parent / "jobfiles"
DIRS = ("/mnt/fs/t0", "/mnt/fs/t1")


def changed(line) -> bool:
    """What the rewrite may change, said independently of the code: includes, targets, logs, swept options."""
    absolute = line.kind == "option" and line.key in ("directory", "filename") and (line.value or "").startswith("/")
    return line.kind == "include" or absolute or line.key.startswith("write_") or line.key in ("numjobs",
                                                                                              "group_reporting")


@pytest.mark.parametrize("name", ["including", "logs", "multiple_globals", "stonewall_groups", "spelling"])
def test_rewrite_keeps_every_other_line_byte_for_byte_in_order(name):
    jobfile = JobFile.read(CORPUS / f"{name}.fio")
    out = jobfile.rewrite(DIRS, "/runs/raw", {"numjobs": 3}).splitlines()
    assert [line for line in out if not line.endswith(MARK) and MARK + ":" not in line] == \
        [line.text for line in jobfile.lines if not changed(line)]
    sources = [Path(p).read_text() for p in {line.source for line in jobfile.lines}]
    assert sum(len(text.splitlines()) for text in sources) == len(jobfile.lines)  # every line of every file read
    assert all("/runs/raw/" in line for line in out if line.startswith("write_"))


def test_targets_are_replaced_and_sections_spread_over_them():
    out = JobFile.read(CORPUS / "basic_randread.fio").rewrite(DIRS, "/raw")
    assert "/dev/nvme0n1" not in out and "directory=/mnt/fs/t0:/mnt/fs/t1" + MARK in out
    out = JobFile.read(CORPUS / "stonewall_groups.fio").rewrite(DIRS, "/raw")
    # mixed-a and mixed-b run together: the second starts on the second target
    assert "[mixed-b]\ndirectory=/mnt/fs/t1:/mnt/fs/t0" + MARK in out
    assert "[read-back]\ndirectory=/mnt/fs/t0:/mnt/fs/t1" + MARK in out  # a new group starts again at t0
    devices = JobFile.read(CORPUS / "including.fio").rewrite(["/dev/loop7", "/dev/loop8"], "/raw")
    assert "filename=/dev/loop7:/dev/loop8" in devices and "/mnt/scratch" not in devices


def test_swept_axes_override_the_files_values_everywhere():
    jobfile = JobFile.read(CORPUS / "sections_global.fio")
    out = jobfile.rewrite(DIRS, "/raw", {"bs": 8192, "numjobs": 4})
    assert "bs=64k" not in out and "bs=128k" not in out and "numjobs=2" not in out
    assert out.count("numjobs=4" + MARK) == 2 and out.count("bs=8192" + MARK) == 2  # global + seq-write's own
    assert jobrun.describe_groups(jobfile, {"bs": 8192, "numjobs": 4}) == [
        {"group": "seq-read", "rw": "read", "bs": 8192, "numjobs": 8, "iodepth": 1}]


def test_groups_follow_stonewall_and_new_group():
    assert JobFile.read(CORPUS / "stonewall_groups.fio").groups() == [["fill"], ["read-back"], ["mixed-a", "mixed-b"]]
    assert JobFile.read(CORPUS / "engines.fio").groups() == [["libaio", "io_uring", "psync", "mmap"]]


def test_environment_variables_are_expanded_and_checked(monkeypatch):
    jobfile = JobFile.read(CORPUS / "env_vars.fio", env={"BS": "16k", "SIZE": "4m", "DEPTH": "4"})
    out = jobfile.rewrite(DIRS, "/raw")
    assert "bs=16k" + MARK in out and "${" not in out.split("\n", 2)[2]
    escaping = JobFile.read(CORPUS / "refused/filename_env_unset.fio", env={"FLASHSCALE_SURELY_UNSET_VARIABLE":
                                                                         "../../../etc/shadow"})
    with pytest.raises(JobFileError, match=r"filename_env_unset.fio:4: filename: \.\./\.\./\.\./etc/shadow"):
        escaping.check(DIRS)


def test_sizes_read_as_fio_reads_them():
    assert [jobrun.size_bytes(v) for v in ("4096", "4k", "64KiB", "1M", "4k-64k", "8k,16k")] == \
        [4096, 4096, 65536, 2**20, 4096, 8192]
    with pytest.raises(ConfigError, match="'fast'"):
        jobrun.size_bytes("fast")


def test_targets_must_be_absolute_and_of_one_kind():
    jobfile = JobFile.read(CORPUS / "rwmix.fio")
    for bad in ([], ["relative"], ["/mnt/a", "/dev/loop1"], ["/mnt/a;b"]):
        with pytest.raises(ConfigError, match="target"):
            jobfile.rewrite(bad, "/raw")


def test_cli_prints_the_rewrite_or_the_refusal(capsys, tmp_path):
    assert cli_main(["jobfile", str(CORPUS / "rwmix.fio"), "--target", str(tmp_path), "-s", "iodepth=2"]) == 0
    printed = capsys.readouterr().out
    assert f"directory={tmp_path}" + MARK in printed and "iodepth=2" + MARK in printed and "rwmixread=70\n" in printed
    assert cli_main(["jobfile", str(CORPUS / "refused/opendir_outside.fio"), "--target", str(tmp_path)]) == 1
    assert "opendir_outside.fio:4: opendir: /home" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # nothing written


REFUSED = sorted((CORPUS / "refused").glob("*.fio"))


@pytest.mark.root
@pytest.mark.parametrize("path", REFUSED, ids=[p.stem for p in REFUSED])
def test_each_escaping_option_is_refused_before_anything_runs(path, foreign_loop, tmp_path):
    """Pointed at a bystander loop device where the option takes a path: refused, fio never started."""
    text = re.sub(r"/dev/sd[a-z]|/etc/buffers", foreign_loop["path"], path.read_text())
    job = tmp_path / "jobs" / path.name
    job.parent.mkdir()
    job.write_text(text)
    (tmp_path / "including.fio").write_text("[x]\n")  # what include_outside.fio reaches for
    runner = Runner()
    target = tmp_path / "target"
    target.mkdir()
    option = path.read_text().splitlines()[0].split()[3]
    with pytest.raises(JobFileError, match=f"{path.name}:[0-9]+: {re.escape(option)}" if option != "include" else
                       "include"):
        jobrun.run(JobFile.read(job), [str(target)], tmp_path / "raw", runner)
    assert runner.history == [] and not (tmp_path / "raw").exists() and list(target.iterdir()) == []
    assert sha256(foreign_loop["path"]) == foreign_loop["sha256"]


@pytest.fixture
def two_loop_devices(tmp_path):
    """Two loop devices of 64 MiB made for the test (the layout's devices), detached afterwards, by name."""
    import subprocess

    made = []
    for index in range(2):
        backing = tmp_path / f"layout{index}.img"
        backing.write_bytes(b"\xab" * (64 << 20))
        made.append(subprocess.run(["losetup", "--find", "--show", str(backing)], check=True, capture_output=True,
                                   text=True).stdout.strip())
    yield made
    for path in made:
        subprocess.run(["losetup", "--detach", path], check=False)


@pytest.mark.root
def test_trims_and_a_drive_file_run_on_the_layouts_devices_only(two_loop_devices, foreign_loop, tmp_path):
    before = [sha256(d) for d in two_loop_devices]
    rows = jobrun.run(JobFile.read(CORPUS / "trim.fio"), two_loop_devices, tmp_path / "trim", Runner())
    assert rows[0]["rw"] == "trim"
    assert all(sha256(d) != b for d, b in zip(two_loop_devices, before))  # both devices were trimmed
    rows = jobrun.run(JobFile.read(CORPUS / "basic_randread.fio"), two_loop_devices, tmp_path / "read", Runner(),
                      overrides={"numjobs": 2, "iodepth": 4})
    assert rows[0]["read_bw_bytes"] > 0 and rows[0]["numjobs"] == 2 and rows[0]["iodepth"] == 4
    assert "filename=" + ":".join(two_loop_devices) in (tmp_path / "read" / "job.fio").read_text()
    assert sha256(foreign_loop["path"]) == foreign_loop["sha256"]
