"""A user's job file as a campaign workload (measure.jobrun.workload): checked before anything runs, run on every
layout once per swept combination and repetition, one row per group kept beside its raw files; its efficiency and
tax (analysis.jobfile) on known numbers, and on the emulated array against the caps and the file's own rate limit."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from flashscale.campaigns import campaign
from flashscale.analysis import jobfile as jobfile_analysis
from flashscale.arrays.layouts import Layout
from flashscale.errors import AnalysisError, ConfigError
from flashscale.measure import jobrun
from flashscale.measure.jobfile import MARK, JobFile, JobFileError
from flashscale.publish import records
from flashscale.system.commands import RecordingRunner

from conftest import cgroups_left, leftover_mounts, run_notebook, stored_campaign
from flashscale.measure import truth

ROOT = Path(__file__).resolve().parents[1]
MIXED = ROOT / "runners" / "jobs" / "mixed.fio"
CORPUS = Path(__file__).parent / "jobfiles"
GROUPS = {"log-writer", "oltp", "scan"}
RATE = 8 * 2**20  # mixed.fio: rate=8m per job, numjobs=2
SWEEP = dict(RW=["read"], BS=[1048576], NUMJOBS=[2], IODEPTH=[1], REPETITIONS=1, RUNTIME_S=1, RAMP_S=0,
             FILE_SIZE=16 * 2**20, DEVICE_SIZE=2**30)


def spec(tmp_path: Path, **overrides) -> campaign.CampaignSpec:
    return campaign.CampaignSpec.from_parameters(CAMPAIGN="jf", DATA_DIR=str(tmp_path / "data"),
                                                 BACKING_DIR=str(tmp_path), **{**SWEEP, **overrides})


def test_axes_and_repetitions_are_checked_when_the_workload_is_made():
    made = jobrun.workload(MIXED, {"iodepth": [1, 4], "numjobs": [2]}, repetitions=2)
    assert made.axes == {"numjobs": (2,), "iodepth": (1, 4)} and made.runs() == 4  # AXES order, not the caller's
    assert jobrun.combinations(made.axes) == [{"numjobs": 2, "iodepth": 1}, {"numjobs": 2, "iodepth": 4}]
    assert jobrun.point_name({"numjobs": 2, "iodepth": 4}) == "jobfile-nj2-qd4"
    assert jobrun.point_name({}) == "jobfile-as-written" and jobrun.workload(MIXED).runs() == 1
    for axes, word in [({"rw": ["read"]}, "rw"), ({"numjobs": [0]}, "numjobs"), ({"bs": []}, "bs"),
                       ({"iodepth": 4}, "iodepth")]:
        with pytest.raises(ConfigError, match=word):
            jobrun.workload(MIXED, axes)
    with pytest.raises(ConfigError, match="repetitions"):
        jobrun.workload(MIXED, repetitions=0)


def test_a_file_refused_on_any_layout_stops_the_campaign_before_it_starts(tmp_path):
    with pytest.raises(JobFileError, match=r"exec_prerun.fio:[0-9]+: exec_prerun"):
        campaign.run(spec(tmp_path, EMULATION="directory"), progress=False,
                     workloads=[jobrun.workload(CORPUS / "refused" / "exec_prerun.fio")])
    assert not (tmp_path / "data").exists()


class FakeRecorder:
    """What a workload uses of measure.recorder.Recorder."""

    def __init__(self, directory: Path):
        self.directory, self.runner, self.kept = directory, RecordingRunner(), []
        self.campaign, self.host, self.run_id, self.verdict = "c", "localhost", "r", None
        self.caps = {"read": 1e8, "write": 1e8}
        self.bar = type("Bar", (), {"set_postfix_str": lambda self, text: None})()

    def keep(self, layout, row, cgroup_procs):
        self.kept.append(row)


def test_each_layout_checks_the_file_against_its_own_targets_before_the_first_run(tmp_path):
    """opendir inside the stand-in layout passes when the workload is made, not on a real layout's targets."""
    job = tmp_path / "job.fio"
    job.write_text("[scan]\nrw=read\nsize=1m\nopendir=/flashscale-layout/0/data\n")
    made = jobrun.workload(job)
    recorder = FakeRecorder(tmp_path / "campaign")
    layout = Layout("jbod", 2, (str(tmp_path / "m0"), str(tmp_path / "m1")), "directory", "two directories")
    with pytest.raises(JobFileError, match="job.fio:4: opendir"):
        made(recorder, layout, [])
    assert recorder.runner.history == [] and recorder.kept == [] and not (tmp_path / "campaign").exists()


