"""`flashscale run --dry-run` and `--estimate` (issue 52, item 4): a campaign checked as its run checks it, every bad
value named before anything is priced, and what the run would create and run printed, with nothing created and no
command run. The issue's own cases first, then every runner of runners/, then hostile values (hypothesis)."""
from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import papermill
import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from flashscale import cli
from flashscale.campaigns import campaign, dry_run, parameters
from flashscale.errors import ConfigError, FlashscaleError
from flashscale.notebooks import execute
from flashscale.system.commands import RecordingRunner
from flashscale.system.devices import System
from flashscale.system.teardown import manifest_dir

ROOT = Path(__file__).resolve().parents[1]
RUNNERS = sorted((ROOT / "runners").glob("*.yaml"))
QUICKSTART = str(ROOT / "runners" / "quickstart.yaml")


def run(capsys, *argv) -> tuple[int, str, str]:
    """``flashscale run ARGV``: its status, stdout and stderr (an exception other than SystemExit fails the test:
    that would be a traceback)."""
    status = cli.main(["run", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


def refused(capsys, *argv) -> str:
    """``flashscale run ARGV`` refused: status 1, nothing priced or planned on stdout, the message on stderr."""
    status, out, err = run(capsys, *argv)
    assert status == 1 and out == "" and err.startswith("flashscale run: error: "), (status, out, err)
    assert "Traceback" not in err
    return err


def snapshot() -> dict[str, list[str]]:
    """What a dry run must leave as it was: the checkout's data and reports, the manifests, /dev/shm."""
    folders = [ROOT / "data", ROOT / "reports", manifest_dir(), Path("/dev/shm")]
    return {str(f): sorted(str(p) for p in f.rglob("*")) if f.is_dir() else [] for f in folders}


# The cases, each as a user typed it.

def test_an_unknown_layout_is_named_not_the_reference(capsys):
    err = refused(capsys, QUICKSTART, "-p", "LAYOUTS=[md-raid1]", "--dry-run")
    assert "'md-raid1' (did you mean 'md-raid0'?)" in err and "REFERENCE" not in err


def test_an_unknown_layout_among_known_ones_is_not_priced(capsys):
    err = refused(capsys, QUICKSTART, "-p", "LAYOUTS=[single, jbod, md-raid1, raid5]", "--estimate")
    assert "'md-raid1'" in err and "'raid5'" in err


def test_a_missing_test_bed_is_not_priced(capsys, tmp_path):
    missing = tmp_path / "nowhere" / "testbed.yaml"
    err = refused(capsys, QUICKSTART, "-p", f"TESTBED={missing}", "--estimate")
    assert f"TESTBED={str(missing)!r}" in err and "no such file or folder" in err


def test_a_missing_import_folder_is_not_priced(capsys):
    err = refused(capsys, ROOT / "runners" / "imported.yaml", "-p", "IMPORTED=/nope", "--estimate")
    assert "IMPORTED='/nope'" in err


def test_a_dangling_link_is_said_so(capsys, tmp_path):
    link = tmp_path / "bed.yaml"
    link.symlink_to(tmp_path / "gone.yaml")
    err = refused(capsys, QUICKSTART, "-p", f"TESTBED={link}", "--dry-run")
    assert "a symbolic link that leads nowhere" in err


def test_dry_run_true_means_the_dry_run(capsys):
    before = snapshot()
    status, out, _ = run(capsys, QUICKSTART, "-p", "DRY_RUN=true")
    assert status == 0 and "dry run of campaign 'quickstart': nothing was touched" in out
    assert snapshot() == before


def test_dry_run_false_where_no_test_bed_is_measured_is_refused(capsys):
    err = refused(capsys, QUICKSTART, "-p", "DRY_RUN=false", "--estimate")
    assert "DRY_RUN=False does nothing in this campaign" in err


def test_a_parameter_that_does_nothing_here_is_said_so(capsys):
    status, out, _ = run(capsys, QUICKSTART, "-p", "CONFIRM=[a]", "-p", "WIPE=[xfs]", "--estimate")
    assert status == 0 and "CONFIRM=['a'] does nothing here: without TESTBED no real device is erased" in out
    assert "WIPE=['xfs'] does nothing here" in out and "estimate: " in out


def test_a_notebook_outside_notebooks_is_refused(capsys, tmp_path):
    for name in ("../README", "/etc/passwd", "..", ".hidden", "sub/quickstart"):
        file = tmp_path / "c.yaml"
        file.write_text(yaml.safe_dump({"campaign": "c", "notebooks": [name]}))
        assert "notebook" in refused(capsys, file, "--dry-run")


@pytest.mark.parametrize("text", ["[1, 2]", "just words", "7", "", "campaign: [", "\xff\xfe"])
def test_a_campaign_file_that_is_not_a_mapping_is_refused(capsys, tmp_path, text):
    file = tmp_path / "c.yaml"
    file.write_bytes(text.encode("latin-1"))
    assert str(file) in refused(capsys, file, "--dry-run")


def test_an_override_that_is_not_yaml_is_refused(capsys):
    assert "LAYOUTS=[a" in refused(capsys, QUICKSTART, "-p", "LAYOUTS=[a", "--dry-run")


def test_analyze_names_a_missing_layout_column(capsys, tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("rw,bs,numjobs,iodepth,devices,bw_bytes\nread,4096,1,1,1,100\n")
    status = cli.main(["analyze", str(table), "--reference", "jbod"])
    err = capsys.readouterr().err
    assert status == 1 and "lack column(s) needed for the analysis: 'layout'" in err and "'bw_bytes'" in err


# What the dry run prints, and that it creates nothing and runs nothing.

def test_the_quickstart_dry_run_prints_the_array_the_commands_and_the_estimate(capsys):
    before = snapshot()
    status, out, err = run(capsys, QUICKSTART, "--dry-run")
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("  quickstart: device ") and any(l.startswith("estimate: ") for l in lines)
    if "(loop)" in out:  # as root: the emulated array
        assert "4 loop device(s)" in out and "a cgroup holding each loop device at its cap" in out
        assert "  mkfs.btrfs -q -K -d raid0 -m raid0 LOOP0 LOOP1 LOOP2 LOOP3" in lines
    assert "fio: 24 run(s) on each layout" in out and "MAX_REPETITIONS=3 does nothing here" in out
    assert snapshot() == before


def test_as_a_user_the_dry_run_says_it_would_measure_directories(capsys, monkeypatch):
    monkeypatch.setattr(System, "euid", lambda self: 1000)
    status, out, _ = run(capsys, QUICKSTART, "--dry-run")
    assert status == 0 and "on plain directories on the local disk (no devices, no caps) (directory)" in out
    assert "Skipped btrfs-raid0: plain directories cannot be striped into an array." in out
    assert "loop device" not in out


def test_json_gives_each_notebook_s_plan_and_the_estimate(capsys):
    status, out, _ = run(capsys, QUICKSTART, "--dry-run", "--format", "json")
    said = json.loads(out)
    assert status == 0 and said["dry_run"] is True and said["created"] == [] and said["ran"] == []
    plan = said["notebooks"]["quickstart"]
    assert plan["runs_each_layout"] == 24 and plan["backend"] in ("loop", "directory")
    assert said["estimate"]["runs"] == said["estimate"]["notebooks"]["quickstart"]["runs"] > 0


def test_no_command_runs_and_nothing_is_created(tmp_path):
    """Through a recording runner, every runner of runners/ that this checkout can check: no command but a
    check's reads (``dry_run.READS``: the cluster's look at this machine's addresses) reaches the machine, and no
    file appears."""
    before = snapshot()
    for file in RUNNERS:
        recorder = RecordingRunner()
        try:
            execute.campaign_plans(file, runner=recorder)
        except ConfigError:
            pass
        ran = [argv for argv in recorder.history if not any(argv[:len(r)] == r for r in dry_run.READS)]
        assert ran == [], (file.name, ran)
        assert file.name == "cluster.yaml" or recorder.history == [], (file.name, recorder.history)
    assert snapshot() == before


def test_the_read_only_runner_lets_reads_through_and_refuses_the_rest():
    recorder = RecordingRunner()
    looking = dry_run.ReadOnly(recorder)
    looking.run(["blkid", "-p", "-o", "export", "/dev/x"], ok_codes=(0, 2))
    for argv in (["mkfs.xfs", "/dev/x"], ["blkid", "/dev/x"], ["ip", "link", "add", "x"], ["losetup", "-f"]):
        with pytest.raises(FlashscaleError, match="a dry run runs no command"):
            looking.run(argv)
    with pytest.raises(FlashscaleError, match="starts nothing"):
        looking.spawn(["fio", "--server"], Path("/dev/null"))
    assert recorder.history == [("blkid", "-p", "-o", "export", "/dev/x")]


EXPECTED = {  # the runners that cannot be checked here as they are, and the value each names
    "imported.yaml": "IMPORTED='data/imported'", "testbed.yaml": "TESTBED='testbed.yaml'",
    "testbed-example.yaml": "TESTBED='testbed.yaml'", "ssh-cluster.yaml": "give KNOWN_HOSTS"}


@pytest.mark.parametrize("file", RUNNERS, ids=[f.name for f in RUNNERS])
def test_every_runner_has_a_dry_run(capsys, file):
    status, out, err = run(capsys, file, "--dry-run")
    absent = {"imported.yaml": ROOT / "data" / "imported", "testbed.yaml": ROOT / "testbed.yaml",
              "testbed-example.yaml": ROOT / "testbed.yaml"}
    if file.name in EXPECTED and not absent.get(file.name, Path("/nonexistent")).exists():
        assert status == 1 and EXPECTED[file.name] in err and out == "", err
        return
    assert status == 0 and "nothing was touched" in out, err
    for notebook in yaml.safe_load(file.read_text())["notebooks"]:
        assert f"\n{notebook}: " in out


def test_a_test_bed_names_an_identity_it_cannot_find(capsys, tmp_path):
    bed = tmp_path / "bed.yaml"
    bed.write_text(yaml.safe_dump({"name": "lab", "devices": ["nguid:00000000000000000000000000c0ffee"]}))
    err = refused(capsys, ROOT / "runners" / "testbed.yaml", "-p", f"TESTBED={bed}", "--dry-run")
    assert "c0ffee" in err


# Hostile values: every one answered with a plan or a ConfigError naming it, and no command run.

DECLARED = execute.declared_values(papermill.inspect_notebook(str(ROOT / "notebooks" / "quickstart.ipynb")))
scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True),
                    st.text(max_size=12), st.sampled_from(["", "..", "/", "/etc/passwd", "/dev/null", "\u00fc\u4e2d",
                                                           "md-raid1", "single", "testbed.yaml", "a" * 300]))
hostile = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4), max_leaves=8)
names = st.sampled_from(sorted(set(DECLARED) | {"TESTBED", "DRY_RUN", "CONFIRM", "LAYOUTS", "REFERENCE"}))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(names, hostile, min_size=1, max_size=3))
def test_any_values_give_a_plan_or_an_error_naming_one_of_them(given_values):
    """What ``campaign_plans`` does for each notebook, on the quickstart's values with these over them."""
    values = {**DECLARED, **given_values}
    recorder = RecordingRunner()
    with contextlib.chdir(ROOT):
        try:
            parameters.check(values, campaign.PARTS, where="quickstart.ipynb")
            dry_run.asked({"quickstart": given_values}, {"quickstart": values})
            plan = dry_run.of_notebook("quickstart", "quickstart", values, given_values, dry_run.ReadOnly(recorder))
        except ConfigError as exc:
            message = str(exc)
            assert any(name in message or name.lower() in message for name in given_values) or "layout" in message, \
                message
            return
        except FlashscaleError as exc:  # what this machine cannot do, said as the run would say it
            assert "Traceback" not in str(exc)
            return
    assert plan.plan is not None and recorder.history == []


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_any_override_is_read_or_refused_naming_it(text):
    try:
        execute.parse_overrides([text])
    except ConfigError as exc:
        assert "parameter override" in str(exc)


