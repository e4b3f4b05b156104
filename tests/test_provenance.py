"""What software made a number: ``system.provenance`` on a throwaway git checkout, the ``software`` every run's
env.json and campaign.json carry (a real fio campaign), and the section "How this was made" that ends a report."""
from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from pathlib import Path

import pandas as pd

import reader
from flashscale.measure import campaign_folder
from flashscale.campaigns import campaign
from flashscale.publish import report
from flashscale.system import provenance

QEMU = "QEMU emulator version 7.2.15 (Debian 1:7.2+dfsg-7+deb12u12)"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-C", str(root), *args],
                          check=True, capture_output=True, text=True).stdout.strip()


def test_software_finds_the_commit_whether_a_tracked_file_changed_and_the_lock(tmp_path):
    assert provenance.software(tmp_path)["commit"] is None and provenance.software(tmp_path)["dirty"] is None
    git(tmp_path, "init", "-q")
    (tmp_path / "notes.py").write_text("a = 1\n")
    assert provenance.software(tmp_path)["commit"] is None  # a checkout without a commit yet
    (tmp_path / "requirements.lock").write_text("pandas==3.1.1\n")
    git(tmp_path, "add", "notes.py", "requirements.lock")
    git(tmp_path, "commit", "-q", "-m", "first")
    found = provenance.software(tmp_path)
    assert found["commit"] == git(tmp_path, "rev-parse", "HEAD") and found["dirty"] is False
    assert found["lock"] == {"file": "requirements.lock",
                             "sha256": hashlib.sha256(b"pandas==3.1.1\n").hexdigest()}
    (tmp_path / "scratch.ipynb").write_text("{}")  # untracked: not a change of the software
    assert provenance.software(tmp_path)["dirty"] is False
    (tmp_path / "notes.py").write_text("a = 2\n")
    assert provenance.software(tmp_path)["dirty"] is True
    assert provenance.commit_words(provenance.software(tmp_path)).endswith(" with uncommitted changes")
    git(tmp_path, "commit", "-q", "-am", "second")
    again = provenance.software(tmp_path)
    assert again["dirty"] is False and again["commit"] != found["commit"]
    # provenance.short: 10 characters, more where they would read as a number (1 commit in 140: 51e7510330)
    assert provenance.differences(found, again) == [f"commit {provenance.short(found['commit'])} then, "
                                                   f"commit {provenance.short(again['commit'])} now"]


def test_this_process_reads_its_software_once_and_gives_each_caller_its_own_copy(monkeypatch):
    read = []
    monkeypatch.setattr(provenance, "_read", lambda root, runner: read.append(root) or {"packages": {"pandas": "1"}})
    provenance._this_process.cache_clear()
    try:
        first = provenance.software()
        first["packages"]["pandas"] = "0.0.1"  # a caller's change stays its own
        assert provenance.software() == {"packages": {"pandas": "1"}} and read == [provenance.checkout()]
        provenance.software(provenance.checkout())  # a root given is read each time
        assert len(read) == 2
    finally:
        provenance._this_process.cache_clear()  # the next test reads this process's real software


def test_a_short_hash_never_reads_as_a_number():
    assert provenance.short("1234567e89abcdef") == "1234567e89a"  # 10 characters would be 1.2 x 10^90
    assert provenance.short("96bb57258a7c0451") == "96bb57258a"
    assert reader.text_problems(provenance.commit_words({"commit": "1234567e89abcdef"})) == []


def _campaign(folder: Path, software: dict | None, run_id: str = "20261123T153817Z", **environment) -> Path:
    folder.mkdir(parents=True)
    env = {"hostname": "node7", "kernel": "6.1.0-18-amd64", "fio": "fio-3.33", "backend": "loop", **environment,
           **({"software": software} if software is not None else {})}
    (folder / "campaign.json").write_text(json.dumps({"run_id": run_id, "spec": {}, "environment": env}))
    return folder


def test_how_made_says_the_same_software_measured_and_analysed(tmp_path):
    now = provenance.software()
    said = report.how_made(_campaign(tmp_path / "quickstart", now), now=now)
    assert said.startswith("## How this was made\n")
    assert "`quickstart` (2026-11-23 15:38 UTC) with flashscale " in said
    assert f"{provenance.commit_words(now)}, {provenance.lock_words(now)}), Python {platform.python_version()}; " \
           "fio-3.33, Linux 6.1.0-18-amd64 on host node7, the loop backend." in said
    assert f"pandas {pd.__version__}" in said and "QEMU" not in said
    assert said.rstrip().endswith("- Analysed with the same software as measured.")
    assert reader.text_problems(said) == []


