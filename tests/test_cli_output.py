"""One ``--format table|csv|json`` on every command that prints results (``cli.output``): the three formats of the
same rows agree, ``--json`` is ``--format json`` where a command had it, and nothing printed carries a terminal's
escape codes (``NO_COLOR``, a pipe)."""
from __future__ import annotations

import argparse
import csv
import io
import json
import math

import pandas as pd
import pytest

from flashscale import cli
from flashscale.cli import output

from test_devices import FakeMachine
from test_reap import write

ROWS = [dict(device="/dev/nvme0n1", size_bytes=4096, safe=True, reasons=[], note=None),
        dict(device="/dev/nvme1n1", size_bytes=2**40, safe=False, reasons=["mounted at /", "xfs"], note=math.nan)]


def printed(rows, fmt: str, **options) -> str:
    out = io.StringIO()
    output.emit(rows, fmt, file=out, **options)
    return out.getvalue()


@pytest.mark.parametrize("rows", [ROWS, pd.DataFrame(ROWS)])
def test_csv_and_json_carry_the_same_values_and_a_missing_one_is_empty_or_null(rows):
    got = json.loads(printed(rows, "json"))
    assert [g["device"] for g in got] == ["/dev/nvme0n1", "/dev/nvme1n1"] and got[1]["size_bytes"] == 2**40
    assert got[0]["note"] is None and got[1]["note"] is None and got[1]["reasons"] == ["mounted at /", "xfs"]
    table = list(csv.DictReader(io.StringIO(printed(rows, "csv"))))
    assert [int(r["size_bytes"]) for r in table] == [4096, 2**40] and [r["note"] for r in table] == ["", ""]
    assert json.loads(table[1]["reasons"]) == ["mounted at /", "xfs"] and table[0]["safe"] == "True"
    lines = printed(rows, "json", json_lines=True).splitlines()
    assert [json.loads(line) for line in lines] == got


def test_the_table_aligns_its_columns_under_their_names_and_shows_what_people_read():
    shown = [dict(path="/dev/a", size="4 KiB"), dict(path="/dev/longer", size=None)]
    lines = printed(ROWS, "table", table=shown).splitlines()
    assert lines == ["path         size", "/dev/a       4 KiB", "/dev/longer  -"]


def test_format_is_one_option_and_json_its_alias():
    parser = argparse.ArgumentParser()
    output.add_format(parser, json_alias=True)
    assert parser.parse_args([]).format == "table" and parser.parse_args(["--json"]).format == "json"
    assert parser.parse_args(["--format", "csv"]).format == "csv"
    with pytest.raises(SystemExit):
        parser.parse_args(["--format", "yaml"])


def test_devices_prints_each_format_of_the_same_devices(tmp_path, monkeypatch, capsys):
    machine = FakeMachine(tmp_path / "machine")
    machine.disk("nvme0n1", eui="0025385b71b01234", size="4096", **{"device/model": "P3700"})
    machine.disk("nvme1n1", eui="0025385b71b05678")
    machine.sigs["nvme1n1"] = ["xfs"]
    monkeypatch.setattr("flashscale.system.devices.System", lambda: machine)
    said = {}
    for argv in (["--format", "json"], ["--json"], ["--format", "csv"], []):
        assert cli.main(["devices", *argv]) == 0
        said[" ".join(argv)] = capsys.readouterr().out
    assert said["--json"] == said["--format json"]
    listed = json.loads(said["--json"])
    assert [d["path"] for d in listed] == [str(machine.dev / "nvme0n1"), str(machine.dev / "nvme1n1")]
    assert [d["path"] for d in csv.DictReader(io.StringIO(said["--format csv"]))] == [d["path"] for d in listed]
    header, first, second = said[""].splitlines()
    assert header.split() == ["path", "size", "model", "identity", "erase"]
    assert first.split()[:5] == [str(machine.dev / "nvme0n1"), "2", "MiB", "P3700", "eui:0025385b71b01234"]
    assert "safe" in first and "in use:" in second and "xfs" in second


