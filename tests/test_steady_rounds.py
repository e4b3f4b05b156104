"""A precondition in rounds until SNIA steady state: the round logic on injected series, the rows a campaign keeps
(fio replaced by a plain function that returns real fio output with the bandwidth of each round), and on the
emulated array, where a capped device gives the same bandwidth every round."""
from __future__ import annotations

import copy
from pathlib import Path

import pandas as pd
import pytest
from tqdm.auto import tqdm

from flashscale.campaigns import campaign
from flashscale.measure.recorder import Recorder
from flashscale.analysis import evidence
from flashscale.arrays import layouts
from flashscale.measure import fio, fio_output, precondition, results
from flashscale.measure.steady import steady_state
from flashscale.measure.sweep import Sweep
from flashscale.publish import plots

from conftest import leftover_mounts, loop_devices_backed_under

GOLDEN = Path(__file__).parent / "golden"
MB = 1_000_000
MIB = 2**20


def drifting(number: int) -> dict:
    return {"bw_bytes": 100 * MB * (1 + 0.05 * number)}  # 5% more every round: its range passes, its drift never


def test_a_constant_series_stops_at_its_fifth_round_steady():
    seen = list(precondition.rounds(lambda n: {"bw_bytes": 7.0, "n": n}, rounds_max=25))
    assert [row["n"] for row, _ in seen] == [1, 2, 3, 4, 5]
    assert [v.steady for _, v in seen] == [False] * 4 + [True] and seen[-1][1].round == 5


def test_a_drifting_series_runs_to_the_maximum_and_is_never_steady():
    seen = list(precondition.rounds(drifting, rounds_max=9))
    assert len(seen) == 9 and not any(v.steady for _, v in seen)
    assert seen[-1][1].excursion_fraction > 0.10 and "not steady after 9 rounds" in seen[-1][1].note
    assert precondition.verdict_columns(seen[-1][1]) == {"steady": False, "steady_round": None}
    assert precondition.verdict_columns(None) == {"steady": None, "steady_round": None}


def fake_fio(series):
    """fio.run replaced: real fio output (a write) whose bandwidth is the next of ``series``."""
    output = fio_output.load_output((GOLDEN / "write_1target.json").read_text())
    values = iter(series)

    def run(job, outdir, runner, *, cgroup_procs=()):
        Path(outdir).mkdir(parents=True)
        data = copy.deepcopy(output)
        data["jobs"][0]["write"]["bw_bytes"] = next(values)
        return data
    return run


def record(tmp_path, monkeypatch, series, **sweep) -> pd.DataFrame:
    monkeypatch.setattr(fio, "run", fake_fio(series))
    spec = campaign.CampaignSpec("rounds", layouts=("single",), sweep=Sweep(rw=["write"], numjobs=[1], repetitions=1, **sweep))
    recorder = Recorder(spec.name, spec.host, spec.sweep, tmp_path, None, "run", spec.array.rw_caps(),
                        tqdm(disable=True), {})
    recorder.sweep(layouts.Layout("single", 1, (str(tmp_path),), "directory", "a folder"), [])
    return results.rebuild_table(tmp_path)


def test_a_drifting_precondition_stops_at_the_maximum_and_every_row_says_not_steady(tmp_path, monkeypatch):
    series = [drifting(n)["bw_bytes"] for n in range(1, 8)] + [100 * MB]
    table = record(tmp_path, monkeypatch, series, steady_rounds=True, rounds_max=7)
    rounds = table[table["phase"] == "precondition"]
    assert rounds["round"].tolist() == list(range(1, 8)) and rounds["bw_bytes"].tolist() == series[:7]
    assert rounds["raw_dir"].tolist() == [f"raw/single/precondition/round{n}" for n in range(1, 8)]
    assert table["steady"].tolist() == [False] * 8 and table["steady_round"].isna().all()
    assert table.loc[table["phase"] == "measure", "round"].isna().all()
    assert str(table["steady"].dtype) == "boolean" and str(table["round"].dtype) == "Int64"