def kept_job_file_is_the_users(job_fio: Path, targets: list[str], overrides: dict) -> None:
    """The rewritten file: every line the user wrote, byte for byte and in order, except the target and the swept
    options; flashscale's own lines (ending in MARK) name exactly the layout's targets."""
    user = JobFile.read(MIXED)
    changed = {**overrides, "directory": None}  # a swept option's line changes where its value differs
    kept = [line for line in job_fio.read_text().splitlines() if not line.endswith(MARK)]
    assert kept == [line.text for line in user.lines
                    if line.kind != "option" or line.key not in changed or line.value == str(changed[line.key])]
    written = [line for line in job_fio.read_text().splitlines() if line.startswith("directory=")]
    assert written and all(line == f"directory={':'.join(targets)}{MARK}" for line in written)
    assert "/mnt/fast" not in job_fio.read_text()


def check_rows_and_raw_files(result: campaign.CampaignResult, layouts: list[str], combos: int, reps: int) -> pd.DataFrame:
    table = result.table
    rows = table[table["phase"] == jobrun.PHASE]
    assert (rows["workload"] == "jobfile").all() and rows["job_file_sha256"].eq(JobFile.read(MIXED).sha256).all()
    for layout in layouts:
        mine = rows[rows["layout"] == layout]
        assert len(mine) == len(GROUPS) * combos * reps, layout
        assert mine.groupby("group").size().to_dict() == {g: combos * reps for g in GROUPS}
        for raw_dir, runs in mine.groupby("raw_dir"):
            assert set(runs["group"]) == GROUPS and raw_dir.startswith(f"raw/{layout}/jobfile-qd")
            folder = result.directory / raw_dir
            env = json.loads((folder / "env.json").read_text())
            assert (folder / "fio.json").exists() and env["row"]["raw_dir"] == raw_dir
            kept_job_file_is_the_users(folder / "job.fio", env["targets"], {"iodepth": env["row"]["iodepth"]})
    assert set(rows["iodepth"]) == {1, 4} and set(rows["rep"]) == set(range(reps))
    return rows


@pytest.mark.long
def test_a_campaign_on_directories_runs_the_file_on_each_layout(tmp_path):
    result = campaign.run(spec(tmp_path, EMULATION="directory", DEVICES=2, LAYOUTS=["single", "jbod"]),
                          progress=False, workloads=[jobrun.workload(MIXED, {"iodepth": [1, 4]}, repetitions=1)])
    rows = check_rows_and_raw_files(result, ["single", "jbod"], combos=2, reps=1)
    assert rows["cap_bps"].isna().all() and rows["truth_bw_bytes"].isna().all()  # no cgroup, no caps, no truth
    # the sweep's own analysis reads only its own points: the job file's rows are not among them
    from flashscale.analysis import baseline_and_tax
    assert len(baseline_and_tax.point_means(result.table)) == 2
    summary = jobfile_analysis.summarize(result.table, reference="jbod")
    assert set(summary["group"]) == GROUPS and len(summary) == 6


