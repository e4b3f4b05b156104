"""``flashscale run CAMPAIGN --reanalyze``: the notebooks executed again on the runs a campaign stored. Nothing is
measured (fio, losetup, mkfs and the rest are replaced by programs that fail and say so), nothing stored changes,
and on the same software the report's tables are the same to the digit. A campaign that is not there, did not
finish, or is asked for with another spec is refused, naming why."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from flashscale import cli
from flashscale.notebooks import execute
from flashscale.errors import ConfigError, FlashscaleError
from flashscale.measure import resume

from test_quickstart import campaign_file

# 2 devices, the three layouts, one point of 2 jobs read, 2 repetitions of 1 s: about a minute on loop devices
TINY = dict(DEVICES=2, NUMJOBS=[2], RW=["read"], REPETITIONS=2, RUNTIME_S=1, RAMP_S=0, FILE_SIZE=16 * 2**20,
            DEVICE_SIZE=2**30, CAP_READ_BPS=100_000_000, CAP_WRITE_BPS=100_000_000, PROGRESS=False)
# What measuring would call: each is replaced, while re-analysing, by a program that logs its call and fails.
MEASURING = ["fio", "losetup", "mkfs.xfs", "mkfs.btrfs", "mkfs.ext4", "blkdiscard", "wipefs", "mount", "umount",
             "qemu-system-x86_64", "vng"]


def tables(html: Path) -> list[str]:
    """Every table of a report, as its HTML (the random id pandas gives a styled table aside)."""
    return [re.sub(r"\bT_[0-9a-f]+", "T_", table)
            for table in re.findall(r"<table.*?</table>", html.read_text(), flags=re.S)]


def stored(folder: Path) -> dict[str, bytes]:
    """Every file a campaign stored, by its path under the folder (results.parquet aside: rebuilt as it was)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def nothing_measures(folder: Path, monkeypatch) -> Path:
    """PATH leads first to programs standing in for every measuring one: each call is logged in the file returned,
    and fails."""
    shims, calls = folder / "shims", folder / "calls.log"
    shims.mkdir()
    for name in MEASURING:
        (shims / name).write_text(f"#!/bin/sh\necho {name} \"$@\" >> {calls}\nexit 1\n")
        (shims / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{shims}:{os.environ['PATH']}")
    return calls


@pytest.mark.root
@pytest.mark.notebook
@pytest.mark.long
def test_a_campaign_reanalysed_measures_nothing_and_publishes_the_same_tables(tmp_path, monkeypatch):
    parameters = {**TINY, "DATA_DIR": str(tmp_path / "data")}
    campaign = campaign_file(tmp_path, parameters)
    reports = tmp_path / "reports"
    assert cli.main(["run", str(campaign), "--reports", str(reports)]) == 0
    html, data = reports / "qs" / "quickstart.html", tmp_path / "data" / "qs"
    before, measured = tables(html), stored(data)
    assert len(before) >= 3 and re.search(r"\b(99|100|101) MB/s", html.read_text())

    calls = nothing_measures(tmp_path, monkeypatch)
    assert cli.main(["run", str(campaign), "--reports", str(reports), "--reanalyze"]) == 0
    assert not calls.exists(), f"re-analysing called {calls.read_text()}"
    assert stored(data) == measured  # no run added, nothing rewritten
    assert tables(html) == before  # the same software: every table the same to the digit
    text = html.read_text()
    assert "Re-analysed at" in text and "nothing was measured again" in text
    assert "re-analysed from the stored runs" in (reports / "qs" / "index.html").read_text()
    assert "Measured at" in (reports / "qs" / "index.html").read_text()  # the index still names the measuring run

    # an analysis parameter may change; one that changes what was measured is refused, naming it
    assert cli.main(["run", str(campaign), "--reports", str(reports), "--reanalyze", "-p", "TAX_MARGIN=0.05"]) == 0
    assert "5%" in html.read_text() and stored(data) == measured
    with pytest.raises(FlashscaleError, match=r"measured for another spec: array.read_bps: 100000000 then, "
                                              r"50000000 now.*--reanalyze again"):
        execute.run_campaign(campaign, reports_dir=reports, overrides={"CAP_READ_BPS": 50_000_000}, reanalyze=True)
    assert not calls.exists()

    # on another lock the report says which versions changed: the campaign claims it was measured with other ones
    recorded = json.loads((data / "campaign.json").read_text())
    recorded["environment"]["software"]["packages"]["pandas"] = "0.0.1"
    (data / "campaign.json").write_text(json.dumps(recorded))
    assert cli.main(["run", str(campaign), "--reports", str(reports), "--reanalyze"]) == 0
    assert "pandas 0.0.1 then, " in html.read_text() and not calls.exists()


def test_a_campaign_not_there_or_unfinished_is_refused(tmp_path):
    spec = {"name": "qs", "layouts": ["single"]}
    with pytest.raises(ConfigError, match=r"holds no campaign \(campaign.json\) to re-analyse"):
        resume.stored_campaign(tmp_path / "qs", spec)
    (tmp_path / "qs").mkdir()
    (tmp_path / "qs" / "campaign.json").write_text(json.dumps({"run_id": "20261125T100000Z", "spec": spec,
                                                               "environment": {"backend": "loop"}}))
    with pytest.raises(ConfigError, match=r"did not finish \(no notes.json\); --resume measures what is missing"):
        resume.stored_campaign(tmp_path / "qs", spec)
    with pytest.raises(ConfigError, match=r"another spec: layouts: \['single'\] then, \['single', 'jbod'\] now"):
        resume.stored_campaign(tmp_path / "qs", {**spec, "layouts": ["single", "jbod"]})
    (tmp_path / "qs" / "notes.json").write_text("[]")
    (tmp_path / "qs" / "rows.jsonl").write_text("")
    table, folder, backend, notes = resume.stored_campaign(tmp_path / "qs", spec)
    assert folder == tmp_path / "qs" and backend == "loop" and table.empty
    assert "nothing was measured again (the campaign ran at 20261125T100000Z)" in notes[-1]


def test_reanalyze_and_resume_are_not_given_together(tmp_path):
    with pytest.raises(ConfigError, match="give one of them"):
        execute.run_campaign(campaign_file(tmp_path, TINY), reanalyze=True, resume=True)


def test_only_a_reanalysing_process_reads_instead_of_measuring(monkeypatch):
    monkeypatch.delenv(resume.REANALYZE, raising=False)
    assert not resume.reanalyzing()
    monkeypatch.setenv(resume.REANALYZE, "1")
    assert resume.reanalyzing()
