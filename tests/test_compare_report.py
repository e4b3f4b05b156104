"""``flashscale compare A B --report DIR``: the report notebook (notebooks/compare.ipynb) executed by papermill on real
fio output imported as others' is (tests/golden/compare: one point held 5% slower by fio's own rate limit), and on
an archive query given by a path relative to where the command was typed. The numbers the executed notebook
recorded are the command's own: the same comparison, made once (``notebooks.compare_report``)."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest

from flashscale.analysis import campaign_diff
from flashscale.cli import main, parser
from flashscale.cli.compare import GATE_FAILED
from flashscale.errors import AnalysisError, ConfigError
from flashscale.measure import campaign_folder
from flashscale.notebooks import compare_report
from flashscale.publish import comparison, report

pytestmark = pytest.mark.notebook

GOLDEN = Path(__file__).parent / "golden"
PATTERN = "{layout}/{bs}/run-{rep}/{rw}-{iodepth}-{numjobs}.json"


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """A and B imported; each campaign.json then given a governor, as a campaign measured here records one."""
    root = tmp_path_factory.mktemp("compare-report")
    for name, governor in (("A", "performance"), ("B", "powersave")):
        assert main(["import", str(GOLDEN / "compare" / name), "--to", str(root / name), "--pattern", PATTERN,
                     "--devices", "1", "-q"]) == 0
        path = root / name / campaign_folder.CAMPAIGN_JSON
        record = json.loads(path.read_text())
        record["environment"]["governor"] = governor
        path.write_text(json.dumps(record))
    return root


def test_the_report_records_the_slower_point_alone_what_differs_first_and_the_gate_still_fails(imported, capsys):
    out = imported / "report"
    assert main(["compare", str(imported / "A"), str(imported / "B"), "--report", str(out),
                 "--fail-on", "slower"]) == GATE_FAILED
    assert f"Report: {out / 'compare.html'}" in capsys.readouterr().err
    executed = out / "compare.ipynb"
    recorded = report.read_record(executed)
    assert recorded["margin"] == pytest.approx(0.02) and recorded["only_in_one"] == 0
    assert recorded["verdicts"] == {"slower": 2, "equivalent": 2, "inconclusive": 2}
    slower = [c for c in recorded["changes"] if c["verdict"] == "slower"]
    assert sorted((c["bs"], c["metric"]) for c in slower) == [("65536", "bandwidth"), ("65536", "iops")]
    for change in slower:
        assert change["change"] == pytest.approx(-0.05, abs=0.005)
        assert -0.06 < change["change_lo"] < change["change"] < change["change_hi"] < -0.04
    assert recorded["environment"][0] == {"what": "environment.governor", "a": "performance", "b": "powersave"}
    assert recorded["headline"] == {"verdicts": "6", "slower": "2", "largest change": "+24.7%"}
    given = json.loads(executed.read_text())["metadata"]["papermill"]["parameters"]
    assert given["A"] == str(imported / "A") and given["MARGIN"] is None and given["METRIC"] == ""
    html = (out / "compare.html").read_text()
    assert "What differs between the two machines" in html and "environment.governor" in html
    assert "64 KiB bandwidth: slower beyond the 2% margin, -5.0% [-5.3, -4.8]" in html
    assert "compare_report.compare(" not in html and "data:image/png;base64" in html  # no code; the figure


def test_an_archive_query_relative_to_where_it_was_typed_one_metric_and_a_margin(imported, capsys, monkeypatch):
    monkeypatch.chdir(imported)
    assert main(["archive", "add", "A", "--archive", "team.sqlite"]) == 0
    capsys.readouterr()
    query = "archive:team.sqlite?layout=single&last=1"
    assert main(["compare", query, "B", "--metric", "bw", "--margin", "0.03", "--format", "csv"]) == 0
    said = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert main(["compare", query, "B", "--metric", "bw", "--margin", "0.03", "--report", "bw-report"]) == 0
    recorded = report.read_record(imported / "bw-report" / "compare.ipynb")
    assert recorded["margin"] == pytest.approx(0.03) and {c["metric"] for c in recorded["changes"]} == {"bandwidth"}
    assert recorded["verdicts"] == {"slower": 1, "equivalent": 1}
    assert [c["change"] for c in recorded["changes"]] == pytest.approx(list(said["change"]), abs=1e-12)
    assert [c["verdict"] for c in recorded["changes"]] == list(said["verdict"])
    given = json.loads((imported / "bw-report" / "compare.ipynb").read_text())["metadata"]["papermill"]["parameters"]
    assert given["A"] == f"archive:{imported / 'team.sqlite'}?layout=single&last=1" and given["METRIC"] == "bw"


def test_a_report_that_stops_says_why_and_names_the_executed_notebook(imported, tmp_path):
    with pytest.raises(ConfigError, match=r"compare.ipynb stopped with ConfigError: .*does not exist.*"
                                          r"the executed notebook is"):
        compare_report.report(str(tmp_path / "nowhere"), str(imported / "B"), tmp_path / "out")
    assert (tmp_path / "out" / "compare.ipynb").is_file()


def test_a_report_folder_that_cannot_be_one_is_refused_before_the_comparison_runs(imported, tmp_path, capsys):
    (tmp_path / "taken").write_text("a file\n")
    assert main(["compare", str(tmp_path / "nowhere"), str(imported / "B"), "--report", str(tmp_path / "taken")]) == 1
    assert "--report" in capsys.readouterr().err and "cannot be made a folder" in str(
        pytest.raises(ConfigError, compare_report.report_folder, tmp_path / "taken" / "below").value)


def test_one_metric_is_its_own_family_and_an_unknown_one_is_refused_by_name(imported):
    every = compare_report.compare(str(imported / "A"), str(imported / "B"))
    iops = compare_report.compare(str(imported / "A"), str(imported / "B"), metric="iops")
    assert set(iops.changed["metric"]) == {"iops"} and len(iops.changed) == 2
    assert set(every.changed["metric"]) == {"bandwidth", "iops", "p99 latency"}
    assert campaign_diff.chosen(["p99", "bw"]) == ("bandwidth", "p99 latency")
    assert campaign_diff.chosen("") == campaign_diff.chosen(None) == tuple(campaign_diff.METRICS)
    with pytest.raises(AnalysisError, match="metric 'p50' is not one a comparison reads: choose from bw, iops, p99"):
        campaign_diff.chosen("p50")
    assert parser().parse_args(["compare", "a", "b", "--metric", "p99"]).metric == "p99"
    for name in campaign_diff.SHORT:  # the command's choices are the analysis's names
        assert campaign_diff.chosen(parser().parse_args(["compare", "a", "b", "--metric", name]).metric)


def test_the_verdicts_in_words_name_each_one_beyond_the_margin(imported):
    compared = compare_report.compare(str(imported / "A"), str(imported / "B"), metric="bw")
    said = comparison.sentences(compared.changed, compared.alone, compared.said)
    assert said == [compared.said, "64 KiB bandwidth: slower beyond the 2% margin, -5.0% [-5.3, -4.8].",
                    "Every point was measured by both campaigns."]
    same = compare_report.compare(str(imported / "A"), str(imported / "A"), metric="bw")
    assert comparison.sentences(same.changed, same.alone, same.said)[1].startswith("No verdict is slower or faster")
    table = comparison.changes_table(compared.changed)
    assert list(table.columns) == comparison.HEAD and list(table["verdict"]) == ["slower", "equivalent"]


def test_a_side_is_given_to_the_notebook_as_an_absolute_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert compare_report.absolute("before") == str(tmp_path / "before")
    assert compare_report.absolute("archive:a.sqlite") == f"archive:{tmp_path / 'a.sqlite'}"
    assert compare_report.absolute("archive:a.sqlite?host=h&last=2") == f"archive:{tmp_path / 'a.sqlite'}?host=h&last=2"
    assert compare_report.folders("archive:x", str(tmp_path), str(tmp_path / "t.csv")) == [str(tmp_path)]
    assert compare_report.folders("archive:x") is None
