"""Real fio 3.33 on the emulated array's loop devices, imported: a campaign's own fio.json files give back the rows
the campaign's recorder kept of them, number for number, and the same analysis; the json+ and terse fio wrote of
one run agree with each other as fio's units allow. Loop devices only through the project's own EmulatedArray."""
from __future__ import annotations

import subprocess

import pandas as pd
import pytest

from flashscale.analysis import stats
from flashscale.arrays.emulated import ArraySpec, EmulatedArray
from flashscale.campaigns import campaign
from flashscale.measure import fio, fio_output, results
from flashscale.measure.fio_import import importer
from flashscale.measure.fio_import.file_names import Naming, Rule
from flashscale.system.commands import Runner

from conftest import loop_devices_backed_under

# 2 capped devices, single and jbod, one read point at 1 and 2 jobs, 2 repetitions of 1 s: about half a minute
TINY = dict(CAMPAIGN="imp", DEVICES=2, DEVICE_SIZE=2**30, CAP_READ_BPS=100_000_000, CAP_WRITE_BPS=100_000_000,
            LAYOUTS=["single", "jbod"], REFERENCE="jbod", RW=["read"], BS=[2**20], NUMJOBS=[1, 2], IODEPTH=[1],
            REPETITIONS=2, RUNTIME_S=1, RAMP_S=0, FILE_SIZE=16 * 2**20)
NUMBERS = [*results.NUMBERS, "fio_usr_cpu", "fio_sys_cpu", "fio_version"]
POINT = ["layout", "devices", "rw", "bs", "numjobs", "iodepth", "rep"]


@pytest.mark.root
def test_a_campaign_s_fio_output_imported_gives_its_rows_and_its_analysis(tmp_path):
    spec = campaign.CampaignSpec.from_parameters(DATA_DIR=str(tmp_path / "data"), BACKING_DIR=str(tmp_path), **TINY)
    measured = campaign.run(spec, progress=False)
    assert measured.backend == "loop" and loop_devices_backed_under(tmp_path) == []
    ours = measured.table[measured.table["phase"] == "measure"]
    folder = tmp_path / "imported"
    naming = Naming(pattern="{layout}/{*}/rep{rep}/fio.json",
                    rules=(Rule("*/raw/single/*", {"devices": 1}), Rule("*/raw/jbod/*", {"devices": 2})))
    summary = importer.run_import([str(measured.directory / "raw" / "*" / "read-*" / "rep*" / "fio.json")],
                                       folder, naming)
    assert summary.line() == "8 files: 8 imported (8 rows)"
    theirs = results.load(folder)
    # what ran comes from the files: jbod's two sections under group_reporting counted by fio's job_runtime
    joined = ours.merge(theirs, on=POINT, suffixes=("", "_imported"), validate="one_to_one")
    assert len(joined) == len(ours) == 8
    for column in NUMBERS:
        pd.testing.assert_series_equal(joined[column], joined[f"{column}_imported"], check_names=False)
    assert (theirs["read_from"].str.contains("numjobs: job_runtime / runtime")).all()
    # the same analysis of the same runs
    keys = ["layout", "devices", "rw", "best_bw_bytes", "efficiency", "tax", "tax_verdict"]
    mine = stats.summary_intervals(ours, reference="jbod", baseline_bs=2**20)[keys]
    pd.testing.assert_frame_equal(stats.summary_intervals(theirs, reference="jbod", baseline_bs=2**20)[keys], mine)


@pytest.mark.root
def test_json_plus_and_terse_of_one_run_on_loop_devices_agree(tmp_path):
    with EmulatedArray(ArraySpec(devices=2, device_size=2**30, read_bps=100_000_000, backing_root=str(tmp_path))) \
            as array:
        job = fio.FioJob("read", 2**20, tuple(d.path for d in array.devices), numjobs=2, runtime_s=1, size=2**28)
        jobfile = tmp_path / "job.fio"
        jobfile.write_text(fio.render(job))
        out = tmp_path / "both.txt"
        Runner().run(["fio", "--output-format=terse,json+", "--terse-version=3", f"--output={out}", str(jobfile)],
                     cgroup_procs=array.cgroup_procs, timeout=120)
    assert loop_devices_backed_under(tmp_path) == []
    terse_text, json_text = out.read_text().split("\n{", 1)
    (tmp_path / "run.terse").write_text(terse_text + "\n")
    (tmp_path / "run.json").write_text("{" + json_text)
    folder = tmp_path / "imported"
    naming = Naming(given={"layout": "jbod", "devices": 2, "rw": "read", "bs": 2**20, "iodepth": 1, "numjobs": 2})
    summary = importer.run_import([str(tmp_path / "run.terse"), str(tmp_path / "run.json")], folder, naming)
    assert summary.line() == "2 files: 2 imported (2 rows)"
    rows = results.load(folder).set_index("source_format")
    terse, full = rows.loc["terse v3"], rows.loc["json+"]
    assert abs(terse["bw_bytes"] - full["bw_bytes"]) <= 1024 * 1000 / (1000 * full["runtime_s"])
    assert terse["numjobs"] == full["numjobs"] == 2  # terse's from its name; json+'s from fio's job_runtime
    for column in ("clat_p50_ns", "clat_p99_ns", "clat_p999_ns"):
        assert full[column] - 1000 < terse[column] <= full[column]
    data = fio_output.load_output((tmp_path / "run.json").read_text())
    recorded = fio_output.parse(data)  # what a campaign's recorder keeps of this fio.json
    for column in NUMBERS:
        assert full[column] == recorded[column], column
    assert subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip() == data["fio version"]