def test_a_precondition_that_settles_says_when_on_every_row(tmp_path, monkeypatch):
    series = [300 * MB, 200 * MB, 150 * MB] + [100 * MB] * 30
    table = record(tmp_path, monkeypatch, series, steady_rounds=True)
    rounds = table[table["phase"] == "precondition"]
    verdict = steady_state(series[:len(rounds)])
    assert verdict.steady and len(rounds) == verdict.round  # stopped at the first steady round
    assert rounds["steady"].tolist() == [False] * (verdict.round - 1) + [True]
    measured = table[table["phase"] == "measure"]
    assert measured["steady"].tolist() == [True] and measured["steady_round"].tolist() == [verdict.round]


def test_without_rounds_the_precondition_runs_once_and_rows_have_no_verdict(tmp_path, monkeypatch):
    table = record(tmp_path, monkeypatch, [100 * MB, 100 * MB])
    assert table["phase"].tolist() == ["precondition", "measure"]
    assert table["steady"].isna().all() and table["round"].isna().all()


def test_notebook_parameters_ask_for_rounds_and_fio_s_steady_state():
    spec = campaign.CampaignSpec.from_parameters(STEADY_ROUNDS=True, PRECONDITION_ROUNDS_MAX=12, SS="bw_slope:1%",
                                                 SS_DUR_S=10, SS_RAMP_S=2)
    sweep = spec.sweep
    assert (sweep.steady_rounds, sweep.rounds_max, sweep.ss, sweep.ss_dur_s, sweep.ss_ramp_s) == (
        True, 12, "bw_slope:1%", 10, 2)
    default = campaign.CampaignSpec.from_parameters().sweep
    assert (default.steady_rounds, default.ss) == (False, None)


CAP = 20 * MB


@pytest.mark.root
def test_on_the_emulated_array_a_capped_device_is_steady_within_a_few_rounds(tmp_path):
    spec = campaign.CampaignSpec.from_parameters(
        CAMPAIGN="rounds", DEVICES=1, DEVICE_SIZE=2**30, LAYOUTS=["single"], RW=["read"], NUMJOBS=[1], BS=[MIB],
        REPETITIONS=1, RUNTIME_S=1, RAMP_S=0, FILE_SIZE=32 * MIB, CAP_READ_BPS=100 * MB, CAP_WRITE_BPS=CAP,
        STEADY_ROUNDS=True,
        DATA_DIR=str(tmp_path / "data"), BACKING_DIR=str(tmp_path))
    result = campaign.run(spec, progress=False)
    assert loop_devices_backed_under(tmp_path) == [] and leftover_mounts(result.directory) == []
    table = result.table
    rounds = table[table["phase"] == "precondition"]
    # a capped device gives the cap every round: steady as soon as a window of five holds it (round 5), or a round
    # or two later when the throttle's first slice makes an early round stand out; never "not steady"
    last = len(rounds)
    assert rounds["round"].tolist() == list(range(1, last + 1)) and 5 <= last <= 7
    assert rounds["steady"].tolist() == [False] * (last - 1) + [True]
    # each round ran inside the throttled cgroup: a measurement of the capped device, held to its truth
    assert (rounds["truth_bw_bytes"] == CAP).all() and not rounds["above_truth"].any()
    assert rounds["write_bw_bytes"].tolist() == pytest.approx([CAP] * last, rel=0.1)
    measured = table[table["phase"] == "measure"]
    assert measured["steady"].tolist() == [True] and measured["steady_round"].tolist() == [last]


def test_the_verdict_in_words_and_the_figure_of_the_rounds():
    drift = [drifting(n)["bw_bytes"] for n in range(1, 8)]
    frame = pd.DataFrame({"layout": ["jbod"] * 7 + ["single"] * 5, "round": list(range(1, 8)) + [1, 2, 3, 4, 5],
                          "bw_bytes": drift + [100 * MB] * 5})
    jbod, single = evidence.steady_round_sentences(frame)
    assert jbod.startswith("jbod: not steady after 7 rounds") and "before steady state" in jbod
    assert single.startswith("single: steady at round 5") and "100 MB/s" in single
    assert evidence.steady_round_sentences(frame.drop(columns="round")) == []
    figure = plots.steady_rounds(frame)
    assert len(figure.axes[0].lines) == 4  # per layout: the rounds and the fitted line over its window
