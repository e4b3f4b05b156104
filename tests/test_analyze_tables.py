"""`analyze`'s table fits the terminal (100 columns when it is none), one unit a column, each note said once; on the
tables we ship: the quickstart's, seed 000's and the import example's."""
from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from flashscale import cli
from flashscale.measure import units
from flashscale.publish import console

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "tests/golden/quickstart_results.csv"
SEED000 = ROOT / "data/reference/seed000_results.csv"
UNITS = ("kB/s", "MB/s", "GB/s", "TB/s", "IOPS", "kIOPS", "MIOPS", "ns", "µs", "ms", "%")
NUMBER = re.compile(r"^-?[\d,]+(\.\d+)?$")


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    """docs/howto/import.md's example: bench-fio's folder imported."""
    folder = tmp_path_factory.mktemp("imported") / "imported"
    assert cli.main(["import", str(ROOT / "tests/golden/imported/benchfio"), "--to", str(folder), "--pattern",
                     "{layout}/{bs}/run-{rep}/{rw}-{iodepth}-{numjobs}.json", "--map",
                     str(ROOT / "tests/golden/imported/benchfio-map.yaml")]) == 0
    return folder


def analyze(capsys, *args) -> tuple[int, str, str]:
    status = cli.main(["analyze", *map(str, args)])
    out = capsys.readouterr()
    return status, out.out, out.err


def table_lines(out: str) -> list[str]:
    """The table's own lines: its header and rows, before the first note under it."""
    lines = out.splitlines()
    end = next((i for i, line in enumerate(lines[1:], 1) if line.startswith(("*", "[", "no interval", "not shown",
                                                                           "bs:", "(", "load:", "verdicts:"))),
               len(lines))
    return lines[:end]


@pytest.mark.parametrize("args", [("--reference", "jbod"), ("--reference", "jbod", "--fit"),
                                  ("--reference", "jbod", "--metric", "iops"), ("--predict",)])
@pytest.mark.parametrize("which", ["quickstart", "seed000", "imported"])
def test_every_line_fits_100_columns_when_there_is_no_terminal(which, args, capsys, monkeypatch, imported):
    monkeypatch.delenv("COLUMNS", raising=False)
    path = {"quickstart": QUICKSTART, "seed000": SEED000, "imported": imported}[which]
    status, out, err = analyze(capsys, path, *args)
    wide = [line for line in (out + err).splitlines() if len(line) > 100]
    assert status == 0 and not wide, wide


def test_a_wider_terminal_shows_more_and_wide_shows_every_column(capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    _, narrow, _ = analyze(capsys, SEED000, "--reference", "jbod")
    monkeypatch.setenv("COLUMNS", "160")
    _, wider, _ = analyze(capsys, SEED000, "--reference", "jbod")
    assert "not shown, to fit 100 columns: QD" in narrow and " QD " not in narrow.splitlines()[0]
    assert " QD " in wider.splitlines()[0] and "not shown" not in wider
    assert max(map(len, wider.splitlines())) > 100 and max(map(len, wider.splitlines())) <= 160
    _, wide, _ = analyze(capsys, SEED000, "--reference", "jbod", "--wide")
    assert "runs stopped" in wide.splitlines()[0] and "baseline GB/s" in wide.splitlines()[0]


@pytest.mark.parametrize("path", [QUICKSTART, SEED000])
def test_one_unit_a_column_said_in_its_header_and_every_interval_in_it(path, capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    _, out, _ = analyze(capsys, path, "--reference", "jbod", "--wide")
    lines = table_lines(out)
    for unit in ("MB/s", "GB/s", "%"):  # no cell carries a unit: its header does, once
        assert all(unit not in line for line in lines[1:])
    for header in ("best", "baseline", "efficiency", "tax"):
        said = re.search(rf"\b{header} (\S+)", lines[0])
        assert said and said.group(1) in UNITS, lines[0]
    if path == SEED000:  # 2.78 GB/s beside 32.9 GB/s, not 2,780 MB/s
        assert "baseline GB/s" in lines[0] and "2.78" in out and "2,780" not in out
    cells = [cell for line in lines[1:] for cell in re.findall(r"\d[\d,.]*\s\(([^)]*)\)", line)]
    assert (cells or path == SEED000) and all(re.fullmatch(r"-?[\d,.]+(–| to )-?[\d,.]+", cell) for cell in cells), cells


def test_a_note_is_said_once_and_every_dash_has_its_reason(capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    _, out, _ = analyze(capsys, SEED000, "--reference", "jbod")
    assert out.count(units.ONE_RUN) == 1  # 14 rows of one run, said once: it was in every cell
    _, out, _ = analyze(capsys, QUICKSTART, "--reference", "jbod")
    marks = re.findall(r"—(\[\d+\])", out)
    reasons = dict(re.findall(r"^(\[\d+\]) (.+)$", out, re.MULTILINE))
    assert marks and set(marks) == set(reasons) and len(set(reasons.values())) == len(reasons)
    assert list(reasons.values()) == ["no tax: jbod was not measured on 1 device(s)"]  # read and write: once
    assert "—" not in out.replace("—[", "")  # no dash without its reason


def test_the_null_engine_s_terabytes_and_a_small_rate_s_kilobytes():
    assert units.column_scale([4.11e15], "bandwidth") == ("TB/s", 1e12)
    assert units.in_scale(4.11e15, ("TB/s", 1e12)) == "4,110"
    assert units.column_scale([4.11e12, 2e12], "bandwidth") == ("TB/s", 1e12)
    assert units.column_scale([500e3, 800e3], "bandwidth") == ("kB/s", 1e3)
    assert units.column_scale([1.2e6, 3.4e5], "iops") == ("kIOPS", 1e3)
    assert units.column_scale([2.5e6, 3e6], "iops") == ("MIOPS", 1e6)
    assert units.column_scale([94_100.0, 2.1e6], "ns") == ("µs", 1e3)
    assert units.column_scale([float("nan")], "bandwidth") == ("kB/s", 1e3)
    assert units.column_scale([3, 4], "count") is None


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1.0, max_value=1e12), st.lists(st.floats(min_value=1.0, max_value=1e4), min_size=1,
                                                            max_size=8), st.sampled_from(["bandwidth", "iops", "ns"]))
def test_a_column_s_numbers_read_back_to_their_values_in_its_unit(base, factors, kind):
    """A column whose values lie within four orders of magnitude (a tax table's best rates, a sweep's latencies)."""
    values = [base * factor for factor in factors]
    scale = units.column_scale(values, kind)
    for value in values:
        text = units.in_scale(value, scale)
        assert NUMBER.match(text) and "e" not in text, text
        assert float(text.replace(",", "")) * scale[1] == pytest.approx(value, rel=0.006, abs=0.0051 * scale[1])


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1e3, max_value=1e13), st.floats(min_value=0.0, max_value=0.5),
       st.floats(min_value=0.0, max_value=0.5))
