"""``flashscale compare`` on real fio output imported as others' is: two campaigns of fio 3.33 whose one point was
held 5% slower by fio's own rate limit (tests/golden/compare), and fio-plot's bench-fio folders
(tests/golden/imported/benchfio). The slower point is named and only it, the gate exits 5, the table fits 100
columns, and csv, json and the figure say the same."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest

from flashscale.cli import main
from flashscale.cli.compare import GATE_FAILED

GOLDEN = Path(__file__).parent / "golden"
PATTERN = "{layout}/{bs}/run-{rep}/{rw}-{iodepth}-{numjobs}.json"


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    for name in ("A", "B"):
        assert main(["import", str(GOLDEN / "compare" / name), "--to", str(root / name), "--pattern", PATTERN,
                     "--devices", "1", "-q"]) == 0
    assert main(["import", str(GOLDEN / "imported" / "benchfio"), "--to", str(root / "benchfio"), "--pattern",
                 PATTERN, "--map", str(GOLDEN / "imported" / "benchfio-map.yaml"), "-q"]) == 0
    return root


def _csv(capsys) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(capsys.readouterr().out))


def test_the_point_held_5pct_slower_is_slower_and_only_it(imported, capsys):
    assert main(["compare", str(imported / "A"), str(imported / "B"), "--format", "csv"]) == 0
    changed = _csv(capsys)
    rates = changed[changed["metric"].isin(["bandwidth", "iops"])]
    slower = rates[rates["verdict"] == "slower"]
    assert sorted(slower["bs"]) == [65536, 65536]
    assert slower["change"].to_numpy() == pytest.approx(-0.05, abs=0.005)
    assert (rates[rates["bs"] == 131072]["verdict"] == "equivalent").all()
    assert not (changed[changed["metric"] == "p99 latency"]["verdict"] == "slower").any()


def test_the_gate_exits_5_on_slower_and_0_where_the_threshold_is_beyond_the_change(imported, capsys):
    assert main(["compare", str(imported / "A"), str(imported / "B"), "--fail-on", "slower"]) == GATE_FAILED
    out = capsys.readouterr().out
    assert "Gate failed: 2 verdict(s)" in out
    assert all(len(line) <= 100 for line in out.splitlines()), max(out.splitlines(), key=len)
    lines = out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("point"))
    assert lines[first + 1].split()[0] in ("64", "128")  # largest change first: a latency or the slower point
    assert main(["compare", str(imported / "A"), str(imported / "B"), "--fail-on", "slower:10"]) == 0
    assert main(["compare", str(imported / "B"), str(imported / "A"), "--fail-on", "slower"]) == 0  # faster
    assert main(["compare", str(imported / "A"), str(imported / "A"), "--fail-on", "slower"]) == 0
    capsys.readouterr()
    assert main(["compare", str(imported / "A"), str(imported / "B"), "--fail-on", "faster"]) == 1
    assert "--fail-on 'faster'" in capsys.readouterr().err


def test_json_and_the_figure_say_what_the_table_says(imported, capsys, tmp_path):
    figure = tmp_path / "changes.png"
    assert main(["compare", str(imported / "A"), str(imported / "B"), "--format", "json", "--margin", "0.03",
                 "--figure", str(figure)]) == 0
    said = json.loads(capsys.readouterr().out)
    assert said["margin"] == pytest.approx(0.03) and said["margin_note"] == "margin 3% (--margin)"
    assert {c["verdict"] for c in said["changes"] if c["bs"] == "65536" and c["metric"] == "bandwidth"} == {"slower"}
    assert said["only_in_one"] == [] and said["gate_failed"] == []
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_others_folders_of_one_run_a_point_give_no_verdict_and_say_so(imported, capsys):
    """bench-fio's two runs are kept as reps 1 and 2 of one point: against itself, equal; against A (other
    points), nothing shared, every point in one only."""
    assert main(["compare", str(imported / "benchfio"), str(imported / "benchfio"), "--format", "csv"]) == 0
    changed = _csv(capsys)
    assert len(changed) and (changed["change"].abs() < 1e-12).all()
    assert set(changed["verdict"]) <= {"equivalent", "inconclusive", "one run: no interval"}
    assert main(["compare", str(imported / "benchfio"), str(imported / "A"), "--fail-on", "inconclusive"]) == 0
    out = capsys.readouterr().out
    assert "(no shared point)" in out and "only in A: jbod x2 read 1 MiB j1 q1" in out
    assert "4 point(s) only in A; 2 point(s) only in B" in out


def test_a_side_that_is_not_there_is_refused_by_name(imported, capsys, tmp_path):
    assert main(["compare", str(tmp_path / "nowhere"), str(imported / "A")]) == 1
    assert "nowhere' does not exist" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["compare", str(tmp_path / "empty"), str(imported / "A")]) == 1
    assert "holds no results table" in capsys.readouterr().err


def test_a_long_list_of_points_in_one_only_is_cut_and_says_how_many_more(imported, capsys):
    from flashscale.measure import sides
    from flashscale.publish import comparison

    a = sides.read(str(imported / "A"))
    alone = pd.DataFrame({"layout": "jbod", "devices": "2", "rw": "read", "bs": [str(4096 * k) for k in range(1, 26)],
                          "numjobs": "1", "iodepth": "1", "side": "B"})
    text = comparison.text(pd.DataFrame(), alone, pd.DataFrame(columns=["what", "a", "b"]), "margin 2%", "said.",
                           pd.DataFrame(), (a, a), most_differences=20)
    assert text.count("only in B: jbod x2 read") == 20 and "and 5 more (--format json lists them all)" in text
