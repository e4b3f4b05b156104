"""The archive (``measure.archive``, ``flashscale archive``) and archive queries (``measure.sides``): campaigns
added once whatever the path or machine, listed by host, model, layout and date, merged without losing or doubling
one, serials hashed unless kept; a hostile file (not ours, with a trigger, changed after it was archived, a query
of any text) refused by name, never a traceback."""
from __future__ import annotations

import json
import shutil
import sqlite3

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from flashscale.cli import main
from flashscale.errors import AnalysisError, ConfigError
from flashscale.measure import archive, campaign_folder, sides

SERIAL = "S5GXNX0R123456"


def folder(path, *, host: str, run_id: str, layout: str = "md-raid0", scale: float = 1.0, seed: int = 0,
           kernel: str = "6.1.0", serial: str = SERIAL):
    """A campaign folder as a test bed leaves it: campaign.json (its environment naming the devices by identity)
    and results.parquet of 2 points, 3 runs each."""
    rng = np.random.default_rng(seed)
    rows = [{"layout": layout, "devices": 2, "rw": rw, "bs": 1048576, "numjobs": 4, "iodepth": 1, "rep": rep,
             "bw_bytes": 8e8 * scale * rng.lognormal(0, 0.005), "phase": "measure", "status": "ok"}
            for rw in ("read", "write") for rep in range(3)]
    path.mkdir(parents=True)
    pd.DataFrame(rows).to_parquet(path / campaign_folder.TABLE_FILE, index=False)
    campaign_folder.write_campaign(path, run_id, {"name": path.name, "tax_margin": 0.02,
                                                  "confirm": [f"serial:Samsung 980:{serial}:ns1"]},
                                   {"hostname": host, "kernel": kernel, "fio": "fio-3.33", "backend": "testbed",
                                    "devices": [f"serial:Samsung 980:{serial}:ns1", "nguid:00a1b2"]})
    return path


def tampered(path, sql: str, *values) -> None:
    """The archive at ``path`` changed behind flashscale's back, by one SQL statement."""
    db = sqlite3.connect(path)
    db.execute(sql, values)
    db.commit()
    db.close()


@pytest.fixture
def two_hosts(tmp_path):
    return (folder(tmp_path / "h1" / "march", host="h1", run_id="20260301T100000Z"),
            folder(tmp_path / "h1" / "today", host="h1", run_id="20261207T100000Z", scale=0.94, seed=1,
                   kernel="6.8.0"),
            folder(tmp_path / "h2" / "april", host="h2", run_id="20260401T100000Z", layout="lvm-stripe", seed=2))


def test_a_campaign_is_added_once_whatever_its_path_and_its_serials_are_hashed(tmp_path, two_hosts):
    store = tmp_path / "team.sqlite"
    [(entry, added)] = archive.add(store, two_hosts[0])
    assert added and entry.hostname == "h1" and entry.layouts == ("md-raid0",) and entry.runs == 6
    assert entry.models == ("Samsung 980",)
    copy = shutil.copytree(two_hosts[0], tmp_path / "elsewhere" / "copied")
    [(again, added)] = archive.add(store, copy)
    assert not added and again.id == entry.id
    text = sqlite3.connect(store).execute("SELECT record FROM campaigns").fetchone()[0]
    assert SERIAL not in text and "nguid:00a1b2" not in text and "serial:Samsung 980:sha256-" in text
    [(kept, added)] = archive.add(tmp_path / "kept.sqlite", two_hosts[0], keep_serials=True)
    assert kept.id == entry.id  # one campaign, one id, kept or hashed
    assert SERIAL in sqlite3.connect(tmp_path / "kept.sqlite").execute("SELECT record FROM campaigns").fetchone()[0]


def test_listing_filters_by_host_model_layout_and_date(tmp_path, two_hosts):
    store = tmp_path / "team.sqlite"
    for path in two_hosts:
        archive.add(store, path)
    names = lambda **f: [e.name for e in archive.listed(store, archive.Filters(**f))]  # noqa: E731
    assert names() == ["march", "april", "today"]  # by when each ran
    assert names(host="h1") == ["march", "today"]
    assert names(layout="lvm-stripe") == ["april"]
    assert names(since="2026-03-15") == ["april", "today"]
    assert names(model="Samsung 980", last=1) == ["today"]
    assert names(model="Intel P4510") == []


def test_two_archives_merge_without_losing_or_doubling_a_campaign(tmp_path, two_hosts, capsys):
    one, other = tmp_path / "one.sqlite", tmp_path / "other.sqlite"
    archive.add(one, two_hosts[0])
    archive.add(one, two_hosts[1])
    archive.add(other, two_hosts[1])  # on both machines
    archive.add(other, two_hosts[2])
    assert main(["archive", "merge", str(other), "--archive", str(one)]) == 0
    assert "1 campaign(s) added, 1 already archived" in capsys.readouterr().out
    assert sorted(e.name for e in archive.listed(one)) == ["april", "march", "today"]
    assert archive.merge(one, other) == (0, 2)
    assert archive.merge(other, one) == (1, 2)
    assert {e.id for e in archive.listed(one)} == {e.id for e in archive.listed(other)}


