"""A stated prediction is scored only if it was stated before what it predicts began to run: predicted_at (stated's
record) against the layout's first started_at, both to the microsecond."""
from __future__ import annotations

import re

import pandas as pd
import pytest

from flashscale.measure import campaign_folder
from flashscale.analysis.prediction import predict, scoring
from flashscale.campaigns import preregistered
from flashscale.errors import AnalysisError
from flashscale.measure import results

MICROSECONDS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$")
POINTS = [dict(devices=2, rw="read", bs=2**20, numjobs=n, iodepth=1) for n in (1, 2)]


def _rows(started: list[str], layout: str = "jbod", hosts: int | None = None) -> pd.DataFrame:
    rows = [dict(layout=layout, devices=2, rw="read", bs=2**20, numjobs=n, iodepth=1, rep=rep, bw_bytes=n * 1e8,
                 started_at=at) for n in (1, 2) for rep, at in enumerate(started)]
    frame = pd.DataFrame(rows)
    return frame if hosts is None else frame.assign(hosts=hosts, host="all")


def _single() -> pd.DataFrame:
    """The single device, two runs a point alike: its curve's interval is exact."""
    return predict.curve(pd.DataFrame([dict(layout="single", devices=1, rw="read", bs=2**20, numjobs=n, iodepth=1,
                                            rep=rep, bw_bytes=1e8) for n in (1, 2) for rep in (0, 1)]))


def _stated(at: str) -> pd.DataFrame:
    return predict.predict(_single(), "jbod", POINTS).assign(predicted_at=at)


def test_predictions_and_runs_are_stamped_to_the_microsecond(tmp_path):
    preregistered.record(tmp_path, predict.predict(_single(), "jbod", POINTS))
    said = campaign_folder.read_predictions(tmp_path)["predicted_at"]
    assert said.str.match(MICROSECONDS.pattern).all(), said.tolist()
    assert MICROSECONDS.match(results.now())


def test_a_prediction_stated_after_its_layouts_first_run_is_refused_naming_both_times():
    frame = _rows(["2026-11-26T10:00:00.100000+00:00", "2026-11-26T10:00:04.000000+00:00"])
    late = _stated("2026-11-26T10:00:00.500000+00:00")  # the same second as the first run, 0.4 s after it
    with pytest.raises(AnalysisError, match=re.escape(
            "the prediction of jbod was stated at 2026-11-26T10:00:00.500000+00:00, after its first run started at "
            "2026-11-26T10:00:00.100000+00:00: not stated before")):
        scoring.against(late, frame)
    early = scoring.against(_stated("2026-11-26T10:00:00.050000+00:00"), frame)
    assert len(early) == 2 and set(early["agreement"]) == {"same"}


def test_stamps_of_whole_seconds_in_the_same_second_cannot_be_told_apart_and_pass():
    frame = _rows(["2026-11-26T10:00:00+00:00", "2026-11-26T10:00:04+00:00"])
    assert len(scoring.against(_stated("2026-11-26T10:00:00+00:00"), frame)) == 2
    with pytest.raises(AnalysisError, match="not stated before"):
        scoring.against(_stated("2026-11-26T10:00:01+00:00"), frame)


def test_a_cluster_s_prediction_is_held_to_its_own_host_count_s_first_run():
    one = _rows(["2026-11-26T10:00:00.000000+00:00"], hosts=1)  # measured alone first: the baseline
    two = _rows(["2026-11-26T10:01:00.000000+00:00"], hosts=2)
    frame = pd.concat([one, two], ignore_index=True)
    said = _stated("2026-11-26T10:00:30.000000+00:00").assign(hosts=2, host="all")
    assert len(scoring.against(said, frame)) == 2  # after one host's runs, before two hosts'
    with pytest.raises(AnalysisError, match="the prediction of jbod on 2 hosts was stated at 2026-11-26T10:01:30"):
        scoring.against(said.assign(predicted_at="2026-11-26T10:01:30.000000+00:00"), frame)


def test_a_precondition_written_before_the_statement_is_no_run_it_predicts():
    """A cluster preconditions the files of every host count at once, before it states the first: the runs a
    prediction must precede are the measured ones (a warm-up among them)."""
    frame = _rows(["2026-11-26T10:01:00.000000+00:00"])
    written = frame.iloc[:1].assign(phase="precondition", started_at="2026-11-26T10:00:00.000000+00:00")
    frame = pd.concat([written, frame.assign(phase="measure")], ignore_index=True)
    assert len(scoring.against(_stated("2026-11-26T10:00:30.000000+00:00"), frame)) == 2
    warm = frame.assign(phase="measure")  # had it been a measured (warm-up) run, the prediction came after it
    with pytest.raises(AnalysisError, match="after its first run started at 2026-11-26T10:00:00.000000"):
        scoring.against(_stated("2026-11-26T10:00:30.000000+00:00"), warm)
