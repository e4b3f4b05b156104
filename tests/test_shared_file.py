"""One shared file against a file per job (IOR's N-to-1 and N-to-N): how the jobs are rendered, what real fio does
with them on plain directories and reports (golden JSON from tests/golden/make_golden.py), and the analysis of
``flashscale.shared_file`` (bytes moved, the devices a mode reaches, the caps)."""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from flashscale.measure import fio, fio_output, raw
from flashscale.analysis import findings, shared_file
from flashscale.publish import records
from flashscale.system.commands import Runner
from flashscale.errors import AnalysisError, ConfigError
from flashscale.measure.sweep import Sweep

GOLDEN = Path(__file__).parent / "golden"
MIB = 2**20
needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def test_n_to_1_puts_every_job_in_one_file_on_the_first_target_each_in_its_region():
    job = fio.FioJob("write", MIB, ("/m/0", "/m/1"), numjobs=3, size=64 * MIB, time_based=False, shared_file=True)
    text = fio.render(job)
    assert "[flashscale-t0]\nnumjobs=3\ndirectory=/m/0\nfilename=flashscale-shared\noffset_increment=67108864\n" in text
    assert "/m/1" not in text and "[flashscale-t1]" not in text
    assert "\ntime_based=0\n" in text and "runtime=" not in text and "ramp_time=" not in text
    assert job.point == "write-bs1048576-nj3-qd1-shared" and job.jobs_per_target() == [3, 0]
    own = fio.render(fio.FioJob("write", MIB, ("/m/0", "/m/1"), numjobs=3, time_based=False))
    assert "filename=" not in own and "offset_increment" not in own and "[flashscale-t1]\nnumjobs=1\n" in own
    device = fio.render(fio.FioJob("read", MIB, ("/dev/loop9",), numjobs=2, size=MIB, shared_file=True))
    assert "filename=/dev/loop9\noffset_increment=1048576\n" in device and "time_based=1" in device


def test_sweeps_carry_the_mode_to_every_job():
    sweep = Sweep(rw=("write", "read"), numjobs=(2,), **shared_file.variants(["n-to-1"])["n-to-1"])
    job = sweep.job(sweep.points()[0], ("/m",))
    assert job.shared_file and not job.time_based
    assert list(shared_file.variants(["n-to-1", "n-to-n"])) == ["n-to-1", "n-to-n"]
    with pytest.raises(ConfigError, match=r"modes \['1-to-1'\]"):
        shared_file.variants(["n-to-n", "1-to-1"])
    with pytest.raises(ConfigError, match="must list"):
        shared_file.variants("n-to-1")


def test_fio_reports_the_fixed_amount_of_a_shared_file():
    data = fio_output.load_output((GOLDEN / "shared_file_write.json").read_text())
    job = data["jobs"][0]
    assert data["global options"]["time_based"] == "0" and data["global options"]["size"] == str(MIB)
    assert job["job options"]["filename"] == "flashscale-shared"
    assert job["job options"]["offset_increment"] == str(MIB) and job["job options"]["numjobs"] == "3"
    assert job["write"]["io_bytes"] == 3 * MIB == job["write"]["total_ios"] * 64 * 1024
    assert fio_output.parse(data)["io_bytes"] == 3 * MIB