def test_how_made_names_each_version_that_changed_since_measured(tmp_path):
    now = provenance.software()
    then = {**now, "python": "3.0.0", "packages": {**now["packages"], "pandas": "0.0.1"}}
    said = report.how_made(_campaign(tmp_path / "old", then) / "campaign.json")  # this process's software now
    assert said.rstrip().endswith(f"- Analysed with other software than measured: Python 3.0.0 then, "
                                  f"{platform.python_version()} now; pandas 0.0.1 then, {pd.__version__} now.")
    assert "same software" not in said


def test_how_made_says_when_the_software_was_not_recorded(tmp_path):
    said = report.how_made(_campaign(tmp_path / "before", None))
    assert "with software not recorded (a campaign from before flashscale kept it); fio-3.33" in said
    assert "The software that measured `before` was not recorded" in said and "same software" not in said


def test_how_made_names_qemu_where_a_vm_ran_and_groups_a_studys_campaigns(tmp_path):
    now = provenance.software()
    study = tmp_path / "study"
    _campaign(study / "01_baseline", now)
    _campaign(study / "02_scaling" / "devices1", now, "20261123T160000Z")
    _campaign(study / "03_layout_tax", now, backend="vm", qemu=QEMU)
    _campaign(study / "03_layout_tax.20261122T000000Z", None)  # an earlier run: not what the study holds now
    said = report.how_made(study, now=now)
    measured = [line for line in said.splitlines() if line.startswith("- **Measured**")]
    assert len(measured) == 2  # the two loop campaigns in one line, the VM's in its own
    assert measured[0].startswith("- **Measured**: `study/01_baseline`, `study/02_scaling/devices1` (from "
                                  "2026-11-23 15:38 UTC to 2026-11-23 16:00 UTC) with flashscale")
    assert measured[1].endswith(f"the vm backend, in a VM of {QEMU}.") and "`study/03_layout_tax`" in measured[1]
    assert "not recorded" not in said and said.count("Analysed with the same software as measured") == 1


def test_how_made_of_a_report_that_measured_nothing_gives_the_analysis_software(tmp_path):
    said = report.how_made(now={"flashscale": "0.1.0", "commit": None, "python": "3.11.2",
                                "packages": {"pandas": "3.1.1"}})
    assert said.splitlines()[2:] == ["- **Measured**: nothing; this report reads numbers published earlier.",
                                     "- **Analysed** with flashscale 0.1.0 (no git commit, no lock file), Python "
                                     "3.11.2; pandas 3.1.1."]
    assert "no campaign record" in report.how_made(tmp_path / "absent")


def test_the_index_says_what_software_measured(tmp_path):
    now = provenance.software()
    runs = [campaign_folder.campaign_facts(_campaign(tmp_path / "a", now) / "campaign.json"),
            campaign_folder.campaign_facts(_campaign(tmp_path / "b", now, backend="vm", qemu=QEMU) / "campaign.json"),
            campaign_folder.campaign_facts(_campaign(tmp_path / "c", None) / "campaign.json")]
    page = report.write_index(tmp_path, "study", "", runs, "now").read_text()
    words = f"flashscale {now['flashscale']} ({provenance.commit_words(now)}, {provenance.lock_words(now)}), " \
            f"Python {now['python']}"
    assert f"Measured 1 campaign run(s) with {words}; 1 campaign run(s) with {words}, in a VM of {QEMU}; 1 " \
           "campaign run(s) with software not recorded" in page
    one = report.write_index(tmp_path, "quickstart", "", runs[:1], "now").read_text()
    assert f"Measured with {words}." in one


def test_every_run_keeps_the_software_that_measured_it(tmp_path):
    """A real (tiny) campaign: each run's env.json carries campaign.json's ``software``, this process's."""
    spec = campaign.CampaignSpec.from_parameters(
        CAMPAIGN="t", DATA_DIR=str(tmp_path / "data"), EMULATION="directory", LAYOUTS=["single"], RW=["read"],
        BS=[1048576], NUMJOBS=[1], IODEPTH=[1], REPETITIONS=1, RUNTIME_S=1, RAMP_S=0, FILE_SIZE=8 * 2**20)
    result = campaign.run(spec, progress=False)
    recorded = json.loads((result.directory / "campaign.json").read_text())["environment"]["software"]
    assert recorded["packages"]["pandas"] == pd.__version__ and recorded["python"] == platform.python_version()
    for raw_dir in result.table["raw_dir"]:
        assert json.loads((result.directory / raw_dir / "env.json").read_text())["software"] == recorded
    assert len(result.table) >= 1
    # measured and analysed in this process: the same commit, lock and packages (a commit made meanwhile in this
    # checkout would be named)
    assert report.how_made(result.directory).rstrip().endswith("Analysed with the same software as measured.")