def frame(**bw) -> pd.DataFrame:
    """Job file rows of two groups on single (1 device) and jbod / btrfs-raid0 (2 devices), three repetitions each
    of two iodepths: ``bw[layout]`` is the scan group's bandwidth at iodepth 4 (iodepth 1: half of it)."""
    rows = []
    for layout, devices in [("single", 1), ("jbod", 2), ("btrfs-raid0", 2)]:
        for qd in (1, 4):
            for rep, noise in enumerate((0.99, 1.0, 1.01)):
                scan = bw[layout] * (1 if qd == 4 else 0.5) * noise
                for group, rw, value in [("scan", "read", scan), ("log", "write", 16e6 * noise)]:
                    rows.append({"layout": layout, "devices": devices, "group": group, "rw": rw, "bs": 1 << 20,
                                 "numjobs": 2, "iodepth": qd, "rep": rep, "bw_bytes": value, "warmup": False,
                                 "read_bw_bytes": value if rw == "read" else 0.0, "too_short": False,
                                 "write_bw_bytes": value if rw == "write" else 0.0, "workload": "jobfile",
                                 "phase": "workload"})
    sweep = {**rows[0], "workload": None, "group": None, "phase": "measure", "bw_bytes": 1.0}
    return pd.DataFrame([*rows, sweep])


def test_tax_and_efficiency_of_each_group_on_known_numbers():
    summary = jobfile_analysis.summarize(frame(single=100e6, jbod=200e6, **{"btrfs-raid0": 150e6}))
    at = summary.set_index(["layout", "group"])
    assert at.loc[("jbod", "scan"), "best_iodepth"] == 4 and at.loc[("jbod", "scan"), "reps"] == 3
    assert at.loc[("btrfs-raid0", "scan"), "tax"] == pytest.approx(0.25)
    assert at.loc[("btrfs-raid0", "scan"), "tax_verdict"] == "tax"
    assert at.loc[("btrfs-raid0", "scan"), "tax_lo"] < 0.25 < at.loc[("btrfs-raid0", "scan"), "tax_hi"]
    assert at.loc[("jbod", "scan"), "efficiency"] == pytest.approx(1.0)
    assert at.loc[("btrfs-raid0", "scan"), "efficiency"] == pytest.approx(0.75)
    # a rate-limited group costs nothing on any layout and gains nothing from more devices
    assert at.loc[("btrfs-raid0", "log"), "tax"] == pytest.approx(0.0, abs=1e-12)
    assert at.loc[("btrfs-raid0", "log"), "tax_verdict"] == "inconclusive"  # 0% in a 1% spread: +/-3.6%
    assert at.loc[("jbod", "log"), "efficiency"] == pytest.approx(0.5)
    # the tax is at the same devices: one device has no jbod of its own to be taxed against
    assert np.isnan(at.loc[("single", "scan"), "tax"]) and at.loc[("single", "scan"), "tax_verdict"] == "unknown"
    assert (summary.loc[summary["layout"] == "jbod", "tax_verdict"] == "reference").all()


def test_refusals_name_what_is_missing():
    table = frame(single=1e8, jbod=2e8, **{"btrfs-raid0": 1e8})
    with pytest.raises(AnalysisError, match="'md-raid0'"):
        jobfile_analysis.summarize(table, reference="md-raid0")
    with pytest.raises(AnalysisError, match="no job file runs"):
        jobfile_analysis.runs(table.drop(columns=["workload"]))
    with pytest.raises(AnalysisError, match="repeat a point"):
        jobfile_analysis.runs(pd.concat([table, table.iloc[[0]]]))


CAP = 50_000_000
# notebooks/11_job_file at its own size, stated here as the assertions below need it: 2 devices capped at 50 MB/s,
# the three layouts, mixed.fio at iodepth 1 and 4, 2 runs of each, after one point of 2 jobs read for 1 s
NOTEBOOK = dict(DEVICES=2, DEVICE_SIZE=2**30, CAP_READ_BPS=CAP, CAP_WRITE_BPS=CAP,
                LAYOUTS=["single", "jbod", "btrfs-raid0"], REFERENCE="jbod", RW=["read"], NUMJOBS=[2], REPETITIONS=1,
                RUNTIME_S=1, RAMP_S=0, FILE_SIZE=16 * 2**20, JOB_FILE=str(MIXED.relative_to(ROOT)),
                JOB_FILE_AXES={"iodepth": [1, 4]}, JOB_FILE_REPETITIONS=2, TAX_MARGIN=0.02, PROGRESS=False)


