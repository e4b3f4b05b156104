"""The many-files transfer on the emulated array: on every layout its files/s and bytes/s land in the table, and
neither its write phase (each file fsynced) nor its copy exceeds what the capped devices can move; its files are
gone afterwards. Read from 09_applications's campaign, run once for the workloads' tests by conftest's
``applications``."""
from __future__ import annotations

import pytest

from flashscale.analysis import applications as app_analysis
from flashscale.measure.workloads import common

from conftest import APPLICATIONS

CAP = 200_000_000


@pytest.mark.root
@pytest.mark.notebook
@pytest.mark.long
def test_neither_phase_can_exceed_the_capped_devices_on_any_layout(applications):
    """conftest.APPLICATIONS: 48 files of 8 MiB at 1 and 4 streams, after fio's write and read at 2 jobs."""
    result, _, _ = applications
    assert APPLICATIONS["TRANSFER_FILE_MIB"] == 8
    rows = result.table[result.table["workload"] == "transfer"]
    assert sorted(set(zip(rows["layout"], rows["numjobs"]))) == sorted(
        (layout, n) for layout in ("single", "jbod", "btrfs-raid0") for n in (1, 4))
    copies = rows[rows["metric"] == "copy_bw"]
    for _, rate in rows[rows["unit"] == "bytes/s"].iterrows():  # the write phase too: timed until its fsyncs
        assert rate["truth_bw_bytes"] == rate["devices"] * CAP
        assert 0 < rate["value"] <= rate["truth_bw_bytes"] * (1 + common.tolerance(rate["runtime_s"])), rate["layout"]
        assert not rate["above_truth"]
        # tiny on purpose (about a second a phase): a phase more than 2% above its truth, as the throttle's first
        # slice lets through, is flagged too short and gives no rate; any other is within 2% of its truth
        assert rate["too_short"] or rate["value"] <= rate["truth_bw_bytes"] * 1.02, rate[["layout", "metric"]]
    assert set(rows[rows["unit"] == "bytes/s"]["metric"]) == {"write_bw", "copy_bw"}
    commands = (result.directory / rows["raw_dir"].iloc[0] / "commands.txt").read_text().splitlines()
    assert len(commands) == 2 and all("conv=fsync" in line.split() for line in commands)
    files = rows[rows["metric"] == "copy_files"]
    assert list(files["value"] * 8 * 2**20) == pytest.approx(list(copies["value"]), rel=1e-9)
    taxes = app_analysis.tax(result.table)
    jbod = taxes[(taxes["layout"] == "jbod") & (taxes["metric"] == "copy_bw")]
    assert len(jbod) == 2 and (jbod["fio_bytes"] > 0).all()
    assert jbod["tax"].notna().tolist() == [not short for short in
                                            copies[copies["layout"] == "jbod"]["too_short"]]  # too short: no tax
    leftovers = [p for p in (result.directory / "raw").rglob("file*") if p.is_file()]
    assert leftovers == []  # the files were written on the layout, never in the raw folder
    # and each transfer was in the campaign's progress, counted in its total: fio's runs and every workload's
    lines = (result.directory / "progress.log").read_text().splitlines()
    fio = result.table[result.table["workload"] == "fio"]
    workload_runs = result.table[result.table["workload"] != "fio"]["raw_dir"].nunique()
    total = len(fio) + workload_runs
    assert workload_runs == 3 * (2 + 2 + 2)  # 3 layouts x (bonnie++'s 2 processes, pgbench's 2 clients, 2 streams)
    assert f"{total} run(s) on 3 layout(s)" in lines[0]
    done = [line for line in lines if " transfer s" in line and ": done (" in line]
    assert len(done) == 6 and done[-1].startswith(f"[{total}/{total}] btrfs-raid0 transfer s4 rep0: done")