def test_reap_prints_each_format_of_the_same_outcomes(tmp_path, capsys):
    made = tmp_path / "flashscale-single-x"
    made.mkdir()
    manifest = write(tmp_path / "m.json", [{"kind": "dir", "path": str(made)}])
    said = {}
    for argv in (["--json"], ["--format", "json"], ["--format", "csv"], []):
        assert cli.main(["reap", "--dry-run", str(manifest), *argv]) == 0
        said[" ".join(argv)] = capsys.readouterr().out
    assert said["--json"] == said["--format json"]
    [outcome] = json.loads(said["--json"])
    assert outcome["manifest"] == str(manifest) and outcome["state"] == "planned"
    [row] = csv.DictReader(io.StringIO(said["--format csv"]))
    assert row["state"] == "planned" and json.loads(row["entries"])[0]["path"] == str(made)
    assert said[""].splitlines()[1].split()[:4] == [str(manifest), "planned", "dir", str(made)]
    assert made.exists()  # a dry run


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_plan_prints_no_escape_codes_in_any_format(capsys, fmt):
    """flashscale colours nothing: what it prints to a terminal, a pipe or a file is the same plain text."""
    assert cli.main(["plan", "--device-bps", "2.8GB/s", "--target", "100Gb/s", "--format", fmt]) == 0
    out = capsys.readouterr()
    assert "\x1b" not in out.out + out.err and "5" in out.out


def test_erase_prints_a_table_by_default_and_its_json_lines_with_format_json(tmp_path, monkeypatch, capsys):
    """What erase printed before --format, one JSON record a line, is --format json; the table is the default. The
    erase itself is replaced (tests/test_erase.py tests it): only the printing is under test here."""
    machine = FakeMachine(tmp_path / "machine")
    machine.disk("nvme0n1", eui="0025385b71b01234")
    records = [{"device": str(machine.dev / "nvme0n1"), "id": "eui:0025385b71b01234", "method": "discard",
                "dry_run": True, "commands": ["blkdiscard /dev/nvme0n1"]}]
    monkeypatch.setattr("flashscale.system.devices.System", lambda runner: machine)
    monkeypatch.setattr("flashscale.arrays.guard.Guard", lambda *args: None)
    monkeypatch.setattr("flashscale.arrays.erase.erase", lambda *args, **kwargs: records)
    argv = ["erase", "eui:0025385b71b01234", "--confirm", "eui:0025385b71b01234", "--dry-run"]
    assert cli.main([*argv, "--format", "json"]) == 0
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == records
    assert cli.main(argv) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split() == ["device", "id", "method", "commands", "note"]
    assert row.endswith("discard  blkdiscard /dev/nvme0n1  dry run: nothing ran")


def test_reproduce_prints_its_reports_and_verdict_in_each_format(tmp_path, monkeypatch, capsys):
    """The reproduction itself is replaced (tests/test_reproduce.py runs one, as root): only its printing here."""
    written = [tmp_path / "qs-reproduced" / "quickstart.html", tmp_path / "qs-reproduced" / "reproduction.html"]
    verdict = "Reproduced: all 8 key numbers agree."
    monkeypatch.setattr("flashscale.notebooks.reproduce.reproduce", lambda *args, **kwargs: written)
    monkeypatch.setattr("flashscale.publish.report.read_record", lambda path: {"verdict": verdict})
    assert cli.main(["reproduce", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines() == [*map(str, written), verdict]
    assert cli.main(["reproduce", str(tmp_path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"report": str(written[0]), "verdict": None},
                                                   {"report": str(written[1]), "verdict": verdict}]
    assert cli.main(["reproduce", str(tmp_path), "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines() == ["report,verdict", f"{written[0]},", f"{written[1]},{verdict}"]