def test_dry_run_is_asked_by_the_parameter_as_by_the_option():
    bed, plain = {"TESTBED": "bed.yaml", "DRY_RUN": True}, {"DRY_RUN": True}
    assert dry_run.asked({"a": {"DRY_RUN": True}}, {"a": plain})  # given true: the dry run, wherever
    assert dry_run.asked({"a": {}}, {"a": bed})  # a test bed's own default
    assert not dry_run.asked({"a": {"DRY_RUN": False}}, {"a": {**bed, "DRY_RUN": False}})  # a test bed measured
    assert not dry_run.asked({"a": {}}, {"a": plain})  # the notebook's default, where it does nothing
    with pytest.raises(ConfigError, match="DRY_RUN=False does nothing in this campaign"):
        dry_run.asked({"a": {"DRY_RUN": False}}, {"a": {"DRY_RUN": False}})


def test_the_layout_tax_stage_leaves_out_what_this_machine_cannot_build(capsys, monkeypatch):
    """03_layout_tax measures only the layouts this machine builds (``can_build.layouts_to_run``): the dry run says
    which it leaves out and why, and plans the others."""
    monkeypatch.setattr(System, "loop_support_problem", lambda self: None)  # the emulated array, root or not
    monkeypatch.setattr(dry_run.Place, "build_problem", lambda self, name: "no md here" if "md" in name else None)
    status, out, _ = run(capsys, ROOT / "runners" / "study.yaml", "--dry-run")
    assert status == 0 and "note: md-raid0 is left out here: no md here" in out
    assert "# layout md-raid0" not in out and "# layout btrfs-raid10" in out