def test_an_interval_is_in_its_value_s_unit_and_holds_it(value, below, above):
    scale = units.column_scale([value], "bandwidth")
    lo, hi = value * (1 - below), value * (1 + above)
    text = units.interval_in(value, lo, hi, scale)
    if lo == hi == value:
        assert text == units.in_scale(value, scale)
        return
    shown, low, high = re.fullmatch(r"(\S+) \((\S+)–(\S+)\)", text).groups()
    low, shown, high = (float(x.replace(",", "")) for x in (low, shown, high))
    assert low <= shown <= high


def test_json_holds_what_csv_does_with_missing_as_null(capsys):
    _, out_csv, _ = analyze(capsys, QUICKSTART, "--reference", "jbod", "--format", "csv")
    _, out_json, _ = analyze(capsys, QUICKSTART, "--reference", "jbod", "--format", "json")
    records = json.loads(out_json)
    from_csv = pd.read_csv(io.StringIO(out_csv))
    assert len(records) == len(from_csv) and list(records[0]) == list(from_csv.columns)
    assert [r["best_bw_bytes"] for r in records] == pytest.approx(list(from_csv["best_bw_bytes"]), rel=1e-12)
    single = next(r for r in records if r["layout"] == "single")
    assert single["tax"] is None and "NaN" not in out_json


def test_columns_chooses_and_an_unknown_one_is_named(capsys):
    status, out, _ = analyze(capsys, QUICKSTART, "--reference", "jbod", "--columns", "layout,rw,tax")
    assert status == 0 and out.splitlines()[0].split() == ["layout", "I/O", "tax", "%"]
    status, _, err = analyze(capsys, QUICKSTART, "--reference", "jbod", "--columns", "layout,speed")
    assert status != 0 and "'speed'" in err and "best_bw_bytes" in err


def test_a_table_too_wide_leaves_out_the_columns_asked_first_and_says_which():
    frame = pd.DataFrame({"layout": ["a-very-long-layout-name"] * 2, "best_numjobs": [8, 16],
                          "tax": [0.1, 0.2], "tax_lo": [0.05, 0.1], "tax_hi": [0.15, 0.3]})
    lines = console.table(frame, ["layout", "best_numjobs", "tax"], width=40, drop=["best_numjobs"])
    assert "jobs" not in lines[0] and max(map(len, lines)) <= 40
    assert any(line.startswith("not shown, to fit 40 columns: jobs") for line in lines)


def test_imported_rows_carry_fio_s_iops_and_percentiles_where_the_file_has_them(imported, capsys):
    """bench-fio's files: IOPS in every row; p99 in every row: fio's own where one job entry is the whole, the worst
    job's where two jobs were reported apart without json+ buckets (a bound on the group's, said in read_from), and
    analyze --metric p99 has a latency for every layout."""
    from flashscale.cli.analyze import load_table

    rows = load_table(str(imported))
    files = sorted((ROOT / "tests/golden/imported/benchfio").rglob("*.json"))
    runs = [json.loads(path.read_text())["jobs"] for path in files]
    one_job = rows[rows["numjobs"] == 1]
    assert sorted(one_job["iops"]) == pytest.approx(sorted(jobs[0]["read"]["iops"] for jobs in runs if len(jobs) == 1))
    assert rows["iops"].notna().all() and rows["clat_p99_ns"].notna().all()
    p99 = [max(job["read"]["clat_ns"]["percentile"]["99.000000"] for job in jobs) for jobs in runs]
    assert sorted(rows["clat_p99_ns"]) == pytest.approx(sorted(p99)) and len(p99) == 8
    status, out, _ = analyze(capsys, imported, "--reference", "jbod", "--metric", "p99", "--columns",
                             "layout,best_numjobs,clat_p99_ns,latency_tax")
    assert status == 0 and "reported apart" not in " ".join(out.split())