@pytest.mark.root
@pytest.mark.notebook
@pytest.mark.long
def test_the_file_on_every_layout_of_the_emulated_array_keeps_its_rate_the_caps_and_shows_its_tax(tmp_path):
    """notebooks/11_job_file executed by flashscale run (every cell, its report published): its campaign's rows
    checked against the caps and the file's own rate, and the numbers it recorded are its table's."""
    out, numbers = run_notebook(tmp_path, "11_job_file", "jf", NOTEBOOK)
    result = stored_campaign(tmp_path / "data" / "jf")
    layouts = NOTEBOOK["LAYOUTS"]
    assert result.backend == "loop"
    rows = check_rows_and_raw_files(result, layouts, combos=2, reps=2)
    # nothing above the caps: each direction within devices x cap (and the tolerance of a short run); the file's runs
    # last 2 s, so a run more than 2% above its truth by the throttle's first slice (jbod's scans at queue depth 4
    # read 102.8 MB/s on 100 in one run) is flagged too short and gives no rate, and every other is within 2%
    ratio = rows[["read_bw_bytes", "write_bw_bytes"]].max(axis=1) / (rows["devices"] * CAP)
    assert not rows["above_truth"].any() and (rows["too_short"] == (ratio > 1.02)).all()
    limit = rows["devices"] * CAP * (1 + rows["runtime_s"].map(truth.tolerance))
    assert (rows["read_bw_bytes"] <= limit).all() and (rows["write_bw_bytes"] <= limit).all()
    oltp = rows[rows["group"] == "oltp"]  # a 70/30 mix: its truth is the read cap and the write cap together
    assert (oltp["truth_bw_bytes"] == oltp["devices"] * 2 * CAP).all()
    # the file's own rate limit holds on every layout: 8 MiB/s x 2 jobs, however much more the layout could do
    logger = rows[rows["group"] == "log-writer"]
    # (fio issues a job's first block at once, then holds the rate: one block of 1 MiB per job above it at most)
    allowed = 2 * (RATE * logger["runtime_s"] + 2**20) / logger["runtime_s"]
    assert (logger["write_bw_bytes"] <= allowed).all() and (logger["write_bw_bytes"] >= 2 * RATE * 0.9).all()
    summary = jobfile_analysis.summarize(result.table, reference="jbod", margin=NOTEBOOK["TAX_MARGIN"])
    assert numbers == json.loads(json.dumps(records.job_file(summary)))  # what the notebook recorded
    summary = summary.set_index(["layout", "group"])
    print(summary[["devices", "best_bw_bytes", "best_iodepth", "efficiency", "tax", "tax_verdict"]].to_string())
    # the known answer: a scan of two jobs on one capped device reads the cap, on two devices twice it
    assert summary.loc[("single", "scan"), "best_bw_bytes"] == pytest.approx(CAP, rel=0.1)
    assert summary.loc[("jbod", "scan"), "best_bw_bytes"] == pytest.approx(2 * CAP, rel=0.1)
    assert summary.loc[("jbod", "scan"), "efficiency"] == pytest.approx(1.0, abs=0.1)
    # rate-limited, the logger costs the same everywhere: no tax, and no gain from the second device
    assert abs(summary.loc[("btrfs-raid0", "log-writer"), "tax"]) < 0.05
    assert summary.loc[("jbod", "log-writer"), "efficiency"] == pytest.approx(0.5, abs=0.05)
    assert np.isfinite(summary.loc[("btrfs-raid0", "oltp"), "tax"])
    assert "Tax and efficiency of the workload on each layout" in (out / "11_job_file.html").read_text()
    # torn down: the teardown verifies each undo (a failed one fails the run), and nothing of it is left
    assert leftover_mounts(result.directory) == [] and cgroups_left(result.directory) == []
