"""``ARCHIVE`` on the emulated array (root, loop devices, cgroup caps): a tiny quickstart campaign run by ``flashscale
run`` with ARCHIVE set is added to the archive when it finishes, its notes say so, its campaign.json records the
governor and no device firmware (loop devices have none), and compare reads it back from the archive as the same
campaign; the same campaign re-analysed adds nothing."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from flashscale import cli
from flashscale.measure import archive, campaign_folder

TINY = dict(DEVICES=2, LAYOUTS=["single", "jbod"], RW=["read"], NUMJOBS=[2], REPETITIONS=3, RUNTIME_S=3, RAMP_S=0,
            FILE_SIZE=32 * 2**20, DEVICE_SIZE=2**30, CAP_READ_BPS=100_000_000, CAP_WRITE_BPS=100_000_000,
            PROGRESS=False)


@pytest.mark.root
@pytest.mark.notebook
def test_a_campaign_run_with_archive_is_archived_when_it_finishes(tmp_path, capsys):
    store = tmp_path / "team.sqlite"
    data = tmp_path / "data"
    campaign = tmp_path / "qs.yaml"
    campaign.write_text(yaml.safe_dump({"campaign": "qs", "notebooks": ["quickstart"],
                                        "parameters": {**TINY, "DATA_DIR": str(data), "ARCHIVE": str(store)}}))
    assert cli.main(["run", str(campaign), "--reports", str(tmp_path / "reports")]) == 0
    folder = data / "qs"
    [entry] = archive.listed(store)
    assert entry.name == "qs" and entry.layouts == ("jbod", "single") and entry.models == ("emulated",)
    notes = campaign_folder.read_notes(folder)
    assert notes[-1] == (f"Archived in {store} as campaign {entry.id[:12]} (ARCHIVE): flashscale compare "
                         f"'archive:{store}?id={entry.id[:12]}' reads it.")
    page = (tmp_path / "reports" / "qs" / "quickstart.html").read_text()
    assert "Archived in" in page and entry.id[:12] in page  # the report's notes, section 1
    env = json.loads((folder / campaign_folder.CAMPAIGN_JSON).read_text())["environment"]
    assert isinstance(env["governor"], str) and env["governor"] and env["firmware"] == {}
    capsys.readouterr()
    assert cli.main(["compare", f"archive:{store}?id={entry.id[:12]}", str(folder), "--format", "csv"]) == 0
    same = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert len(same) and (same["change"].abs() < 1e-12).all() and not same["verdict"].isin(["slower", "faster"]).any()
    assert cli.main(["run", str(campaign), "--reports", str(tmp_path / "reports"), "--reanalyze"]) == 0
    assert len(archive.listed(store)) == 1  # the same content: one campaign
    assert Path(folder / campaign_folder.NOTES_JSON).read_text() == json.dumps(notes, indent=1)
