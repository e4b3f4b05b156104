"""``flashscale compare`` on the emulated array (root, loop devices, cgroup caps): two tiny quickstart campaigns, the
second with device 2 capped 5% lower (CAP_SCALE=[1, 0.95]). The cap is listed first among what differs; the points
device 2 takes part in (jbod, btrfs-raid0) are the only ones called slower; the gate exits 5."""
from __future__ import annotations

import io
import json

import pandas as pd
import pytest
import yaml

from flashscale import cli
from flashscale.cli.compare import GATE_FAILED

TINY = dict(DEVICES=2, RW=["read"], NUMJOBS=[2], REPETITIONS=5, RUNTIME_S=3, RAMP_S=0, FILE_SIZE=32 * 2**20,
            DEVICE_SIZE=2**30, CAP_READ_BPS=100_000_000, CAP_WRITE_BPS=100_000_000, PROGRESS=False)
ON_DEVICE_2 = {"jbod", "btrfs-raid0"}  # single is device 1


def quickstart(tmp_path, name: str, **more) -> str:
    campaign = tmp_path / f"{name}.yaml"
    data = tmp_path / name
    campaign.write_text(yaml.safe_dump({"campaign": "qs", "notebooks": ["quickstart"],
                                        "parameters": {**TINY, **more, "DATA_DIR": str(data)}}))
    assert cli.main(["run", str(campaign), "--reports", str(tmp_path / f"{name}-reports")]) == 0
    return str(data / "qs")


@pytest.mark.root
@pytest.mark.notebook
@pytest.mark.long
def test_a_device_capped_5pct_lower_is_slower_on_exactly_its_points_and_its_cap_is_listed_first(tmp_path, capsys):
    before = quickstart(tmp_path, "before")
    after = quickstart(tmp_path, "after", CAP_SCALE=[1, 0.95])
    capsys.readouterr()
    assert cli.main(["compare", before, after, "--format", "json", "--fail-on", "slower"]) == GATE_FAILED
    said = json.loads(capsys.readouterr().out)
    assert said["environment"][0]["what"] == "spec.array.cap_scale"
    changed = pd.DataFrame(said["changes"])
    rates = changed[changed["metric"] == "bandwidth"]
    assert set(rates[rates["verdict"] == "slower"]["layout"]) <= ON_DEVICE_2
    assert "btrfs-raid0" in set(rates[rates["verdict"] == "slower"]["layout"])  # striped: its slowest member's pace
    # jbod: one device of two 5% lower, 2.5% in all: slower, or inconclusive at a 2% margin, never equivalent
    assert set(rates[rates["layout"] == "jbod"]["verdict"]) <= {"slower", "inconclusive"}
    assert set(rates[rates["layout"] == "single"]["verdict"]) <= {"equivalent", "inconclusive"}
    assert cli.main(["compare", before, before, "--fail-on", "slower", "--format", "csv"]) == 0
    same = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert not same["verdict"].isin(["slower", "faster"]).any()
