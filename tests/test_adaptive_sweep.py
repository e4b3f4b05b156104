"""An adaptive sweep in a campaign: only the points the explorer chooses are run, each a row like a full sweep's,
and what it skipped is said with the reason (``raw/<layout>/adaptive.json``)."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tqdm.std import tqdm

from flashscale.campaigns import campaign
from flashscale.arrays import layouts
from flashscale.errors import ConfigError
from flashscale.measure import fio, fio_output, results
from flashscale.measure.recorder import Recorder
from flashscale.measure.sweep import Sweep

from conftest import leftover_mounts, loop_devices_backed_under

GOLDEN = Path(__file__).parent / "golden"
MB = 1_000_000
GRID = tuple(range(1, 65))  # every numjobs: the grid an adaptive sweep saves most on


def saturating_fio(plateau_jobs: int, per_job: float, noise: float, seed: int = 0):
    """fio.run replaced by real fio output whose write bandwidth grows with numjobs up to ``plateau_jobs``."""
    output = fio_output.load_output((GOLDEN / "write_1target.json").read_text())
    rng = np.random.default_rng(seed)

    def run(job, outdir, runner, *, cgroup_procs=()):
        Path(outdir).mkdir(parents=True)
        data = copy.deepcopy(output)
        data["jobs"][0]["write"]["bw_bytes"] = min(job.numjobs, plateau_jobs) * per_job * rng.lognormal(0, noise)
        return data
    return run


def adaptive_table(tmp_path, monkeypatch, **sweep) -> pd.DataFrame:
    monkeypatch.setattr(fio, "run", saturating_fio(8, 100 * MB, 0.01))
    spec = Sweep(rw=["write"], numjobs=GRID, repetitions=3, precondition=False, **sweep)
    recorder = Recorder("adaptive", "localhost", spec, tmp_path, None, "run", {"read": None, "write": None},
                        tqdm(disable=True), {})
    recorder.sweep(layouts.Layout("single", 1, (str(tmp_path),), "directory", "a folder"), [])
    return results.rebuild_table(tmp_path)


def test_an_adaptive_sweep_finds_the_plateau_with_a_fraction_of_the_grid(tmp_path, monkeypatch):
    table = adaptive_table(tmp_path, monkeypatch, adaptive="numjobs")
    measured = table[table["phase"] == "measure"]
    assert len(measured) <= len(GRID) * 3 / 3  # at most a third of the whole grid's 192 runs
    assert set(measured["adaptive"]) == {f"numjobs={n}" for n in measured["numjobs"]}
    found = json.loads((tmp_path / "raw" / "single" / "adaptive.json").read_text())
    assert len(found) == 1 and found[0]["axis"] == "numjobs" and found[0]["rw"] == "write"
    assert found[0]["peak_bw_bytes"] == pytest.approx(800 * MB, rel=0.03)
    assert found[0]["knee"] == 8
    skipped = {entry["value"] for entry in found[0]["skipped"]}
    assert skipped == set(GRID) - set(measured["numjobs"]) and skipped
    assert all(entry["reason"] for entry in found[0]["skipped"] + found[0]["measured"])


def test_a_full_sweep_measures_every_point_and_says_none_was_adaptive(tmp_path, monkeypatch):
    table = adaptive_table(tmp_path, monkeypatch)
    assert len(table) == len(GRID) * 3 and table["adaptive"].isna().all()
    assert not (tmp_path / "raw" / "single" / "adaptive.json").exists()


def test_only_numjobs_or_iodepth_can_be_explored():
    with pytest.raises(ConfigError, match="adaptive='bs'"):
        Sweep(adaptive="bs")


@pytest.mark.root
def test_on_the_emulated_array_the_adaptive_peak_is_the_cap(tmp_path):
    """2 s a run: in 1 s runs one job a device read 191-194 MB/s of 200 and eight 204-206 (the throttle lets a
    slice through), a 6.6% "gain" once at p = 0.08, and in a CI run the sweep doubled to the grid's end; in 2 s runs
    every point from 2 jobs read within 1.3% of 200 (5 campaigns)."""
    spec = campaign.CampaignSpec.from_parameters(
        CAMPAIGN="adaptive", DATA_DIR=str(tmp_path / "data"), BACKING_DIR=str(tmp_path), DEVICES=2,
        DEVICE_SIZE=2**30, LAYOUTS=["jbod"], RW=["read"], NUMJOBS=[1, 2, 4, 8, 16], REPETITIONS=2, RUNTIME_S=2,
        RAMP_S=1, FILE_SIZE=16 * 2**20, CAP_READ_BPS=100 * MB, CAP_WRITE_BPS=100 * MB, ADAPTIVE="numjobs")
    result = campaign.run(spec, progress=False)
    assert loop_devices_backed_under(tmp_path) == [] and leftover_mounts(result.directory) == []
    measured = result.table[result.table["phase"] == "measure"]
    assert len(measured) < 5 * 2 and not measured["above_truth"].any()
    found = json.loads((result.directory / "raw" / "jbod" / "adaptive.json").read_text())
    assert found[0]["peak_bw_bytes"] == pytest.approx(200 * MB, rel=0.03)