def test_compare_takes_an_archive_query_as_either_side(tmp_path, two_hosts, capsys):
    store = tmp_path / "team.sqlite"
    for path in two_hosts:
        archive.add(store, path)
    query = f"archive:{store}?host=h1&layout=md-raid0&since=2026-01-01&last=1"
    assert main(["compare", f"archive:{store}?host=h1&last=2&id={archive.listed(store)[0].id[:8]}", query,
                 "--fail-on", "slower"]) == 5
    out = capsys.readouterr().out
    assert "environment.kernel" in out.split("B against A")[0] and "6.1.0 -> 6.8.0" in out
    assert "2 slower" in out
    side = sides.read(query)
    assert list(side.rows["source"].unique()) == [f"today {archive.listed(store)[-1].id[:12]}"]
    assert side.records[0]["environment"]["kernel"] == "6.8.0"


def test_a_changed_campaign_and_a_file_not_ours_are_refused_by_name(tmp_path, two_hosts):
    store = tmp_path / "team.sqlite"
    archive.add(store, two_hosts[0])
    tampered(store, "UPDATE campaigns SET rows = replace(rows, '\"read\"', '\"randread\"')")
    with pytest.raises(ConfigError, match="does not hash to its id"):
        sides.read(f"archive:{store}")
    other = tmp_path / "other.sqlite"
    with pytest.raises(ConfigError, match="does not hash to its id"):
        archive.merge(other, store)
    assert not other.exists()  # nothing merged, nothing made
    archive.add(other, two_hosts[1])
    tampered(other, "CREATE TRIGGER t AFTER INSERT ON campaigns BEGIN DELETE FROM campaigns; END")
    with pytest.raises(ConfigError, match="not a flashscale archive"):
        archive.listed(other)
    (tmp_path / "notes.sqlite").write_text("not a database at all\n" * 50)
    with pytest.raises(ConfigError, match="cannot be opened as a flashscale archive: file is not a database"):
        archive.listed(tmp_path / "notes.sqlite")
    with pytest.raises(ConfigError, match="does not exist"):
        archive.listed(tmp_path / "missing.sqlite")
    (tmp_path / "empty").mkdir()
    with pytest.raises(AnalysisError, match="holds no results table"):
        archive.add(store, tmp_path / "empty")


def test_a_stored_entry_of_the_wrong_shape_is_refused(tmp_path, two_hosts):
    store = tmp_path / "team.sqlite"
    archive.add(store, two_hosts[0])
    tampered(store, "UPDATE campaigns SET layouts = '{\"not\": \"a list\"}'")
    with pytest.raises(ConfigError, match="not JSON lists"):
        archive.listed(store)


@pytest.mark.parametrize("query, said", [
    ("archive:", "name the archive file"), ("archive:x.sqlite?last=0", "last='0'"),
    ("archive:x.sqlite?since=March", "since='March'"), ("archive:x.sqlite?owner=me", "'owner' is unknown"),
    ("archive:x.sqlite?host=a&host=b", "given twice"), ("archive:x.sqlite?id=xyz", "hex digits"),
    ("archive:x.sqlite?layout", "cannot be read"),
])
def test_a_query_it_cannot_read_is_refused_naming_the_part(query, said):
    with pytest.raises(ConfigError, match=said.replace("?", r"\?")):
        sides.parse_query(query)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=120))
def test_any_query_text_is_read_or_refused_by_name(text):
    try:
        path, filters = sides.parse_query("archive:x.sqlite?" + text)
    except ConfigError:
        return
    assert str(path) == "x.sqlite" and (filters.last is None or 1 <= filters.last <= sides.MOST_LAST)


def test_the_cli_adds_lists_and_says_why_not(tmp_path, two_hosts, capsys):
    store = str(tmp_path / "team.sqlite")
    assert main(["archive", "add", str(two_hosts[0].parent), "--archive", store]) == 0
    assert "added: march" in capsys.readouterr().out
    assert main(["archive", "list", "--archive", store, "--format", "json", "--since", "2026-01-01"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [e["name"] for e in listed] == ["march", "today"] and listed[0]["models"] == ["Samsung 980"]
    assert main(["archive", "list", "--archive", store, "--last", "many"]) == 1
    assert "last='many'" in capsys.readouterr().err
    assert main(["compare", f"archive:{store}?layout=btrfs", str(two_hosts[0])]) == 1
    assert "keeps no campaign" in capsys.readouterr().err
    for argv, said in ((["add"], "name the folder to add"), (["merge"], "name the archive to merge"),
                       (["list", "x"], "takes no PATH"), (["add", "x", "--host", "h1"], "filter a listing only"),
                       (["merge", "x", "--keep-serials"], "--keep-serials is for add only")):
        assert main(["archive", *argv, "--archive", store]) == 1
        assert said in capsys.readouterr().err


def test_a_record_nested_past_any_campaign_s_depth_is_refused_not_a_recursion_error(tmp_path, two_hosts):
    store = tmp_path / "team.sqlite"
    archive.add(store, two_hosts[0])
    tampered(store, "UPDATE campaigns SET record = ?", "[" * 100_000 + "]" * 100_000)
    with pytest.raises(ConfigError, match="does not hash to its id"):
        sides.read(f"archive:{store}")


@settings(max_examples=50, deadline=None)
@given(st.binary(min_size=0, max_size=4096))
def test_any_bytes_as_an_archive_are_refused_by_name(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("bytes") / "given.sqlite"
    path.write_bytes(data)
    with pytest.raises(ConfigError, match="given.sqlite"):
        archive.listed(path)