@needs_fio
def test_real_fio_writes_one_file_of_all_regions_or_a_file_per_job(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    kwargs = dict(targets=(str(a), str(b)), numjobs=3, size=MIB, time_based=False, direct=False, ioengine="psync")
    for rw in ("write", "read"):
        data = fio.run(fio.FioJob(rw, 64 * 1024, shared_file=True, **kwargs), tmp_path / f"shared-{rw}", Runner())
        assert fio_output.parse(data)["io_bytes"] == 3 * MIB
        assert [(p.name, p.stat().st_size) for p in a.iterdir()] == [("flashscale-shared", 3 * MIB)]
        assert not list(b.iterdir())
    (a / "flashscale-shared").unlink()
    data = fio.run(fio.FioJob("write", 64 * 1024, **kwargs), tmp_path / "own", Runner())
    assert fio_output.parse(data)["io_bytes"] == 3 * MIB
    assert sorted((p.name, p.stat().st_size) for p in (*a.iterdir(), *b.iterdir())) == [
        ("flashscale-t0.0.0", MIB), ("flashscale-t0.1.0", MIB), ("flashscale-t1.0.0", MIB)]


def _campaign(folder: Path, runs: list[dict]) -> pd.DataFrame:
    """Raw run directories (fio.json with the size, env.json with the targets) under ``folder/<variant>/`` and
    the table ``run_variants`` would return for them."""
    rows = []
    for i, run in enumerate(runs):
        run_dir = Path("raw") / run["layout"] / f"p{i}" / "rep0"
        (folder / run["variant"] / run_dir).mkdir(parents=True)
        (folder / run["variant"] / run_dir / "fio.json").write_text(
            json.dumps({"global options": {"size": str(64 * MIB)}, "jobs": []}))
        (folder / run["variant"] / run_dir / "env.json").write_text(
            json.dumps({"targets": ["/t"] * run.pop("targets")}))
        rows.append({"devices": 2, "bs": MIB, "numjobs": 2, "iodepth": 1, "rep": 0, "warmup": False,
                     "backend": "loop", "cap_bps": 100e6, "io_bytes": 2 * 64 * MIB, "raw_dir": str(run_dir), **run})
    return pd.DataFrame(rows)


def _details(folder: Path, table: pd.DataFrame) -> pd.DataFrame:
    """``shared_file.details`` of what ``raw`` reads for ``table``'s runs under ``folder/<variant>/``."""
    return shared_file.details(raw.fio_outputs(folder, table, within="variant"),
                               raw.run_environments(folder, table, within="variant"))


def test_each_mode_is_held_to_the_caps_of_the_devices_its_files_reach(tmp_path):
    seconds = 2 * 64 * MIB / 100e6  # both regions through one device
    table = _campaign(tmp_path, [
        dict(variant="n-to-n", layout="jbod", rw="read", targets=2, bw_bytes=200e6, runtime_s=seconds / 2),
        dict(variant="n-to-1", layout="jbod", rw="read", targets=2, bw_bytes=100e6, runtime_s=seconds),
        dict(variant="n-to-n", layout="btrfs-raid0", rw="read", targets=1, bw_bytes=200e6, runtime_s=seconds / 2),
        dict(variant="n-to-1", layout="btrfs-raid0", rw="read", targets=1, bw_bytes=260e6, runtime_s=0.4),
        dict(variant="n-to-1", layout="mounted", rw="read", targets=1, bw_bytes=300e6, runtime_s=0.4,
             backend="mounted", cap_bps=float("nan")),  # outside the throttled cgroup: no cap (Recorder.header)
    ])
    rows = _details(tmp_path, table).set_index(["variant", "layout"])
    assert rows["bytes_ok"].all() and set(rows["expected_bytes"]) == {2 * 64 * MIB}
    assert rows.loc[("n-to-1", "jbod"), "reach_devices"] == 1 and rows.loc[("n-to-n", "jbod"), "reach_devices"] == 2
    assert rows.loc[("n-to-1", "jbod"), "ceiling_bytes"] == pytest.approx(100e6)
    assert rows.loc[("n-to-1", "btrfs-raid0"), "ceiling_bytes"] == pytest.approx(200e6)
    assert math.isnan(rows.loc[("n-to-1", "mounted"), "ceiling_bytes"])  # the emulated caps do not apply there
    assert rows.loc[("n-to-1", "mounted"), "within_caps"]
    assert not rows.loc[("n-to-1", "btrfs-raid0"), "within_caps"]  # 0.4 s < 0.671 s - 0.1 s
    assert rows.drop(("n-to-1", "btrfs-raid0"))["within_caps"].all()
    points = shared_file.summary(_details(tmp_path, table))
    against = shared_file.versus(points).set_index("layout")
    assert against.loc["jbod", "ratio"] == pytest.approx(0.5) and against.loc["jbod", "cost"] == pytest.approx(0.5)
    assert against.loc["btrfs-raid0", "ratio"] == pytest.approx(1.3)
    said = " ".join(findings.shared_file_sentences(points, against.reset_index()))
    assert "jbod read, 2 job(s): N-to-1 moves 100 MB/s and N-to-N 200 MB/s: one shared file costs 50%." in said
    assert "N-to-1 on jbod with 2 job(s): its files reach 1 of 2 device(s), 100 MB/s of caps; read 100 MB/s " \
           "(100%)." in said
    assert "1 point(s) beat their caps by more than one throttle slice: N-to-1 btrfs-raid0 read." in said
    assert "N-to-1 on mounted with 2 job(s) uses 1 of 1 target(s), with no cap: read 300 MB/s." in said
    support = pd.DataFrame({"layout": ["md-raid0"], "supported": [False], "missing": ["mdadm"]})
    numbers = records.shared_file(SimpleNamespace(backend="loop", notes=[]), table, 64 * MIB, support, points,
                                  against.reset_index())
    assert numbers["unsupported"] == {"md-raid0": "mdadm"} and numbers["runs"] == 5
    assert numbers["reach_devices"]["n-to-1"]["jbod/read/nj2"] == pytest.approx(1.0)
    assert numbers["headline"]["N-to-1 jbod read"] == "100 MB/s (50% of N-to-N)"
    json.dumps(numbers)


def test_bytes_short_of_the_expected_are_named_and_a_table_without_modes_is_refused(tmp_path):
    table = _campaign(tmp_path, [dict(variant="n-to-1", layout="jbod", rw="write", targets=2, bw_bytes=100e6,
                                      runtime_s=1.4, io_bytes=64 * MIB)])
    points = shared_file.summary(_details(tmp_path, table))
    assert not points["bytes_ok"].iloc[0]
    assert "1 point(s) did not move numjobs x size bytes: N-to-1 jbod write." in findings.shared_file_sentences(
        points, shared_file.versus(points))
    with pytest.raises(AnalysisError, match="no variant column"):
        _details(tmp_path, table.drop(columns="variant"))
