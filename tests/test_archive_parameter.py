"""``ARCHIVE``: every campaign added to an archive when it finishes (``measure.archive.at_end``), said in its notes;
a path that is not an archive this user can write refused by name where parameters enter, before anything runs
(``measure.archive.checked_path``). Without root: the step at the end called on a finished campaign folder (real
fio output imported), and ``campaign.run`` re-analysing a stored campaign with ARCHIVE set. With root:
tests/test_archive_root.py, a tiny emulated campaign run with ARCHIVE."""
from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict, replace
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from flashscale.campaigns import campaign, parameters
from flashscale.cli import main
from flashscale.errors import ConfigError
from flashscale.measure import archive, campaign_folder, resume, results
from flashscale.measure.results import CampaignResult
from flashscale.notebooks import execute
from flashscale.paths import project_root

GOLDEN = Path(__file__).parent / "golden"
PATTERN = "{layout}/{bs}/run-{rep}/{rw}-{iodepth}-{numjobs}.json"


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished campaign folder: real fio output (tests/golden/compare/A) imported."""
    root = tmp_path_factory.mktemp("finished")
    assert main(["import", str(GOLDEN / "compare" / "A"), "--to", str(root / "before"), "--pattern", PATTERN,
                 "--devices", "1", "-q"]) == 0
    return root / "before"


def result_of(folder: Path) -> CampaignResult:
    return CampaignResult(results.load(folder / campaign_folder.TABLE_FILE), folder, "imported",
                          list(campaign_folder.read_notes(folder)))


def test_a_finished_campaign_is_archived_once_and_its_notes_say_where(finished, tmp_path):
    copy = Path(shutil.copytree(finished, tmp_path / "before"))
    store = tmp_path / "team.sqlite"
    before = list(campaign_folder.read_notes(copy))
    done = archive.at_end(str(store), result_of(copy))
    [entry] = archive.listed(store)
    assert entry.name == "before" and entry.runs == 6 and entry.layouts == ("single",)
    said = done.notes[-1]
    assert said == (f"Archived in {store} as campaign {entry.id[:12]} (ARCHIVE): flashscale compare "
                    f"'archive:{store}?id={entry.id[:12]}' reads it.")
    assert campaign_folder.read_notes(copy) == [*before, said] and done.table is not None
    again = archive.at_end(str(store), result_of(copy), write=False)  # a reanalysis: the folder is left alone
    assert again.notes[-1].startswith(f"Already archived in {store} as campaign {entry.id[:12]}")
    assert campaign_folder.read_notes(copy) == [*before, said] and len(archive.listed(store)) == 1
    assert main(["compare", f"archive:{store}?id={entry.id[:12]}", str(copy), "--fail-on", "slower"]) == 0


def test_without_archive_or_a_table_nothing_is_added(finished, tmp_path):
    plain = result_of(finished)
    assert archive.at_end(None, plain) is plain and archive.at_end("", plain) is plain
    empty = CampaignResult(None, tmp_path, "loop", ["n"])
    assert archive.at_end(str(tmp_path / "a.sqlite"), empty) is empty and not (tmp_path / "a.sqlite").exists()


def test_an_archive_spoiled_while_the_campaign_ran_is_said_in_its_notes_and_loses_nothing(finished, tmp_path):
    copy = Path(shutil.copytree(finished, tmp_path / "before"))
    spoiled = tmp_path / "team.sqlite"
    spoiled.write_text("not a database, written after the campaign's parameters were checked\n")
    done = archive.at_end(str(spoiled), result_of(copy))
    assert done.notes[-1].startswith(f"Not archived (ARCHIVE='{spoiled}'): archive '{spoiled}' cannot be opened "
                                     "as a flashscale archive")
    assert f"flashscale archive add {copy} --archive FILE adds it." in done.notes[-1]
    assert campaign_folder.read_notes(copy)[-1] == done.notes[-1]
    assert spoiled.read_text().startswith("not a database")


def test_a_path_that_is_no_archive_this_user_can_write_is_refused_by_name(tmp_path):
    assert archive.checked_path(None) is None and archive.checked_path("") is None
    assert archive.checked_path(str(tmp_path / "new.sqlite")) == tmp_path / "new.sqlite"  # made when it finishes
    assert not (tmp_path / "new.sqlite").exists()
    assert archive.checked_path("data/team.sqlite") == project_root() / "data" / "team.sqlite"  # as DATA_DIR
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / "link").symlink_to("/dev/null")
    refused = {
        str(tmp_path / "missing" / "a.sqlite"): "its folder .* does not exist or cannot be written",
        str(tmp_path): "is not a file this user can read and write",
        str(tmp_path / "link"): "is not a file this user can read and write",
        str(tmp_path / "notes.txt"): "cannot be opened as a flashscale archive|is not a flashscale archive",
        "a\x00b.sqlite": "is not the path of an archive file",
        "a\nb.sqlite": "is not the path of an archive file",
        "x" * 5000: "is not the path of an archive file",
        "a" * 300: "cannot be looked at: File name too long",
        str(tmp_path / ("b" * 300) / "a.sqlite"): "cannot be looked at: File name too long",
    }
    for value, said in refused.items():
        with pytest.raises(ConfigError, match=said):
            archive.checked_path(value)
    for value in (42, ["a.sqlite"], True):
        with pytest.raises(ConfigError, match="is not the path of an archive file"):
            archive.checked_path(value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write any folder")
def test_a_folder_this_user_cannot_write_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(ConfigError, match="does not exist or cannot be written"):
        archive.checked_path(str(locked / "a.sqlite"))


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=80))
def test_any_text_as_archive_is_a_path_or_refused_by_name_and_nothing_is_made(text):
    before = sorted(p.name for p in project_root().iterdir())
    try:
        found = archive.checked_path(text)
    except ConfigError as exc:
        assert "archive" in str(exc)
    else:
        assert found is None or isinstance(found, Path)
    assert sorted(p.name for p in project_root().iterdir()) == before


def test_a_bad_archive_refuses_the_campaign_where_its_parameters_enter(tmp_path):
    (tmp_path / "notes.txt").write_text("hello\n")
    bad = str(tmp_path / "notes.txt")
    with pytest.raises(ConfigError, match=r"ARCHIVE='.*notes.txt': Value error, archive '.*notes.txt' cannot be "
                                          "opened as a flashscale archive: file is not a database"):
        campaign.CampaignSpec.from_parameters(CAMPAIGN="qs", ARCHIVE=bad)
    spec = {"campaign": "qs", "description": "", "notebooks": ["quickstart"], "parameters": {"ARCHIVE": bad},
            "notebook_parameters": {}}
    with pytest.raises(ConfigError, match=r"^quickstart.ipynb: ARCHIVE="):
        execute.notebook_parameters(spec, project_root())
    good = str(tmp_path / "team.sqlite")
    assert campaign.CampaignSpec.from_parameters(CAMPAIGN="qs", ARCHIVE=good).archive == good
    assert execute.notebook_parameters({**spec, "parameters": {"ARCHIVE": good}}, project_root())
    assert campaign.CampaignSpec.from_parameters(CAMPAIGN="qs", ARCHIVE=None).archive is None
    assert "ARCHIVE" in parameters.markdown(campaign.PARTS)


def test_a_stored_campaign_re_analysed_with_archive_is_archived_and_its_folder_left_as_it_was(finished, tmp_path,
                                                                                              monkeypatch):
    """campaign.run itself: a campaign measured without ARCHIVE, re-analysed with it (flashscale run --reanalyze)."""
    spec = campaign.CampaignSpec(name="before", layouts=("single",), data_dir=str(tmp_path / "data"))
    folder = Path(shutil.copytree(finished, tmp_path / "data" / "before"))
    stored = json.loads((folder / campaign_folder.CAMPAIGN_JSON).read_text())
    campaign_folder.write_campaign(folder, stored["run_id"], asdict(spec), stored["environment"])
    notes = (folder / campaign_folder.NOTES_JSON).read_text()
    monkeypatch.setenv(resume.REANALYZE, "1")
    store = tmp_path / "team.sqlite"
    done = campaign.run(replace(spec, archive=str(store)), progress=False)
    [entry] = archive.listed(store)
    assert done.notes[-2].startswith("Re-analysed at ") and done.notes[-1].startswith(f"Archived in {store} as "
                                                                                     f"campaign {entry.id[:12]}")
    assert (folder / campaign_folder.NOTES_JSON).read_text() == notes
    assert resume.differences({"spec": resume.plain(asdict(spec))}, asdict(replace(spec, archive="x")), {}) == []
