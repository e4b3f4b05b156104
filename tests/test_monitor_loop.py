"""Monitoring on the emulated array: a capped fio run's series show each device at its cap, and the devices' sum
is fio's own aggregate; an array's members are sampled under it."""
from __future__ import annotations

import pandas as pd
import pytest

from flashscale.campaigns import campaign
from flashscale.analysis import monitor as analysis
from flashscale.measure import monitoring

CAP = 200_000_000


@pytest.mark.root
def test_a_capped_run_shows_every_device_at_its_cap_and_their_sum_is_fios(tmp_path, fast_backing):
    spec = campaign.CampaignSpec.from_parameters(
        CAMPAIGN="mon", DATA_DIR=str(tmp_path / "data"), BACKING_DIR=str(fast_backing), DEVICES=2, DEVICE_SIZE=2**30,
        LAYOUTS=["jbod", "btrfs-raid0"], RW=["write"], BS=[2**20], NUMJOBS=[4], IODEPTH=[1], REPETITIONS=1,
        RUNTIME_S=5, RAMP_S=1, FILE_SIZE=64 * 2**20, CAP_READ_BPS=CAP, CAP_WRITE_BPS=CAP)
    result = campaign.run(spec, progress=False)
    table, series = result.table, monitoring.load(result.directory)
    assert set(series.columns) >= set(monitoring.MONITOR_COLUMNS)
    fio_row = table[(table["layout"] == "jbod") & (table["phase"] == "measure")].iloc[0]
    run = series[(series["layout"] == "jbod") & (series["point"] == fio_row["point"])]
    members = sorted(run["device"].unique())
    assert len(members) == 2 and all(name.startswith("loop") for name in members)
    middle = run[(run["t_s"] > 1.5) & (run["t_s"] < run["t_s"].max() - 0.5)]  # whole seconds of the run
    for name, each in middle.groupby("device"):
        assert each["write_bw_bytes"].median() == pytest.approx(CAP, rel=0.05), name
    summed = analysis.device_sum(run)["devices_write_bw_bytes"].iloc[0]
    assert summed == pytest.approx(fio_row["bw_bytes"], rel=0.05)
    assert analysis.bottlenecks(run, caps={"write": CAP})["verdict"].tolist() == ["devices"]
    # the btrfs array's members (the loop devices under it) are sampled, not just the device it was mounted from
    striped = series[series["layout"] == "btrfs-raid0"]
    assert sorted(striped["device"].unique()) == members  # the same array's two loop devices
    raw = result.directory / fio_row["raw_dir"]
    assert (raw / monitoring.SERIES_FILE).is_file() and (raw / monitoring.FACTS_FILE).is_file()
    facts = pd.read_json(raw / monitoring.FACTS_FILE, typ="series")
    assert {d["device"] for d in facts["devices"]} == set(members)