def test_what_real_hosts_and_a_test_bed_ignore_is_said():
    hosts = {"REMOTE_HOSTS": [{"name": "a", "address": "10.0.0.1", "mount_dir": "/mnt"}], "DEVICES": 2, "HOSTS": [1]}
    assert dry_run.idle({"DEVICES": 2}, hosts) == [
        "DEVICES=2 does nothing here: real hosts are measured as they are: their own devices, caps and links, no "
        "emulated hosts made"]
    bed = {"TESTBED": "bed.yaml", "CAP_READ_BPS": 1, "CONFIRM": "x"}
    assert [s.split(" does")[0] for s in dry_run.idle(bed, bed)] == ["CAP_READ_BPS=1"]
    assert dry_run.idle({"CONFIRM": None, "WIPE": ""}, {}) == []  # none given says nothing


def test_a_grid_too_large_is_refused_before_it_is_expanded(capsys):
    many = ", ".join(str(n) for n in range(1, 201))
    err = refused(capsys, QUICKSTART, "-p", f"BS=[1048576, {many}]", "-p", f"NUMJOBS=[{many}]", "--estimate")
    assert "2 RW x 201 BS x 200 NUMJOBS x 1 IODEPTH is 80,400 points, more than the 10,000" in err


@pytest.mark.parametrize("counts", ["[0]", "[1000000000]", "[]", "x", "[1, 2.5]", "[true]"])
def test_each_device_count_is_a_device_count(capsys, counts):
    file = ROOT / "runners" / "study.yaml"
    err = refused(capsys, file, "-p", f"DEVICE_COUNTS={counts}", "--estimate")
    assert "DEVICE_COUNTS=" in err and "each a whole number from 1 to 256" in err
